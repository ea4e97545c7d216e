//! What the binary takes from its own Node, through manifests and the rules of `--dry-run`:
//! the zone topology hints are matched against (its `topology.kubernetes.io/zone` label), and
//! the pod CIDRs of `--detect-local-mode NodeCIDR`. The source keeps the Node of
//! `--hostname-override` only; other Nodes are ignored. No root needed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata: {namespace: demo, name: web}
spec:
  clusterIP: 10.96.0.10
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  namespace: demo
  name: web-abc12
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- {addresses: [10.244.1.5], zone: zone-a, hints: {forZones: [{name: zone-a}]}}
- {addresses: [10.244.2.7], zone: zone-b, hints: {forZones: [{name: zone-b}]}}
";

fn node(name: &str, zone: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: \
         {{topology.kubernetes.io/zone: {zone}}}\n"
    )
}

/// The rules of a dry run of node `node_name` on the manifests in `dir`.
fn dry_run(dir: &Path, node_name: &str) -> String {
    dry_run_with(dir, node_name, &[])
}

/// [`dry_run`] with more flags.
fn dry_run_with(dir: &Path, node_name: &str, flags: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_service-proxy"))
        .args(["--manifests", &dir.display().to_string(), "--dry-run"])
        .args(["--hostname-override", node_name, "--node-ip", "192.168.0.2"])
        .args(flags)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn zone_hints_choose_the_endpoints_of_this_nodes_zone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), SERVICE).unwrap();
    std::fs::write(dir.path().join("node-a.yaml"), node("node-a", "zone-a")).unwrap();
    std::fs::write(dir.path().join("node-b.yaml"), node("node-b", "zone-b")).unwrap();

    let in_a = dry_run(dir.path(), "node-a");
    assert!(in_a.contains("--to-destination 10.244.1.5:8080"), "{in_a}");
    assert!(!in_a.contains("10.244.2.7"), "{in_a}");
    let in_b = dry_run(dir.path(), "node-b");
    assert!(in_b.contains("--to-destination 10.244.2.7:8080"), "{in_b}");
    assert!(!in_b.contains("10.244.1.5"), "{in_b}");

    // A node of a zone no endpoint is hinted for, and a node without its Node: every endpoint
    // (kube-proxy's fallback).
    std::fs::write(dir.path().join("node-c.yaml"), node("node-c", "zone-c")).unwrap();
    for name in ["node-c", "node-d"] {
        let rules = dry_run(dir.path(), name);
        assert!(rules.contains("10.244.1.5:8080"), "{rules}");
        assert!(rules.contains("10.244.2.7:8080"), "{rules}");
    }
}

#[test]
fn node_cidr_mode_tells_pod_traffic_by_the_nodes_pod_cidrs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("web.yaml"), SERVICE).unwrap();
    let with_cidr = node("node-a", "zone-a") + "spec: {podCIDRs: [10.244.1.0/24]}\n";
    std::fs::write(dir.path().join("node-a.yaml"), with_cidr).unwrap();
    let flags = [
        "--detect-local-mode",
        "NodeCIDR",
        "--cluster-cidr",
        "10.0.0.0/8",
    ];
    let rules = dry_run_with(dir.path(), "node-a", &flags);
    assert!(
        rules.contains("! -s 10.244.1.0/24 -j KUBE-MARK-MASQ"),
        "{rules}"
    );
    assert!(
        !rules.contains("10.0.0.0/8"),
        "the Node's CIDR, not --cluster-cidr: {rules}"
    );
    // The interface detectors, for comparison.
    let bridge = [
        "--detect-local-mode",
        "BridgeInterface",
        "--pod-bridge-interface",
        "cbr0",
    ];
    let rules = dry_run_with(dir.path(), "node-a", &bridge);
    assert!(rules.contains("! -i cbr0 -j KUBE-MARK-MASQ"), "{rules}");
}
