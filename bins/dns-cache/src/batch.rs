//! Datagrams in batches: one `recvmmsg(2)` reads up to [`BATCH`] datagrams and one
//! `sendmmsg(2)` sends up to [`BATCH`] replies. A busy listener makes two system calls per
//! batch of queries instead of two per query, and an upstream's reader one per batch of
//! replies; an idle socket gives batches of one, so nothing waits for a batch to fill.
//!
//! Receiving goes through nix (rustix has no `recvmmsg`), sending through rustix (nix's
//! `sendmmsg` reports how many went out only through an iterator that reads addresses it
//! never wrote). nix's message headers hold raw pointers, so they are not `Send`, while
//! the listener's task may move between worker threads at any await: each thread keeps its
//! own headers, borrowed for one system call. They are kept apart by address family,
//! because the kernel shortens a header's address length to what it wrote last.

use std::cell::RefCell;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::thread::LocalKey;

use nix::sys::socket::{MsgFlags, MultiHeaders, SockaddrIn, SockaddrIn6, SockaddrLike, recvmmsg};
use rustix::net::{MMsgHdr, SendAncillaryBuffer, SendFlags, SocketAddrAny, sendmmsg};
use tokio::io::Interest;
use tokio::net::UdpSocket;

/// Datagrams read or sent by one system call.
pub(crate) const BATCH: usize = 32;

/// Room for one datagram: the largest UDP payload, so none is ever cut short.
const SLOT: usize = 65_535;

thread_local! {
    /// Headers for `recvmmsg` on IPv4 sockets.
    static HEADERS_V4: RefCell<MultiHeaders<SockaddrIn>> =
        RefCell::new(MultiHeaders::preallocate(BATCH, None));
    /// Headers for `recvmmsg` on IPv6 sockets (dual-stack ones report IPv4 peers mapped).
    static HEADERS_V6: RefCell<MultiHeaders<SockaddrIn6>> =
        RefCell::new(MultiHeaders::preallocate(BATCH, None));
}

/// Received datagrams: their bytes and senders, up to [`BATCH`] at a time.
pub(crate) struct Inbox {
    /// Whether the socket is IPv6, which decides the headers and the senders' form.
    ipv6: bool,
    /// [`BATCH`] slots of [`SLOT`] bytes. Zeroed by the allocator's fresh pages, so only
    /// the pages datagrams land on become resident.
    buf: Vec<u8>,
    /// Length and sender of each datagram of the last batch.
    got: Vec<(usize, SocketAddr)>,
}

impl Inbox {
    /// An inbox for a socket of the given family.
    pub(crate) fn new(ipv6: bool) -> Self {
        Self {
            ipv6,
            buf: vec![0; BATCH * SLOT],
            got: Vec::with_capacity(BATCH),
        }
    }

    /// Reads what the socket holds, up to [`BATCH`] datagrams, without waiting; returns how
    /// many (`WouldBlock` when none, which clears the socket's readiness).
    pub(crate) fn receive(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        self.got.clear();
        let (buf, got) = (&mut self.buf, &mut self.got);
        socket.try_io(Interest::READABLE, || match self.ipv6 {
            false => receive_with(&HEADERS_V4, socket, buf, got),
            true => receive_with(&HEADERS_V6, socket, buf, got),
        })?;
        Ok(self.got.len())
    }

    /// The datagrams of the last batch, with their senders.
    pub(crate) fn datagrams(&self) -> impl Iterator<Item = (&[u8], SocketAddr)> + '_ {
        self.buf
            .chunks(SLOT)
            .zip(&self.got)
            .filter_map(|(slot, &(len, peer))| Some((slot.get(..len)?, peer)))
    }
}

/// One `recvmmsg` into `buf`'s slots with this thread's headers for address type `S`.
fn receive_with<S>(
    headers: &'static LocalKey<RefCell<MultiHeaders<S>>>,
    socket: &UdpSocket,
    buf: &mut [u8],
    got: &mut Vec<(usize, SocketAddr)>,
) -> io::Result<()>
where
    S: SockaddrLike + Copy + Into<SocketAddr>,
{
    headers.with(|headers| {
        // Only a call re-entering itself could find the headers borrowed; none does.
        let mut headers = headers
            .try_borrow_mut()
            .map_err(|_| io::Error::other("receive headers in use"))?;
        let mut slots = buf.chunks_mut(SLOT);
        let mut iovs: [[IoSliceMut<'_>; 1]; BATCH] =
            std::array::from_fn(|_| [IoSliceMut::new(slots.next().unwrap_or_default())]);
        let received = recvmmsg(
            socket.as_raw_fd(),
            &mut headers,
            iovs.iter_mut(),
            MsgFlags::empty(),
            None,
        )?;
        for message in received {
            if let Some(peer) = message.address {
                got.push((message.bytes, peer.into()));
            }
        }
        Ok(())
    })
}

/// Datagrams to send, grouped by socket: each socket's are sent with one `sendmmsg` per
/// [`BATCH`]. A listener queues its replies here, and so does an upstream's reader for the
/// queries it completes (they go out through the listeners' sockets).
pub(crate) struct Outgoing {
    /// The sockets with datagrams queued, and their datagrams.
    queued: Vec<(Arc<UdpSocket>, Outbox)>,
    /// Emptied outboxes, kept for their buffers. The sockets are not kept: a listener
    /// closed by a reload must not stay bound because a queue still holds it.
    spare: Vec<Outbox>,
}

impl Outgoing {
    /// Nothing queued.
    pub(crate) fn new() -> Self {
        Self {
            queued: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Queues `datagram` to `peer` through `socket`.
    pub(crate) fn push(&mut self, socket: &Arc<UdpSocket>, datagram: &[u8], peer: SocketAddr) {
        let at = match self.queued.iter().position(|(s, _)| Arc::ptr_eq(s, socket)) {
            Some(at) => at,
            None => {
                let outbox = self.spare.pop().unwrap_or_else(Outbox::new);
                self.queued.push((Arc::clone(socket), outbox));
                self.queued.len() - 1
            }
        };
        if let Some((_, outbox)) = self.queued.get_mut(at) {
            outbox.push(datagram, peer);
        }
    }

    /// Sends everything queued. Where a socket's send buffer is full, the caller (a
    /// listener or an upstream's reader) waits for room, as a blocking write would.
    pub(crate) async fn flush(&mut self) {
        for (socket, mut outbox) in self.queued.drain(..) {
            outbox.flush(&socket).await;
            self.spare.push(outbox);
        }
    }
}

/// Datagrams waiting to be sent together through one socket.
struct Outbox {
    /// The replies, one after another.
    bytes: Vec<u8>,
    /// Where each reply ends in `bytes`, and whom it goes to.
    replies: Vec<(usize, SocketAddrAny)>,
}

impl Outbox {
    fn new() -> Self {
        Self {
            bytes: Vec::new(),
            replies: Vec::with_capacity(BATCH),
        }
    }

    fn push(&mut self, reply: &[u8], peer: SocketAddr) {
        self.bytes.extend_from_slice(reply);
        self.replies.push((self.bytes.len(), peer.into()));
    }

    /// Sends every queued reply, waiting for room in the socket's send buffer when it is
    /// full. A reply the kernel refuses is dropped, as a failed `sendto` would drop it.
    async fn flush(&mut self, socket: &UdpSocket) {
        let mut sent = 0;
        while sent < self.replies.len() {
            match socket.try_io(Interest::WRITABLE, || self.send_from(socket, sent)) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if socket.writable().await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    tracing::debug!("udp send: {e}");
                    sent += 1;
                }
            }
        }
        self.bytes.clear();
        self.replies.clear();
    }

    /// One `sendmmsg` of up to [`BATCH`] replies from index `first` on; returns how many
    /// went out (at least one: the kernel reports a failure of the first as an error).
    fn send_from(&self, socket: &UdpSocket, first: usize) -> io::Result<usize> {
        let start = first
            .checked_sub(1)
            .and_then(|previous| self.replies.get(previous))
            .map_or(0, |&(end, _)| end);
        let replies = self.replies.get(first..).unwrap_or_default();
        let count = replies.len().min(BATCH);
        let mut replies = replies.iter();
        let mut from = start;
        let mut parts: [Part<'_>; BATCH] = std::array::from_fn(|_| {
            let mut part = Part {
                iov: [IoSlice::new(&[])],
                peer: None,
                control: SendAncillaryBuffer::default(),
            };
            if let Some((end, peer)) = replies.next() {
                part.iov = [IoSlice::new(self.bytes.get(from..*end).unwrap_or_default())];
                part.peer = Some(peer);
                from = *end;
            }
            part
        });
        let mut messages = parts.each_mut().map(|part| match part.peer {
            Some(peer) => MMsgHdr::new_with_addr(peer, &part.iov, &mut part.control),
            None => MMsgHdr::new(&part.iov, &mut part.control),
        });
        let messages = messages.get_mut(..count).unwrap_or_default();
        Ok(sendmmsg(socket, messages, SendFlags::empty())?)
    }
}

/// One message of a `sendmmsg`: its bytes, its destination, no control data.
struct Part<'a> {
    iov: [IoSlice<'a>; 1],
    peer: Option<&'a SocketAddrAny>,
    control: SendAncillaryBuffer<'a, 'a, 'a>,
}
