//! `loadbalance`: CoreDNS v1.14.7's `plugin/loadbalance` (loadbalance.go, prefer.go,
//! setup.go). On the way back, a NOERROR reply (not to AXFR or IXFR) has each section
//! reordered: CNAME records first (glibc's stub wants them before the addresses), then the
//! other records, then the A and AAAA records shuffled, then the MX records shuffled. With
//! `prefer CIDR...`, the addresses of the answer and additional sections that fall in a
//! preferred subnet then come first, in the order the subnets are listed (prefer.go, which
//! also moves the MX records before the other records).
//!
//! Syntax: `loadbalance [round_robin | weighted WEIGHTFILE] { reload DURATION; prefer
//! CIDR... }`, parsed with CoreDNS's errors. The `weighted` policy is parsed and refused:
//! dns-cache does not implement it.
//!
//! The shuffle draws a random 16-bit number per swap as loadbalance.go does with
//! `dns.Id()`. The reply is re-encoded within the client's size; the OPT record stays
//! last (miekg/dns would put it among the other records of the additional section).

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use corefile::dispenser::{Dispenser, PluginError};
use corefile::plugins::PluginConfig;
use corefile::syntax::Line;
use dns_wire::{Message, OwnedMessage, OwnedRecord, Rcode, Type};

use super::handler::{Plugin, Query, Reply};
use crate::config::{ConfigError, Setup};

/// IXFR (RFC 1995), which `dns_wire` does not name.
const IXFR: Type = Type(251);
/// The `loadbalance` directive's settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadbalanceConfig {
    /// `weighted WEIGHTFILE` (with its `reload`), when asked for.
    pub weighted: Option<(String, String)>,
    /// `prefer` subnets, in order.
    pub prefer: Vec<Subnet>,
}

/// A `prefer` subnet: an address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subnet {
    /// The network address, host bits cleared.
    network: IpAddr,
    /// The prefix length.
    bits: u8,
}

impl Subnet {
    /// Go's `net.ParseCIDR`.
    fn parse(text: &str) -> Option<Self> {
        let (ip, bits) = text.split_once('/')?;
        let ip: IpAddr = ip.parse().ok()?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let bits: u8 = bits.parse().ok().filter(|b| *b <= max)?;
        Some(Self {
            network: mask(ip, bits),
            bits,
        })
    }

    /// Go's `IPNet.Contains`: an IPv4 address in IPv6-mapped form is an IPv4 address.
    fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        ip.is_ipv4() == self.network.is_ipv4() && mask(ip, self.bits) == self.network
    }
}

/// `ip` with all but its first `bits` bits cleared.
fn mask(ip: IpAddr, bits: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let keep = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            IpAddr::V4((u32::from(v4) & keep).into())
        }
        IpAddr::V6(v6) => {
            let keep = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            IpAddr::V6((u128::from(v6) & keep).into())
        }
    }
}

impl PluginConfig for LoadbalanceConfig {
    const NAME: &'static str = "loadbalance";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut config = Self::default();
        while d.next_token() {
            let args = d.remaining_args();
            match args.as_slice() {
                [] | ["round_robin"] => {}
                ["round_robin", ..] => {
                    return Err(d.err("unknown property for round_robin"));
                }
                ["weighted"] => return Err(d.err("missing weight file argument")),
                ["weighted", file] => {
                    let mut reload = String::from("30s");
                    while d.next_block() {
                        if d.val() != "reload" {
                            return Err(d.err(format!("unknown property '{}'", d.val())));
                        }
                        match d.remaining_args().as_slice() {
                            [] => return Err(d.err("reload duration value is missing")),
                            [value] if corefile::go::Duration::parse(value).is_ok() => {
                                reload = (*value).to_owned();
                            }
                            [value] => {
                                return Err(d.err(format!("invalid reload duration '{value}'")));
                            }
                            _ => return Err(d.err("unexpected argument")),
                        }
                    }
                    config.weighted = Some(((*file).to_owned(), reload));
                }
                ["weighted", ..] => return Err(d.err("unexpected argument(s)")),
                [policy, ..] => return Err(d.plain(format!("unknown policy: {policy}"))),
            }
            while d.next_block() {
                if d.val() != "prefer" {
                    return Err(d.err(format!("unknown property '{}'", d.val())));
                }
                for cidr in d.remaining_args() {
                    let subnet = Subnet::parse(cidr).ok_or_else(|| {
                        d.err(format!(
                            "invalid CIDR {cidr:?}: invalid CIDR address: {cidr}"
                        ))
                    })?;
                    config.prefer.push(subnet);
                }
            }
        }
        Ok(config)
    }

    fn to_lines(&self) -> Vec<Line> {
        let mut words = vec![Self::NAME.to_owned()];
        if let Some((file, _)) = &self.weighted {
            words.extend(["weighted".to_owned(), file.clone()]);
        }
        vec![Line::words(words)]
    }
}

/// What the `loadbalance` setup refuses.
#[derive(Debug, thiserror::Error)]
pub enum LoadbalanceError {
    /// The `weighted` policy.
    #[error("plugin/loadbalance: weighted: not supported by dns-cache (supported: round_robin)")]
    Weighted,
}

/// Sets up `loadbalance` for a block (the registry's entry).
pub(crate) fn setup(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    let Some(config) = setup.config::<LoadbalanceConfig>()? else {
        return Ok(());
    };
    if config.weighted.is_some() {
        return Err(LoadbalanceError::Weighted.into());
    }
    setup.add(Arc::new(Loadbalance::new(config.prefer)));
    Ok(())
}

/// The `loadbalance` plugin of a block.
pub struct Loadbalance {
    /// `prefer` subnets.
    prefer: Vec<Subnet>,
    /// The state of the random numbers (`dns.Id()`).
    random: AtomicU64,
}

impl Loadbalance {
    /// Round robin, then `prefer`.
    pub fn new(prefer: Vec<Subnet>) -> Self {
        let seed = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), 0u8);
        Self {
            prefer,
            random: AtomicU64::new(seed),
        }
    }

    /// A random 16-bit number (splitmix64 over a shared counter).
    fn id(&self) -> u16 {
        let mut z = self
            .random
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as u16
    }

    /// `reply` reordered, encoded within `budget` bytes; `None` when it stays as it is
    /// (not NOERROR, a zone transfer, no section with two records, or not parseable).
    pub fn balanced(&self, reply: &[u8], budget: usize) -> Option<Vec<u8>> {
        let msg = Message::parse(reply).ok()?;
        let counts = msg.counts();
        let qtype = msg.questions().next()?.qtype;
        if msg.rcode() != Rcode::NOERROR
            || qtype == Type::AXFR
            || qtype == IXFR
            || counts.answers.max(counts.authority).max(counts.additional) < 2
        {
            return None;
        }
        let mut owned = OwnedMessage::from_message(&msg).ok()?;
        self.shuffle(&mut owned);
        let mut out = vec![0; budget.min(usize::from(u16::MAX))];
        let len = owned.encode_truncated(&mut out, budget).ok()?;
        out.truncate(len);
        Some(out)
    }

    /// loadbalance.go `randomShuffle`, then prefer.go `reorderPreferredSubnets`.
    fn shuffle(&self, msg: &mut OwnedMessage) {
        for section in [&mut msg.answers, &mut msg.authority, &mut msg.additional] {
            round_robin(section, || self.id());
        }
        if !self.prefer.is_empty() {
            for section in [&mut msg.answers, &mut msg.additional] {
                prefer(section, &self.prefer);
            }
        }
    }
}

impl Plugin for Loadbalance {
    fn name(&self) -> &'static str {
        "loadbalance"
    }

    fn reply(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>, reply: &mut Reply) {
        if reply.failure().is_some() {
            return;
        }
        if let Some(balanced) = self.balanced(out, query.req.max_reply()) {
            out.clear();
            out.extend_from_slice(&balanced);
        }
    }
}

/// The groups of a section, as loadbalance.go and prefer.go sort records.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Cname,
    Address,
    Mx,
    Rest,
}

fn group(record: &OwnedRecord) -> Group {
    match record.rtype {
        Type::CNAME => Group::Cname,
        Type::A | Type::AAAA => Group::Address,
        Type::MX => Group::Mx,
        _ => Group::Rest,
    }
}

/// Takes the records of `group` out of `section`, in order.
fn take(section: &mut Vec<OwnedRecord>, which: Group) -> Vec<OwnedRecord> {
    let (taken, kept) = std::mem::take(section)
        .into_iter()
        .partition(|r| group(r) == which);
    *section = kept;
    taken
}

/// loadbalance.go `roundRobin`: CNAMEs, the rest, the addresses shuffled, the MXs shuffled.
fn round_robin(section: &mut Vec<OwnedRecord>, mut id: impl FnMut() -> u16) {
    if section.len() < 2 {
        return;
    }
    let mut cname = take(section, Group::Cname);
    let mut address = take(section, Group::Address);
    let mut mx = take(section, Group::Mx);
    shuffle(&mut address, &mut id);
    shuffle(&mut mx, &mut id);
    cname.append(section);
    cname.append(&mut address);
    cname.append(&mut mx);
    *section = cname;
}

/// loadbalance.go `roundRobinShuffle`.
fn shuffle(records: &mut [OwnedRecord], id: &mut impl FnMut() -> u16) {
    match records.len() {
        0 | 1 => {}
        2 => {
            if id().is_multiple_of(2) {
                records.swap(0, 1);
            }
        }
        len => {
            for j in 0..len {
                let p = j + usize::from(id()) % (len - j);
                if j != p {
                    records.swap(j, p);
                }
            }
        }
    }
}

/// prefer.go `reorderRecords`: CNAMEs, the addresses in preferred subnets (subnet by
/// subnet), the other addresses, the MXs, the rest.
fn prefer(section: &mut Vec<OwnedRecord>, subnets: &[Subnet]) {
    let mut cname = take(section, Group::Cname);
    let address = take(section, Group::Address);
    let mut mx = take(section, Group::Mx);
    let mut rest = std::mem::take(section);
    let mut unmatched: Vec<Option<OwnedRecord>> = address.into_iter().map(Some).collect();
    for subnet in subnets {
        for slot in &mut unmatched {
            if slot
                .as_ref()
                .and_then(address_of)
                .is_some_and(|ip| subnet.contains(ip))
                && let Some(record) = slot.take()
            {
                cname.push(record);
            }
        }
    }
    cname.extend(unmatched.into_iter().flatten());
    cname.append(&mut mx);
    cname.append(&mut rest);
    *section = cname;
}

/// The address of an A or AAAA record.
fn address_of(record: &OwnedRecord) -> Option<IpAddr> {
    let rdata: &[u8] = record.rdata.as_ref();
    match record.rtype {
        Type::A => <[u8; 4]>::try_from(rdata).ok().map(IpAddr::from),
        Type::AAAA => <[u8; 16]>::try_from(rdata).ok().map(IpAddr::from),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use dns_wire::{Class, Name, OwnedQuestion};

    use super::*;
    use crate::config::{Empty, build};
    use crate::metrics::Metrics;

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    fn record(owner: &str, rtype: Type, rdata: Vec<u8>) -> OwnedRecord {
        OwnedRecord {
            name: name(owner),
            rtype,
            class: Class::IN,
            ttl: 300,
            rdata: rdata.into(),
        }
    }

    fn a(owner: &str, ip: &str) -> OwnedRecord {
        let ip: std::net::Ipv4Addr = ip.parse().unwrap();
        record(owner, Type::A, ip.octets().to_vec())
    }

    fn aaaa(owner: &str, ip: &str) -> OwnedRecord {
        let ip: std::net::Ipv6Addr = ip.parse().unwrap();
        record(owner, Type::AAAA, ip.octets().to_vec())
    }

    fn cname(owner: &str, target: &str) -> OwnedRecord {
        record(owner, Type::CNAME, name(target).as_wire().to_vec())
    }

    fn mx(owner: &str, preference: u16, exchange: &str) -> OwnedRecord {
        let mut rdata = preference.to_be_bytes().to_vec();
        rdata.extend_from_slice(name(exchange).as_wire());
        record(owner, Type::MX, rdata)
    }

    fn soa(owner: &str) -> OwnedRecord {
        let mut rdata = name("ns.dns.skydns.test.").as_wire().to_vec();
        rdata.extend_from_slice(name("hostmaster.skydns.test.").as_wire());
        for value in [1_542_756_695u32, 7200, 1800, 86400, 30] {
            rdata.extend_from_slice(&value.to_be_bytes());
        }
        record(owner, Type::SOA, rdata)
    }

    /// A reply to `qname`/`qtype` with these sections, as loadbalance_test.go's handler
    /// writes back the request it was given.
    fn reply(
        qname: &str,
        qtype: Type,
        answer: Vec<OwnedRecord>,
        extra: Vec<OwnedRecord>,
    ) -> Vec<u8> {
        let mut msg = OwnedMessage::default();
        msg.header.qr = true;
        msg.questions.push(OwnedQuestion {
            name: name(qname),
            qtype,
            qclass: Class::IN,
        });
        msg.answers = answer;
        msg.additional = extra;
        msg.to_vec().unwrap()
    }

    /// loadbalance_test.go `countRecords`: CNAMEs, A/AAAAs and MXs, and whether they come
    /// in that order.
    fn count(records: &[OwnedRecord]) -> (usize, usize, usize, bool) {
        let (mut cnames, mut addresses, mut mxs, mut sorted, mut state) = (0, 0, 0, true, 0);
        for r in records {
            let rank = match r.rtype {
                Type::CNAME => {
                    cnames += 1;
                    1
                }
                Type::A | Type::AAAA => {
                    addresses += 1;
                    2
                }
                Type::MX => {
                    mxs += 1;
                    3
                }
                _ => 4,
            };
            sorted &= rank == 4 || state <= rank;
            state = rank;
        }
        (cnames, addresses, mxs, sorted)
    }

    const OWNER: &str = "endpoint.region2.skydns.test.";
    const MX: &str = "mx.region2.skydns.test.";

    /// CoreDNS v1.14.7 plugin/loadbalance/loadbalance_test.go `TestLoadBalanceRandom`: after
    /// the shuffle, CNAMEs come first, then addresses, then MXs, none lost, in the answer
    /// and the additional section.
    #[test]
    fn round_robin_puts_cnames_first_then_addresses_then_mx() {
        let cases = [
            (
                vec![
                    cname("cname1.region2.skydns.test.", "cname2.region2.skydns.test."),
                    cname("cname2.region2.skydns.test.", "cname3.region2.skydns.test."),
                    cname("cname5.region2.skydns.test.", "cname6.region2.skydns.test."),
                    cname("cname6.region2.skydns.test.", OWNER),
                    a(OWNER, "10.240.0.1"),
                    mx(MX, 1, "mx1.region2.skydns.test."),
                    mx(MX, 2, "mx2.region2.skydns.test."),
                    mx(MX, 3, "mx3.region2.skydns.test."),
                ],
                vec![],
                (4, 1, 3),
                (0, 0, 0),
            ),
            (
                vec![
                    a(OWNER, "10.240.0.1"),
                    mx(MX, 1, "mx1.region2.skydns.test."),
                    cname("cname.region2.skydns.test.", OWNER),
                ],
                vec![],
                (1, 1, 1),
                (0, 0, 0),
            ),
            (
                vec![
                    mx(MX, 1, "mx1.region2.skydns.test."),
                    a(OWNER, "10.240.0.1"),
                    a(OWNER, "10.240.0.2"),
                    mx(MX, 1, "mx2.region2.skydns.test."),
                    cname("cname2.region2.skydns.test.", "cname3.region2.skydns.test."),
                    a(OWNER, "10.240.0.3"),
                    mx(MX, 1, "mx3.region2.skydns.test."),
                ],
                vec![
                    a(OWNER, "10.240.0.1"),
                    aaaa(OWNER, "::1"),
                    mx(MX, 1, "mx1.region2.skydns.test."),
                    cname("cname2.region2.skydns.test.", "cname3.region2.skydns.test."),
                    mx(MX, 1, "mx2.region2.skydns.test."),
                    a(OWNER, "10.240.0.3"),
                    aaaa(OWNER, "::2"),
                    mx(MX, 1, "mx3.region2.skydns.test."),
                ],
                (1, 3, 3),
                (1, 4, 3),
            ),
        ];
        let lb = Loadbalance::new(Vec::new());
        for (i, (answer, extra, in_answer, in_extra)) in cases.into_iter().enumerate() {
            let wire = reply("region2.skydns.test.", Type::SRV, answer, extra);
            let out = lb.balanced(&wire, 65_535).unwrap();
            let msg = OwnedMessage::parse(&out).unwrap();
            let (c, ad, m, sorted) = count(&msg.answers);
            assert!(sorted, "case {i}: answer not sorted");
            assert_eq!((c, ad, m), in_answer, "case {i}: answer");
            let (c, ad, m, sorted) = count(&msg.additional);
            assert!(sorted, "case {i}: additional not sorted");
            assert_eq!((c, ad, m), in_extra, "case {i}: additional");
        }
    }

    /// loadbalance_test.go `TestLoadBalanceXFR`: a zone transfer keeps its order (SOA first
    /// and last); the same records to another question are reordered.
    #[test]
    fn zone_transfers_are_left_alone() {
        let answer = || {
            vec![
                soa("skydns.test."),
                mx(MX, 1, "mx1.region2.skydns.test."),
                a(OWNER, "10.240.0.1"),
                a(OWNER, "10.240.0.2"),
                mx(MX, 1, "mx2.region2.skydns.test."),
                cname("cname2.region2.skydns.test.", "cname3.region2.skydns.test."),
                a(OWNER, "10.240.0.3"),
                mx(MX, 1, "mx3.region2.skydns.test."),
                soa("skydns.test."),
            ]
        };
        let lb = Loadbalance::new(Vec::new());
        for xfr in [IXFR, Type::AXFR] {
            let wire = reply("skydns.test.", xfr, answer(), vec![]);
            assert!(lb.balanced(&wire, 65_535).is_none());
        }
        let wire = reply("skydns.test.", Type::SRV, answer(), vec![]);
        let msg = OwnedMessage::parse(&lb.balanced(&wire, 65_535).unwrap()).unwrap();
        assert_eq!(msg.answers[0].rtype, Type::CNAME);
        assert_eq!(msg.answers[8].rtype, Type::MX);
    }

    /// Every order of three addresses comes up, and no record is lost.
    #[test]
    fn the_shuffle_reaches_every_order() {
        let lb = Loadbalance::new(Vec::new());
        let wire = reply(
            "x.test.",
            Type::A,
            vec![
                a("x.test.", "10.0.0.1"),
                a("x.test.", "10.0.0.2"),
                a("x.test.", "10.0.0.3"),
            ],
            vec![],
        );
        let mut orders = std::collections::HashSet::new();
        for _ in 0..300 {
            let msg = OwnedMessage::parse(&lb.balanced(&wire, 512).unwrap()).unwrap();
            let order: Vec<u8> = msg.answers.iter().map(|r| r.rdata[3]).collect();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [1, 2, 3]);
            orders.insert(order);
        }
        assert_eq!(orders.len(), 6, "{orders:?}");
    }

    /// Errors and NXDOMAIN are not touched.
    #[test]
    fn only_noerror_replies_are_reordered() {
        let lb = Loadbalance::new(Vec::new());
        let mut msg = OwnedMessage::parse(&reply(
            "x.test.",
            Type::A,
            vec![a("x.test.", "10.0.0.1"), a("x.test.", "10.0.0.2")],
            vec![],
        ))
        .unwrap();
        msg.header.rcode = Rcode::NXDOMAIN.0 as u8;
        assert!(lb.balanced(&msg.to_vec().unwrap(), 512).is_none());
    }

    /// prefer.go: the addresses in the preferred subnets first, subnet by subnet, then the
    /// other addresses; CNAMEs before them, MXs and the rest after.
    #[test]
    fn prefer_orders_addresses_by_subnet() {
        let subnets = ["10.9.20.0/24", "192.168.1.0/24"].map(|s| Subnet::parse(s).unwrap());
        let mut section = vec![
            a("x.", "1.1.1.1"),
            a("x.", "192.168.1.7"),
            mx("x.", 1, "m.x."),
            aaaa("x.", "::1"),
            a("x.", "10.9.20.5"),
            cname("y.", "x."),
            aaaa("x.", "::ffff:10.9.20.6"),
        ];
        prefer(&mut section, &subnets);
        let addresses: Vec<Option<IpAddr>> = section.iter().map(address_of).collect();
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        assert_eq!(
            addresses,
            [
                None,
                ip("10.9.20.5"),
                ip("::ffff:10.9.20.6"),
                ip("192.168.1.7"),
                ip("1.1.1.1"),
                ip("::1"),
                None
            ]
        );
        assert_eq!(section[0].rtype, Type::CNAME);
        assert_eq!(section[6].rtype, Type::MX);
        assert!(Subnet::parse("10.0.0.0/33").is_none());
        assert!(Subnet::parse("10.0.0.0").is_none());
        assert!(Subnet::parse("2001:db8::/32").is_some());
    }

    fn setup(stanza: &str) -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        let corefile = format!(". {{\n{stanza}\n    whoami\n}}\n");
        build(
            corefile.as_bytes(),
            "Corefile",
            53,
            Empty::Refuse,
            &Arc::new(Metrics::new()),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    }

    /// CoreDNS v1.14.7 plugin/loadbalance/setup_test.go `TestSetup`: the accepted policies
    /// and CoreDNS's errors. The `weighted` stanzas CoreDNS accepts parse here too, and are
    /// then refused because dns-cache does not implement that policy.
    #[test]
    fn setup_accepts_coredns_syntax_and_refuses_weighted() {
        assert_eq!(setup("loadbalance"), Ok(()));
        assert_eq!(setup("loadbalance round_robin"), Ok(()));
        assert_eq!(
            setup("loadbalance round_robin {\n prefer 10.9.20.0/24 192.168.1.0/24\n}"),
            Ok(())
        );
        for weighted in [
            "loadbalance weighted wfile",
            "loadbalance weighted wf {\n reload 10s\n}",
            "loadbalance weighted wf {\n reload 0s\n}",
        ] {
            assert_eq!(
                setup(weighted).unwrap_err(),
                "plugin/loadbalance: weighted: not supported by dns-cache (supported: round_robin)"
            );
        }
        for (stanza, error) in [
            ("loadbalance fleeb", "unknown policy"),
            ("loadbalance round_robin a", "unknown property"),
            ("loadbalance weighted", "missing weight file argument"),
            ("loadbalance weighted a b", "unexpected argument"),
            ("loadbalance weighted wfile {\n susu\n}", "unknown property"),
            (
                "loadbalance weighted wfile {\n reload a\n}",
                "invalid reload duration",
            ),
            (
                "loadbalance weighted wfile {\n reload 30s a\n}",
                "unexpected argument",
            ),
            (
                "loadbalance {\n prefer 10.0.0.0/40\n}",
                "invalid CIDR \"10.0.0.0/40\"",
            ),
            ("loadbalance {\n bogus\n}", "unknown property 'bogus'"),
        ] {
            let err = setup(stanza).unwrap_err();
            assert!(err.contains(error), "{stanza}: {err}");
            assert!(err.contains("plugin/loadbalance"), "{stanza}: {err}");
        }
    }
}
