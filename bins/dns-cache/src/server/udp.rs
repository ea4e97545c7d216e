//! The UDP worker: receive, handle, send; upstream work in bounded tasks.

use std::sync::Arc;

use tokio::net::UdpSocket;
use tokio::sync::{Semaphore, watch};

use super::{Handled, handle};
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
    loop {
        let (n, peer) = match socket.recv_from(&mut buf).await {
            Ok(received) => received,
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
            Handled::Reply => {
                let _ = socket.send_to(&out, peer).await;
            }
            Handled::Nothing => {}
            Handled::Pending(pending) => match Arc::clone(&in_flight).try_acquire_owned() {
                Ok(permit) => pending.serve_udp(Arc::clone(&socket), permit),
                Err(_) => {
                    pending.refuse(&mut out);
                    let _ = socket.send_to(&out, peer).await;
                }
            },
        }
    }
}
