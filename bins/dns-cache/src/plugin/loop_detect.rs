//! `loop`: at start-up the server sends `<random>.<random>.<zone> HINFO` to itself; if that
//! query comes back through the chain more than twice, the upstream forwards to us and the
//! process exits with CoreDNS's fatal line. Once a probe gets any reply, detection stops.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use dns_wire::{Class, Name, OwnedMessage, OwnedQuestion, Type};
use tokio::net::UdpSocket;

use super::Failure;
use crate::query::request::Request;

/// How long probes are sent.
const PROBE_FOR: Duration = Duration::from_secs(30);

/// The loop detector of a block.
pub struct Loop {
    zone: String,
    server: SocketAddr,
    probe: Name,
    seen: AtomicU32,
    done: AtomicBool,
}

impl Loop {
    /// A detector for `zone` served at `server`, with a random probe name.
    pub fn new(zone: &str, server: SocketAddr, random: u64) -> Self {
        let text = format!(
            "{}.{}.{}",
            random % 1_000_000_007,
            (random >> 32) % 999_983,
            zone
        );
        Self {
            zone: zone.to_owned(),
            server,
            probe: text.parse().unwrap_or_else(|_| Name::root()),
            seen: AtomicU32::new(0),
            done: AtomicBool::new(false),
        }
    }

    /// Counts the probe when it passes through the chain; a third sighting is fatal.
    pub fn check(&self, req: &Request<'_>) -> Result<(), Failure> {
        if self.done.load(Ordering::Relaxed)
            || req.question.qtype != Type::HINFO
            || !req.question.name.eq_ignore_case(&self.probe.as_ref())
        {
            return Ok(());
        }
        if self.seen.fetch_add(1, Ordering::AcqRel) + 1 > 2 {
            println!(
                "[FATAL] plugin/loop: Loop ({} -> {}) detected for zone {:?}, see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO {}\"",
                req.client, self.server, self.zone, self.probe
            );
            std::process::exit(1);
        }
        Ok(())
    }

    /// Sends probes to the server until one is answered or 30 s have passed.
    pub async fn run(self: Arc<Self>) {
        let server = match self.server.ip() {
            ip if ip.is_unspecified() && ip.is_ipv4() => {
                SocketAddr::from(([127, 0, 0, 1], self.server.port()))
            }
            ip if ip.is_unspecified() => {
                SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, self.server.port()))
            }
            _ => self.server,
        };
        let mut msg = OwnedMessage::default();
        msg.header.rd = true;
        msg.questions.push(OwnedQuestion {
            name: self.probe,
            qtype: Type::HINFO,
            qclass: Class::IN,
        });
        let Ok(query) = msg.to_vec() else { return };
        let bind = if server.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        let Ok(socket) = UdpSocket::bind(bind).await else {
            return;
        };
        let deadline = tokio::time::Instant::now() + PROBE_FOR;
        let mut buf = [0u8; 512];
        while tokio::time::Instant::now() < deadline && !self.done.load(Ordering::Relaxed) {
            if socket.send_to(&query, server).await.is_err() {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            if let Ok(Ok(_)) =
                tokio::time::timeout(Duration::from_secs(2), socket.recv_from(&mut buf)).await
            {
                self.done.store(true, Ordering::Relaxed);
            }
        }
        self.done.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto, admit};

    #[test]
    fn only_the_probe_counts() {
        let l = Loop::new("example.org.", "127.0.0.1:53".parse().unwrap(), 42);
        let q = query("www.example.org.", Type::HINFO, None);
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!()
        };
        l.check(&req).unwrap();
        let probe = query(&l.probe.to_string(), Type::HINFO, None);
        let Admission::Query(req) = admit(&probe, Proto::Udp, client()) else {
            panic!()
        };
        l.check(&req).unwrap();
        l.check(&req).unwrap();
        assert_eq!(l.seen.load(Ordering::Relaxed), 2);
    }
}
