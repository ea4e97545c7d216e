//! Batched UDP I/O: one `recvmmsg` reads up to [`BATCH`] datagrams, one `sendmmsg` sends up
//! to [`BATCH`] replies, so a busy listener makes two system calls per batch instead of two
//! per query.

use std::cell::RefCell;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use nix::errno::Errno;
use nix::sys::socket::{MsgFlags, MultiHeaders, SockaddrStorage, recvmmsg, sendmmsg};
use tokio::io::Interest;
use tokio::net::UdpSocket;

/// Datagrams read or replies sent per system call.
pub(super) const BATCH: usize = 32;
/// The largest datagram received.
const MAX_DATAGRAM: usize = 65_535;

type Headers = RefCell<MultiHeaders<SockaddrStorage>>;

thread_local! {
    // The kernel's message headers hold raw pointers, so they cannot move between threads
    // with a task: each thread has its own, used only within one system call. Receiving
    // and sending need separate ones: `sendmmsg` points the headers at the caller's
    // addresses, and a receive leaves the sender's address length in them, which must
    // suit the next receive, so IPv4 and IPv6 sockets do not share either.
    static RECV_V4: Headers = RefCell::new(MultiHeaders::preallocate(BATCH, None));
    static RECV_V6: Headers = RefCell::new(MultiHeaders::preallocate(BATCH, None));
    static SEND: Headers = RefCell::new(MultiHeaders::preallocate(BATCH, None));
}

/// Runs `f` with one of this thread's sets of message headers.
fn with_headers<T>(
    headers: &'static std::thread::LocalKey<Headers>,
    f: impl FnOnce(&mut MultiHeaders<SockaddrStorage>) -> io::Result<T>,
) -> io::Result<T> {
    headers.with(|headers| {
        let mut headers = headers
            .try_borrow_mut()
            .map_err(|_| io::Error::from(io::ErrorKind::ResourceBusy))?;
        f(&mut headers)
    })
}

/// Received datagrams: their bytes and senders.
pub(super) struct Inbox {
    /// `BATCH` buffers of `MAX_DATAGRAM` bytes, in one allocation whose pages the kernel
    /// only touches as far as datagrams reach.
    buf: Vec<u8>,
    lens: [usize; BATCH],
    peers: [Option<SockaddrStorage>; BATCH],
    headers: &'static std::thread::LocalKey<Headers>,
}

impl Inbox {
    /// An inbox for a socket bound to `local`.
    pub(super) fn new(local: SocketAddr) -> Self {
        Self {
            buf: vec![0; BATCH * MAX_DATAGRAM],
            lens: [0; BATCH],
            peers: [None; BATCH],
            headers: if local.is_ipv6() { &RECV_V6 } else { &RECV_V4 },
        }
    }

    /// Reads the datagrams waiting (at most [`BATCH`]); `WouldBlock` when there are none.
    pub(super) fn recv(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        socket.try_io(Interest::READABLE, || {
            with_headers(self.headers, |headers| {
                let mut chunks = self.buf.chunks_exact_mut(MAX_DATAGRAM);
                let mut slices: [[IoSliceMut<'_>; 1]; BATCH] =
                    std::array::from_fn(|_| [IoSliceMut::new(chunks.next().unwrap_or_default())]);
                let received = recvmmsg(
                    socket.as_raw_fd(),
                    headers,
                    slices.iter_mut(),
                    MsgFlags::MSG_DONTWAIT,
                    None,
                )
                .map_err(io::Error::from)?;
                let mut n = 0;
                for ((message, len), peer) in received
                    .zip(self.lens.iter_mut())
                    .zip(self.peers.iter_mut())
                {
                    *len = message.bytes;
                    *peer = message.address;
                    n += 1;
                }
                Ok(n)
            })
        })
    }

    /// Datagram `i` of the last [`Inbox::recv`] and its sender.
    pub(super) fn get(&self, i: usize) -> Option<(&[u8], SocketAddr, SockaddrStorage)> {
        let raw = (*self.peers.get(i)?)?;
        let len = *self.lens.get(i)?;
        let start = i * MAX_DATAGRAM;
        let bytes = self.buf.get(start..start + len.min(MAX_DATAGRAM))?;
        Some((bytes, socket_addr(&raw)?, raw))
    }
}

/// The standard form of a socket address (IPv4 or IPv6).
fn socket_addr(raw: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = raw.as_sockaddr_in() {
        return Some(SocketAddr::V4((*v4).into()));
    }
    raw.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
}

/// Replies waiting to be sent, in reusable buffers.
pub(super) struct Outbox {
    replies: Vec<Vec<u8>>,
    peers: [Option<SockaddrStorage>; BATCH],
    len: usize,
}

impl Outbox {
    pub(super) fn new() -> Self {
        Self {
            replies: (0..BATCH).map(|_| Vec::new()).collect(),
            peers: [None; BATCH],
            len: 0,
        }
    }

    /// The next free reply buffer, emptied; `None` when the box is full (flush first).
    pub(super) fn next(&mut self) -> Option<&mut Vec<u8>> {
        let buf = self.replies.get_mut(self.len)?;
        buf.clear();
        Some(buf)
    }

    /// Queues the buffer [`Outbox::next`] gave for `peer`.
    pub(super) fn push(&mut self, peer: SockaddrStorage) {
        if let Some(slot) = self.peers.get_mut(self.len) {
            *slot = Some(peer);
            self.len += 1;
        }
    }

    /// Sends every queued reply, waiting for the socket when its buffer is full; a reply
    /// the kernel refuses is dropped, as a lost datagram would be.
    pub(super) async fn flush(&mut self, socket: &UdpSocket) {
        let mut done = 0;
        while done < self.len {
            match socket.try_io(Interest::WRITABLE, || self.send(socket, done)) {
                Ok(sent) => done += sent.max(1),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if socket.writable().await.is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::debug!("udp send: {e}");
                    done += 1;
                }
            }
        }
        self.len = 0;
    }

    /// One `sendmmsg` of the replies from `from` on; how many went.
    fn send(&mut self, socket: &UdpSocket, from: usize) -> io::Result<usize> {
        let replies = self.replies.get(from..self.len).unwrap_or_default();
        let peers = self.peers.get(from..self.len).unwrap_or_default();
        let mut replies = replies.iter();
        let slices: [[IoSlice<'_>; 1]; BATCH] =
            std::array::from_fn(|_| [IoSlice::new(replies.next().map_or(&[], Vec::as_slice))]);
        with_headers(&SEND, |headers| {
            let sent = sendmmsg(
                socket.as_raw_fd(),
                headers,
                slices.iter(),
                peers,
                [],
                MsgFlags::MSG_DONTWAIT,
            )
            .map_err(|e: Errno| io::Error::from(e))?;
            Ok(sent.count())
        })
    }
}
