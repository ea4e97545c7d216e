//! The exact evaluator on generated kube-proxy rulesets: outcomes and their odds
//! (`docs/iptables.md` §4, §6).
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::collections::BTreeSet;
use std::net::IpAddr;

use iptables_model::eval::{
    Host, Packet, Path, SourceNat, Verdict, evaluate, evaluate_with_budget,
};
use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, Service, ServicePort, SyncRequest, generate, jump_rules,
};
use iptables_model::probability::{Arithmetic, uniform_distribution};
use iptables_model::{Ruleset, TraceError, parse};
use num_rational::BigRational;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn host() -> Host {
    Host {
        local_addresses: common::interface_addresses(),
    }
}

fn ruleset(services: &[Service], slices: &[EndpointSlice]) -> Ruleset {
    let options = common::options(&[]);
    let generated = generate(
        &options,
        services,
        slices,
        SyncRequest {
            existing_chains: &BTreeSet::new(),
            changed: None,
        },
    );
    let mut ruleset = Ruleset::new();
    ruleset.restore(&jump_rules(), true).unwrap();
    ruleset
        .restore(&generated.restore().unwrap(), true)
        .unwrap();
    ruleset
}

fn service_with(n: u8) -> (Vec<Service>, Vec<EndpointSlice>) {
    let service = Service {
        namespace: "kube-system".into(),
        name: "kube-dns".into(),
        cluster_ip: "10.96.0.10".into(),
        ports: vec![ServicePort {
            name: "dns".into(),
            port: 53,
            protocol: iptables_model::kube::Protocol::Udp,
            node_port: 0,
        }],
        ..Service::default()
    };
    let slice = EndpointSlice {
        namespace: "kube-system".into(),
        service: "kube-dns".into(),
        ports: vec![EndpointPort {
            name: "dns".into(),
            port: 53,
            protocol: iptables_model::kube::Protocol::Udp,
        }],
        endpoints: (1..=n)
            .map(|i| Endpoint {
                addresses: vec![format!("10.244.0.{i}")],
                ..Endpoint::default()
            })
            .collect(),
    };
    (vec![service], vec![slice])
}

#[test]
fn three_endpoints_get_the_decimal_and_kernel_odds_of_spec_4_3() {
    let (services, slices) = service_with(3);
    let rules = ruleset(&services, &slices);
    let mut packet = Packet::tcp(ip("10.0.0.2"), ip("10.96.0.10"), 53);
    packet.protocol = "udp".into();
    let outcomes = evaluate(&rules, &host(), &packet, Path::Incoming).unwrap();
    assert_eq!(outcomes.len(), 3);
    let decimal = uniform_distribution(3, Arithmetic::Decimal);
    let kernel = uniform_distribution(3, Arithmetic::Kernel);
    for (i, outcome) in outcomes.iter().enumerate() {
        let endpoint: usize = match outcome.destination.to_string().as_str() {
            "10.244.0.1" => 0,
            "10.244.0.2" => 1,
            "10.244.0.3" => 2,
            other => panic!("outcome {i} goes to {other}"),
        };
        assert_eq!(outcome.verdict, Verdict::Accept);
        assert_eq!(outcome.destination_port, 53);
        assert_eq!(outcome.source_nat, None, "pod traffic is not masqueraded");
        assert_eq!(outcome.exact, decimal[endpoint]);
        assert_eq!(outcome.kernel, kernel[endpoint]);
    }
    let total: BigRational = outcomes.iter().map(|o| o.kernel.clone()).sum();
    assert_eq!(total, BigRational::from_integer(1.into()));
}

#[test]
fn node_traffic_is_masqueraded_and_the_mark_cleared_spec_6() {
    let (services, slices) = service_with(2);
    let rules = ruleset(&services, &slices);
    let mut packet = Packet::tcp(ip("192.168.0.2"), ip("10.96.0.10"), 53);
    packet.protocol = "udp".into();
    let outcomes = evaluate(&rules, &host(), &packet, Path::Local).unwrap();
    assert_eq!(outcomes.len(), 2);
    for o in &outcomes {
        assert_eq!(o.source_nat, Some(SourceNat::Masquerade));
        assert_eq!(o.mark, 0);
        assert_eq!(o.exact, BigRational::new(1.into(), 2.into()));
    }
}

#[test]
fn service_without_endpoints_is_rejected_in_filter() {
    let (services, _) = service_with(0);
    let rules = ruleset(&services, &[]);
    let mut packet = Packet::tcp(ip("10.0.0.2"), ip("10.96.0.10"), 53);
    packet.protocol = "udp".into();
    let outcomes = evaluate(&rules, &host(), &packet, Path::Incoming).unwrap();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(
        outcomes[0].verdict,
        Verdict::Reject {
            chain: "KUBE-SERVICES".into()
        }
    );
}

#[test]
fn exponential_branching_stops_at_the_budget() {
    let mut text = String::from("*mangle\n");
    for i in 0..40 {
        text.push_str(&format!("-A PREROUTING -m statistic --mode random --probability 0.5 -j MARK --set-xmark {i}/0xffffffff\n"));
    }
    text.push_str("COMMIT\n");
    let mut rules = Ruleset::new();
    rules.restore(&parse(&text).unwrap(), true).unwrap();
    let packet = Packet::tcp(ip("10.0.0.2"), ip("10.96.0.10"), 53);
    let err = evaluate_with_budget(&rules, &host(), &packet, Path::Incoming, 10_000).unwrap_err();
    assert_eq!(err, TraceError::BudgetExhausted { budget: 10_000 });
}
