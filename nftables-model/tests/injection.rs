//! Values of Kubernetes objects never become syntax: a Service whose namespace, name or port
//! name would add a statement, close a quote or break a line is left out and reported, and
//! the rest of the sync is written as if it did not exist.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use core::time::Duration;

use common::{ep_port, fake_options_v4, port, service, slice};
use iptables_model::kube::Protocol;
use nftables_model::Ruleset;
use nftables_model::kube::Proxier;

const HOSTILE: [&str; 8] = [
    "svc; flush ruleset",
    "svc\nadd rule ip kube-proxy services drop",
    "svc }",
    "svc\" drop",
    "svc comment \"x\"",
    "svc\r",
    "svc@x",
    "svc\\",
];

#[test]
fn hostile_names_cannot_add_a_statement() {
    let tcp = Protocol::Tcp;
    let good = service("ns", "good", "172.30.0.1", vec![port("p80", 80, tcp, 0)]);
    let good_slice = slice("ns", "good", ep_port("p80", 80, tcp), &[("10.0.0.1", None)]);
    let mut baseline = Proxier::new(fake_options_v4()).unwrap();
    let expected = baseline
        .sync(
            core::slice::from_ref(&good),
            core::slice::from_ref(&good_slice),
            Duration::ZERO,
        )
        .transaction
        .to_text();

    for hostile in HOSTILE {
        for place in 0..3 {
            let (mut ns, mut name, mut port_name) = ("bad", "bad".to_owned(), "p80".to_owned());
            match place {
                0 => ns = hostile,
                1 => name = hostile.into(),
                _ => port_name = hostile.into(),
            }
            let bad = service(
                ns,
                &name,
                "172.30.0.2",
                vec![port(&port_name, 80, tcp, 30080)],
            );
            let bad_slice = slice(
                ns,
                &name,
                ep_port(&port_name, 80, tcp),
                &[("10.0.0.2", None)],
            );
            let mut proxier = Proxier::new(fake_options_v4()).unwrap();
            let synced = proxier.sync(
                &[good.clone(), bad],
                &[good_slice.clone(), bad_slice],
                Duration::ZERO,
            );
            assert_eq!(synced.rejected.len(), 1, "{hostile:?} at {place}");
            assert_eq!(
                synced.transaction.to_text(),
                expected,
                "{hostile:?} at {place} changed the transaction"
            );
            // And the table applies as the kernel would.
            Ruleset::new().apply(&synced.transaction).unwrap();
        }
    }
}

#[test]
fn hostile_interface_names_are_refused() {
    use iptables_model::kube::{InterfaceName, LocalDetector};
    let mut options = fake_options_v4();
    options.proxy.local_detector =
        LocalDetector::BridgeInterface(InterfaceName::new("br\"0;").unwrap());
    assert!(Proxier::new(options).is_err());
}
