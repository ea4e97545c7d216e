//! How an exchange with an upstream fails, worded as Go words it (`read udp A->B: i/o
//! timeout`, `dial tcp B: connect: connection refused`), since those texts reach the
//! `errors` plugin's log lines.

use std::io;
use std::net::SocketAddr;

/// An exchange that failed, with Go's wording (`read udp A->B: i/o timeout`).
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// No reply in time.
    #[error("read {proto} {local}->{remote}: i/o timeout")]
    Timeout {
        /// `udp` or `tcp`.
        proto: &'static str,
        /// Our address.
        local: String,
        /// The upstream.
        remote: SocketAddr,
    },
    /// A socket error.
    #[error("{op} {proto} {local}{remote}: {syscall}: {}", errno_text(source))]
    Io {
        /// `dial`, `read` or `write`.
        op: &'static str,
        /// `udp` or `tcp`.
        proto: &'static str,
        /// `LOCAL->` when known, else empty.
        local: String,
        /// The upstream.
        remote: SocketAddr,
        /// The system call: `connect`, `read` or `write`.
        syscall: &'static str,
        /// The error.
        source: io::Error,
    },
    /// The reply does not answer the question.
    #[error("dns: reply from {0} does not match the question")]
    Mismatch(SocketAddr),
    /// Every query ID of the socket is in use.
    #[error("too many queries in flight to {0}")]
    Busy(SocketAddr),
}

/// An OS error as Go words it: `connection refused` (lower case, no error number).
fn errno_text(e: &io::Error) -> String {
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream() -> SocketAddr {
        "192.0.2.1:53".parse().unwrap()
    }

    #[test]
    fn os_errors_lose_their_number_and_capital() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(errno_text(&refused), "connection refused");
        let raw = io::Error::from_raw_os_error(111);
        assert_eq!(errno_text(&raw), "connection refused");
    }

    #[test]
    fn texts_follow_go() {
        let timeout = ExchangeError::Timeout {
            proto: "udp",
            local: "127.0.0.1:4000".into(),
            remote: upstream(),
        };
        assert_eq!(
            timeout.to_string(),
            "read udp 127.0.0.1:4000->192.0.2.1:53: i/o timeout"
        );
        let dial = ExchangeError::Io {
            op: "dial",
            proto: "tcp",
            local: String::new(),
            remote: upstream(),
            syscall: "connect",
            source: io::Error::from_raw_os_error(111),
        };
        assert_eq!(
            dial.to_string(),
            "dial tcp 192.0.2.1:53: connect: connection refused"
        );
    }
}
