//! The TCP worker: accept (at most [`MAX_CONNECTIONS`] per listener), then per connection
//! read length-prefixed queries in any chunking, answer them in the order they complete
//! (pipelining, RFC 7766), and close after [`IDLE_TIMEOUT`] without a query.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use dns_wire::tcp::FrameDecoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

use super::{Handled, handle};
use crate::config::Table;
use crate::query::request::Proto;

/// Open connections per listener.
pub(super) const MAX_CONNECTIONS: usize = 1024;
/// Queries of one connection waiting for upstream at once.
const MAX_PIPELINED: usize = 64;
/// A connection with no query for this long is closed (miekg/dns: 8 s).
const IDLE_TIMEOUT: Duration = Duration::from_secs(8);

/// Accepts connections until the task is aborted.
pub(super) async fn serve(
    listener: TcpListener,
    tables: watch::Receiver<Arc<Table>>,
    connections: Arc<Semaphore>,
) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(stream, peer, tables.clone(), permit));
    }
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    mut tables: watch::Receiver<Arc<Table>>,
    _permit: OwnedSemaphorePermit,
) {
    let (mut reader, mut writer) = stream.into_split();
    let (replies, mut outgoing) = mpsc::channel::<Vec<u8>>(MAX_PIPELINED);
    let write = tokio::spawn(async move {
        let mut framed = Vec::new();
        while let Some(reply) = outgoing.recv().await {
            framed.clear();
            framed.extend_from_slice(&(reply.len() as u16).to_be_bytes());
            framed.extend_from_slice(&reply);
            if writer.write_all(&framed).await.is_err() {
                break;
            }
        }
    });
    let pipelined = Arc::new(Semaphore::new(MAX_PIPELINED));
    let mut decoder = FrameDecoder::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut out = Vec::new();
    let mut table = Arc::clone(&tables.borrow_and_update());
    'read: loop {
        let n = match tokio::time::timeout(IDLE_TIMEOUT, reader.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => n,
            _ => break,
        };
        decoder.push(buf.get(..n).unwrap_or_default());
        if tables.has_changed().unwrap_or(false) {
            table = Arc::clone(&tables.borrow_and_update());
        }
        while let Some(query) = decoder.next_message() {
            match handle(&table, query, Proto::Tcp, peer, &mut out) {
                Handled::Reply => {
                    if replies.send(out.clone()).await.is_err() {
                        break 'read;
                    }
                }
                Handled::Nothing => {}
                Handled::Pending(pending) => {
                    let Ok(permit) = Arc::clone(&pipelined).acquire_owned().await else {
                        break 'read;
                    };
                    let replies = replies.clone();
                    tokio::spawn(async move {
                        let reply = pending.run().await;
                        if !reply.is_empty() {
                            let _ = replies.send(reply).await;
                        }
                        drop(permit);
                    });
                }
            }
        }
    }
    drop(replies);
    let _ = write.await;
}
