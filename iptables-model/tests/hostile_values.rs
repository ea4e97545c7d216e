//! Hostile values never become restore syntax: a Service whose port name carries a rule is
//! left out of the sync with an error naming the field, and any model built with arbitrary
//! strings is either written with exactly the structure that was built or refused by name.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeSet;

use iptables_model::codec::Style;
use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, Protocol, Proxier, ProxyOptions, Rejected, Service,
    ServicePort, SyncRequest, generate,
};
use iptables_model::model::{ChainLine, MatchOption, Module, RecentOption};
use iptables_model::{
    Command, EmitError, Field, IpProtocol, Line, RestoreFile, Rule, Spec, Table, TableSection,
    Target, parse,
};
use proptest::prelude::*;

/// The payload of issue #28: a port name that, written raw into `--comment`, ends the line and
/// adds a DNAT rule of its own.
const PAYLOAD: &str =
    "x\n-A KUBE-SERVICES -p tcp -d 10.96.0.1 --dport 443 -j DNAT --to-destination 6.6.6.6:443\n#";

fn service(name: &str, ip: &str, port_name: &str) -> Service {
    Service {
        namespace: "ns".into(),
        name: name.into(),
        cluster_ip: ip.into(),
        ports: vec![ServicePort {
            name: port_name.into(),
            port: 443,
            protocol: Protocol::Tcp,
            node_port: 0,
        }],
        ..Service::default()
    }
}

fn slice(name: &str, port_name: &str, address: &str) -> EndpointSlice {
    EndpointSlice {
        namespace: "ns".into(),
        service: name.into(),
        ports: vec![EndpointPort {
            name: port_name.into(),
            port: 8443,
            protocol: Protocol::Tcp,
        }],
        endpoints: vec![Endpoint {
            addresses: vec![address.into()],
            ..Endpoint::default()
        }],
    }
}

fn options() -> ProxyOptions {
    ProxyOptions::new("node-a", [192, 168, 0, 2].into())
}

fn rejected(name: &str, field: Field, value: &str) -> Rejected {
    Rejected {
        namespace: "ns".into(),
        name: name.into(),
        error: EmitError {
            field,
            value: value.into(),
        },
    }
}

#[test]
fn a_port_name_carrying_a_rule_is_refused_and_adds_no_line() {
    let good = service("web", "172.30.0.10", "https");
    let evil = service("evil", "172.30.0.11", PAYLOAD);
    let slices = [
        slice("web", "https", "10.0.0.1"),
        slice("evil", PAYLOAD, "10.0.0.2"),
    ];
    let request = SyncRequest {
        existing_chains: &BTreeSet::new(),
        changed: None,
    };
    let alone = generate(&options(), std::slice::from_ref(&good), &slices, request);
    let both = generate(&options(), &[good.clone(), evil.clone()], &slices, request);
    assert!(!both.text.contains("6.6.6.6"), "{}", both.text);
    // The hostile Service is left out as if it did not exist; the valid one is written.
    assert_eq!(both.text, alone.text);
    assert!(both.text.contains("ns/web:https cluster IP"));
    assert_eq!(
        both.rejected,
        [rejected("evil", Field::ServicePortName, PAYLOAD)]
    );
    assert!(both.rejected[0].to_string().contains("spec.ports[].name"));
    parse(&both.text).unwrap();

    // The proxier, in a full sync and in a partial one that adds the hostile Service.
    let mut proxier = Proxier::new(options());
    let full = proxier.sync(std::slice::from_ref(&good), &slices).clone();
    assert!(full.rejected.is_empty());
    proxier.restored();
    proxier.update_service(evil);
    let partial = proxier.sync_changes();
    assert!(!partial.full);
    assert!(!partial.text.contains("6.6.6.6"), "{}", partial.text);
    assert_eq!(
        partial.rejected,
        [rejected("evil", Field::ServicePortName, PAYLOAD)]
    );
}

#[test]
fn a_namespace_or_name_with_a_control_character_is_refused_by_name() {
    let mut by_namespace = service("a", "172.30.0.12", "p");
    by_namespace.namespace = "ns\r".into();
    let by_name = service("b\0", "172.30.0.13", "p");
    let request = SyncRequest {
        existing_chains: &BTreeSet::new(),
        changed: None,
    };
    let generated = generate(&options(), &[by_namespace, by_name], &[], request);
    // In (namespace, name) order: `ns/b\0` before `ns\r/a`.
    let fields: Vec<Field> = generated.rejected.iter().map(|r| r.error.field).collect();
    assert_eq!(fields, [Field::ServiceName, Field::ServiceNamespace]);
    assert!(!generated.text.contains('\r') && !generated.text.contains('\0'));
}

// ---- every string field of the model, with hostile strings ----

/// Strings that try to be syntax: line breaks, NULs and other controls, quotes, backslashes,
/// blanks, restore keywords; or anything at all.
fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\n"),
        Just("\r"),
        Just("\0"),
        Just("\t"),
        Just("\u{85}"),
        Just("\u{2028}"),
        Just("\""),
        Just("\\"),
        Just("'"),
        Just(" "),
        Just("!"),
        Just("-A"),
        Just("#"),
        Just("COMMIT"),
        Just("*nat"),
        Just(":X"),
        Just("x"),
        Just("é"),
    ];
    prop_oneof![
        proptest::collection::vec(piece, 0..6).prop_map(|p| p.concat()),
        any::<String>(),
        "[a-z]{1,8}",
    ]
}

/// A field of the model and the rule holding a hostile string in it.
fn hostile_rule() -> impl Strategy<Value = (Field, Rule<'static>)> {
    let h = hostile;
    prop_oneof![
        h().prop_map(|t| (Field::Comment, Rule::new().comment(t))),
        h().prop_map(|t| (
            Field::InInterface,
            Rule::new().with(Spec::InInterface {
                negated: false,
                name: t.into()
            })
        )),
        h().prop_map(|t| (
            Field::OutInterface,
            Rule::new().with(Spec::OutInterface {
                negated: false,
                name: t.into()
            })
        )),
        h().prop_map(|t| (
            Field::Protocol,
            Rule::new().with(Spec::Protocol {
                negated: false,
                protocol: IpProtocol::Other(t)
            })
        )),
        h().prop_map(|t| (Field::Module, Rule::new().module(Module::Other(t)))),
        h().prop_map(|t| (
            Field::RecentName,
            Rule::new()
                .module(Module::Recent)
                .option(MatchOption::Recent {
                    negated: false,
                    option: RecentOption::Name(t)
                })
        )),
        h().prop_map(|t| (
            Field::NfacctName,
            Rule::new()
                .module(Module::Nfacct)
                .option(MatchOption::NfacctName(t))
        )),
        h().prop_map(|t| (
            Field::OptionName,
            Rule::new()
                .module(Module::Other("foo".into()))
                .option(MatchOption::unknown(false, t.into(), vec![]))
        )),
        h().prop_map(|t| (
            Field::OptionArgument,
            Rule::new()
                .module(Module::Other("foo".into()))
                .option(MatchOption::unknown(false, "--bar".into(), vec![t.into()]))
        )),
        h().prop_map(|t| (Field::Chain, Rule::new().target(Target::Jump(t.into())))),
        h().prop_map(|t| (Field::Chain, Rule::new().target(Target::Goto(t.into())))),
        h().prop_map(|t| (
            Field::TargetName,
            Rule::new().target(Target::other(t.as_str().into(), vec![]))
        )),
        h().prop_map(|t| (
            Field::TargetArgument,
            Rule::new().target(Target::other("LOG".into(), vec![t.into()]))
        )),
        h().prop_map(|t| (
            Field::RejectWith,
            Rule::new().target(Target::Reject {
                with: Some(t.into())
            })
        )),
        h().prop_map(|t| (
            Field::ToDestination,
            Rule::new().target(Target::Dnat {
                to: Some(t.into()),
                random: false,
                persistent: false
            })
        )),
        h().prop_map(|t| (
            Field::ToSource,
            Rule::new().target(Target::Snat {
                to: Some(t.into()),
                random: false,
                random_fully: false,
                persistent: false
            })
        )),
        h().prop_map(|t| (
            Field::ToPorts,
            Rule::new().target(Target::Masquerade {
                to_ports: Some(t.into()),
                random: false,
                random_fully: false
            })
        )),
    ]
}

/// The line structure of a document: per table, each line's kind and chain.
fn structure(file: &RestoreFile<'_>) -> Vec<(Table, Vec<(char, String)>)> {
    file.tables
        .iter()
        .map(|t| {
            let lines = t
                .lines
                .iter()
                .map(|l| match l {
                    Line::Chain(c) => (':', c.name.to_string()),
                    Line::Command(Command::Append { chain, .. }) => ('A', chain.to_string()),
                    Line::Command(other) => ('?', format!("{other:?}")),
                })
                .collect();
            (t.table, lines)
        })
        .collect()
}

/// Whether the refusal of `error` is right for a hostile value put in `field`.
fn refusal_is_right(error: &EmitError, field: Field, value: &str) -> bool {
    error.field == field && error.value == value
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A hostile string in any field of a rule, with a hostile chain declared and appended to:
    /// whenever the writer accepts, the text has exactly the built lines (no extra rule, chain
    /// or table) and parses back to the same structure; when it refuses, the error names the
    /// field holding the hostile string.
    #[test]
    fn hostile_strings_are_written_as_built_or_refused_by_name(
        (field, rule) in hostile_rule(),
        chain in hostile(),
        table in proptest::sample::select(Table::ALL.to_vec()),
        style in proptest::sample::select(vec![Style::Restore, Style::Save]),
    ) {
        let mut section = TableSection::new(table);
        section.lines.push(Line::Chain(ChainLine {
            name: chain.as_str().into(),
            policy: None,
            counters: None,
        }));
        section.append("KUBE-X", Rule::new().target(Target::Accept));
        section.append("KUBE-X", rule.clone());
        let file = RestoreFile { tables: vec![section, TableSection::new(Table::Filter)] };
        match file.to_text(style) {
            Ok(text) => {
                // `*table`, three lines, `COMMIT`, then the empty filter table.
                let lines: Vec<&str> = text.split('\n').collect();
                prop_assert_eq!(lines.len(), 8, "{:?}", text);
                let starts = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
                prop_assert_eq!(starts("*"), 2, "{:?}", text);
                prop_assert_eq!(starts(":"), 1, "{:?}", text);
                prop_assert_eq!(starts("-A KUBE-X "), 2, "{:?}", text);
                prop_assert_eq!(lines.iter().filter(|l| **l == "COMMIT").count(), 2, "{:?}", text);
                // Whatever iptables makes of the words, they stay in their line; where the
                // model's parser reads them, the structure is the one built.
                if let Ok(again) = parse(&text) {
                    prop_assert_eq!(structure(&again), structure(&file), "{:?}", text);
                }
                // Free text that round-trips by construction reads back exactly.
                if matches!(field, Field::Comment | Field::ToDestination | Field::ToSource) {
                    prop_assert_eq!(parse(&text).unwrap(), file, "{:?}", text);
                }
            }
            Err(error) => {
                let declared = refusal_is_right(&error, Field::Chain, &chain);
                let in_rule = match field {
                    Field::Comment => rule.comment_text().is_some_and(|t| refusal_is_right(&error, field, t)),
                    _ => error.field == field,
                };
                prop_assert!(declared || in_rule, "{error} for {field:?} in {rule:?}");
                prop_assert!(!error.to_string().is_empty());
            }
        }
    }
}
