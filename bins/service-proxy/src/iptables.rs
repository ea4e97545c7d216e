//! Running `iptables-restore`, `iptables-save` and `iptables` (or their IPv6, legacy and nft
//! variants): the only place that touches the kernel's rules.

use std::process::Stdio;
use std::time::Duration;

use iptables_model::kube::{TOP_LEVEL_CHAINS, is_service_chain, jump_rules};
use iptables_model::{Command, Line, Table};
use tokio::io::AsyncWriteExt;
use tokio::process::Command as Process;

/// The canary chain whose disappearance means someone flushed our tables.
pub const CANARY: &str = "KUBE-PROXY-CANARY";

/// How long one command may take before it is killed (a restore of a large cluster on the nft
/// backend can take minutes; this only guards against a hung process).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// A failed command.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The program could not be started.
    #[error("cannot run {program}: {source} (is the iptables package installed?)")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// It ran and failed.
    #[error("{program} failed ({status}): {stderr}")]
    Failed {
        /// The program.
        program: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// It did not finish in time and was killed.
    #[error("{program} did not finish within {COMMAND_TIMEOUT:?}")]
    Timeout {
        /// The program.
        program: String,
    },
}

/// Which `iptables` build to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Variant {
    /// `iptables`, whatever the system's alternative points at.
    Default,
    /// `iptables-legacy`.
    Legacy,
    /// `iptables-nft`.
    Nft,
}

/// The `iptables` programs of one family and variant.
#[derive(Clone, Debug)]
pub struct Iptables {
    ipv6: bool,
    variant: Variant,
}

impl Iptables {
    /// The programs for IPv6 when `ipv6`, else IPv4.
    pub const fn new(ipv6: bool, variant: Variant) -> Self {
        Self { ipv6, variant }
    }

    /// `iptables`, `ip6tables-legacy-restore`, …
    fn program(&self, tool: &str) -> String {
        let base = if self.ipv6 { "ip6tables" } else { "iptables" };
        let variant = match self.variant {
            Variant::Default => "",
            Variant::Legacy => "-legacy",
            Variant::Nft => "-nft",
        };
        format!("{base}{variant}{tool}")
    }

    async fn run(
        &self,
        tool: &str,
        args: &[&str],
        stdin: Option<&str>,
    ) -> Result<String, ExecError> {
        let program = self.program(tool);
        let mut child = Process::new(&program)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| ExecError::Spawn {
                program: program.clone(),
                source,
            })?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // A write error shows up as the process's own failure below.
            let _ = pipe.write_all(text.as_bytes()).await;
            drop(pipe);
        }
        let output = tokio::time::timeout(COMMAND_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| ExecError::Timeout {
                program: program.clone(),
            })?
            .map_err(|source| ExecError::Spawn {
                program: program.clone(),
                source,
            })?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(ExecError::Failed {
                program,
                status: output.status.to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            })
        }
    }

    /// `iptables-restore -w 5 -W 100000 --noflush --counters` with `text` on stdin.
    pub async fn restore(&self, text: &str) -> Result<(), ExecError> {
        let args = ["-w", "5", "-W", "100000", "--noflush", "--counters"];
        self.run("-restore", &args, Some(text)).await.map(drop)
    }

    /// `iptables-save -t TABLE`.
    pub async fn save(&self, table: Table) -> Result<String, ExecError> {
        self.run("-save", &["-t", table.name()], None).await
    }

    async fn iptables(&self, table: Table, args: &[&str]) -> Result<String, ExecError> {
        let mut all = vec!["-w", "5", "-t", table.name()];
        all.extend_from_slice(args);
        self.run("", &all, None).await
    }

    async fn ensure_chain(&self, table: Table, chain: &str) -> Result<(), ExecError> {
        if self.iptables(table, &["-n", "-L", chain]).await.is_err() {
            self.iptables(table, &["-N", chain]).await?;
        }
        Ok(())
    }

    /// The jumps from the built-in chains, by table.
    fn jumps() -> Vec<(Table, String, Vec<String>)> {
        let mut jumps = Vec::new();
        for section in jump_rules().tables {
            for line in section.lines {
                if let Line::Command(Command::Append { chain, rule }) = line {
                    jumps.push((section.table, chain.into(), rule.args()));
                }
            }
        }
        jumps
    }

    /// Creates the top-level chains and the canaries, and prepends each jump from a built-in
    /// chain unless it is there already (`-C`, then `-I`), as kube-proxy does before a full sync.
    pub async fn ensure_jumps(&self) -> Result<(), ExecError> {
        for table in [Table::Mangle, Table::Nat, Table::Filter] {
            self.ensure_chain(table, CANARY).await?;
        }
        for (table, builtin, args) in Self::jumps() {
            let target = args.last().cloned().unwrap_or_default();
            self.ensure_chain(table, &target).await?;
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut check = vec!["-C", builtin.as_str()];
            check.extend_from_slice(&args);
            if self.iptables(table, &check).await.is_err() {
                let mut insert = vec!["-I", builtin.as_str()];
                insert.extend_from_slice(&args);
                self.iptables(table, &insert).await?;
            }
        }
        Ok(())
    }

    /// Whether the mangle canary still exists (kube-proxy polls only the first table's).
    pub async fn canary_present(&self) -> bool {
        self.iptables(Table::Mangle, &["-n", "-L", CANARY])
            .await
            .is_ok()
    }

    /// Removes everything this proxy installs: the jumps, its chains in nat and filter, and
    /// the canaries. Chains and rules of others are left alone.
    pub async fn cleanup(&self) -> Result<(), ExecError> {
        for (table, builtin, args) in Self::jumps() {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut delete = vec!["-D", builtin.as_str()];
            delete.extend_from_slice(&args);
            // A rule inserted twice (by hand) is deleted twice; stop at the first miss.
            for _ in 0..8 {
                if self.iptables(table, &delete).await.is_err() {
                    break;
                }
            }
        }
        let mut text = String::new();
        for table in [Table::Mangle, Table::Nat, Table::Filter] {
            let saved = self.save(table).await?;
            let ours: Vec<&str> = saved
                .lines()
                .filter_map(|l| l.strip_prefix(':')?.split(' ').next())
                .filter(|c| is_ours(c))
                .collect();
            text.push_str(&cleanup_section(table, &ours));
        }
        self.restore(&text).await
    }
}

/// Whether `chain` is one this proxy creates.
fn is_ours(chain: &str) -> bool {
    chain == CANARY || TOP_LEVEL_CHAINS.contains(&chain) || is_service_chain(chain)
}

/// A restore section that flushes and deletes `chains` (flushing them all first, so that
/// jumps between them do not keep any referenced).
fn cleanup_section(table: Table, chains: &[&str]) -> String {
    let mut text = format!("*{}\n", table.name());
    for chain in chains {
        text.push_str(&format!(":{chain} - [0:0]\n"));
    }
    for chain in chains {
        text.push_str(&format!("-X {chain}\n"));
    }
    text.push_str("COMMIT\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_names_follow_debians_alternatives() {
        assert_eq!(
            Iptables::new(false, Variant::Default).program("-restore"),
            "iptables-restore"
        );
        assert_eq!(
            Iptables::new(true, Variant::Legacy).program("-save"),
            "ip6tables-legacy-save"
        );
        assert_eq!(
            Iptables::new(false, Variant::Nft).program(""),
            "iptables-nft"
        );
    }

    #[test]
    fn cleanup_deletes_only_our_chains() {
        assert!(is_ours("KUBE-SEP-ABCDEFGHIJKLMNOP"));
        assert!(is_ours(CANARY));
        assert!(!is_ours("KUBE-KUBELET-CANARY"));
        assert!(!is_ours("DOCKER"));
        assert_eq!(
            cleanup_section(Table::Nat, &["KUBE-SERVICES", "KUBE-SVC-X"]),
            "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-X - [0:0]\n-X KUBE-SERVICES\n-X KUBE-SVC-X\nCOMMIT\n"
        );
    }

    #[test]
    fn every_jump_has_a_target_chain() {
        let jumps = Iptables::jumps();
        assert_eq!(jumps.len(), 14);
        assert!(
            jumps
                .iter()
                .all(|(_, _, args)| args.last().is_some_and(|t| t.starts_with("KUBE-")))
        );
    }
}
