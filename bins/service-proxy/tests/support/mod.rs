//! What the network-namespace tests share: running a command, a child process killed on drop,
//! polling for a condition with a generous deadline, the proxy's log and metrics.

use std::io::Read;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Runs `args[0]` with the rest as arguments: its stdout, or why it failed.
pub(crate) fn run(args: &[&str]) -> Result<String, String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// `ip -n NS addr add CIDR dev LINK`, without duplicate address detection for IPv6 (the
/// addresses are usable at once, never tentative).
pub(crate) fn add_address(ns: &str, link: &str, cidr: &str) -> Result<String, String> {
    let mut args = vec!["ip", "-n", ns, "addr", "add", cidr, "dev", link];
    if cidr.contains(':') {
        args.push("nodad");
    }
    run(&args)
}

/// A child process killed on drop.
pub(crate) struct Process(pub(crate) Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `probe` every 50 ms until `check` holds for its output (30 s at most).
pub(crate) fn poll(what: &str, probe: impl Fn() -> String, check: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = probe();
        if check(&seen) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}:\n{seen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What the proxy logged so far.
pub(crate) fn read_log(log: &tempfile::NamedTempFile) -> String {
    let mut text = String::new();
    log.reopen().unwrap().read_to_string(&mut text).unwrap();
    text
}

/// The value of the sample `name` (with its labels) in a metrics text.
pub(crate) fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// The proxy's `/metrics` (its default address, 127.0.0.1:10249), fetched in the namespace
/// `ns`; empty while it does not answer.
pub(crate) fn metrics_in(ns: &str) -> String {
    let script = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:10249/metrics').read().decode())";
    run(&["ip", "netns", "exec", ns, "python3", "-c", script]).unwrap_or_default()
}
