//! [`Nft`]: the `nft` program, for kube-proxy's nftables mode: a transaction applied from
//! stdin, the names of a table's chains and sets, and a table deleted.

use core::time::Duration;

use crate::error::ExecError;
use crate::process;

/// How long one run may take before it is killed (the same bound as the iptables programs':
/// it only stops a hung process from stalling its caller).
const TIMEOUT: Duration = Duration::from_secs(600);

/// What `nft` prints on stderr when the table named does not exist.
const NO_SUCH_TABLE: &str = "No such file or directory";

/// The `nft` program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nft {
    program: String,
    timeout: Duration,
}

impl Default for Nft {
    fn default() -> Self {
        Self::new()
    }
}

impl Nft {
    /// `nft` from `PATH`.
    pub fn new() -> Self {
        Self {
            program: "nft".to_owned(),
            timeout: TIMEOUT,
        }
    }

    async fn run(&self, args: &[&str], input: Option<&str>) -> Result<String, ExecError> {
        process::run(&self.program, args, input, self.timeout).await
    }

    /// `nft -f -` with `transaction` on stdin: the kernel applies all of it or, when any
    /// line is refused, none (the error carries nft's message, which quotes the line).
    ///
    /// # Errors
    ///
    /// The program could not run, refused the transaction, or timed out.
    pub async fn apply(&self, transaction: &str) -> Result<(), ExecError> {
        self.run(&["-f", "-"], Some(transaction)).await.map(drop)
    }

    /// The names of the chains and sets of table `table` of `family` (`ip`, `ip6`), from
    /// `nft list chains FAMILY` and `nft --terse list sets FAMILY` (which print no rules and
    /// no elements); empty when the table does not exist.
    ///
    /// # Errors
    ///
    /// The program could not run, failed or timed out.
    pub async fn chains_and_sets(
        &self,
        family: &str,
        table: &str,
    ) -> Result<Vec<String>, ExecError> {
        let chains = self.run(&["list", "chains", family], None).await?;
        let sets = self.run(&["--terse", "list", "sets", family], None).await?;
        let mut names = objects_of(&chains, family, table, "chain");
        names.extend(objects_of(&sets, family, table, "set"));
        Ok(names)
    }

    /// `nft -j list KIND FAMILY TABLE NAME` (`KIND` `set` or `map`): the set or map with its
    /// elements, as nft's JSON; `None` when the table or the set or map does not exist.
    ///
    /// # Errors
    ///
    /// The program could not run, failed otherwise, or timed out.
    pub async fn list_json(
        &self,
        kind: &str,
        family: &str,
        table: &str,
        name: &str,
    ) -> Result<Option<String>, ExecError> {
        match self
            .run(&["-j", "list", kind, family, table, name], None)
            .await
        {
            Ok(json) => Ok(Some(json)),
            Err(ExecError::Failed { stderr, .. }) if stderr.contains(NO_SUCH_TABLE) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// `nft delete table FAMILY TABLE`; `Ok(false)` when there was no such table.
    ///
    /// # Errors
    ///
    /// The program could not run, failed otherwise, or timed out.
    pub async fn delete_table(&self, family: &str, table: &str) -> Result<bool, ExecError> {
        match self.run(&["delete", "table", family, table], None).await {
            Ok(_) => Ok(true),
            Err(ExecError::Failed { stderr, .. }) if stderr.contains(NO_SUCH_TABLE) => Ok(false),
            Err(error) => Err(error),
        }
    }
}

/// The names of the objects of `kind` (`chain`, `set`) that a listing of `nft list` shows in
/// table `table` of `family`. The listing nests them as `table FAMILY NAME {` at the start
/// of a line, then `\tKIND NAME {` one tab in.
fn objects_of(listing: &str, family: &str, table: &str, kind: &str) -> Vec<String> {
    let header = format!("table {family} {table} {{");
    let mut inside = false;
    let mut names = Vec::new();
    for line in listing.lines() {
        if !line.starts_with(char::is_whitespace) {
            inside = line.trim_end() == header;
            continue;
        }
        if !inside {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let [word, name, "{"] = words.as_slice()
            && *word == kind
        {
            names.push((*name).to_owned());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAINS: &str = "table ip kube-proxy {\n\tchain service-ABC-ns/name/tcp/p {\n\t}\n\
        \tchain nat-output {\n\t\ttype nat hook output priority -100; policy accept;\n\t}\n}\n\
        table ip other {\n\tchain foo {\n\t}\n}\n";

    const SETS: &str = "table ip filter {\n\tset kube-proxy {\n\t\ttype ipv4_addr\n\t}\n}\n\
        table ip kube-proxy {\n\tset affinity-X {\n\t\ttype ipv4_addr\n\t\tflags dynamic,timeout\n\t\ttimeout 3h\n\t}\n}\n";

    #[test]
    fn only_the_named_tables_objects_are_listed() {
        assert_eq!(
            objects_of(CHAINS, "ip", "kube-proxy", "chain"),
            ["service-ABC-ns/name/tcp/p", "nat-output"]
        );
        assert_eq!(objects_of(SETS, "ip", "kube-proxy", "set"), ["affinity-X"]);
        assert!(objects_of(CHAINS, "ip6", "kube-proxy", "chain").is_empty());
        assert!(objects_of(SETS, "ip", "other", "set").is_empty());
    }

    #[tokio::test]
    async fn a_refused_transaction_carries_nfts_message() {
        // `sh` stands in for nft: the runner's part is the plumbing.
        let nft = Nft {
            program: "sh".to_owned(),
            timeout: TIMEOUT,
        };
        let error = nft.apply("echo 'Error: syntax error' >&2; exit 1").await;
        // `sh -f -` reads its script from stdin, as nft reads its transaction.
        let Err(ExecError::Failed { stderr, .. }) = error else {
            panic!("{error:?}");
        };
        assert_eq!(stderr, "Error: syntax error");
    }
}
