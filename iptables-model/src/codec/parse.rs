//! Parsing iptables-save / iptables-restore text into a [`RestoreFile`].

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::byte_set;
use super::lex::{Word, line_words, words};
use super::options::{Cursor, General, match_option, parse_u32, target_for, target_option};
use super::scan::{HIGHS, below, equal, find, line_end, may_contain, section_lines};
use crate::addr::Cidr;
use crate::error::{Failure, ParseError, ParseErrorKind, Position, fail};
use crate::model::target::OPTIONLESS_EXTENSIONS;
use crate::model::{
    ChainLine, ChainName, Command, Counters, IpProtocol, Line, MatchOption, Module, Policy,
    RestoreFile, Rule, Spec, Table, TableSection, Target,
};

/// Leniency switches; the default is strict, as `iptables-restore` is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Join bare words that follow `--comment VALUE` into the comment, as kube-proxy's unit
    /// tests write `--comment kubernetes service portals` without quotes.
    pub join_unquoted_comment_words: bool,
}

impl ParseOptions {
    /// The lenient reading of kube-proxy's unit-test rulesets.
    pub const fn kube_proxy_tests() -> Self {
        Self {
            join_unquoted_comment_words: true,
        }
    }
}

/// Parses a whole iptables-save / iptables-restore document. The result borrows its free
/// text (comments, interfaces, NAT addresses, unknown options) from `text`; call
/// [`RestoreFile::into_owned`] to keep it longer.
pub fn parse(text: &str) -> Result<RestoreFile<'_>, ParseError> {
    parse_with(text, ParseOptions::default())
}

/// Parses with explicit [`ParseOptions`].
pub fn parse_with(text: &str, options: ParseOptions) -> Result<RestoreFile<'_>, ParseError> {
    let mut file = RestoreFile::default();
    let mut open: Option<(TableSection, usize)> = None;
    let mut buffer = Vec::new();
    let mut specs = Vec::new();
    let mut line_no = 0;
    let bytes = text.as_bytes();
    let mut next = Some(0);
    while let Some(start) = next {
        line_no += 1;
        let at = |failure: Failure| {
            let (column, kind) = failure.into_parts();
            ParseError {
                position: Position {
                    line: line_no,
                    column,
                },
                kind,
            }
        };
        let indent = bytes
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        // Rules and chain lines (nearly every line) start with `-`, `:` or `[`: they are split
        // into words in the pass that finds their end.
        if matches!(bytes.get(start + indent), Some(b'-' | b':' | b'[')) {
            let Some((section, _)) = open.as_mut() else {
                return Err(at(fail(1 + indent, ParseErrorKind::OutsideTable)));
            };
            let end = line_words(text, start, &mut buffer).map_err(at)?;
            next = (end < bytes.len()).then_some(end + 1);
            parse_line(&buffer, &mut specs, options, &mut section.lines).map_err(at)?;
            continue;
        }
        // Blank lines, comments, table headers, COMMIT and anything else.
        let end = line_end(bytes, start);
        next = (end < bytes.len()).then_some(end + 1);
        let raw = text.get(start..end).unwrap_or_default();
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        // Blanks are ASCII: `indent` is a character boundary (the `\r` is after it).
        let trimmed = line.get(indent..).unwrap_or_default();
        if trimmed.trim_end().is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('*') {
            if open.is_some() {
                return Err(at(fail(1, ParseErrorKind::MissingCommit)));
            }
            let table = Table::from_name(name.trim_end()).ok_or_else(|| {
                at(fail(
                    2 + indent,
                    ParseErrorKind::UnknownTable(name.trim_end().into()),
                ))
            })?;
            // Room for every line up to the next table, so that the vector never regrows
            // (moving every line parsed so far).
            let mut section = TableSection::new(table);
            let rest = next.and_then(|from| bytes.get(from..)).unwrap_or_default();
            section.lines.reserve(section_lines(rest));
            open = Some((section, line_no));
            continue;
        }
        let Some((section, _)) = open.as_mut() else {
            return Err(at(fail(1 + indent, ParseErrorKind::OutsideTable)));
        };
        if trimmed.trim_end() == "COMMIT" {
            if let Some((mut section, _)) = open.take() {
                // The room left is that of comments, blank lines and the COMMIT: given back
                // only when it is a real share. Shrinking a large vector by a few lines would
                // cost a move or a remap, and glibc would then map (and fault in) the same
                // vector afresh in every later parse of such a text, as its threshold for
                // mapping follows the size of the chunks freed.
                let unused = section.lines.capacity() - section.lines.len();
                if unused > section.lines.len() / 4 {
                    section.lines.shrink_to_fit();
                }
                file.tables.push(section);
            }
            continue;
        }
        words(line, &mut buffer).map_err(at)?;
        parse_line(&buffer, &mut specs, options, &mut section.lines).map_err(at)?;
    }
    match open {
        Some((_, start)) => Err(ParseError {
            position: Position {
                line: start,
                column: 1,
            },
            kind: ParseErrorKind::MissingCommit,
        }),
        None => Ok(file),
    }
}

/// Parses the words of a rule (what follows `-A CHAIN`), for example
/// `-m tcp -p tcp --dport 80 -j ACCEPT`. The rule borrows from `text` like [`parse`]'s.
pub fn parse_rule(text: &str) -> Result<Rule<'_>, ParseError> {
    let mut buffer = Vec::new();
    let at = |failure: Failure| {
        let (column, kind) = failure.into_parts();
        ParseError {
            position: Position { line: 1, column },
            kind,
        }
    };
    words(text, &mut buffer).map_err(at)?;
    let mut cur = Cursor {
        words: &buffer,
        pos: 0,
    };
    let mut rule = Rule {
        counters: None,
        specs: Vec::new(),
        target: None,
    };
    fill_rule(
        &mut cur,
        &mut Vec::new(),
        &mut rule,
        ParseOptions::default(),
    )
    .map_err(at)?;
    Ok(rule)
}

fn chain_name(word: Option<&Word<'_>>, column: usize) -> Result<ChainName, Failure> {
    let word = word.ok_or_else(|| (column, ParseErrorKind::MissingValue("chain".into())))?;
    let name = &*word.text;
    if !valid_chain_name(name) {
        return Err(fail(
            word.column,
            ParseErrorKind::InvalidChainName(name.into()),
        ));
    }
    Ok(ChainName::from(name))
}

/// Whether `name` is a chain (or target) name iptables accepts: 1 to 28 characters without
/// blanks, quotes or backslashes, not starting with `-`, `!`, `[`, `:`, `*` or `#`.
pub(crate) fn valid_chain_name(name: &str) -> bool {
    /// ASCII bytes a chain name may not contain (whitespace, quotes, backslashes), and every
    /// non-ASCII byte, which sends the name to the character-wise check.
    const BAD_OR_WIDE: [bool; 256] = {
        let mut table = byte_set(b" \t\n\x0b\x0c\r\"\\'");
        let mut b = 0x80;
        while b < 256 {
            #[allow(clippy::indexing_slicing)] // evaluated at compile time
            {
                table[b] = true;
            }
            b += 1;
        }
        table
    };
    // Eight bytes at a time: blanks and controls, quotes, backslashes and non-ASCII bytes are
    // candidates, and the table decides.
    let candidates =
        |c| below(c, b'!') | equal(c, b'"') | equal(c, b'\\') | equal(c, b'\'') | (c & HIGHS);
    let bytes = name.as_bytes();
    let flagged =
        may_contain(bytes, candidates) && find(bytes, 0, candidates, &BAD_OR_WIDE) < bytes.len();
    // ASCII names (all real ones) are checked in that one pass; others char by char.
    let bad = if flagged && !name.is_ascii() {
        name.chars().count() > 28
            || name
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '"' | '\\' | '\''))
    } else {
        flagged || name.len() > 28
    };
    let bad_start = matches!(
        name.as_bytes().first(),
        None | Some(b'-' | b'!' | b'[' | b':' | b'*' | b'#')
    );
    !bad && !bad_start
}

/// `[PACKETS:BYTES]`, two decimal `u64`s.
fn counters(text: &str) -> Option<Counters> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    let (packets, bytes) = super::split_once_ascii(inner, b':')?;
    Some(Counters {
        packets: decimal(packets)?,
        bytes: decimal(bytes)?,
    })
}

/// Digits only (no sign), as a `u64` that does not overflow: what `str::parse` accepts of
/// them, by a byte loop (nearly every count is a `0`).
fn decimal(text: &str) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.bytes().try_fold(0u64, |n, b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// Parses one line of a table section onto the end of `lines`; `specs` is scratch space for
/// rules' criteria.
fn parse_line<'a>(
    buffer: &[Word<'a>],
    specs: &mut Vec<Spec<'a>>,
    options: ParseOptions,
    lines: &mut Vec<Line<'a>>,
) -> Result<(), Failure> {
    let mut cur = Cursor {
        words: buffer,
        pos: 0,
    };
    let first = cur
        .next()
        .ok_or((1, ParseErrorKind::UnknownLine(String::new())))?;
    if let Some(name) = first.text.strip_prefix(':') {
        let name = chain_name(
            Some(&Word {
                text: name.into(),
                column: first.column + 1,
            }),
            first.column,
        )?;
        let policy = match cur.next() {
            None => None,
            Some(w) => match &*w.text {
                "-" => None,
                "ACCEPT" => Some(Policy::Accept),
                "DROP" => Some(Policy::Drop),
                other => return Err(fail(w.column, ParseErrorKind::InvalidPolicy(other.into()))),
            },
        };
        let counters = match cur.next() {
            None => None,
            Some(w) => Some(counters(&w.text).ok_or_else(|| {
                (
                    w.column,
                    ParseErrorKind::InvalidCounters(w.text.to_string()),
                )
            })?),
        };
        if let Some(extra) = cur.next() {
            return Err(fail(
                extra.column,
                ParseErrorKind::UnexpectedWord(extra.text.to_string()),
            ));
        }
        lines.push(Line::Chain(ChainLine {
            name,
            policy,
            counters,
        }));
        return Ok(());
    }
    let (prefix, command) = if first.text.starts_with('[') {
        let c = counters(&first.text).ok_or_else(|| {
            (
                first.column,
                ParseErrorKind::InvalidCounters(first.text.to_string()),
            )
        })?;
        (
            Some(c),
            cur.next().ok_or_else(|| {
                (
                    first.column,
                    ParseErrorKind::UnknownLine(first.text.to_string()),
                )
            })?,
        )
    } else {
        (None, first)
    };
    let column = command.column;
    // A rule starts empty and is parsed where its line lies in `lines` (not moved after).
    let rule = || Rule {
        counters: prefix,
        specs: Vec::new(),
        target: None,
    };
    let command = match &*command.text {
        "-A" | "--append" => Command::Append {
            chain: chain_name(cur.next(), column)?,
            rule: rule(),
        },
        "-I" | "--insert" => {
            let chain = chain_name(cur.next(), column)?;
            let position = match cur.peek().and_then(|w| {
                parse_u32(&w.text).filter(|_| w.text.bytes().all(|b| b.is_ascii_digit()))
            }) {
                Some(n) => {
                    cur.pos += 1;
                    Some(n)
                }
                None => None,
            };
            Command::Insert {
                chain,
                position,
                rule: rule(),
            }
        }
        "-D" | "--delete" => {
            let chain = chain_name(cur.next(), column)?;
            match cur.peek().map(|w| (w, w.text.parse::<u32>())) {
                Some((w, Ok(position))) if cur.words.len() == cur.pos + 1 => {
                    if position == 0 {
                        return Err(fail(
                            w.column,
                            ParseErrorKind::InvalidValue {
                                option: "-D".into(),
                                value: "0".into(),
                            },
                        ));
                    }
                    cur.pos += 1;
                    Command::DeleteAt { chain, position }
                }
                _ => Command::Delete {
                    chain,
                    rule: rule(),
                },
            }
        }
        "-N" | "--new-chain" => Command::NewChain(chain_name(cur.next(), column)?),
        "-X" | "--delete-chain" => Command::DeleteChain(
            cur.peek()
                .map(|_| chain_name(cur.next(), column))
                .transpose()?,
        ),
        "-F" | "--flush" => Command::Flush(
            cur.peek()
                .map(|_| chain_name(cur.next(), column))
                .transpose()?,
        ),
        other => return Err(fail(column, ParseErrorKind::UnknownLine(other.into()))),
    };
    lines.push(Line::Command(command));
    if let Some(Line::Command(
        Command::Append { rule, .. } | Command::Insert { rule, .. } | Command::Delete { rule, .. },
    )) = lines.last_mut()
    {
        fill_rule(&mut cur, specs, rule, options)?;
    }
    if let Some(extra) = cur.next() {
        return Err(fail(
            extra.column,
            ParseErrorKind::UnexpectedWord(extra.text.to_string()),
        ));
    }
    Ok(())
}

/// Parses rule words up to the end of the line into `rule` (which has no criteria yet). The
/// criteria are gathered in `scratch` (kept for the next rule) and copied into a vector of
/// their exact size.
fn fill_rule<'a>(
    cur: &mut Cursor<'_, 'a>,
    scratch: &mut Vec<Spec<'a>>,
    rule: &mut Rule<'a>,
    options: ParseOptions,
) -> Result<(), Failure> {
    scratch.clear();
    rule.specs = core::mem::take(scratch);
    let parsed = criteria(cur, rule, options);
    // `append` moves the criteria with one copy of their bytes.
    let mut specs = Vec::with_capacity(rule.specs.len());
    specs.append(&mut rule.specs);
    *scratch = core::mem::replace(&mut rule.specs, specs);
    parsed
}

/// Parses the criteria and the target of `rule`.
fn criteria<'a>(
    cur: &mut Cursor<'_, 'a>,
    rule: &mut Rule<'a>,
    options: ParseOptions,
) -> Result<(), Failure> {
    let mut negated: Option<usize> = None;
    let mut target_needs_option = false;
    // The options kept verbatim while no `-p` had been read, with their columns.
    let mut verbatim_before_protocol: Vec<(usize, &str)> = Vec::new();
    while let Some(word) = cur.next() {
        let column = word.column;
        let neg = negated.is_some();
        let text = &*word.text;
        let general = General::of(text);
        let spec = match general {
            Some(General::Not) => {
                if neg {
                    return Err(fail(column, ParseErrorKind::MisplacedNegation));
                }
                negated = Some(column);
                continue;
            }
            Some(General::Protocol) => {
                if rule.protocol().is_some() {
                    return Err(fail(column, ParseErrorKind::DuplicateOption("-p".into())));
                }
                let protocol = IpProtocol::from_name(&cur.value(text, column)?.text);
                // iptables gives an option to the protocol's own match only once `-p` has been
                // read: written before it, `--dport` is an unknown option there. Kept verbatim,
                // it would change owner when iptables-save prints `-p` first (docs/iptables.md
                // §7), and the saved rule would not read back.
                if let Some(implicit) = Module::implicit(protocol.name())
                    && let Some((at, option)) = verbatim_before_protocol
                        .iter()
                        .find(|(_, option)| implicit.accepts(option))
                {
                    return Err(fail(*at, ParseErrorKind::UnknownOption((*option).into())));
                }
                Spec::Protocol {
                    negated: neg,
                    protocol,
                }
            }
            Some(kind @ (General::Source | General::Destination)) => {
                let value = cur.value(text, column)?;
                let address: Cidr = value.text.parse().map_err(|_| {
                    (
                        value.column,
                        ParseErrorKind::InvalidValue {
                            option: text.into(),
                            value: value.text.to_string(),
                        },
                    )
                })?;
                if kind == General::Source {
                    Spec::Source {
                        negated: neg,
                        address,
                    }
                } else {
                    Spec::Destination {
                        negated: neg,
                        address,
                    }
                }
            }
            Some(kind @ (General::InInterface | General::OutInterface)) => {
                let name = cur.value(text, column)?.text.clone();
                if kind == General::InInterface {
                    Spec::InInterface { negated: neg, name }
                } else {
                    Spec::OutInterface { negated: neg, name }
                }
            }
            Some(General::Fragment) => Spec::Fragment { negated: neg },
            Some(General::Match) => {
                if neg {
                    return Err(fail(column, ParseErrorKind::MisplacedNegation));
                }
                let module = Module::from_name(&cur.value(text, column)?.text);
                Spec::Module(module)
            }
            Some(General::SetCounters) => {
                let packets = cur.value(text, column)?;
                let bytes = cur.value(text, column)?;
                let counters = decimal(&packets.text)
                    .zip(decimal(&bytes.text))
                    .map(|(packets, bytes)| Counters { packets, bytes });
                rule.counters = Some(counters.ok_or_else(|| {
                    let both = alloc::format!("[{}:{}]", packets.text, bytes.text);
                    fail(packets.column, ParseErrorKind::InvalidCounters(both))
                })?);
                continue;
            }
            Some(General::Jump | General::Goto) => {
                if neg {
                    return Err(fail(column, ParseErrorKind::MisplacedNegation));
                }
                if rule.target.is_some() {
                    return Err(fail(column, ParseErrorKind::DuplicateTarget));
                }
                let name = cur.value(text, column)?;
                let target_name = chain_name(Some(name), column)?;
                let goto = general == Some(General::Goto);
                let next_is_option = cur
                    .peek()
                    .is_some_and(|w| w.text.starts_with("--") && General::of(&w.text).is_none());
                rule.target = Some(match target_for(&target_name) {
                    _ if goto => Target::Goto(target_name),
                    Some(t) => {
                        target_needs_option = matches!(t, Target::Mark(_));
                        t
                    }
                    None if next_is_option
                        || OPTIONLESS_EXTENSIONS.contains(&target_name.as_str()) =>
                    {
                        Target::other(target_name, Vec::new())
                    }
                    None => Target::Jump(target_name),
                });
                continue;
            }
            None if text.starts_with("--") => {
                let option = text;
                if !neg
                    && let Some(target) = rule.target.as_mut()
                    && target_option(target, option, column, cur)?
                {
                    target_needs_option = false;
                    continue;
                }
                let mut modules = rule.specs.iter().filter_map(|s| match s {
                    Spec::Module(m) => Some(m),
                    _ => None,
                });
                let any_module = rule.specs.iter().any(|s| matches!(s, Spec::Module(_)));
                let known = modules.any(|m| m.accepts(option));
                let implicit = rule
                    .protocol()
                    .and_then(Module::implicit)
                    .is_some_and(|m| m.accepts(option));
                if !known && !implicit && !any_module {
                    return Err(fail(column, ParseErrorKind::UnknownOption(option.into())));
                }
                let parsed = if known || implicit {
                    match_option(option, neg, column, cur)?
                } else {
                    if rule.protocol().is_none() {
                        verbatim_before_protocol.push((column, option));
                    }
                    MatchOption::unknown(neg, word.text.clone(), super::options::verbatim_args(cur))
                };
                Spec::Option(parsed)
            }
            None => {
                let other = text;
                if options.join_unquoted_comment_words
                    && !neg
                    && let Some(Spec::Option(MatchOption::Comment(comment))) = rule.specs.last_mut()
                {
                    let comment = comment.to_mut();
                    comment.push(' ');
                    comment.push_str(other);
                    continue;
                }
                return Err(fail(column, ParseErrorKind::UnexpectedWord(other.into())));
            }
        };
        negated = None;
        rule.specs.push(spec);
    }
    if let Some(column) = negated {
        return Err(fail(column, ParseErrorKind::MisplacedNegation));
    }
    if target_needs_option {
        return Err(fail(
            cur.end_column(),
            ParseErrorKind::MissingValue("--set-xmark".into()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Counters, ParseErrorKind, counters, decimal, parse_rule};

    #[test]
    fn counters_are_two_decimal_u64s_in_brackets() {
        let both = |packets, bytes| Some(Counters { packets, bytes });
        assert_eq!(counters("[0:0]"), both(0, 0));
        assert_eq!(counters("[12:3400]"), both(12, 3400));
        assert_eq!(counters("[18446744073709551615:1]"), both(u64::MAX, 1));
        for bad in [
            "[18446744073709551616:0]",
            "[+1:0]",
            "[:0]",
            "[1:]",
            "[1:2:3]",
            "[1 :2]",
            "1:2",
            "[1:2",
            "[١:2]",
        ] {
            assert_eq!(counters(bad), None, "{bad}");
        }
    }

    #[test]
    fn set_counters_takes_packets_and_bytes_as_two_words() {
        let rule = parse_rule("-c 3 400 -j ACCEPT").unwrap();
        assert_eq!(
            rule.counters,
            Some(Counters {
                packets: 3,
                bytes: 400
            })
        );
        for (bad, shown) in [
            ("-c 1:2 3", "[1:2:3]"),
            ("-c 1 x", "[1:x]"),
            ("-c -1 0", "[-1:0]"),
        ] {
            let error = parse_rule(bad).unwrap_err();
            assert_eq!(error.position.column, 4, "{bad}");
            assert_eq!(
                error.kind,
                ParseErrorKind::InvalidCounters(shown.into()),
                "{bad}"
            );
        }
    }

    /// Fuzz finding (`iptables_parse`, issue 29): `-m 8 --dport -p tcp` was accepted with
    /// `--dport` as an option of the unknown module `8`, because `-p tcp` came after it. The
    /// saved form prints `-p` first, `-p tcp -m 8 --dport`, where `--dport` belongs to tcp's
    /// implicit match and needs a value: the normalised rule did not parse. iptables refuses a
    /// port option written before the `-p` whose match takes it ("unknown option"), and so
    /// does the parser now.
    #[test]
    fn a_port_option_before_the_protocol_whose_match_takes_it_is_unknown() {
        for (rule, option, column) in [
            ("-m 8 --dport -p tcp", "--dport", 6),
            ("-m comment --comment x --dport 80 -p tcp", "--dport", 24),
            ("-m 8 ! --sport 1 --protocol udp -j X", "--sport", 8),
            (
                "-m 8 --foo -m 9 --destination-port 9 ! -p sctp",
                "--destination-port",
                17,
            ),
        ] {
            let error = parse_rule(rule).unwrap_err();
            assert_eq!(
                error.kind,
                ParseErrorKind::UnknownOption(option.into()),
                "{rule}"
            );
            assert_eq!(error.position.column, column, "{rule}");
        }
        // Still accepted: `-p` first (the port is tcp's), a module that takes the port, a
        // protocol without an implicit match, no `-p` at all, and options no protocol takes.
        for rule in [
            "-p tcp -m 8 --dport 80",
            "-m tcp --dport 80 -p tcp",
            "-m 8 --dport -p icmp",
            "-m 8 --dport",
            "-m 8 --foo 1 -p tcp --dport 2",
            "-m 8 --dports 1 -p udp",
        ] {
            assert!(parse_rule(rule).is_ok(), "{rule}");
        }
    }

    proptest! {
        /// The byte loop accepts exactly the all-digit texts `str::parse::<u64>` accepts.
        #[test]
        fn decimal_reads_as_str_parse_does(text in "[0-9+ a-]{0,22}") {
            let all_digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
            let expected = if all_digits { text.parse::<u64>().ok() } else { None };
            prop_assert_eq!(decimal(&text), expected);
        }
    }
}
