//! 45 lexer probes measured against nginx 1.22.1 and crossplane 0.5.8, each with nginx's verdict,
//! and, where nginx can be run, the same probes through the real `nginx -t`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

mod isolated_nginx;

use nginx_conf::{Block, Directive, End, Error, Files, Resolver, parse};

/// Where the probe goes: `file_text` wraps it in the blocks of its place.
#[derive(Clone, Copy)]
enum Place {
    Location,
    Server,
    Http,
    File,
}

/// nginx's verdict, as the crate must reproduce it.
enum Expect {
    /// `nginx -t` accepts the file.
    Ok,
    /// nginx rejects only because the probe's first word is not a directive: it echoes the
    /// word, which shows where the word ends and how it was decoded. We accept the syntax and
    /// read the same word.
    Word(&'static [u8]),
    /// nginx rejects the file with this lexical error (`<case>.conf` stands for the file).
    Lexical(&'static str),
    /// nginx rejects a statement that opened a block (`is not terminated by ";"`, or an
    /// unknown directive inside an unquoted regex): the words up to the `{` are these.
    OpensBlock(&'static [&'static [u8]]),
    /// A Lua block with this raw body.
    Lua(&'static [u8]),
}

struct Probe {
    row: u32,
    case: &'static str,
    place: Place,
    input: Vec<u8>,
    expect: Expect,
}

fn probe(row: u32, case: &'static str, place: Place, input: &[u8], expect: Expect) -> Probe {
    Probe {
        row,
        case,
        place,
        input: input.to_vec(),
        expect,
    }
}

fn file_text(place: Place, fragment: &[u8]) -> Vec<u8> {
    let (head, tail): (&[u8], &[u8]) = match place {
        Place::Location => (
            b"events {}\nhttp {\nserver {\nlisten 127.0.0.1:18080;\nlocation / {\n",
            b"\n}\n}\n}\n",
        ),
        Place::Server => (
            b"events {}\nhttp {\nserver {\nlisten 127.0.0.1:18080;\n",
            b"\n}\n}\n",
        ),
        Place::Http => (b"events {}\nhttp {\n", b"\n}\n"),
        Place::File => (b"", b"\n"),
    };
    [head, fragment, tail].concat()
}

fn long(prefix: &[u8], byte: u8, suffix: &[u8]) -> Vec<u8> {
    [prefix, &vec![byte; 5000], suffix].concat()
}

fn probes() -> Vec<Probe> {
    use Expect::*;
    use Place::*;
    let unexpected = |what: &'static str| Lexical(what);
    vec![
        probe(1, "brace-in-word", Location, b"a}b;", Word(b"a}b")),
        probe(2, "hash-in-word", Location, b"a#b;", Word(b"a#b")),
        probe(
            3,
            "hash-after-quote",
            Location,
            b"return 200 \"x\"#c\n;",
            unexpected("unexpected \"#\" in hash-after-quote.conf:6"),
        ),
        probe(
            4,
            "quote-then-char",
            Location,
            b"return 200 \"a\"b;",
            unexpected("unexpected \"b\" in quote-then-char.conf:6"),
        ),
        probe(
            5,
            "quote-then-paren",
            Location,
            b"if ($uri = \"/x\") { return 404; }",
            Ok,
        ),
        probe(6, "quote-mid-word", Location, b"a\"b\"c;", Word(b"a\"b\"c")),
        probe(7, "escaped-space", Location, b"a\\ b;", Word(b"a\\ b")),
        probe(8, "escaped-semicolon", Location, b"a\\;b;", Word(b"a\\;b")),
        probe(
            9,
            "dq-escapes",
            Location,
            b"\"t\\tn\\nq\\\"s\\\\x\\d\";",
            Word(b"t\tn\nq\"s\\x\\d"),
        ),
        probe(10, "sq-escape", Location, b"'it\\'s';", Word(b"it's")),
        probe(11, "dollar-brace", Location, b"a${b}c;", Word(b"a${b}c")),
        probe(
            12,
            "var-then-brace",
            Location,
            b"return 200 $a{b};",
            OpensBlock(&[b"return", b"200", b"$a"]),
        ),
        probe(
            13,
            "regex-braces-unquoted",
            Location,
            b"location ~ ^/a{2}$ { }",
            OpensBlock(&[b"location", b"~", b"^/a"]),
        ),
        probe(
            14,
            "regex-braces-quoted",
            Location,
            b"location ~ \"^/a{2}$\" { }",
            Ok,
        ),
        probe(15, "empty-arg", Location, b"return 200 \"\";", Ok),
        probe(
            16,
            "formfeed",
            Location,
            b"return\x0c200;",
            Word(b"return\x0c200"),
        ),
        probe(
            17,
            "vtab",
            Location,
            b"return\x0b200;",
            Word(b"return\x0b200"),
        ),
        probe(18, "crlf", Location, b"return 200\r\n  ok;\r\n", Ok),
        probe(19, "nonutf8", Location, b"return 200 \xe9t\xe9;", Ok),
        probe(
            20,
            "semicolon-alone",
            Location,
            b"return 200; ;",
            unexpected("unexpected \";\" in semicolon-alone.conf:6"),
        ),
        probe(
            21,
            "brace-alone",
            Location,
            b"{ }",
            unexpected("unexpected \"{\" in brace-alone.conf:6"),
        ),
        probe(
            22,
            "missing-semicolon",
            Location,
            b"return 200",
            unexpected("unexpected \"}\" in missing-semicolon.conf:7"),
        ),
        probe(
            23,
            "newline-in-quotes",
            Location,
            b"return 200 \"a\nb\";",
            Ok,
        ),
        Probe {
            input: long(b"return 200 ", b'x', b";"),
            ..probe(
                24,
                "long-token",
                Location,
                b"",
                unexpected("too long parameter \"xxxxxxxxxx...\" started in long-token.conf:6"),
            )
        },
        Probe {
            input: long(b"# ", b'c', b"\nreturn 200;"),
            ..probe(
                25,
                "long-comment",
                Location,
                b"",
                unexpected("too long parameter \"# cccccccc...\" started in long-comment.conf:6"),
            )
        },
        probe(
            26,
            "lua-basic",
            Location,
            b"content_by_lua_block { ngx.say(\"hi\") }",
            Lua(b" ngx.say(\"hi\") "),
        ),
        probe(
            27,
            "lua-brace-in-string",
            Location,
            b"content_by_lua_block { ngx.say(\"}\") }",
            Lua(b" ngx.say(\"}\") "),
        ),
        probe(
            28,
            "lua-long-string",
            Location,
            b"content_by_lua_block { local s = [[ } ]] ngx.say(s) }",
            Lua(b" local s = [[ } ]] ngx.say(s) "),
        ),
        probe(
            29,
            "lua-long-string-eq",
            Location,
            b"content_by_lua_block { local s = [==[ }]] ]==] ngx.say(s) }",
            Lua(b" local s = [==[ }]] ]==] ngx.say(s) "),
        ),
        probe(
            30,
            "lua-block-comment",
            Location,
            b"content_by_lua_block { --[[ } ]] ngx.say(1) }",
            Lua(b" --[[ } ]] ngx.say(1) "),
        ),
        probe(
            31,
            "lua-line-comment",
            Location,
            b"content_by_lua_block { -- }\n ngx.say(1) }",
            Lua(b" -- }\n ngx.say(1) "),
        ),
        probe(
            32,
            "lua-hash",
            Location,
            b"content_by_lua_block { local t = {1} ngx.say(#t) }",
            Lua(b" local t = {1} ngx.say(#t) "),
        ),
        probe(
            33,
            "lua-escaped-quote",
            Location,
            b"content_by_lua_block { ngx.say(\"a\\\"}\") }",
            Lua(b" ngx.say(\"a\\\"}\") "),
        ),
        probe(
            34,
            "lua-single-quote",
            Location,
            b"content_by_lua_block { ngx.say('it''s') }",
            Lua(b" ngx.say('it''s') "),
        ),
        probe(
            35,
            "lua-unbalanced-quote",
            Location,
            b"content_by_lua_block { local a = 1 -- it's\n ngx.say(a) }",
            Lua(b" local a = 1 -- it's\n ngx.say(a) "),
        ),
        probe(
            36,
            "lua-tables",
            Location,
            b"content_by_lua_block { local t = { a = { b = {} } } ngx.say(1) }",
            Lua(b" local t = { a = { b = {} } } ngx.say(1) "),
        ),
        probe(
            37,
            "lua-nospace",
            Location,
            b"content_by_lua_block {ngx.say(1)}",
            Lua(b"ngx.say(1)"),
        ),
        probe(
            38,
            "set-by-lua-nospace",
            Location,
            b"set_by_lua_block $v{ return 1 }",
            Lua(b" return 1 "),
        ),
        probe(
            39,
            "server-rewrite-lua",
            Server,
            b"server_rewrite_by_lua_block { local t = {a=1} }",
            Lua(b" local t = {a=1} "),
        ),
        probe(
            40,
            "lua-unterminated",
            File,
            b"events {} http { server { location / { content_by_lua_block { ngx.say(1) ",
            unexpected(
                "unexpected end of file, expecting terminating characters for lua code block in lua-unterminated.conf:1",
            ),
        ),
        probe(
            41,
            "eof-missing-brace",
            File,
            b"events {} http {",
            unexpected("unexpected end of file, expecting \"}\" in eof-missing-brace.conf:2"),
        ),
        probe(
            42,
            "eof-missing-semicolon",
            File,
            b"events {} worker_processes 1",
            unexpected(
                "unexpected end of file, expecting \";\" or \"}\" in eof-missing-semicolon.conf:2",
            ),
        ),
        probe(
            43,
            "extra-close",
            File,
            b"events {} }",
            unexpected("unexpected \"}\" in extra-close.conf:1"),
        ),
        probe(
            44,
            "include-glob-nomatch",
            Http,
            b"include /nonexistent-dir/*.conf;",
            Ok,
        ),
        probe(
            45,
            "include-missing",
            Http,
            b"include /nonexistent-dir/x.conf;",
            unexpected(
                "open() \"/nonexistent-dir/x.conf\" failed (2: No such file or directory) in include-missing.conf:3",
            ),
        ),
    ]
}

/// A resolver with no files at all.
struct Nothing;

impl Resolver for Nothing {
    fn read(&mut self, _: &str) -> Option<Vec<u8>> {
        None
    }
    fn glob(&mut self, _: &str) -> Vec<String> {
        Vec::new()
    }
}

/// Parses the probe file like nginx: the file, then its includes; the first error.
fn check(text: &[u8], case: &str) -> Result<Block, Error> {
    let name = format!("{case}.conf");
    let files = Files::load_text(&name, text, &mut Nothing, &Default::default()).unwrap();
    let main = files.files.into_iter().next().unwrap();
    if let Some(error) = main.includes.into_iter().find_map(|i| i.error) {
        return Err(error);
    }
    main.config
}

/// The innermost-first statement of the probe: the first directive of the deepest first
/// block of the wrapping (the probe's own statement).
fn probe_statement(block: &Block, place: Place) -> &Directive {
    let depth = match place {
        Place::Location => 3,
        Place::Server => 2,
        Place::Http => 1,
        Place::File => 0,
    };
    let mut block = block;
    for _ in 0..depth {
        block = block.directives.last().unwrap().children().unwrap();
    }
    block
        .directives
        .iter()
        .rev()
        .find(|d| d.line >= 3 || depth == 0)
        .unwrap()
}

#[test]
fn every_edge_case_matches_nginx() {
    let probes = probes();
    assert_eq!(probes.len(), 45);
    for p in &probes {
        let text = file_text(p.place, &p.input);
        let result = check(&text, p.case);
        let row = format!("row {} ({})", p.row, p.case);
        match &p.expect {
            Expect::Ok => {
                result.unwrap_or_else(|e| panic!("{row}: {e}"));
            }
            Expect::Word(word) => {
                let config = result.unwrap_or_else(|e| panic!("{row}: {e}"));
                let d = probe_statement(&config, p.place);
                assert_eq!(&*d.name.value(), *word, "{row}");
            }
            Expect::Lexical(message) => {
                let error = result.err().unwrap_or_else(|| panic!("{row}: accepted"));
                assert_eq!(error.to_string(), *message, "{row}");
            }
            Expect::OpensBlock(words) => {
                // The whole file no longer balances; parse the probe with one closing brace.
                let config = parse(&[&p.input[..], b"\n}"].concat()).unwrap();
                let d = &config.directives[0];
                let mut got = vec![d.name.value().into_owned()];
                got.extend(d.arg_words().map(|w| w.value().into_owned()));
                assert_eq!(
                    got,
                    words.iter().map(|w| w.to_vec()).collect::<Vec<_>>(),
                    "{row}"
                );
                assert!(matches!(d.end, End::Block(_)), "{row}");
            }
            Expect::Lua(body) => {
                let config = result.unwrap_or_else(|e| panic!("{row}: {e}"));
                let d = probe_statement(&config, p.place);
                assert!(
                    matches!(&d.end, End::Lua(b) if b.as_bytes() == *body),
                    "{row}"
                );
            }
        }
        if let Ok(config) = check(&text, p.case) {
            assert_eq!(config.to_bytes().unwrap(), text, "{row}: lossless");
        }
    }
}

/// Runs the real `nginx -t` on `path` (see `isolated_nginx`): `None` when nginx cannot run here,
/// else nginx's first `[emerg]`, `[alert]`, `[crit]` or `[error]` message with the folder `dir`
/// taken out of file names (empty when it accepts).
fn run_nginx(path: &std::path::Path, dir: &std::path::Path) -> Option<String> {
    let output = isolated_nginx::check(path)?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    Some(
        stderr
            .lines()
            .find_map(|l| {
                ["[emerg] ", "[alert] ", "[crit] ", "[error] "]
                    .iter()
                    .find_map(|level| l.split_once(level).map(|(_, m)| m.to_owned()))
            })
            .map(|m| {
                m.split_once(": ")
                    .map_or(m.clone(), |(_, rest)| rest.to_owned())
            })
            .map(|m| m.replace(&format!("{}/", dir.display()), ""))
            .unwrap_or_default(),
    )
}

/// Probes around nginx's 4096-byte read buffer: long words, quoted words, comments, Lua text
/// and Lua long strings near 4096 bytes, shifted by a padding comment so that they fall at
/// different places in the buffer. Real nginx and the crate must agree on every one (this is
/// what the buffer simulation of the lexer and of the Lua scanner is for).
#[test]
fn live_nginx_agrees_on_buffer_boundaries() {
    let dir = std::env::temp_dir().join(format!("nginx-conf-buffer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    let (mut agreed, mut rejected) = (0, 0);
    for i in 0..40 {
        let pad = next(4000) as usize;
        let len = [4093, 4094, 4095, 4096, 4097, 3000 + next(2000) as usize][next(6) as usize];
        let x = "x".repeat(len);
        let body = match i % 5 {
            0 => format!("return 200 {x} ;\n"),
            1 => format!("return 200 \"{x}\" ;\n"),
            2 => format!("#{x}\nreturn 200;\n"),
            3 => format!("content_by_lua_block {{ local a = 1 {x} }}\n"),
            _ => format!("content_by_lua_block {{ local s = [[{x}]] ngx.say(s) }}\n"),
        };
        let text = format!(
            "events {{}}\nhttp {{\nserver {{\nlisten 127.0.0.1:18080;\n# {}\nlocation / {{\n{body}}}\n}}\n}}\n",
            "p".repeat(pad)
        );
        let path = dir.join(format!("buffer-{i}.conf"));
        std::fs::write(&path, &text).unwrap();
        let Some(nginx) = run_nginx(&path, &dir) else {
            eprintln!(
                "skipping the live nginx check: nginx cannot run here (apt-get install nginx libnginx-mod-http-lua; needs root)"
            );
            return;
        };
        let ours = parse(text.as_bytes())
            .err()
            .map(|e| e.in_file(format!("buffer-{i}.conf")).to_string())
            .unwrap_or_default();
        assert_eq!(
            ours, nginx,
            "probe {i}: {len} bytes after {pad} bytes of padding"
        );
        agreed += 1;
        rejected += usize::from(!ours.is_empty());
    }
    assert_eq!(agreed, 40);
    assert!(
        rejected > 5 && rejected < 35,
        "{rejected} rejections: probes too one-sided"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The line number at the end of an nginx message (`... in FILE:LINE`).
fn message_line(message: &str) -> u32 {
    message.rsplit(':').next().unwrap().parse().unwrap()
}

/// Whether nginx's message comes from reading the file rather than from a directive handler.
fn is_lexical(message: &str) -> bool {
    [
        "unexpected ",
        "too long ",
        "Lua code block",
        "lua code block",
    ]
    .iter()
    .any(|m| message.starts_with(m))
}

/// Random soups of the bytes that matter to the lexer, inside a `location`, through the real
/// nginx: where nginx reports a lexical error we report the same message and line; where it
/// accepts, we accept; where a directive handler stops it first (`unknown directive`, ...),
/// we either accept or find a lexical error no earlier than that line.
#[test]
fn live_nginx_agrees_on_random_statements() {
    let dir = std::env::temp_dir().join(format!("nginx-conf-random-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let atoms: [&str; 24] = [
        "a",
        "b",
        " ",
        " ",
        "\n",
        ";",
        "{",
        "}",
        "\"",
        "'",
        "#",
        "\\",
        "$",
        "(",
        ")",
        "x y",
        "\t",
        "\r",
        "${v}",
        "return",
        "content_by_lua_block",
        "[[",
        "]]",
        "--",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % bound as u64).unwrap()
    };
    let mut lexical = 0;
    for i in 0..60 {
        let len = 1 + next(14);
        let fragment: String = (0..len).map(|_| atoms[next(atoms.len())]).collect();
        let text = file_text(Place::Location, fragment.as_bytes());
        let name = format!("random-{i}.conf");
        let path = dir.join(&name);
        std::fs::write(&path, &text).unwrap();
        let Some(nginx) = run_nginx(&path, &dir) else {
            eprintln!(
                "skipping the live nginx check: nginx cannot run here (apt-get install nginx libnginx-mod-http-lua; needs root)"
            );
            return;
        };
        let ours = parse(&text).err().map(|e| e.in_file(&name).to_string());
        let context = format!("{fragment:?}: nginx said {nginx:?}, we said {ours:?}");
        if nginx.is_empty() {
            assert_eq!(ours, None, "{context}");
        } else if is_lexical(&nginx) {
            assert_eq!(ours.as_deref(), Some(nginx.as_str()), "{context}");
            lexical += 1;
        } else if let Some(ours) = &ours {
            assert!(message_line(ours) >= message_line(&nginx), "{context}");
        }
    }
    assert!(
        lexical >= 10,
        "only {lexical} lexical rejections: probes too tame"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs the real nginx (through `isolated_nginx`) on every probe: it accepts or
/// rejects lexically exactly where we do, with the same message. Skips when nginx cannot run.
#[test]
fn live_nginx_agrees_on_every_edge_case() {
    let dir = std::env::temp_dir().join(format!("nginx-conf-edge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lexical = |message: &str| {
        [
            "unexpected ",
            "too long parameter",
            "is not terminated by",
            "has no opening",
            "lua code block",
            "Lua code block",
            "open() ",
        ]
        .iter()
        .any(|m| message.contains(m))
    };
    for p in probes() {
        let path = dir.join(format!("{}.conf", p.case));
        let text = file_text(p.place, &p.input);
        std::fs::write(&path, &text).unwrap();
        let Some(nginx_error) = run_nginx(&path, &dir) else {
            eprintln!(
                "skipping the live nginx check: nginx cannot run here (apt-get install nginx libnginx-mod-http-lua; needs root)"
            );
            return;
        };
        let nginx_error = Some(nginx_error).filter(|m| !m.is_empty());
        let ours = check(&text, p.case).err().map(|e| e.to_string());
        let row = format!("row {} ({})", p.row, p.case);
        match nginx_error {
            Some(message) if lexical(&message) && !message.contains("is not terminated by") => {
                assert_eq!(ours.as_deref(), Some(message.as_str()), "{row}");
            }
            _ if matches!(p.expect, Expect::OpensBlock(_)) => {}
            other => assert_eq!(ours, None, "{row}: nginx said {other:?}"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
