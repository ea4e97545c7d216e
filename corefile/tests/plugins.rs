//! Typed plugin configs over the corpus: every accepted Corefile's plugin lines parse, and a
//! config written back parses to the same config.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

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
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/corefile"
    ));
    assert!(
        dir.is_dir(),
        "the shared corpus is missing at {}",
        dir.display()
    );
    let mut stats = (0usize, Vec::new());
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.extension().is_none_or(|e| e != "Corefile") {
            continue;
        }
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
