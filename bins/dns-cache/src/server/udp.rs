//! The UDP worker: receive, handle, send; upstream work in bounded tasks.
//!
//! While the socket has packets, they are read and answered with plain non-blocking calls
//! (`try_recv_from`, `try_send_to`): no future and no waiter registration per packet. The
//! task waits for readiness only when the socket is empty, and yields to the other tasks
//! (upstream readers, TCP, timers) every [`BURST`](crate::burst::BURST) packets.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::UdpSocket;
use tokio::sync::{Semaphore, watch};

use super::{Handled, handle};
use crate::burst::Burst;
use crate::config::Table;
use crate::request::Proto;

/// Serves one socket until the task is aborted.
pub(super) async fn serve(
    socket: Arc<UdpSocket>,
    mut tables: watch::Receiver<Arc<Table>>,
    in_flight: Arc<Semaphore>,
) {
    let mut buf = vec![0u8; 65_535];
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
            burst.next().await;
            let (n, peer) = match socket.try_recv_from(&mut buf) {
                Ok(received) => received,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    tracing::debug!("udp receive: {e}");
                    continue;
                }
            };
            if tables.has_changed().unwrap_or(false) {
                table = Arc::clone(&tables.borrow_and_update());
            }
            let Some(packet) = buf.get(..n) else { continue };
            match handle(&table, packet, Proto::Udp, peer, &mut out) {
                Handled::Reply => send(&socket, &out, peer).await,
                Handled::Nothing => {}
                Handled::Pending(pending) => match Arc::clone(&in_flight).try_acquire_owned() {
                    Ok(permit) => pending.serve_udp(Arc::clone(&socket), permit),
                    Err(_) => {
                        pending.refuse(&mut out);
                        send(&socket, &out, peer).await;
                    }
                },
            }
        }
    }
}

/// Sends a reply, waiting for room only when the socket's send buffer is full.
async fn send(socket: &UdpSocket, reply: &[u8], peer: SocketAddr) {
    if let Err(e) = socket.try_send_to(reply, peer)
        && e.kind() == io::ErrorKind::WouldBlock
    {
        let _ = socket.send_to(reply, peer).await;
    }
}
