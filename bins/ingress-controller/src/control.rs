//! The client side of nginx's control socket: one HTTP/1.1 request per connection over a Unix
//! socket, to the Lua handler in [`crate::lua`].

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::UnixStream;

/// Longest reply read from the control socket.
const MAX_REPLY: u64 = 64 << 20;
/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Why a control request failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The socket could not be reached or the exchange failed.
    #[error("control socket {socket}: {source}")]
    Io {
        /// The socket path.
        socket: String,
        /// The error.
        source: std::io::Error,
    },
    /// nginx answered with an unexpected status.
    #[error("control socket {socket}: {method} {path} answered {status}: {body}")]
    Status {
        /// The socket path.
        socket: String,
        /// The request method.
        method: &'static str,
        /// The request path.
        path: &'static str,
        /// The status code (0 when the reply was not HTTP).
        status: u16,
        /// The reply body, shortened.
        body: String,
    },
}

/// Sends one request and returns the reply body when the status is `expect`.
///
/// # Errors
///
/// [`ControlError`] when the socket is unreachable, the exchange times out, or the status
/// differs.
pub async fn request(
    socket: &Path,
    method: &'static str,
    path: &'static str,
    body: &str,
    expect: u16,
) -> Result<String, ControlError> {
    let io = |source| ControlError::Io {
        socket: socket.display().to_string(),
        source,
    };
    let exchange = async {
        let mut stream = UnixStream::connect(socket).await?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: control\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        let mut reply = Vec::new();
        stream.take(MAX_REPLY).read_to_end(&mut reply).await?;
        Ok(reply)
    };
    let reply = tokio::time::timeout(TIMEOUT, exchange)
        .await
        .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
        .map_err(io)?;
    let reply = String::from_utf8_lossy(&reply);
    let status = reply
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .unwrap_or(0);
    let body = reply
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    let body = if reply.contains("Transfer-Encoding: chunked") {
        dechunk(&body)
    } else {
        body
    };
    if status != expect {
        return Err(ControlError::Status {
            socket: socket.display().to_string(),
            method,
            path,
            status,
            body: body.chars().take(200).collect(),
        });
    }
    Ok(body)
}

/// Joins the chunks of an HTTP/1.1 chunked body (stopping at the last chunk or at the first
/// malformed size).
pub fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 {
            break;
        }
        let Some(chunk) = after.get(..size) else {
            break;
        };
        out.push_str(chunk);
        rest = after.get(size + 2..).unwrap_or_default();
    }
    out
}

/// Replaces the balancer's backend table.
///
/// # Errors
///
/// As [`request`].
pub async fn post_backends(socket: &Path, table: &str) -> Result<(), ControlError> {
    request(socket, "POST", "/backends", table, 201)
        .await
        .map(drop)
}

/// The backend table nginx holds.
///
/// # Errors
///
/// As [`request`].
pub async fn backends(socket: &Path) -> Result<String, ControlError> {
    request(socket, "GET", "/backends", "", 200).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunked_bodies() {
        assert_eq!(
            super::dechunk("5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n"),
            "hello!"
        );
    }
}
