//! How a run of an iptables program (or `nft`) fails.

use core::time::Duration;
use std::io;
use std::process::ExitStatus;

/// A run of an iptables program (or `nft`) that did not succeed. Each variant names the command line
/// (program and arguments) it ran.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The program could not be started.
    #[error(
        "cannot run {command}: {source} (is the package that provides it, iptables or nftables, installed?)"
    )]
    Spawn {
        /// The command line.
        command: String,
        /// Why it could not start.
        source: io::Error,
    },
    /// The program ran and exited unsuccessfully.
    #[error("{command} failed ({status}): {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// How it exited.
        status: ExitStatus,
        /// What it printed on stderr, without surrounding blanks.
        stderr: String,
    },
    /// The program did not finish in time and was killed.
    #[error("{command} did not finish within {timeout:?} and was killed")]
    Timeout {
        /// The command line.
        command: String,
        /// How long it was given.
        timeout: Duration,
    },
    /// The program exited successfully but its input could not be written whole, or its
    /// output could not be read.
    #[error("talking to {command}: {source}")]
    Io {
        /// The command line.
        command: String,
        /// The pipe error.
        source: io::Error,
    },
}

impl ExecError {
    /// Whether the program gave up because another process held the xtables lock (worth
    /// retrying later rather than reporting as a broken rule).
    pub fn is_lock(&self) -> bool {
        matches!(self, Self::Failed { stderr, .. } if stderr.contains("xtables lock"))
    }
}
