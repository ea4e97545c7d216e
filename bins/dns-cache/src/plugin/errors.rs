//! `errors`: every error the chain returns is logged as
//! `[ERROR] plugin/errors: RCODE QNAME QTYPE: ERROR` (rcode as a number, name lower-cased).
//!
//! `consolidate PERIOD REGEXP [LEVEL] [show_first]` rules (CoreDNS's `plugin/errors`): the
//! first rule whose pattern matches the error text takes it. Its errors are counted from the
//! first one for PERIOD, then one line `N errors like 'REGEXP' occurred in last PERIOD` is
//! printed at LEVEL (`error` unless given). With `show_first` the first error of a period is
//! also printed in full, at LEVEL, and the summary only when more than one occurred. When a
//! configuration is replaced or dropped, its pending summaries are printed at once, as CoreDNS
//! does on shutdown.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};

use dns_wire::Rcode;
use regex::Regex;
use tracing::Level;

use crate::duration::from_go;
use crate::query::request::Request;

/// The `errors` plugin of a block.
#[derive(Clone, Debug)]
pub struct Errors {
    rules: Arc<Rules>,
}

/// The `consolidate` rules of one `errors` plugin, in Corefile order.
#[derive(Debug)]
struct Rules(Vec<Rule>);

/// One `consolidate` rule and its count for the running period.
#[derive(Debug)]
struct Rule {
    pattern: Regex,
    period: std::time::Duration,
    /// The period as Go prints a `time.Duration` (`30s`, `5m0s`).
    period_text: String,
    level: Level,
    show_first: bool,
    count: AtomicU32,
}

/// What becomes of one error.
#[derive(Debug, PartialEq)]
enum Disposition {
    /// No rule matches: log it now.
    Plain,
    /// Rule `index` counts it; `first` when it opens the rule's period.
    Counted { index: usize, first: bool },
}

impl Errors {
    /// The plugin for a parsed `errors` directive.
    ///
    /// # Errors
    /// A `consolidate` pattern this regular-expression engine cannot compile (the corefile
    /// crate has already accepted its RE2 syntax, so in practice only size limits).
    pub fn new(config: &corefile::plugins::Errors) -> Result<Self, regex::Error> {
        let rules = config
            .consolidate
            .iter()
            .map(|rule| {
                Ok(Rule {
                    pattern: Regex::new(&rule.pattern)?,
                    period: from_go(rule.period),
                    period_text: rule.period.to_string(),
                    level: level(rule.level.as_deref()),
                    show_first: rule.show_first,
                    count: AtomicU32::new(0),
                })
            })
            .collect::<Result<_, regex::Error>>()?;
        Ok(Self {
            rules: Arc::new(Rules(rules)),
        })
    }

    /// Logs `error`, returned with `rcode` for `req`, or counts it under its `consolidate` rule.
    pub fn log(&self, req: &Request<'_>, rcode: Rcode, error: &str) {
        match self.rules.dispose(error) {
            Disposition::Plain => emit(Level::ERROR, &line(req, rcode, error)),
            Disposition::Counted { index, first } => {
                if !first {
                    return;
                }
                let Some(rule) = self.rules.0.get(index) else {
                    return;
                };
                if rule.show_first {
                    emit(rule.level, &line(req, rcode, error));
                }
                self.summarise_after(index, rule.period);
            }
        }
    }

    /// Prints rule `index`'s summary once `period` has passed, if the rules still exist then
    /// (a dropped configuration prints its summaries itself).
    fn summarise_after(&self, index: usize, period: std::time::Duration) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let rules: Weak<Rules> = Arc::downgrade(&self.rules);
        runtime.spawn(async move {
            tokio::time::sleep(period).await;
            if let Some(rule) = rules.upgrade().as_ref().and_then(|r| r.0.get(index)) {
                rule.summarise();
            }
        });
    }
}

impl Rules {
    /// Counts `error` under the first rule that matches it.
    fn dispose(&self, error: &str) -> Disposition {
        match self.0.iter().position(|rule| rule.pattern.is_match(error)) {
            None => Disposition::Plain,
            Some(index) => {
                let before = self
                    .0
                    .get(index)
                    .map_or(1, |rule| rule.count.fetch_add(1, Ordering::AcqRel));
                Disposition::Counted {
                    index,
                    first: before == 0,
                }
            }
        }
    }
}

impl Drop for Rules {
    fn drop(&mut self) {
        for rule in &self.0 {
            rule.summarise();
        }
    }
}

impl Rule {
    /// Ends the period: prints the summary of what it counted, if any.
    fn summarise(&self) {
        if let Some(text) = self.take_summary() {
            emit(self.level, &text);
        }
    }

    /// Ends the period and returns its summary line: none for no error, nor for a single
    /// error `show_first` has already printed.
    fn take_summary(&self) -> Option<String> {
        let count = self.count.swap(0, Ordering::AcqRel);
        (count > 1 || count == 1 && !self.show_first).then(|| {
            format!(
                "{count} errors like '{}' occurred in last {}",
                self.pattern.as_str(),
                self.period_text
            )
        })
    }
}

/// A `consolidate` rule's LEVEL argument (the corefile crate has checked the name).
fn level(name: Option<&str>) -> Level {
    match name {
        Some("warning") => Level::WARN,
        Some("info") => Level::INFO,
        Some("debug") => Level::DEBUG,
        _ => Level::ERROR,
    }
}

/// Logs `text` as the `errors` plugin at `level`.
fn emit(level: Level, text: &str) {
    match level {
        Level::WARN => tracing::warn!(plugin = "errors", "{text}"),
        Level::INFO => tracing::info!(plugin = "errors", "{text}"),
        Level::DEBUG | Level::TRACE => tracing::debug!(plugin = "errors", "{text}"),
        Level::ERROR => tracing::error!(plugin = "errors", "{text}"),
    }
}

/// The text after the prefix.
pub fn line(req: &Request<'_>, rcode: Rcode, error: &str) -> String {
    let name = req.question.name.to_name().to_lowercase();
    format!("{} {} {}: {}", rcode.0, name, req.question.qtype, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto, admit};
    use dns_wire::Type;

    #[test]
    fn error_line_as_coredns_prints_it() {
        let q = query("Example.ORG.", Type::A, None);
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!()
        };
        assert_eq!(
            line(
                &req,
                Rcode::SERVFAIL,
                "read udp 10.0.0.1:53->8.8.8.8:53: i/o timeout"
            ),
            "2 example.org. A: read udp 10.0.0.1:53->8.8.8.8:53: i/o timeout"
        );
    }

    fn errors(corefile_block: &str) -> Errors {
        let text = format!(". {{\n    errors {{\n{corefile_block}\n    }}\n}}\n");
        let view = corefile::load(text.as_bytes()).unwrap();
        let block = &view.blocks[0];
        let config = corefile::plugins::config::<corefile::plugins::Errors>(block, "Corefile")
            .unwrap()
            .unwrap();
        Errors::new(&config).unwrap()
    }

    /// plugin/errors: "the message will be associated with the first appropriate REGEXP".
    #[test]
    fn the_first_matching_rule_counts_an_error() {
        let e = errors("consolidate 30s \"i/o timeout$\"\nconsolidate 5m \"^read udp\" warning");
        let rules = &e.rules;
        assert_eq!(
            rules.dispose("read udp 10.0.0.1:53->8.8.8.8:53: i/o timeout"),
            Disposition::Counted {
                index: 0,
                first: true
            }
        );
        assert_eq!(
            rules.dispose("read udp 10.0.0.1:53->8.8.8.8:53: connection refused"),
            Disposition::Counted {
                index: 1,
                first: true
            }
        );
        assert_eq!(
            rules.dispose("dial tcp: i/o timeout"),
            Disposition::Counted {
                index: 0,
                first: false
            }
        );
        assert_eq!(
            rules.dispose("plugin/log: no next plugin found"),
            Disposition::Plain
        );
        assert_eq!(rules.0[1].level, Level::WARN);
        assert_eq!(rules.0[0].level, Level::ERROR, "CoreDNS's default level");
    }

    /// plugin/errors: `N errors like 'REGEXP' occurred in last PERIOD`, with Go's duration text,
    /// and a new period starts after the summary.
    #[test]
    fn the_summary_counts_the_period_and_resets_it() {
        let e = errors("consolidate 5m \".* i/o timeout$\"");
        for _ in 0..3 {
            e.rules.dispose("x: i/o timeout");
        }
        let rule = &e.rules.0[0];
        assert_eq!(
            rule.take_summary().as_deref(),
            Some("3 errors like '.* i/o timeout$' occurred in last 5m0s")
        );
        assert_eq!(rule.take_summary(), None, "nothing counted since");
        assert_eq!(
            e.rules.dispose("x: i/o timeout"),
            Disposition::Counted {
                index: 0,
                first: true
            }
        );
    }

    /// plugin/errors `show_first`: one error is printed in full and gets no summary; more than
    /// one get the total count.
    #[test]
    fn show_first_prints_a_summary_only_for_repeats() {
        let e = errors("consolidate 30s timeout info show_first");
        let rule = &e.rules.0[0];
        assert_eq!(rule.level, Level::INFO);
        e.rules.dispose("timeout");
        assert_eq!(rule.take_summary(), None);
        for _ in 0..3 {
            e.rules.dispose("timeout");
        }
        assert_eq!(
            rule.take_summary().as_deref(),
            Some("3 errors like 'timeout' occurred in last 30s")
        );
    }
}
