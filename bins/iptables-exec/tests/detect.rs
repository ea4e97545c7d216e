//! [`iptables_exec::detect`] against the kernel, in a network namespace the test creates:
//! no kubelet chain gives the system's build, a hint chain in the legacy tables gives
//! legacy, one in the nft tables gives nft (which wins when both have one).
//!
//! `detect` looks at the namespace it runs in, so the test runs itself again inside the
//! namespace (`ip netns exec`) to ask. Needs root, `ip` (iproute2) and both iptables builds;
//! otherwise prints `skipped: …`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use iptables_exec::Backend;

/// Set in the copy of the test that runs inside the namespace.
const INSIDE: &str = "IPTABLES_EXEC_DETECT_INSIDE";
const TEST: &str = "detection_follows_kubelets_chains";

/// A network namespace, deleted on drop.
struct Netns(String);

impl Netns {
    fn new() -> Option<Self> {
        let name = format!("ipx-detect-{}", std::process::id());
        let made = Command::new("ip")
            .args(["netns", "add", &name])
            .output()
            .is_ok_and(|o| o.status.success());
        made.then_some(Self(name))
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("ip")
            .args(["netns", "exec", &self.0])
            .args(args)
            .output()
            .unwrap()
    }

    /// What `detect` answers inside the namespace.
    fn detected(&self) -> String {
        let me = std::env::current_exe().unwrap();
        let output = Command::new("ip")
            .args(["netns", "exec", &self.0])
            .arg(me)
            .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
            .env(INSIDE, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        // The harness prints the test's name on the same line.
        stdout
            .split_once("detected: ")
            .and_then(|(_, answer)| answer.split_whitespace().next())
            .unwrap_or_else(|| panic!("no answer from inside: {stdout}"))
            .to_owned()
    }

    fn add_chain(&self, program: &str, chain: &str) {
        let output = self.run(&[program, "-w", "5", "-t", "mangle", "-N", chain]);
        assert!(output.status.success(), "{program} -N {chain}: {output:?}");
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn detection_follows_kubelets_chains() {
    if std::env::var_os(INSIDE).is_some() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let backend = runtime.block_on(iptables_exec::detect());
        println!("detected: {backend:?}");
        return;
    }
    let tools = ["ip", "iptables-legacy", "ip6tables-nft"];
    if let Some(missing) = tools.iter().find(|t| !have(t)) {
        println!("skipped: {missing} is not installed");
        return;
    }
    let Some(netns) = Netns::new() else {
        println!("skipped: `ip netns add` failed (not root?)");
        return;
    };
    assert_eq!(netns.detected(), format!("{:?}", Backend::System));
    // Another chain of kubelet's, in the legacy tables.
    netns.add_chain("iptables-legacy", "KUBE-KUBELET-CANARY");
    assert_eq!(netns.detected(), format!("{:?}", Backend::Legacy));
    // The hint in the IPv6 nft tables: nft is asked first.
    netns.add_chain("ip6tables-nft", "KUBE-IPTABLES-HINT");
    assert_eq!(netns.detected(), format!("{:?}", Backend::Nft));
}
