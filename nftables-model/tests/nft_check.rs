//! The real `nft` accepts what we generate: in a private network namespace, every transaction
//! of a sequence of syncs (full, IPv4 and IPv6, local traffic told by CIDR or by interface,
//! unchanged, one endpoint moved, a Service gone,
//! its chains deleted later) passes `nft -c -f -` and is then applied with `nft -f -`, so the
//! next one is checked against the table the kernel really holds. Runs as root with `ip` and
//! `nft` (Debian packages `iproute2`, `nftables`); prints `skipped: ...` otherwise.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{fake_options_v4, fake_options_v6, many, overall};
use iptables_model::kube::{InterfaceName, LocalDetector};
use netns::Namespace;
use nftables_model::Transaction;
use nftables_model::kube::{NftOptions, Proxier};

/// `nft ARGS -f -` with `input` in `ns`.
fn nft(ns: &Namespace, args: &[&str], input: &str) -> Result<(), String> {
    let all: Vec<&str> = args.iter().copied().chain(["-f", "-"]).collect();
    ns.run("nft", &all, input).map(drop)
}

/// Checks `tx` with `nft -c`, then applies it.
fn check_and_apply(ns: &Namespace, what: &str, tx: &Transaction) {
    if tx.is_empty() {
        return;
    }
    let text = tx.to_text();
    if let Err(e) = nft(ns, &["-c"], &text) {
        panic!("{what}: nft -c refused the transaction: {e}\n{text}");
    }
    if let Err(e) = nft(ns, &[], &text) {
        panic!("{what}: nft -f refused the transaction: {e}\n{text}");
    }
}

fn missing() -> Option<String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        return Some("not root (network namespaces need it)".into());
    }
    for (program, flag, package) in [("nft", "--version", "nftables"), ("ip", "-V", "iproute2")] {
        let found = Command::new(program)
            .arg(flag)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Some(format!(
                "{program} not installed (Debian package {package})"
            ));
        }
    }
    None
}

/// The sequence of syncs of one family in one namespace.
fn sequence(ns: &Namespace, options: NftOptions) {
    let family = if options.proxy.ipv6 { "ipv6" } else { "ipv4" };
    let mut proxier = Proxier::new(options).unwrap();
    let (mut services, mut slices) = if family == "ipv4" {
        // The two sets overlap: ns/svc41-46 have the ClusterIPs of ns1/svc1-ns6/svc6, two
        // Services claiming one address, and the element must follow whichever is written last.
        let (mut s, mut e) = overall();
        let (more_s, more_e) = many(50);
        s.extend(more_s);
        e.extend(more_e);
        (s, e)
    } else {
        overall_v6()
    };
    let mut at = Duration::ZERO;
    let sync = |proxier: &mut Proxier, services: &[_], slices: &[_], what: &str, at: Duration| {
        let synced = proxier.sync(services, slices, at);
        assert!(synced.rejected.is_empty(), "{what}: {:?}", synced.rejected);
        if let Some(cleanup) = &synced.cleanup {
            // The model's clock says the chains have been stale for a second; the kernel's
            // must too (before 6.2 it notices late that a deleted map element no longer
            // refers to a chain, which is why kube-proxy waits).
            std::thread::sleep(Duration::from_millis(1100));
            check_and_apply(ns, &format!("{family} {what} (cleanup)"), cleanup);
        }
        check_and_apply(ns, &format!("{family} {what}"), &synced.transaction);
        proxier.applied(true);
    };
    sync(&mut proxier, &services, &slices, "full sync", at);
    at += Duration::from_millis(100);
    sync(&mut proxier, &services, &slices, "unchanged", at);
    // One endpoint moves.
    slices[0].endpoints[0].addresses = vec![
        if family == "ipv4" {
            "10.180.9.9"
        } else {
            "fd00:10::99"
        }
        .into(),
    ];
    at += Duration::from_millis(100);
    sync(&mut proxier, &services, &slices, "one endpoint moved", at);
    // A Service goes away: its chains are flushed...
    let gone = services.remove(0);
    slices.retain(|e| e.service != gone.name || e.namespace != gone.namespace);
    at += Duration::from_millis(100);
    sync(&mut proxier, &services, &slices, "a Service gone", at);
    // ...and deleted by a sync more than a second later.
    at += Duration::from_secs(2);
    sync(&mut proxier, &services, &slices, "stale chains deleted", at);
    // A restart: a full sync over the existing table (base chains recreated).
    let mut fresh = Proxier::new(proxier.options().clone()).unwrap();
    sync(
        &mut fresh,
        &services,
        &slices,
        "full sync over an existing table",
        at,
    );
}

/// `overall()` with the IPv6 addresses of kube-proxy's IPv6 fake proxier.
fn overall_v6() -> (
    Vec<iptables_model::kube::Service>,
    Vec<iptables_model::kube::EndpointSlice>,
) {
    let (mut services, mut slices) = overall();
    for (i, s) in services.iter_mut().enumerate() {
        s.cluster_ip = format!("fd00:10:96::{:x}", 0x41 + i);
        s.external_ips = s
            .external_ips
            .iter()
            .map(|_| format!("2001:db8:99::{:x}", 0x22 + i))
            .collect();
        s.load_balancer_ips = s
            .load_balancer_ips
            .iter()
            .map(|_| format!("2001:db8:1:2::{:x}", i + 1))
            .collect();
        s.load_balancer_source_ranges = s
            .load_balancer_source_ranges
            .iter()
            .map(|_| "2001:db8:3::/64".into())
            .collect();
    }
    for e in &mut slices {
        for ep in &mut e.endpoints {
            let v4: std::net::Ipv4Addr = ep.addresses[0].parse().unwrap();
            ep.addresses = vec![format!("fd00:10::{:x}", v4.octets()[3])];
        }
    }
    (services, slices)
}

#[test]
fn nft_accepts_every_generated_transaction() {
    if let Some(why) = missing() {
        println!("skipped: {why}");
        return;
    }
    // Traffic from local pods told by interface: kube-proxy's bare `iifname veth*`, and a
    // name nft can only read quoted.
    let mut by_prefix = fake_options_v4();
    by_prefix.proxy.local_detector =
        LocalDetector::InterfaceNamePrefix(InterfaceName::prefix("veth").unwrap());
    let mut by_bridge = fake_options_v6();
    by_bridge.proxy.local_detector =
        LocalDetector::BridgeInterface(InterfaceName::new("br@0").unwrap());
    let runs = [
        ("v4", fake_options_v4()),
        ("v6", fake_options_v6()),
        ("v4-prefix", by_prefix),
        ("v6-bridge", by_bridge),
    ];
    for (family, options) in runs {
        let ns = match Namespace::add(format!("nftm-{}-{family}", std::process::id())) {
            Ok(ns) => ns,
            Err(e) => {
                println!("skipped: network namespaces ({e})");
                return;
            }
        };
        // The harness itself: nft does refuse a rule in a chain that does not exist.
        assert!(nft(&ns, &["-c"], "add table ip t\nadd rule ip t nosuch drop\n").is_err());
        sequence(&ns, options);
    }
}
