//! The size limits of a manifest file, and the words an operator reads when one is exceeded.
//!
//! A file is refused before it is read when it is larger than [`MAX_MANIFEST_BYTES`]; each of
//! its documents is then parsed under a YAML budget (serde-saphyr's [`Budget`]) set here
//! explicitly, not left to the parser's defaults: those refuse a `List` of 20,000 Services
//! (about 8 MB) after 250,000 nodes. The limits below accept such a file with room to spare,
//! while bounding the memory and time one file can cost.

use serde_saphyr::Budget;
use serde_saphyr::budget::BudgetBreach;

/// The largest manifest file read, in bytes (16 MiB); a larger file is refused unread.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The most YAML nodes (scalars, sequences and mappings; a key counts as a scalar) in one
/// document: 2,000,000, about 100 per Service in a `List` of 20,000.
pub const MAX_YAML_NODES: usize = 2_000_000;

/// The most parser events in one document: every node, plus the end of each sequence and
/// mapping, so twice [`MAX_YAML_NODES`].
pub const MAX_YAML_EVENTS: usize = 2 * MAX_YAML_NODES;

/// The deepest nesting of sequences and mappings in one document (Kubernetes objects need
/// about 10 levels).
pub const MAX_YAML_DEPTH: usize = 64;

/// The most aliases (`*name`) in one document, and the most anchors (`&name`).
pub const MAX_YAML_ALIASES: usize = 50_000;

/// The parser's budget for one document.
pub(super) fn budget() -> Budget {
    let mut budget = Budget::default();
    budget.max_nodes = MAX_YAML_NODES;
    budget.max_events = MAX_YAML_EVENTS;
    budget.max_depth = MAX_YAML_DEPTH;
    budget.max_aliases = MAX_YAML_ALIASES;
    budget.max_anchors = MAX_YAML_ALIASES;
    // Scalars cannot hold more text than the file: the file's limit is theirs.
    budget.max_total_scalar_bytes = usize::try_from(MAX_MANIFEST_BYTES).unwrap_or(usize::MAX);
    // Replaying aliases copies events: no more than a document may have.
    budget.max_recorded_anchor_events = MAX_YAML_EVENTS;
    budget
}

/// What to tell the operator when a file is larger than [`MAX_MANIFEST_BYTES`].
pub(super) fn file_too_large(bytes: u64) -> String {
    format!(
        "{bytes} bytes, over the limit of {MAX_MANIFEST_BYTES} bytes (16 MiB) for one manifest \
         file: split it into several files"
    )
}

/// What to tell the operator when a document exceeded a limit of the YAML budget: which limit,
/// its value, and what to do.
pub(super) fn breach_message(breach: &BudgetBreach) -> String {
    let (what, limit) = match breach {
        BudgetBreach::Nodes { .. } => ("YAML nodes (scalars, lists and maps)", MAX_YAML_NODES),
        BudgetBreach::Events { .. } => ("YAML parser events", MAX_YAML_EVENTS),
        BudgetBreach::Depth { .. } => ("levels of nesting", MAX_YAML_DEPTH),
        BudgetBreach::Aliases { .. } => ("aliases (*name)", MAX_YAML_ALIASES),
        BudgetBreach::Anchors { .. } => ("anchors (&name)", MAX_YAML_ALIASES),
        BudgetBreach::RecordedAnchorEvents { .. } => {
            ("parser events copied by aliases", MAX_YAML_EVENTS)
        }
        other => {
            return format!(
                "over a limit of the YAML parser ({other:?}): split the document or simplify \
                 its anchors and aliases"
            );
        }
    };
    format!(
        "more than {limit} {what} in one document, the limit of a manifest document: split it \
         into several documents (`---`) or files"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_limit_and_its_value() {
        let nodes = breach_message(&BudgetBreach::Nodes { nodes: 2_000_001 });
        assert_eq!(
            nodes,
            "more than 2000000 YAML nodes (scalars, lists and maps) in one document, the limit \
             of a manifest document: split it into several documents (`---`) or files"
        );
        assert_eq!(
            file_too_large(17 << 20),
            "17825792 bytes, over the limit of 16777216 bytes (16 MiB) for one manifest file: \
             split it into several files"
        );
    }
}
