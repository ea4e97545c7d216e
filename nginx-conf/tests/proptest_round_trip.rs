//! Property tests: builder-made trees with hostile values survive emit and parse; any input
//! that parses writes back byte for byte.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use nginx_conf::{Block, Directive, EmitError, End, LuaBody, Word, parse};
use proptest::prelude::*;

/// Bytes that matter to nginx's lexer, plus a few ordinary ones.
fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: &[u8] = b" \t\r\n;{}\"'#\\$()abc\x0c\xe9";
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(alphabet.to_vec()),
            1 => any::<u8>(),
        ],
        0..24,
    )
}

/// Decoded words of every statement, depth first, with markers for blocks.
fn shape(block: &Block) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for d in &block.directives {
        let mut words = vec![d.name.value().into_owned()];
        words.extend(d.arg_words().map(|w| w.value().into_owned()));
        out.push(words);
        match &d.end {
            End::Semicolon => out.push(vec![b";".to_vec()]),
            End::Lua(body) => out.push(vec![b"lua".to_vec(), body.as_bytes().to_vec()]),
            End::Block(inner) => {
                out.push(vec![b"{".to_vec()]);
                out.extend(shape(inner));
                out.push(vec![b"}".to_vec()]);
            }
        }
    }
    out
}

#[derive(Clone, Debug)]
struct Spec {
    name: Vec<u8>,
    args: Vec<Vec<u8>>,
    children: Option<Vec<Spec>>,
}

fn spec() -> impl Strategy<Value = Spec> {
    let leaf = (
        hostile_bytes(),
        prop::collection::vec(hostile_bytes(), 0..4),
    )
        .prop_map(|(name, args)| Spec {
            name,
            args,
            children: None,
        });
    leaf.prop_recursive(3, 24, 4, |inner| {
        (
            hostile_bytes(),
            prop::collection::vec(hostile_bytes(), 0..3),
            prop::collection::vec(inner, 0..4),
        )
            .prop_map(|(name, args, children)| Spec {
                name,
                args,
                children: Some(children),
            })
    })
}

/// Builds the directive, or `None` where the builder refuses a value (NUL bytes). Names that
/// would be read as Lua block directives get an `x` prefix so that the expected shape holds.
fn build(spec: &Spec) -> Option<Directive> {
    let mut name = spec.name.clone();
    if name.ends_with(b"_by_lua_block") {
        name.insert(0, b'x');
    }
    let directive = match Directive::new(&name) {
        Ok(d) => d,
        Err(EmitError::Nul) => return None,
        Err(e) => panic!("unexpected refusal {e}"),
    };
    let mut directive = match directive.args(&spec.args) {
        Ok(d) => d,
        Err(EmitError::Nul) => return None,
        Err(e) => panic!("unexpected refusal {e}"),
    };
    if let Some(children) = &spec.children {
        let built: Option<Vec<Directive>> = children.iter().map(build).collect();
        directive = directive.block(built?);
    }
    Some(directive)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// `docs/nginx-conf.md` §7: for every value `v`, `x v;` written by the emitter reads back
    /// as one statement whose only argument is exactly `v` (or the emitter refuses `v`).
    #[test]
    fn any_value_stays_one_argument(value in hostile_bytes()) {
        let Ok(directive) = Directive::new("x").unwrap().arg(&value) else {
            prop_assert!(value.contains(&0));
            return Ok(());
        };
        let text = Block::new(vec![directive]).to_bytes().unwrap();
        let config = parse(&text).unwrap();
        prop_assert_eq!(config.directives.len(), 1);
        let d = &config.directives[0];
        prop_assert_eq!(d.args.len(), 1);
        prop_assert_eq!(&*d.args[0].word().value(), &value[..]);
        prop_assert!(matches!(d.end, End::Semicolon));
    }

    /// Builder trees survive emit → parse and format → parse with the same words.
    #[test]
    fn builder_trees_round_trip(specs in prop::collection::vec(spec(), 0..5)) {
        let Some(directives) = specs.iter().map(build).collect::<Option<Vec<_>>>() else {
            return Ok(());
        };
        let tree = Block::new(directives);
        let text = tree.to_bytes().unwrap();
        let parsed = parse(&text).unwrap();
        prop_assert_eq!(shape(&parsed), shape(&tree));
        prop_assert_eq!(parsed.to_bytes().unwrap(), text);
        let formatted = tree.format();
        prop_assert_eq!(shape(&parse(&formatted).unwrap()), shape(&tree));
    }

    /// Lua bodies accepted by the builder read back unchanged.
    #[test]
    fn lua_bodies_round_trip(body in hostile_bytes()) {
        let Ok(body) = LuaBody::new(&body) else { return Ok(()); };
        let tree = Block::new(vec![Directive::new("content_by_lua_block").unwrap().lua(body.clone())]);
        let parsed = parse(&tree.to_bytes().unwrap()).unwrap();
        prop_assert!(matches!(&parsed.directives[0].end, End::Lua(b) if *b == body));
    }

    /// Whatever parses writes back byte for byte, and its formatting reads back the same.
    #[test]
    fn parsed_input_is_lossless(text in prop::collection::vec(
        prop::sample::select(b" \n;{}\"'#\\$()ab_".to_vec()), 0..64)
    ) {
        if let Ok(config) = parse(&text) {
            prop_assert_eq!(config.to_bytes().unwrap(), text);
            let formatted = config.format();
            prop_assert_eq!(shape(&parse(&formatted).unwrap()), shape(&config));
        }
    }

    /// Hand-written spellings are accepted exactly when they are one word.
    #[test]
    fn spellings_are_checked(spelling in hostile_bytes()) {
        if let Ok(word) = Word::from_spelling(&spelling) {
            let text = [b"x ", word.spelling(), b";"].concat();
            let config = parse(&text).unwrap();
            prop_assert_eq!(config.directives[0].args.len(), 1);
        }
    }
}
