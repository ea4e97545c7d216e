//! Writing the model back as restore text.

use core::fmt::{self, Display, Formatter, Write};

use super::scan;

use crate::model::{
    ChainLine, Command, Line, MarkAction, MatchOption, Policy, RecentOption, RestoreFile, Rule,
    Spec, TableSection, Target,
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

fn word(f: &mut dyn Write, text: &str, force_quotes: bool) -> fmt::Result {
    if force_quotes || needs_quotes(text) {
        write_quoted(f, &[text])
    } else {
        f.write_str(text)
    }
}

fn bang(f: &mut dyn Write, negated: bool) -> fmt::Result {
    if negated { f.write_str(" !") } else { Ok(()) }
}

fn list<T: Copy>(f: &mut dyn Write, items: &[T], name: impl Fn(T) -> &'static str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        f.write_str(name(*item))?;
    }
    Ok(())
}

fn option(f: &mut dyn Write, option: &MatchOption, style: Style) -> fmt::Result {
    let name = option.name();
    match option {
        MatchOption::Comment(text) => {
            f.write_char(' ')?;
            f.write_str(name)?;
            f.write_char(' ')?;
            word(f, text, style == Style::Save)
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
                    word(f, list, false)
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
            word(f, n, false)
        }
        MatchOption::Unknown(option) => {
            bang(f, option.negated)?;
            f.write_char(' ')?;
            word(f, name, false)?;
            option.args.iter().try_for_each(|a| {
                f.write_char(' ')?;
                word(f, a, false)
            })
        }
    }
}

fn target(f: &mut dyn Write, target: &Target) -> fmt::Result {
    let flag =
        |f: &mut dyn Write, on: bool, text: &str| if on { write!(f, " {text}") } else { Ok(()) };
    match target {
        Target::Goto(chain) => {
            f.write_str(" -g ")?;
            return f.write_str(chain);
        }
        other => {
            f.write_str(" -j ")?;
            f.write_str(other.name())?;
        }
    }
    match target {
        Target::Reject { with: Some(with) } => {
            f.write_str(" --reject-with ")?;
            word(f, with, false)
        }
        Target::Dnat {
            to,
            random,
            persistent,
        } => {
            if let Some(to) = to {
                f.write_str(" --to-destination ")?;
                word(f, to, false)?;
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
                word(f, to, false)?;
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
                word(f, ports, false)?;
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
            word(f, a, false)
        }),
        _ => Ok(()),
    }
}

/// Writes the rule's words, each preceded by a space (what follows `-A CHAIN`).
fn rule(f: &mut dyn Write, rule: &Rule, style: Style) -> fmt::Result {
    for spec in &rule.specs {
        match spec {
            Spec::Protocol { negated, protocol } => {
                bang(f, *negated)?;
                f.write_str(" -p ")?;
                word(f, protocol.name(), false)?;
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
                word(f, name, false)?;
            }
            Spec::Fragment { negated } => {
                bang(f, *negated)?;
                f.write_str(" -f")?;
            }
            Spec::Module(m) => {
                f.write_str(" -m ")?;
                word(f, m.name(), false)?;
            }
            Spec::Option(o) => option(f, o, style)?,
        }
    }
    match &rule.target {
        Some(t) => target(f, t),
        None => Ok(()),
    }
}

impl Display for Styled<'_, Rule<'_>> {
    /// The rule's words without a leading space: `-m tcp -p tcp --dport 80 -j ACCEPT`.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut text = alloc::string::String::new();
        rule(&mut text, self.0, self.1)?;
        f.write_str(text.strip_prefix(' ').unwrap_or(&text))
    }
}

impl Rule<'_> {
    /// The rule's words as separate, unquoted arguments: what to pass after
    /// `iptables -A CHAIN` (or `-C`, `-I`, `-D`) on a command line.
    pub fn args(&self) -> alloc::vec::Vec<alloc::string::String> {
        let mut text = alloc::string::String::new();
        // Writing to a String cannot fail.
        let _ = rule(&mut text, self, Style::Restore);
        let mut words = alloc::vec::Vec::new();
        // The text was just written by `rule`: it always splits.
        let _ = super::lex::words(&text, &mut words);
        words.into_iter().map(|w| w.text.into_owned()).collect()
    }
}

impl Display for Rule<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Styled(self, Style::Restore).fmt(f)
    }
}

fn counters_prefix(f: &mut dyn Write, r: &Rule) -> fmt::Result {
    match r.counters {
        Some(c) => write!(f, "[{}:{}] ", c.packets, c.bytes),
        None => Ok(()),
    }
}

fn command(f: &mut dyn Write, command: &Command, style: Style) -> fmt::Result {
    match command {
        Command::Append { chain, rule: r } => {
            counters_prefix(f, r)?;
            f.write_str("-A ")?;
            f.write_str(chain)?;
            rule(f, r, style)
        }
        Command::Insert {
            chain,
            position,
            rule: r,
        } => {
            counters_prefix(f, r)?;
            write!(f, "-I {chain}")?;
            if let Some(p) = position {
                write!(f, " {p}")?;
            }
            rule(f, r, style)
        }
        Command::Delete { chain, rule: r } => {
            counters_prefix(f, r)?;
            write!(f, "-D {chain}")?;
            rule(f, r, style)
        }
        Command::DeleteAt { chain, position } => write!(f, "-D {chain} {position}"),
        Command::NewChain(chain) => write!(f, "-N {chain}"),
        Command::DeleteChain(chain) => write!(
            f,
            "-X{}{}",
            if chain.is_some() { " " } else { "" },
            chain.as_deref().unwrap_or("")
        ),
        Command::Flush(chain) => write!(
            f,
            "-F{}{}",
            if chain.is_some() { " " } else { "" },
            chain.as_deref().unwrap_or("")
        ),
    }
}

impl Display for ChainLine {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let policy = match self.policy {
            Some(Policy::Accept) => "ACCEPT",
            Some(Policy::Drop) => "DROP",
            None => "-",
        };
        f.write_char(':')?;
        f.write_str(&self.name)?;
        f.write_char(' ')?;
        f.write_str(policy)?;
        match self.counters {
            Some(c) => write!(f, " [{}:{}]", c.packets, c.bytes),
            None => Ok(()),
        }
    }
}

impl Display for Styled<'_, TableSection<'_>> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, "*{}", self.0.table.name())?;
        for line in &self.0.lines {
            match line {
                Line::Chain(c) => {
                    c.fmt(f)?;
                    f.write_char('\n')?;
                }
                Line::Command(c) => {
                    command(f, c, self.1)?;
                    f.write_char('\n')?;
                }
            }
        }
        f.write_str("COMMIT\n")
    }
}

impl Display for Styled<'_, RestoreFile<'_>> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.0
            .tables
            .iter()
            .try_for_each(|t| Styled(t, self.1).fmt(f))
    }
}

impl Display for TableSection<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Styled(self, Style::Restore).fmt(f)
    }
}

impl Display for RestoreFile<'_> {
    /// The restore text, quoting only where needed (kube-proxy's spelling).
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Styled(self, Style::Restore).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;

    use super::{has_special, needs_quotes, write_quoted};
    use crate::parse_rule;

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
            rule.args(),
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
