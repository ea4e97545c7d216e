//! Writing the model back as restore text.
//!
//! Every free-text value (chain names, comments, interfaces, option and target words) is
//! checked as it is written: one with a control character would end or split its line, and a
//! chain name that iptables would not accept (`a b`, `-A`) would not stay one name, so either
//! is refused with an [`EmitError`] naming the field ([`RestoreFile::to_text`] and friends),
//! never escaped. Through `Display` the refusal is a `fmt::Error`, and nothing of the value
//! is written.

use alloc::string::String;
use core::fmt::{self, Display, Formatter, Write};

use super::parse::valid_chain_name;
use super::scan;

use crate::error::{EmitError, Field, check_value};
use crate::model::{
    ChainLine, ChainName, Command, Line, MarkAction, MatchOption, Policy, RecentOption,
    RestoreFile, Rule, Spec, TableSection, Target,
};

/// Quoting convention of the written text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// Quote a word only when it must be (blanks, quotes, backslashes, empty), as kube-proxy
    /// writes its restore input: `--comment ns1/svc1:p80` but `--comment "a b"`.
    #[default]
    Restore,
    /// As `iptables-save` prints: comments are always double-quoted.
    Save,
}

/// A value written in a given [`Style`] (`Display`).
#[derive(Clone, Copy, Debug)]
pub struct Styled<'a, T>(pub &'a T, pub Style);

/// The writer behind every emitting function: the text sink, and the first value refused.
struct Out<'w> {
    sink: &'w mut dyn Write,
    refused: Option<EmitError>,
}

impl<'w> Out<'w> {
    fn new(sink: &'w mut dyn Write) -> Self {
        Self {
            sink,
            refused: None,
        }
    }

    /// Writes `text`, the value of `field`, as it is, unless it has a control character (or,
    /// for a chain or target name, is not one iptables accepts: `-A a b` would be two words).
    fn value(&mut self, field: Field, text: &str) -> fmt::Result {
        let named = matches!(field, Field::Chain | Field::TargetName);
        let checked = check_value(field, text).and_then(|()| {
            if named && !valid_chain_name(text) {
                Err(EmitError {
                    field,
                    value: text.into(),
                })
            } else {
                Ok(())
            }
        });
        match checked {
            Ok(()) => self.sink.write_str(text),
            Err(error) => {
                self.refused = Some(error);
                Err(fmt::Error)
            }
        }
    }

    /// The value refused, if any (a `String` sink itself never fails).
    fn finish(self) -> Result<(), EmitError> {
        self.refused.map_or(Ok(()), Err)
    }
}

impl Write for Out<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.sink.write_str(s)
    }
}

/// Writes with `write` into a new `String`.
fn emit_string(write: impl FnOnce(&mut Out<'_>) -> fmt::Result) -> Result<String, EmitError> {
    let mut text = String::new();
    let mut out = Out::new(&mut text);
    // Only a refused value fails a write to a `String`: `finish` reports it.
    let _ = write(&mut out);
    out.finish().map(|()| text)
}

/// Writes with `write` into a formatter: a refused value is a `fmt::Error`.
fn to_formatter(
    f: &mut Formatter<'_>,
    write: impl FnOnce(&mut Out<'_>) -> fmt::Result,
) -> fmt::Result {
    let mut out = Out::new(f);
    write(&mut out)
}

/// Whether `text` must be double-quoted to stay one word of the restore format.
pub(crate) fn needs_quotes(text: &str) -> bool {
    text.is_empty() || has_special(text)
}

/// Whether `text` has a byte that ends or escapes an unquoted word.
pub(crate) fn has_special(text: &str) -> bool {
    /// The bytes that end or escape an unquoted word.
    const SPECIAL: [bool; 256] = super::byte_set(b" \t\"\\'\n\r");
    // All but the backslash are below `(`.
    let candidates = |c| scan::below(c, b'(') | scan::equal(c, b'\\');
    scan::find(text.as_bytes(), 0, candidates, &SPECIAL) < text.len()
}

/// `parts` joined and double-quoted, with `"` and `\` escaped.
pub(crate) fn write_quoted(f: &mut dyn Write, parts: &[&str]) -> fmt::Result {
    const ESCAPED: [bool; 256] = super::byte_set(b"\"\\");
    let candidates = |c| scan::equal(c, b'"') | scan::equal(c, b'\\');
    f.write_char('"')?;
    for part in parts {
        let bytes = part.as_bytes();
        let mut start = 0;
        loop {
            let i = scan::find(bytes, start, candidates, &ESCAPED);
            // Both escaped bytes are ASCII: the slices around them are on character boundaries.
            f.write_str(part.get(start..i).unwrap_or_default())?;
            let Some(escaped) = part.get(i..=i) else {
                break;
            };
            f.write_char('\\')?;
            f.write_str(escaped)?;
            start = i + 1;
        }
    }
    f.write_char('"')
}

/// Writes `text`, the value of `field`, as one word (quoted when it must be, or always with
/// `force_quotes`), unless it has a control character.
fn word(f: &mut Out<'_>, field: Field, text: &str, force_quotes: bool) -> fmt::Result {
    if force_quotes || needs_quotes(text) {
        if let Err(error) = check_value(field, text) {
            f.refused = Some(error);
            return Err(fmt::Error);
        }
        write_quoted(f, &[text])
    } else {
        f.value(field, text)
    }
}

fn bang(f: &mut Out<'_>, negated: bool) -> fmt::Result {
    if negated { f.write_str(" !") } else { Ok(()) }
}

fn list<T: Copy>(f: &mut Out<'_>, items: &[T], name: impl Fn(T) -> &'static str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        f.write_str(name(*item))?;
    }
    Ok(())
}

fn option(f: &mut Out<'_>, option: &MatchOption, style: Style) -> fmt::Result {
    let name = option.name();
    match option {
        MatchOption::Comment(text) => {
            f.write_char(' ')?;
            f.write_str(name)?;
            f.write_char(' ')?;
            word(f, Field::Comment, text, style == Style::Save)
        }
        MatchOption::SourcePort { negated, ports }
        | MatchOption::DestinationPort { negated, ports } => {
            bang(f, *negated)?;
            write!(f, " {name} {ports}")
        }
        MatchOption::CtState { negated, states } | MatchOption::State { negated, states } => {
            bang(f, *negated)?;
            write!(f, " {name} ")?;
            list(f, states, |s| s.name())
        }
        MatchOption::Mark { negated, mark } => {
            bang(f, *negated)?;
            write!(f, " {name} {mark}")
        }
        MatchOption::StatisticMode(mode) => {
            write!(
                f,
                " {name} {}",
                match mode {
                    crate::model::StatisticMode::Random => "random",
                    crate::model::StatisticMode::Nth => "nth",
                }
            )
        }
        MatchOption::Probability {
            negated,
            probability,
        } => {
            bang(f, *negated)?;
            write!(f, " {name} {}", probability.as_str())
        }
        MatchOption::Every { negated, every } => {
            bang(f, *negated)?;
            write!(f, " {name} {every}")
        }
        MatchOption::Packet(n) => write!(f, " {name} {n}"),
        MatchOption::Recent { negated, option } => {
            bang(f, *negated)?;
            write!(f, " {name}")?;
            match option {
                RecentOption::Name(list) => {
                    f.write_char(' ')?;
                    word(f, Field::RecentName, list, false)
                }
                RecentOption::Seconds(n) | RecentOption::HitCount(n) => write!(f, " {n}"),
                RecentOption::Mask(m) => write!(f, " {m}"),
                _ => Ok(()),
            }
        }
        MatchOption::SrcType { negated, types } | MatchOption::DstType { negated, types } => {
            bang(f, *negated)?;
            write!(f, " {name} ")?;
            list(f, types, |t| t.name())
        }
        MatchOption::LimitIfaceIn | MatchOption::LimitIfaceOut => write!(f, " {name}"),
        MatchOption::Multiport { negated, ports, .. } => {
            bang(f, *negated)?;
            write!(f, " {name} ")?;
            for (i, p) in ports.iter().enumerate() {
                write!(f, "{}{p}", if i > 0 { "," } else { "" })?;
            }
            Ok(())
        }
        MatchOption::NfacctName(n) => {
            write!(f, " {name} ")?;
            word(f, Field::NfacctName, n, false)
        }
        MatchOption::Unknown(option) => {
            bang(f, option.negated)?;
            f.write_char(' ')?;
            word(f, Field::OptionName, name, false)?;
            option.args.iter().try_for_each(|a| {
                f.write_char(' ')?;
                word(f, Field::OptionArgument, a, false)
            })
        }
    }
}

fn target(f: &mut Out<'_>, target: &Target) -> fmt::Result {
    let flag =
        |f: &mut Out<'_>, on: bool, text: &str| if on { write!(f, " {text}") } else { Ok(()) };
    match target {
        Target::Goto(chain) => {
            f.write_str(" -g ")?;
            return f.value(Field::Chain, chain);
        }
        Target::Jump(chain) => {
            f.write_str(" -j ")?;
            return f.value(Field::Chain, chain);
        }
        Target::Other(other) => {
            f.write_str(" -j ")?;
            f.value(Field::TargetName, &other.name)?;
        }
        other => {
            f.write_str(" -j ")?;
            f.write_str(other.name())?;
        }
    }
    match target {
        Target::Reject { with: Some(with) } => {
            f.write_str(" --reject-with ")?;
            word(f, Field::RejectWith, with, false)
        }
        Target::Dnat {
            to,
            random,
            persistent,
        } => {
            if let Some(to) = to {
                f.write_str(" --to-destination ")?;
                word(f, Field::ToDestination, to, false)?;
            }
            flag(f, *random, "--random")?;
            flag(f, *persistent, "--persistent")
        }
        Target::Snat {
            to,
            random,
            random_fully,
            persistent,
        } => {
            if let Some(to) = to {
                f.write_str(" --to-source ")?;
                word(f, Field::ToSource, to, false)?;
            }
            flag(f, *random, "--random")?;
            flag(f, *random_fully, "--random-fully")?;
            flag(f, *persistent, "--persistent")
        }
        Target::Masquerade {
            to_ports,
            random,
            random_fully,
        } => {
            if let Some(ports) = to_ports {
                f.write_str(" --to-ports ")?;
                word(f, Field::ToPorts, ports, false)?;
            }
            flag(f, *random, "--random")?;
            flag(f, *random_fully, "--random-fully")
        }
        Target::Mark(action) => match *action {
            MarkAction::SetXmark { value, mask } => write!(
                f,
                " --set-xmark {}",
                crate::model::MarkValue { value, mask }
            ),
            MarkAction::SetMark { value, mask } => {
                write!(f, " --set-mark {}", crate::model::MarkValue { value, mask })
            }
            MarkAction::OrMark(v) => write!(f, " --or-mark {v:#x}"),
            MarkAction::XorMark(v) => write!(f, " --xor-mark {v:#x}"),
            MarkAction::AndMark(v) => write!(f, " --and-mark {v:#x}"),
        },
        Target::Other(other) => other.args.iter().try_for_each(|a| {
            f.write_char(' ')?;
            word(f, Field::TargetArgument, a, false)
        }),
        _ => Ok(()),
    }
}

/// Writes the rule's words, each preceded by a space (what follows `-A CHAIN`).
fn rule(f: &mut Out<'_>, rule: &Rule, style: Style) -> fmt::Result {
    for spec in &rule.specs {
        match spec {
            Spec::Protocol { negated, protocol } => {
                bang(f, *negated)?;
                f.write_str(" -p ")?;
                word(f, Field::Protocol, protocol.name(), false)?;
            }
            Spec::Source { negated, address } => {
                bang(f, *negated)?;
                write!(f, " -s {address}")?;
            }
            Spec::Destination { negated, address } => {
                bang(f, *negated)?;
                write!(f, " -d {address}")?;
            }
            Spec::InInterface { negated, name } | Spec::OutInterface { negated, name } => {
                bang(f, *negated)?;
                f.write_str(if matches!(spec, Spec::InInterface { .. }) {
                    " -i "
                } else {
                    " -o "
                })?;
                let field = if matches!(spec, Spec::InInterface { .. }) {
                    Field::InInterface
                } else {
                    Field::OutInterface
                };
                word(f, field, name, false)?;
            }
            Spec::Fragment { negated } => {
                bang(f, *negated)?;
                f.write_str(" -f")?;
            }
            Spec::Module(m) => {
                f.write_str(" -m ")?;
                word(f, Field::Module, m.name(), false)?;
            }
            Spec::Option(o) => option(f, o, style)?,
        }
    }
    match &rule.target {
        Some(t) => target(f, t),
        None => Ok(()),
    }
}

/// Writes the rule's words without a leading space: `-m tcp -p tcp --dport 80 -j ACCEPT`.
fn rule_words(f: &mut Out<'_>, r: &Rule, style: Style) -> fmt::Result {
    let mut text = String::new();
    let mut inner = Out::new(&mut text);
    let written = rule(&mut inner, r, style);
    if let Some(error) = inner.refused {
        f.refused = Some(error);
        return Err(fmt::Error);
    }
    written?;
    f.write_str(text.strip_prefix(' ').unwrap_or(&text))
}

impl Display for Styled<'_, Rule<'_>> {
    /// The rule's words without a leading space: `-m tcp -p tcp --dport 80 -j ACCEPT`; a
    /// value with a control character fails (see [`Rule::to_text`]).
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        to_formatter(f, |out| rule_words(out, self.0, self.1))
    }
}

impl Rule<'_> {
    /// The rule's words as `Display` writes them, in `style`.
    ///
    /// # Errors
    ///
    /// [`EmitError`] naming the first value that has a control character.
    pub fn to_text(&self, style: Style) -> Result<String, EmitError> {
        emit_string(|out| rule_words(out, self, style))
    }

    /// The rule's words as separate, unquoted arguments: what to pass after
    /// `iptables -A CHAIN` (or `-C`, `-I`, `-D`) on a command line.
    ///
    /// # Errors
    ///
    /// [`EmitError`] naming the first value that has a control character (`iptables` would
    /// store it, and `iptables-save` print it, as it is).
    pub fn args(&self) -> Result<alloc::vec::Vec<String>, EmitError> {
        let text = emit_string(|out| rule(out, self, Style::Restore))?;
        let mut words = alloc::vec::Vec::new();
        // The text was just written by `rule`: it always splits.
        let _ = super::lex::words(&text, &mut words);
        Ok(words.into_iter().map(|w| w.text.into_owned()).collect())
    }
}

impl Display for Rule<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Styled(self, Style::Restore).fmt(f)
    }
}

fn counters_prefix(f: &mut Out<'_>, r: &Rule) -> fmt::Result {
    match r.counters {
        Some(c) => write!(f, "[{}:{}] ", c.packets, c.bytes),
        None => Ok(()),
    }
}

/// `-X` or `-F`, with its chain when it names one.
fn optional_chain(f: &mut Out<'_>, flag: &str, chain: Option<&ChainName>) -> fmt::Result {
    f.write_str(flag)?;
    match chain {
        Some(chain) => {
            f.write_char(' ')?;
            f.value(Field::Chain, chain)
        }
        None => Ok(()),
    }
}

fn command(f: &mut Out<'_>, command: &Command, style: Style) -> fmt::Result {
    match command {
        Command::Append { chain, rule: r } => {
            counters_prefix(f, r)?;
            f.write_str("-A ")?;
            f.value(Field::Chain, chain)?;
            rule(f, r, style)
        }
        Command::Insert {
            chain,
            position,
            rule: r,
        } => {
            counters_prefix(f, r)?;
            f.write_str("-I ")?;
            f.value(Field::Chain, chain)?;
            if let Some(p) = position {
                write!(f, " {p}")?;
            }
            rule(f, r, style)
        }
        Command::Delete { chain, rule: r } => {
            counters_prefix(f, r)?;
            f.write_str("-D ")?;
            f.value(Field::Chain, chain)?;
            rule(f, r, style)
        }
        Command::DeleteAt { chain, position } => {
            f.write_str("-D ")?;
            f.value(Field::Chain, chain)?;
            write!(f, " {position}")
        }
        Command::NewChain(chain) => {
            f.write_str("-N ")?;
            f.value(Field::Chain, chain)
        }
        Command::DeleteChain(chain) => optional_chain(f, "-X", chain.as_ref()),
        Command::Flush(chain) => optional_chain(f, "-F", chain.as_ref()),
    }
}

fn chain_line(f: &mut Out<'_>, chain: &ChainLine) -> fmt::Result {
    let policy = match chain.policy {
        Some(Policy::Accept) => "ACCEPT",
        Some(Policy::Drop) => "DROP",
        None => "-",
    };
    f.write_char(':')?;
    f.value(Field::Chain, &chain.name)?;
    f.write_char(' ')?;
    f.write_str(policy)?;
    match chain.counters {
        Some(c) => write!(f, " [{}:{}]", c.packets, c.bytes),
        None => Ok(()),
    }
}

impl Display for ChainLine {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        to_formatter(f, |out| chain_line(out, self))
    }
}

fn section(f: &mut Out<'_>, section: &TableSection, style: Style) -> fmt::Result {
    writeln!(f, "*{}", section.table.name())?;
    for line in &section.lines {
        match line {
            Line::Chain(c) => chain_line(f, c)?,
            Line::Command(c) => command(f, c, style)?,
        }
        f.write_char('\n')?;
    }
    f.write_str("COMMIT\n")
}

fn file(f: &mut Out<'_>, file: &RestoreFile, style: Style) -> fmt::Result {
    file.tables.iter().try_for_each(|t| section(f, t, style))
}

impl Display for Styled<'_, TableSection<'_>> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        to_formatter(f, |out| section(out, self.0, self.1))
    }
}

impl Display for Styled<'_, RestoreFile<'_>> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        to_formatter(f, |out| file(out, self.0, self.1))
    }
}

impl TableSection<'_> {
    /// The section as restore text in `style`: `*table`, its lines, `COMMIT`.
    ///
    /// # Errors
    ///
    /// [`EmitError`] naming the first value that has a control character.
    pub fn to_text(&self, style: Style) -> Result<String, EmitError> {
        emit_string(|out| section(out, self, style))
    }
}

impl RestoreFile<'_> {
    /// The document as restore text in `style`. Prefer this to `Display` for documents built
    /// from values that came from elsewhere: a value that restore text cannot hold is a typed
    /// error here, a bare `fmt::Error` there (and a panic in `to_string`).
    ///
    /// # Errors
    ///
    /// [`EmitError`] naming the first value that has a control character.
    pub fn to_text(&self, style: Style) -> Result<String, EmitError> {
        emit_string(|out| file(out, self, style))
    }
}

impl Display for TableSection<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Styled(self, Style::Restore).fmt(f)
    }
}

impl Display for RestoreFile<'_> {
    /// The restore text, quoting only where needed (kube-proxy's spelling); a value with a
    /// control character fails (see [`RestoreFile::to_text`]).
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Styled(self, Style::Restore).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;

    use super::{Style, has_special, needs_quotes, write_quoted};
    use crate::error::Field;
    use crate::model::{ChainLine, MatchOption, Target};
    use crate::{Command, Line, RestoreFile, Rule, Spec, Table, TableSection, parse_rule};

    #[test]
    fn a_control_character_in_any_value_is_refused_naming_the_field() {
        let bad = "x\n-A KUBE-SERVICES -j DNAT --to-destination 6.6.6.6:443\n#";
        let cases: [(Rule<'static>, Field); 6] = [
            (Rule::new().comment(bad), Field::Comment),
            (
                Rule::new().with(Spec::InInterface {
                    negated: false,
                    name: "eth0\r".into(),
                }),
                Field::InInterface,
            ),
            (
                Rule::new().target(Target::Jump("A\0B".into())),
                Field::Chain,
            ),
            (
                Rule::new().target(Target::Dnat {
                    to: Some("1.2.3.4\t".into()),
                    random: false,
                    persistent: false,
                }),
                Field::ToDestination,
            ),
            (
                Rule::new().option(MatchOption::unknown(
                    false,
                    "--x".into(),
                    alloc::vec!["a\u{85}".into()],
                )),
                Field::OptionArgument,
            ),
            (
                Rule::new().target(Target::other("LOG\x7f".into(), alloc::vec![])),
                Field::TargetName,
            ),
        ];
        for (rule, field) in cases {
            for style in [Style::Restore, Style::Save] {
                assert_eq!(rule.to_text(style).unwrap_err().field, field, "{rule:?}");
            }
            assert_eq!(rule.args().unwrap_err().field, field);
            let mut text = String::new();
            assert!(core::fmt::write(&mut text, format_args!("{rule}")).is_err());
            assert!(!text.contains('\n'), "{text:?}");
        }
        let mut section = TableSection::new(Table::Nat);
        section.lines.push(Line::Chain(ChainLine {
            name: "KUBE\nCOMMIT".into(),
            policy: None,
            counters: None,
        }));
        let file = RestoreFile {
            tables: alloc::vec![section],
        };
        let error = file.to_text(Style::Restore).unwrap_err();
        assert_eq!(
            (error.field, error.value.as_str()),
            (Field::Chain, "KUBE\nCOMMIT")
        );
        let mut flush = TableSection::new(Table::Filter);
        flush
            .lines
            .push(Line::Command(Command::Flush(Some("X\n".into()))));
        assert_eq!(flush.to_text(Style::Save).unwrap_err().field, Field::Chain);
        // Blanks, quotes and non-ASCII text are not control characters: quoted as before.
        let fine = Rule::new().comment("a \"b\" é\u{2028}");
        assert_eq!(
            fine.to_text(Style::Restore).unwrap(),
            "-m comment --comment \"a \\\"b\\\" é\u{2028}\""
        );
    }

    #[test]
    fn quoting_finds_every_special_byte_and_escapes_quotes_and_backslashes() {
        for special in [" ", "\t", "\"", "\\", "'", "\n", "\r"] {
            for at in [0, 5, 11] {
                let text = alloc::format!("{}{special}{}", &"abcdefghijk"[..at], "é");
                assert!(has_special(&text), "{text:?}");
            }
        }
        assert!(!has_special("ns1/svc1:p80!#$%&()é"));
        assert!(needs_quotes(""));
        let mut out = String::new();
        write_quoted(&mut out, &["say \"hi\" ", "to C:\\", ""]).unwrap();
        assert_eq!(out, r#""say \"hi\" to C:\\""#);
    }

    #[test]
    fn args_are_the_words_unquoted() {
        let rule = parse_rule(
            r#"-m comment --comment "kubernetes service portals" -m conntrack --ctstate NEW -j KUBE-SERVICES"#,
        )
        .unwrap();
        assert_eq!(
            rule.args().unwrap(),
            [
                "-m",
                "comment",
                "--comment",
                "kubernetes service portals",
                "-m",
                "conntrack",
                "--ctstate",
                "NEW",
                "-j",
                "KUBE-SERVICES"
            ]
        );
    }
}
