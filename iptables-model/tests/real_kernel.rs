//! Differential test against the real kernel (`docs/iptables.md` §8, §9): restore generated
//! rulesets with the real `iptables-restore` into a throwaway network namespace, read them back
//! with `iptables-save`, and compare with our restore model and normaliser, on both backends.
//! Skipped, with a message, without root, `ip netns` or iptables (Debian packages `iptables` and
//! `iproute2`).
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::process::Command;

use iptables_model::codec::{Style, Styled};
use iptables_model::kube::{InterfaceName, LocalDetector, Proxier, jump_rules};
use iptables_model::{RestoreFile, Ruleset, Table, parse};
use netns::{Namespace, available};

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn compare(what: &str, kernel: &str, model: &Ruleset) {
    let kernel = parse(kernel)
        .unwrap_or_else(|e| panic!("{what}: iptables-save output does not parse: {e}"));
    let ours = model.save(false);
    for table in [Table::Filter, Table::Nat] {
        let text = |file: &RestoreFile| {
            file.table(table)
                .map(|t| Styled(t, Style::Save).to_string())
                .unwrap_or_default()
        };
        common::assert_text_eq(
            &format!("{what} {}", table.name()),
            &text(&ours),
            &text(&kernel),
        );
    }
}

#[test]
fn real_restore_in_a_namespace_matches_the_model() {
    if !is_root() {
        eprintln!("SKIPPED real_kernel: needs root for network namespaces");
        return;
    }
    let mut ran = 0;
    for backend in ["nft", "legacy"] {
        let (restore, save) = (
            format!("iptables-{backend}-restore"),
            format!("iptables-{backend}-save"),
        );
        if !available(&save) {
            eprintln!(
                "SKIPPED real_kernel/{backend}: {save} not installed (Debian package iptables)"
            );
            continue;
        }
        let ns = match Namespace::add(format!("iptm-{}-{backend}", std::process::id())) {
            Ok(ns) => ns,
            Err(e) => {
                eprintln!(
                    "SKIPPED real_kernel/{backend}: `ip netns add` failed (no iproute2, or the kernel forbids it): {e}"
                );
                continue;
            }
        };
        let args = ["-w", "5", "--noflush", "--counters"];
        let mut model = Ruleset::new();

        // kube-proxy's jumps, then a full sync of vector 01 (nfacct off: its objects do not exist).
        let v = common::vector("01_overall_rules.json");
        let mut options = common::options(&[&v["options"]]);
        options.nfacct = false;
        options.random_fully = true;
        let (services, slices) = common::inputs(&v);
        let mut proxier = Proxier::new(options);
        let full = proxier.sync(&services, &slices).restore().unwrap();
        for file in [&jump_rules(), &full] {
            ns.run(&restore, &args, &file.to_string())
                .unwrap_or_else(|e| panic!("{backend}: kernel refused our restore: {e}\n{file}"));
            model.restore(file, true).unwrap();
        }
        proxier.restored();
        compare(
            &format!("{backend} full"),
            &ns.run(&save, &[], "").unwrap(),
            &model,
        );

        // A partial sync that deletes two services' chains with -X.
        let fewer: Vec<_> = services
            .iter()
            .filter(|s| s.name != "svc4" && s.name != "svc5")
            .cloned()
            .collect();
        let partial = proxier.sync(&fewer, &slices).restore().unwrap();
        assert!(
            partial.to_string().contains("-X KUBE-SEP-"),
            "the partial sync deletes stale chains"
        );
        ns.run(&restore, &args, &partial.to_string())
            .unwrap_or_else(|e| panic!("{backend}: kernel refused the partial restore: {e}"));
        model.restore(&partial, true).unwrap();
        compare(
            &format!("{backend} partial"),
            &ns.run(&save, &[], "").unwrap(),
            &model,
        );

        // Pod traffic told by interface (`--detect-local-mode InterfaceNamePrefix`): `-i veth+`
        // as the kernel saves it.
        let mut by_interface = common::options(&[&v["options"]]);
        by_interface.nfacct = false;
        by_interface.local_detector =
            LocalDetector::InterfaceNamePrefix(InterfaceName::prefix("veth").unwrap());
        let interface_sync = Proxier::new(by_interface)
            .sync(&services, &slices)
            .restore()
            .unwrap();
        assert!(interface_sync.to_string().contains("! -i veth+"));
        ns.run(&restore, &args, &interface_sync.to_string())
            .unwrap_or_else(|e| panic!("{backend}: kernel refused -i veth+: {e}"));
        model.restore(&interface_sync, true).unwrap();
        compare(
            &format!("{backend} interface detector"),
            &ns.run(&save, &[], "").unwrap(),
            &model,
        );

        // What the kernel refuses, the model refuses (the lower rows of `docs/iptables.md` §8).
        for broken in [
            "*nat\n:A - [0:0]\n-A A -j UNDECLARED-CHAIN\nCOMMIT\n",
            "*nat\n-A NO-SUCH-CHAIN -j ACCEPT\nCOMMIT\n",
            "*nat\n-X KUBE-NO-SUCH-CHAIN\nCOMMIT\n",
            "*filter\n:A - [0:0]\n-A A -j DNAT --to-destination 1.2.3.4\nCOMMIT\n",
            "*nat\n:A - [0:0]\n-A A -j REJECT\nCOMMIT\n",
        ] {
            let kernel = ns.run(&restore, &args, broken);
            let ours = model.clone().restore(&parse(broken).unwrap(), true);
            assert!(kernel.is_err(), "{backend}: kernel accepted {broken:?}");
            assert!(ours.is_err(), "{backend}: model accepted {broken:?}");
        }

        // A port option written before the `-p` whose match takes it is an unknown option to
        // iptables, and to the parser (the fuzz finding of issue 29); after `-p`, both take it.
        for (rule, refused) in [
            ("-m comment --comment x --dport 80 -p tcp", true),
            ("-p tcp -m comment --comment x --dport 80", false),
        ] {
            let text = format!("*filter\n:PORTS - [0:0]\n-A PORTS {rule} -j ACCEPT\nCOMMIT\n");
            let kernel = ns.run(&restore, &["--test"], &text);
            assert_eq!(
                kernel.is_err(),
                refused,
                "{backend}: iptables on {rule:?}: {kernel:?}"
            );
            assert_eq!(
                parse(&text).is_err(),
                refused,
                "{backend}: parser on {rule:?}"
            );
        }
        ran += 1;
    }
    eprintln!("real_kernel: {ran} backend(s) checked");
}
