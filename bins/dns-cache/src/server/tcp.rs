//! The TCP worker: accept (backing off when that fails, `accept.rs`) into one of the
//! listener's slots (`slots.rs`), then per connection read length-prefixed queries in any
//! chunking and answer them in the order they complete (pipelining, RFC 7766).
//!
//! Deadlines, as miekg/dns (CoreDNS's server library) sets them: the first query must
//! arrive whole within [`TcpLimits::first_frame`] of the accept (miekg: read timeout,
//! 2 s), each later one within [`TcpLimits::idle`] of the end of the one before (miekg:
//! idle timeout, 8 s), however its bytes are spread; a deadline covers a whole frame, so a
//! client trickling bytes cannot keep a connection. Each reply must be written within
//! [`TcpLimits::write`] (miekg: write timeout, 2 s), so a client that sends queries and
//! never reads the replies loses its connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use dns_wire::tcp::FrameDecoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::time::{Instant, timeout, timeout_at};

use super::accept::Backoff;
use super::slots::{Activity, Slot, Slots};
use super::{Handled, handle};
use crate::config::Table;
use crate::query::request::Proto;

/// Queries of one connection waiting for upstream at once.
const MAX_PIPELINED: usize = 64;

/// The limits of a listener's TCP connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpLimits {
    /// Open connections per listener (over it, the connection idle longest is closed).
    pub connections: usize,
    /// Open connections from one client address (over it, that client's connection idle
    /// longest is closed).
    pub per_client: usize,
    /// Time from the accept to the end of the first query.
    pub first_frame: Duration,
    /// Time from the end of a query to the end of the next one.
    pub idle: Duration,
    /// Time to write one reply.
    pub write: Duration,
}

impl Default for TcpLimits {
    fn default() -> Self {
        Self {
            connections: 1024,
            per_client: 256,
            first_frame: Duration::from_secs(2),
            idle: Duration::from_secs(8),
            write: Duration::from_secs(2),
        }
    }
}

/// Accepts connections until the task is aborted.
pub(super) async fn serve(
    listener: TcpListener,
    tables: watch::Receiver<Arc<Table>>,
    slots: Arc<Slots>,
    limits: TcpLimits,
) {
    let local = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let mut backoff = Backoff::default();
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => {
                backoff.accepted(local);
                accepted
            }
            Err(e) => {
                backoff.failed(local, &e).await;
                continue;
            }
        };
        // No slot: the stream is dropped, which closes it.
        let Some(slot) = slots.admit(peer.ip()) else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(stream, peer, tables.clone(), slot, limits));
    }
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    tables: watch::Receiver<Arc<Table>>,
    slot: Slot,
    limits: TcpLimits,
) {
    let (reader, writer) = stream.into_split();
    let (replies, outgoing) = mpsc::channel::<Vec<u8>>(MAX_PIPELINED);
    let activity = &slot.activity;
    let reading = read_queries(reader, peer, tables, replies, activity, limits);
    let writing = write_replies(writer, outgoing, activity, limits.write);
    let evicted = activity.evicted();
    tokio::pin!(reading, writing, evicted);
    tokio::select! {
        // No more queries: the answers under way still go out.
        () = &mut reading => tokio::select! {
            () = &mut writing => {}
            () = &mut evicted => {}
        },
        // The client stopped reading, or the connection broke.
        () = &mut writing => {}
        () = &mut evicted => {}
    }
}

/// Reads and serves queries until EOF, an error, a missed deadline or a closed writer.
async fn read_queries(
    mut reader: OwnedReadHalf,
    peer: SocketAddr,
    mut tables: watch::Receiver<Arc<Table>>,
    replies: mpsc::Sender<Vec<u8>>,
    activity: &Arc<Activity>,
    limits: TcpLimits,
) {
    let pipelined = Arc::new(Semaphore::new(MAX_PIPELINED));
    let mut decoder = FrameDecoder::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut out = Vec::new();
    let mut table = Arc::clone(&tables.borrow_and_update());
    let mut deadline = Instant::now() + limits.first_frame;
    loop {
        let n = match timeout_at(deadline, reader.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => n,
            _ => return,
        };
        decoder.push(buf.get(..n).unwrap_or_default());
        if tables.has_changed().unwrap_or(false) {
            table = Arc::clone(&tables.borrow_and_update());
        }
        while let Some(query) = decoder.next_message() {
            deadline = Instant::now() + limits.idle;
            activity.begin();
            match handle(&table, query, Proto::Tcp, peer, &mut out) {
                Handled::Reply => {
                    if replies.send(out.clone()).await.is_err() {
                        return;
                    }
                }
                Handled::Nothing => activity.end(),
                Handled::Pending(pending) => {
                    let Ok(permit) = Arc::clone(&pipelined).acquire_owned().await else {
                        return;
                    };
                    let replies = replies.clone();
                    let activity = Arc::clone(activity);
                    tokio::spawn(async move {
                        let reply = pending.run().await;
                        if reply.is_empty() || replies.send(reply).await.is_err() {
                            activity.end();
                        }
                        drop(permit);
                    });
                }
            }
        }
    }
}

/// Writes replies until every sender is gone, or a write fails or misses `deadline`.
async fn write_replies(
    mut writer: OwnedWriteHalf,
    mut outgoing: mpsc::Receiver<Vec<u8>>,
    activity: &Activity,
    deadline: Duration,
) {
    let mut framed = Vec::new();
    while let Some(reply) = outgoing.recv().await {
        framed.clear();
        framed.extend_from_slice(&(reply.len() as u16).to_be_bytes());
        framed.extend_from_slice(&reply);
        let written = timeout(deadline, writer.write_all(&framed)).await;
        activity.end();
        if !matches!(written, Ok(Ok(()))) {
            return;
        }
    }
}
