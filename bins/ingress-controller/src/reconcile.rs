//! What to do with a newly rendered configuration and backend table, given what nginx runs:
//! a reload only when the configuration text changed, a table update only when the table
//! changed, and never a retry of a configuration nginx already refused.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

/// The work one update needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// A configuration to validate and load (it differs from the running one).
    pub config: Option<String>,
    /// A backend table to send (it differs from the one nginx holds).
    pub table: Option<String>,
}

/// What nginx is known to run.
#[derive(Debug, Default)]
pub struct Reconciler {
    loaded: Option<String>,
    refused: Option<String>,
    table: Option<String>,
}

/// A stable hash of a configuration text, for metrics and logs.
pub fn config_hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

impl Reconciler {
    /// The work needed to bring nginx to `config` and `table`.
    pub fn plan(&self, config: &str, table: &str) -> Plan {
        let new_config =
            self.loaded.as_deref() != Some(config) && self.refused.as_deref() != Some(config);
        Plan {
            config: new_config.then(|| config.to_owned()),
            table: (self.table.as_deref() != Some(table)).then(|| table.to_owned()),
        }
    }

    /// nginx now runs `config`.
    pub fn loaded(&mut self, config: String) {
        self.loaded = Some(config);
        self.refused = None;
    }

    /// nginx refused `config`; it keeps the last good one.
    pub fn refused(&mut self, config: String) {
        self.refused = Some(config);
    }

    /// nginx's balancer holds `table`.
    pub fn table_sent(&mut self, table: String) {
        self.table = Some(table);
    }

    /// nginx was started afresh: its balancer holds no table.
    pub fn restarted(&mut self) {
        self.table = None;
    }

    /// Whether nginx's balancer does not hold `table` (yet).
    pub fn table_pending(&self, table: &str) -> bool {
        self.table.as_deref() != Some(table)
    }

    /// The configuration nginx runs, if any.
    pub fn running(&self) -> Option<&str> {
        self.loaded.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_only_changes_do_not_reload() {
        let mut r = Reconciler::default();
        let first = r.plan("conf", "a 10.0.0.1:80");
        assert_eq!(first.config.as_deref(), Some("conf"));
        assert_eq!(first.table.as_deref(), Some("a 10.0.0.1:80"));
        r.loaded("conf".into());
        r.table_sent("a 10.0.0.1:80".into());
        assert_eq!(r.plan("conf", "a 10.0.0.1:80"), Plan::default());
        let endpoints = r.plan("conf", "a 10.0.0.2:80");
        assert_eq!(endpoints.config, None);
        assert!(endpoints.table.is_some());
        r.refused("bad".into());
        assert_eq!(r.plan("bad", "a 10.0.0.1:80").config, None);
        assert_eq!(r.running(), Some("conf"));
        assert!(!r.table_pending("a 10.0.0.1:80"));
        r.restarted();
        assert!(r.plan("conf", "a 10.0.0.1:80").table.is_some());
        assert!(r.table_pending("a 10.0.0.1:80"));
        assert_eq!(config_hash("x"), config_hash("x"));
    }
}
