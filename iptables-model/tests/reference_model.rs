//! Differential test against the project's independent Python model of kube-proxy
//! (`tests/reference/kube_proxy.py`, written from kube-proxy's source, not from this crate) on
//! random clusters. Fails when the model or `python3` is missing. The model follows
//! kube-proxy's code, where a port that is reachable from outside always uses cluster endpoints
//! even with iTP=Local; the clusters here keep iTP=Local to ports reachable only inside.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use iptables_model::kube::{SyncRequest, canonical_order, generate};
use serde_json::{Value, json};

/// The reference model, run as `python3 kube_proxy.py --jsonl`: one JSON spec per input line,
/// one JSON string (the canonical restore text) per output line.
const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/kube_proxy.py");

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn random_spec(rng: &mut Rng) -> Value {
    let mut services = Vec::new();
    let mut slices = Vec::new();
    for i in 0..1 + rng.next(4) {
        let kind = ["ClusterIP", "NodePort", "LoadBalancer"][rng.next(3) as usize];
        let protocol = ["TCP", "UDP", "SCTP"][rng.next(3) as usize];
        let external = kind != "ClusterIP" || rng.next(2) == 0;
        let mut svc = json!({
            "namespace": format!("ns{i}"), "name": format!("svc{i}"), "type": kind, "clusterIP": format!("172.30.0.{}", 10 + i),
            "ports": [{"name": if rng.next(3) == 0 { "" } else { "p" }, "port": 80, "protocol": protocol, "nodePort": 30000 + i}],
            "externalTrafficPolicy": if rng.next(2) == 0 { "Local" } else { "Cluster" },
            "internalTrafficPolicy": if !external && rng.next(2) == 0 { "Local" } else { "Cluster" },
            "healthCheckNodePort": 31000 + i,
        });
        if external && kind == "ClusterIP" {
            svc["externalIPs"] = json!([format!("192.168.99.{}", 20 + i)]);
        }
        if kind == "LoadBalancer" {
            svc["loadBalancerIPs"] = json!([format!("5.6.7.{i}")]);
            if rng.next(2) == 0 {
                svc["loadBalancerSourceRanges"] = json!(["203.0.113.0/25", " 192.168.0.0/24"]);
            }
        }
        if rng.next(3) == 0 {
            svc["sessionAffinity"] = json!("ClientIP");
        }
        let endpoints: Vec<Value> = (0..rng.next(5))
            .map(|e| {
                let mut ep = json!({"addresses": [format!("10.180.{i}.{}", rng.next(4) + e * 10)]});
                if rng.next(2) == 0 {
                    ep["nodeName"] = json!("test-hostname");
                }
                if rng.next(3) == 0 {
                    ep["conditions"] =
                        json!({"ready": false, "serving": rng.next(2) == 0, "terminating": true});
                }
                ep
            })
            .collect();
        let port_name = svc["ports"][0]["name"].clone();
        slices.push(json!({"namespace": format!("ns{i}"), "service": format!("svc{i}"),
            "ports": [{"name": port_name, "port": 8080, "protocol": protocol}], "endpoints": endpoints}));
        services.push(svc);
    }
    let options = json!({"masqueradeAll": rng.next(4) == 0, "randomFully": rng.next(2) == 0, "nfacct": rng.next(2) == 0,
        "podCIDR": if rng.next(4) == 0 { Value::Null } else { json!("10.0.0.0/8") }});
    json!({"options": options, "services": services, "endpointSlices": slices})
}

#[test]
fn generation_matches_the_reference_model_on_random_clusters() {
    assert!(
        std::path::Path::new(MODEL).is_file(),
        "the reference model is missing at {MODEL}"
    );
    let mut child = Command::new("python3")
        .args([MODEL, "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3 (needed for the reference model): {e}"));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let specs: Vec<Value> = (0..300).map(|_| random_spec(&mut rng)).collect();
    let mut input = String::new();
    for spec in &specs {
        input.push_str(&spec.to_string());
        input.push('\n');
    }
    // Feed stdin from another thread: the model answers line by line and would fill stdout's pipe.
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "the reference model failed");
    let expected: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(expected.len(), specs.len());
    for (spec, expected) in specs.iter().zip(&expected) {
        let options = common::options(&[&spec["options"]]);
        let (services, slices) = common::inputs(spec);
        let ours = generate(
            &options,
            &services,
            &slices,
            SyncRequest {
                existing_chains: &BTreeSet::new(),
                changed: None,
            },
        );
        common::assert_text_eq(
            &spec.to_string(),
            &canonical_order(&ours.restore().unwrap()).to_string(),
            expected,
        );
    }
}
