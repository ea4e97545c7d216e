//! The rule text kube-proxy's nftables mode writes, read back into the matches and statements
//! the evaluator runs. Only that dialect is read; anything else is an error naming the word,
//! never a silent match.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::net::IpAddr;

use iptables_model::Cidr;
use iptables_model::kube::Protocol;

use crate::element::Verdict;
use crate::name::Name;

/// A packet field a rule reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Saddr,
    Daddr,
    L4proto,
    Dport,
}

/// What an address is compared with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Addresses {
    /// Addresses or networks written in the rule.
    Literal(Vec<Cidr>),
    /// A named set of addresses.
    Set(Name),
}

/// One piece of a rule, in the order written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// `ip saddr [!=] ADDRESSES`, `ip daddr ...`.
    Address {
        field: Field,
        negated: bool,
        addresses: Addresses,
    },
    /// `meta l4proto PROTO`.
    Protocol(Protocol),
    /// `th dport PORT`.
    Port(u16),
    /// `fib saddr|daddr type local`.
    Local(Field),
    /// `ct state new`: always true for the first packet of a flow.
    New,
    /// `mark and MASK == 0` (or `!= 0`).
    MarkTest { mask: u32, zero: bool },
    /// `mark set mark or|xor VALUE`.
    MarkSet { xor: bool, value: u32 },
    /// `iifname [!=] NAME`, the name bare or quoted (a trailing `*` matches a prefix).
    Interface { negated: bool, name: String },
    /// `FIELD . FIELD ... vmap @MAP`: the verdict of the element with the packet's key.
    Vmap { key: Vec<Field>, map: Name },
    /// `numgen random mod N vmap { 0 : VERDICT , ... }`.
    Numgen {
        modulus: u32,
        verdicts: Vec<(u32, Verdict)>,
    },
    /// `update @SET { ip saddr }`: records the source for affinity (no effect on this packet).
    Update,
    /// `dnat to ADDRESS:PORT`.
    Dnat(IpAddr, u16),
    /// `masquerade [fully-random]`.
    Masquerade,
    /// `reject`.
    Reject,
    /// A verdict.
    Verdict(Verdict),
}

/// Why a rule could not be read.
pub(crate) type Unreadable = String;

struct Words<'a> {
    words: Vec<&'a str>,
    at: usize,
}

impl<'a> Words<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let word = self.words.get(self.at).copied();
        self.at += 1;
        word
    }

    fn peek(&self) -> Option<&'a str> {
        self.words.get(self.at).copied()
    }

    fn expect(&mut self, word: &str) -> Result<(), Unreadable> {
        match self.next() {
            Some(w) if w == word => Ok(()),
            other => Err(alloc::format!("expected {word:?}, found {other:?}")),
        }
    }

    fn name(&mut self) -> Result<Name, Unreadable> {
        let word = self.next().ok_or("a name is missing")?;
        Name::new(word).map_err(|e| e.to_string())
    }

    fn set_name(&mut self) -> Result<Name, Unreadable> {
        let word = self.next().ok_or("a set name is missing")?;
        let name = word
            .strip_prefix('@')
            .ok_or_else(|| alloc::format!("expected @SET, found {word:?}"))?;
        Name::new(name).map_err(|e| e.to_string())
    }
}

fn number(word: Option<&str>) -> Result<u32, Unreadable> {
    let word = word.ok_or("a number is missing")?;
    let parsed = match word.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => word.parse(),
    };
    parsed.map_err(|_| alloc::format!("{word:?} is not a number"))
}

fn verdict(words: &mut Words<'_>) -> Result<Verdict, Unreadable> {
    match words.next() {
        Some("accept") => Ok(Verdict::Accept),
        Some("drop") => Ok(Verdict::Drop),
        Some("return") => Ok(Verdict::Return),
        Some("jump") => Ok(Verdict::Jump(words.name()?)),
        Some("goto") => Ok(Verdict::Goto(words.name()?)),
        other => Err(alloc::format!("expected a verdict, found {other:?}")),
    }
}

fn cidr(word: &str) -> Result<Cidr, Unreadable> {
    word.parse::<Cidr>()
        .map_err(|_| alloc::format!("{word:?} is not an address or network"))
}

/// `FIELD` words after `ip saddr|daddr`, `meta l4proto`, `th dport`, for a concatenation.
fn concat_field(words: &mut Words<'_>) -> Result<Field, Unreadable> {
    match (words.next(), words.next()) {
        (Some("ip" | "ip6"), Some("daddr")) => Ok(Field::Daddr),
        (Some("ip" | "ip6"), Some("saddr")) => Ok(Field::Saddr),
        (Some("meta"), Some("l4proto")) => Ok(Field::L4proto),
        (Some("th"), Some("dport")) => Ok(Field::Dport),
        other => Err(alloc::format!("unexpected key field {other:?}")),
    }
}

/// Continues a concatenation whose first field is `first`, through `vmap @MAP`.
fn vmap(words: &mut Words<'_>, first: Field) -> Result<Item, Unreadable> {
    let mut key = alloc::vec![first];
    while words.peek() == Some(".") {
        words.next();
        key.push(concat_field(words)?);
    }
    words.expect("vmap")?;
    Ok(Item::Vmap {
        key,
        map: words.set_name()?,
    })
}

fn address(words: &mut Words<'_>, field: Field) -> Result<Item, Unreadable> {
    if words.peek() == Some(".") {
        return vmap(words, field);
    }
    let negated = words.peek() == Some("!=");
    if negated {
        words.next();
    }
    let value = words.next().ok_or("an address is missing")?;
    let addresses = if let Some(set) = value.strip_prefix('@') {
        Addresses::Set(Name::new(set).map_err(|e| e.to_string())?)
    } else if value == "{" {
        let mut list = Vec::new();
        loop {
            match words.next() {
                Some("}") => break,
                Some(",") => {}
                Some(word) => list.push(cidr(word.trim_end_matches(','))?),
                None => return Err("an unclosed address set".into()),
            }
        }
        Addresses::Literal(list)
    } else {
        Addresses::Literal(alloc::vec![cidr(value)?])
    };
    Ok(Item::Address {
        field,
        negated,
        addresses,
    })
}

fn protocol(word: Option<&str>) -> Result<Protocol, Unreadable> {
    match word {
        Some("tcp") => Ok(Protocol::Tcp),
        Some("udp") => Ok(Protocol::Udp),
        Some("sctp") => Ok(Protocol::Sctp),
        other => Err(alloc::format!(
            "{other:?} is not a protocol kube-proxy writes"
        )),
    }
}

fn destination(word: Option<&str>) -> Result<(IpAddr, u16), Unreadable> {
    let word = word.ok_or("a DNAT destination is missing")?;
    let bad = || alloc::format!("{word:?} is not ADDRESS:PORT");
    let (address, port) = match word.strip_prefix('[') {
        Some(v6) => v6.split_once("]:").ok_or_else(bad)?,
        None => word.rsplit_once(':').ok_or_else(bad)?,
    };
    Ok((
        address.parse().map_err(|_| bad())?,
        port.parse().map_err(|_| bad())?,
    ))
}

fn numgen(words: &mut Words<'_>) -> Result<Item, Unreadable> {
    words.expect("random")?;
    words.expect("mod")?;
    let modulus = number(words.next())?;
    if modulus == 0 {
        return Err("numgen mod 0".into());
    }
    words.expect("vmap")?;
    words.expect("{")?;
    let mut verdicts = Vec::new();
    loop {
        match words.peek() {
            Some("}") => {
                words.next();
                break;
            }
            Some(",") => {
                words.next();
            }
            Some(_) => {
                let bucket = number(words.next())?;
                words.expect(":")?;
                verdicts.push((bucket, verdict(words)?));
            }
            None => return Err("an unclosed numgen map".into()),
        }
    }
    Ok(Item::Numgen { modulus, verdicts })
}

/// Reads the text of one rule.
pub(crate) fn read(text: &str) -> Result<Vec<Item>, Unreadable> {
    let mut words = Words {
        words: text.split_whitespace().collect(),
        at: 0,
    };
    let mut items = Vec::new();
    while let Some(word) = words.next() {
        let item = match word {
            "ip" | "ip6" => match words.next() {
                Some("saddr") => address(&mut words, Field::Saddr)?,
                Some("daddr") => address(&mut words, Field::Daddr)?,
                other => return Err(alloc::format!("ip {other:?}")),
            },
            "meta" => {
                words.expect("l4proto")?;
                if words.peek() == Some(".") {
                    vmap(&mut words, Field::L4proto)?
                } else {
                    Item::Protocol(protocol(words.next())?)
                }
            }
            "th" => {
                words.expect("dport")?;
                if words.peek() == Some(".") {
                    vmap(&mut words, Field::Dport)?
                } else {
                    let port = number(words.next())?;
                    Item::Port(u16::try_from(port).map_err(|_| "a port above 65535")?)
                }
            }
            "fib" => {
                let field = match words.next() {
                    Some("saddr") => Field::Saddr,
                    Some("daddr") => Field::Daddr,
                    other => return Err(alloc::format!("fib {other:?}")),
                };
                words.expect("type")?;
                words.expect("local")?;
                Item::Local(field)
            }
            "ct" => {
                words.expect("state")?;
                words.expect("new")?;
                Item::New
            }
            "mark" => match words.next() {
                Some("and") => {
                    let mask = number(words.next())?;
                    let zero = match words.next() {
                        Some("==") => true,
                        Some("!=") => false,
                        other => return Err(alloc::format!("mark and: {other:?}")),
                    };
                    if number(words.next())? != 0 {
                        return Err("mark and: only == 0 and != 0 are read".into());
                    }
                    Item::MarkTest { mask, zero }
                }
                Some("set") => {
                    words.expect("mark")?;
                    let xor = match words.next() {
                        Some("or") => false,
                        Some("xor") => true,
                        other => return Err(alloc::format!("mark set mark {other:?}")),
                    };
                    Item::MarkSet {
                        xor,
                        value: number(words.next())?,
                    }
                }
                other => return Err(alloc::format!("mark {other:?}")),
            },
            "iifname" => {
                let negated = words.peek() == Some("!=");
                if negated {
                    words.next();
                }
                let word = words.next().ok_or("an interface name is missing")?;
                let name = match word.strip_prefix('"') {
                    Some(quoted) => quoted
                        .strip_suffix('"')
                        .ok_or_else(|| alloc::format!("{word:?} is not a quoted name"))?,
                    None => word,
                };
                Item::Interface {
                    negated,
                    name: name.into(),
                }
            }
            "numgen" => numgen(&mut words)?,
            "update" => {
                words.set_name()?;
                words.expect("{")?;
                while words.next().ok_or("an unclosed update")? != "}" {}
                Item::Update
            }
            "dnat" => {
                words.expect("to")?;
                let (ip, port) = destination(words.next())?;
                Item::Dnat(ip, port)
            }
            "masquerade" => {
                if words.peek() == Some("fully-random") {
                    words.next();
                }
                Item::Masquerade
            }
            "reject" => Item::Reject,
            "accept" | "drop" | "return" | "jump" | "goto" => {
                words.at -= 1;
                Item::Verdict(verdict(&mut words)?)
            }
            other => return Err(alloc::format!("{other:?} is not read by the evaluator")),
        };
        items.push(item);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_proxy_rules_are_read() {
        let rules = [
            "ip daddr . meta l4proto . th dport vmap @service-ips",
            "ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports",
            "ip daddr 172.30.0.41 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
            "ip saddr != { 203.0.113.0/25 } drop",
            "numgen random mod 2 vmap { 0 : goto endpoint-a , 1 : goto endpoint-b }",
            "ip saddr @affinity-x goto endpoint-x",
            "update @affinity-x { ip saddr }",
            "meta l4proto tcp dnat to 10.180.0.1:80",
            "meta l4proto tcp dnat to [fd00::1]:80",
            "mark and 0x4000 == 0 return",
            "mark set mark xor 0x4000",
            "masquerade fully-random",
            "fib saddr type local jump mark-for-masquerade",
            "ct state new jump firewall-check",
            "iifname \"eth0\" goto x",
            "iifname != veth* goto x",
            "ip daddr @cluster-ips reject",
        ];
        for rule in rules {
            let items = read(rule).unwrap_or_else(|e| panic!("{rule}: {e}"));
            assert!(!items.is_empty(), "{rule}");
        }
        assert_eq!(
            read("numgen random mod 2 vmap { 0 : goto a , 1 : goto b }").unwrap(),
            [Item::Numgen {
                modulus: 2,
                verdicts: alloc::vec![
                    (0, Verdict::Goto(Name::new("a").unwrap())),
                    (1, Verdict::Goto(Name::new("b").unwrap())),
                ],
            }]
        );
    }

    #[test]
    fn anything_else_is_an_error() {
        for rule in [
            "counter",
            "ip daddr",
            "meta l4proto icmp",
            "numgen random mod 0 vmap { }",
            "th dport 70000",
            "log prefix x",
        ] {
            assert!(read(rule).is_err(), "{rule}");
        }
    }
}
