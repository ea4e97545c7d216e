//! `dns-cache node-local` in network namespaces the test creates: kubernetes' reference
//! NodeLocal Corefile rendered and served to a client namespace over a veth pair, the
//! NOTRACK rules present and DNS leaving no conntrack entries, a rule deleted by hand put
//! back, the upstream Service's change rendered, and everything removed at exit.
//!
//! Needs root, `ip` (iproute2), `iptables` and `dig`; otherwise prints `skipped: …`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use support::{PATIENCE, eventually, have};

const LOCAL_IP: &str = "169.254.20.10";
const SECOND_IP: &str = "10.96.0.10";
/// The upstream Service's ClusterIP: a second dns-cache inside the node namespace.
const UPSTREAM_IP: &str = "127.0.0.20";
const COMMENT: &str = "NodeLocal DNS Cache";

/// A network namespace, deleted on drop.
struct Netns(String);

impl Netns {
    fn new(role: &str) -> Option<Self> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "nl-{role}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let ok = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| {
            let ns = Self(name);
            ns.ip(&["link", "set", "lo", "up"]);
            ns
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.0, program]);
        command
    }

    /// Runs `program args` in the namespace and returns its stdout.
    fn run(&self, program: &str, args: &[&str]) -> String {
        let output = self.command(program).args(args).output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn ip(&self, args: &[&str]) {
        let status = Command::new("ip")
            .arg("-n")
            .arg(&self.0)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "ip -n {} {args:?}", self.0);
    }

    /// How many of node-local's rules the namespace has.
    fn rule_count(&self) -> usize {
        ["raw", "filter"]
            .iter()
            .map(|table| {
                self.run("iptables-save", &["-t", table])
                    .matches(COMMENT)
                    .count()
            })
            .sum()
    }

    fn has_address(&self, ip: &str) -> bool {
        self.run("ip", &["-o", "addr", "show"])
            .contains(&format!(" {ip}/"))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// A child process, killed on drop.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn prerequisites() -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root {
        println!("skipped: not root");
        return false;
    }
    ["ip", "iptables-save", "iptables-restore", "dig"]
        .iter()
        .all(|tool| have(tool))
}

fn service(dir: &Path, cluster_ip: &str) {
    let yaml = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: kube-dns-upstream\n  namespace: kube-system\nspec:\n  clusterIP: {cluster_ip}\n  ports:\n  - name: dns\n    port: 53\n    protocol: UDP\n"
    );
    std::fs::write(dir.join("service.yaml"), yaml).unwrap();
}

fn dig(client: &Netns, extra: &[&str]) -> String {
    let mut args = vec![
        "@169.254.20.10",
        "web.default.svc.cluster.local",
        "A",
        "+short",
        "+time=2",
        "+tries=1",
    ];
    args.extend_from_slice(extra);
    client.run("dig", &args).trim().to_owned()
}

/// The node namespace's conntrack table, where the kernel shows it.
fn conntrack(node: &Netns) -> Option<String> {
    Path::new("/proc/net/nf_conntrack")
        .exists()
        .then(|| node.run("cat", &["/proc/net/nf_conntrack"]))
}

#[test]
fn node_local_mode_in_network_namespaces() {
    if !prerequisites() {
        return;
    }
    let Some(node) = Netns::new("node") else {
        println!("skipped: `ip netns add` failed");
        return;
    };
    let client = Netns::new("client").unwrap();
    let veth = format!("nlv{}", std::process::id() % 100_000);
    node.ip(&[
        "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &client.0,
    ]);
    node.ip(&["addr", "add", "192.168.77.1/24", "dev", &veth]);
    node.ip(&["link", "set", &veth, "up"]);
    client.ip(&["addr", "add", "192.168.77.2/24", "dev", "eth0"]);
    client.ip(&["link", "set", "eth0", "up"]);
    client.ip(&["route", "add", "169.254.20.10/32", "via", "192.168.77.1"]);
    // Something tracked in the node namespace, so conntrack is really on there.
    let _ = node.run(
        "iptables",
        &[
            "-A",
            "INPUT",
            "-m",
            "conntrack",
            "--ctstate",
            "INVALID",
            "-j",
            "DROP",
        ],
    );

    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    service(&manifests, UPSTREAM_IP);
    let base = dir.path().join("Corefile.base");
    let reference = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/corefile/k8s-kubernetes-cluster-addons-dns-nodelocaldns-nodelocaldns-yaml-L55.Corefile"
    ))
        .replace("__PILLAR__DNS__DOMAIN__", "cluster.local");
    std::fs::write(&base, reference).unwrap();
    let upstream_conf = dir.path().join("Corefile.upstream");
    std::fs::write(
        &upstream_conf,
        format!("cluster.local:53 {{\n    bind {UPSTREAM_IP}\n    hosts {{\n        10.0.0.7 web.default.svc.cluster.local\n    }}\n}}\n"),
    )
    .unwrap();
    let corefile = dir.path().join("Corefile");
    let binary = env!("CARGO_BIN_EXE_dns-cache");

    let upstream = Guard(
        node.command(binary)
            .args(["-conf", upstream_conf.to_str().unwrap()])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Invoked as upstream's nodelocaldns.yaml runs it: `/node-cache -localip ...`, no
    // subcommand (the program's name selects node-cache's command line).
    let node_cache = dir.path().join("node-cache");
    std::os::unix::fs::symlink(binary, &node_cache).unwrap();
    let mut cache = Guard(
        node.command(node_cache.to_str().unwrap())
            .args(["-localip", &format!("{LOCAL_IP},{SECOND_IP}")])
            .args(["-basecorefile", base.to_str().unwrap()])
            .args(["-corefile", corefile.to_str().unwrap()])
            .args(["-upstreamsvc", "kube-dns-upstream", "-syncinterval", "1"])
            .args(["-metrics-listen-address", "127.0.0.1:9353"])
            .arg("--manifests")
            .arg(&manifests)
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );

    // The reference Corefile, rendered and served: the local IPs are on an interface (the
    // dummy link, or `lo` on kernels without one), the rules are in.
    eventually("the rules are installed", || node.rule_count() == 24);
    assert!(node.has_address(LOCAL_IP) && node.has_address(SECOND_IP));
    let rendered = std::fs::read_to_string(&corefile).unwrap();
    assert!(
        rendered.contains(&format!("bind {LOCAL_IP} {SECOND_IP}\n")),
        "{rendered}"
    );
    assert!(
        rendered.contains(&format!("forward . {UPSTREAM_IP} {{\n")),
        "{rendered}"
    );

    // A client namespace is answered over UDP and TCP, then from the cache once the
    // upstream is gone.
    eventually("the client is answered", || dig(&client, &[]) == "10.0.0.7");
    assert_eq!(dig(&client, &["+tcp"]), "10.0.0.7");
    drop(upstream);
    assert_eq!(dig(&client, &[]), "10.0.0.7");

    // No conntrack entry for DNS; the health port from the client is tracked (the control).
    let _ = client.run(
        "dig",
        &[
            "@169.254.20.10",
            "-p",
            "8080",
            "+tcp",
            "+time=1",
            "+tries=1",
            "x",
        ],
    );
    match conntrack(&node) {
        Some(table) => {
            let client_flows = |port: &str| {
                table
                    .lines()
                    .filter(|l| {
                        l.contains("src=192.168.77.2 ") && l.contains(&format!("dport={port} "))
                    })
                    .count()
            };
            assert_eq!(
                client_flows("53"),
                0,
                "the client's DNS flows were tracked:\n{table}"
            );
            assert!(
                client_flows("8080") > 0,
                "conntrack is not active:\n{table}"
            );
        }
        None => println!("skipped: conntrack check (no /proc/net/nf_conntrack)"),
    }

    // A rule deleted by hand is put back at the next sync.
    let deleted = node
        .command("iptables")
        .args([
            "-t",
            "raw",
            "-D",
            "PREROUTING",
            "-p",
            "udp",
            "-d",
            LOCAL_IP,
            "-m",
            "udp",
        ])
        .args([
            "--dport",
            "53",
            "-m",
            "comment",
            "--comment",
            "NodeLocal DNS Cache: skip conntrack",
            "-j",
            "NOTRACK",
        ])
        .status()
        .unwrap();
    assert!(deleted.success());
    eventually("the deleted rule is repaired", || node.rule_count() == 24);

    // The upstream Service moves: the Corefile is rendered again.
    service(&manifests, "127.0.0.21");
    eventually("the new ClusterIP is rendered", || {
        std::fs::read_to_string(&corefile).is_ok_and(|text| text.contains("forward . 127.0.0.21 {"))
    });

    // Exit removes the rules and the addresses.
    let pid = cache.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let started = std::time::Instant::now();
    loop {
        if cache.0.try_wait().unwrap().is_some() {
            break;
        }
        assert!(started.elapsed() < PATIENCE, "node-local did not exit");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(node.rule_count(), 0);
    assert!(!node.has_address(LOCAL_IP) && !node.has_address(SECOND_IP));
}
