//! Values of match options and target options.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::net::IpAddr;

use super::lex::Word;
use crate::error::{Failure, ParseErrorKind, fail};
use crate::model::{
    AddrType, CtState, MarkAction, MarkValue, MatchOption, MultiportKind, PortRange, Probability,
    RecentOption, StatisticMode, Target,
};

/// Words of one line with a read position.
pub(crate) struct Cursor<'w, 'a> {
    pub(crate) words: &'w [Word<'a>],
    pub(crate) pos: usize,
}

impl<'w, 'a> Cursor<'w, 'a> {
    pub(crate) fn peek(&self) -> Option<&'w Word<'a>> {
        self.words.get(self.pos)
    }

    pub(crate) fn next(&mut self) -> Option<&'w Word<'a>> {
        let word = self.words.get(self.pos)?;
        self.pos += 1;
        Some(word)
    }

    /// The value of option `option` (written at `column`).
    pub(crate) fn value(&mut self, option: &str, column: usize) -> Result<&'w Word<'a>, Failure> {
        self.next()
            .ok_or_else(|| fail(column, ParseErrorKind::MissingValue(option.into())))
    }

    /// The column just after the last word (for errors at the end of a line).
    pub(crate) fn end_column(&self) -> usize {
        self.words.last().map_or(1, |w| w.column + w.text.len())
    }
}

fn invalid(option: &str, word: &Word<'_>) -> Failure {
    fail(
        word.column,
        ParseErrorKind::InvalidValue {
            option: option.into(),
            value: word.text.to_string(),
        },
    )
}

/// A decimal or `0x` hexadecimal u32.
pub(crate) fn parse_u32(text: &str) -> Option<u32> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u32::from_str_radix(hex, 16).ok()
        }
        Some(_) => None,
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

fn parse_port(text: &str) -> Option<u16> {
    (!text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// `80`, `80:90`, `:90` (from 0) or `80:` (to 65535).
pub(crate) fn parse_port_range(text: &str) -> Option<PortRange> {
    match text.split_once(':') {
        None => parse_port(text).map(PortRange::single),
        Some((a, b)) => {
            let start = if a.is_empty() { 0 } else { parse_port(a)? };
            let end = if b.is_empty() {
                u16::MAX
            } else {
                parse_port(b)?
            };
            (start <= end).then_some(PortRange { start, end })
        }
    }
}

fn parse_mark(text: &str) -> Option<MarkValue> {
    match text.split_once('/') {
        Some((v, m)) => Some(MarkValue {
            value: parse_u32(v)?,
            mask: Some(parse_u32(m)?),
        }),
        None => Some(MarkValue {
            value: parse_u32(text)?,
            mask: None,
        }),
    }
}

fn parse_list<T: Copy>(text: &str, names: &[(T, &str)]) -> Option<Vec<T>> {
    text.split(',')
        .map(|part| {
            names
                .iter()
                .find(|(_, n)| n.eq_ignore_ascii_case(part))
                .map(|(v, _)| *v)
        })
        .collect()
}

/// Whether `option` can carry a `!`.
fn negatable(option: &MatchOption) -> bool {
    match option {
        MatchOption::Recent { option, .. } => {
            matches!(
                option,
                RecentOption::Set
                    | RecentOption::Rcheck
                    | RecentOption::Update
                    | RecentOption::Remove
            )
        }
        MatchOption::SourcePort { .. }
        | MatchOption::DestinationPort { .. }
        | MatchOption::CtState { .. }
        | MatchOption::State { .. }
        | MatchOption::Mark { .. }
        | MatchOption::Probability { .. }
        | MatchOption::Every { .. }
        | MatchOption::SrcType { .. }
        | MatchOption::DstType { .. }
        | MatchOption::Multiport { .. }
        | MatchOption::Unknown(_) => true,
        MatchOption::Comment(_)
        | MatchOption::StatisticMode(_)
        | MatchOption::Packet(_)
        | MatchOption::LimitIfaceIn
        | MatchOption::LimitIfaceOut
        | MatchOption::NfacctName(_) => false,
    }
}

/// Parses the value(s) of the typed match option `name` (written at `column`).
pub(crate) fn match_option<'a>(
    name: &str,
    negated: bool,
    column: usize,
    cur: &mut Cursor<'_, 'a>,
) -> Result<MatchOption<'a>, Failure> {
    let recent = |option| MatchOption::Recent { negated, option };
    let option = match name {
        "--comment" => MatchOption::Comment(cur.value(name, column)?.text.clone()),
        "--dport" | "--destination-port" | "--sport" | "--source-port" => {
            let word = cur.value(name, column)?;
            let ports = parse_port_range(&word.text).ok_or_else(|| invalid(name, word))?;
            if name.starts_with("--d") {
                MatchOption::DestinationPort { negated, ports }
            } else {
                MatchOption::SourcePort { negated, ports }
            }
        }
        "--ctstate" | "--state" => {
            let word = cur.value(name, column)?;
            let states =
                parse_list(&word.text, &CtState::ALL).ok_or_else(|| invalid(name, word))?;
            if name == "--state" {
                MatchOption::State { negated, states }
            } else {
                MatchOption::CtState { negated, states }
            }
        }
        "--mark" => {
            let word = cur.value(name, column)?;
            MatchOption::Mark {
                negated,
                mark: parse_mark(&word.text).ok_or_else(|| invalid(name, word))?,
            }
        }
        "--mode" => {
            let word = cur.value(name, column)?;
            MatchOption::StatisticMode(match &*word.text {
                "random" => StatisticMode::Random,
                "nth" => StatisticMode::Nth,
                _ => return Err(invalid(name, word)),
            })
        }
        "--probability" => {
            let word = cur.value(name, column)?;
            MatchOption::Probability {
                negated,
                probability: Probability::new(&word.text).ok_or_else(|| invalid(name, word))?,
            }
        }
        "--every" | "--packet" | "--seconds" | "--hitcount" => {
            let word = cur.value(name, column)?;
            let n = word
                .text
                .parse::<u32>()
                .ok()
                .filter(|n| name != "--every" || *n > 0)
                .ok_or_else(|| invalid(name, word))?;
            match name {
                "--every" => MatchOption::Every { negated, every: n },
                "--packet" => MatchOption::Packet(n),
                "--seconds" => recent(RecentOption::Seconds(n)),
                _ => recent(RecentOption::HitCount(n)),
            }
        }
        "--name" => recent(RecentOption::Name(
            cur.value(name, column)?.text.to_string(),
        )),
        "--set" => recent(RecentOption::Set),
        "--rcheck" => recent(RecentOption::Rcheck),
        "--update" => recent(RecentOption::Update),
        "--remove" => recent(RecentOption::Remove),
        "--reap" => recent(RecentOption::Reap),
        "--rttl" => recent(RecentOption::Rttl),
        "--rsource" => recent(RecentOption::Rsource),
        "--rdest" => recent(RecentOption::Rdest),
        "--mask" => {
            let word = cur.value(name, column)?;
            recent(RecentOption::Mask(
                word.text
                    .parse::<IpAddr>()
                    .map_err(|_| invalid(name, word))?,
            ))
        }
        "--src-type" | "--dst-type" => {
            let word = cur.value(name, column)?;
            let types =
                parse_list(&word.text, &AddrType::ALL).ok_or_else(|| invalid(name, word))?;
            if name == "--src-type" {
                MatchOption::SrcType { negated, types }
            } else {
                MatchOption::DstType { negated, types }
            }
        }
        "--limit-iface-in" => MatchOption::LimitIfaceIn,
        "--limit-iface-out" => MatchOption::LimitIfaceOut,
        "--dports" | "--destination-ports" | "--sports" | "--source-ports" | "--ports" => {
            let word = cur.value(name, column)?;
            let ports: Option<Vec<PortRange>> =
                word.text.split(',').map(parse_port_range).collect();
            let ports = ports
                .filter(|p| (1..=15).contains(&p.len()))
                .ok_or_else(|| invalid(name, word))?;
            let kind = match name {
                "--ports" => MultiportKind::Either,
                n if n.starts_with("--d") => MultiportKind::Destination,
                _ => MultiportKind::Source,
            };
            MatchOption::Multiport {
                kind,
                negated,
                ports,
            }
        }
        "--nfacct-name" => MatchOption::NfacctName(cur.value(name, column)?.text.to_string()),
        _ => MatchOption::unknown(negated, String::from(name).into(), verbatim_args(cur)),
    };
    if negated && !negatable(&option) {
        return Err(fail(column, ParseErrorKind::MisplacedNegation));
    }
    Ok(option)
}

/// A word that is a criterion of its own rather than a module's option (`!`, `-p`, `-j`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum General {
    /// `!`.
    Not,
    /// `-p`, `--protocol`.
    Protocol,
    /// `-s`, `--source`, `--src`.
    Source,
    /// `-d`, `--destination`, `--dst`.
    Destination,
    /// `-i`, `--in-interface`.
    InInterface,
    /// `-o`, `--out-interface`.
    OutInterface,
    /// `-f`, `--fragment`.
    Fragment,
    /// `-m`, `--match`.
    Match,
    /// `-j`, `--jump`.
    Jump,
    /// `-g`, `--goto`.
    Goto,
    /// `-c`, `--set-counters`.
    SetCounters,
}

impl General {
    /// The criterion `word` starts, if any: one match on its bytes (short forms by their
    /// letter, long ones after the dashes).
    pub(crate) fn of(word: &str) -> Option<Self> {
        Some(match word.as_bytes() {
            [b'-', letter] => match letter {
                b'p' => Self::Protocol,
                b's' => Self::Source,
                b'd' => Self::Destination,
                b'i' => Self::InInterface,
                b'o' => Self::OutInterface,
                b'f' => Self::Fragment,
                b'm' => Self::Match,
                b'j' => Self::Jump,
                b'g' => Self::Goto,
                b'c' => Self::SetCounters,
                _ => return None,
            },
            b"!" => Self::Not,
            [b'-', b'-', long @ ..] => match long {
                b"protocol" => Self::Protocol,
                b"source" | b"src" => Self::Source,
                b"destination" | b"dst" => Self::Destination,
                b"in-interface" => Self::InInterface,
                b"out-interface" => Self::OutInterface,
                b"fragment" => Self::Fragment,
                b"match" => Self::Match,
                b"jump" => Self::Jump,
                b"goto" => Self::Goto,
                b"set-counters" => Self::SetCounters,
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// The words after an unknown option up to the next option or criterion.
pub(crate) fn verbatim_args<'a>(cur: &mut Cursor<'_, 'a>) -> Vec<Cow<'a, str>> {
    let mut args = Vec::new();
    while let Some(word) = cur.peek() {
        if word.text.starts_with('-') && word.text.len() > 1 || word.text == "!" {
            break;
        }
        args.push(word.text.clone());
        cur.pos += 1;
    }
    args
}

/// Builds the target named `name`; `None` when the name is a chain (a jump).
pub(crate) fn target_for(name: &str) -> Option<Target<'static>> {
    Some(match name {
        "ACCEPT" => Target::Accept,
        "DROP" => Target::Drop,
        "RETURN" => Target::Return,
        "REJECT" => Target::Reject { with: None },
        "DNAT" => Target::Dnat {
            to: None,
            random: false,
            persistent: false,
        },
        "SNAT" => Target::Snat {
            to: None,
            random: false,
            random_fully: false,
            persistent: false,
        },
        "MASQUERADE" => Target::Masquerade {
            to_ports: None,
            random: false,
            random_fully: false,
        },
        "MARK" => Target::Mark(MarkAction::SetXmark {
            value: 0,
            mask: None,
        }),
        "NOTRACK" => Target::Notrack,
        _ => return None,
    })
}

/// Applies target option `name` to `target`; `Ok(false)` when the target has no such option.
pub(crate) fn target_option<'a>(
    target: &mut Target<'a>,
    name: &str,
    column: usize,
    cur: &mut Cursor<'_, 'a>,
) -> Result<bool, Failure> {
    let text = |cur: &mut Cursor<'_, 'a>| cur.value(name, column).map(|w| w.text.clone());
    match (target, name) {
        (Target::Reject { with }, "--reject-with") => *with = Some(text(cur)?),
        (Target::Dnat { to, .. }, "--to-destination" | "--to") => *to = Some(text(cur)?),
        (Target::Snat { to, .. }, "--to-source" | "--to") => *to = Some(text(cur)?),
        (Target::Masquerade { to_ports, .. }, "--to-ports") => *to_ports = Some(text(cur)?),
        (
            Target::Dnat { random, .. }
            | Target::Snat { random, .. }
            | Target::Masquerade { random, .. },
            "--random",
        ) => *random = true,
        (Target::Dnat { persistent, .. } | Target::Snat { persistent, .. }, "--persistent") => {
            *persistent = true
        }
        (
            Target::Snat { random_fully, .. } | Target::Masquerade { random_fully, .. },
            "--random-fully",
        ) => *random_fully = true,
        (
            Target::Mark(action),
            "--set-xmark" | "--set-mark" | "--or-mark" | "--xor-mark" | "--and-mark",
        ) => {
            let word = cur.value(name, column)?;
            let mark = parse_mark(&word.text).ok_or_else(|| invalid(name, word))?;
            *action = match (name, mark.mask) {
                ("--set-xmark", mask) => MarkAction::SetXmark {
                    value: mark.value,
                    mask,
                },
                ("--set-mark", mask) => MarkAction::SetMark {
                    value: mark.value,
                    mask,
                },
                ("--or-mark", None) => MarkAction::OrMark(mark.value),
                ("--xor-mark", None) => MarkAction::XorMark(mark.value),
                ("--and-mark", None) => MarkAction::AndMark(mark.value),
                _ => return Err(invalid(name, word)),
            };
        }
        (Target::Other(other), _) => {
            other.args.push(String::from(name).into());
            other.args.extend(verbatim_args(cur));
        }
        _ => return Ok(false),
    }
    Ok(true)
}
