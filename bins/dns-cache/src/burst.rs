//! How long a task keeps reading a busy socket: the UDP listeners and the upstream readers
//! drain their sockets with non-blocking calls, and after [`BURST`] datagrams in a row they
//! let the runtime's other tasks (listeners, readers, TCP, timers) run first.

/// Datagrams handled in a row before the task yields (tokio's own budget is 128
/// operations; a query is two).
pub const BURST: u32 = 64;

/// The datagrams left in the current burst.
#[derive(Debug)]
pub struct Burst {
    left: u32,
}

impl Default for Burst {
    fn default() -> Self {
        Self { left: BURST }
    }
}

impl Burst {
    /// Counts one more datagram. When the burst is spent, yields to the other tasks and
    /// starts a new one; returns whether it yielded.
    pub async fn next(&mut self) -> bool {
        if self.left > 0 {
            self.left -= 1;
            return false;
        }
        self.left = BURST - 1;
        tokio::task::yield_now().await;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn yields_once_per_burst() {
        let mut burst = Burst::default();
        let mut yields = Vec::new();
        for i in 0..3 * BURST {
            if burst.next().await {
                yields.push(i);
            }
        }
        assert_eq!(yields, [BURST, 2 * BURST]);
    }
}
