//! Carrying out [`rules`](super::rules): `iptables-save` to see what is there,
//! `iptables-restore --noflush` to insert what is missing or delete what is ours.

use std::process::Stdio;

use iptables_model::{OwnedRestoreFile, RestoreFile, Table};
use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

use super::rules::{PlacedRule, count_present, delete_present, insert_missing};

/// An `iptables-save` / `iptables-restore` failure.
#[derive(Debug, thiserror::Error)]
pub enum IptablesError {
    /// The program could not be run.
    #[error("running {program}: {source}")]
    Spawn {
        /// `iptables-restore`, …
        program: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The program failed.
    #[error("{program} failed: {stderr}")]
    Failed {
        /// `iptables-restore`, …
        program: &'static str,
        /// What it printed.
        stderr: String,
    },
    /// `iptables-save` printed something iptables-model cannot read.
    #[error("reading iptables-save output: {0}")]
    Parse(String),
}

impl IptablesError {
    /// Whether another process held the xtables lock (retried at the next sync).
    pub fn is_lock(&self) -> bool {
        matches!(self, Self::Failed { stderr, .. } if stderr.contains("xtables lock"))
    }
}

/// The iptables commands of one address family.
#[derive(Clone, Copy, Debug)]
pub struct Iptables {
    ipv6: bool,
}

impl Iptables {
    /// `iptables-*` for IPv4, `ip6tables-*` for IPv6.
    pub fn new(ipv6: bool) -> Self {
        Self { ipv6 }
    }

    /// Inserts the rules of `wanted` that are missing; returns how many were.
    pub async fn ensure(&self, wanted: &[PlacedRule]) -> Result<usize, IptablesError> {
        let counts = self.counts(wanted).await?;
        let missing = counts.iter().filter(|&&n| n == 0).count();
        if missing > 0 {
            self.restore(&insert_missing(wanted, &counts)).await?;
        }
        Ok(missing)
    }

    /// Deletes every copy of the rules of `wanted`; returns how many were deleted.
    pub async fn remove(&self, wanted: &[PlacedRule]) -> Result<usize, IptablesError> {
        let counts = self.counts(wanted).await?;
        let present = counts.iter().sum();
        if present > 0 {
            self.restore(&delete_present(wanted, &counts)).await?;
        }
        Ok(present)
    }

    /// How many copies of each rule the kernel has.
    async fn counts(&self, wanted: &[PlacedRule]) -> Result<Vec<usize>, IptablesError> {
        let mut saved = OwnedRestoreFile::default();
        for table in [Table::Raw, Table::Filter] {
            let text = self.save(table).await?;
            let file =
                iptables_model::parse(&text).map_err(|e| IptablesError::Parse(e.to_string()))?;
            saved.tables.extend(file.into_owned().tables);
        }
        Ok(count_present(wanted, &saved, self.ipv6))
    }

    async fn save(&self, table: Table) -> Result<String, IptablesError> {
        let program = if self.ipv6 {
            "ip6tables-save"
        } else {
            "iptables-save"
        };
        let output = Command::new(program)
            .args(["-t", table.name()])
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|source| IptablesError::Spawn { program, source })?;
        if !output.status.success() {
            return Err(IptablesError::Failed {
                program,
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    async fn restore(&self, document: &RestoreFile<'_>) -> Result<(), IptablesError> {
        let program = if self.ipv6 {
            "ip6tables-restore"
        } else {
            "iptables-restore"
        };
        let spawn = |source| IptablesError::Spawn { program, source };
        let mut child = Command::new(program)
            .args(["-w", "5", "--noflush"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn)?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(document.to_string().as_bytes())
                .await
                .map_err(spawn)?;
        }
        let output = child.wait_with_output().await.map_err(spawn)?;
        if output.status.success() {
            Ok(())
        } else {
            Err(IptablesError::Failed {
                program,
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            })
        }
    }
}
