//! Property tests: the codec round trip, exact uniformity, and kube-proxy's rule invariants
//! (`checkIPTablesRuleJumps`, `docs/iptables.md` §12) with partial syncs equal to full ones.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::{BTreeMap, BTreeSet};

use iptables_model::codec::{Style, Styled};
use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, LocalDetector, PartialSync, Protocol, Proxier,
    ProxyOptions, Service, ServicePort, ServiceType, SyncRequest, TrafficPolicy, generate,
};
use iptables_model::model::{
    AddrType, CtState, MarkValue, MatchOption, Module, MultiportKind, PortRange, Probability,
    RecentOption,
};
use iptables_model::probability::BigRational;
use iptables_model::probability::{Arithmetic, uniform_distribution};
use iptables_model::{
    Cidr, Command, Line, RestoreFile, Rule, Ruleset, Spec, Table, TableSection, Target, parse,
};
use num_bigint::BigInt;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z0-9/:.-]{1,12}", "[ -~]{0,20}", "[a-zé \"\\\\]{0,8}"]
}

fn cidr() -> impl Strategy<Value = Cidr> {
    (any::<[u8; 4]>(), proptest::option::of(0u8..=32)).prop_map(|(a, p)| Cidr {
        addr: std::net::Ipv4Addr::from(a).into(),
        prefix: p,
    })
}

fn ports() -> impl Strategy<Value = PortRange> {
    (any::<u16>(), any::<u16>()).prop_map(|(a, b)| PortRange {
        start: a.min(b),
        end: a.max(b),
    })
}

fn block() -> impl Strategy<Value = Vec<Spec<'static>>> {
    let m = |module: Module, options: Vec<MatchOption<'static>>| {
        let mut specs = vec![Spec::Module(module)];
        specs.extend(options.into_iter().map(Spec::Option));
        specs
    };
    prop_oneof![
        (any::<bool>(), cidr())
            .prop_map(|(negated, address)| vec![Spec::Source { negated, address }]),
        (any::<bool>(), cidr())
            .prop_map(|(negated, address)| vec![Spec::Destination { negated, address }]),
        (any::<bool>(), "[a-z0-9]{1,6}\\+?").prop_map(|(negated, name)| vec![Spec::InInterface {
            negated,
            name: name.into()
        }]),
        (any::<bool>(), "[a-z0-9]{1,6}").prop_map(|(negated, name)| vec![Spec::OutInterface {
            negated,
            name: name.into()
        }]),
        text().prop_map(move |t| m(Module::Comment, vec![MatchOption::Comment(t.into())])),
        (any::<bool>(), ports(), any::<bool>(), ports()).prop_map(move |(n1, p1, n2, p2)| m(
            Module::Tcp,
            vec![
                MatchOption::SourcePort {
                    negated: n1,
                    ports: p1
                },
                MatchOption::DestinationPort {
                    negated: n2,
                    ports: p2
                }
            ]
        )),
        (
            any::<bool>(),
            proptest::sample::subsequence(CtState::ALL.map(|(s, _)| s).to_vec(), 1..4)
        )
            .prop_map(move |(negated, states)| m(
                Module::Conntrack,
                vec![MatchOption::CtState { negated, states }]
            )),
        (
            any::<bool>(),
            any::<u32>(),
            proptest::option::of(any::<u32>())
        )
            .prop_map(move |(negated, value, mask)| m(
                Module::Mark,
                vec![MatchOption::Mark {
                    negated,
                    mark: MarkValue { value, mask }
                }]
            )),
        (0u64..=10_000_000_000).prop_map(move |d| m(
            Module::Statistic,
            vec![
                MatchOption::StatisticMode(iptables_model::model::StatisticMode::Random),
                MatchOption::Probability {
                    negated: false,
                    probability: Probability::new(&format!(
                        "{}.{:010}",
                        d / 10_000_000_000,
                        d % 10_000_000_000
                    ))
                    .unwrap()
                }
            ]
        )),
        ("[A-Z0-9-]{1,10}", 0u32..100_000).prop_map(move |(name, seconds)| m(
            Module::Recent,
            vec![
                MatchOption::Recent {
                    negated: false,
                    option: RecentOption::Name(name)
                },
                MatchOption::Recent {
                    negated: false,
                    option: RecentOption::Rcheck
                },
                MatchOption::Recent {
                    negated: false,
                    option: RecentOption::Seconds(seconds)
                },
                MatchOption::Recent {
                    negated: false,
                    option: RecentOption::Reap
                },
            ]
        )),
        (
            any::<bool>(),
            proptest::sample::subsequence(AddrType::ALL.map(|(t, _)| t).to_vec(), 1..3)
        )
            .prop_map(move |(negated, types)| m(
                Module::AddrType,
                vec![MatchOption::DstType { negated, types }]
            )),
        (any::<bool>(), proptest::collection::vec(ports(), 1..5)).prop_map(
            move |(negated, ports)| m(
                Module::Multiport,
                vec![MatchOption::Multiport {
                    kind: MultiportKind::Destination,
                    negated,
                    ports
                }]
            )
        ),
        "[a-z_]{1,10}".prop_map(move |n| m(Module::Nfacct, vec![MatchOption::NfacctName(n)])),
        (
            // A name the crate types (`udp`, `mark`...) would read back as that module.
            "[a-z]{2,6}".prop_filter("an untyped module", |name| matches!(
                Module::from_name(name),
                Module::Other(_)
            )),
            // A name the parser reads as a general criterion (`--dst`, `--src`, `--jump`...)
            // is never an unknown module's option: iptables takes it as the criterion.
            "--[a-z]{2,6}".prop_filter("not a general criterion", |name| !matches!(
                name.as_str(),
                "--src" | "--source" | "--dst" | "--match" | "--jump" | "--goto"
            )),
            proptest::collection::vec("[a-z0-9 ,]{0,5}", 0..3)
        )
            .prop_map(move |(module, name, args)| m(
                Module::Other(module),
                vec![MatchOption::unknown(
                    false,
                    name.into(),
                    args.into_iter().map(Into::into).collect(),
                )]
            )),
    ]
}

fn target() -> impl Strategy<Value = Option<Target<'static>>> {
    proptest::option::of(prop_oneof![
        Just(Target::Accept),
        Just(Target::Drop),
        Just(Target::Return),
        "KUBE-[A-Z0-9]{1,16}".prop_map(|c| Target::Jump(c.into())),
        "[a-z]{1,8}".prop_map(|c| Target::Goto(c.into())),
        proptest::option::of("icmp-[a-z-]{1,10}").prop_map(|with| Target::Reject {
            with: with.map(Into::into)
        }),
        (
            proptest::option::of("10\\.[0-9]{1,3}\\.0\\.1:[0-9]{2,4}"),
            any::<bool>()
        )
            .prop_map(|(to, random)| Target::Dnat {
                to: to.map(Into::into),
                random,
                persistent: false
            }),
        any::<bool>().prop_map(|random_fully| Target::Masquerade {
            to_ports: None,
            random: false,
            random_fully
        }),
        any::<u32>().prop_map(|v| Target::Mark(iptables_model::model::MarkAction::OrMark(v))),
        Just(Target::Notrack),
        ("LOG", proptest::collection::vec("--[a-z]{2,6}", 0..2)).prop_map(|(name, args)| {
            Target::other(name.into(), args.into_iter().map(Into::into).collect())
        }),
    ])
}

fn rule() -> impl Strategy<Value = Rule<'static>> {
    (
        proptest::option::of("tcp|udp|icmp|all"),
        proptest::collection::vec(block(), 0..6),
        target(),
    )
        .prop_map(|(protocol, blocks, target)| {
            let mut specs: Vec<Spec> = protocol
                .map(|protocol: String| Spec::Protocol {
                    negated: false,
                    protocol: protocol.as_str().into(),
                })
                .into_iter()
                .collect();
            specs.extend(blocks.into_iter().flatten());
            Rule {
                counters: None,
                specs,
                target,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parse_of_emit_is_identity(rules in proptest::collection::vec(rule(), 0..8)) {
        let mut section = TableSection::new(Table::Filter);
        section.declare("X");
        for r in rules {
            section.append("X", r);
        }
        let file = RestoreFile { tables: vec![section] };
        for style in [Style::Restore, Style::Save] {
            let text = Styled(&file, style).to_string();
            prop_assert_eq!(&parse(&text).unwrap(), &file, "{}", text);
        }
    }
}

#[test]
fn exact_distribution_is_uniform_for_every_n_up_to_1000() {
    for n in 1..=1000u64 {
        let distribution = uniform_distribution(n, Arithmetic::Exact);
        assert_eq!(distribution.len() as u64, n);
        let share = BigRational::new(1.into(), BigInt::from(n));
        assert!(distribution.iter().all(|p| *p == share), "n = {n}");
    }
}

// ---- kube-proxy invariants over random clusters ----

fn cluster() -> impl Strategy<Value = (Vec<Service>, Vec<EndpointSlice>)> {
    let service = (
        0u8..4,
        prop_oneof![
            Just(ServiceType::ClusterIp),
            Just(ServiceType::NodePort),
            Just(ServiceType::LoadBalancer)
        ],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(Just(10800u32)),
        proptest::collection::vec((0u8..6, any::<bool>(), any::<bool>(), any::<bool>()), 0..5),
    );
    proptest::collection::btree_map(0u8..8, service, 0..5).prop_map(|services| {
        let mut out = (Vec::new(), Vec::new());
        for (
            i,
            (port_kind, service_type, etp_local, itp_local, external_ip, ranges, affinity, eps),
        ) in services
        {
            let name = format!("svc{i}");
            let protocol = [Protocol::Tcp, Protocol::Udp, Protocol::Sctp, Protocol::Tcp]
                [usize::from(port_kind)];
            out.0.push(Service {
                namespace: "ns".into(),
                name: name.clone(),
                service_type,
                cluster_ip: format!("172.30.0.{i}"),
                ports: vec![ServicePort {
                    name: "p".into(),
                    port: 80,
                    protocol,
                    node_port: 30000 + u16::from(i),
                }],
                external_ips: if external_ip {
                    vec![format!("192.168.99.{i}")]
                } else {
                    vec![]
                },
                load_balancer_ips: vec![format!("5.6.7.{i}")],
                load_balancer_source_ranges: if ranges {
                    vec!["203.0.113.0/25".into(), "192.168.0.0/24".into()]
                } else {
                    vec![]
                },
                external_traffic_policy: if etp_local {
                    TrafficPolicy::Local
                } else {
                    TrafficPolicy::Cluster
                },
                internal_traffic_policy: if itp_local {
                    TrafficPolicy::Local
                } else {
                    TrafficPolicy::Cluster
                },
                health_check_node_port: 31000 + u16::from(i),
                client_ip_affinity: affinity,
            });
            out.1.push(EndpointSlice {
                namespace: "ns".into(),
                service: name,
                ports: vec![EndpointPort {
                    name: "p".into(),
                    port: 8080,
                    protocol,
                }],
                endpoints: eps
                    .into_iter()
                    .map(|(host, local, ready, terminating)| Endpoint {
                        addresses: vec![format!("10.180.{i}.{host}")],
                        node_name: local.then(|| "test-hostname".into()),
                        ready: Some(ready),
                        serving: Some(true),
                        terminating: Some(terminating),
                        ..Endpoint::default()
                    })
                    .collect(),
            });
        }
        out
    })
}

fn options() -> ProxyOptions {
    let mut o = ProxyOptions::new("test-hostname", "192.168.0.2".parse().unwrap());
    o.local_detector = LocalDetector::Cidr("10.0.0.0/8".parse().unwrap());
    o
}

/// checkIPTablesRuleJumps: jump targets are declared and non-empty (KUBE-NODEPORTS may be
/// empty), every declared non-top-level chain is jumped to.
fn check_jumps(file: &RestoreFile) -> Result<(), String> {
    for section in &file.tables {
        let declared: BTreeSet<&str> = section.chains().map(|c| c.name.as_str()).collect();
        let mut rules: BTreeMap<&str, usize> = BTreeMap::new();
        let mut jumped: BTreeSet<&str> = BTreeSet::new();
        for line in &section.lines {
            if let Line::Command(Command::Append { chain, rule }) = line {
                *rules.entry(chain).or_default() += 1;
                if let Some(t) = rule.target.as_ref().and_then(Target::chain) {
                    jumped.insert(t);
                }
            }
        }
        let deleted: BTreeSet<&str> = section
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Command(Command::DeleteChain(Some(c))) => Some(c.as_str()),
                _ => None,
            })
            .collect();
        for target in &jumped {
            if !declared.contains(target)
                && !["KUBE-MARK-MASQ", "KUBE-NODEPORTS", "KUBE-POSTROUTING"].contains(target)
            {
                return Err(format!(
                    "{}: jump to undeclared {target}",
                    section.table.name()
                ));
            }
            if *target != "KUBE-NODEPORTS" && rules.get(target).copied().unwrap_or(0) == 0 {
                return Err(format!("{}: jump to empty {target}", section.table.name()));
            }
        }
        let top = [
            "KUBE-SERVICES",
            "KUBE-EXTERNAL-SERVICES",
            "KUBE-FORWARD",
            "KUBE-NODEPORTS",
            "KUBE-PROXY-FIREWALL",
            "KUBE-FIREWALL",
            "KUBE-POSTROUTING",
            "KUBE-MARK-MASQ",
        ];
        for chain in declared {
            if !top.contains(&chain) && !jumped.contains(chain) && !deleted.contains(chain) {
                return Err(format!(
                    "{}: {chain} is declared but never jumped to",
                    section.table.name()
                ));
            }
        }
    }
    Ok(())
}

fn kernel_after(files: &[&RestoreFile]) -> String {
    let mut ruleset = Ruleset::new();
    for f in files {
        ruleset.restore(f, true).unwrap();
    }
    Styled(&ruleset.save(false), Style::Save).to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_rules_keep_kube_proxys_invariants((services, slices) in cluster()) {
        let generated = generate(&options(), &services, &slices, SyncRequest { existing_chains: &BTreeSet::new(), changed: None });
        prop_assert_eq!(check_jumps(&generated.restore().unwrap()), Ok(()));
        let mut ruleset = Ruleset::new();
        prop_assert!(ruleset.restore(&generated.restore().unwrap(), true).is_ok());
    }

    #[test]
    fn partial_sync_reaches_the_same_kernel_state_as_a_full_one(
        (services, slices) in cluster(),
        (services2, slices2) in cluster(),
    ) {
        let mut proxier = Proxier::new(options());
        let first = proxier.sync(&services, &slices).restore().unwrap();
        proxier.restored();
        let partial = proxier.sync(&services2, &slices2).restore().unwrap();
        let mut fresh = Proxier::new(options());
        let full = fresh.sync(&services2, &slices2).restore().unwrap();
        prop_assert_eq!(kernel_after(&[&first, &partial]), kernel_after(&[&full]));
    }
}

proptest! {
    // Three syncs per case: fewer cases keep the run short.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn minimal_partial_syncs_reach_the_same_rules_as_a_full_one(
        (services, slices) in cluster(),
        (services2, slices2) in cluster(),
        (services3, slices3) in cluster(),
    ) {
        let mut proxier = Proxier::new(options()).with_partial_sync(PartialSync::Minimal);
        let mut files = Vec::new();
        for (s, e) in [(&services, &slices), (&services2, &slices2), (&services3, &slices3)] {
            files.push(proxier.sync(s, e).restore().unwrap());
            proxier.restored();
        }
        let full = Proxier::new(options()).sync(&services3, &slices3).restore().unwrap();
        // Minimal syncs insert service lines at the top: compare rules, not their order
        // across services, and check the NodePort rule stays last.
        let after: Vec<&RestoreFile> = files.iter().collect();
        let (partial, full) = (kernel_after(&after), kernel_after(&[&full]));
        let sorted = |text: &str| { let mut l: Vec<String> = text.lines().map(Into::into).collect(); l.sort(); l };
        prop_assert_eq!(sorted(&partial), sorted(&full));
        let last = |text: &str| {
            let nat = text.split("*nat").nth(1).unwrap_or_default();
            nat.lines().rfind(|l| l.starts_with("-A KUBE-SERVICES")).map(String::from)
        };
        prop_assert_eq!(last(&partial), last(&full));
    }
}
