//! Rules. The text of a rule is built from typed pieces only (keywords of this crate, checked
//! names, addresses, prefixes, numbers), one word at a time, so the values of Kubernetes
//! objects never become syntax.

use alloc::string::String;
use core::fmt::{self, Write};
use core::net::IpAddr;

use iptables_model::Cidr;
use iptables_model::text::{push_ip, push_u32};

use crate::element::Verdict;
use crate::name::{Comment, Name};

/// The statement part of a rule, as kube-proxy writes it (`ip daddr 172.30.0.41 ip saddr !=
/// 10.0.0.0/8 jump mark-for-masquerade`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RuleText(String);

impl RuleText {
    /// An empty rule text, with room for most of kube-proxy's rules (so that building one
    /// word by word seldom grows it).
    pub fn new() -> Self {
        Self(String::with_capacity(96))
    }

    /// An empty rule text in `buffer` (emptied), lent by a sink that keeps one for the next.
    pub(crate) fn in_buffer(mut buffer: String) -> Self {
        buffer.clear();
        buffer.reserve(96);
        Self(buffer)
    }

    /// The buffer, to lend again.
    pub(crate) fn into_buffer(self) -> String {
        self.0
    }

    fn space(&mut self) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
    }

    /// Appends a keyword or operator of this crate (`ip`, `daddr`, `!=`, `{`, `.`), or
    /// several separated by single spaces (`ip saddr`, `vmap {`), as one piece.
    #[must_use]
    pub fn word(mut self, word: &'static str) -> Self {
        self.space();
        self.0.push_str(word);
        self
    }

    /// Appends a chain name.
    #[must_use]
    pub fn name(mut self, name: &Name) -> Self {
        self.space();
        self.0.push_str(name.as_str());
        self
    }

    /// Appends a reference to a named set or map: `@name`.
    #[must_use]
    pub fn set(mut self, name: &Name) -> Self {
        self.space();
        self.0.push('@');
        self.0.push_str(name.as_str());
        self
    }

    /// Appends an address.
    #[must_use]
    pub fn ip(mut self, ip: IpAddr) -> Self {
        self.space();
        push_ip(&mut self.0, ip);
        self
    }

    /// Appends a network with its prefix (`10.0.0.0/8`).
    #[must_use]
    pub fn cidr(mut self, cidr: Cidr) -> Self {
        self.space();
        let _ = write!(self.0, "{}", cidr.with_full_prefix());
        self
    }

    /// Appends a decimal number.
    #[must_use]
    pub fn number(mut self, n: u64) -> Self {
        self.space();
        match u32::try_from(n) {
            Ok(n) => push_u32(&mut self.0, n),
            Err(_) => {
                let _ = write!(self.0, "{n}");
            }
        }
        self
    }

    /// Appends a number in hexadecimal with at least `digits` digits (`0x4000`, `0x004000`).
    #[must_use]
    pub fn hex(mut self, n: u32, digits: usize) -> Self {
        self.space();
        let _ = write!(self.0, "0x{n:0digits$x}");
        self
    }

    /// Appends an `ip:port` destination (`10.180.0.1:80`, `[fd00::1]:80`).
    #[must_use]
    pub fn host_port(mut self, ip: IpAddr, port: u16) -> Self {
        self.space();
        if ip.is_ipv6() {
            self.0.push('[');
            push_ip(&mut self.0, ip);
            self.0.push(']');
        } else {
            push_ip(&mut self.0, ip);
        }
        self.0.push(':');
        push_u32(&mut self.0, u32::from(port));
        self
    }

    /// Appends a verdict.
    #[must_use]
    pub fn verdict(mut self, verdict: &Verdict) -> Self {
        self.space();
        verdict.push_to(&mut self.0);
        self
    }

    /// Appends a word its caller has checked (a quoted interface name).
    #[must_use]
    pub(crate) fn checked(mut self, word: &str) -> Self {
        self.space();
        self.0.push_str(word);
        self
    }

    /// Appends text already made of such pieces (a local-traffic match).
    #[must_use]
    pub fn append(mut self, other: &Self) -> Self {
        if !other.0.is_empty() {
            self.space();
            self.0.push_str(&other.0);
        }
        self
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RuleText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A rule appended to a chain, with an optional comment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// The chain.
    pub chain: Name,
    /// The statements.
    pub text: RuleText,
    /// `comment`, written after the statements.
    pub comment: Option<Comment>,
}

impl Rule {
    /// A rule without a comment. Its text keeps no spare room (a transaction holds many).
    pub fn new(chain: Name, mut text: RuleText) -> Self {
        text.0.shrink_to_fit();
        Self {
            chain,
            text,
            comment: None,
        }
    }

    /// The rule with `comment`.
    #[must_use]
    pub fn with_comment(mut self, comment: Comment) -> Self {
        self.comment = Some(comment);
        self
    }
}
