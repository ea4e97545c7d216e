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
use std::sync::{Arc, Mutex};
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
/// queries it completes (they go out through the listeners' sockets). Queues kept
/// elsewhere ([`Deferred`], an upstream's queries) are sent first.
pub(crate) struct Outgoing {
    /// The sockets with datagrams queued, and their datagrams.
    queued: Vec<(Arc<UdpSocket>, Outbox)>,
    /// Emptied outboxes, kept for their buffers. The sockets are not kept: a listener
    /// closed by a reload must not stay bound because a queue still holds it.
    spare: Vec<Outbox>,
    /// Queues to send before the datagrams above, each once.
    deferred: Vec<Arc<dyn Deferred>>,
}

/// A queue kept elsewhere that an [`Outgoing`] sends when it is flushed.
pub(crate) trait Deferred: Send + Sync {
    /// Sends what is queued without waiting; what cannot go out now is failed, and any
    /// reply that failure calls for is queued in `outgoing`.
    fn send_now(&self, outgoing: &mut Outgoing);
}

impl Outgoing {
    /// Nothing queued.
    pub(crate) fn new() -> Self {
        Self {
            queued: Vec::new(),
            spare: Vec::new(),
            deferred: Vec::new(),
        }
    }

    /// Queues `datagram` to `peer` through `socket`.
    pub(crate) fn push(&mut self, socket: &Arc<UdpSocket>, datagram: &[u8], peer: SocketAddr) {
        let at = match self.queued.iter().position(|(s, _)| Arc::ptr_eq(s, socket)) {
            Some(at) => at,
            None => {
                let outbox = self.spare.pop().unwrap_or_default();
                self.queued.push((Arc::clone(socket), outbox));
                self.queued.len() - 1
            }
        };
        if let Some((_, outbox)) = self.queued.get_mut(at) {
            outbox.push(datagram, Some(peer));
        }
    }

    /// Has `queue` sent at the next flush (once, however often it is deferred).
    pub(crate) fn defer<D: Deferred + 'static>(&mut self, queue: &Arc<D>) {
        let address = Arc::as_ptr(queue).cast::<()>();
        let known = self
            .deferred
            .iter()
            .any(|d| std::ptr::eq(Arc::as_ptr(d).cast::<()>(), address));
        if !known {
            self.deferred.push(Arc::clone(queue) as Arc<dyn Deferred>);
        }
    }

    /// Sends everything queued: the deferred queues first, without waiting, then the
    /// datagrams. Where a socket's send buffer is full, the caller (a listener or an
    /// upstream's reader) waits for room, as a blocking write would.
    pub(crate) async fn flush(&mut self) {
        while let Some(queue) = self.deferred.pop() {
            queue.send_now(self);
        }
        for (socket, mut outbox) in self.queued.drain(..) {
            outbox.flush(&socket).await;
            self.spare.push(outbox);
        }
    }
}

/// Datagrams for one connected socket, queued from any thread and sent together by the
/// next flush of an [`Outgoing`] told about them ([`Outgoing::defer`]).
pub(crate) struct Queue {
    /// The datagrams queued, and an emptied outbox kept for its buffers.
    boxes: Mutex<(Outbox, Outbox)>,
}

impl Queue {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self {
            boxes: Mutex::default(),
        }
    }

    /// Queues `datagram`; false when it cannot be (a thread panicked holding the queue).
    pub(crate) fn push(&self, datagram: &[u8]) -> bool {
        match self.boxes.lock() {
            Ok(mut boxes) => {
                boxes.0.push(datagram, None);
                true
            }
            Err(_) => false,
        }
    }

    /// Sends what is queued through `socket` without waiting: `sent` is called once per
    /// datagram that went out, `failed` with each one that did not (the send buffer is
    /// full, or the kernel refused it).
    pub(crate) fn send_now(
        &self,
        socket: &UdpSocket,
        mut sent: impl FnMut(),
        mut failed: impl FnMut(&[u8]),
    ) {
        let Some(mut batch) = self.take() else {
            return;
        };
        let mut at = 0;
        while at < batch.len() {
            match socket.try_io(Interest::WRITABLE, || batch.send_from(socket, at)) {
                Ok(n) => {
                    (0..n).for_each(|_| sent());
                    at += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    (at..batch.len())
                        .filter_map(|i| batch.datagram(i))
                        .for_each(&mut failed);
                    break;
                }
                Err(_) => {
                    batch.datagram(at).into_iter().for_each(&mut failed);
                    at += 1;
                }
            }
        }
        batch.clear();
        if let Ok(mut boxes) = self.boxes.lock() {
            boxes.1 = batch;
        }
    }

    /// Takes the queued datagrams, leaving the spare outbox in their place.
    fn take(&self) -> Option<Outbox> {
        let mut boxes = self.boxes.lock().ok()?;
        let (queued, spare) = &mut *boxes;
        std::mem::swap(queued, spare);
        Some(std::mem::take(spare))
    }
}

/// Datagrams waiting to be sent together through one socket.
#[derive(Default)]
struct Outbox {
    /// The datagrams, one after another.
    bytes: Vec<u8>,
    /// Where each datagram ends in `bytes`, and whom it goes to (none on a connected
    /// socket).
    ends: Vec<(usize, Option<SocketAddrAny>)>,
}

impl Outbox {
    fn push(&mut self, datagram: &[u8], peer: Option<SocketAddr>) {
        self.bytes.extend_from_slice(datagram);
        self.ends.push((self.bytes.len(), peer.map(Into::into)));
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Where datagram `i` starts in `bytes`.
    fn start(&self, i: usize) -> usize {
        i.checked_sub(1)
            .and_then(|previous| self.ends.get(previous))
            .map_or(0, |&(end, _)| end)
    }

    /// Datagram `i`'s bytes.
    fn datagram(&self, i: usize) -> Option<&[u8]> {
        let &(end, _) = self.ends.get(i)?;
        self.bytes.get(self.start(i)..end)
    }

    /// Sends every queued datagram, waiting for room in the socket's send buffer when it is
    /// full. A datagram the kernel refuses is dropped, as a failed `sendto` would drop it.
    async fn flush(&mut self, socket: &UdpSocket) {
        let mut sent = 0;
        while sent < self.len() {
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
        self.clear();
    }

    /// One `sendmmsg` of up to [`BATCH`] datagrams from index `first` on; returns how many
    /// went out, at least one (the kernel reports a failure of the first as an error).
    fn send_from(&self, socket: &UdpSocket, first: usize) -> io::Result<usize> {
        let ends = self.ends.get(first..).unwrap_or_default();
        let count = ends.len().min(BATCH);
        let mut ends = ends.iter();
        let mut from = self.start(first);
        let mut parts: [Part<'_>; BATCH] = std::array::from_fn(|_| {
            let mut part = Part {
                iov: [IoSlice::new(&[])],
                peer: None,
                control: SendAncillaryBuffer::default(),
            };
            if let Some((end, peer)) = ends.next() {
                part.iov = [IoSlice::new(self.bytes.get(from..*end).unwrap_or_default())];
                part.peer = peer.as_ref();
                from = *end;
            }
            part
        });
        let mut messages = parts.each_mut().map(|part| match part.peer {
            Some(peer) => MMsgHdr::new_with_addr(peer, &part.iov, &mut part.control),
            None => MMsgHdr::new(&part.iov, &mut part.control),
        });
        let messages = messages.get_mut(..count).unwrap_or_default();
        match sendmmsg(socket, messages, SendFlags::empty())? {
            // Not reported for a non-empty batch; counted as a failure of the first, so
            // that no caller loops on it.
            0 => Err(io::Error::other("sendmmsg sent nothing")),
            n => Ok(n),
        }
    }
}

/// One message of a `sendmmsg`: its bytes, its destination (none on a connected socket),
/// no control data.
struct Part<'a> {
    iov: [IoSlice<'a>; 1],
    peer: Option<&'a SocketAddrAny>,
    control: SendAncillaryBuffer<'a, 'a, 'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connected socket's queue: what goes out is counted, and a datagram the kernel
    /// refuses (here with the ECONNREFUSED an ICMP port unreachable left on the socket) is
    /// handed back, while the rest of the batch still goes out.
    #[tokio::test]
    async fn queue_counts_sent_and_hands_back_refused() {
        let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let target = closed.local_addr().unwrap();
        drop(closed);
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        socket.connect(target).await.unwrap();
        // Like tokio's own `try_send`, a send is only tried once the runtime has seen the
        // socket writable.
        socket.writable().await.unwrap();
        let queue = Queue::new();
        let (mut sent, mut failed) = (0, Vec::new());

        assert!(queue.push(b"first"));
        queue.send_now(&socket, || sent += 1, |d| failed.push(d.to_vec()));
        assert_eq!((sent, failed.len()), (1, 0));

        // The port unreachable comes back over loopback at once; give it a moment.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(queue.push(b"second"));
        assert!(queue.push(b"third"));
        queue.send_now(&socket, || sent += 1, |d| failed.push(d.to_vec()));
        assert_eq!(failed, [b"second".to_vec()]);
        assert_eq!(sent, 2);

        // Nothing is left queued.
        queue.send_now(&socket, || sent += 1, |d| failed.push(d.to_vec()));
        assert_eq!((sent, failed.len()), (2, 1));
    }
}
