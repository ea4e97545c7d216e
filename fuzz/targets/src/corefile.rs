//! Fuzz targets for the `corefile` crate.

use std::collections::BTreeMap;

use corefile::emit;
use corefile::import::NoFiles;
use corefile::plugin_order::PluginOrder;
use corefile::view::{self, Options};

use crate::Target;

/// The `corefile` targets.
pub const TARGETS: &[Target] = &[
    Target {
        name: "corefile_parse",
        run: corefile_parse,
    },
    Target {
        name: "corefile_format_roundtrip",
        run: corefile_format_roundtrip,
    },
    Target {
        name: "corefile_regexp",
        run: corefile_regexp,
    },
];

/// Every entry point on arbitrary bytes: the CoreDNS front end (with an environment whose
/// variables refer to themselves and expand to braces), the parse-only view and the lossless
/// tree. None may panic or hang.
pub fn corefile_parse(data: &[u8]) {
    let env: BTreeMap<String, String> = [
        ("A", "a{$A}"),
        ("B", "{"),
        ("C", "{$B}}"),
        ("D", "{$A}{$A}"),
        ("E", "import"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let _ = view::load_with(
        data,
        Options {
            filename: "Corefile",
            order: PluginOrder::default(),
            dns_port: "53",
            env: &env,
            resolver: &mut NoFiles,
        },
    );
    let _ = view::parse_only(data, "Corefile", &PluginOrder::default());
    let _ = corefile::syntax::parse_tree(data);
}

type Semantic = Vec<(Vec<String>, Vec<(String, Vec<String>)>)>;

fn semantic(input: &[u8]) -> Option<Semantic> {
    let blocks = view::parse_only(input, "Corefile", &PluginOrder::default()).ok()?;
    Some(
        blocks
            .into_iter()
            .map(|b| {
                let directives = b
                    .directives
                    .iter()
                    .map(|d| {
                        (
                            d.name.to_string(),
                            b.tokens_of(d).iter().map(|t| t.text.to_string()).collect(),
                        )
                    })
                    .collect();
                (
                    b.raw_keys.iter().map(|k| k.to_string()).collect(),
                    directives,
                )
            })
            .collect(),
    )
}

/// Formats the input; when that succeeds the output must parse to the same blocks,
/// directives and token texts, and formatting it again must change nothing.
pub fn corefile_format_roundtrip(data: &[u8]) {
    let Ok(formatted) = emit::format(data) else {
        return;
    };
    assert_eq!(
        semantic(formatted.as_bytes()),
        semantic(data),
        "formatting changed the meaning:\n{formatted}"
    );
    let again = emit::format(formatted.as_bytes()).expect("formatted output formats again");
    assert_eq!(again, formatted, "formatting is not idempotent");
}

/// The Go regexp check of `errors` `consolidate` patterns on arbitrary text: never panics.
pub fn corefile_regexp(data: &[u8]) {
    let _ = corefile::plugins::re2::check(&String::from_utf8_lossy(data));
}
