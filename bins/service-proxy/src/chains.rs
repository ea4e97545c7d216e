//! The chains this proxy owns outside its restore input: the canaries whose disappearance
//! means someone flushed the tables, the jumps from the built-in chains into its top-level
//! chains, and `--cleanup`. The programs run through [`iptables_exec`].

use iptables_exec::{ExecError, Iptables};
use iptables_model::kube::{TOP_LEVEL_CHAINS, is_service_chain, jump_rules};
use iptables_model::{Command, Line, Table};

/// The canary chain whose disappearance means someone flushed our tables.
pub const CANARY: &str = "KUBE-PROXY-CANARY";

/// The tables this proxy has chains in, each with a canary; mangle first (its canary is the
/// one polled).
const OUR_TABLES: [Table; 3] = [Table::Mangle, Table::Nat, Table::Filter];

/// Creates `chain` in `table` unless it exists.
async fn ensure_chain(iptables: &Iptables, table: Table, chain: &str) -> Result<(), ExecError> {
    if iptables.command(table, &["-n", "-L", chain]).await.is_err() {
        iptables.command(table, &["-N", chain]).await?;
    }
    Ok(())
}

/// The jumps from the built-in chains, by table: (table, built-in chain, rule arguments).
fn jumps() -> Vec<(Table, String, Vec<String>)> {
    let mut jumps = Vec::new();
    for section in jump_rules().tables {
        for line in section.lines {
            // The crate's own fixed rules: plain ASCII, never refused.
            if let Line::Command(Command::Append { chain, rule }) = line
                && let Ok(args) = rule.args()
            {
                jumps.push((section.table, chain.into(), args));
            }
        }
    }
    jumps
}

/// `ACTION BUILTIN RULE…`: the arguments of one `iptables` command on a jump.
fn jump_command<'a>(action: &'a str, builtin: &'a str, args: &'a [String]) -> Vec<&'a str> {
    let mut command = vec![action, builtin];
    command.extend(args.iter().map(String::as_str));
    command
}

/// Creates the top-level chains and the canaries, and prepends each jump from a built-in
/// chain unless it is there already (`-C`, then `-I`), as kube-proxy does before a full sync.
///
/// # Errors
///
/// The first command that failed (other than the checks, whose failure means "absent").
pub async fn ensure_jumps(iptables: &Iptables) -> Result<(), ExecError> {
    for table in OUR_TABLES {
        ensure_chain(iptables, table, CANARY).await?;
    }
    for (table, builtin, args) in jumps() {
        let target = args.last().cloned().unwrap_or_default();
        ensure_chain(iptables, table, &target).await?;
        let check = jump_command("-C", &builtin, &args);
        if iptables.command(table, &check).await.is_err() {
            let insert = jump_command("-I", &builtin, &args);
            iptables.command(table, &insert).await?;
        }
    }
    Ok(())
}

/// Whether the mangle canary still exists (kube-proxy polls only the first table's).
pub async fn canary_present(iptables: &Iptables) -> bool {
    iptables
        .command(Table::Mangle, &["-n", "-L", CANARY])
        .await
        .is_ok()
}

/// Removes everything this proxy installs: the jumps, its chains in mangle, nat and filter,
/// and the canaries. Chains and rules of others are left alone.
///
/// # Errors
///
/// A table could not be saved, or the restore that deletes the chains failed.
pub async fn cleanup(iptables: &Iptables) -> Result<(), ExecError> {
    for (table, builtin, args) in jumps() {
        let delete = jump_command("-D", &builtin, &args);
        // A rule inserted twice (by hand) is deleted twice; stop at the first miss.
        for _ in 0..8 {
            if iptables.command(table, &delete).await.is_err() {
                break;
            }
        }
    }
    let mut text = String::new();
    for table in OUR_TABLES {
        let saved = iptables.save(table).await?;
        let ours: Vec<&str> = saved
            .lines()
            .filter_map(|l| l.strip_prefix(':')?.split(' ').next())
            .filter(|c| is_ours(c))
            .collect();
        text.push_str(&cleanup_section(table, &ours));
    }
    iptables.restore(&text).await
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
        let jumps = jumps();
        assert_eq!(jumps.len(), 14);
        assert!(
            jumps
                .iter()
                .all(|(_, _, args)| args.last().is_some_and(|t| t.starts_with("KUBE-")))
        );
    }

    #[test]
    fn jump_commands_put_the_action_and_chain_first() {
        let args = [
            "-m".to_owned(),
            "comment".to_owned(),
            "-j".to_owned(),
            "KUBE-SERVICES".to_owned(),
        ];
        assert_eq!(
            jump_command("-C", "PREROUTING", &args),
            ["-C", "PREROUTING", "-m", "comment", "-j", "KUBE-SERVICES"]
        );
    }
}
