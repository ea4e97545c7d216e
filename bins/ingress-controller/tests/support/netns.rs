//! Each end-to-end test runs in a private network namespace that it creates and deletes.
//!
//! Why: the backends must be named by EndpointSlices that pass validation, and cluster-state
//! refuses loopback endpoint addresses as the API server does (issue 28). Outside a namespace
//! the backends would have to listen on one of the host's real addresses, on the real network.
//! Inside their own namespace they listen on [`BACKEND_IP`] (198.18.0.1, from the range
//! RFC 2544 sets aside for benchmarking) on that namespace's loopback interface: the address is
//! valid for an endpoint, and no listener of the test (backends, nginx, the controller, the
//! fake API server on 127.0.0.1) is reachable from, or visible in, the host's namespace.
//!
//! How: the test, started by the harness in the host's namespace, creates the namespace, then
//! runs its own binary again inside it (`ip netns exec NAME BINARY --exact TEST`), with
//! [`INSIDE`] set, where the same test finds itself inside and does its work. The outer run
//! forwards the inner run's output and fails when it failed; it then stops whatever is left in
//! the namespace and deletes the namespace, on failure too. A new process rather than
//! `setns(2)` in this one: the harness's threads and the test's runtime would stay outside,
//! and the crates forbid `unsafe`. The address sits on `lo` rather than on a dummy link: one
//! interface fewer, and no kernel module to load.

use std::io::Read as _;
use std::net::{IpAddr, Ipv4Addr};
use std::process::{Command, Stdio};

/// The address of the backends inside the namespace.
pub const BACKEND_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1));

/// Set in the inner run: the name of the namespace it runs in.
const INSIDE: &str = "INGRESS_E2E_NETNS";

/// The prefix of the namespaces' names; the creating process's id and a counter follow.
const PREFIX: &str = "ingress-e2e-";

/// Whether this process runs inside a test namespace.
pub fn inside() -> bool {
    std::env::var_os(INSIDE).is_some()
}

/// The start of every end-to-end test: `if support::ran_elsewhere() { return; }`.
///
/// Inside the test's namespace: `false`, the test goes on. Outside: checks the prerequisites
/// (prints `skipped: ...` when one is missing), runs the calling test inside a namespace of
/// its own, forwards its output, panics when it failed, and returns `true`: the test is done.
/// Call it from the test's own thread, which the harness names after the test.
pub fn ran_elsewhere() -> bool {
    if inside() {
        return false;
    }
    if let Some(missing) = missing_prerequisite() {
        println!("skipped: {missing}");
        return true;
    }
    let current = std::thread::current();
    let test = current.name().unwrap_or("main");
    assert_ne!(test, "main", "call ran_elsewhere from the test's thread");
    sweep_abandoned();
    let namespace = Namespace::create();
    namespace.run(test);
    true
}

/// Why the tests cannot run here, if they cannot: nginx, root, `ip`.
fn missing_prerequisite() -> Option<String> {
    if let Some(missing) = super::missing_prerequisite() {
        return Some(missing);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective_uid = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1));
    if effective_uid != Some("0") {
        return Some("root (to create a network namespace)".into());
    }
    let ip = Command::new("ip").arg("-V").stdout(Stdio::null()).status();
    if !ip.is_ok_and(|s| s.success()) {
        return Some("ip (Debian package iproute2)".into());
    }
    None
}

/// Runs `ip ARGS`; panics with its error output when it fails.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace of this process, deleted on drop with everything still in it.
struct Namespace(String);

impl Namespace {
    /// A new namespace: `lo` up, with [`BACKEND_IP`] beside 127.0.0.1.
    fn create() -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let name = format!("{PREFIX}{}-{n}", std::process::id());
        ip(&["netns", "add", &name]);
        // The guard exists from here: a failure below still deletes the namespace.
        let namespace = Self(name);
        let address = format!("{BACKEND_IP}/32");
        ip(&["-n", &namespace.0, "address", "add", &address, "dev", "lo"]);
        ip(&["-n", &namespace.0, "link", "set", "lo", "up"]);
        namespace
    }

    /// Runs `test` of this binary inside; forwards its output; panics when it failed.
    fn run(&self, test: &str) {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.0])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", test, "--nocapture", "--test-threads", "1"])
            .env(INSIDE, &self.0)
            .stdin(Stdio::null())
            .stdout(writer.try_clone().unwrap())
            .stderr(writer)
            .spawn()
            .unwrap();
        // Read while it runs (a full pipe would stop it); the end comes once every process
        // holding the pipe is gone, which `stop_all` sees to.
        let output = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = reader.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        });
        let status = child.wait().unwrap();
        let leftovers = self.stop_all();
        let output = output.join().unwrap();
        print!("{output}");
        let name = &self.0;
        assert!(
            status.success(),
            "{test} failed in network namespace {name}"
        );
        // `--exact` with a name the harness does not know runs nothing, and succeeds.
        assert!(
            output.contains("test result: ok. 1 passed"),
            "{test} did not run in network namespace {name}"
        );
        assert!(
            leftovers.is_empty(),
            "{test} left processes running in network namespace {name}: {leftovers:?}"
        );
    }

    /// Waits up to 5 s for the processes still in the namespace to exit (a killed nginx takes
    /// a moment), then kills those left; their ids.
    fn stop_all(&self) -> Vec<String> {
        for _ in 0..100 {
            if pids_in(&self.0).is_empty() {
                return Vec::new();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        stop_all_in(&self.0)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        stop_all_in(&self.0);
        let _ = Command::new("ip")
            .args(["netns", "delete", &self.0])
            .status();
    }
}

/// The ids of the processes in namespace `name`.
fn pids_in(name: &str) -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "pids", name]).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Kills (SIGKILL) the processes in namespace `name`; their ids.
fn stop_all_in(name: &str) -> Vec<String> {
    let pids = pids_in(name);
    for pid in &pids {
        let _ = Command::new("kill")
            .args(["-s", "KILL", pid])
            .stderr(Stdio::null())
            .status();
    }
    pids
}

/// Deletes the namespaces of test processes that are gone (killed before their guards ran,
/// by ^C for one), with what still runs in them.
fn sweep_abandoned() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        let Some((pid, _)) = name.strip_prefix(PREFIX).and_then(|t| t.split_once('-')) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !std::path::Path::new("/proc").join(pid).exists() {
            drop(Namespace(name.to_owned()));
        }
    }
}
