//! The order kube-proxy's unit tests compare transactions and dumps in (`helpers_test.go`
//! `sortNFTablesTransaction`): blank and `#` lines dropped; lines ordered by object kind
//! (table, chain, rule, set, map, element), then by object name (the fifth word); rules keep
//! their order, other lines of one object are ordered as text.

use alloc::string::String;
use alloc::vec::Vec;

fn rank(kind: &str) -> u8 {
    match kind {
        "table" => 10,
        "chain" => 9,
        "rule" => 8,
        "set" => 7,
        "map" => 6,
        "element" => 5,
        _ => 0,
    }
}

/// `text` with its lines in kube-proxy's test order, joined by newlines.
pub fn canonical_order(text: &str) -> String {
    let mut lines: Vec<&str> = text
        .split('\n')
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    // A stable sort on (kind rank descending, name, text unless a rule): equal keys keep
    // their order, as Go's sort.SliceStable with kube-proxy's comparison does.
    lines.sort_by(|a, b| {
        let wa: Vec<&str> = a.split(' ').collect();
        let wb: Vec<&str> = b.split(' ').collect();
        let (Some(ka), Some(kb), Some(na), Some(nb)) = (wa.get(1), wb.get(1), wa.get(4), wb.get(4))
        else {
            return core::cmp::Ordering::Equal;
        };
        rank(kb)
            .cmp(&rank(ka))
            .then_with(|| na.cmp(nb))
            .then_with(|| {
                if *ka == "rule" {
                    core::cmp::Ordering::Equal
                } else {
                    a.cmp(b)
                }
            })
    });
    lines.join("\n")
}
