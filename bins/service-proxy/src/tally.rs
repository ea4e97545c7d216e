//! What the restores left in the kernel, replayed from their inputs under `--noflush`
//! semantics: the rules of each chain (kube-proxy's `sync_proxy_rules_iptables_total`) and the
//! service ports whose Local traffic policy finds no local endpoint
//! (`sync_proxy_rules_no_local_endpoints_total`, the `"SPN has no local endpoints"` DROP rules
//! of filter `KUBE-SERVICES` for `internal` and `KUBE-EXTERNAL-SERVICES` for `external`).
//! Pure; each line costs a map lookup, so a partial sync costs what it wrote.

use std::collections::{BTreeMap, HashMap};

/// The comment suffix of the DROP rules of a service port with no local endpoint.
const NO_LOCAL: &str = " has no local endpoints\"";

/// One table's chains.
#[derive(Clone, Debug, Default)]
struct TableTally {
    /// Hashed: a full sync looks up tens of thousands of chains (SipHash took a quarter of
    /// the replay; foldhash is seeded at random too).
    chains: HashMap<String, usize, foldhash::fast::RandomState>,
    total: usize,
}

impl TableTally {
    /// `:CHAIN`: created, or flushed.
    fn declare(&mut self, chain: &str) {
        match self.chains.get_mut(chain) {
            Some(rules) => self.total -= std::mem::take(rules),
            None => {
                self.chains.insert(chain.to_owned(), 0);
            }
        }
    }

    /// `rules` rules appended to `chain`.
    fn add(&mut self, chain: &str, rules: usize) {
        match self.chains.get_mut(chain) {
            Some(count) => *count += rules,
            None => {
                self.chains.insert(chain.to_owned(), rules);
            }
        }
        self.total += rules;
    }

    fn delete(&mut self, chain: &str) {
        if let Some(rules) = self.chains.get_mut(chain).filter(|r| **r > 0) {
            *rules -= 1;
            self.total -= 1;
        }
    }

    fn delete_chain(&mut self, chain: &str) {
        if let Some(rules) = self.chains.remove(chain) {
            self.total -= rules;
        }
    }
}

/// The service ports with DROP rules for want of local endpoints, in one filter chain.
type NoLocal = BTreeMap<String, usize>;

/// The counts, replayed from every restore input since the last full sync.
#[derive(Clone, Debug, Default)]
pub struct RuleTally {
    tables: BTreeMap<String, TableTally>,
    internal: NoLocal,
    external: NoLocal,
}

impl RuleTally {
    /// Replays a successful restore input (`full`: it rewrote everything, so the tally starts
    /// over). Returns the rules it wrote (`-A`/`-I` lines) per table, in input order.
    pub fn apply(&mut self, text: &str, full: bool) -> Vec<(String, usize)> {
        if full {
            *self = Self::default();
        }
        let Self {
            tables,
            internal,
            external,
        } = self;
        let mut written: Vec<(String, usize)> = Vec::new();
        let mut current: Option<(&str, &mut TableTally)> = None;
        // The rules appended to one chain in a row, added to its count at once: an input
        // writes each chain's rules together, so most lines cost no map lookup.
        let mut run: Option<(&str, usize)> = None;
        for line in text.lines() {
            if let Some(name) = line.strip_prefix('*') {
                if let Some((_, tally)) = current.as_mut() {
                    flush(&mut run, tally);
                }
                written.push((name.to_owned(), 0));
                current = Some((name, tables.entry(name.to_owned()).or_default()));
                continue;
            }
            let Some((table, tally)) = current.as_mut() else {
                continue;
            };
            let (command, chain) = match line.strip_prefix(':') {
                Some(declaration) => (":", first_word(declaration).0),
                None => {
                    let (command, rest) = first_word(line);
                    (command, first_word(rest).0)
                }
            };
            let no_local = match (*table, chain) {
                ("filter", "KUBE-SERVICES") => Some(&mut *internal),
                ("filter", "KUBE-EXTERNAL-SERVICES") => Some(&mut *external),
                _ => None,
            };
            if !matches!(command, "-A" | "-I") {
                flush(&mut run, tally);
            }
            match command {
                ":" => {
                    tally.declare(chain);
                    if let Some(ports) = no_local {
                        ports.clear();
                    }
                }
                "-A" | "-I" => {
                    match run.as_mut() {
                        Some((same, rules)) if *same == chain => *rules += 1,
                        _ => {
                            flush(&mut run, tally);
                            run = Some((chain, 1));
                        }
                    }
                    if let Some((_, n)) = written.last_mut() {
                        *n += 1;
                    }
                    if let Some(ports) = no_local
                        && let Some(port) = no_local_port(line)
                    {
                        *ports.entry(port.to_owned()).or_default() += 1;
                    }
                }
                "-D" => {
                    tally.delete(chain);
                    if let Some(ports) = no_local
                        && let Some(port) = no_local_port(line)
                        && let Some(rules) = ports.get_mut(port)
                    {
                        *rules -= 1;
                        if *rules == 0 {
                            ports.remove(port);
                        }
                    }
                }
                "-X" => tally.delete_chain(chain),
                _ => {}
            }
        }
        if let Some((_, tally)) = current.as_mut() {
            flush(&mut run, tally);
        }
        written
    }

    /// The rules of each table this tally has seen.
    pub fn totals(&self) -> impl Iterator<Item = (&str, usize)> {
        self.tables
            .iter()
            .map(|(t, tally)| (t.as_str(), tally.total))
    }

    /// The service ports with no local endpoint: `(internal, external)` traffic policy.
    pub fn no_local_endpoints(&self) -> (usize, usize) {
        (self.internal.len(), self.external.len())
    }
}

/// The first word of `text` and what follows the space after it, by a byte loop: the words
/// are a few bytes long, shorter than a searcher takes to set up.
fn first_word(text: &str) -> (&str, &str) {
    match text.bytes().position(|b| b == b' ') {
        Some(at) => (
            text.get(..at).unwrap_or_default(),
            text.get(at + 1..).unwrap_or_default(),
        ),
        None => (text, ""),
    }
}

/// Adds a run of rules appended to one chain to the table's counts.
fn flush(run: &mut Option<(&str, usize)>, tally: &mut TableTally) {
    if let Some((chain, rules)) = run.take() {
        tally.add(chain, rules);
    }
}

/// `ns/svc:port` of a `"ns/svc:port has no local endpoints"` rule.
fn no_local_port(line: &str) -> Option<&str> {
    let start = line.find("--comment \"")? + "--comment \"".len();
    let comment = line.get(start..)?;
    let end = comment.find('"')?;
    comment.get(..=end)?.strip_suffix(NO_LOCAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "*filter
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
-A KUBE-SERVICES -m comment --comment \"ns/a:http has no local endpoints\" -m tcp -p tcp -d 172.30.0.1 --dport 80 -j DROP
-A KUBE-SERVICES -m comment --comment \"ns/b:http has no endpoints\" -m tcp -p tcp -d 172.30.0.2 --dport 80 -j REJECT
-A KUBE-EXTERNAL-SERVICES -m comment --comment \"ns/c:http has no local endpoints\" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP
-A KUBE-EXTERNAL-SERVICES -m comment --comment \"ns/c:http has no local endpoints\" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30080 -j DROP
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-X - [0:0]
:KUBE-SEP-Y - [0:0]
-A KUBE-SERVICES -j KUBE-SVC-X
-A KUBE-SVC-X -j KUBE-SEP-Y
-A KUBE-SEP-Y -j DNAT --to-destination 10.0.0.1:80
COMMIT
";

    fn totals(tally: &RuleTally) -> Vec<(&str, usize)> {
        tally.totals().collect()
    }

    #[test]
    fn a_full_sync_counts_what_it_wrote() {
        let mut tally = RuleTally::default();
        let written = tally.apply(FULL, true);
        assert_eq!(written, [("filter".to_owned(), 4), ("nat".to_owned(), 3)]);
        assert_eq!(totals(&tally), [("filter", 4), ("nat", 3)]);
        // kube-proxy counts service ports: ns/c has two DROP rules, one port.
        assert_eq!(tally.no_local_endpoints(), (1, 1));
        // A second full sync starts over.
        tally.apply(FULL, true);
        assert_eq!(totals(&tally), [("filter", 4), ("nat", 3)]);
    }

    /// A chain's rules are counted run by run, wherever its runs are: flushing it later takes
    /// all of them away, and only them.
    #[test]
    fn a_chain_counts_the_rules_of_all_its_runs() {
        let mut tally = RuleTally::default();
        let full = "*nat\n:A - [0:0]\n:B - [0:0]\n-A A -j RETURN\n-A A -j RETURN\n\
                    -A B -j RETURN\n-I A 1 -j RETURN\nCOMMIT\n*filter\n:A - [0:0]\n\
                    -A A -j RETURN\nCOMMIT\n";
        let written = tally.apply(full, true);
        assert_eq!(written, [("nat".to_owned(), 4), ("filter".to_owned(), 1)]);
        assert_eq!(totals(&tally), [("filter", 1), ("nat", 4)]);
        tally.apply("*nat\n:A - [0:0]\n-A A -j RETURN\nCOMMIT\n", false);
        assert_eq!(totals(&tally), [("filter", 1), ("nat", 2)]);
        tally.apply("*nat\n-X B\nCOMMIT\n", false);
        assert_eq!(totals(&tally), [("filter", 1), ("nat", 1)]);
    }

    /// `--noflush`: a declared chain is flushed, `-D` deletes one rule, `-X` the chain, and
    /// chains not mentioned keep their rules.
    #[test]
    fn partial_syncs_replay_flushes_deletions_and_insertions() {
        let mut tally = RuleTally::default();
        tally.apply(FULL, true);
        let partial = "*filter
-D KUBE-SERVICES -m comment --comment \"ns/a:http has no local endpoints\" -m tcp -p tcp -d 172.30.0.1 --dport 80 -j DROP
-D KUBE-EXTERNAL-SERVICES -m comment --comment \"ns/c:http has no local endpoints\" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP
COMMIT
*nat
:KUBE-SVC-X - [0:0]
:KUBE-SEP-Y - [0:0]
:KUBE-SEP-Z - [0:0]
-I KUBE-SERVICES 1 -j KUBE-SVC-Z
-A KUBE-SVC-X -j KUBE-SEP-Z
-A KUBE-SEP-Z -j DNAT --to-destination 10.0.0.2:80
-X KUBE-SEP-Y
COMMIT
";
        let written = tally.apply(partial, false);
        assert_eq!(written, [("filter".to_owned(), 0), ("nat".to_owned(), 3)]);
        assert_eq!(totals(&tally), [("filter", 2), ("nat", 4)]);
        // ns/c still has its NodePort DROP rule.
        assert_eq!(tally.no_local_endpoints(), (0, 1));
        // kube-proxy's partial syncs rewrite the filter chains whole.
        tally.apply(
            "*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\nCOMMIT\n",
            false,
        );
        assert_eq!(totals(&tally), [("filter", 0), ("nat", 4)]);
        assert_eq!(tally.no_local_endpoints(), (0, 0));
    }
}
