//! kube-proxy's rules written straight to restore text, in kube-proxy's spelling
//! (`docs/iptables.md` §2.3): comment first, then `-m PROTO -p PROTO [-d IP] --dport PORT`, then
//! the target.
//!
//! A full sync writes about 15 lines per service; going through [`crate::Rule`] values and
//! `core::fmt` cost several allocations and a formatter call per word, so the generator writes
//! bytes here and [`crate::parse`] turns the text into the model when a caller wants it.

use alloc::string::String;
use core::fmt::Write;
use core::net::IpAddr;

use super::input::Protocol;
use super::local::{InterfaceName, LocalDetector};
use crate::addr::Cidr;
use crate::codec::{has_special, write_quoted};
use crate::model::CtState;
use crate::text::{push_ip, push_u32};

/// How a comment must be written: worked out once for text that every endpoint's rules
/// repeat (the service port's name), instead of scanning it in each rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Quoting {
    /// It needs double quotes (it is empty or has a blank, quote or backslash).
    pub(crate) quotes: bool,
    /// It has `"` or `\` to escape inside the quotes.
    pub(crate) escapes: bool,
}

impl Quoting {
    /// The quoting of `parts` joined.
    pub(crate) fn of(parts: &[&str]) -> Self {
        let quotes = parts.iter().all(|p| p.is_empty()) || parts.iter().any(|p| has_special(p));
        Self {
            quotes,
            escapes: quotes && parts.iter().any(|p| p.contains(['"', '\\'])),
        }
    }

    /// The quoting once text with blanks but nothing to escape is added.
    pub(crate) const fn with_blanks(self) -> Self {
        Self {
            quotes: true,
            escapes: self.escapes,
        }
    }
}

/// One rule being written at the end of a restore text; a target method ends the line.
#[must_use = "a rule line is only complete once a target method (or `end`) is called"]
pub(crate) struct RuleText<'a> {
    out: &'a mut String,
}

/// `:NAME - [0:0]`: declares (or, with `--noflush`, flushes) a user chain.
pub(crate) fn declare(out: &mut String, chain: &str) {
    out.push(':');
    out.push_str(chain);
    out.push_str(" - [0:0]\n");
}

/// `-X NAME`.
pub(crate) fn delete_chain(out: &mut String, chain: &str) {
    out.push_str("-X ");
    out.push_str(chain);
    out.push('\n');
}

fn push_cidr(out: &mut String, cidr: Cidr) {
    push_ip(out, cidr.addr);
    if let Some(prefix) = cidr.prefix {
        out.push('/');
        push_u32(out, u32::from(prefix));
    }
}

impl<'a> RuleText<'a> {
    /// Starts `-A CHAIN` on `out`.
    pub(crate) fn append(out: &'a mut String, chain: &str) -> Self {
        out.push_str("-A ");
        out.push_str(chain);
        Self { out }
    }

    fn word(self, text: &str) -> Self {
        self.out.push(' ');
        self.out.push_str(text);
        self
    }

    fn bang(self, negated: bool) -> Self {
        if negated { self.word("!") } else { self }
    }

    /// `-m comment --comment TEXT`, `TEXT` being `parts` joined, quoted only when needed.
    pub(crate) fn comment(self, parts: &[&str]) -> Self {
        self.comment_as(parts, Quoting::of(parts))
    }

    /// [`RuleText::comment`] with the quoting of `parts` already known.
    pub(crate) fn comment_as(self, parts: &[&str], quoting: Quoting) -> Self {
        self.out.push_str(" -m comment --comment ");
        if quoting.escapes {
            let _ = write_quoted(self.out, parts);
        } else if quoting.quotes {
            self.out.push('"');
            parts.iter().for_each(|p| self.out.push_str(p));
            self.out.push('"');
        } else {
            parts.iter().for_each(|p| self.out.push_str(p));
        }
        self
    }

    /// `-m PROTO -p PROTO`.
    pub(crate) fn protocol(self, protocol: Protocol) -> Self {
        self.word("-m")
            .word(protocol.lower())
            .word("-p")
            .word(protocol.lower())
    }

    /// `[!] -s ADDRESS`.
    pub(crate) fn source(self, negated: bool, address: Cidr) -> Self {
        let this = self.bang(negated);
        this.out.push_str(" -s ");
        push_cidr(this.out, address);
        this
    }

    /// Traffic from this node's pods (`negated`: from elsewhere), as `detector` tells it:
    /// `[!] -s CIDR`, `[!] -i BRIDGE` or `[!] -i PREFIX+` (kube-proxy's `IfLocal` and
    /// `IfNotLocal`); nothing for [`LocalDetector::None`].
    pub(crate) fn local(self, negated: bool, detector: &LocalDetector) -> Self {
        let interface = |this: Self, name: &InterfaceName, suffix: &str| {
            let this = this.bang(negated);
            this.out.push_str(" -i ");
            this.out.push_str(name.as_str());
            this.out.push_str(suffix);
            this
        };
        match detector {
            LocalDetector::None => self,
            LocalDetector::Cidr(cidr) => self.source(negated, *cidr),
            LocalDetector::BridgeInterface(name) => interface(self, name, ""),
            LocalDetector::InterfaceNamePrefix(prefix) => interface(self, prefix, "+"),
        }
    }

    /// `[!] -d ADDRESS`.
    pub(crate) fn destination(self, negated: bool, address: Cidr) -> Self {
        let this = self.bang(negated);
        this.out.push_str(" -d ");
        push_cidr(this.out, address);
        this
    }

    /// `--dport PORT`.
    pub(crate) fn dport(self, port: u16) -> Self {
        self.out.push_str(" --dport ");
        push_u32(self.out, u32::from(port));
        self
    }

    /// `-m comment --comment TEXT -m PROTO -p PROTO [-d IP] --dport PORT`: the match of every
    /// per-IP service rule.
    pub(crate) fn service_ip(
        self,
        comment: &[&str],
        protocol: Protocol,
        ip: Option<IpAddr>,
        port: u16,
    ) -> Self {
        let this = self.comment(comment).protocol(protocol);
        let this = match ip {
            Some(ip) => this.destination(false, Cidr::host(ip)),
            None => this,
        };
        this.dport(port)
    }

    /// `-m addrtype --src-type LOCAL` (`source`) or `--dst-type LOCAL`.
    pub(crate) fn addrtype_local(self, source: bool) -> Self {
        self.word("-m addrtype")
            .word(if source { "--src-type" } else { "--dst-type" })
            .word("LOCAL")
    }

    /// `-m nfacct --nfacct-name NAME`.
    pub(crate) fn nfacct(self, name: &str) -> Self {
        self.word("-m nfacct --nfacct-name").word(name)
    }

    /// `-m conntrack [!] --ctstate STATES`.
    pub(crate) fn ctstate(self, negated: bool, states: &[CtState]) -> Self {
        let this = self.word("-m conntrack").bang(negated);
        this.out.push_str(" --ctstate ");
        for (i, state) in states.iter().enumerate() {
            if i > 0 {
                this.out.push(',');
            }
            this.out.push_str(state.name());
        }
        this
    }

    /// `-m mark [!] --mark M/M`.
    pub(crate) fn has_mark(self, negated: bool, mark: u32) -> Self {
        let this = self.word("-m mark").bang(negated).word("--mark");
        let _ = write!(this.out, " {mark:#x}/{mark:#x}");
        this
    }

    /// `-m statistic --mode random --probability P`.
    pub(crate) fn random(self, probability: &str) -> Self {
        self.word("-m statistic --mode random --probability")
            .word(probability)
    }

    /// `-m recent --name LIST --rcheck --seconds T --reap`.
    pub(crate) fn recent_check(self, list: &str, seconds: u32) -> Self {
        let this = self.word("-m recent --name").word(list);
        this.out.push_str(" --rcheck --seconds ");
        push_u32(this.out, seconds);
        this.word("--reap")
    }

    /// `-m recent --name LIST --set`.
    pub(crate) fn recent_set(self, list: &str) -> Self {
        self.word("-m recent --name").word(list).word("--set")
    }

    /// Ends the rule with no target (it only counts packets).
    pub(crate) fn end(self) {
        self.out.push('\n');
    }

    /// `-j CHAIN`, or any target written as its words (`REJECT`, `MARK --or-mark 0x4000`).
    pub(crate) fn jump(self, target: &str) {
        self.word("-j").word(target).end();
    }

    /// `-j DNAT --to-destination TO`.
    pub(crate) fn dnat(self, to: &str) {
        self.word("-j DNAT --to-destination").word(to).end();
    }

    /// `-j MARK --or-mark M` (`or`) or `--xor-mark M`.
    pub(crate) fn mark(self, or: bool, mark: u32) {
        let this = self
            .word("-j MARK")
            .word(if or { "--or-mark" } else { "--xor-mark" });
        let _ = write!(this.out, " {mark:#x}");
        this.end();
    }
}

#[cfg(test)]
mod tests {
    use alloc::borrow::ToOwned;
    use alloc::string::ToString;

    use super::*;
    use crate::parse_rule;

    #[test]
    fn quoting_worked_out_once_writes_what_the_general_comment_writes() {
        for spn in [
            "ns/svc:p80",
            "ns/svc",
            "ns/a b",
            "ns/\"x\"",
            "ns/back\\slash",
            "",
        ] {
            let named = Quoting::of(&[spn]);
            for (parts, quoting) in [
                (&[spn][..], named),
                (&[spn, " -> ", "10.0.0.1:80"][..], named.with_blanks()),
            ] {
                let (mut general, mut known) = (String::new(), String::new());
                RuleText::append(&mut general, "C").comment(parts).end();
                RuleText::append(&mut known, "C")
                    .comment_as(parts, quoting)
                    .end();
                assert_eq!(known, general, "{parts:?}");
            }
        }
        assert_eq!(
            Quoting::of(&["a", ""]),
            Quoting {
                quotes: false,
                escapes: false
            }
        );
        assert!(Quoting::of(&["", ""]).quotes);
    }

    #[test]
    fn words_are_spelled_as_the_codec_writes_them() {
        let mut out = String::new();
        RuleText::append(&mut out, "KUBE-SEP-X")
            .comment(&["ns/a", " b"])
            .protocol(Protocol::Udp)
            .source(true, "10.0.0.0/8".parse().unwrap())
            .destination(false, Cidr::host("fd00::1".parse().unwrap()))
            .dport(53)
            .addrtype_local(true)
            .ctstate(true, &[CtState::Related, CtState::Established])
            .has_mark(false, 0x4000)
            .random("0.5000000000")
            .recent_check("KUBE-SEP-X", 10800)
            .jump("KUBE-SEP-X");
        let rule = out
            .trim_end()
            .strip_prefix("-A KUBE-SEP-X ")
            .unwrap()
            .to_owned();
        assert_eq!(parse_rule(&rule).unwrap().to_string(), rule);
        assert!(out.contains("--comment \"ns/a b\""));
        let mut n = String::new();
        for v in [0, 7, 10, 65535, u32::MAX] {
            n.clear();
            push_u32(&mut n, v);
            assert_eq!(n, alloc::format!("{v}"));
        }
    }
}
