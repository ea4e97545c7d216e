//! Fuzz targets for the `nginx-conf` crate.

use crate::Target;
use arbitrary::Unstructured;
use nginx_conf::crossplane::{self, payload};
use nginx_conf::{Block, Directive, End, Files, LuaBlocks, LuaBody, Options, parse, parse_with};

/// The `nginx-conf` targets.
pub const TARGETS: &[Target] = &[
    Target {
        name: "nginx_parse",
        run: nginx_parse,
    },
    Target {
        name: "nginx_roundtrip",
        run: nginx_roundtrip,
    },
    Target {
        name: "nginx_build_emit",
        run: nginx_build_emit,
    },
];

/// Decoded words of every statement, depth first, with block and Lua markers.
fn shape(block: &Block, out: &mut Vec<Vec<Vec<u8>>>) {
    for d in &block.directives {
        let mut words = vec![d.name.value().into_owned()];
        words.extend(d.arg_words().map(|w| w.value().into_owned()));
        out.push(words);
        match &d.end {
            End::Semicolon => out.push(vec![b";".to_vec()]),
            End::Lua(body) => out.push(vec![b"lua".to_vec(), body.as_bytes().to_vec()]),
            End::Block(inner) => {
                out.push(vec![b"{".to_vec()]);
                shape(inner, out);
                out.push(vec![b"}".to_vec()]);
            }
        }
    }
}

fn shape_of(block: &Block) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    shape(block, &mut out);
    out
}

/// Any bytes: parsing never panics, with every Lua setting, and a parsed file yields a
/// crossplane payload.
pub fn nginx_parse(data: &[u8]) {
    for lua in [LuaBlocks::Module, LuaBlocks::AnySuffix, LuaBlocks::Disabled] {
        let _ = parse_with(data, &Options::default().with_lua_blocks(lua));
    }
    let files = Files::main_only("fuzz.conf", data, &Options::default());
    let options = crossplane::Options::default().with_comments(true);
    let _ = payload(&files, options).to_python_string(Some(1));
}

/// Whatever parses writes back byte for byte, and its formatting reads back the same words.
pub fn nginx_roundtrip(data: &[u8]) {
    let Ok(config) = parse(data) else {
        return;
    };
    assert_eq!(config.to_bytes().expect("a parsed tree emits"), data);
    let formatted = config.format();
    let reparsed = parse(&formatted).expect("formatted output parses");
    assert_eq!(shape_of(&reparsed), shape_of(&config));
}

fn directive(u: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Option<Directive>> {
    let name: Vec<u8> = u.arbitrary()?;
    let Ok(mut d) = Directive::new(&name) else {
        return Ok(None);
    };
    let lua_name = d.is("content_by_lua_block") || name.ends_with(b"_by_lua_block");
    for _ in 0..u.int_in_range(0..=3)? {
        let value: Vec<u8> = u.arbitrary()?;
        let Ok(next) = d.clone().arg(&value) else {
            continue;
        };
        d = next;
    }
    match u.int_in_range(0..=2)? {
        1 if depth < 4 && !lua_name => {
            let mut children = Vec::new();
            for _ in 0..u.int_in_range(0..=3)? {
                if let Some(child) = directive(u, depth + 1)? {
                    children.push(child);
                }
            }
            d = d.block(children);
        }
        2 if lua_name => {
            let body: Vec<u8> = u.arbitrary()?;
            if let Ok(body) = LuaBody::new(&body) {
                d = d.lua(body);
            }
        }
        _ => {}
    }
    Ok(Some(d))
}

/// Trees made with the builder from arbitrary values: emitting then parsing gives back the
/// same words, whatever the values hold (`;`, braces, quotes, `#`, newlines, `$`).
pub fn nginx_build_emit(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let mut directives = Vec::new();
    while let Ok(Some(d)) = directive(&mut u, 0) {
        directives.push(d);
        if directives.len() > 8 {
            break;
        }
    }
    let tree = Block::new(directives);
    let text = tree.to_bytes().expect("builder trees emit");
    let parsed = parse(&text).expect("emitted text parses");
    assert_eq!(shape_of(&parsed), shape_of(&tree));
    let formatted = parse(&tree.format()).expect("formatted text parses");
    assert_eq!(shape_of(&formatted), shape_of(&tree));
}
