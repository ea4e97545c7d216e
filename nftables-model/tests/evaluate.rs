//! The evaluator on generated kube-proxy nftables rulesets: outcomes and their odds, and the
//! same endpoints as `iptables-model`'s evaluator gives the iptables mode for the same
//! Services.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use core::net::IpAddr;
use core::time::Duration;

use iptables_model::kube::{EndpointSlice, Protocol, Service};
use nftables_model::Ruleset;
use nftables_model::eval::{End, EvalError, Host, Packet, Path, SourceNat, evaluate};
use nftables_model::kube::Proxier;
use num_rational::BigRational;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn host() -> Host {
    Host {
        local_addresses: common::fake_options_v4().proxy.interface_addresses,
    }
}

fn ruleset(services: &[Service], slices: &[EndpointSlice]) -> Ruleset {
    let mut proxier = Proxier::new(common::fake_options_v4()).unwrap();
    let synced = proxier.sync(services, slices, Duration::ZERO);
    let mut ruleset = Ruleset::new();
    ruleset.apply(&synced.transaction).unwrap();
    ruleset
}

/// `ns/name` at `cluster_ip:80` with `n` endpoints 10.180.0.1.. on other nodes.
fn service_with(n: u8) -> (Vec<Service>, Vec<EndpointSlice>) {
    let svc = common::service(
        "ns",
        "dns",
        "172.30.0.10",
        vec![common::port("p80", 80, Protocol::Tcp, 0)],
    );
    let eps: Vec<String> = (1..=n).map(|i| format!("10.180.0.{i}")).collect();
    let eps: Vec<(&str, Option<&str>)> = eps.iter().map(|e| (e.as_str(), Some("other"))).collect();
    let slice = common::slice("ns", "dns", common::ep_port("p80", 80, Protocol::Tcp), &eps);
    (vec![svc], vec![slice])
}

fn ratio(n: u64, d: u64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

#[test]
fn three_endpoints_get_a_third_each_and_the_kernels_buckets() {
    let (svcs, slices) = service_with(3);
    let rules = ruleset(&svcs, &slices);
    let packet = Packet::tcp(ip("10.0.0.2"), ip("172.30.0.10"), 80);
    let outcomes = evaluate(&rules, &host(), &packet, Path::Incoming).unwrap();
    assert_eq!(outcomes.len(), 3, "{outcomes:#?}");
    let mut destinations: Vec<_> = outcomes.iter().map(|o| o.destination).collect();
    destinations.sort();
    assert_eq!(
        destinations,
        [ip("10.180.0.1"), ip("10.180.0.2"), ip("10.180.0.3")]
    );
    for o in &outcomes {
        assert_eq!(o.verdict, End::Accept);
        assert_eq!(o.exact, ratio(1, 3));
        // From a pod: not masqueraded.
        assert_eq!(o.source_nat, None);
    }
    // reciprocal_scale: 1431655766, 1431655765, 1431655765 of 2^32.
    let mut kernel: Vec<_> = outcomes.iter().map(|o| o.kernel.clone()).collect();
    kernel.sort();
    assert_eq!(
        kernel,
        [
            ratio(1_431_655_765, 1 << 32),
            ratio(1_431_655_765, 1 << 32),
            ratio(1_431_655_766, 1 << 32)
        ]
    );
}

#[test]
fn traffic_from_outside_the_pods_is_masqueraded() {
    let (svcs, slices) = service_with(1);
    let rules = ruleset(&svcs, &slices);
    let packet = Packet::tcp(ip("192.168.50.7"), ip("172.30.0.10"), 80);
    let outcomes = evaluate(&rules, &host(), &packet, Path::Incoming).unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:#?}");
    assert_eq!(outcomes[0].destination, ip("10.180.0.1"));
    assert_eq!(outcomes[0].source_nat, Some(SourceNat::Masquerade));
    // masquerading clears the mark it tested.
    assert_eq!(outcomes[0].mark, 0);
}

#[test]
fn the_overall_vector_services() {
    let (svcs, slices) = common::overall();
    let rules = ruleset(&svcs, &slices);
    let h = host();
    // A Service without endpoints is rejected (filter chains); an unallocated ClusterIP of
    // the Service CIDR is dropped.
    let to = |dst: &str, port: u16| Packet::tcp(ip("10.0.0.2"), ip(dst), port);
    let no_endpoints = evaluate(&rules, &h, &to("172.30.0.46", 80), Path::Incoming).unwrap();
    assert!(
        matches!(&no_endpoints[..], [o] if matches!(o.verdict, End::Reject { .. })),
        "{no_endpoints:#?}"
    );
    let unallocated = evaluate(&rules, &h, &to("172.30.0.99", 80), Path::Incoming).unwrap();
    assert!(
        matches!(&unallocated[..], [o] if matches!(o.verdict, End::Drop { .. })),
        "{unallocated:#?}"
    );
    // svc4: two endpoints, half each.
    let two = evaluate(&rules, &h, &to("172.30.0.44", 80), Path::Incoming).unwrap();
    assert_eq!(two.len(), 2, "{two:#?}");
    assert!(
        two.iter()
            .all(|o| o.exact == ratio(1, 2) && o.kernel == ratio(1, 2))
    );
    // svc5's load balancer is closed to sources outside 203.0.113.0/25.
    let outside = Packet::tcp(ip("198.51.100.1"), ip("5.6.7.8"), 80);
    let dropped = evaluate(&rules, &h, &outside, Path::Incoming).unwrap();
    assert!(
        matches!(&dropped[..], [o] if matches!(o.verdict, End::Drop { .. })),
        "{dropped:#?}"
    );
    let inside = Packet::tcp(ip("203.0.113.9"), ip("5.6.7.8"), 80);
    let allowed = evaluate(&rules, &h, &inside, Path::Incoming).unwrap();
    assert!(
        allowed
            .iter()
            .all(|o| o.verdict == End::Accept && o.destination == ip("10.180.0.3")),
        "{allowed:#?}"
    );
}

#[test]
fn the_same_endpoints_as_the_iptables_mode_and_exactly_uniform() {
    // The same Services through both generators: each packet ends at the same endpoints. The
    // nftables mode's odds as written are exactly 1/n; the iptables mode writes each
    // `--probability` with ten decimals, so its odds are 1/n within 10^-10 (docs/iptables.md
    // §4.3): for five endpoints 0.19999999998, 0.20000000001 and the like.
    let (svcs, slices) = service_with(5);
    let nft = ruleset(&svcs, &slices);
    let iptables = common::iptables_ruleset(&svcs, &slices);
    let packet = Packet::tcp(ip("10.0.0.2"), ip("172.30.0.10"), 80);
    let ours = evaluate(&nft, &host(), &packet, Path::Incoming).unwrap();
    let theirs =
        iptables_model::eval::evaluate(&iptables, &host(), &packet, Path::Incoming).unwrap();
    let endpoints = |outcomes: &[nftables_model::eval::Outcome]| {
        let mut v: Vec<_> = outcomes
            .iter()
            .map(|o| (o.destination, o.destination_port, o.verdict.clone()))
            .collect();
        v.sort_by_key(|(ip, port, _)| (*ip, *port));
        v
    };
    assert_eq!(endpoints(&ours), endpoints(&theirs));
    let fifth = ratio(1, 5);
    assert!(ours.iter().all(|o| o.exact == fifth), "{ours:#?}");
    let tolerance = ratio(1, 10_000_000_000);
    for o in &theirs {
        let off = if o.exact > fifth {
            &o.exact - &fifth
        } else {
            &fifth - &o.exact
        };
        assert!(off < tolerance, "{o:?}");
    }
}

#[test]
fn a_rule_outside_kube_proxys_dialect_is_an_error() {
    let (svcs, slices) = service_with(1);
    let mut rules = ruleset(&svcs, &slices);
    let services = nftables_model::Name::new("services").unwrap();
    let chain = rules.chains.get_mut(&services).unwrap();
    chain.rules.insert(
        0,
        nftables_model::Rule::new(
            services.clone(),
            nftables_model::RuleText::new().word("counter"),
        ),
    );
    let packet = Packet::tcp(ip("10.0.0.2"), ip("172.30.0.10"), 80);
    let error = evaluate(&rules, &host(), &packet, Path::Incoming).unwrap_err();
    assert!(matches!(error, EvalError::Unreadable { .. }), "{error}");
}

#[test]
fn a_numgen_map_without_every_bucket_passes_the_rest_on() {
    // Bucket 0 drops (its second entry and bucket 7, past the modulus, are not used); buckets
    // 1 and 2 have no element: the rule ends without a verdict and the Service is reached.
    let (svcs, slices) = service_with(1);
    let mut rules = ruleset(&svcs, &slices);
    let services = nftables_model::Name::new("services").unwrap();
    let text = nftables_model::RuleText::new()
        .word("numgen")
        .word("random")
        .word("mod")
        .number(3)
        .word("vmap")
        .word("{")
        .number(0)
        .word(":")
        .word("drop")
        .word(",")
        .number(0)
        .word(":")
        .word("accept")
        .word(",")
        .number(7)
        .word(":")
        .word("drop")
        .word("}");
    let chain = rules.chains.get_mut(&services).unwrap();
    chain
        .rules
        .insert(0, nftables_model::Rule::new(services.clone(), text));
    let packet = Packet::tcp(ip("10.0.0.2"), ip("172.30.0.10"), 80);
    let outcomes = evaluate(&rules, &host(), &packet, Path::Incoming).unwrap();
    assert_eq!(outcomes.len(), 2, "{outcomes:#?}");
    let dropped = outcomes
        .iter()
        .find(|o| matches!(o.verdict, End::Drop { .. }))
        .unwrap();
    assert_eq!(dropped.exact, ratio(1, 3));
    assert_eq!(dropped.kernel, ratio(1_431_655_766, 1 << 32));
    let served = outcomes.iter().find(|o| o.verdict == End::Accept).unwrap();
    assert_eq!(served.destination, ip("10.180.0.1"));
    assert_eq!(served.exact, ratio(2, 3));
    assert_eq!(served.kernel, ratio(2 * 1_431_655_765, 1 << 32));
}
