//! The UDP worker: receive, handle, send; upstream work in bounded tasks.
//!
//! While the socket has packets, they are read and answered in batches (one `recvmmsg`,
//! one `sendmmsg`, see [`batch`](crate::server::batch)): no future and no waiter
//! registration per packet. The task waits for readiness only when the socket is empty,
//! and yields to the other tasks (upstream readers, TCP, timers) every
//! [`BURST`](crate::server::burst::BURST) packets.

use std::io;
use std::sync::Arc;

use tokio::net::UdpSocket;
use tokio::sync::{Semaphore, watch};

use super::{Handled, handle};
use crate::config::Table;
use crate::query::request::Proto;
use crate::server::batch::{Inbox, Outgoing};
use crate::server::burst::Burst;

/// Serves one socket until the task is aborted.
pub(super) async fn serve(
    socket: Arc<UdpSocket>,
    ipv6: bool,
    mut tables: watch::Receiver<Arc<Table>>,
    in_flight: Arc<Semaphore>,
) {
    let mut inbox = Inbox::new(ipv6);
    let mut outgoing = Outgoing::new();
    let mut out = Vec::with_capacity(65_535);
    let mut table = Arc::clone(&tables.borrow_and_update());
    let mut burst = Burst::default();
    loop {
        if let Err(e) = socket.readable().await {
            // Only when the runtime's I/O driver is gone, that is, at shutdown.
            tracing::debug!("udp readiness: {e}");
            return;
        }
        loop {
            let received = match inbox.receive(&socket) {
                Ok(received) => received,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    // Counted like a datagram, so that an error that persists still lets
                    // the other tasks run.
                    tracing::debug!("udp receive: {e}");
                    burst.spend(1).await;
                    continue;
                }
            };
            if tables.has_changed().unwrap_or(false) {
                table = Arc::clone(&tables.borrow_and_update());
            }
            for (packet, peer) in inbox.datagrams() {
                match handle(&table, packet, Proto::Udp, peer, &mut out) {
                    Handled::Reply => outgoing.push(&socket, &out, peer),
                    Handled::Nothing => {}
                    Handled::Pending(pending) => match Arc::clone(&in_flight).try_acquire_owned() {
                        Ok(permit) => pending.serve_udp(&socket, permit, &mut outgoing),
                        Err(_) => {
                            pending.refuse(&mut out);
                            outgoing.push(&socket, &out, peer);
                        }
                    },
                }
            }
            outgoing.flush().await;
            burst.spend(received).await;
        }
    }
}
