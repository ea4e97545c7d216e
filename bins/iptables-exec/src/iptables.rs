//! [`Iptables`]: the three programs of one IP family and [`Backend`], run with the options
//! both binaries need.

use core::time::Duration;

use iptables_model::Table;

use crate::backend::{Backend, Tool};
use crate::error::ExecError;
use crate::process;

/// How long one run may take before it is killed. A restore of a large cluster on the nft
/// backend can take minutes; this only stops a hung process from stalling its caller forever.
const TIMEOUT: Duration = Duration::from_secs(600);

/// Seconds to wait for the xtables lock another process holds (`-w`) before failing with an
/// error for which [`ExecError::is_lock`] is true.
const LOCK_WAIT_SECONDS: &str = "5";

/// Microseconds between two attempts at the xtables lock while waiting (`-W`; the programs'
/// default is a whole second).
const LOCK_POLL_MICROSECONDS: &str = "100000";

/// The iptables programs of one IP family and one [`Backend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iptables {
    ipv6: bool,
    backend: Backend,
    timeout: Duration,
}

impl Iptables {
    /// The `ip6tables-…` programs when `ipv6`, else the `iptables-…` ones, of `backend`.
    pub const fn new(ipv6: bool, backend: Backend) -> Self {
        Self {
            ipv6,
            backend,
            timeout: TIMEOUT,
        }
    }

    /// The same programs, killed after `timeout` instead of the default ten minutes.
    pub(crate) const fn with_timeout(self, timeout: Duration) -> Self {
        Self { timeout, ..self }
    }

    /// Whether these are the IPv6 programs.
    pub const fn ipv6(&self) -> bool {
        self.ipv6
    }

    async fn run(
        &self,
        tool: Tool,
        args: &[&str],
        input: Option<&str>,
    ) -> Result<String, ExecError> {
        let program = self.backend.program(self.ipv6, tool);
        process::run(&program, args, input, self.timeout).await
    }

    /// `iptables-restore -w 5 -W 100000 --noflush --counters` with `text` on stdin: applies
    /// the tables of `text` without flushing the others or the chains it does not name, and
    /// sets the counters the text gives (`[packets:bytes]`). A table is applied whole at its
    /// `COMMIT` or not at all.
    ///
    /// # Errors
    ///
    /// The program could not run, failed (a rejected line, a held lock), or timed out.
    pub async fn restore(&self, text: &str) -> Result<(), ExecError> {
        let args = [
            "-w",
            LOCK_WAIT_SECONDS,
            "-W",
            LOCK_POLL_MICROSECONDS,
            "--noflush",
            "--counters",
        ];
        self.run(Tool::Restore, &args, Some(text)).await.map(drop)
    }

    /// `iptables-save -t TABLE`: the table in restore syntax.
    ///
    /// With the legacy backend this creates the table in the kernel when it did not exist.
    ///
    /// # Errors
    ///
    /// The program could not run, failed or timed out.
    pub async fn save(&self, table: Table) -> Result<String, ExecError> {
        self.run(Tool::Save, &["-t", table.name()], None).await
    }

    /// `iptables-save`: every table the kernel has, none created.
    pub(crate) async fn save_existing(&self) -> Result<String, ExecError> {
        self.run(Tool::Save, &[], None).await
    }

    /// `iptables -w 5 -t TABLE ARGS…` (one command such as `-N CHAIN`, `-C CHAIN RULE…`,
    /// `-L CHAIN`); returns what it printed.
    ///
    /// # Errors
    ///
    /// The program could not run, failed (which, for `-C` or `-L`, means the rule or chain
    /// is absent) or timed out.
    pub async fn command(&self, table: Table, args: &[&str]) -> Result<String, ExecError> {
        let mut all = vec!["-w", LOCK_WAIT_SECONDS, "-t", table.name()];
        all.extend_from_slice(args);
        self.run(Tool::Iptables, &all, None).await
    }
}
