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
    /// Counts `n` more datagrams. When the burst is spent, yields to the other tasks and
    /// starts a new one; returns whether it yielded.
    pub async fn spend(&mut self, n: usize) -> bool {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if let Some(left) = self.left.checked_sub(n) {
            self.left = left;
            return false;
        }
        self.left = BURST.saturating_sub(n.saturating_sub(self.left));
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
            if burst.spend(1).await {
                yields.push(i);
            }
        }
        assert_eq!(yields, [BURST, 2 * BURST]);
    }

    #[tokio::test]
    async fn batches_count_every_datagram() {
        let mut burst = Burst::default();
        let batch = usize::try_from(BURST / 2).unwrap();
        let mut yields = Vec::new();
        for i in 0..6 {
            if burst.spend(batch).await {
                yields.push(i);
            }
        }
        // Two batches fill a burst; the third starts the next one.
        assert_eq!(yields, [2, 4]);
        // A batch larger than a whole burst yields at once.
        assert!(burst.spend(2 * batch + 1).await);
    }
}
