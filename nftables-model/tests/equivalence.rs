//! Partial syncs reach the table a full sync writes: after any sequence of changes (Services
//! added, removed, retyped; endpoints added, moved, removed, made local or terminating;
//! affinity switched), the table kept up to date by partial syncs equals the table a fresh
//! proxier writes in one full sync, once the stale chains (flushed, waiting for deletion) are
//! set aside.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

extern crate alloc;

use alloc::collections::{BTreeMap, BTreeSet};

use core::time::Duration;

use common::{ep_port, fake_options_v4, port, service, slice};
use iptables_model::kube::{EndpointSlice, Protocol, Service, ServiceType, TrafficPolicy};
use nftables_model::kube::Proxier;
use nftables_model::kube::names::is_service_chain;
use nftables_model::{Ruleset, Transaction};

/// A small deterministic generator (64-bit LCG), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// Service `i` in one of several shapes, with `eps` endpoints.
fn make(i: u64, shape: u64, eps: u64, rng: &mut Rng) -> (Service, EndpointSlice) {
    let tcp = Protocol::Tcp;
    let name = format!("svc{i}");
    let node_port = 30000 + u16::try_from(i).unwrap();
    let mut s = service(
        "ns",
        &name,
        // Services 1 and 8, 2 and 9, 3 and 10 claim one ClusterIP (as during a delete and
        // re-create): the element follows whichever is written last, in both kinds of sync.
        &format!("172.30.1.{}", i % 7),
        vec![port("p", 80, tcp, node_port)],
    );
    match shape {
        0 => {}
        1 => s.service_type = ServiceType::NodePort,
        2 => {
            s.service_type = ServiceType::LoadBalancer;
            s.load_balancer_ips = vec![format!("1.2.3.{i}")];
            s.load_balancer_source_ranges = vec!["203.0.113.0/25".into()];
        }
        3 => {
            s.service_type = ServiceType::LoadBalancer;
            s.external_traffic_policy = TrafficPolicy::Local;
            s.load_balancer_ips = vec![format!("1.2.4.{i}")];
            s.external_ips = vec![format!("192.168.99.{i}")];
        }
        4 => s.client_ip_affinity = Some(100 + u32::try_from(i).unwrap()),
        _ => s.internal_traffic_policy = TrafficPolicy::Local,
    }
    let ips: Vec<String> = (0..eps)
        .map(|k| format!("10.{}.{k}.{i}", rng.next(3)))
        .collect();
    let nodes: Vec<Option<&str>> = (0..eps)
        .map(|_| {
            if rng.next(2) == 0 {
                Some("test-node")
            } else {
                None
            }
        })
        .collect();
    let list: Vec<(&str, Option<&str>)> = ips.iter().map(String::as_str).zip(nodes).collect();
    let mut e = slice("ns", &name, ep_port("p", 8080, tcp), &list);
    for ep in &mut e.endpoints {
        if rng.next(5) == 0 {
            ep.ready = Some(false);
            ep.serving = Some(true);
            ep.terminating = Some(true);
        }
    }
    (s, e)
}

/// The table without the per-service chains that are empty (stale ones, waiting for their
/// deletion) and without element comments, as a canonical text. (Like kube-proxy, a sync does
/// not rewrite an element whose value is unchanged, so when two Services claim one address
/// the comment may name the one that claimed it first.)
fn settled(table: &Ruleset, tx: &Transaction) -> String {
    let mut t = table.clone();
    t.chains
        .retain(|name, c| !(is_service_chain(name) && c.rules.is_empty()));
    for c in t.containers.values_mut() {
        for e in &mut c.elements {
            e.comment = None;
        }
    }
    nftables_model::canonical::canonical_order(&t.dump(tx.family, &tx.table))
}

#[test]
fn partial_syncs_reach_the_full_sync_table() {
    for seed in 0..12 {
        let mut rng = Rng(seed);
        let mut services: Vec<(Service, EndpointSlice)> = (1..=8)
            .map(|i| {
                let (shape, eps) = (rng.next(6), rng.next(4));
                make(i, shape, eps, &mut rng)
            })
            .collect();
        let mut proxier = Proxier::new(fake_options_v4()).unwrap();
        let mut table = Ruleset::new();
        let mut told_proxier = Proxier::new(fake_options_v4()).unwrap();
        let mut told_table = Ruleset::new();
        let mut now = Duration::ZERO;
        for round in 0..15 {
            // Change a few Services.
            let mut changed = BTreeSet::new();
            for _ in 0..rng.next(3) + 1 {
                let i = rng.next(10) + 1;
                changed.insert(("ns".to_owned(), format!("svc{i}")));
                let pos = services
                    .iter()
                    .position(|(s, _)| s.name == format!("svc{i}"));
                match (rng.next(4), pos) {
                    (0, Some(p)) => {
                        services.remove(p);
                    }
                    (_, Some(p)) => {
                        let (shape, eps) = (rng.next(6), rng.next(4));
                        services[p] = make(i, shape, eps, &mut rng);
                    }
                    (_, None) => {
                        let (shape, eps) = (rng.next(6), rng.next(4));
                        services.push(make(i, shape, eps, &mut rng));
                    }
                }
            }
            now += Duration::from_millis(100 + 700 * rng.next(3));
            let (svcs, slices): (Vec<Service>, Vec<EndpointSlice>) =
                services.iter().cloned().unzip();
            let synced = proxier.sync(&svcs, &slices, now);
            if let Some(cleanup) = &synced.cleanup {
                table
                    .apply(cleanup)
                    .unwrap_or_else(|e| panic!("seed {seed} round {round} cleanup: {e}"));
            }
            table.apply(&synced.transaction).unwrap_or_else(|e| {
                panic!("seed {seed} round {round}: {e}\n{}", synced.transaction)
            });
            proxier.applied(true);

            // The same change told to a proxier that reads only the changed Services.
            let by_key: BTreeMap<(String, String), Service> = svcs
                .iter()
                .map(|s| ((s.namespace.clone(), s.name.clone()), s.clone()))
                .collect();
            let slices_by_key: BTreeMap<(String, String), Vec<EndpointSlice>> = slices
                .iter()
                .map(|e| ((e.namespace.clone(), e.service.clone()), vec![e.clone()]))
                .collect();
            let told = told_proxier.sync_changed(&by_key, &slices_by_key, &changed, now);
            if let Some(cleanup) = &told.cleanup {
                told_table.apply(cleanup).unwrap();
            }
            told_table.apply(&told.transaction).unwrap_or_else(|e| {
                panic!(
                    "seed {seed} round {round} (told): {e}\n{}",
                    told.transaction
                )
            });
            told_proxier.applied(true);
            assert_eq!(
                settled(&told_table, &told.transaction),
                settled(&table, &synced.transaction),
                "seed {seed} round {round} (told)"
            );

            let mut fresh = Proxier::new(fake_options_v4()).unwrap();
            let full = fresh.sync(&svcs, &slices, now);
            let mut reference = Ruleset::new();
            reference.apply(&full.transaction).unwrap();
            assert_eq!(
                settled(&table, &synced.transaction),
                settled(&reference, &full.transaction),
                "seed {seed} round {round}"
            );
        }
    }
}
