//! The emitter under hostile values (issue #28): trees whose keys, directive names,
//! arguments and comments are arbitrary strings (control characters, braces, `#`, quotes,
//! line breaks, `import`, snippet names, environment references). Whenever the emitter
//! accepts a tree, CoreDNS's parser reads the text back as exactly that tree: the same
//! server blocks with the same keys, the same directives with the same lines and nested
//! blocks, nothing more. Whenever it refuses, the error carries the offending text, which
//! is one of the tree's own values. Every generated tree is covered, including those where
//! a value stands in a place CoreDNS's parser acts on (`import` starting a line or a key
//! list, a lone `(NAME)` key, a key that is empty or ends in `,`, U+FEFF at the very start)
//! and those with a block of keys alone, which CoreDNS reads up to the end of the input.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use corefile::emit::{self, EmitError, EmitOptions};
use corefile::plugin_order::PluginOrder;
use corefile::syntax::{Block, Entry, Item, Line, Part, SyntaxTree, Word};
use corefile::view::{self, LineItem};
use proptest::prelude::*;

/// Text an attacker controls: ordinary words, and words made of the characters that
/// change a Corefile's structure.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z0-9.:/_-]{1,10}",
        8 => "[ a-z#\"'\\\\{}()$%,;*\t\r\n\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f\u{85}\u{A0}\u{2028}\u{FEFF}é]{0,8}",
        2 => Just("import".to_owned()),
        1 => "import [a-z*/.]{0,6}",
        1 => "\n *import [a-z*]{0,4}\n?",
        1 => "\\([a-z]{0,4}\\)",
        1 => "\\{\\$[A-Z]{1,4}\\}",
        1 => prop_oneof![Just("{".to_owned()), Just("}".to_owned()), Just(String::new())],
        3 => "(?s:.){0,6}",
    ]
}

/// A comment: usually well formed, sometimes not (no `#`, a line break inside).
fn comment() -> impl Strategy<Value = String> {
    prop_oneof![
        9 => hostile().prop_map(|text| format!("#{text}")),
        1 => hostile(),
    ]
}

fn line(depth: u32) -> BoxedStrategy<Line> {
    let nested = if depth == 0 {
        Just(None).boxed()
    } else {
        proptest::option::of(proptest::collection::vec(entry(depth - 1), 0..3)).boxed()
    };
    (
        hostile(),
        proptest::collection::vec(hostile(), 0..4),
        nested,
        proptest::option::of(comment()),
    )
        .prop_map(|(name, args, nested, comment)| {
            let mut parts: Vec<Part> = core::iter::once(name)
                .chain(args)
                .map(|w| Part::Word(Word::new(w)))
                .collect();
            if let Some(entries) = nested {
                parts.push(Part::Block(entries));
            }
            Line { parts, comment }
        })
        .boxed()
}

fn entry(depth: u32) -> BoxedStrategy<Entry> {
    prop_oneof![
        4 => line(depth).prop_map(Entry::Line),
        1 => comment().prop_map(Entry::Comment),
        1 => Just(Entry::BlankLine),
    ]
    .boxed()
}

fn tree() -> impl Strategy<Value = SyntaxTree> {
    let block = (
        proptest::collection::vec(hostile(), 1..3),
        proptest::option::weighted(0.9, proptest::collection::vec(entry(2), 0..4)),
        proptest::option::of(comment()),
    )
        .prop_map(|(keys, body, comment)| Block {
            keys: keys.into_iter().map(Word::new).collect(),
            body,
            comment,
        });
    let item = prop_oneof![
        4 => block.prop_map(Item::Block),
        1 => comment().prop_map(Item::Comment),
        1 => Just(Item::BlankLine),
    ];
    proptest::collection::vec(item, 1..4).prop_map(|items| SyntaxTree { items })
}

/// A line of the Dispenser's structure, owning its text.
type ViewLine = Vec<LineItem<'static>>;

/// Per server block: its keys, and per directive (in execution order) its lines.
type Structure = Vec<(Vec<String>, Vec<(String, Vec<ViewLine>)>)>;

fn view_line(line: &Line) -> ViewLine {
    line.parts
        .iter()
        .map(|part| match part {
            Part::Word(w) => LineItem::Word(w.text.clone().into()),
            Part::Block(entries) => LineItem::Block(view_lines(entries)),
        })
        .collect()
}

fn view_lines(entries: &[Entry]) -> Vec<ViewLine> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Line(line) => Some(view_line(line)),
            _ => None,
        })
        .collect()
}

/// What the tree describes, grouped and ordered as CoreDNS's view is.
fn built(tree: &SyntaxTree) -> Structure {
    let order = PluginOrder::default();
    let mut out = Vec::new();
    for item in &tree.items {
        let Item::Block(block) = item else { continue };
        let mut directives: Vec<(String, Vec<ViewLine>)> = Vec::new();
        for line in view_lines(block.body.as_deref().unwrap_or_default()) {
            let Some(LineItem::Word(name)) = line.first() else {
                panic!("a line starts with its directive name");
            };
            let name = name.to_string();
            match directives.iter_mut().find(|(n, _)| *n == name) {
                Some((_, lines)) => lines.push(line),
                None => directives.push((name, vec![line])),
            }
        }
        directives
            .sort_by_key(|(name, _)| (order.position(name).unwrap_or(usize::MAX), name.clone()));
        let keys = block.keys.iter().map(|k| k.text.clone()).collect();
        out.push((keys, directives));
    }
    out
}

/// What CoreDNS's parser reads from `text`.
fn read(text: &str) -> Result<Structure, String> {
    let blocks = view::parse_only(text.as_bytes(), "Corefile", &PluginOrder::default())
        .map_err(|e| format!("emitted text does not parse: {e}\n{text}"))?;
    Ok(blocks
        .into_iter()
        .map(|b| {
            let directives = b
                .directives
                .into_iter()
                .map(|d| {
                    let lines = d.lines.into_iter().map(owned_line).collect();
                    (d.name.to_string(), lines)
                })
                .collect();
            let keys = b.raw_keys.iter().map(|k| k.to_string()).collect();
            (keys, directives)
        })
        .collect())
}

fn owned_line(line: view::Line<'_>) -> ViewLine {
    line.into_iter()
        .map(|item| match item {
            LineItem::Word(w) => LineItem::Word(w.into_owned().into()),
            LineItem::Block(lines) => LineItem::Block(lines.into_iter().map(owned_line).collect()),
        })
        .collect()
}

/// Every value and comment of the tree.
fn texts(tree: &SyntaxTree) -> Vec<String> {
    fn entries(list: &[Entry], out: &mut Vec<String>) {
        for entry in list {
            match entry {
                Entry::Line(line) => {
                    for part in &line.parts {
                        match part {
                            Part::Word(w) => out.push(w.text.clone()),
                            Part::Block(nested) => entries(nested, out),
                        }
                    }
                    out.extend(line.comment.clone());
                }
                Entry::Comment(text) => out.push(text.clone()),
                Entry::BlankLine => {}
            }
        }
    }
    let mut out = Vec::new();
    for item in &tree.items {
        match item {
            Item::Block(block) => {
                out.extend(block.keys.iter().map(|k| k.text.clone()));
                out.extend(block.comment.clone());
                entries(block.body.as_deref().unwrap_or_default(), &mut out);
            }
            Item::Comment(text) => out.push(text.clone()),
            Item::BlankLine => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn hostile_trees_read_back_exactly_or_are_refused_naming_the_value(
        tree in tree()
    ) {
        match emit::emit(&tree, &EmitOptions::default()) {
            Ok(text) => prop_assert_eq!(read(&text), Ok(built(&tree)), "emitted:\n{}", text),
            Err(error) => {
                let named = match &error {
                    EmitError::BraceValue(v)
                    | EmitError::Unquotable(v)
                    | EmitError::EnvReference(v)
                    | EmitError::BadComment(v)
                    | EmitError::AlteredKey(v)
                    | EmitError::SnippetKey(v)
                    | EmitError::Import(v)
                    | EmitError::UnbracedBlock(v) => v.clone(),
                    other => panic!("unexpected refusal {other:?}"),
                };
                prop_assert!(
                    texts(&tree).contains(&named),
                    "{error} names {named:?}, not a value of the tree"
                );
                let message = error.to_string();
                prop_assert!(
                    message.contains(&format!("{named:?}")) || message.contains(&named),
                    "{message}"
                );
            }
        }
    }
}
