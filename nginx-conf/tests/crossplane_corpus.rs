//! Our crossplane payload equals crossplane 0.5.8's on every corpus config where crossplane
//! agrees with nginx; where it does not (its stale directive table), the difference is pinned.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

mod common;

use nginx_conf::crossplane::{Options, payload};
use nginx_conf::{Files, FsResolver, Options as ParseOptions};
use serde_json::Value;
use std::path::Path;

fn ours(dir: &Path, main: &str) -> Value {
    let mut resolver = FsResolver::in_dir(dir);
    let files = Files::load(main, &mut resolver, &ParseOptions::default()).unwrap();
    let json = payload(&files, Options::default()).to_python_string(None);
    serde_json::from_str(&json).unwrap()
}

/// crossplane's directive-table errors: `"x" directive is not allowed here in FILE:LINE` and
/// the like. nginx 1.22 accepts these statements (or rejects them for other reasons).
fn is_table_error(message: &str) -> bool {
    message.contains("directive is not allowed here")
}

/// The first place where two JSON values differ, for readable failures.
fn first_diff(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_diff(p, q, &format!("{path}.{k}")),
                _ => Some(format!("{path}.{k}: only on one side")),
            })
        }
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_diff(p, q, &format!("{path}[{i}]")))
            .or_else(|| {
                (x.len() != y.len()).then(|| format!("{path}: {} vs {} items", x.len(), y.len()))
            }),
        _ => (a != b).then(|| format!("{path}: ours {a} crossplane {b}")),
    }
}

fn assert_same(ours: &Value, expected: &Value, dir: &Path) {
    if let Some(diff) = first_diff(ours, expected, "") {
        panic!("{}: {diff}", dir.display());
    }
}

/// crossplane's `${` quirk: after `${name}` its lexer appends the next byte even when it is a
/// space, so `a${b} c` becomes the one argument `"a${b} c"`. nginx (and we) read two words.
/// Splits such merged arguments in crossplane's payload back into nginx's words; returns how
/// many were split.
fn split_dollar_brace_merges(parsed: &mut [Value]) -> usize {
    let mut count = 0;
    for stmt in parsed {
        if let Some(Value::Array(args)) = stmt.get_mut("args") {
            let mut split = Vec::new();
            for arg in args.iter() {
                let mut rest = arg.as_str().unwrap().to_owned();
                while let Some(at) = rest
                    .find("${")
                    .and_then(|d| rest[d..].find("} ").map(|c| d + c + 1))
                    .filter(|&c| !rest[..c].contains(char::is_whitespace))
                {
                    split.push(Value::from(&rest[..at]));
                    rest = rest[at + 1..].to_owned();
                    count += 1;
                }
                split.push(Value::from(rest));
            }
            *args = split;
        }
        if let Some(Value::Array(block)) = stmt.get_mut("block") {
            count += split_dollar_brace_merges(block);
        }
    }
    count
}

/// Removes from `parsed` the statements crossplane dropped after a table error.
fn drop_statements(parsed: &mut Vec<Value>, dropped: &[(String, u64)]) {
    parsed.retain(|stmt| {
        let key = (
            stmt["directive"].as_str().unwrap().to_owned(),
            stmt["line"].as_u64().unwrap(),
        );
        !dropped.contains(&key)
    });
    for stmt in parsed {
        if let Some(Value::Array(block)) = stmt.get_mut("block") {
            drop_statements(block, dropped);
        }
    }
}

/// Compares payloads; returns (table errors pinned, `${` merges pinned).
fn compare(dir: &Path, main: &str, expected_file: &str) -> (usize, usize) {
    let mut expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(expected_file)).unwrap()).unwrap();
    let mut merges = 0;
    for config in expected["config"].as_array_mut().unwrap() {
        merges += split_dollar_brace_merges(config["parsed"].as_array_mut().unwrap());
    }
    let mut ours = ours(dir, main);
    let table_errors: Vec<(String, u64)> = expected["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| is_table_error(e["error"].as_str().unwrap()))
        .map(|e| {
            let message = e["error"].as_str().unwrap();
            let name = message.split('"').nth(1).unwrap().to_owned();
            (name, e["line"].as_u64().unwrap())
        })
        .collect();
    if table_errors.is_empty() {
        assert_same(&ours, &expected, dir);
        return (0, merges);
    }
    // Pinned divergence: we follow nginx and keep the statements crossplane drops. Apart from
    // them, and from the errors and status they cause, the payloads are equal.
    // Files that only dropped `include` statements brought in are not in crossplane's payload.
    let files: Vec<Value> = expected["config"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["file"].clone())
        .collect();
    ours["config"]
        .as_array_mut()
        .unwrap()
        .retain(|c| files.contains(&c["file"]));
    for payload in [&mut ours, &mut expected] {
        let errors = payload["errors"].as_array_mut().unwrap();
        errors.retain(|e| !is_table_error(e["error"].as_str().unwrap()));
        let failed = !errors.is_empty();
        payload["status"] = Value::from(if failed { "failed" } else { "ok" });
        for config in payload["config"].as_array_mut().unwrap() {
            let errors = config["errors"].as_array_mut().unwrap();
            errors.retain(|e| !is_table_error(e["error"].as_str().unwrap()));
            let failed = !errors.is_empty();
            config["status"] = Value::from(if failed { "failed" } else { "ok" });
            drop_statements(config["parsed"].as_array_mut().unwrap(), &table_errors);
        }
    }
    assert_same(&ours, &expected, dir);
    (table_errors.len(), merges)
}

/// How many `${name} next` merges crossplane makes on nginx-tests (pinned).
const MERGES: usize = 2;

#[test]
fn nginx_tests_payloads_equal_crossplane() {
    let (mut pinned, mut merges) = (0, 0);
    for main in common::main_configs() {
        let (p, m) = compare(
            main.parent().unwrap(),
            "nginx.conf",
            "nginx.crossplane.json",
        );
        pinned += p;
        merges += m;
    }
    assert_eq!(merges, MERGES, "crossplane's `${{name}} next` merges");
    // crossplane's stale table: stream `server_name`/`set`, `resolver` in `upstream`, ...
    assert_eq!(
        pinned, 63,
        "crossplane's 63 false \"not allowed here\" errors"
    );
}

#[test]
fn crossplane_fixtures_payloads_equal_crossplane() {
    let root = common::corpus().join("crossplane-tests");
    for case in [
        "comments-between-args",
        "directive-with-space",
        "empty-value-map",
        "includes-globbed",
        "includes-regular",
        "lua-block-larger",
        "lua-block-simple",
        "lua-block-tricky",
        "messy",
        "non-unicode",
        "quoted-right-brace",
        "russian-text",
        "simple",
        "spelling-mistake",
        "with-comments",
    ] {
        compare(&root.join(case), "nginx.conf", "nginx.crossplane.json");
    }
}
