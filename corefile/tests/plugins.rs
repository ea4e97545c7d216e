//! Typed plugin configs over the corpus: every accepted Corefile's plugin lines parse, and a
//! config written back parses to the same config.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use corefile::emit::{self, EmitOptions};
use corefile::plugin_order::PluginOrder;
use corefile::plugins::{self, PluginConfig};
use corefile::syntax::{Block, Entry, Item, SyntaxTree, Word};
use corefile::view::{self, BlockView};

fn round_trip<P: PluginConfig + PartialEq + core::fmt::Debug>(
    block: &BlockView,
    name: &str,
    stats: &mut (usize, Vec<String>),
) {
    let Some(parsed) = plugins::config::<P>(block, "Corefile") else {
        return;
    };
    let config = match parsed {
        Ok(config) => config,
        Err(e) => {
            stats.1.push(format!("{name}: {e}"));
            return;
        }
    };
    let tree = SyntaxTree {
        items: vec![Item::Block(Block {
            keys: vec![Word::new(".")],
            body: Some(config.to_lines().into_iter().map(Entry::Line).collect()),
            comment: None,
        })],
    };
    let text = emit::emit(&tree, &EmitOptions::default()).unwrap();
    let blocks = view::parse_only(text.as_bytes(), "Corefile", &PluginOrder::default()).unwrap();
    let again = plugins::config::<P>(&blocks[0], "Corefile")
        .unwrap()
        .unwrap();
    assert_eq!(again, config, "{name}: written as\n{text}");
    stats.0 += 1;
}

#[test]
fn corpus_plugin_configs_parse_and_round_trip() {
    let mut stats = (0usize, Vec::new());
    for path in testdata::files("corefile", "Corefile") {
        let input = std::fs::read(&path).unwrap();
        let Ok(view) = corefile::load(&input) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for block in &view.blocks {
            round_trip::<plugins::Forward>(block, &name, &mut stats);
            round_trip::<plugins::Cache>(block, &name, &mut stats);
            round_trip::<plugins::Log>(block, &name, &mut stats);
            round_trip::<plugins::Errors>(block, &name, &mut stats);
            round_trip::<plugins::Hosts>(block, &name, &mut stats);
            round_trip::<plugins::Whoami>(block, &name, &mut stats);
            round_trip::<plugins::Health>(block, &name, &mut stats);
            round_trip::<plugins::Ready>(block, &name, &mut stats);
            round_trip::<plugins::Prometheus>(block, &name, &mut stats);
            round_trip::<plugins::Bind>(block, &name, &mut stats);
            round_trip::<plugins::Reload>(block, &name, &mut stats);
            round_trip::<plugins::Loop>(block, &name, &mut stats);
            round_trip::<plugins::Debug>(block, &name, &mut stats);
        }
    }
    eprintln!(
        "{} configs round-tripped; {} rejected:\n{}",
        stats.0,
        stats.1.len(),
        stats.1.join("\n")
    );
    assert!(stats.0 > 300);
}

fn plugin_err<P: PluginConfig + core::fmt::Debug>(body: &str) -> String {
    let text = format!(". {{\n{body}\n}}\n");
    let view = corefile::load(text.as_bytes()).unwrap();
    plugins::config::<P>(&view.blocks[0], "Corefile")
        .unwrap()
        .unwrap_err()
        .to_string()
}

#[test]
fn plugin_errors_read_like_coredns() {
    assert_eq!(
        plugin_err::<plugins::Whoami>("    whoami x"),
        "plugin/whoami: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'x'"
    );
    assert_eq!(
        plugin_err::<plugins::Ready>("    ready\n    ready"),
        "plugin/ready: this plugin can only be used once per Server Block"
    );
    assert_eq!(
        plugin_err::<plugins::Forward>("    forward . 1.1.1.1 {\n        bogus\n    }"),
        "plugin/forward: Corefile:3 - Error during parsing: unknown property 'bogus'"
    );
    assert_eq!(
        plugin_err::<plugins::Forward>("    forward ."),
        "plugin/forward: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after '.'"
    );
    assert_eq!(
        plugin_err::<plugins::Cache>("    cache {\n        servfail 6m\n    }"),
        "plugin/cache: caching SERVFAIL responses over 5 minutes is not permitted"
    );
    assert_eq!(
        plugin_err::<plugins::Reload>("    reload 1s"),
        "plugin/reload: interval value must be greater or equal to 2s"
    );
    assert_eq!(
        plugin_err::<plugins::Health>("    health :8080 {\n        lameduck x\n    }"),
        "plugin/health: unable to parse lameduck duration value: \"x\": time: invalid duration \"x\""
    );
    assert_eq!(
        plugin_err::<plugins::Bind>("    bind 127.0.0.1 {\n        only x\n    }"),
        "plugin/bind: invalid option \"only\""
    );
    // coredns plugin/errors/setup_test.go: `consolidate 1m ())` fails Go's regexp.Compile.
    assert_eq!(
        plugin_err::<plugins::Errors>("    errors {\n        consolidate 1m ())\n    }"),
        "plugin/errors: Corefile:3 - Error during parsing: error parsing regexp: unexpected ): `())`"
    );
    assert_eq!(
        plugin_err::<plugins::Errors>("    errors {\n        consolidate 1m a** warning\n    }"),
        "plugin/errors: Corefile:3 - Error during parsing: error parsing regexp: invalid nested repetition operator: `**`"
    );
    assert_eq!(
        plugin_err::<plugins::Hosts>("    hosts {\n        ttl 0\n    }"),
        "plugin/hosts: Corefile:3 - Error during parsing: ttl provided is invalid"
    );
}

#[test]
fn typed_values() {
    let view = corefile::load(
        b". {\n    cache 30 example.org {\n        success 9984 30 5\n        prefetch 10 1m 20%\n        serve_stale 1h verify\n    }\n    reload 10s\n}\n",
    )
    .unwrap();
    let cache: plugins::Cache = plugins::config(&view.blocks[0], "Corefile")
        .unwrap()
        .unwrap();
    assert_eq!(cache.ttl, Some(30));
    assert_eq!(cache.zones, ["example.org"]);
    assert_eq!(
        cache.success,
        Some(plugins::CacheTier {
            capacity: 9984,
            ttl: Some(30),
            min_ttl: Some(5)
        })
    );
    assert_eq!(cache.prefetch.unwrap().percentage, Some(20));
    let reload: plugins::Reload = plugins::config(&view.blocks[0], "Corefile")
        .unwrap()
        .unwrap();
    assert_eq!(reload.interval.to_string(), "10s");
    assert_eq!(reload.jitter.to_string(), "5s");
}

#[test]
fn forward_upstreams_from_a_resolv_conf_file() {
    let view = corefile::load(
        b". {\n    forward . 10.0.0.1:5353 fe80::1%eth0 tls://9.9.9.9 /etc/resolv.conf\n}\n",
    )
    .unwrap();
    let forward: plugins::Forward = plugins::config(&view.blocks[0], "Corefile")
        .unwrap()
        .unwrap();
    let files: Vec<&str> = forward.stanzas[0].files().collect();
    assert_eq!(files, ["/etc/resolv.conf"]);

    let path = std::env::temp_dir().join(format!("corefile-resolv-{}.conf", std::process::id()));
    std::fs::write(
        &path,
        b"# generated\nsearch svc.cluster.local\nnameserver 10.96.0.10\nnameserver ::1\n",
    )
    .unwrap();
    let upstreams = corefile::fs::resolv_conf_upstreams(&path);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(upstreams.unwrap(), ["10.96.0.10:53", "[::1]:53"]);
    assert!(corefile::fs::resolv_conf_upstreams(&path).is_err());
}

/// A directive input as CoreDNS's setup tests hand it to setup (`caddy.NewTestController`):
/// the whole text is the directive's tokens.
fn setup_outcome(plugin: &str, text: &[u8]) -> Result<(), String> {
    use corefile::dispenser::Dispenser;
    use corefile::parser::{FileId, Token};
    fn run<P: PluginConfig>(name: &'static str, tokens: &[Token]) -> Result<(), String> {
        P::parse(&mut Dispenser::new(name, "Corefile", tokens, &[]))
            .map(drop)
            .map_err(|e| e.to_string())
    }
    let tokens: Vec<Token> = corefile::lexer::tokens(text)
        .into_iter()
        .map(|t| Token {
            text: t.text.into(),
            line: u32::try_from(t.line).unwrap(),
            file: FileId::MAIN,
        })
        .collect();
    match plugin {
        "errors" => run::<plugins::Errors>("errors", &tokens),
        "forward" => run::<plugins::Forward>("forward", &tokens),
        "health" => run::<plugins::Health>("health", &tokens),
        "ready" => run::<plugins::Ready>("ready", &tokens),
        other => panic!("no typed config for {other}"),
    }
}

/// Inputs of CoreDNS's plugin setup tests (`testdata/corefile/setup-inputs`), with the
/// outcome of CoreDNS's setup code: the error texts come from the plugins' `setup.go`.
#[test]
fn corpus_setup_inputs_read_like_coredns() {
    let dir = testdata::dir("corefile/setup-inputs");
    let cases: &[(&str, &str, Result<(), &str>)] = &[
        (
            "errors",
            "L24",
            Err("plugin/errors: Corefile:1 - Error during parsing: invalid log file: errors.txt"),
        ),
        (
            "errors",
            "L26",
            Err(
                "plugin/errors: Corefile:1 - Syntax error: Unexpected token 'log', expecting 'Unknown field log'",
            ),
        ),
        (
            "errors",
            "L27",
            Err("plugin/errors: this plugin can only be used once per Server Block"),
        ),
        (
            "errors",
            "L29",
            Err(
                "plugin/errors: Corefile:1 - Error during parsing: Wrong argument count or unexpected line ending after 'b'",
            ),
        ),
        (
            "errors",
            "L40",
            Err("plugin/errors: Corefile:2 - Error during parsing: time: invalid duration \"abc\""),
        ),
        (
            "errors",
            "L46",
            Err(
                "plugin/errors: Corefile:2 - Error during parsing: error parsing regexp: unexpected ): `())`",
            ),
        ),
        ("errors", "L52", Ok(())),
        ("errors", "L62", Ok(())),
        (
            "errors",
            "L75",
            Err(
                "plugin/errors: Corefile:2 - Error during parsing: unknown log level argument in consolidate: invalid_option",
            ),
        ),
        (
            "forward",
            "L54",
            Err("plugin/forward: Corefile:2 - Error during parsing: unknown property 'blaatl'"),
        ),
        (
            "forward",
            "L55",
            Err(
                "plugin/forward: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'domain'",
            ),
        ),
        (
            "forward",
            "L371",
            Err("plugin/forward: strconv.Atoi: parsing \"many\": invalid syntax"),
        ),
        (
            "forward",
            "L372",
            Err("plugin/forward: max_concurrent can't be negative: -4"),
        ),
        ("forward", "L503", Ok(())),
        (
            "forward",
            "L508",
            Err("plugin/forward: time: invalid duration \"no_rec\""),
        ),
        (
            "forward",
            "L510",
            Err("plugin/forward: health_check: unknown option rec"),
        ),
        (
            "forward",
            "L512",
            Err("plugin/forward: health_check: invalid domain name example..org"),
        ),
        (
            "health",
            "L23",
            Err("plugin/health: address bla: missing port in address"),
        ),
        (
            "health",
            "L25",
            Err(
                "plugin/health: unable to parse lameduck duration value: \"a\": time: invalid duration \"a\"",
            ),
        ),
        ("ready", "L31", Ok(())),
        ("ready", "L40", Ok(())),
        (
            "ready",
            "L58",
            Err(
                "plugin/ready: Corefile:3 - Error during parsing: monitor type '404' not supported",
            ),
        ),
        (
            "ready",
            "L65",
            Err("plugin/ready: Corefile:3 - Error during parsing: unknown property 'monitro'"),
        ),
        (
            "ready",
            "L72",
            Err(
                "plugin/ready: Corefile:1 - Error during parsing: Wrong argument count or unexpected line ending after 'b'",
            ),
        ),
    ];
    for (plugin, line, expected) in cases {
        let path = dir.join(format!(
            "setup-coredns-plugin-{plugin}-setup-test-go-{line}.Corefile"
        ));
        let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = setup_outcome(plugin, &text);
        assert_eq!(
            outcome.as_ref().map_err(String::as_str),
            expected.as_ref().map_err(|e| *e),
            "{}",
            path.display()
        );
    }
}
