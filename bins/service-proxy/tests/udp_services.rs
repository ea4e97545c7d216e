//! UDP Services end to end, with real UDP traffic, in network namespaces this test creates: a
//! node namespace running `service-proxy` (iptables-legacy) and a pod namespace, joined by a
//! veth pair, where each endpoint address answers UDP queries with its own address.
//!
//! A client's flow is one conntrack entry for as long as it keeps its source port: when the
//! endpoint it was DNATed to leaves the Service, its next query reaches a remaining endpoint;
//! when the last one leaves, its next query is rejected (ICMP port unreachable); with
//! `conntrack` missing the rules still change, a warning is logged and counted, and the flows
//! are deleted at a later sync once `conntrack` is back. A NodePort answers on 127.0.0.1 in
//! the node namespace (`route_localnet`, set at start-up). Skipped, with a message, without
//! root, `ip netns`, python3, iptables-legacy or conntrack (scripts/test runs it as root with
//! all of them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use support::{Process, add_address, metric, metrics_in, poll, read_log, run};

const NODE_VETH_IP: &str = "10.181.0.254";
const NODE_IP: &str = "192.168.2.2";
/// The client's address and port: every query of a test is the same flow.
const CLIENT_IP: &str = "192.168.3.10";
const CLIENT_PORT: &str = "40053";
const ENDPOINTS: [&str; 3] = ["10.181.0.1", "10.181.0.2", "10.181.0.3"];
const CLUSTER_IP: &str = "172.31.0.53";
const SERVICE_RANGE: &str = "172.31.0.0/16";
const NODE_PORT: &str = "30053";

/// `server.py IP...`: answers each UDP datagram on port 5353 of each IP with that IP.
const SERVER: &str = r#"
import socket, sys, threading
def serve(ip):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, 5353))
    while True:
        _, peer = s.recvfrom(100)
        s.sendto(ip.encode(), peer)
for ip in sys.argv[1:]:
    threading.Thread(target=serve, args=(ip,), daemon=True).start()
threading.Event().wait()
"#;

/// `client.py SRC SPORT DST DPORT`: one query from SRC:SPORT; prints the answer, `refused`
/// (ICMP port unreachable) or `timeout`.
const CLIENT: &str = r#"
import socket, sys
src, sport, dst, dport = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((src, sport))
s.connect((dst, dport))
s.settimeout(2)
try:
    try:
        s.send(b"query")
    except PermissionError:
        pass  # a REJECT in OUTPUT drops the datagram; its ICMP error comes next
    print(s.recv(100).decode())
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")
"#;

/// The two namespaces and the UDP listeners, all removed on drop.
struct Topology {
    node: String,
    pods: String,
    server: Option<Process>,
}

impl Drop for Topology {
    fn drop(&mut self) {
        self.server.take();
        for ns in [&self.node, &self.pods] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

impl Topology {
    fn create(tag: &str) -> Result<Self, String> {
        let id = std::process::id();
        let mut topology = Self {
            node: format!("sp-udp-node-{tag}-{id}"),
            pods: format!("sp-udp-pods-{tag}-{id}"),
            server: None,
        };
        run(&["ip", "netns", "add", &topology.node])?;
        run(&["ip", "netns", "add", &topology.pods])?;
        let (n, p) = (topology.node.as_str(), topology.pods.as_str());
        let veth = format!("u{tag}{}", id % 100_000);
        let peer = format!("{veth}p");
        run(&[
            "ip", "link", "add", &veth, "netns", n, "type", "veth", "peer", "name", &peer, "netns",
            p,
        ])?;
        add_address(n, &veth, &format!("{NODE_VETH_IP}/24"))?;
        add_address(n, &veth, &format!("{NODE_IP}/32"))?;
        add_address(n, &veth, &format!("{CLIENT_IP}/32"))?;
        for ip in ENDPOINTS {
            add_address(p, &peer, &format!("{ip}/24"))?;
        }
        for (ns, link) in [(n, veth.as_str()), (p, peer.as_str())] {
            run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
            run(&["ip", "-n", ns, "link", "set", link, "up"])?;
        }
        run(&[
            "ip",
            "-n",
            p,
            "route",
            "add",
            "default",
            "via",
            NODE_VETH_IP,
        ])?;
        run(&[
            "ip",
            "-n",
            n,
            "route",
            "add",
            SERVICE_RANGE,
            "dev",
            &veth,
            "src",
            NODE_IP,
        ])?;
        let mut server = Command::new("ip");
        server
            .args(["netns", "exec", p, "python3", "-c", SERVER])
            .args(ENDPOINTS);
        topology.server = Some(Process(server.spawn().map_err(|e| e.to_string())?));
        Ok(topology)
    }

    /// One query of the client's flow to `ip:port`, from the node namespace.
    fn query(&self, ip: &str, port: &str) -> String {
        self.query_from(CLIENT_IP, ip, port)
    }

    fn query_from(&self, source: &str, ip: &str, port: &str) -> String {
        run(&[
            "ip",
            "netns",
            "exec",
            &self.node,
            "python3",
            "-c",
            CLIENT,
            source,
            CLIENT_PORT,
            ip,
            port,
        ])
        .unwrap()
        .trim()
        .to_owned()
    }

    /// The node namespace's sysctl `name`.
    fn sysctl(&self, name: &str) -> String {
        run(&["ip", "netns", "exec", &self.node, "sysctl", "-n", name])
            .unwrap()
            .trim()
            .to_owned()
    }
}

/// Why the test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<String> {
    if !run(&["id", "-u"]).is_ok_and(|u| u.trim() == "0") {
        return Some("root".into());
    }
    ["ip", "python3", "iptables-legacy-restore", "conntrack"]
        .into_iter()
        .find(|program| run(&[program, "-V"]).is_err() && run(&[program, "--version"]).is_err())
        .map(String::from)
}

fn set_up(tag: &str) -> Option<Topology> {
    if let Some(missing) = missing_prerequisite() {
        println!("skipped: {missing}");
        return None;
    }
    match Topology::create(tag) {
        Ok(topology) => Some(topology),
        Err(e) => {
            println!("skipped: network namespaces ({e})");
            None
        }
    }
}

/// Writes the UDP Service `dns` (ClusterIP 53, NodePort 30053) with `endpoints` (port 5353).
fn write_manifests(dir: &Path, endpoints: &[&str]) {
    let endpoints: String = endpoints
        .iter()
        .map(|ip| format!("- {{addresses: ['{ip}']}}\n"))
        .collect();
    let text = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{namespace: demo, name: dns}}\nspec:\n  type: NodePort\n  clusterIP: {CLUSTER_IP}\n  ports: [{{name: dns, port: 53, protocol: UDP, nodePort: {NODE_PORT}}}]\n---\n\
         apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  namespace: demo\n  name: dns-1\n  labels: {{kubernetes.io/service-name: dns}}\naddressType: IPv4\nports: [{{name: dns, port: 5353, protocol: UDP}}]\nendpoints: {}\n{endpoints}",
        if endpoints.is_empty() { "[]" } else { "" }
    );
    // Written to a temporary name and renamed: the proxy never reads half a file.
    let tmp = dir.join(".dns.yaml.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, dir.join("dns.yaml")).unwrap();
}

/// A `service-proxy` running in the node namespace (killed on drop), its manifest folder and
/// its log.
struct Running {
    _process: Process,
    dir: tempfile::TempDir,
    log: tempfile::NamedTempFile,
}

/// Starts `service-proxy` in the node namespace with every endpoint, `PATH` set to `path`
/// when given.
fn start_proxy(topology: &Topology, path: Option<&str>) -> Running {
    let dir = tempfile::tempdir().unwrap();
    write_manifests(dir.path(), &ENDPOINTS);
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", &topology.node])
        .arg(env!("CARGO_BIN_EXE_service-proxy"))
        .args(["--manifests", dir.path().to_str().unwrap()])
        .args(["--hostname-override", "node-a", "--node-ip", NODE_IP])
        .args(["--iptables-variant", "legacy"])
        .args(["--iptables-min-sync-period", "100ms"])
        .args(["--iptables-sync-period", "1s"])
        .env("RUST_LOG", "info")
        .stderr(log.reopen().unwrap());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let running = Running {
        _process: Process(command.spawn().unwrap()),
        dir,
        log,
    };
    poll(
        "the first sync",
        || nat(topology),
        |nat| nat.contains("demo/dns:dns cluster IP"),
    );
    running
}

const DELETED: &str = "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\"}";
const FAILURES: &str = "kubeproxy_conntrack_reconciler_failures_total{ip_family=\"IPv4\"}";

/// The value of `name` in the proxy's metrics (0 when absent).
fn counter(topology: &Topology, name: &str) -> f64 {
    metric(&metrics_in(&topology.node), name).unwrap_or(0.0)
}

/// Waits until the counter `name` is above `than`.
fn wait_counter_above(topology: &Topology, name: &str, than: f64) {
    poll(
        &format!("{name} > {than}"),
        || metrics_in(&topology.node),
        |text| metric(text, name).is_some_and(|n| n > than),
    );
}

/// The client's flow reaches an endpoint (the listeners start asynchronously): which one.
fn first_answer(topology: &Topology) -> String {
    poll(
        "an endpoint to answer",
        || topology.query(CLUSTER_IP, "53"),
        |seen| ENDPOINTS.contains(&seen),
    );
    topology.query(CLUSTER_IP, "53")
}

/// The node's nat table.
fn nat(topology: &Topology) -> String {
    run(&[
        "ip",
        "netns",
        "exec",
        &topology.node,
        "iptables-legacy-save",
        "-t",
        "nat",
    ])
    .unwrap_or_default()
}

/// Whether `nat` DNATs to `endpoint`.
fn dnats_to(nat: &str, endpoint: &str) -> bool {
    nat.lines()
        .any(|l| l.contains("--to-destination") && l.contains(&format!("{endpoint}:")))
}

#[test]
fn an_established_udp_flow_leaves_a_removed_endpoint_and_is_rejected_once_none_is_left() {
    let Some(topology) = set_up("e") else {
        return;
    };
    let proxy = start_proxy(&topology, None);
    let first = first_answer(&topology);
    // The same flow keeps its endpoint.
    assert_eq!(topology.query(CLUSTER_IP, "53"), first);

    // Its endpoint leaves the Service (the listener stays up: only the flow can send the query
    // there). Once the sync has reconciled, the next query of the flow reaches another one.
    let deleted = counter(&topology, DELETED);
    let remaining: Vec<&str> = ENDPOINTS.into_iter().filter(|e| *e != first).collect();
    write_manifests(proxy.dir.path(), &remaining);
    wait_counter_above(&topology, DELETED, deleted);
    let second = topology.query(CLUSTER_IP, "53");
    assert!(remaining.contains(&second.as_str()), "{second}");

    // No endpoint left: the flow's next query meets the REJECT rule.
    let deleted = counter(&topology, DELETED);
    write_manifests(proxy.dir.path(), &[]);
    wait_counter_above(&topology, DELETED, deleted);
    assert_eq!(topology.query(CLUSTER_IP, "53"), "refused");

    // Endpoints again: the flow, rejected meanwhile, reaches one.
    write_manifests(proxy.dir.path(), &ENDPOINTS);
    poll(
        "the flow to reach an endpoint again",
        || topology.query(CLUSTER_IP, "53"),
        |seen| ENDPOINTS.contains(&seen),
    );
    let log = read_log(&proxy.log);
    assert!(!log.contains("not deleted"), "{log}");
    assert_eq!(counter(&topology, FAILURES), 0.0, "{log}");
}

/// The `PATH` of a proxy that finds `ip` (which starts it) and iptables-legacy but not
/// conntrack until `bin/conntrack` is linked to the real one.
fn path_without_conntrack(bin: &Path) -> String {
    for program in [
        "ip",
        "iptables-legacy",
        "iptables-legacy-save",
        "iptables-legacy-restore",
    ] {
        let real = run(&["sh", "-c", &format!("command -v {program}")]).unwrap();
        symlink(real.trim(), bin.join(program)).unwrap();
    }
    bin.display().to_string()
}

#[test]
fn without_conntrack_the_rules_change_a_warning_is_counted_and_a_later_sync_retries() {
    let Some(topology) = set_up("m") else {
        return;
    };
    let bin = tempfile::tempdir().unwrap();
    let path = path_without_conntrack(bin.path());
    let proxy = start_proxy(&topology, Some(&path));
    let first = first_answer(&topology);

    // The endpoint leaves: the rules follow, the flow cannot be deleted.
    let remaining: Vec<&str> = ENDPOINTS.into_iter().filter(|e| *e != first).collect();
    write_manifests(proxy.dir.path(), &remaining);
    poll(
        "the rules to drop the endpoint",
        || nat(&topology),
        |nat| !dnats_to(nat, &first),
    );
    wait_counter_above(&topology, FAILURES, 0.0);
    let log = read_log(&proxy.log);
    assert!(log.contains("conntrack program is not installed"), "{log}");
    assert_eq!(
        log.matches("stale UDP conntrack flows not deleted").count(),
        1,
        "{log}"
    );
    // The flow still goes where it went.
    assert_eq!(topology.query(CLUSTER_IP, "53"), first);

    // conntrack is back: a periodic sync retries, and the flow moves.
    let real = run(&["sh", "-c", "command -v conntrack"]).unwrap();
    symlink(real.trim(), bin.path().join("conntrack")).unwrap();
    wait_counter_above(&topology, DELETED, 0.0);
    let moved = topology.query(CLUSTER_IP, "53");
    assert!(remaining.contains(&moved.as_str()), "{moved}");
}

#[test]
fn a_node_port_answers_on_localhost_in_the_node_namespace() {
    let Some(topology) = set_up("l") else {
        return;
    };
    // A new namespace starts with route_localnet off.
    assert_eq!(topology.sysctl("net.ipv4.conf.all.route_localnet"), "0");
    let proxy = start_proxy(&topology, None);
    assert_eq!(topology.sysctl("net.ipv4.conf.all.route_localnet"), "1");
    poll(
        "the NodePort to answer on 127.0.0.1",
        || topology.query_from("127.0.0.1", "127.0.0.1", NODE_PORT),
        |seen| ENDPOINTS.contains(&seen),
    );
    let log = read_log(&proxy.log);
    assert!(log.contains("sysctl changed"), "{log}");
}
