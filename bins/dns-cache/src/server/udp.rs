//! The UDP worker: receive a batch, handle each query, send the batch's replies; upstream
//! work completes in the upstream's reader or in bounded tasks.

use std::io;
use std::sync::Arc;

use tokio::net::UdpSocket;
use tokio::sync::{Semaphore, watch};

use super::batch::{BATCH, Inbox, Outbox};
use super::{Handled, handle};
use crate::config::Table;
use crate::request::Proto;

/// Serves one socket until the task is aborted.
pub(super) async fn serve(
    socket: Arc<UdpSocket>,
    mut tables: watch::Receiver<Arc<Table>>,
    in_flight: Arc<Semaphore>,
) {
    let Ok(local) = socket.local_addr() else {
        return;
    };
    let mut inbox = Inbox::new(local);
    let mut outbox = Outbox::new();
    let mut table = Arc::clone(&tables.borrow_and_update());
    loop {
        let n = match inbox.recv(&socket) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Err(e) = socket.readable().await {
                    tracing::debug!("udp receive: {e}");
                }
                continue;
            }
            Err(e) => {
                tracing::debug!("udp receive: {e}");
                continue;
            }
        };
        if tables.has_changed().unwrap_or(false) {
            table = Arc::clone(&tables.borrow_and_update());
        }
        for i in 0..n.min(BATCH) {
            let Some((packet, peer, raw_peer)) = inbox.get(i) else {
                continue;
            };
            let Some(out) = outbox.next() else { break };
            match handle(&table, packet, Proto::Udp, peer, out) {
                Handled::Reply => outbox.push(raw_peer),
                Handled::Nothing => {}
                Handled::Pending(pending) => match Arc::clone(&in_flight).try_acquire_owned() {
                    Ok(permit) => pending.serve_udp(Arc::clone(&socket), permit),
                    Err(_) => {
                        pending.refuse(out);
                        outbox.push(raw_peer);
                    }
                },
            }
        }
        outbox.flush(&socket).await;
        // A flooded socket never blocks: let the upstream readers and other tasks run.
        tokio::task::yield_now().await;
    }
}
