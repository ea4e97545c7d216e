//! The Kubernetes specification's path-matching table (`docs/ingress.md` §1.2), verbatim, end to
//! end: a real nginx on 127.0.0.1 in front of small HTTP backends, each request landing where the
//! spec says. Plus the wildcard-host table and the TLS/SNI and ssl-redirect behaviour.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use support::{Backends, CLASS, Controller, ingress};

/// `(row, rules as (pathType, path), requests as (path, index of the rule that answers or
/// None for the default backend))`.
#[allow(clippy::type_complexity)]
const TABLE: &[(u32, &[(&str, &str)], &[(&str, Option<usize>)])] = &[
    (
        1,
        &[("Prefix", "/")],
        &[("/", Some(0)), ("/any/path", Some(0))],
    ),
    (2, &[("Exact", "/foo")], &[("/foo", Some(0))]),
    (3, &[("Exact", "/foo")], &[("/bar", None)]),
    (4, &[("Exact", "/foo")], &[("/foo/", None)]),
    (5, &[("Exact", "/foo/")], &[("/foo", None)]),
    (
        6,
        &[("Prefix", "/foo")],
        &[("/foo", Some(0)), ("/foo/", Some(0))],
    ),
    (
        7,
        &[("Prefix", "/foo/")],
        &[("/foo", Some(0)), ("/foo/", Some(0))],
    ),
    (8, &[("Prefix", "/aaa/bb")], &[("/aaa/bbb", None)]),
    (9, &[("Prefix", "/aaa/bbb")], &[("/aaa/bbb", Some(0))]),
    (10, &[("Prefix", "/aaa/bbb/")], &[("/aaa/bbb", Some(0))]),
    (11, &[("Prefix", "/aaa/bbb")], &[("/aaa/bbb/", Some(0))]),
    (12, &[("Prefix", "/aaa/bbb")], &[("/aaa/bbb/ccc", Some(0))]),
    (13, &[("Prefix", "/aaa/bbb")], &[("/aaa/bbbxyz", None)]),
    (
        14,
        &[("Prefix", "/"), ("Prefix", "/aaa")],
        &[("/aaa/ccc", Some(1))],
    ),
    (
        15,
        &[("Prefix", "/"), ("Prefix", "/aaa"), ("Prefix", "/aaa/bbb")],
        &[("/aaa/bbb", Some(2))],
    ),
    (
        16,
        &[("Prefix", "/"), ("Prefix", "/aaa"), ("Prefix", "/aaa/bbb")],
        &[("/ccc", Some(0))],
    ),
    (17, &[("Prefix", "/aaa")], &[("/ccc", None)]),
    (
        18,
        &[("Prefix", "/foo"), ("Exact", "/foo")],
        &[("/foo", Some(1))],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn specification_path_table_and_hosts_end_to_end() {
    if support::ran_elsewhere() {
        return;
    }
    let names = ["p0", "p1", "p2", "default", "wild", "exact-host"];
    let backends = Backends::start(&names).await;
    let mut manifests = String::from(CLASS);
    manifests.push_str(&backends.manifests("spec"));
    for (row, rules, _) in TABLE {
        let paths: Vec<(&str, &str, &str)> = rules
            .iter()
            .enumerate()
            .map(|(i, (kind, path))| (*kind, *path, names[i]))
            .collect();
        manifests.push_str(&ingress(
            "spec",
            &format!("row{row}"),
            &format!("row{row}.example.com"),
            "",
            Some("default"),
            &paths,
        ));
    }
    // Hosts: a single-label wildcard, and an exact host that takes precedence over it.
    manifests.push_str(&ingress(
        "spec",
        "wild",
        "*.foo.example.com",
        "",
        None,
        &[("Prefix", "/", "wild")],
    ));
    manifests.push_str(&ingress(
        "spec",
        "exact-host",
        "exact.foo.example.com",
        "",
        None,
        &[("Prefix", "/", "exact-host")],
    ));
    // The longest DNS name (253 bytes) is a valid host: nginx must accept the configuration
    // (its server-name hash bucket sized for it) and serve it.
    let longest = format!(
        "{}.{}.{}.{}",
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(61)
    );
    manifests.push_str(&ingress(
        "spec",
        "longest",
        &longest,
        "",
        None,
        &[("Prefix", "/", "exact-host")],
    ));
    let controller = Controller::start(&manifests).await;

    let mut failures = Vec::new();
    for (row, _, requests) in TABLE {
        let host = format!("row{row}.example.com");
        for (path, expected) in *requests {
            let expected = expected.map_or("default", |i| names[i]);
            let response = controller.get(&host, path).await;
            if response.backend() != expected || response.status != 200 {
                failures.push(format!(
                    "row {row}: {path} answered by {} ({}), expected {expected}",
                    response.backend(),
                    response.status
                ));
            }
        }
    }
    for (host, expected) in [
        ("bar.foo.example.com", "wild"),
        ("BAR.foo.example.com:8080", "wild"),
        ("exact.foo.example.com", "exact-host"),
        (longest.as_str(), "exact-host"),
        // The wildcard covers exactly one label: these fall to the catch-all server, whose
        // default backend is the oldest Ingress's.
        ("baz.bar.foo.example.com", "default"),
        ("foo.example.com", "default"),
    ] {
        let response = controller.get(host, "/").await;
        if response.backend() != expected {
            failures.push(format!(
                "host {host} answered by {}, expected {expected}",
                response.backend()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
