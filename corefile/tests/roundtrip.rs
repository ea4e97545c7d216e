//! Property tests (`docs/corefile.md` §7): any generated tree that the emitter accepts reads
//! back as the blocks, directives and tokens it describes, and the formatter leaves emitted
//! text unchanged.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use corefile::emit::{self, EmitOptions};
use corefile::plugin_order::PluginOrder;
use corefile::syntax::{Block, Entry, Item, Line, Part, SyntaxTree, Word};
use corefile::view;
use proptest::prelude::*;

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9.:/_-]{1,12}",
        "[ a-z#\"\\\\{}$%\t\u{A0}é\r\n]{0,8}",
        Just(String::new()),
    ]
    .prop_filter("reserved words", |v| v != "import")
}

fn line(depth: u32) -> BoxedStrategy<Line> {
    let name = prop_oneof![
        Just("log".to_string()),
        Just("forward".to_string()),
        Just("cache".to_string()),
        "[a-z_]{1,8}",
    ]
    .prop_filter("reserved words", |v| v != "import");
    let nested = if depth == 0 {
        Just(None).boxed()
    } else {
        proptest::option::of(proptest::collection::vec(line(depth - 1), 0..3)).boxed()
    };
    (name, proptest::collection::vec(value(), 0..4), nested)
        .prop_map(|(name, args, nested)| {
            let mut parts: Vec<Part> = core::iter::once(name)
                .chain(args)
                .map(|w| Part::Word(Word::new(w)))
                .collect();
            if let Some(lines) = nested {
                parts.push(Part::Block(lines.into_iter().map(Entry::Line).collect()));
            }
            Line {
                parts,
                comment: None,
            }
        })
        .boxed()
}

fn tree() -> impl Strategy<Value = SyntaxTree> {
    let block = (
        proptest::collection::vec("[a-z0-9][a-z0-9.]{0,10}", 1..3),
        proptest::collection::vec(line(2), 0..4),
        proptest::option::of("#[ a-z]{0,10}"),
    )
        .prop_map(|(keys, lines, comment)| Block {
            keys: keys.into_iter().map(Word::new).collect(),
            body: Some(lines.into_iter().map(Entry::Line).collect()),
            comment,
        });
    proptest::collection::vec(block, 1..4).prop_map(|blocks| SyntaxTree {
        items: blocks.into_iter().map(Item::Block).collect(),
    })
}

/// The tokens a line contributes, as the parser collects them.
fn flatten(line: &Line, out: &mut Vec<String>) {
    for part in &line.parts {
        match part {
            Part::Word(w) => out.push(w.text.clone()),
            Part::Block(entries) => {
                out.push("{".into());
                for entry in entries {
                    if let Entry::Line(l) = entry {
                        flatten(l, out);
                    }
                }
                out.push("}".into());
            }
        }
    }
}

type Semantic = Vec<(Vec<String>, Vec<(String, Vec<String>)>)>;

fn expected(tree: &SyntaxTree) -> Semantic {
    let mut out = Vec::new();
    for item in &tree.items {
        let Item::Block(block) = item else { continue };
        let mut directives: Vec<(String, Vec<String>)> = Vec::new();
        for entry in block.body.iter().flatten() {
            let Entry::Line(line) = entry else { continue };
            let mut tokens = Vec::new();
            flatten(line, &mut tokens);
            let name = tokens[0].clone();
            match directives.iter_mut().find(|(n, _)| *n == name) {
                Some((_, t)) => t.extend(tokens),
                None => directives.push((name, tokens)),
            }
        }
        directives.sort_by_key(|(name, _)| {
            (
                PluginOrder::default().position(name).unwrap_or(usize::MAX),
                name.clone(),
            )
        });
        let keys = block.keys.iter().map(|k| k.text.clone()).collect();
        out.push((keys, directives));
    }
    out
}

fn actual(text: &str) -> Semantic {
    view::parse_only(text.as_bytes(), "Corefile", &PluginOrder::default())
        .unwrap_or_else(|e| panic!("emitted text does not parse: {e}\n{text}"))
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
            let keys = b.raw_keys.iter().map(|k| k.to_string()).collect();
            (keys, directives)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn emitted_trees_read_back_and_format_is_idempotent(tree in tree()) {
        let Ok(text) = emit::emit(&tree, &EmitOptions::default()) else {
            return Ok(());
        };
        prop_assert_eq!(actual(&text), expected(&tree), "emitted:\n{}", text);
        let formatted = emit::format(text.as_bytes()).unwrap();
        prop_assert_eq!(&formatted, &text);
    }

    #[test]
    fn values_either_round_trip_or_are_refused(v in "[ a-z\"\\\\#{}\r\n]{0,10}") {
        match emit::render_value(&v, true) {
            Ok(written) => {
                let text = format!(". {{\n    log {written}\n}}\n");
                let blocks = view::parse_only(text.as_bytes(), "Corefile", &PluginOrder::default()).unwrap();
                let tokens = blocks[0].tokens_of(&blocks[0].directives[0]);
                prop_assert_eq!(&*tokens[1].text, v.as_str());
            }
            Err(_) => {
                let refusable = v == "{" || v == "}" || v.contains('\\');
                prop_assert!(refusable, "refused {:?}", v);
            }
        }
    }
}
