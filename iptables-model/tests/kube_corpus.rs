//! kube-proxy generation and tracing against every vector of the iptables corpus
//! (`testdata/iptables/`, transcribed from kube-proxy's `proxier_test.go`).
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::collections::BTreeSet;
use std::net::IpAddr;

use iptables_model::codec::{ParseOptions, parse_with};
use iptables_model::eval::trace_kube_test;
use iptables_model::kube::{
    EndpointSlice, Proxier, ProxyOptions, Service, SyncRequest, canonical_order, generate,
};
use iptables_model::probability::compute_probability;
use iptables_model::{OwnedRestoreFile, RestoreFile, Table};
use serde_json::Value;

fn full(
    options: &ProxyOptions,
    services: &[Service],
    slices: &[EndpointSlice],
) -> OwnedRestoreFile {
    generate(
        options,
        services,
        slices,
        SyncRequest {
            existing_chains: &BTreeSet::new(),
            changed: None,
        },
    )
    .restore()
    .unwrap()
}

fn local_ips() -> Vec<IpAddr> {
    common::interface_addresses()
}

/// Checks every flow of `flows` (with `overrides` by name) against `file`; returns the count.
fn check_flows(
    what: &str,
    file: &RestoreFile,
    flows: &[Value],
    overrides: Option<&Value>,
) -> usize {
    let locals = local_ips();
    for flow in flows {
        let name = flow["name"].as_str().unwrap();
        let over = overrides.and_then(|o| o.get(name));
        let expected_output = over
            .and_then(|o| o.get("output"))
            .unwrap_or(&flow["output"])
            .as_str()
            .unwrap();
        let expected_masq = over
            .and_then(|o| o.get("masq"))
            .or(flow.get("masq"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let protocol = flow
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("tcp")
            .to_lowercase();
        let got = trace_kube_test(
            file,
            &locals,
            flow["sourceIP"].as_str().unwrap().parse().unwrap(),
            &protocol,
            flow["destIP"].as_str().unwrap().parse().unwrap(),
            flow["destPort"].as_u64().unwrap() as u16,
        )
        .unwrap();
        assert_eq!(
            (got.output.as_str(), got.masquerade),
            (expected_output, expected_masq),
            "{what}: flow {name:?}"
        );
    }
    flows.len()
}

fn check_chains(what: &str, file: &RestoreFile, checks: Option<&Value>) -> usize {
    let Some(checks) = checks.and_then(Value::as_array) else {
        return 0;
    };
    for check in checks {
        let table = Table::from_name(check["table"].as_str().unwrap()).unwrap();
        let chain = check["chain"].as_str().unwrap();
        let got: Vec<String> = file
            .table(table)
            .map(|t| {
                t.appended(chain)
                    .map(|r| format!("-A {chain} {r}"))
                    .collect()
            })
            .unwrap_or_default();
        let expected: Vec<&str> = check["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert_eq!(got, expected, "{what}: chain {chain}");
    }
    checks.len()
}

fn flows_of(v: &Value) -> Vec<Value> {
    v.get("flows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[test]
fn full_sync_restore_texts_equal_the_expected_files() {
    // TestOverallIPTablesRules (01) and TestBadIPs (03).
    for name in ["01_overall_rules", "03_bad_ips"] {
        let v = common::vector(&format!("{name}.json"));
        let (services, slices) = common::inputs(&v);
        let file = full(&common::options(&[&v["options"]]), &services, &slices);
        let expected = common::read(v["expected_file"].as_str().unwrap());
        common::assert_text_eq(name, &canonical_order(&file).to_string(), &expected);
    }
}

#[test]
fn partial_sync_sequence_equals_every_step() {
    // TestSyncProxyRulesRepeated (02): KEP-3453 partial syncs, -X of stale chains, the
    // forced full sync after a failed restore.
    let v = common::vector("02_sync_repeated.json");
    let mut proxier = Proxier::new(common::options(&[&v["options"]]));
    let mut services: Vec<Service> = Vec::new();
    let mut slices: Vec<EndpointSlice> = Vec::new();
    let mut checked = 0;
    for step in v["steps"].as_array().unwrap() {
        for op in step["ops"].as_array().unwrap() {
            match op["op"].as_str().unwrap() {
                "addService" => services.push(common::service(&op["service"])),
                "deleteService" => {
                    services.retain(|s| !(s.namespace == op["namespace"] && s.name == op["name"]))
                }
                "setSlice" => {
                    let slice = common::slice(&op["slice"]);
                    slices.retain(|s| {
                        !(s.namespace == slice.namespace && s.service == slice.service)
                    });
                    slices.push(slice);
                }
                other => panic!("op {other}"),
            }
        }
        let restore = proxier.sync(&services, &slices).restore().unwrap();
        if step.get("restore_fails").and_then(Value::as_bool) == Some(true) {
            proxier.restore_failed();
            continue;
        }
        proxier.restored();
        let name = step["name"].as_str().unwrap();
        let expected = common::read(&format!("02_sync_repeated.step{name}.expected.txt"));
        common::assert_text_eq(name, &canonical_order(&restore).to_string(), &expected);
        checked += 1;
    }
    assert_eq!(checked, 9);
}

#[test]
fn every_flow_and_chain_check_holds() {
    let mut flows = 0;
    let mut chains = 0;
    for path in testdata::files("iptables", "json") {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let v = common::vector(&name);
        if let Some(rules) = v.get("rules_file").and_then(Value::as_str) {
            let text = common::read(rules);
            let file = parse_with(&text, ParseOptions::kube_proxy_tests()).unwrap();
            flows += check_flows(&name, &file, &flows_of(&v), None);
        } else if let Some(cases) = v.get("cases").and_then(Value::as_array) {
            for case in cases {
                let what = format!("{name} / {}", case["name"]);
                let options =
                    common::options(&[&v["options"], case.get("options").unwrap_or(&Value::Null)]);
                let (services, slices) = common::inputs(case);
                let file = full(&options, &services, &slices);
                flows += check_flows(&what, &file, &flows_of(case), None);
                chains += check_chains(&what, &file, case.get("chain_checks"));
            }
        } else if v.get("steps").is_none() {
            let (services, slices) = common::inputs(&v);
            let configs = v
                .get("configs")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_else(|| vec![Value::Null]);
            for config in &configs {
                let what = format!("{name} / {}", config.get("name").unwrap_or(&Value::Null));
                let options = common::options(&[
                    &v["options"],
                    config.get("options").unwrap_or(&Value::Null),
                ]);
                let file = full(&options, &services, &slices);
                flows += check_flows(&what, &file, &flows_of(&v), config.get("overrides"));
                chains += check_chains(&what, &file, config.get("chain_checks"));
            }
        }
    }
    // The corpus README counts 231 flow assertions (13's 30 flows run under 4 configurations)
    // and 12 chain checks.
    assert!(flows >= 231, "only {flows} flows checked");
    assert_eq!(chains, 12);
}

#[test]
fn compute_probability_strings_of_vector_15() {
    let v = common::vector("15_compute_probability.json");
    for (n, expected) in v["probabilities"].as_object().unwrap() {
        assert_eq!(
            compute_probability(n.parse().unwrap()),
            expected.as_str().unwrap(),
            "n = {n}"
        );
    }
    // The parsed strings decrease strictly for n = 2 ..= 100000 (TestComputeProbability).
    let mut previous = f64::INFINITY;
    for n in 2..=100_000u64 {
        let p: f64 = compute_probability(n).parse().unwrap();
        assert!(p < previous, "n = {n}");
        previous = p;
    }
}

#[test]
fn large_cluster_mode_drops_the_per_endpoint_comments_spec_3_step_11() {
    let v = common::vector("01_overall_rules.json");
    let mut options = common::options(&[&v["options"]]);
    options.large_cluster_endpoints = 0;
    let (services, slices) = common::inputs(&v);
    let nat = full(&options, &services, &slices)
        .table(Table::Nat)
        .unwrap()
        .clone();
    for chain in nat.chains().map(|c| c.name.clone()) {
        for rule in nat.appended(&chain) {
            let per_endpoint = chain.starts_with("KUBE-SEP-")
                || rule
                    .target
                    .as_ref()
                    .and_then(|t| t.chain())
                    .is_some_and(|t| t.starts_with("KUBE-SEP-"));
            if per_endpoint {
                assert_eq!(rule.comment_text(), None, "-A {chain} {rule}");
            }
        }
    }
    let text = nat.to_string();
    assert!(
        text.contains("-A KUBE-SEP-SXIVWICOYRO3J4NJ -s 10.180.0.1 -j KUBE-MARK-MASQ"),
        "{text}"
    );
    assert!(
        text.contains(
            "-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment \"ns1/svc1:p80 cluster IP\""
        ),
        "{text}"
    );
}
