//! kubeadm's kube-proxy, with service-proxy as its image: the ConfigMap kubeadm writes
//! (`tests/kubeadm/kube-proxy-configmap.yaml`) mounted where kubeadm mounts it, and the
//! DaemonSet's command (`tests/kubeadm/kube-proxy-daemonset-command.txt`), both verbatim. The
//! rules of `--dry-run` must be those of the equivalent flags. No root needed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use serde::Deserialize;

const MANIFESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/manifests");
const CONFIGMAP: &str = include_str!("kubeadm/kube-proxy-configmap.yaml");
const COMMAND: &str = include_str!("kubeadm/kube-proxy-daemonset-command.txt");

#[derive(Deserialize)]
struct ConfigMap {
    data: BTreeMap<String, String>,
}

/// Writes the ConfigMap's files into `dir`, as the kubelet mounts them at /var/lib/kube-proxy.
fn mount_configmap(dir: &Path) {
    let configmap: ConfigMap = serde_saphyr::from_str(CONFIGMAP).unwrap();
    assert_eq!(
        configmap.data.keys().collect::<Vec<_>>(),
        ["config.conf", "kubeconfig.conf"]
    );
    for (name, text) in &configmap.data {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// kubeadm's ConfigMap mounted in a new folder, its `config.conf` edited by `edit`; `anchor`,
/// the text the edit replaces, must be in kubeadm's text exactly once.
fn mount_edited_configmap(anchor: &str, edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let mount = tempfile::tempdir().unwrap();
    mount_configmap(mount.path());
    let config = mount.path().join("config.conf");
    let kubeadms = std::fs::read_to_string(&config).unwrap();
    assert_eq!(kubeadms.matches(anchor).count(), 1, "{anchor:?}");
    std::fs::write(&config, edit(&kubeadms)).unwrap();
    mount
}

/// The DaemonSet's arguments (without the program), with the mount point moved to `dir` and
/// `$(NODE_NAME)` expanded as the kubelet does.
fn daemonset_arguments(dir: &Path, node: &str) -> Vec<String> {
    let mut lines = COMMAND
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'));
    assert_eq!(lines.next(), Some("/usr/local/bin/kube-proxy"));
    lines
        .map(|argument| {
            argument
                .replace("/var/lib/kube-proxy", &dir.display().to_string())
                .replace("$(NODE_NAME)", node)
        })
        .collect()
}

fn service_proxy(arguments: &[String]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_service-proxy"))
        .args(arguments)
        .env_remove("RUST_LOG")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "service-proxy {arguments:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn dry_run(arguments: &[&str], more: Vec<String>) -> (String, String) {
    let mut all: Vec<String> = ["--manifests", MANIFESTS, "--dry-run"]
        .iter()
        .chain(arguments)
        .map(|s| (*s).to_owned())
        .collect();
    all.extend(more);
    let output = service_proxy(&all);
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn kubeadms_configmap_and_command_give_the_rules_of_the_equivalent_flags() {
    let mount = tempfile::tempdir().unwrap();
    mount_configmap(mount.path());
    let (from_file, log) = dry_run(&[], daemonset_arguments(mount.path(), "node-a"));
    let (from_flags, _) = dry_run(
        &[
            "--hostname-override",
            "node-a",
            "--cluster-cidr",
            "10.244.0.0/16",
        ],
        Vec::new(),
    );
    assert_eq!(from_file, from_flags);
    // The file's clusterCIDR is in force: pod sources are not masqueraded.
    assert!(
        from_file.contains("! -s 10.244.0.0/16 -j KUBE-MARK-MASQ"),
        "{from_file}"
    );
    // Every field kubeadm writes is at its default or implemented: no warning.
    assert!(!log.contains("not implemented"), "{log}");
    let (without_file, _) = dry_run(&["--hostname-override", "node-a"], Vec::new());
    assert_ne!(from_file, without_file);
}

#[test]
fn a_flag_given_on_the_command_line_wins_over_the_file() {
    let mount = tempfile::tempdir().unwrap();
    mount_configmap(mount.path());
    let mut arguments = daemonset_arguments(mount.path(), "node-a");
    arguments.extend(["--cluster-cidr=10.200.0.0/16".to_owned()]);
    let (rules, log) = dry_run(&[], arguments);
    assert!(
        rules.contains("! -s 10.200.0.0/16 -j KUBE-MARK-MASQ"),
        "{rules}"
    );
    assert!(!rules.contains("10.244.0.0/16"), "{rules}");
    assert!(
        log.contains("win over the configuration file: --cluster-cidr"),
        "{log}"
    );
}

#[test]
fn a_field_kubeadm_leaves_at_its_default_can_be_set_in_the_file() {
    // iptables.masqueradeBit (the block before ipvs), and conntrack.maxPerCore.
    let iptables_bit = "  masqueradeBit: null\n  minSyncPeriod: 0s\n  syncPeriod: 0s\nipvs:";
    let mount = mount_edited_configmap(iptables_bit, |kubeadms| {
        kubeadms
            .replace(iptables_bit, &iptables_bit.replace("null", "15"))
            .replace("maxPerCore: null", "maxPerCore: 65536")
    });
    let (rules, log) = dry_run(&[], daemonset_arguments(mount.path(), "node-a"));
    assert!(rules.contains("--or-mark 0x8000"), "{rules}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(
        warnings[0]
            .ends_with("not implemented by service-proxy, ignored: conntrack.maxPerCore: 65536"),
        "{log}"
    );
}

#[test]
fn the_field_newer_kubeadm_releases_write_is_read() {
    // kube-proxy's type has since gained iptables.snatNodeInternalIP (a pointer: kubeadm
    // writes it `null`, between minSyncPeriod and syncPeriod).
    let before = "  minSyncPeriod: 0s\n  syncPeriod: 0s\nipvs:";
    let mount = mount_edited_configmap(before, |kubeadms| {
        kubeadms.replace(
            before,
            "  minSyncPeriod: 0s\n  snatNodeInternalIP: null\n  syncPeriod: 0s\nipvs:",
        )
    });
    let (rules, log) = dry_run(&[], daemonset_arguments(mount.path(), "node-a"));
    let (from_flags, _) = dry_run(
        &[
            "--hostname-override",
            "node-a",
            "--cluster-cidr",
            "10.244.0.0/16",
        ],
        Vec::new(),
    );
    assert_eq!(rules, from_flags);
    assert!(!log.contains("not implemented"), "{log}");
}
