//! Listening sockets with SO_REUSEPORT, so each worker gets its own socket on the same
//! address and the kernel spreads clients across them. `[::]` listens dual-stack.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

/// Receive buffer asked for UDP sockets (the kernel may cap it).
const UDP_RECV_BUFFER: usize = 4 << 20;
/// Backlog of TCP listeners.
const TCP_BACKLOG: i32 = 1024;

fn socket(addr: SocketAddr, kind: Type, protocol: Protocol) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), kind, Some(protocol))?;
    if addr.is_ipv6() {
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// A non-blocking UDP socket bound to `addr`.
pub(super) fn udp(addr: SocketAddr) -> io::Result<std::net::UdpSocket> {
    let socket = socket(addr, Type::DGRAM, Protocol::UDP)?;
    // Best effort: a smaller buffer only drops more under bursts.
    let _ = socket.set_recv_buffer_size(UDP_RECV_BUFFER);
    socket.bind(&SockAddr::from(addr))?;
    Ok(socket.into())
}

/// A non-blocking TCP listener on `addr`.
pub(super) fn tcp(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = socket(addr, Type::STREAM, Protocol::TCP)?;
    socket.bind(&SockAddr::from(addr))?;
    socket.listen(TCP_BACKLOG)?;
    Ok(socket.into())
}
