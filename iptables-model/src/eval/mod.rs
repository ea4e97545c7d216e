//! Following packets through a ruleset: the possibilistic tracer of kube-proxy's unit tests
//! ([`trace_kube_test`]) and the exact evaluator with odds.

mod kube_test;
mod odds;

pub use kube_test::{KubeTrace, trace_kube_test};
pub use odds::{
    Host, Outcome, Packet, Path, RULE_BUDGET, SourceNat, Verdict, evaluate, evaluate_with_budget,
    merge,
};

/// Nested chain calls allowed before a trace gives up (the kernel's own limit is the number of
/// chains; kube-proxy nests four deep).
pub const MAX_DEPTH: usize = 64;
