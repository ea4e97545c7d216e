//! The UDP socket that all of one upstream's queries share, and its reader task: a reply
//! goes to the query waiting under its ID, a socket error fails every waiting query, and
//! a sweep every [`SWEEP_INTERVAL`] times out the detached queries past their deadline.
//! Which query that is, is [`pending`](super::pending)'s decision.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dns_wire::cache::set_id;
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::error::ExchangeError;
use super::pending::{self, Waiters};
use super::wire::message_id;
use crate::server::batch::{Inbox, Outgoing, Queue};
use crate::server::burst::Burst;

/// Aborts a task when dropped.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What became of a query sent with `Upstream::send_detached`.
pub enum Delivery {
    /// The reply, with the query's ID put back; not yet checked with [`Upstream::check`](super::Upstream::check).
    Reply(Vec<u8>),
    /// The exchange failed (socket error or timeout).
    Failed(ExchangeError),
    /// It could not be sent at once (no socket yet, every ID taken, the send would block):
    /// not the upstream's failure.
    NotSent,
}

/// What a detached query is completed with, called outside any lock.
pub(crate) type OnReply = Box<dyn FnOnce(Delivery, &mut Outgoing) + Send>;

/// How a task waiting on the shared socket gets its reply.
pub(super) type TaskWaiter = oneshot::Sender<io::Result<Vec<u8>>>;

/// A query waiting for its reply on the shared socket: a task waits on the channel (and
/// times itself out), or no task waits and the reader completes the query (see
/// `Upstream::send_detached`), at the latest at its deadline.
pub(super) type Waiter = pending::Waiter<TaskWaiter, OnReply>;

/// The queries waiting on the shared socket, shared with its reader.
pub(super) type Pending = Arc<Mutex<Waiters<TaskWaiter, OnReply>>>;

/// How often the reader gives up on detached queries past their deadline.
const SWEEP_INTERVAL: Duration = Duration::from_millis(100);

/// The shared UDP socket and its reader task.
pub(super) struct UdpMux {
    /// The socket, connected to the upstream.
    pub(super) socket: Arc<UdpSocket>,
    /// Its local address, for error texts.
    pub(super) local: String,
    /// The queries waiting for a reply.
    pub(super) pending: Pending,
    /// Detached queries registered and waiting to be sent together.
    pub(super) queue: Queue,
    _reader: AbortOnDrop,
}

impl UdpMux {
    /// A socket connected to `remote`, and its reader.
    pub(super) async fn open(remote: SocketAddr) -> io::Result<Self> {
        let bind: SocketAddr = if remote.is_ipv4() {
            "0.0.0.0:0".parse().map_err(io::Error::other)?
        } else {
            "[::]:0".parse().map_err(io::Error::other)?
        };
        let socket = UdpSocket::bind(bind).await?;
        socket.connect(remote).await?;
        let local = socket
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let socket = Arc::new(socket);
        let pending: Pending = Arc::default();
        let reader = tokio::spawn(read_replies(
            Arc::clone(&socket),
            Arc::clone(&pending),
            local.clone(),
            remote,
        ));
        Ok(Self {
            socket,
            local,
            pending,
            queue: Queue::new(),
            _reader: AbortOnDrop(reader),
        })
    }
}

/// Hands each reply to the query waiting for its ID, and every [`SWEEP_INTERVAL`] times out
/// the detached queries past their deadline. A socket error (an ICMP port unreachable shows
/// up as ECONNREFUSED) fails every query waiting. While the socket has replies they are
/// read in batches (one `recvmmsg` each) with plain non-blocking calls, no future per reply.
async fn read_replies(socket: Arc<UdpSocket>, pending: Pending, local: String, remote: SocketAddr) {
    let mut inbox = Inbox::new(remote.is_ipv6());
    let mut outgoing = Outgoing::new();
    let mut sweep = tokio::time::interval(SWEEP_INTERVAL);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut burst = Burst::default();
    loop {
        tokio::select! {
            ready = socket.ready(Interest::READABLE | Interest::ERROR) => match ready {
                // The runtime's I/O driver is gone: shutdown.
                Err(_) => return,
                // A socket error (ECONNREFUSED after an ICMP port unreachable) is an error
                // event, not readability. Its readiness is cleared before the error is
                // taken, so that a later error wakes the reader again.
                Ok(ready) if ready.is_error() => {
                    let _ = socket.try_io(Interest::ERROR, || {
                        Err::<(), _>(io::ErrorKind::WouldBlock.into())
                    });
                    if let Ok(Some(e)) = socket.take_error() {
                        fail_all(&pending, &e, &local, remote, &mut outgoing);
                        outgoing.flush().await;
                    }
                }
                Ok(_) => {}
            },
            _ = sweep.tick() => {
                time_out_detached(&pending, &local, remote, &mut outgoing);
                outgoing.flush().await;
                continue;
            }
        }
        loop {
            let handled = match inbox.receive(&socket) {
                Ok(received) => {
                    for (reply, _) in inbox.datagrams() {
                        deliver(&pending, reply, &mut outgoing);
                    }
                    received
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    fail_all(&pending, &e, &local, remote, &mut outgoing);
                    1
                }
            };
            outgoing.flush().await;
            // After a burst (and a yield), back to the select, so that the sweep runs too.
            if burst.spend(handled).await {
                break;
            }
        }
    }
}

/// Hands a reply to the query waiting for its ID, if any; what a detached query sends on
/// is queued in `outgoing`.
fn deliver(pending: &Pending, reply: &[u8], outgoing: &mut Outgoing) {
    let Some(id) = message_id(reply) else {
        return;
    };
    let waiter = pending.lock().ok().and_then(|mut p| p.remove(id));
    match waiter {
        Some(Waiter::Task(waiter)) => {
            let _ = waiter.send(Ok(reply.to_vec()));
        }
        Some(Waiter::Detached {
            original_id,
            on_reply,
            ..
        }) => {
            let mut reply = reply.to_vec();
            let _ = set_id(&mut reply, original_id);
            on_reply(Delivery::Reply(reply), outgoing);
        }
        None => {}
    }
}

/// Fails every query waiting on the socket with its error.
fn fail_all(
    pending: &Pending,
    e: &io::Error,
    local: &str,
    remote: SocketAddr,
    outgoing: &mut Outgoing,
) {
    let waiters: Vec<_> = match pending.lock() {
        Ok(mut p) => p.drain(),
        Err(_) => Vec::new(),
    };
    for waiter in waiters {
        let error = io::Error::new(e.kind(), e.to_string());
        match waiter {
            Waiter::Task(waiter) => {
                let _ = waiter.send(Err(error));
            }
            Waiter::Detached { on_reply, .. } => {
                on_reply(
                    Delivery::Failed(ExchangeError::Io {
                        op: "read",
                        proto: "udp",
                        local: format!("{local}->"),
                        remote,
                        syscall: "read",
                        source: error,
                    }),
                    outgoing,
                );
            }
        }
    }
}

/// Fails the detached queries whose deadline has passed with Go's timeout error.
fn time_out_detached(pending: &Pending, local: &str, remote: SocketAddr, outgoing: &mut Outgoing) {
    let now = Instant::now();
    let expired = match pending.lock() {
        Ok(mut p) => p.expire(now),
        Err(_) => Vec::new(),
    };
    for on_reply in expired {
        on_reply(
            Delivery::Failed(ExchangeError::Timeout {
                proto: "udp",
                local: local.to_owned(),
                remote,
            }),
            outgoing,
        );
    }
}

/// Removes a pending ID when the query stops waiting.
pub(super) struct PendingGuard<'a> {
    /// The table the query waits in.
    pub(super) pending: &'a Pending,
    /// Its ID.
    pub(super) id: u16,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(self.id);
        }
    }
}
