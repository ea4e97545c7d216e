//! End to end in network namespaces this test creates (`docs/iptables.md` §9 topology B): a node
//! namespace running `service-proxy`, a pod namespace joined to it by a veth pair with real TCP
//! listeners that answer with their own address and the peer they see. Connections to a ClusterIP,
//! a NodePort and an ExternalIP reach the endpoints; the split over many source addresses passes a
//! chi-square test; ClientIP affinity pins each client; masquerading applies where kube-proxy
//! applies it; an endpoint change is applied by a partial sync; `--cleanup` leaves the tables as
//! they were. Both iptables backends. The same over IPv6 (`ip6tables`, with
//! `--nodeport-addresses`). A restore that fails (a wrapper first in `PATH`) leaves the previous
//! rules and is retried in full; a deleted canary chain brings a full resync. A Service whose
//! port name carries a rule (issue #28) and endpoint addresses the API server refuses reach no
//! table, and the valid Services keep working. kube-proxy's nftables mode (`--proxy-mode
//! nftables`, `nft` needed) in IPv4 and IPv6: the same traffic, `externalTrafficPolicy: Local`
//! from a third namespace, a partial sync that leaves a held connection alone, the switch
//! between modes and `--cleanup`. Skipped, with a
//! message, without root, `ip netns`, iptables or python3 (scripts/test runs it as root with all of
//! them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{Process, add_address, metric, metrics_in, poll, read_log, run};

/// One family's addresses: the node's, the endpoints', the Services' and the clients'.
struct Net {
    /// `--ip-families`.
    family: &'static str,
    /// `iptables` or `ip6tables`.
    tables: &'static str,
    /// The node's address (also the source of its routes to the Services).
    node_ip: &'static str,
    /// The node's end of the veth (the pods' gateway, and the masquerade address).
    node_veth_ip: &'static str,
    endpoints: [&'static str; 3],
    web_ip: &'static str,
    sticky_ip: &'static str,
    external_ip: &'static str,
    /// The prefix length of the veth subnet, and of a single host.
    subnet: u8,
    host: u8,
    /// The ClusterIP and ExternalIP ranges, routed out of the veth.
    service_ranges: [&'static str; 2],
    /// Node-like client sources (masqueraded) and pod-like ones (inside `cluster_cidr`) are
    /// this prefix followed by 10, 11, …
    node_sources: &'static str,
    pod_sources: &'static str,
    cluster_cidr: &'static str,
    /// The EndpointSlices' `addressType`.
    address_type: &'static str,
}

const V4: Net = Net {
    family: "ipv4",
    tables: "iptables",
    node_ip: "192.168.0.2",
    node_veth_ip: "10.180.0.254",
    endpoints: ["10.180.0.1", "10.180.0.2", "10.180.0.3"],
    web_ip: "172.30.0.10",
    sticky_ip: "172.30.0.11",
    external_ip: "203.0.113.10",
    subnet: 24,
    host: 32,
    service_ranges: ["172.30.0.0/16", "203.0.113.0/24"],
    node_sources: "192.168.1.",
    pod_sources: "10.0.0.",
    cluster_cidr: "10.0.0.0/8",
    address_type: "IPv4",
};

const V6: Net = Net {
    family: "ipv6",
    tables: "ip6tables",
    node_ip: "fd00:192::2",
    node_veth_ip: "fd00:180::fe",
    endpoints: ["fd00:180::1", "fd00:180::2", "fd00:180::3"],
    web_ip: "fd00:172:30::10",
    sticky_ip: "fd00:172:30::11",
    external_ip: "2001:db8:113::10",
    subnet: 64,
    host: 128,
    service_ranges: ["fd00:172:30::/64", "2001:db8:113::/64"],
    node_sources: "fd00:192:1::",
    pod_sources: "fd00:10::",
    cluster_cidr: "fd00:10::/64",
    address_type: "IPv6",
};

impl Net {
    fn sources(prefix: &str, count: usize) -> Vec<String> {
        (10..10 + count).map(|i| format!("{prefix}{i}")).collect()
    }

    fn node_sources(&self, count: usize) -> Vec<String> {
        Self::sources(self.node_sources, count)
    }

    fn pod_sources(&self, count: usize) -> Vec<String> {
        Self::sources(self.pod_sources, count)
    }

    /// `iptables-legacy-save`, `ip6tables-nft-restore`, …
    fn tool(&self, variant: &str, tool: &str) -> String {
        format!("{}-{variant}{tool}", self.tables)
    }
}

const NODE_PORT: u16 = 30080;

/// `server.py 4|6`: serves on port 8080 of every address of the family: one line,
/// `LOCAL PEER`, per connection.
const SERVER: &str = r#"
import socket, socketserver, sys
v6 = sys.argv[1] == "6"
class H(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(("%s %s\n" % (self.request.getsockname()[0], self.client_address[0])).encode())
class S(socketserver.ThreadingTCPServer):
    address_family = socket.AF_INET6 if v6 else socket.AF_INET
    allow_reuse_address = True
    daemon_threads = True
S(("::" if v6 else "0.0.0.0", 8080), H).serve_forever()
"#;

/// `client.py IP PORT COUNT SRC...`: COUNT connections from each source, a fresh socket each;
/// prints JSON `[[source, endpoint, peer seen], ...]`.
const CLIENT: &str = r#"
import json, socket, sys
ip, port, count, sources = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
out = []
for src in sources:
    for _ in range(count):
        s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET)
        s.settimeout(5)
        s.bind((src, 0))
        s.connect((ip, port))
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(100)
            if not chunk:
                break
            data += chunk
        s.close()
        local, peer = data.decode().split()
        out.append([src, local, peer])
print(json.dumps(out))
"#;

/// Two namespaces, deleted on drop whatever happens.
struct Topology {
    node: String,
    pods: String,
}

impl Topology {
    fn create(tag: &str, net: &Net) -> Result<Self, String> {
        let id = std::process::id();
        let topology = Self {
            node: format!("sp-node-{tag}-{id}"),
            pods: format!("sp-pods-{tag}-{id}"),
        };
        run(&["ip", "netns", "add", &topology.node])?;
        run(&["ip", "netns", "add", &topology.pods])?;
        let (n, p) = (topology.node.as_str(), topology.pods.as_str());
        let veth = format!("v{tag}{}", id % 100_000);
        let peer = format!("{veth}p");
        run(&[
            "ip", "link", "add", &veth, "netns", n, "type", "veth", "peer", "name", &peer, "netns",
            p,
        ])?;
        add_address(n, &veth, &format!("{}/{}", net.node_veth_ip, net.subnet))?;
        add_address(n, &veth, &format!("{}/{}", net.node_ip, net.host))?;
        // Client sources: node-like (masqueraded) and pod-like (inside --cluster-cidr).
        for source in net.node_sources(20).iter().chain(&net.pod_sources(4)) {
            add_address(n, &veth, &format!("{source}/{}", net.host))?;
        }
        for ip in net.endpoints {
            add_address(p, &peer, &format!("{ip}/{}", net.subnet))?;
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
            net.node_veth_ip,
        ])?;
        for cidr in net.service_ranges {
            run(&[
                "ip",
                "-n",
                n,
                "route",
                "add",
                cidr,
                "dev",
                &veth,
                "src",
                net.node_ip,
            ])?;
        }
        Ok(topology)
    }

    fn node(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["ip", "netns", "exec", self.node.as_str()];
        all.extend_from_slice(args);
        run(&all)
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for ns in [&self.node, &self.pods] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn service(name: &str, ip: &str, spec: &str, port: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{namespace: demo, name: {name}}}\nspec:\n  clusterIP: {ip}\n{spec}  ports: [{{name: http, port: 80, protocol: TCP{port}}}]\n"
    )
}

fn slice(net: &Net, name: &str, endpoints: &[&str]) -> String {
    let endpoints: String = endpoints
        .iter()
        .map(|ip| format!("- {{addresses: ['{ip}'], nodeName: node-b}}\n"))
        .collect();
    format!(
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  namespace: demo\n  name: {name}-1\n  labels: {{kubernetes.io/service-name: {name}}}\naddressType: {}\nports: [{{name: http, port: 8080, protocol: TCP}}]\nendpoints:\n{endpoints}",
        net.address_type
    )
}

/// `web` (NodePort, ExternalIP) with `web_endpoints`, and `sticky` (ClientIP affinity) with
/// every endpoint.
fn write_manifests(dir: &Path, net: &Net, web_endpoints: &[&str]) {
    let web = format!(
        "{}---\n{}",
        service(
            "web",
            &format!("'{}'", net.web_ip),
            &format!("  type: NodePort\n  externalIPs: ['{}']\n", net.external_ip),
            &format!(", nodePort: {NODE_PORT}"),
        ),
        slice(net, "web", web_endpoints)
    );
    let sticky = format!(
        "{}---\n{}",
        service(
            "sticky",
            &format!("'{}'", net.sticky_ip),
            "  sessionAffinity: ClientIP\n",
            ""
        ),
        slice(net, "sticky", &net.endpoints)
    );
    // Written to a temporary name and renamed: the proxy never reads half a file.
    for (name, text) in [("web.yaml", web), ("sticky.yaml", sticky)] {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, dir.join(name)).unwrap();
    }
}

type Flows = Vec<(String, String, String)>;

fn try_connect(
    topology: &Topology,
    ip: &str,
    port: u16,
    count: usize,
    sources: &[String],
) -> Result<Flows, String> {
    let count = count.to_string();
    let port = port.to_string();
    let mut args = vec!["python3", "-c", CLIENT, ip, &port, &count];
    args.extend(sources.iter().map(String::as_str));
    let out = topology.node(&args)?;
    serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))
}

fn connect(topology: &Topology, ip: &str, port: u16, count: usize, sources: &[String]) -> Flows {
    try_connect(topology, ip, port, count, sources).unwrap()
}

fn per_endpoint(flows: &Flows) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (_, endpoint, _) in flows {
        *counts.entry(endpoint.clone()).or_default() += 1;
    }
    counts
}

fn chi_square(counts: &BTreeMap<String, usize>, expected_keys: usize) -> f64 {
    let total: usize = counts.values().sum();
    let expected = total as f64 / expected_keys as f64;
    counts
        .values()
        .map(|&n| (n as f64 - expected).powi(2) / expected)
        .sum()
}

/// Waits (polling) until `check` holds for the node's table `table`.
fn wait_for_table(
    topology: &Topology,
    save: &str,
    table: &str,
    what: &str,
    check: impl Fn(&str) -> bool,
) {
    let probe = || topology.node(&[save, "-t", table]).unwrap_or_default();
    poll(what, probe, check);
}

/// Waits (polling) until `check` holds for the node's nat table.
fn wait_for(topology: &Topology, save: &str, what: &str, check: impl Fn(&str) -> bool) {
    wait_for_table(topology, save, "nat", what, check);
}

/// The user chains and rules of every table (what `--cleanup` must remove).
fn rules(topology: &Topology, save: &str) -> BTreeSet<String> {
    topology
        .node(&[save])
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("-A") || (l.starts_with(':') && l.contains(" - ")))
        .map(String::from)
        .collect()
}

fn missing_prerequisite(net: &Net, variant: &str) -> Option<String> {
    let root = run(&["id", "-u"]).is_ok_and(|u| u.trim() == "0");
    if !root {
        return Some("root".into());
    }
    [
        "ip".to_owned(),
        "python3".to_owned(),
        net.tool(variant, "-restore"),
    ]
    .into_iter()
    .find(|program| run(&[program, "-V"]).is_err() && run(&[program, "--version"]).is_err())
}

/// The topology with listeners in the pod namespace, or why the test is skipped.
fn set_up(tag: &str, net: &Net, variant: &str) -> Option<(Topology, Process)> {
    if let Some(missing) = missing_prerequisite(net, variant) {
        println!("skipped: {missing}");
        return None;
    }
    let topology = match Topology::create(tag, net) {
        Ok(t) => t,
        Err(e) => {
            println!("skipped: network namespaces ({e})");
            return None;
        }
    };
    let version = if net.family == "ipv6" { "6" } else { "4" };
    let server = Process(
        Command::new("ip")
            .args(["netns", "exec", &topology.pods, "python3", "-c", SERVER])
            .arg(version)
            .spawn()
            .unwrap(),
    );
    Some((topology, server))
}

/// A `service-proxy` running in the node namespace: the process (killed on drop), its
/// manifest folder and its log.
struct Running {
    process: Process,
    dir: tempfile::TempDir,
    log: tempfile::NamedTempFile,
}

/// Starts `service-proxy` in the node namespace on every endpoint's manifests, with `extra`
/// flags and `path` as its `PATH` when given.
fn start_proxy(
    topology: &Topology,
    net: &Net,
    variant: &str,
    extra: &[&str],
    path: Option<&str>,
) -> Running {
    let dir = tempfile::tempdir().unwrap();
    write_manifests(dir.path(), net, &net.endpoints);
    start_proxy_on(topology, net, variant, extra, path, dir)
}

/// Starts `service-proxy` as [`start_proxy`] does, on the manifests already in `dir` (a
/// restart).
fn start_proxy_on(
    topology: &Topology,
    net: &Net,
    variant: &str,
    extra: &[&str],
    path: Option<&str>,
    dir: tempfile::TempDir,
) -> Running {
    let log = tempfile::NamedTempFile::new().unwrap();
    let proxy_args = [
        "netns",
        "exec",
        &topology.node,
        env!("CARGO_BIN_EXE_service-proxy"),
        "--manifests",
        dir.path().to_str().unwrap(),
        "--hostname-override",
        "node-a",
        "--node-ip",
        net.node_ip,
        "--ip-families",
        net.family,
        "--cluster-cidr",
        net.cluster_cidr,
        "--iptables-variant",
        variant,
        "--iptables-min-sync-period",
        "100ms",
    ];
    let mut command = Command::new("ip");
    command
        .args(proxy_args)
        .args(extra)
        .env("RUST_LOG", "info")
        .stderr(log.reopen().unwrap());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    Running {
        process: Process(command.spawn().unwrap()),
        dir,
        log,
    }
}

/// Waits for the listeners, then checks what both modes must do with ClusterIPs: 50
/// connections from 20 node-like sources spread evenly over the three `web` endpoints and
/// masqueraded to the node's veth address, pod and external traffic as
/// [`check_pod_and_external_traffic`] says, and ClientIP affinity pinning each source to one
/// `sticky` endpoint. Returns the node-like sources.
fn check_spread_and_affinity(topology: &Topology, net: &Net) -> Vec<String> {
    wait_for_listeners(topology, net);
    let node_sources = net.node_sources(20);
    let mut flows = connect(topology, net.web_ip, 80, 50, &node_sources);
    let mut counts = per_endpoint(&flows);
    // χ² with 2 degrees of freedom: 9.21 is the 1 % level; one retry before failing.
    if chi_square(&counts, 3) > 9.21 {
        flows = connect(topology, net.web_ip, 80, 50, &node_sources);
        counts = per_endpoint(&flows);
    }
    assert_eq!(counts.len(), 3, "{counts:?}");
    assert!(chi_square(&counts, 3) < 9.21, "uneven split {counts:?}");
    assert_masqueraded(net, &flows);
    check_pod_and_external_traffic(topology, net, &net.pod_sources(4), 5);

    let sticky = connect(topology, net.sticky_ip, 80, 10, &node_sources[..6]);
    let mut pinned: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (source, endpoint, _) in &sticky {
        pinned.entry(source).or_default().insert(endpoint);
    }
    assert!(pinned.values().all(|e| e.len() == 1), "{pinned:?}");
    node_sources
}

/// Waits for the listeners to answer through the ClusterIP of `web`.
fn wait_for_listeners(topology: &Topology, net: &Net) {
    let source = &net.node_sources(1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while try_connect(topology, net.web_ip, 80, 1, source).is_err() {
        assert!(Instant::now() < deadline, "the listeners never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `--cleanup` in the node namespace, which must leave `before`.
fn clean_up(topology: &Topology, net: &Net, variant: &str, before: &BTreeSet<String>) {
    let cleanup = Command::new("ip")
        .args(["netns", "exec", &topology.node])
        .arg(env!("CARGO_BIN_EXE_service-proxy"))
        .args(["--cleanup", "--ip-families", net.family])
        .args(["--iptables-variant", variant])
        .output()
        .unwrap();
    assert!(
        cleanup.status.success(),
        "{}",
        String::from_utf8_lossy(&cleanup.stderr)
    );
    assert_eq!(rules(topology, &net.tool(variant, "-save")), *before);
}

/// Every flow came masqueraded to the node's veth address.
fn assert_masqueraded(net: &Net, flows: &Flows) {
    assert!(
        flows.iter().all(|(_, _, peer)| peer == net.node_veth_ip),
        "{flows:?}"
    );
}

/// Pod-like sources (inside --cluster-cidr) keep their address on the ClusterIP (`count`
/// connections each); NodePort and ExternalIP are external destinations, always masqueraded
/// (eTP Cluster), that reach every endpoint.
fn check_pod_and_external_traffic(
    topology: &Topology,
    net: &Net,
    pod_sources: &[String],
    count: usize,
) {
    for (source, _, peer) in connect(topology, net.web_ip, 80, count, pod_sources) {
        assert_eq!(source, peer, "pod traffic must not be masqueraded");
    }
    for (ip, port) in [(net.node_ip, NODE_PORT), (net.external_ip, 80)] {
        let flows = connect(topology, ip, port, 10, pod_sources);
        assert_eq!(per_endpoint(&flows).len(), 3, "{ip} {port} {flows:?}");
        assert_masqueraded(net, &flows);
    }
}

fn end_to_end(variant: &str) {
    let net = &V4;
    let Some((topology, _server)) = set_up(variant, net, variant) else {
        return;
    };
    let save = net.tool(variant, "-save");
    let before = rules(&topology, &save);
    let proxy = start_proxy(&topology, net, variant, &[], None);
    wait_for(&topology, &save, "the first sync", |nat| {
        nat.contains("demo/web:http cluster IP") && nat.contains("demo/sticky:http cluster IP")
    });

    let node_sources = check_spread_and_affinity(&topology, net);

    // An endpoint goes away: applied by a partial sync.
    write_manifests(proxy.dir.path(), net, &net.endpoints[..2]);
    wait_for(&topology, &save, "the web endpoint removal", |nat| {
        nat.lines()
            .filter(|l| l.contains("--to-destination") && l.contains(net.endpoints[2]))
            .count()
            == 1 // only sticky's
    });
    let counts = per_endpoint(&connect(&topology, net.web_ip, 80, 10, &node_sources[..10]));
    assert_eq!(
        counts.keys().collect::<Vec<_>>(),
        [net.endpoints[0], net.endpoints[1]]
    );
    let text = read_log(&proxy.log);
    assert!(
        text.contains("full=false"),
        "no partial sync logged:\n{text}"
    );

    // The rule counts in /metrics, replayed from the full and the partial restore inputs,
    // are what the kernel holds in the proxy's chains.
    for table in ["filter", "nat"] {
        let saved = topology.node(&[&save, "-t", table]).unwrap();
        let name = format!("kubeproxy_sync_proxy_rules_iptables_total{{table=\"{table}\"}}");
        poll(
            &format!("{name} = {}", own_rules(&saved)),
            || metrics_in(&topology.node),
            |text| metric(text, &name) == Some(own_rules(&saved) as f64),
        );
    }

    // --cleanup leaves the tables as they were.
    drop(proxy.process);
    clean_up(&topology, net, variant, &before);
}

/// IPv6 with `--nodeport-addresses`: ClusterIP and NodePort reach the endpoints through
/// `ip6tables`; NodePorts answer on the node IP only, as kube-proxy's `-d IP -j KUBE-NODEPORTS`
/// rules say; `--cleanup` leaves no ip6tables rule.
fn ipv6_end_to_end(variant: &str) {
    let net = &V6;
    let Some((topology, _server)) = set_up(&format!("6{variant}"), net, variant) else {
        return;
    };
    let save = net.tool(variant, "-save");
    let before = rules(&topology, &save);
    let nodeport_addresses = ["--nodeport-addresses", "fd00:192::/64"];
    let proxy = start_proxy(&topology, net, variant, &nodeport_addresses, None);
    let node_port_rule = format!("-A KUBE-SERVICES -d {}/128", net.node_ip);
    wait_for(&topology, &save, "the first sync", |nat| {
        nat.contains("demo/web:http cluster IP") && nat.contains(&node_port_rule)
    });
    let nat = topology.node(&[&save, "-t", "nat"]).unwrap();
    assert!(!nat.contains("addrtype"), "{nat}");

    wait_for_listeners(&topology, net);
    let node_sources = net.node_sources(4);
    let flows = connect(&topology, net.web_ip, 80, 10, &node_sources);
    assert_eq!(per_endpoint(&flows).len(), 3, "{flows:?}");
    assert_masqueraded(net, &flows);
    let pod_sources = net.pod_sources(4);
    check_pod_and_external_traffic(&topology, net, &pod_sources, 3);
    // The veth's address is local but outside --nodeport-addresses: nothing listens there.
    let outside = try_connect(&topology, net.node_veth_ip, NODE_PORT, 1, &pod_sources[..1]);
    assert!(outside.is_err(), "{outside:?}");

    drop(proxy.process);
    clean_up(&topology, net, variant, &before);
}

/// Runs `restore` of the variant unless the file `fail` exists; each call appends `ok` or
/// `fail` to the file `attempts`.
fn restore_wrapper(real: &str, dir: &Path) -> String {
    let (fail, attempts) = (dir.join("fail"), dir.join("attempts"));
    format!(
        "#!/bin/sh\nif [ -e '{}' ]; then\n  cat >/dev/null\n  echo fail >> '{}'\n  echo 'injected failure' >&2\n  exit 1\nfi\necho ok >> '{}'\nexec '{real}' \"$@\"\n",
        fail.display(),
        attempts.display(),
        attempts.display()
    )
}

/// kube-proxy's recovery: a restore that fails leaves the kernel's previous rules in place,
/// is counted, and is retried as a full resync once restores work again; a canary chain
/// deleted behind the proxy's back (someone flushed the tables) brings a full resync too.
#[test]
fn failed_restores_and_lost_canaries_bring_full_resyncs() {
    let (net, variant) = (&V4, "legacy");
    let Some((topology, _server)) = set_up("f", net, variant) else {
        return;
    };
    let save = net.tool(variant, "-save");
    // `iptables-legacy-restore`, first in the PATH, fails while `fail` exists.
    let real = run(&[
        "sh",
        "-c",
        &format!("command -v {}", net.tool(variant, "-restore")),
    ])
    .unwrap();
    let bin = tempfile::tempdir().unwrap();
    let wrapper = bin.path().join(net.tool(variant, "-restore"));
    std::fs::write(&wrapper, restore_wrapper(real.trim(), bin.path())).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let attempts = |outcome: &str| {
        std::fs::read_to_string(bin.path().join("attempts"))
            .unwrap_or_default()
            .lines()
            .filter(|l| *l == outcome)
            .count()
    };

    // The namespace is the proxy's own: the default metrics address (127.0.0.1:10249) is free.
    let extra = ["--iptables-sync-period", "1s"];
    let proxy = start_proxy(&topology, net, variant, &extra, Some(&path));
    wait_for(&topology, &save, "the first sync", |nat| {
        nat.contains("demo/web:http cluster IP") && nat.contains("demo/sticky:http cluster IP")
    });
    assert_eq!(attempts("fail"), 0);

    // Restores fail: the endpoint removal is not applied, and the kernel keeps every rule.
    let nat_before = topology.node(&[&save, "-t", "nat"]).unwrap();
    std::fs::write(bin.path().join("fail"), "").unwrap();
    write_manifests(proxy.dir.path(), net, &net.endpoints[..2]);
    poll(
        "two failed restores",
        || attempts("fail").to_string(),
        |n| n.parse::<usize>().unwrap_or(0) >= 2,
    );
    let nat_now = topology.node(&[&save, "-t", "nat"]).unwrap();
    assert_eq!(
        rules_of(&nat_now),
        rules_of(&nat_before),
        "a failed restore changed the rules"
    );
    // The first failed sync was partial, the retries full.
    poll(
        "the failure metrics",
        || metrics_in(&topology.node),
        |text| {
            metric(
                text,
                "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
            ) == Some(1.0)
                && metric(
                    text,
                    "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
                )
                .is_some_and(|n| n >= 2.0)
        },
    );

    // Restores work again: the retry is a full resync and applies the change.
    std::fs::remove_file(bin.path().join("fail")).unwrap();
    wait_for(&topology, &save, "the web endpoint removal", |nat| {
        nat.lines()
            .filter(|l| l.contains("--to-destination") && l.contains(net.endpoints[2]))
            .count()
            == 1 // only sticky's
    });
    let resync = |log: &str| {
        let (_, after_failure) = log.rsplit_once("restore failed")?;
        let line = after_failure.lines().find(|l| l.contains("rules synced"))?;
        Some(line.to_owned())
    };
    poll(
        "the resync's log line",
        || read_log(&proxy.log),
        |text| resync(text).is_some(),
    );
    let line = resync(&read_log(&proxy.log)).unwrap_or_default();
    assert!(line.contains("full=true"), "{line}");

    // Someone deletes the mangle canary (and flushes KUBE-SERVICES): a full resync restores
    // both within a sync period.
    let iptables = net.tool(variant, "");
    topology
        .node(&[&iptables, "-t", "mangle", "-X", "KUBE-PROXY-CANARY"])
        .unwrap();
    topology
        .node(&[&iptables, "-t", "nat", "-F", "KUBE-SERVICES"])
        .unwrap();
    wait_for_table(&topology, &save, "mangle", "the canary", |mangle| {
        mangle.contains(":KUBE-PROXY-CANARY")
    });
    wait_for(&topology, &save, "KUBE-SERVICES refilled", |nat| {
        nat.contains("demo/web:http cluster IP") && nat.contains("demo/sticky:http cluster IP")
    });
    let text = read_log(&proxy.log);
    assert!(text.contains("canary chain gone: full resync"), "{text}");
}

/// The rules of a saved table in chains other than the built-in ones and the (empty) canary:
/// those the restores write.
fn own_rules(saved: &str) -> usize {
    const BUILT_IN: [&str; 5] = ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];
    saved
        .lines()
        .filter_map(|l| l.strip_prefix("-A ")?.split(' ').next())
        .filter(|chain| !BUILT_IN.contains(chain))
        .count()
}

/// The rules (`-A` lines) of a saved table.
fn rules_of(saved: &str) -> BTreeSet<&str> {
    saved.lines().filter(|l| l.starts_with("-A")).collect()
}

/// The port name of issue #28: written raw into `--comment`, it would end the line and add a
/// DNAT rule to 6.6.6.6 of its own.
const INJECTION: &str =
    "x\\n-A KUBE-SERVICES -p tcp -d 10.96.0.1 --dport 443 -j DNAT --to-destination 6.6.6.6:443\\n#";

/// Hostile manifests next to valid ones: the Service `evil` names its port with a rule, the
/// Service `meta` has only the metadata service's link-local address as an endpoint; `after`,
/// valid, in the same file, shows when the file was applied. No rule with 6.6.6.6 or
/// 169.254.169.254 reaches any table (cluster-state leaves the invalid objects out, as the API
/// server would refuse them); the proxy stays up and the valid Services work.
#[test]
fn hostile_manifests_put_no_rule_in_the_kernel() {
    let (net, variant) = (&V4, "legacy");
    let Some((topology, _server)) = set_up("h", net, variant) else {
        return;
    };
    let save = net.tool(variant, "-save");
    let mut proxy = start_proxy(&topology, net, variant, &[], None);
    wait_for(&topology, &save, "the first sync", |nat| {
        nat.contains("demo/web:http cluster IP") && nat.contains("demo/sticky:http cluster IP")
    });
    let endpoint = net.endpoints[0];
    let hostile = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{namespace: demo, name: evil}}\nspec:\n  clusterIP: 172.30.0.12\n  ports: [{{name: \"{INJECTION}\", port: 443, protocol: TCP}}]\n---\n\
         apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  namespace: demo\n  name: evil-1\n  labels: {{kubernetes.io/service-name: evil}}\naddressType: IPv4\nports: [{{name: \"{INJECTION}\", port: 8080, protocol: TCP}}]\nendpoints:\n- {{addresses: ['{endpoint}']}}\n---\n\
         {}---\n{}---\n{}---\n{}",
        service("meta", "'172.30.0.13'", "", ""),
        slice(net, "meta", &["169.254.169.254"]),
        service("after", "'172.30.0.14'", "", ""),
        slice(net, "after", &[endpoint]),
    );
    let tmp = proxy.dir.path().join(".hostile.yaml.tmp");
    std::fs::write(&tmp, hostile).unwrap();
    std::fs::rename(&tmp, proxy.dir.path().join("hostile.yaml")).unwrap();
    wait_for(
        &topology,
        &save,
        "the valid Service of the same file",
        |nat| nat.contains("demo/after:http cluster IP"),
    );

    let saved = topology.node(&[&save]).unwrap();
    assert!(!saved.contains("6.6.6.6"), "{saved}");
    assert!(!saved.contains("169.254.169.254"), "{saved}");
    assert!(!saved.contains("demo/evil"), "{saved}");
    // `meta` has no usable endpoint: its ClusterIP rejects, as kube-proxy writes it.
    let filter = topology.node(&[&save, "-t", "filter"]).unwrap();
    assert!(
        filter.contains("demo/meta:http has no endpoints"),
        "{filter}"
    );
    assert!(
        proxy.process.0.try_wait().unwrap().is_none(),
        "the proxy exited"
    );
    wait_for_listeners(&topology, net);
    let flows = connect(&topology, "172.30.0.14", 80, 3, &net.node_sources(1));
    assert_eq!(
        per_endpoint(&flows).into_keys().collect::<Vec<_>>(),
        [endpoint]
    );
    // cluster-state left both hostile slices out, each reported with its file, line and field.
    let log = read_log(&proxy.log);
    assert!(
        log.contains("(EndpointSlice demo/meta-1 is left out)"),
        "{log}"
    );
    assert!(log.contains("(Service demo/evil is left out)"), "{log}");
}

#[test]
fn services_work_end_to_end_on_iptables_legacy() {
    end_to_end("legacy");
}

#[test]
fn services_work_end_to_end_on_iptables_nft() {
    end_to_end("nft");
}

#[test]
fn ipv6_services_work_end_to_end_on_ip6tables_legacy() {
    ipv6_end_to_end("legacy");
}

#[test]
fn ipv6_services_work_end_to_end_on_ip6tables_nft() {
    ipv6_end_to_end("nft");
}

/// `echo.py`: on port 8081 of every IPv4 address, answers each line received with its own
/// address, for as long as the connection lasts.
const ECHO_SERVER: &str = r#"
import socketserver
class H(socketserver.StreamRequestHandler):
    def handle(self):
        for _ in self.rfile:
            self.wfile.write(("%s\n" % self.request.getsockname()[0]).encode())
            self.wfile.flush()
class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
S(("0.0.0.0", 8081), H).serve_forever()
"#;

/// `hold.py IP PORT`: one connection, kept open; for each line read on stdin, sends a line
/// and prints the answer (the endpoint's address).
const HOLD_CLIENT: &str = r#"
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
f = s.makefile("rw")
for _ in sys.stdin:
    f.write("ping\n"); f.flush()
    print(f.readline().strip(), flush=True)
"#;

/// The ClusterIP of `echo`, and the NodePort of `local`.
const ECHO_IP: &str = "172.30.0.20";
const LOCAL_NODE_PORT: u16 = 30081;

/// `echo` (port 80 to 8081 of `endpoints`), and `local` (NodePort, `externalTrafficPolicy:
/// Local`, its first endpoint on this node, the others on node-b).
fn write_nftables_manifests(dir: &Path, echo_endpoints: &[&str]) {
    let endpoints = |ips: &[&str], local: usize| -> String {
        ips.iter()
            .enumerate()
            .map(|(i, ip)| {
                let node = if i < local { "node-a" } else { "node-b" };
                format!("- {{addresses: ['{ip}'], nodeName: {node}}}\n")
            })
            .collect()
    };
    let slice = |name: &str, port: u16, endpoints: String| {
        format!(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  namespace: demo\n  name: {name}-1\n  labels: {{kubernetes.io/service-name: {name}}}\naddressType: IPv4\nports: [{{name: http, port: {port}, protocol: TCP}}]\nendpoints:\n{endpoints}"
        )
    };
    let echo = format!(
        "{}---\n{}",
        service("echo", &format!("'{ECHO_IP}'"), "", ""),
        slice("echo", 8081, endpoints(echo_endpoints, 0))
    );
    let local = format!(
        "{}---\n{}",
        service(
            "local",
            "'172.30.0.21'",
            "  type: NodePort\n  externalTrafficPolicy: Local\n",
            &format!(", nodePort: {LOCAL_NODE_PORT}"),
        ),
        slice("local", 8080, endpoints(&V4.endpoints, 1))
    );
    for (name, text) in [("echo.yaml", echo), ("local.yaml", local)] {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, dir.join(name)).unwrap();
    }
}

/// A third namespace, `client`, joined to the node's by its own veth: its source address,
/// 198.51.100.10, is neither local to the node nor in the cluster CIDR, so NodePort traffic
/// from it is external as kube-proxy sees it. Deleted on drop.
struct Client(String);

impl Client {
    const IP: &str = "198.51.100.10";

    fn create(topology: &Topology) -> Result<Self, String> {
        let client = Self(format!("sp-client-{}", std::process::id()));
        run(&["ip", "netns", "add", &client.0])?;
        let veth = format!("vc{}", std::process::id() % 100_000);
        let peer = format!("{veth}p");
        let (n, c) = (topology.node.as_str(), client.0.as_str());
        run(&[
            "ip", "link", "add", &veth, "netns", n, "type", "veth", "peer", "name", &peer, "netns",
            c,
        ])?;
        add_address(n, &veth, "198.51.100.1/24")?;
        add_address(c, &peer, &format!("{}/24", Self::IP))?;
        for (ns, link) in [(n, veth.as_str()), (c, peer.as_str())] {
            run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
            run(&["ip", "-n", ns, "link", "set", link, "up"])?;
        }
        run(&[
            "ip",
            "-n",
            c,
            "route",
            "add",
            "default",
            "via",
            "198.51.100.1",
        ])?;
        run(&[
            "ip",
            "netns",
            "exec",
            n,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
        ])?;
        Ok(client)
    }

    fn connect(&self, ip: &str, port: u16, count: usize) -> Flows {
        let (port, count) = (port.to_string(), count.to_string());
        let args = [
            "ip",
            "netns",
            "exec",
            &self.0,
            "python3",
            "-c",
            CLIENT,
            ip,
            &port,
            &count,
            Self::IP,
        ];
        let out = run(&args).unwrap();
        serde_json::from_str(&out).unwrap()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// The node's `kube-proxy` table of the IPv4 family, empty when there is none.
fn nft_table(topology: &Topology) -> String {
    topology
        .node(&["nft", "list", "table", "ip", "kube-proxy"])
        .unwrap_or_default()
}

/// kube-proxy's nftables mode (`--proxy-mode nftables`) in the namespaces of the iptables
/// test: it removes the iptables mode's chains at start; ClusterIPs spread connections evenly
/// and masquerade node traffic, pod traffic keeps its source, NodePorts and ExternalIPs reach
/// every endpoint, ClientIP affinity pins each client; `externalTrafficPolicy: Local` sends
/// external NodePort traffic to the node's own endpoint only, unmasqueraded; an endpoint
/// removed is applied by a partial sync while an established connection to another endpoint
/// keeps working; the iptables mode, started after, deletes the nftables table.
#[test]
fn the_nftables_mode_works_end_to_end() {
    let (net, variant) = (&V4, "nft");
    if run(&["nft", "--version"]).is_err() {
        println!("skipped: nft");
        return;
    }
    let Some((topology, _server)) = set_up("n", net, variant) else {
        return;
    };
    let client = match Client::create(&topology) {
        Ok(client) => client,
        Err(e) => {
            println!("skipped: network namespaces ({e})");
            return;
        }
    };
    let _echo = Process(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &topology.pods,
                "python3",
                "-c",
                ECHO_SERVER,
            ])
            .spawn()
            .unwrap(),
    );
    // A chain the iptables mode left: the nftables mode removes it at start.
    let iptables = net.tool(variant, "");
    topology
        .node(&[&iptables, "-t", "nat", "-N", "KUBE-SERVICES"])
        .unwrap();

    let nftables = ["--proxy-mode", "nftables", "--iptables-sync-period", "2s"];
    let proxy = start_proxy(&topology, net, variant, &nftables, None);
    write_nftables_manifests(proxy.dir.path(), &net.endpoints);
    poll(
        "the nftables rules",
        || nft_table(&topology),
        |table| {
            [
                "demo/web/tcp/http",
                "demo/sticky/tcp/http",
                "demo/echo/tcp/http",
            ]
            .iter()
            .all(|s| table.contains(s))
                && table.contains("demo/local/tcp/http")
        },
    );
    let nat = topology
        .node(&[&net.tool(variant, "-save"), "-t", "nat"])
        .unwrap();
    assert!(!nat.contains("KUBE-SERVICES"), "{nat}");

    check_spread_and_affinity(&topology, net);

    // externalTrafficPolicy Local: external traffic reaches the local endpoint only, with its
    // source kept; with Cluster (web) it reaches every endpoint, masqueraded.
    let local = client.connect(net.node_ip, LOCAL_NODE_PORT, 20);
    assert!(
        local
            .iter()
            .all(|(source, endpoint, peer)| endpoint == net.endpoints[0] && peer == source),
        "{local:?}"
    );
    let cluster = client.connect(net.node_ip, NODE_PORT, 20);
    assert_eq!(per_endpoint(&cluster).len(), 3, "{cluster:?}");
    assert_masqueraded(net, &cluster);

    // A connection held open to one endpoint of echo; another endpoint goes away.
    let mut hold = Command::new("ip")
        .args([
            "netns",
            "exec",
            &topology.node,
            "python3",
            "-c",
            HOLD_CLIENT,
        ])
        .args([ECHO_IP, "80"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_hold = hold.stdin.take().unwrap();
    let mut from_hold = std::io::BufReader::new(hold.stdout.take().unwrap());
    let mut ask = || {
        use std::io::{BufRead as _, Write as _};
        writeln!(to_hold).unwrap();
        let mut line = String::new();
        from_hold.read_line(&mut line).unwrap();
        line.trim().to_owned()
    };
    let held = ask();
    assert!(net.endpoints.contains(&held.as_str()), "{held:?}");
    let gone = *net.endpoints.iter().find(|e| **e != held).unwrap();
    let kept: Vec<&str> = net
        .endpoints
        .iter()
        .copied()
        .filter(|e| *e != gone)
        .collect();
    write_nftables_manifests(proxy.dir.path(), &kept);
    poll(
        "the echo endpoint removal",
        || nft_table(&topology),
        |table| {
            table
                .lines()
                .any(|l| l.contains("numgen random mod 2") && l.contains("demo/echo/"))
        },
    );
    assert_eq!(ask(), held, "the held connection moved or broke");
    // The gone endpoint's chain, flushed by that sync, is deleted by a later one without any
    // further change (at the latest the periodic sync, every 2 s here).
    let gone_chain = format!("demo/echo/tcp/http__{gone}/8081");
    assert!(nft_table(&topology).contains(&gone_chain));
    poll(
        "the stale chain deleted",
        || nft_table(&topology),
        |table| !table.contains(&gone_chain),
    );
    let text = read_log(&proxy.log);
    assert!(
        text.contains("full=false"),
        "no partial sync logged:\n{text}"
    );
    // A restart (kube-proxy 1.35's first sync on the table an earlier run left) keeps the
    // endpoint chains it would write the same, and rewrites the Service chains: the rule
    // handles of the first are unchanged, those of the second are new.
    let handles = |chain: &str| {
        let listing = topology
            .node(&["nft", "-a", "list", "chain", "ip", "kube-proxy", chain])
            .unwrap();
        // The rules' handles (the table and the chain carry theirs too, on lines ending `{`).
        listing
            .lines()
            .filter(|l| !l.contains('{'))
            .filter_map(|l| l.split("# handle ").nth(1).map(str::to_owned))
            .collect::<Vec<_>>()
    };
    let table = nft_table(&topology);
    let chain_of = |prefix: &str| {
        let line = table
            .lines()
            .find(|l| l.trim_start().starts_with(prefix) && l.contains("demo/echo/"))
            .unwrap();
        line.split_whitespace().nth(1).unwrap().to_owned()
    };
    let (endpoint_chain, service_chain) = (chain_of("chain endpoint-"), chain_of("chain service-"));
    let (endpoint_before, service_before) = (handles(&endpoint_chain), handles(&service_chain));
    assert!(!endpoint_before.is_empty() && !service_before.is_empty());
    let Running { process, dir, .. } = proxy;
    drop(process);
    let proxy = start_proxy_on(&topology, net, variant, &nftables, None, dir);
    poll(
        "the first sync after the restart",
        || read_log(&proxy.log),
        |log| log.contains("rules synced"),
    );
    assert_eq!(
        handles(&endpoint_chain),
        endpoint_before,
        "endpoint chain rewritten"
    );
    let service_after = handles(&service_chain);
    assert!(
        service_after.iter().all(|h| !service_before.contains(h)),
        "{service_before:?} {service_after:?}"
    );
    assert_eq!(ask(), held, "the held connection moved or broke");

    drop(to_hold);
    let _ = hold.wait();

    // The metrics and /healthz follow the syncs.
    poll(
        "a sync timestamp",
        || metrics_in(&topology.node),
        |text| {
            metric(text, "kubeproxy_sync_proxy_rules_last_timestamp_seconds").unwrap_or(0.0) > 0.0
        },
    );

    // The iptables mode, started after, deletes the nftables table.
    drop(proxy.process);
    let iptables_mode = start_proxy(&topology, net, variant, &[], None);
    poll(
        "the nftables table deleted",
        || nft_table(&topology),
        str::is_empty,
    );
    drop(iptables_mode.process);

    // --cleanup in the nftables mode deletes its table.
    let proxy = start_proxy(&topology, net, variant, &nftables, None);
    poll(
        "the nftables rules again",
        || nft_table(&topology),
        |t| t.contains("demo/web/tcp/http"),
    );
    drop(proxy.process);
    let cleanup = Command::new("ip")
        .args(["netns", "exec", &topology.node])
        .arg(env!("CARGO_BIN_EXE_service-proxy"))
        .args(["--cleanup", "--proxy-mode", "nftables"])
        .output()
        .unwrap();
    assert!(
        cleanup.status.success(),
        "{}",
        String::from_utf8_lossy(&cleanup.stderr)
    );
    assert_eq!(nft_table(&topology), "");
}

/// The nftables mode over IPv6 (`ip6 kube-proxy`): ClusterIP, NodePort (on the primary node
/// address, the mode's default) and ExternalIP reach every endpoint, masquerading as in IPv4;
/// `--cleanup` deletes the table.
#[test]
fn the_nftables_mode_works_over_ipv6() {
    let (net, variant) = (&V6, "nft");
    if run(&["nft", "--version"]).is_err() {
        println!("skipped: nft");
        return;
    }
    let Some((topology, _server)) = set_up("n6", net, variant) else {
        return;
    };
    let table = || {
        topology
            .node(&["nft", "list", "table", "ip6", "kube-proxy"])
            .unwrap_or_default()
    };
    let proxy = start_proxy(&topology, net, variant, &["--proxy-mode", "nftables"], None);
    poll("the nftables rules", table, |t| {
        t.contains("demo/web/tcp/http") && t.contains("demo/sticky/tcp/http")
    });
    wait_for_listeners(&topology, net);
    let flows = connect(&topology, net.web_ip, 80, 10, &net.node_sources(4));
    assert_eq!(per_endpoint(&flows).len(), 3, "{flows:?}");
    assert_masqueraded(net, &flows);
    check_pod_and_external_traffic(&topology, net, &net.pod_sources(4), 3);
    drop(proxy.process);
    let cleanup = Command::new("ip")
        .args(["netns", "exec", &topology.node])
        .arg(env!("CARGO_BIN_EXE_service-proxy"))
        .args([
            "--cleanup",
            "--proxy-mode",
            "nftables",
            "--ip-families",
            "ipv6",
        ])
        .output()
        .unwrap();
    assert!(
        cleanup.status.success(),
        "{}",
        String::from_utf8_lossy(&cleanup.stderr)
    );
    assert_eq!(table(), "");
}

/// kube-proxy's recovery in the nftables mode: an `nft -f` that fails (a wrapper first in the
/// proxy's `PATH`) leaves the kernel's table as it was, and once nft works again the retry is
/// a full sync that applies the change.
#[test]
fn a_failed_nft_transaction_keeps_the_table_and_is_retried_in_full() {
    let (net, variant) = (&V4, "nft");
    let Ok(real) = run(&["sh", "-c", "command -v nft"]) else {
        println!("skipped: nft");
        return;
    };
    let Some((topology, _server)) = set_up("nf", net, variant) else {
        return;
    };
    let bin = tempfile::tempdir().unwrap();
    let wrapper = bin.path().join("nft");
    std::fs::write(&wrapper, restore_wrapper(real.trim(), bin.path())).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let failures = || {
        std::fs::read_to_string(bin.path().join("attempts"))
            .unwrap_or_default()
            .lines()
            .filter(|l| *l == "fail")
            .count()
    };
    let proxy = start_proxy(
        &topology,
        net,
        variant,
        &["--proxy-mode", "nftables"],
        Some(&path),
    );
    poll(
        "the first sync",
        || nft_table(&topology),
        |t| t.contains("demo/web/tcp/http"),
    );
    let gone = format!("demo/web/tcp/http__{}/8080", net.endpoints[2]);
    let before = nft_table(&topology);
    assert!(before.contains(&gone));

    std::fs::write(bin.path().join("fail"), "").unwrap();
    write_manifests(proxy.dir.path(), net, &net.endpoints[..2]);
    poll(
        "two failed transactions",
        || failures().to_string(),
        |n| n.parse::<usize>().unwrap_or(0) >= 2,
    );
    assert_eq!(
        nft_table(&topology),
        before,
        "a failed transaction changed the table"
    );

    std::fs::remove_file(bin.path().join("fail")).unwrap();
    poll(
        "the endpoint removal",
        || nft_table(&topology),
        |t| {
            t.lines()
                .any(|l| l.contains("numgen random mod 2") && l.contains("demo/web/"))
        },
    );
    let resync = |log: &str| {
        let (_, after_failure) = log.rsplit_once("nft -f failed")?;
        let line = after_failure.lines().find(|l| l.contains("rules synced"))?;
        Some(line.to_owned())
    };
    poll(
        "the resync's log line",
        || read_log(&proxy.log),
        |text| resync(text).is_some(),
    );
    let line = resync(&read_log(&proxy.log)).unwrap_or_default();
    assert!(line.contains("full=true"), "{line}");
}
