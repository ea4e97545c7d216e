//! IANA registries used in messages: RR types, classes, opcodes and response codes.
//!
//! Each is a newtype over the wire integer, so every value (known or not) survives a round
//! trip (RFC 3597); constants and mnemonics cover the registered values this crate knows.

use core::fmt;

macro_rules! registry {
    (
        $(#[$meta:meta])*
        $name:ident($int:ty), unknown = $unknown:literal;
        $($(#[$cmeta:meta])* $konst:ident = $value:literal, $mnemonic:literal;)*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub $int);

        impl $name {
            $($(#[$cmeta])* pub const $konst: Self = Self($value);)*

            /// The registered mnemonic, if this crate knows the value.
            pub const fn mnemonic(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some($mnemonic),)*
                    _ => None,
                }
            }

            /// The value for a mnemonic (case-insensitive), or the generic form
            #[doc = concat!("`", $unknown, "NNN`.")]
            pub fn from_mnemonic(text: &str) -> Option<Self> {
                $(if text.eq_ignore_ascii_case($mnemonic) { return Some(Self::$konst); })*
                let digits = text
                    .get(..$unknown.len())
                    .filter(|p| p.eq_ignore_ascii_case($unknown))
                    .and_then(|_| text.get($unknown.len()..))?;
                digits.parse().ok().map(Self)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.mnemonic() {
                    Some(m) => f.write_str(m),
                    None => write!(f, concat!($unknown, "{}"), self.0),
                }
            }
        }

        impl From<$int> for $name {
            fn from(v: $int) -> Self {
                Self(v)
            }
        }

        impl From<$name> for $int {
            fn from(v: $name) -> Self {
                v.0
            }
        }
    };
}

registry! {
    /// A resource record TYPE (RFC 1035 §3.2.2 and the IANA registry); unknown types are
    /// shown as `TYPEnnn` (RFC 3597 §5).
    Type(u16), unknown = "TYPE";
    /// IPv4 address (RFC 1035).
    A = 1, "A";
    /// Authoritative name server (RFC 1035).
    NS = 2, "NS";
    /// Mail destination, obsolete (RFC 1035).
    MD = 3, "MD";
    /// Mail forwarder, obsolete (RFC 1035).
    MF = 4, "MF";
    /// Canonical name (RFC 1035).
    CNAME = 5, "CNAME";
    /// Start of authority (RFC 1035).
    SOA = 6, "SOA";
    /// Mailbox domain name (RFC 1035).
    MB = 7, "MB";
    /// Mail group member (RFC 1035).
    MG = 8, "MG";
    /// Mail rename domain name (RFC 1035).
    MR = 9, "MR";
    /// Null RR (RFC 1035).
    NULL = 10, "NULL";
    /// Well-known service (RFC 1035).
    WKS = 11, "WKS";
    /// Domain name pointer (RFC 1035).
    PTR = 12, "PTR";
    /// Host information (RFC 1035, RFC 8482).
    HINFO = 13, "HINFO";
    /// Mailbox information (RFC 1035).
    MINFO = 14, "MINFO";
    /// Mail exchange (RFC 1035).
    MX = 15, "MX";
    /// Text strings (RFC 1035).
    TXT = 16, "TXT";
    /// Responsible person (RFC 1183).
    RP = 17, "RP";
    /// AFS database location (RFC 1183).
    AFSDB = 18, "AFSDB";
    /// Route through (RFC 1183).
    RT = 21, "RT";
    /// Signature, obsolete (RFC 2535).
    SIG = 24, "SIG";
    /// X.400 mail mapping (RFC 2163).
    PX = 26, "PX";
    /// IPv6 address (RFC 3596).
    AAAA = 28, "AAAA";
    /// Next domain, obsolete (RFC 2535).
    NXT = 30, "NXT";
    /// Server selection (RFC 2782).
    SRV = 33, "SRV";
    /// Naming authority pointer (RFC 3403).
    NAPTR = 35, "NAPTR";
    /// Delegation name (RFC 6672).
    DNAME = 39, "DNAME";
    /// EDNS(0) pseudo-record (RFC 6891).
    OPT = 41, "OPT";
    /// Delegation signer (RFC 4034).
    DS = 43, "DS";
    /// DNSSEC signature (RFC 4034).
    RRSIG = 46, "RRSIG";
    /// Next secure record (RFC 4034).
    NSEC = 47, "NSEC";
    /// DNSSEC public key (RFC 4034).
    DNSKEY = 48, "DNSKEY";
    /// Hashed next secure record (RFC 5155).
    NSEC3 = 50, "NSEC3";
    /// NSEC3 parameters (RFC 5155).
    NSEC3PARAM = 51, "NSEC3PARAM";
    /// TLS association (RFC 6698).
    TLSA = 52, "TLSA";
    /// Service binding (RFC 9460).
    SVCB = 64, "SVCB";
    /// HTTPS service binding (RFC 9460).
    HTTPS = 65, "HTTPS";
    /// Transaction signature (RFC 8945).
    TSIG = 250, "TSIG";
    /// Zone transfer (RFC 5936).
    AXFR = 252, "AXFR";
    /// Any type, in questions (RFC 1035, RFC 8482).
    ANY = 255, "ANY";
    /// Certification authority authorization (RFC 8659).
    CAA = 257, "CAA";
}

registry! {
    /// A resource record CLASS (RFC 1035 §3.2.4); unknown classes are shown as `CLASSnnn`.
    Class(u16), unknown = "CLASS";
    /// The Internet.
    IN = 1, "IN";
    /// Chaos.
    CH = 3, "CH";
    /// Hesiod.
    HS = 4, "HS";
    /// No class, in dynamic updates (RFC 2136).
    NONE = 254, "NONE";
    /// Any class, in questions.
    ANY = 255, "ANY";
}

registry! {
    /// A header OPCODE (RFC 1035 §4.1.1; 4 bits on the wire).
    Opcode(u8), unknown = "OPCODE";
    /// Standard query.
    QUERY = 0, "QUERY";
    /// Inverse query, obsolete.
    IQUERY = 1, "IQUERY";
    /// Server status request.
    STATUS = 2, "STATUS";
    /// Zone change notification (RFC 1996).
    NOTIFY = 4, "NOTIFY";
    /// Dynamic update (RFC 2136).
    UPDATE = 5, "UPDATE";
}

registry! {
    /// A response code: 4 bits in the header, 12 with the EDNS extended RCODE (RFC 6891 §6.1.3).
    Rcode(u16), unknown = "RCODE";
    /// No error.
    NOERROR = 0, "NOERROR";
    /// Format error.
    FORMERR = 1, "FORMERR";
    /// Server failure.
    SERVFAIL = 2, "SERVFAIL";
    /// Name does not exist.
    NXDOMAIN = 3, "NXDOMAIN";
    /// Not implemented.
    NOTIMP = 4, "NOTIMP";
    /// Refused.
    REFUSED = 5, "REFUSED";
    /// Name exists when it should not (RFC 2136).
    YXDOMAIN = 6, "YXDOMAIN";
    /// RRset exists when it should not (RFC 2136).
    YXRRSET = 7, "YXRRSET";
    /// RRset that should exist does not (RFC 2136).
    NXRRSET = 8, "NXRRSET";
    /// Not authoritative (RFC 2136).
    NOTAUTH = 9, "NOTAUTH";
    /// Name not in zone (RFC 2136).
    NOTZONE = 10, "NOTZONE";
    /// Bad OPT version (RFC 6891).
    BADVERS = 16, "BADVERS";
    /// Bad server cookie (RFC 7873).
    BADCOOKIE = 23, "BADCOOKIE";
}

impl Default for Opcode {
    fn default() -> Self {
        Self::QUERY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn rfc3597_s5_unknown_types_print_generically_and_parse_back() {
        assert_eq!(Type(65280).to_string(), "TYPE65280");
        assert_eq!(Type::from_mnemonic("type65280"), Some(Type(65280)));
        assert_eq!(Type::from_mnemonic("aaaa"), Some(Type::AAAA));
        assert_eq!(Class(42).to_string(), "CLASS42");
        assert_eq!(Type::from_mnemonic("TYPE"), None);
    }
}
