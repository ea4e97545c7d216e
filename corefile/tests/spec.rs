//! One test per rule of `docs/corefile.md`, named after the section that states it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::std_instead_of_alloc)] // a std test: its collections come from std

use std::collections::BTreeMap;

use corefile::import::NoFiles;
use corefile::lexer;
use corefile::plugin_order::PluginOrder;
use corefile::view::{self, Options};

fn lex(input: &[u8]) -> Vec<(String, usize)> {
    lexer::tokens(input)
        .into_iter()
        .map(|t| (t.text.to_string(), t.line))
        .collect()
}

fn texts(input: &[u8]) -> Vec<String> {
    lexer::tokens(input)
        .into_iter()
        .map(|t| t.text.to_string())
        .collect()
}

fn load_err(input: &str) -> String {
    corefile::load(input.as_bytes()).unwrap_err().to_string()
}

fn keys(input: &str) -> Vec<Vec<String>> {
    view::parse_only(input.as_bytes(), "Corefile", &PluginOrder::default())
        .unwrap()
        .into_iter()
        .map(|b| b.raw_keys.into_iter().map(|k| k.into_owned()).collect())
        .collect()
}

fn load_env<'a>(
    input: &'a str,
    env: &BTreeMap<String, String>,
) -> Result<view::CorefileView<'a>, String> {
    view::load_with(
        input.as_bytes(),
        Options {
            filename: "Corefile",
            order: PluginOrder::default(),
            dns_port: "53",
            env,
            resolver: &mut NoFiles,
        },
    )
    .map_err(|e| e.to_string())
}

#[test]
fn s1_invalid_utf8_is_one_replacement_per_byte() {
    assert_eq!(texts(b"a\xE6\x97b"), ["a\u{FFFD}\u{FFFD}b"]);
    assert_eq!(texts(b"\xFF\xFE"), ["\u{FFFD}\u{FFFD}"]);
}

#[test]
fn s1_one_leading_bom_is_dropped() {
    assert_eq!(texts("\u{FEFF}\u{FEFF}a".as_bytes()), ["\u{FEFF}a"]);
}

#[test]
fn s1_lines_count_newlines_inside_quotes() {
    assert_eq!(
        lex(b"a \"b\nc\" d\ne"),
        [
            ("a".into(), 1),
            ("b\nc".into(), 1),
            ("d".into(), 2),
            ("e".into(), 3)
        ]
    );
}

#[test]
fn s1_unicode_whitespace_separates() {
    assert_eq!(
        texts("a\u{A0}b\u{2003}c\u{85}d".as_bytes()),
        ["a", "b", "c", "d"]
    );
}

#[test]
fn s1_cr_outside_quotes_is_skipped_inside_kept() {
    assert_eq!(texts(b"ab\rcd \"x\ry\"\r\n"), ["abcd", "x\ry"]);
}

#[test]
fn s1_comments_start_anywhere_but_end_with_the_word() {
    assert_eq!(texts(b"foo#bar\nbaz"), ["foo", "baz"]);
    assert_eq!(texts(b"# whole line x y\nz"), ["z"]);
    // caddy's comment flag lives in one token read: the next word is a token again.
    assert_eq!(texts(b"foo#bar baz\n"), ["foo", "baz"]);
    assert_eq!(texts(b"\"a#b\""), ["a#b"]);
}

#[test]
fn s1_quotes_only_at_token_start() {
    assert_eq!(texts(b"abc\"def\""), ["abc\"def\""]);
    assert_eq!(texts(b"\"a\"b"), ["a", "b"]);
    assert_eq!(texts(b"\"\" x"), ["", "x"]);
}

#[test]
fn s1_backslash_escapes_only_quotes() {
    assert_eq!(
        texts(br#""a\"b" "\n" "\\" c\d"#),
        ["a\"b", "\\n", "\\\\", "c\\d"]
    );
    assert_eq!(texts(br#""\\" x"#), ["\\\\", "x"]);
}

#[test]
fn s1_unterminated_quote_runs_to_eof() {
    assert_eq!(texts(b"a \"b c"), ["a", "b c"]);
    assert_eq!(texts(b"a \""), ["a"]);
}

#[test]
fn s1_braces_are_words_to_the_lexer() {
    assert_eq!(texts(b"foo{ {} }STUB"), ["foo{", "{}", "}STUB"]);
}

#[test]
fn s2_1_keys_trailing_comma_and_empty_keys() {
    assert_eq!(keys("a,\nb \"\" c {\n}\n"), [vec!["a", "b", "c"]]);
    assert_eq!(keys("a.org,b.org {\n}\n"), [vec!["a.org,b.org"]]);
    assert_eq!(keys(",\nb {\n}\n"), [vec!["", "b"]]);
    assert_eq!(
        load_err("a, {\n}\n"),
        "Corefile:1 - Error during parsing: Expected another address but had '{' - check for extra comma"
    );
    assert_eq!(
        load_err("a,"),
        "Corefile:1 - Error during parsing: Unexpected EOF"
    );
}

#[test]
fn s2_1_brace_on_next_line_and_braceless_blocks() {
    assert_eq!(keys("a\n{\nlog\n}\n"), [vec!["a"]]);
    let blocks =
        view::parse_only(b"a\nlog\nwhoami\n", "Corefile", &PluginOrder::default()).unwrap();
    assert_eq!(blocks[0].directives.len(), 2);
}

#[test]
fn s2_1_missing_close_brace() {
    assert_eq!(
        load_err(". {\n    log\n"),
        "Corefile:2 - Syntax error: Unexpected token 'log', expecting '}'"
    );
    // Quirk 4: undetected when the last token closes a sub-block.
    assert!(corefile::load(b". {\n    cache {\n        success 10\n    }\n").is_ok());
}

#[test]
fn s2_1_blocks_share_a_line_and_stray_braces_become_keys() {
    assert_eq!(keys("a {\n}  b {\n}\n"), [vec!["a"], vec!["b"]]);
    assert_eq!(keys("a {\n}\n}\n"), [vec!["a"], vec!["}"]]);
    assert_eq!(keys(". {}\n"), [vec![".", "{}"]]);
    let v = corefile::load(b"a {\n}\n}\n").unwrap();
    assert_eq!(v.blocks[1].zones[0].to_string(), "dns://}.:53");
}

#[test]
fn s2_2_directive_rules() {
    assert_eq!(
        load_err(". {\n    example\n}\n"),
        "Corefile:2 - Error during parsing: Unknown directive 'example'"
    );
    assert_eq!(
        load_err(". { whoami }\n"),
        "Corefile:1 - Error during parsing: Unexpected '}' because no matching opening brace"
    );
    assert_eq!(
        load_err(". {\n    cache {\n"),
        "Corefile:2 - Error during parsing: Unexpected EOF"
    );
    assert!(corefile::load(b"a.org { whoami\n}\n").is_ok());
    // A multi-line quoted token does not end the directive.
    let v = corefile::load(b". {\n    log . \"{a}\n{b}\" x\n}\n").unwrap();
    assert_eq!(v.blocks[0].directives[0].tokens.len(), 4);
    assert_eq!(v.blocks[0].tokens.len(), 4);
}

/// caddy's `ServerBlock.Tokens` maps a name to all its occurrences' tokens, in source order.
#[test]
fn s2_2_a_repeated_directive_is_one_range_of_the_block_tokens() {
    let input = b". {\n    log a\n    errors\n    log b {\n        c\n    }\n    errors x\n}\n";
    let blocks = view::parse_only(input, "Corefile", &PluginOrder::default()).unwrap();
    let block = &blocks[0];
    let texts = |name: &str| -> Vec<(String, u32)> {
        let tokens = block.tokens_of(block.directive(name).unwrap());
        tokens
            .iter()
            .map(|t| (t.text.to_string(), t.line))
            .collect()
    };
    let expected = |list: &[(&str, u32)]| -> Vec<(String, u32)> {
        list.iter().map(|&(t, l)| (t.to_string(), l)).collect()
    };
    assert_eq!(
        texts("log"),
        expected(&[
            ("log", 2),
            ("a", 2),
            ("log", 4),
            ("b", 4),
            ("{", 4),
            ("c", 5),
            ("}", 6)
        ])
    );
    assert_eq!(
        texts("errors"),
        expected(&[("errors", 3), ("errors", 7), ("x", 7)])
    );
    assert_eq!(block.tokens.len(), 10);
    let parsed = corefile::parser::parse(
        input,
        corefile::parser::ParseOptions {
            filename: "Corefile",
            directives: None,
            env: &corefile::env::NoEnv,
            resolver: &mut corefile::import::NoFiles,
        },
    )
    .unwrap();
    let names: Vec<&str> = parsed[0].directives.iter().map(|d| &*d.name).collect();
    assert_eq!(names, ["log", "errors"]);
    assert_eq!(parsed[0].directives[0].tokens, 0..7);
    assert_eq!(parsed[0].directives[1].tokens, 7..10);
}

#[test]
fn s2_3_environment_substitution() {
    let env: BTreeMap<String, String> = [("P", "log"), ("SELF", "x{$SELF}"), ("B", "{")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = load_env(". {\n    {$P} {%P%}\n}\n", &env).unwrap();
    let log = &v.blocks[0].directives[0];
    assert_eq!(log.name, "log");
    // Quirk 8: the directive-name token keeps its raw text.
    let tokens = v.blocks[0].tokens_of(log);
    assert_eq!(&*tokens[0].text, "{$P}");
    assert_eq!(&*tokens[1].text, "log");
    let err = load_env(". {\n    log {$SELF}\n}\n", &env).unwrap_err();
    assert!(
        err.starts_with("Corefile:2 - Error during parsing: environment variable substitution"),
        "{err}"
    );
    assert_eq!(
        load_env(". {\n    {$UNSET}\n}\n", &env).unwrap_err(),
        "Corefile:2 - Error during parsing: Unknown directive ''"
    );
    // Substitution sees the lexed text: a dropped CR joins `{` and `$`; other braces are
    // text, quoted or not, and an escaped brace is still a brace.
    let v = load_env(
        ". {\n    log {\r$P} \"{remote} {$P}\" {x} \"\\{$P}\"\n}\n",
        &env,
    )
    .unwrap();
    let texts: Vec<&str> = v.blocks[0].tokens.iter().map(|t| &*t.text).collect();
    assert_eq!(texts, ["log", "log", "{remote} log", "{x}", "\\log"]);
}

#[test]
fn s4_1_default_corefile_when_no_block() {
    let v = corefile::load(b"# nothing\n(snip) {\n    log\n}\n").unwrap();
    assert!(v.used_default_input);
    assert_eq!(v.blocks[0].zones[0].to_string(), "dns://.:53");
}

#[test]
fn s4_4_overlap_check() {
    assert_eq!(
        load_err("example.org {\n}\nEXAMPLE.org.:53 {\n}\n"),
        "cannot serve dns://example.org.:53 - it is already defined"
    );
    assert_eq!(
        load_err("a {\n    bind 127.0.0.1\n}\na {\n}\n"),
        "cannot serve dns://a.:53 - zone overlap listener capacity with dns://a.:53 on 127.0.0.1"
    );
    assert_eq!(
        load_err("a {\n}\na {\n    bind 127.0.0.1\n}\n"),
        "cannot serve dns://a.:53 on 127.0.0.1 - zone overlap listener capacity with dns://a.:53"
    );
    assert!(corefile::load(b"a {\n    bind 127.0.0.1\n}\na {\n    bind 127.0.0.2\n}\n").is_ok());
    assert!(corefile::load(b"a {\n}\ntls://a {\n}\na:54 {\n}\n").is_ok());
    // Filtered (view) blocks never collide with an unfiltered one, in either order.
    assert!(corefile::load(b"a {\n    view v {\n        expr x\n    }\n}\na {\n}\n").is_ok());
    assert!(corefile::load(b"a {\n}\na {\n    view v {\n        expr x\n    }\n}\n").is_ok());
}

/// Regression: 200 CIDR keys of 128 zones each times 180 `bind` addresses (the 4 KB input in
/// `fuzz/corpus/corefile_parse/overlap-cidr-keys-times-binds.Corefile`) took seconds and
/// 100 MB when the check formed every (zone, address) pair.
#[test]
fn s4_4_overlap_check_of_many_zones_times_many_addresses() {
    let keys: Vec<String> = (1..=200).map(|n| format!("{n}.0.0.0/9")).collect();
    let binds: Vec<String> = (0..180)
        .map(|i| format!("10.0.{}.{}", i / 250, i % 250 + 1))
        .collect();
    let input = format!(
        "{} {{\n    bind {}\n    whoami\n}}\n",
        keys.join(" "),
        binds.join(" ")
    );
    let view = corefile::load(input.as_bytes()).unwrap();
    assert_eq!(view.blocks[0].zones.len(), 200 * 128);
    assert_eq!(view.blocks[0].listen_hosts.len(), 180);
    let clash = format!("{input}200.0.0.0/16 {{\n    bind 10.0.0.9 10.0.0.7\n}}\n");
    assert_eq!(
        load_err(&clash),
        "cannot serve dns://0.200.in-addr.arpa.:53 on 10.0.0.9 - it is already defined"
    );
}

#[test]
fn s4_3_normalization_errors_are_prefixed() {
    assert_eq!(
        load_err("a..b {\n}\n"),
        "error inspecting server blocks: zone is not a valid domain name: a..b"
    );
}

#[test]
fn s5_deep_nesting_needs_no_recursion() {
    let depth = 30_000;
    let input = format!(
        ". {{\n    a {}\n{}}}\n",
        "{ ".repeat(depth),
        "}\n".repeat(depth)
    );
    let blocks = view::parse_only(input.as_bytes(), "Corefile", &PluginOrder::default()).unwrap();
    assert_eq!(blocks[0].directives[0].tokens.len(), 1 + 2 * depth);
    assert!(corefile::emit::format(input.as_bytes()).is_err());
}

#[test]
fn s1_tokens_borrow_from_the_input_unless_the_lexer_changed_them() {
    use std::borrow::Cow;
    let tokens = lexer::tokens(b"plain \"quoted\" cr\rx \"a\\\"b\"");
    let borrowed: Vec<bool> = tokens
        .iter()
        .map(|t| matches!(t.text, Cow::Borrowed(_)))
        .collect();
    assert_eq!(borrowed, [true, true, false, false]);
    let owned: Vec<_> = tokens.into_iter().map(|t| t.into_owned()).collect();
    assert_eq!(owned[2].text, "crx");
    assert_eq!(owned[3].text, "a\"b");
}

/// One server block of [`s2_long_inputs_parse_as_their_blocks_do_alone`], for zone `i`: every
/// way a directive's tokens can be read (plain, braces, a repeated directive, a quoted token
/// over two lines, a comment, substitutions, an import in the middle of a directive).
fn varied_block(i: usize) -> String {
    format!(
        "zone{i}.test:53 {{\n    log . \"{{remote}}\n {{type}}\"\n    errors {{\n        \
         consolidate 5m \".* timeout\"\n    }}\n    cache 30 {{\n        success 100\n    }}\n    \
         log # again\n    forward . 1.1.1.1 {{$UPSTREAM}} {{\n        import opts\n        \
         max_fails {{$FAILS}}\n    }}\n    whoami\n}}\n"
    )
}

#[test]
fn s2_long_inputs_parse_as_their_blocks_do_alone() {
    // The parser lexes the main input in batches and takes plain directives straight from
    // them: a file of many batches must parse exactly as its blocks do one by one.
    let env: BTreeMap<String, String> = [("UPSTREAM", "8.8.8.8"), ("FAILS", "3")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let snippet = "(opts) {\n    policy sequential\n}\n";
    let parse = |input: &str| {
        corefile::parser::parse(
            input.as_bytes(),
            corefile::parser::ParseOptions {
                filename: "Corefile",
                directives: Some(corefile::plugin_order::V1_14_7.names),
                env: &env,
                resolver: &mut NoFiles,
            },
        )
        .unwrap()
        .into_iter()
        .map(|b| b.into_owned())
        .collect::<Vec<_>>()
    };
    let snippet_lines = u32::try_from(snippet.lines().count()).unwrap();
    let lines_per_block = u32::try_from(varied_block(0).lines().count()).unwrap();
    let blocks = 400;
    let all: String = core::iter::once(snippet.to_string())
        .chain((0..blocks).map(varied_block))
        .collect();
    let parsed = parse(&all);
    assert_eq!(parsed.len(), blocks);
    let total: usize = parsed.iter().map(|b| b.tokens.len()).sum();
    assert!(total > 5 * 2048, "spans several batches: {total} tokens");
    for (i, block) in parsed.iter().enumerate() {
        let alone = parse(&format!("{snippet}{}", varied_block(i)));
        let mut expected = alone[0].clone();
        // Tokens of the snippet keep the lines of its definition, at the top.
        for token in expected
            .tokens
            .iter_mut()
            .filter(|t| t.line > snippet_lines)
        {
            token.line += u32::try_from(i).unwrap() * lines_per_block;
        }
        assert_eq!(*block, expected, "block {i}");
    }
    let log = &parsed[7].directives[0];
    assert_eq!(&*log.name, "log");
    let texts: Vec<&str> = parsed[7].tokens_of(log).iter().map(|t| &*t.text).collect();
    assert_eq!(
        texts,
        ["log", ".", "{remote}\n {type}", "log"],
        "a repeated directive's occurrences are grouped"
    );
}
