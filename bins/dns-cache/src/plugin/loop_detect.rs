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
    /// `None` when the zone leaves no room for the two labels (nothing is probed then).
    probe: Option<Name>,
    seen: AtomicU32,
    done: AtomicBool,
}

impl Loop {
    /// A detector for `zone` served at `server`, its probe name made from two random
    /// numbers.
    pub fn new(zone: &str, server: SocketAddr, random: [u64; 2]) -> Self {
        Self {
            zone: zone.to_owned(),
            server,
            probe: probe_name(zone, random),
            seen: AtomicU32::new(0),
            done: AtomicBool::new(false),
        }
    }

    /// Counts the probe when it passes through the chain; a third sighting is fatal.
    pub fn check(&self, req: &Request<'_>) -> Result<(), Failure> {
        let Some(probe) = self.probe else {
            return Ok(());
        };
        if self.done.load(Ordering::Relaxed)
            || req.question.qtype != Type::HINFO
            || !req.question.name.eq_ignore_case(&probe.as_ref())
        {
            return Ok(());
        }
        if self.seen.fetch_add(1, Ordering::AcqRel) + 1 > 2 {
            println!(
                "[FATAL] plugin/loop: Loop ({} -> {}) detected for zone {:?}, see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO {}\"",
                req.client, self.server, self.zone, probe
            );
            std::process::exit(1);
        }
        Ok(())
    }

    /// Sends probes to the server until one is answered or 30 s have passed.
    pub async fn run(self: Arc<Self>) {
        let Some(probe) = self.probe else {
            return;
        };
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
            name: probe,
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

/// The probe's name as CoreDNS's `qname` (plugin/loop/setup.go) builds it: two random
/// integers below 2^62 as labels, joined to the zone (`N.M.` for the root zone).
fn probe_name(zone: &str, random: [u64; 2]) -> Option<Name> {
    let [first, second] = random.map(|r| r >> 2);
    let zone = zone.strip_suffix('.').unwrap_or(zone);
    let text = if zone.is_empty() {
        format!("{first}.{second}.")
    } else {
        format!("{first}.{second}.{zone}.")
    };
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto, admit};

    #[test]
    fn only_the_probe_counts() {
        let l = Loop::new("example.org.", "127.0.0.1:53".parse().unwrap(), [42, 43]);
        let q = query("www.example.org.", Type::HINFO, None);
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!()
        };
        l.check(&req).unwrap();
        let probe = query(&l.probe.unwrap().to_string(), Type::HINFO, None);
        let Admission::Query(req) = admit(&probe, Proto::Udp, client()) else {
            panic!()
        };
        l.check(&req).unwrap();
        l.check(&req).unwrap();
        assert_eq!(l.seen.load(Ordering::Relaxed), 2);
    }

    /// CoreDNS v1.14.7 plugin/loop/setup.go `qname`: `dnsutil.Join(l1, l2, zone)` with
    /// `l1`, `l2` from `rand.Int(rand.Reader, 1<<62)`; for the root zone that is `N.M.`,
    /// not the root name itself (which would count every `. HINFO` query as the probe).
    #[test]
    fn the_probe_of_the_root_zone_is_two_random_labels() {
        let probe = probe_name(".", [u64::MAX, 7 << 2]).unwrap();
        assert_eq!(probe.to_string(), format!("{}.7.", u64::MAX >> 2));
        let other = probe_name(".", [1 << 2, 2 << 2]).unwrap();
        assert_eq!(other.to_string(), "1.2.");
        assert_eq!(
            probe_name("example.org.", [3 << 2, 4 << 2])
                .unwrap()
                .to_string(),
            "3.4.example.org."
        );
        assert_eq!(
            probe_name("example.org", [3 << 2, 4 << 2])
                .unwrap()
                .to_string(),
            "3.4.example.org."
        );
        let root = Loop::new(".", "127.0.0.1:53".parse().unwrap(), [5, 6]);
        let q = query(".", Type::HINFO, None);
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!()
        };
        for _ in 0..3 {
            root.check(&req).unwrap();
        }
        assert_eq!(root.seen.load(Ordering::Relaxed), 0);
    }
}
