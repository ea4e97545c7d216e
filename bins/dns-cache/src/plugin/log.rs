//! `log`: one line per query in CoreDNS's format (`docs/dns-cache.md` §2.3), e.g.
//! `[INFO] 127.0.0.1:63479 - 32124 "A IN example.com. udp 40 false 4096" NOERROR qr,rd,ra,ad 67 0.005239353s`.

use std::fmt::Write as _;
use std::net::IpAddr;
use std::time::Duration;

use corefile::plugins::LogRule;
use dns_wire::{Header, Rcode};

use crate::query::classify::ReplyType;
use crate::query::names::{Zone, in_any};
use crate::query::request::{Proto, Request};

/// CoreDNS's `{common}` format.
pub const COMMON: &str = "{remote}:{port} - {>id} \"{type} {class} {name} {proto} {size} {>do} {>bufsize}\" {rcode} {>rflags} {rsize} {duration}";

/// A placeholder of the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Remote,
    Port,
    Id,
    Type,
    Class,
    Name,
    Proto,
    Size,
    Do,
    Bufsize,
    Rcode,
    Rflags,
    Rsize,
    Duration,
    Opcode,
    Unknown,
}

impl Field {
    fn parse(name: &str) -> Self {
        match name {
            "remote" => Self::Remote,
            "port" => Self::Port,
            ">id" => Self::Id,
            "type" => Self::Type,
            "class" => Self::Class,
            "name" => Self::Name,
            "proto" => Self::Proto,
            "size" => Self::Size,
            ">do" => Self::Do,
            ">bufsize" => Self::Bufsize,
            "rcode" => Self::Rcode,
            ">rflags" => Self::Rflags,
            "rsize" => Self::Rsize,
            "duration" => Self::Duration,
            ">opcode" => Self::Opcode,
            _ => Self::Unknown,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Text(String),
    Field(Field),
}

/// A parsed log format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format(Vec<Segment>);

impl Format {
    /// Parses a format string; `{common}` and `{combined}` expand first.
    pub fn parse(text: &str) -> Self {
        let combined = format!("{COMMON} \"{{>opcode}}\"");
        let text = text
            .replace("{common}", COMMON)
            .replace("{combined}", &combined);
        let mut segments = Vec::new();
        let mut rest = text.as_str();
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            if open > 0 {
                segments.push(Segment::Text(rest[..open].to_owned()));
            }
            segments.push(Segment::Field(Field::parse(&rest[open + 1..open + close])));
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            segments.push(Segment::Text(rest.to_owned()));
        }
        Self(segments)
    }
}

/// What the log line says about the reply.
#[derive(Clone, Copy, Debug)]
pub struct Logged {
    /// The reply's rcode (or the chain's, if nothing was written).
    pub rcode: Rcode,
    /// The reply's header, if one was written.
    pub header: Option<Header>,
    /// Bytes written.
    pub rsize: usize,
    /// The reply's type, for the class filter.
    pub kind: ReplyType,
    /// Time since the log plugin saw the query.
    pub duration: Duration,
}

/// One `log` rule.
#[derive(Clone, Debug)]
struct Rule {
    zones: Vec<Zone>,
    format: Format,
    /// Classes to log; empty means all.
    classes: Vec<String>,
}

/// The `log` plugin of a block.
#[derive(Clone, Debug)]
pub struct Log {
    rules: Vec<Rule>,
}

impl Log {
    /// The plugin from its rules.
    pub fn new(rules: &[LogRule]) -> Result<Self, dns_wire::Error> {
        let rules = rules
            .iter()
            .map(|r| {
                let names: Vec<&str> = if r.names.is_empty() {
                    vec!["."]
                } else {
                    r.names.iter().map(String::as_str).collect()
                };
                Ok(Rule {
                    zones: names
                        .into_iter()
                        .map(Zone::parse)
                        .collect::<Result<_, _>>()?,
                    format: Format::parse(r.format.as_deref().unwrap_or("{common}")),
                    classes: r.classes.iter().filter(|c| *c != "all").cloned().collect(),
                })
            })
            .collect::<Result<_, dns_wire::Error>>()?;
        Ok(Self { rules })
    }

    /// Logs `req` if a rule takes it.
    pub fn log(&self, req: &Request<'_>, logged: &Logged) {
        for rule in &self.rules {
            if !in_any(&req.name, &rule.zones) {
                continue;
            }
            if !rule.classes.is_empty() && !rule.classes.iter().any(|c| c == logged.kind.class()) {
                continue;
            }
            tracing::info!("{}", render(&rule.format, req, logged));
            // CoreDNS logs once per query: the first matching rule.
            return;
        }
    }
}

/// The line for one query.
pub fn render(format: &Format, req: &Request<'_>, logged: &Logged) -> String {
    let mut line = String::with_capacity(128);
    for segment in &format.0 {
        match segment {
            Segment::Text(text) => line.push_str(text),
            Segment::Field(field) => write_field(&mut line, *field, req, logged),
        }
    }
    line
}

fn write_field(line: &mut String, field: Field, req: &Request<'_>, logged: &Logged) {
    // Writing to a String cannot fail.
    let _ = match field {
        Field::Remote => match req.client.ip().to_canonical() {
            IpAddr::V4(v4) => write!(line, "{v4}"),
            IpAddr::V6(v6) => write!(line, "[{v6}]"),
        },
        Field::Port => write!(line, "{}", req.client.port()),
        Field::Id => write!(line, "{}", req.header.id),
        Field::Type => write!(line, "{}", req.question.qtype),
        Field::Class => write!(line, "{}", req.question.qclass),
        Field::Name => write!(line, "{}", req.question.name.to_name().to_lowercase()),
        Field::Proto => write!(line, "{}", req.proto.as_str()),
        Field::Size => write!(line, "{}", req.bytes().len()),
        Field::Do => write!(line, "{}", req.dnssec_ok()),
        Field::Bufsize => write!(line, "{}", bufsize(req)),
        Field::Rcode => match logged.rcode.mnemonic() {
            Some(m) => write!(line, "{m}"),
            None => write!(line, "{}", logged.rcode.0),
        },
        Field::Rflags => {
            line.push_str(&rflags(logged.header.as_ref()));
            Ok(())
        }
        Field::Rsize => write!(line, "{}", logged.rsize),
        Field::Duration => write!(line, "{}s", logged.duration.as_secs_f64()),
        Field::Opcode => write!(line, "{}", req.header.opcode.0),
        Field::Unknown => write!(line, "-"),
    };
}

/// The client's buffer size as CoreDNS reports it: 65535 over TCP, else the EDNS size with
/// 512 as the floor (and without EDNS).
fn bufsize(req: &Request<'_>) -> u16 {
    match req.proto {
        Proto::Tcp => u16::MAX,
        Proto::Udp => req.edns.map_or(512, |e| e.udp_size.max(512)),
    }
}

/// The reply's flags in CoreDNS's order, comma-separated.
fn rflags(header: Option<&Header>) -> String {
    let Some(h) = header else {
        return String::new();
    };
    let flags = [
        (h.qr, "qr"),
        (h.aa, "aa"),
        (h.tc, "tc"),
        (h.rd, "rd"),
        (h.ra, "ra"),
        (h.z, "z"),
        (h.ad, "ad"),
        (h.cd, "cd"),
    ];
    flags
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::query;
    use crate::query::request::{Admission, admit};
    use dns_wire::Type;

    #[test]
    fn common_format_matches_the_spec_example() {
        let mut q = query("Example.COM.", Type::A, Some((4096, false)));
        q[0..2].copy_from_slice(&32124u16.to_be_bytes());
        let Admission::Query(req) = admit(&q, Proto::Udp, "127.0.0.1:63479".parse().unwrap())
        else {
            panic!()
        };
        let header = Header {
            qr: true,
            rd: true,
            ra: true,
            ad: true,
            ..Header::default()
        };
        let logged = Logged {
            rcode: Rcode::NOERROR,
            header: Some(header),
            rsize: 67,
            kind: ReplyType::NoError,
            duration: Duration::from_nanos(5_239_353),
        };
        assert_eq!(
            render(&Format::parse("{common}"), &req, &logged),
            format!(
                "127.0.0.1:63479 - 32124 \"A IN example.com. udp {} false 4096\" NOERROR qr,rd,ra,ad 67 0.005239353s",
                q.len()
            )
        );
        let line = render(&Format::parse("{combined} {nope}"), &req, &logged);
        assert!(line.ends_with(" \"0\" -"), "{line}");
    }

    #[test]
    fn ipv6_remote_in_brackets_and_tcp_bufsize() {
        let q = query("a.", Type::AAAA, None);
        let Admission::Query(req) = admit(&q, Proto::Tcp, "[::1]:5300".parse().unwrap()) else {
            panic!()
        };
        let logged = Logged {
            rcode: Rcode(3841),
            header: None,
            rsize: 0,
            kind: ReplyType::OtherError,
            duration: Duration::from_millis(1),
        };
        let line = render(
            &Format::parse("{remote} {>bufsize} {rcode} [{>rflags}] {duration}"),
            &req,
            &logged,
        );
        assert_eq!(line, "[::1] 65535 3841 [] 0.001s");
    }
}
