//! The corpus's "CoreDNS view" JSON (`docs/corefile.md` §8), written by hand so the crate
//! needs no serde: a tiny JSON value and a printer matching Python's `json.dumps(indent=2,
//! ensure_ascii=False)`, which produced the expected files.

use corefile::parser::Token;
use corefile::plugin_order::PluginOrder;
use corefile::view::{self, BlockView, LineItem};
use corefile::{Error, lexer};

/// A JSON value; objects keep insertion order.
pub(crate) enum Json {
    Bool(bool),
    Num(usize),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    /// Pretty-prints with two-space indentation and a final newline.
    pub(crate) fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, d: usize| {
            out.push('\n');
            out.push_str(&"  ".repeat(d));
        };
        match self {
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.push_str(&n.to_string()),
            Json::Str(s) => write_str(out, s),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    item.write(out, depth + 1);
                }
                indent(out, depth);
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    write_str(out, key);
                    out.push_str(": ");
                    value.write(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
        }
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn s(text: &str) -> Json {
    Json::Str(text.to_string())
}

/// A token of `block`.
fn token(t: &Token, block: &BlockView) -> Json {
    let mut fields = vec![("text", s(&t.text)), ("line", Json::Num(t.line as usize))];
    if let Some(file) = t.file.path(&block.files) {
        fields.push(("file", s(file)));
    }
    Json::Obj(fields)
}

fn line_items(items: &[LineItem]) -> Json {
    Json::Arr(
        items
            .iter()
            .map(|item| match item {
                LineItem::Word(w) => s(w),
                LineItem::Block(lines) => Json::Arr(lines.iter().map(|l| line_items(l)).collect()),
            })
            .collect(),
    )
}

fn block(b: &BlockView, normalized: bool) -> Json {
    let directives = b
        .directives
        .iter()
        .map(|d| {
            Json::Obj(vec![
                ("name", s(&d.name)),
                (
                    "tokens",
                    Json::Arr(b.tokens_of(d).iter().map(|t| token(t, b)).collect()),
                ),
                (
                    "lines",
                    Json::Arr(d.lines.iter().map(|l| line_items(l)).collect()),
                ),
            ])
        })
        .collect();
    let mut fields = Vec::new();
    if normalized {
        fields.push((
            "keys",
            Json::Arr(b.zones.iter().map(|z| s(&z.to_string())).collect()),
        ));
        fields.push((
            "raw_keys",
            Json::Arr(b.raw_keys.iter().map(|k| s(k)).collect()),
        ));
    } else {
        fields.push(("keys", Json::Arr(b.raw_keys.iter().map(|k| s(k)).collect())));
    }
    fields.push(("directives", Json::Arr(directives)));
    if normalized {
        let zones = b
            .zones
            .iter()
            .map(|z| {
                Json::Obj(vec![
                    ("key", s(&z.to_string())),
                    ("zone", s(&z.zone)),
                    ("port", s(&z.port)),
                    ("transport", s(z.transport.as_str())),
                ])
            })
            .collect();
        fields.push(("zones", Json::Arr(zones)));
    }
    if !b.listen_hosts.is_empty() {
        fields.push((
            "listen_hosts",
            Json::Arr(b.listen_hosts.iter().map(|h| s(h)).collect()),
        ));
    }
    Json::Obj(fields)
}

/// What the view of a Corefile reads besides its text: environment variables for `{$NAME}`,
/// and the files `import` names.
pub(crate) struct Context<'a> {
    pub(crate) env: &'a dyn corefile::env::Env,
    pub(crate) resolver: &'a mut dyn corefile::import::Resolver,
}

/// The view of `input` named `filename`: the full CoreDNS front end, or with `parse_only` the
/// plain caddy parse of the corpus's `setup-inputs`. Also returns whether it was accepted.
pub(crate) fn view_json(
    input: &[u8],
    filename: &str,
    parse_only: bool,
    context: Context<'_>,
) -> (Json, bool) {
    let order = PluginOrder::default();
    let mut fields = vec![("file", s(filename))];
    let mut blocks = Vec::new();
    let ok;
    if parse_only {
        match view::parse_only(input, filename, &order) {
            Ok(views) => {
                ok = true;
                fields.push(("ok", Json::Bool(true)));
                blocks = views.iter().map(|b| block(b, false)).collect();
            }
            Err(e) => {
                ok = false;
                fields.push(("ok", Json::Bool(false)));
                fields.push(("stage", s("parse")));
                fields.push(("error", s(&e.to_string())));
            }
        }
    } else {
        let Context { env, resolver } = context;
        let options = view::Options {
            filename,
            order,
            dns_port: "53",
            env,
            resolver: &mut *resolver,
        };
        match view::load_with(input, options) {
            Ok(v) => {
                ok = true;
                fields.push(("ok", Json::Bool(true)));
                if v.used_default_input {
                    fields.push(("used_default_input", Json::Bool(true)));
                }
                blocks = v.blocks.iter().map(|b| block(b, true)).collect();
            }
            Err(e) => {
                ok = false;
                fields.push(("ok", Json::Bool(false)));
                fields.push(("stage", s(e.stage())));
                fields.push(("error", s(&e.to_string())));
                // The blocks as far as the failing stage got: the parser's for normalize, the
                // normalised ones for overlap.
                match e {
                    Error::Normalize(_) => {
                        if let Ok(views) = view::parse_only(input, filename, &order) {
                            blocks = views.iter().map(|b| block(b, false)).collect();
                        }
                    }
                    Error::Overlap(_) => {
                        let options = view::Options {
                            filename,
                            order,
                            dns_port: "53",
                            env,
                            resolver: &mut *resolver,
                        };
                        if let Ok(v) = view::load_unchecked(input, options) {
                            blocks = v.blocks.iter().map(|b| block(b, true)).collect();
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    fields.push(("server_blocks", Json::Arr(blocks)));
    let tokens = lexer::tokens(input)
        .into_iter()
        .map(|t| Json::Obj(vec![("text", s(&t.text)), ("line", Json::Num(t.line))]))
        .collect();
    fields.push(("lexer_tokens", Json::Arr(tokens)));
    (Json::Obj(fields), ok)
}
