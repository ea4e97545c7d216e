//! The CoreDNS view (`docs/corefile.md` §4 and §8): what CoreDNS's front end makes of a Corefile.
//!
//! Parse with the plugin.cfg directive list, fall back to the default Corefile when no server
//! block is left, normalize every key into zone addresses, then run the overlap check.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cmp::Ordering;
use core::net::IpAddr;
use core::ops::Range;

use crate::env::{Env, NoEnv};
use crate::error::{Error, ParseError};
use crate::import::{NoFiles, Resolver};
use crate::overlap::{BlockOverlapChecker, Conflict, Listener, OverlapError, UNBOUND};
use crate::parser::{
    self, Directive, ParseOptions, ServerBlock, Token, tokens_in, tokens_into_owned,
};
use crate::plugin_order::PluginOrder;
use crate::zone::{self, ZoneAddr};

/// The Corefile CoreDNS uses when the input has no server block (`PORT` is the DNS port).
pub fn default_corefile(dns_port: &str) -> String {
    alloc::format!(".:{dns_port} {{\n    whoami\n    log\n}}\n")
}

/// How to load a Corefile.
pub struct Options<'a> {
    /// The name errors print for the input (CoreDNS: the `-conf` value; `Corefile`).
    pub filename: &'a str,
    /// The directive list and execution order.
    pub order: PluginOrder<'a>,
    /// The default DNS port (`-dns.port`), `53`.
    pub dns_port: &'a str,
    /// Environment variables for `{$NAME}` / `{%NAME%}`.
    pub env: &'a dyn Env,
    /// Resolves `import` of files.
    pub resolver: &'a mut dyn Resolver,
}

impl core::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Options")
            .field("filename", &self.filename)
            .field("order", &self.order.version)
            .field("dns_port", &self.dns_port)
            .finish_non_exhaustive()
    }
}

/// The CoreDNS view of a Corefile. Its text borrows from the input where it can.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorefileView<'a> {
    /// The input had no server block, so the default Corefile was used.
    pub used_default_input: bool,
    /// The server blocks, in source order.
    pub blocks: Vec<BlockView<'a>>,
}

/// One server block as CoreDNS sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockView<'a> {
    /// The keys as the parser returned them.
    pub raw_keys: Vec<Cow<'a, str>>,
    /// One zone address per key (a CIDR key may give several), in key order; empty in
    /// parse-only mode.
    pub zones: Vec<ZoneAddr>,
    /// Directives in execution order.
    pub directives: Vec<DirectiveView<'a>>,
    /// The literal IP addresses of `bind` (minus `except`), used by the overlap check.
    pub listen_hosts: Vec<String>,
    /// The tokens of every directive, each directive's a range of them
    /// ([`BlockView::tokens_of`]).
    pub tokens: Vec<Token<'a>>,
    /// The paths of the imported files its tokens came from ([`crate::parser::FileId::path`]).
    pub files: Vec<Arc<str>>,
}

/// One directive of a block: its tokens and the Dispenser's line structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectiveView<'a> {
    /// The directive name.
    pub name: Cow<'a, str>,
    /// Every token of every occurrence, in source order: a range of its block's
    /// [`BlockView::tokens`].
    pub tokens: Range<usize>,
    /// The occurrences as lines: `[name, arg, ..., [nested lines], ...]`.
    pub lines: Vec<Line<'a>>,
}

/// A line: words and nested blocks.
pub type Line<'a> = Vec<LineItem<'a>>;

/// One item of a [`Line`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineItem<'a> {
    /// A token's text.
    Word(Cow<'a, str>),
    /// A `{ ... }` block, as its lines.
    Block(Vec<Line<'a>>),
}

impl CorefileView<'_> {
    /// The same view, owning its text (to keep it after the input is gone).
    pub fn into_owned(self) -> CorefileView<'static> {
        CorefileView {
            used_default_input: self.used_default_input,
            blocks: self.blocks.into_iter().map(BlockView::into_owned).collect(),
        }
    }
}

impl BlockView<'_> {
    /// The same block, owning its text.
    pub fn into_owned(self) -> BlockView<'static> {
        BlockView {
            raw_keys: self.raw_keys.into_iter().map(owned).collect(),
            zones: self.zones,
            directives: self
                .directives
                .into_iter()
                .map(DirectiveView::into_owned)
                .collect(),
            listen_hosts: self.listen_hosts,
            tokens: tokens_into_owned(self.tokens),
            files: self.files,
        }
    }
}

impl<'a> BlockView<'a> {
    /// The directive called `name`, if the block has it.
    pub fn directive(&self, name: &str) -> Option<&DirectiveView<'a>> {
        self.directives.iter().find(|d| d.name == name)
    }

    /// The tokens of `directive`, one of this block's.
    pub fn tokens_of(&self, directive: &DirectiveView<'_>) -> &[Token<'a>] {
        tokens_in(&self.tokens, &directive.tokens)
    }
}

impl DirectiveView<'_> {
    /// The same directive, owning its text.
    pub fn into_owned(self) -> DirectiveView<'static> {
        DirectiveView {
            name: owned(self.name),
            tokens: self.tokens,
            lines: self.lines.into_iter().map(line_into_owned).collect(),
        }
    }
}

impl LineItem<'_> {
    /// The same item, owning its text. Recurses once per nested block, so at most
    /// [`MAX_LINES_DEPTH`] deep.
    pub fn into_owned(self) -> LineItem<'static> {
        match self {
            LineItem::Word(word) => LineItem::Word(owned(word)),
            LineItem::Block(lines) => {
                LineItem::Block(lines.into_iter().map(line_into_owned).collect())
            }
        }
    }
}

fn line_into_owned(line: Line<'_>) -> Line<'static> {
    line.into_iter().map(LineItem::into_owned).collect()
}

fn owned(text: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(text.into_owned())
}

/// Loads a Corefile as CoreDNS v1.14.7 does with no environment and no files.
pub fn load(input: &[u8]) -> Result<CorefileView<'_>, Error> {
    load_with(
        input,
        Options {
            filename: "Corefile",
            order: PluginOrder::default(),
            dns_port: "53",
            env: &NoEnv,
            resolver: &mut NoFiles,
        },
    )
}

/// Loads a Corefile through the whole CoreDNS front end.
pub fn load_with<'i>(input: &'i [u8], options: Options<'_>) -> Result<CorefileView<'i>, Error> {
    let view = load_unchecked(input, options)?;
    check_overlap(&view.blocks)?;
    Ok(view)
}

/// As [`load_with`] without the last stage, the overlap check: what CoreDNS has built of the
/// server blocks when it looks for two that serve the same address.
pub fn load_unchecked<'i>(
    input: &'i [u8],
    options: Options<'_>,
) -> Result<CorefileView<'i>, Error> {
    let Options {
        filename,
        order,
        dns_port,
        env,
        resolver,
    } = options;
    let mut blocks = parser::parse(
        input,
        ParseOptions {
            filename,
            directives: Some(order.names),
            env,
            resolver,
        },
    )?;
    let used_default_input = blocks.is_empty();
    if used_default_input {
        blocks = parser::parse(
            default_corefile(dns_port).as_bytes(),
            ParseOptions {
                filename: "Corefile",
                directives: Some(order.names),
                env: &NoEnv,
                resolver: &mut NoFiles,
            },
        )?
        .into_iter()
        .map(ServerBlock::into_owned)
        .collect();
    }
    let mut views = Vec::with_capacity(blocks.len());
    for block in blocks {
        let mut zones = Vec::new();
        for key in &block.keys {
            zones.extend(zone::normalize_key(key, dns_port).map_err(Error::Normalize)?);
        }
        let mut view = block_view(block, &order);
        view.zones = zones;
        views.push(view);
    }
    Ok(CorefileView {
        used_default_input,
        blocks: views,
    })
}

/// Parses like caddy with no directive list and no CoreDNS stages (the corpus's
/// `setup-inputs` mode): keys stay raw and unknown directives sort alphabetically after the
/// known ones.
pub fn parse_only<'i>(
    input: &'i [u8],
    filename: &str,
    order: &PluginOrder<'_>,
) -> Result<Vec<BlockView<'i>>, ParseError> {
    let blocks = parse_any_directive(input, filename)?;
    Ok(blocks.into_iter().map(|b| block_view(b, order)).collect())
}

/// The server blocks of `input` as caddy parses them with no directive list, no environment
/// and no files.
pub(crate) fn parse_any_directive<'i>(
    input: &'i [u8],
    filename: &str,
) -> Result<Vec<ServerBlock<'i>>, ParseError> {
    parser::parse(
        input,
        ParseOptions {
            filename,
            directives: None,
            env: &NoEnv,
            resolver: &mut NoFiles,
        },
    )
}

/// Whether two parses mean the same to CoreDNS: the same keys, and per directive the same
/// token texts, whatever the line numbers and files.
///
/// Directive order does not matter: a block's names are distinct, so the execution order
/// [`block_view`] gives them depends only on which names there are.
pub fn same_meaning(a: &[ServerBlock<'_>], b: &[ServerBlock<'_>]) -> bool {
    let same_texts = |x: &[Token<'_>], y: &[Token<'_>]| {
        x.len() == y.len() && x.iter().zip(y).all(|(s, t)| s.text == t.text)
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.keys == y.keys
                && x.directives.len() == y.directives.len()
                && x.directives.iter().all(|d| {
                    y.directive(&d.name)
                        .is_some_and(|e| same_texts(x.tokens_of(d), y.tokens_of(e)))
                })
        })
}

/// A block's view without normalization: directives in execution order, lines and `bind`
/// addresses computed, no zones.
pub fn block_view<'a>(block: ServerBlock<'a>, order: &PluginOrder<'_>) -> BlockView<'a> {
    // Names are distinct within a block, so this is a total order: known directives by
    // position, then the others by name (CoreDNS sorts the unknown ones alphabetically).
    let ServerBlock {
        keys,
        directives,
        tokens,
        files,
    } = block;
    let mut ordered: Vec<(Option<usize>, Directive<'a>)> = directives
        .into_iter()
        .map(|d| (order.position(&d.name), d))
        .collect();
    ordered.sort_unstable_by(|(p, a), (q, b)| match (p, q) {
        (Some(p), Some(q)) => p.cmp(q),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.name.cmp(&b.name),
    });
    let directives: Vec<DirectiveView<'a>> = ordered
        .into_iter()
        .map(|(_, d)| DirectiveView {
            lines: lines(tokens_in(&tokens, &d.tokens)),
            name: d.name,
            tokens: d.tokens,
        })
        .collect();
    let listen_hosts = directives
        .iter()
        .find(|d| d.name == "bind")
        .map(|d| bind_addresses(&d.lines))
        .unwrap_or_default();
    BlockView {
        raw_keys: keys,
        zones: Vec::new(),
        directives,
        listen_hosts,
        tokens,
        files,
    }
}

/// Deepest nesting [`lines`] represents as nested blocks; deeper braces stay words, so the
/// structure (and dropping it) needs no deep recursion. Tokens are never affected.
pub const MAX_LINES_DEPTH: usize = 256;

/// Builds the Dispenser line structure of a token list, without recursion.
pub fn lines<'a>(tokens: &[Token<'a>]) -> Vec<Line<'a>> {
    let mut top: Vec<Line<'a>> = Vec::new();
    let mut open: Vec<(Line<'a>, Vec<Line<'a>>)> = Vec::new();
    let mut line: Line<'a> = Vec::new();
    let mut line_open = false;
    let mut prev: Option<&Token<'a>> = None;
    let mut too_deep = 0usize;
    for token in tokens {
        let same_line = line_open && prev.is_some_and(|p| p.is_same_line_as(token));
        prev = Some(token);
        if line_open && !same_line {
            finish(&mut top, &mut open, core::mem::take(&mut line));
            line_open = false;
        }
        match &*token.text {
            "{" if open.len() >= MAX_LINES_DEPTH => {
                too_deep += 1;
                line.push(LineItem::Word(token.text.to_cow()));
                line_open = true;
            }
            "}" if too_deep > 0 => {
                too_deep -= 1;
                line.push(LineItem::Word(token.text.to_cow()));
                line_open = true;
            }
            "{" => {
                open.push((core::mem::take(&mut line), Vec::new()));
                line_open = false;
            }
            "}" if !line_open && !open.is_empty() => {
                if let Some((outer, block)) = open.pop() {
                    line = outer;
                    line.push(LineItem::Block(block));
                }
                line_open = true;
            }
            _ => {
                line.push(LineItem::Word(token.text.to_cow()));
                line_open = true;
            }
        }
    }
    if line_open {
        finish(&mut top, &mut open, core::mem::take(&mut line));
    }
    while let Some((mut outer, block)) = open.pop() {
        outer.push(LineItem::Block(block));
        finish(&mut top, &mut open, outer);
    }
    top
}

fn finish<'a>(top: &mut Vec<Line<'a>>, open: &mut [(Line<'a>, Vec<Line<'a>>)], line: Line<'a>) {
    match open.last_mut() {
        Some((_, block)) => block.push(line),
        None => top.push(line),
    }
}

/// The literal IP arguments of every `bind` line, minus the `except` list.
fn bind_addresses(lines: &[Line<'_>]) -> Vec<String> {
    let mut addresses = Vec::new();
    let mut except = Vec::new();
    for line in lines {
        for item in line.iter().skip(1) {
            match item {
                LineItem::Word(word) => addresses.push(&**word),
                LineItem::Block(block) => {
                    for option in block {
                        if let [LineItem::Word(first), rest @ ..] = option.as_slice()
                            && &**first == "except"
                        {
                            except.extend(rest.iter().filter_map(|i| match i {
                                LineItem::Word(w) => Some(&**w),
                                LineItem::Block(_) => None,
                            }));
                        }
                    }
                }
            }
        }
    }
    addresses
        .into_iter()
        .filter(|a| a.parse::<IpAddr>().is_ok() && !except.contains(a))
        .map(String::from)
        .collect()
}

/// The overlap check. Blocks that use `view` (filtered) are checked first and never
/// registered, then the others are checked and registered, so the result does not depend on
/// block order (coredns/coredns#7733, fixed by #8001).
fn check_overlap(blocks: &[BlockView<'_>]) -> Result<(), Error> {
    let mut zone_ids: BTreeMap<&ZoneAddr, usize> = BTreeMap::new();
    let mut host_ids: BTreeMap<&str, usize> = BTreeMap::new();
    let mut hosts_by_id: Vec<&str> = Vec::new();
    host_ids.insert("", UNBOUND);
    hosts_by_id.push("");
    let mut checker = BlockOverlapChecker::default();
    let is_filtered = |block: &&BlockView<'_>| block.directives.iter().any(|d| d.name == "view");
    let filtered = blocks.iter().filter(is_filtered).map(|b| (b, true));
    let unfiltered = blocks
        .iter()
        .filter(|b| !is_filtered(b))
        .map(|b| (b, false));
    for (block, filtered) in filtered.chain(unfiltered) {
        let hosts: Vec<usize> = block
            .listen_hosts
            .iter()
            .map(|host| {
                *host_ids.entry(host.as_str()).or_insert_with(|| {
                    hosts_by_id.push(host);
                    hosts_by_id.len() - 1
                })
            })
            .collect();
        let zones: Vec<usize> = block
            .zones
            .iter()
            .map(|zone| {
                let next = zone_ids.len();
                *zone_ids.entry(zone).or_insert(next)
            })
            .collect();
        let Err(clash) = checker.add_block(&zones, &hosts, filtered) else {
            continue;
        };
        // The position comes from this block's zones, so it is always there.
        let Some(zone) = block.zones.get(clash.zone) else {
            continue;
        };
        let listener = |address: &str| {
            Box::new(Listener {
                zone: zone.clone(),
                address: String::from(address),
            })
        };
        let host = block
            .listen_hosts
            .get(clash.host)
            .map_or("", String::as_str);
        let error = match clash.conflict {
            Conflict::AlreadyDefined => OverlapError::AlreadyDefined(listener(host)),
            Conflict::Overlap(other) => OverlapError::Overlap {
                listener: listener(host),
                with: listener(hosts_by_id.get(other).copied().unwrap_or_default()),
            },
        };
        return Err(Error::Overlap(error));
    }
    Ok(())
}
