//! Set and map elements: keys made of typed atoms (addresses, protocols, ports), verdicts as
//! map values, and an optional comment. Nothing in an element is free text.

use alloc::string::String;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::net::IpAddr;

use iptables_model::kube::Protocol;
use iptables_model::text::{push_ip, push_u32};

use crate::name::{Comment, Name};

/// One part of an element key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// An address (`ipv4_addr`, `ipv6_addr`).
    Ip(IpAddr),
    /// A transport protocol (`inet_proto`): `tcp`, `udp`, `sctp`.
    Protocol(Protocol),
    /// A port (`inet_service`).
    Port(u16),
}

impl Atom {
    /// Appends the atom as nft writes it.
    pub(crate) fn push_to(self, out: &mut String) {
        match self {
            Self::Ip(ip) => push_ip(out, ip),
            Self::Protocol(p) => out.push_str(p.lower()),
            Self::Port(p) => push_u32(out, u32::from(p)),
        }
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        self.push_to(&mut text);
        f.write_str(&text)
    }
}

/// The most atoms a [`Key`] holds: kube-proxy's longest keys are `address . protocol . port`.
pub const MAX_ATOMS: usize = 3;

/// An element key: one atom per key type of its set or map, held inline (a key is copied
/// into the proxier's indexes and into each operation that names it).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The atoms; those past `len` are always [`Key::FILLER`], so equal keys are equal arrays.
    atoms: [Atom; MAX_ATOMS],
    len: u8,
}

impl Key {
    const FILLER: Atom = Atom::Port(0);

    /// The key of `atoms`; `None` when there are more than [`MAX_ATOMS`].
    pub fn new(atoms: &[Atom]) -> Option<Self> {
        let mut key = Self {
            atoms: [Self::FILLER; MAX_ATOMS],
            len: u8::try_from(atoms.len()).ok()?,
        };
        key.atoms.get_mut(..atoms.len())?.copy_from_slice(atoms);
        Some(key)
    }

    /// The atoms, in order.
    pub fn as_slice(&self) -> &[Atom] {
        self.atoms
            .get(..usize::from(self.len))
            .unwrap_or(&self.atoms)
    }

    /// Appends the key as written: atoms joined by ` . `.
    pub(crate) fn push_to(&self, out: &mut String) {
        for (i, atom) in self.as_slice().iter().enumerate() {
            if i > 0 {
                out.push_str(" . ");
            }
            atom.push_to(out);
        }
    }
}

impl From<Atom> for Key {
    fn from(atom: Atom) -> Self {
        Self {
            atoms: [atom, Self::FILLER, Self::FILLER],
            len: 1,
        }
    }
}

impl From<[Atom; 2]> for Key {
    fn from([a, b]: [Atom; 2]) -> Self {
        Self {
            atoms: [a, b, Self::FILLER],
            len: 2,
        }
    }
}

impl From<[Atom; 3]> for Key {
    fn from(atoms: [Atom; 3]) -> Self {
        Self { atoms, len: 3 }
    }
}

impl core::ops::Deref for Key {
    type Target = [Atom];

    fn deref(&self) -> &[Atom] {
        self.as_slice()
    }
}

/// Keys hash as one write of their atoms' bytes (a derived hash writes each part of each
/// atom on its own, and a sync hashes the key of every element it wants).
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Equal keys write the same numbers; a tag in the high bits keeps kinds apart.
        for atom in self.as_slice() {
            match *atom {
                Atom::Ip(IpAddr::V4(ip)) => state.write_u64(1 << 32 | u64::from(ip.to_bits())),
                Atom::Ip(IpAddr::V6(ip)) => {
                    state.write_u64(2 << 32);
                    state.write_u128(ip.to_bits());
                }
                Atom::Protocol(p) => state.write_u64(
                    3 << 32
                        | match p {
                            Protocol::Tcp => 6,
                            Protocol::Udp => 17,
                            Protocol::Sctp => 132,
                        },
                ),
                Atom::Port(port) => state.write_u64(4 << 32 | u64::from(port)),
            }
        }
    }
}

/// Keys sort as their atoms do, one by one.
impl Ord for Key {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        // Most keys start with an IPv4 address, and most pairs a sync sorts differ there:
        // those are told apart without the general comparison (which would order them the
        // same way). An empty key's first atom is the filler, not an address.
        if let ([Atom::Ip(IpAddr::V4(a)), ..], [Atom::Ip(IpAddr::V4(b)), ..]) =
            (&self.atoms, &other.atoms)
            && a != b
        {
            return a.cmp(b);
        }
        self.as_slice().cmp(other.as_slice())
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// A verdict: a verdict map's value, or the end of a rule.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// `accept`.
    Accept,
    /// `drop`.
    Drop,
    /// `return`.
    Return,
    /// `jump CHAIN`.
    Jump(Name),
    /// `goto CHAIN`.
    Goto(Name),
}

impl Verdict {
    /// The chain this verdict continues in, if any.
    pub const fn chain(&self) -> Option<&Name> {
        match self {
            Self::Jump(c) | Self::Goto(c) => Some(c),
            _ => None,
        }
    }
}

impl Verdict {
    /// Appends the verdict as nft writes it.
    pub(crate) fn push_to(&self, out: &mut String) {
        let (word, chain) = match self {
            Self::Accept => ("accept", None),
            Self::Drop => ("drop", None),
            Self::Return => ("return", None),
            Self::Jump(c) => ("jump", Some(c)),
            Self::Goto(c) => ("goto", Some(c)),
        };
        out.push_str(word);
        if let Some(c) = chain {
            out.push(' ');
            out.push_str(c.as_str());
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        self.push_to(&mut text);
        f.write_str(&text)
    }
}

/// An element of the set or map named `container`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Element {
    /// The set or map.
    pub container: Name,
    /// The key, one atom per key type.
    pub key: Key,
    /// The map value (`None` in a set).
    pub value: Option<Verdict>,
    /// `comment`.
    pub comment: Option<Comment>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_hold_up_to_three_atoms_and_sort_as_their_atoms() {
        let ip = |s: &str| Atom::Ip(s.parse().unwrap());
        let tcp = Atom::Protocol(Protocol::Tcp);
        assert_eq!(
            Key::new(&[ip("10.0.0.1"), tcp, Atom::Port(80), Atom::Port(1)]),
            None
        );
        let short = Key::from(ip("10.0.0.1"));
        let long = Key::from([ip("10.0.0.1"), tcp, Atom::Port(80)]);
        assert_eq!(Key::new(&[ip("10.0.0.1")]), Some(short));
        assert_eq!(&*long, &[ip("10.0.0.1"), tcp, Atom::Port(80)]);
        // A prefix sorts first, as slices do, whatever the filler atoms are.
        assert!(short < long);
        assert!(Key::from([tcp, Atom::Port(0)]) > Key::from(tcp));
        // Keys that start with different IPv4 addresses sort by them, whatever follows.
        let (a, b) = (ip("10.0.0.2"), ip("10.0.0.10"));
        assert!(Key::from([a, tcp, Atom::Port(1)]) < Key::from([b, tcp, Atom::Port(0)]));
        assert!(Key::from(b) > Key::from([a, tcp, Atom::Port(80)]));
        assert!(Key::from(a) < Key::from([a, tcp, Atom::Port(80)]));
        assert!(Key::from(a) < Key::from(ip("fd00::1")));
        assert_ne!(Key::from([tcp, Atom::Port(0)]), Key::from(tcp));
    }
}
