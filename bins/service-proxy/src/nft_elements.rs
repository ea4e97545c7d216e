//! The elements of a set or map as `nft -j list set|map` prints them, read back into
//! nftables-model's keys and verdicts: a new proxier (a restart) is told what an earlier run
//! left, and its first sync writes only what differs (kube-proxy's `readOrReset`).

use std::net::IpAddr;

use iptables_model::kube::Protocol;
use nftables_model::{Atom, Key, Name, Verdict};
use serde_json::Value;

/// The elements of the set or map in `json` (the output of `nft -j list set|map ...`): each
/// key with its verdict (`None` in a set). Comments are left out (a sync does not compare
/// them).
///
/// # Errors
///
/// The text is not nft's JSON of one set or map, or an element is not one kube-proxy writes
/// (a key part other than an address, a protocol or a port; more than three parts; a value
/// other than a verdict).
pub fn elements(json: &str) -> Result<Vec<(Key, Option<Verdict>)>, String> {
    let doc: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let container = doc
        .get("nftables")
        .and_then(Value::as_array)
        .and_then(|items| {
            items
                .iter()
                .find_map(|item| item.get("map").or_else(|| item.get("set")))
        })
        .ok_or("no set or map in nft's listing")?;
    // An empty set or map has no `elem`.
    let Some(elems) = container.get("elem") else {
        return Ok(Vec::new());
    };
    elems
        .as_array()
        .ok_or("`elem` is not a list")?
        .iter()
        .map(element)
        .collect()
}

/// One element: a map's `[KEY, VERDICT]`, or a set's `KEY`.
fn element(value: &Value) -> Result<(Key, Option<Verdict>), String> {
    let (key, value) = match value.as_array().map(Vec::as_slice) {
        Some([key, value]) => (key, Some(verdict(value)?)),
        _ => (value, None),
    };
    // A key with a comment comes as `{"elem": {"val": KEY, "comment": "..."}}`.
    let key = key.get("elem").and_then(|e| e.get("val")).unwrap_or(key);
    let atoms = match key.get("concat") {
        Some(parts) => parts
            .as_array()
            .ok_or("`concat` is not a list")?
            .iter()
            .map(atom)
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![atom(key)?],
    };
    Key::new(&atoms)
        .map(|key| (key, value))
        .ok_or_else(|| format!("{key} has more than three parts"))
}

fn atom(value: &Value) -> Result<Atom, String> {
    let atom = match value {
        Value::Number(n) => n
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .map(Atom::Port),
        Value::String(s) => match s.as_str() {
            "tcp" => Some(Atom::Protocol(Protocol::Tcp)),
            "udp" => Some(Atom::Protocol(Protocol::Udp)),
            "sctp" => Some(Atom::Protocol(Protocol::Sctp)),
            other => other.parse::<IpAddr>().ok().map(Atom::Ip),
        },
        _ => None,
    };
    atom.ok_or_else(|| format!("{value} is not an address, a protocol or a port"))
}

fn verdict(value: &Value) -> Result<Verdict, String> {
    let target = |kind: &str| {
        value
            .get(kind)
            .and_then(|v| v.get("target"))
            .and_then(Value::as_str)
            .map(|t| Name::new(t).map_err(|e| e.to_string()))
    };
    if let Some(chain) = target("goto") {
        return chain.map(Verdict::Goto);
    }
    if let Some(chain) = target("jump") {
        return chain.map(Verdict::Jump);
    }
    for (word, verdict) in [
        ("accept", Verdict::Accept),
        ("drop", Verdict::Drop),
        ("return", Verdict::Return),
    ] {
        if value.get(word).is_some() {
            return Ok(verdict);
        }
    }
    Err(format!("{value} is not a verdict"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nft 1.0.6's listing of a map kube-proxy fills (an element with a comment, a drop), and
    /// of its `cluster-ips` set.
    #[test]
    fn nfts_json_listing_reads_back_into_keys_and_verdicts() {
        let map = r#"{"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}, {"map": {"family": "ip", "name": "service-ips", "table": "kube-proxy", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 3, "comment": "x", "map": "verdict", "elem": [[{"concat": ["172.30.0.44", "udp", 53]}, {"drop": null}], [{"concat": ["172.30.0.41", "tcp", 80]}, {"goto": {"target": "service-ULMVA6XW-ns1/svc1/tcp/p80"}}], [{"elem": {"val": {"concat": ["172.30.0.43", "tcp", 80]}, "comment": "ns3/svc3:p80"}}, {"goto": {"target": "reject-chain"}}]]}}]}"#;
        let ip = |s: &str| Atom::Ip(s.parse().unwrap());
        let key = |a: &str, p: Protocol, port: u16| {
            Key::from([ip(a), Atom::Protocol(p), Atom::Port(port)])
        };
        let goto = |c: &str| Some(Verdict::Goto(Name::new(c).unwrap()));
        assert_eq!(
            elements(map).unwrap(),
            [
                (key("172.30.0.44", Protocol::Udp, 53), Some(Verdict::Drop)),
                (
                    key("172.30.0.41", Protocol::Tcp, 80),
                    goto("service-ULMVA6XW-ns1/svc1/tcp/p80")
                ),
                (key("172.30.0.43", Protocol::Tcp, 80), goto("reject-chain")),
            ]
        );
        let set = r#"{"nftables": [{"metainfo": {}}, {"set": {"family": "ip6", "name": "cluster-ips", "table": "kube-proxy", "type": "ipv6_addr", "elem": ["fd00::1"]}}]}"#;
        assert_eq!(elements(set).unwrap(), [(Key::from(ip("fd00::1")), None)]);
        let empty = r#"{"nftables": [{"map": {"name": "service-nodeports", "map": "verdict"}}]}"#;
        assert_eq!(elements(empty).unwrap(), []);
    }

    #[test]
    fn what_kube_proxy_does_not_write_is_refused() {
        for bad in [
            "not json",
            r#"{"nftables": []}"#,
            r#"{"nftables": [{"set": {"elem": [{"prefix": {"addr": "10.0.0.0", "len": 8}}]}}]}"#,
            r#"{"nftables": [{"map": {"elem": [["10.0.0.1", {"goto": {"target": "a b"}}]]}}]}"#,
            r#"{"nftables": [{"map": {"elem": [["10.0.0.1", {"counter": null}]]}}]}"#,
            r#"{"nftables": [{"set": {"elem": [{"concat": [1, 2, 3, 4]}]}}]}"#,
        ] {
            assert!(elements(bad).is_err(), "{bad}");
        }
    }
}
