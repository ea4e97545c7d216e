//! Fuzz targets for the `iptables-model` crate.

use std::net::{IpAddr, Ipv4Addr};

use iptables_model::codec::Style;
use iptables_model::eval::{Host, Packet, Path, evaluate_with_budget, trace_kube_test};
use iptables_model::kube::canonical_order;
use iptables_model::normalize::normalize_rule;
use iptables_model::{Command, Line, Ruleset, parse};

use crate::Target;

/// The `iptables-model` targets.
pub const TARGETS: &[Target] = &[
    Target {
        name: "iptables_parse",
        run: iptables_parse,
    },
    Target {
        name: "iptables_trace",
        run: iptables_trace,
    },
];

/// The save-format parser: any text either fails with an error or round-trips through both
/// writing styles (unless it holds a value with a control character, which the writer refuses
/// by name); every appended rule, normalised, is written as text that reads back as the same
/// normalised rule (iptables-save's output restores to itself); sorting and restoring what
/// parsed never panic.
pub fn iptables_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = parse(text) else { return };
    for style in [Style::Restore, Style::Save] {
        let written = match file.to_text(style) {
            Ok(written) => written,
            Err(refused) => {
                assert!(
                    refused.value.chars().any(char::is_control),
                    "refused a value without a control character: {refused}"
                );
                continue;
            }
        };
        let again = parse(&written)
            .unwrap_or_else(|e| panic!("re-parsing our own output failed: {e}\n{written}"));
        assert_eq!(again, file, "round trip changed the model:\n{written}");
    }
    for line in file.tables.iter().flat_map(|t| &t.lines) {
        if let Line::Command(Command::Append { rule, .. }) = line {
            let saved = normalize_rule(rule, false);
            let Ok(written) = saved.to_text(Style::Save) else {
                continue;
            };
            let again = iptables_model::parse_rule(&written)
                .unwrap_or_else(|e| panic!("normalised rule does not parse: {e}\n{written}"));
            // The rule's text carries no counters (they prefix the line).
            assert_eq!(
                (&again.specs, &again.target),
                (&saved.specs, &saved.target),
                "normalised rule reads back differently: {written}"
            );
        }
    }
    let _ = canonical_order(&file).to_text(Style::Restore);
    let mut ruleset = Ruleset::new();
    if ruleset.restore(&file, true).is_ok() {
        let _ = ruleset.save(false).to_text(Style::Restore);
    }
}

/// The evaluators on parsed rulesets: the first 9 bytes pick the packet (source and destination
/// addresses from a small pool, port, path), the rest is restore text. No panic, no hang
/// (jump loops are refused by the restore checks or stopped by the depth limit and budget).
pub fn iptables_trace(data: &[u8]) {
    let Some((head, rest)) = data.split_first_chunk::<9>() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(file) = parse(text) else { return };
    let pool = |b: u8| -> IpAddr {
        match b % 4 {
            0 => IpAddr::V4(Ipv4Addr::new(10, 0, 0, b)),
            1 => IpAddr::V4(Ipv4Addr::new(192, 168, 0, 2)),
            2 => IpAddr::V4(Ipv4Addr::new(172, 30, 0, b)),
            _ => IpAddr::V6(std::net::Ipv6Addr::new(
                0xfd00,
                0,
                0,
                0,
                0,
                0,
                0,
                u16::from(b),
            )),
        }
    };
    let (source, destination) = (pool(head[0]), pool(head[1]));
    let port = u16::from_be_bytes([head[2], head[3]]);
    let protocol = ["tcp", "udp", "sctp", "icmp"][usize::from(head[4] % 4)];
    let _ = trace_kube_test(
        &file,
        &[IpAddr::V4(Ipv4Addr::new(192, 168, 0, 2))],
        source,
        protocol,
        destination,
        port,
    );
    let mut ruleset = Ruleset::new();
    if ruleset.restore(&file, head[5] % 2 == 0).is_err() {
        return;
    }
    let host = Host {
        local_addresses: vec![IpAddr::V4(Ipv4Addr::new(192, 168, 0, 2))],
    };
    let mut packet = Packet::tcp(source, destination, port);
    packet.protocol = protocol.into();
    packet.mark = u32::from(head[6]);
    let path = if head[7] % 2 == 0 {
        Path::Incoming
    } else {
        Path::Local
    };
    if let Ok(outcomes) = evaluate_with_budget(&ruleset, &host, &packet, path, 2_000) {
        for o in &outcomes {
            assert!(
                o.exact >= iptables_model::probability::BigRational::from_integer(0.into()),
                "negative probability"
            );
        }
    }
}
