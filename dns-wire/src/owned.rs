//! The owned message model, for building and editing messages.
//!
//! Names are stored uncompressed and inline ([`Name`]); RDATA is stored as uncompressed wire
//! bytes, typed on demand with [`OwnedRecord::data`], so every type (known or not) round-trips
//! exactly. The OPT record lives apart, in [`OwnedMessage::edns`], and is written last.

use alloc::vec::Vec;

use crate::bytes::RdataBytes;
use crate::edns::{Edns, Options, opt_ttl};
use crate::encode::Encoder;
use crate::error::{Error, ErrorKind, Result};
use crate::header::Header;
use crate::message::{Message, Record, Section};
use crate::name::Name;
use crate::rdata::{RData, layout};
use crate::types::{Class, Rcode, Type};

/// The UDP size budget without EDNS (RFC 1035 §4.2.1).
pub const UDP_BUDGET_WITHOUT_EDNS: usize = 512;

/// A question, owned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnedQuestion {
    /// QNAME.
    pub name: Name,
    /// QTYPE.
    pub qtype: Type,
    /// QCLASS.
    pub qclass: Class,
}

/// A resource record, owned, with uncompressed RDATA.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnedRecord {
    /// Owner name.
    pub name: Name,
    /// TYPE.
    pub rtype: Type,
    /// CLASS.
    pub class: Class,
    /// TTL in seconds.
    pub ttl: u32,
    /// RDATA in uncompressed wire form.
    pub rdata: RdataBytes,
}

impl OwnedRecord {
    /// A record from typed RDATA.
    pub fn new(name: Name, class: Class, ttl: u32, data: &RData<'_>) -> Self {
        let mut rdata = Vec::new();
        data.write_to(&mut rdata);
        Self {
            name,
            rtype: data.rtype(),
            class,
            ttl,
            rdata: rdata.into(),
        }
    }

    /// Copies a record out of a message, decompressing the names in its RDATA where
    /// RFC 3597 §4 allows compression.
    pub fn from_record(record: &Record<'_>) -> Result<Self> {
        let mut out = Self {
            name: Name::root(),
            rtype: record.rtype(),
            class: record.class(),
            ttl: record.ttl(),
            rdata: RdataBytes::new(),
        };
        out.fill_from(record)?;
        Ok(out)
    }

    /// Sets the owner name and RDATA from `record`.
    fn fill_from(&mut self, record: &Record<'_>) -> Result<()> {
        record.name().write_into(&mut self.name);
        self.rdata.clear();
        layout::decompress_into(
            record.rtype(),
            record.msg(),
            record.rdata_offset(),
            record.rdata_end(),
            record.names_checked(),
            &mut self.rdata,
        )
    }

    /// The RDATA, typed.
    pub fn data(&self) -> Result<RData<'_>> {
        RData::from_bytes(self.rtype, &self.rdata)
    }
}

/// The EDNS fields of a message, owned (RFC 6891 §6.1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OwnedEdns {
    /// UDP payload size to advertise.
    pub udp_payload_size: u16,
    /// Upper 8 bits of the extended RCODE.
    pub ext_rcode: u8,
    /// EDNS version.
    pub version: u8,
    /// DO bit (RFC 3225).
    pub dnssec_ok: bool,
    /// The other flag bits, kept.
    pub z: u16,
    /// The options in wire form (code, length, data), unknown ones included, in order.
    pub options: Vec<u8>,
}

impl OwnedEdns {
    /// Copies the EDNS fields of a view.
    pub fn from_edns(edns: &Edns<'_>) -> Self {
        Self {
            udp_payload_size: edns.udp_payload_size,
            ext_rcode: edns.ext_rcode,
            version: edns.version,
            dnssec_ok: edns.dnssec_ok,
            z: edns.z,
            options: edns.options.as_bytes().to_vec(),
        }
    }

    /// Appends an option.
    pub fn push_option(&mut self, code: u16, data: &[u8]) -> Result<()> {
        let len = u16::try_from(data.len())
            .map_err(|_| Error::new(ErrorKind::BadEdnsOption, self.options.len()))?;
        self.options.extend_from_slice(&code.to_be_bytes());
        self.options.extend_from_slice(&len.to_be_bytes());
        self.options.extend_from_slice(data);
        Ok(())
    }

    /// A view of the fields, options typed.
    pub fn view(&self) -> Result<Edns<'_>> {
        Ok(Edns {
            udp_payload_size: self.udp_payload_size,
            ext_rcode: self.ext_rcode,
            version: self.version,
            dnssec_ok: self.dnssec_ok,
            z: self.z,
            options: Options::new(&self.options)?,
        })
    }
}

/// A whole message, owned.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OwnedMessage {
    /// ID and flags.
    pub header: Header,
    /// Questions.
    pub questions: Vec<OwnedQuestion>,
    /// Answer records.
    pub answers: Vec<OwnedRecord>,
    /// Authority records.
    pub authority: Vec<OwnedRecord>,
    /// Additional records, without the OPT record.
    pub additional: Vec<OwnedRecord>,
    /// EDNS, written as the last additional record.
    pub edns: Option<OwnedEdns>,
}

impl OwnedMessage {
    /// Parses and copies a whole message.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        Self::from_message(&Message::parse(bytes)?)
    }

    /// Copies a validated message.
    pub fn from_message(msg: &Message<'_>) -> Result<Self> {
        let mut out = Self {
            header: msg.header(),
            questions: msg
                .questions()
                .map(|q| OwnedQuestion {
                    name: q.name.to_name(),
                    qtype: q.qtype,
                    qclass: q.qclass,
                })
                .collect(),
            answers: Vec::with_capacity(usize::from(msg.counts().answers)),
            authority: Vec::with_capacity(usize::from(msg.counts().authority)),
            additional: Vec::with_capacity(usize::from(msg.counts().additional)),
            edns: msg.edns().as_ref().map(OwnedEdns::from_edns),
        };
        for (section, record) in msg.records() {
            if record.rtype() == Type::OPT {
                continue;
            }
            let records = match section {
                Section::Answer => &mut out.answers,
                Section::Authority => &mut out.authority,
                Section::Additional => &mut out.additional,
            };
            // Filled in place: a record holds a 256-byte inline name, not worth moving.
            records.push(OwnedRecord {
                name: Name::root(),
                rtype: record.rtype(),
                class: record.class(),
                ttl: record.ttl(),
                rdata: RdataBytes::new(),
            });
            if let Some(last) = records.last_mut() {
                last.fill_from(&record)?;
            }
        }
        Ok(out)
    }

    /// The response code, with the EDNS extended bits.
    pub fn rcode(&self) -> Rcode {
        let high = self.edns.as_ref().map_or(0, |e| u16::from(e.ext_rcode));
        Rcode(high << 4 | u16::from(self.header.rcode))
    }

    /// Sets the response code; codes above 15 need (and set) the EDNS extended bits.
    pub fn set_rcode(&mut self, rcode: Rcode) -> Result<()> {
        self.header.rcode = (rcode.0 & 0xF) as u8;
        let high = (rcode.0 >> 4) as u8;
        match &mut self.edns {
            Some(edns) => edns.ext_rcode = high,
            None if high != 0 => {
                return Err(Error::new(
                    ErrorKind::BadRdata {
                        what: "extended RCODE needs EDNS",
                    },
                    0,
                ));
            }
            None => {}
        }
        Ok(())
    }

    /// The records of one section.
    pub fn section(&self, section: Section) -> &[OwnedRecord] {
        match section {
            Section::Answer => &self.answers,
            Section::Authority => &self.authority,
            Section::Additional => &self.additional,
        }
    }

    /// Encodes the whole message into `buf` with name compression; fails with
    /// [`ErrorKind::NoSpace`] if it does not fit. Returns the length written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        let limit = buf.len();
        let mut enc = Encoder::new(buf, self.header)?;
        self.write_questions(&mut enc, limit)?;
        for section in Section::ALL {
            for r in self.section(section) {
                enc.record(section, &r.name, r.rtype, r.class, r.ttl, &r.rdata)?;
            }
        }
        self.write_opt(&mut enc)?;
        Ok(enc.finish())
    }

    /// Encodes into `buf` within `budget` bytes, truncating when needed: records are written
    /// in order until one does not fit, which is dropped with everything after it (never a
    /// partial record). TC is set when an answer or authority record was dropped (RFC 2181
    /// §9: dropping additional records alone does not make a response truncated). The OPT
    /// record is always kept (RFC 6891 §7). Fails only if the header, questions and OPT
    /// record alone exceed the budget. Returns the length written.
    pub fn encode_truncated(&self, buf: &mut [u8], budget: usize) -> Result<usize> {
        let opt_len = self.edns.as_ref().map_or(0, |e| 11 + e.options.len());
        let limit = budget.min(buf.len());
        let reserved = limit
            .checked_sub(opt_len)
            .ok_or(Error::new(ErrorKind::NoSpace, 0))?;
        let mut enc = Encoder::new(buf, self.header)?;
        self.write_questions(&mut enc, reserved)?;
        'sections: for section in Section::ALL {
            for r in self.section(section) {
                match enc.record(section, &r.name, r.rtype, r.class, r.ttl, &r.rdata) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::NoSpace => {
                        if section != Section::Additional {
                            enc.header_mut().tc = true;
                        }
                        break 'sections;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        enc.set_limit(limit);
        self.write_opt(&mut enc)?;
        Ok(enc.finish())
    }

    /// Limits `enc` to `limit` bytes and writes the questions.
    fn write_questions(&self, enc: &mut Encoder<'_>, limit: usize) -> Result<()> {
        enc.set_limit(limit);
        if enc.len() > limit {
            return Err(Error::new(ErrorKind::NoSpace, limit));
        }
        for q in &self.questions {
            enc.question(&q.name, q.qtype, q.qclass)?;
        }
        Ok(())
    }

    /// Writes the OPT record, if any, as the last additional record.
    fn write_opt(&self, enc: &mut Encoder<'_>) -> Result<()> {
        if let Some(edns) = &self.edns {
            let ttl = opt_ttl(edns.ext_rcode, edns.version, edns.dnssec_ok, edns.z);
            let class = Class(edns.udp_payload_size);
            enc.record(
                Section::Additional,
                &Name::root(),
                Type::OPT,
                class,
                ttl,
                &edns.options,
            )?;
        }
        Ok(())
    }

    /// Encodes into a new vector (no size limit beyond the 65,535 bytes of a TCP message).
    ///
    /// The buffer starts at 512 bytes and grows fourfold while the message does not fit, so
    /// that a small message does not pay for zeroing 64 KiB.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut buf = alloc::vec![0; 512];
        loop {
            match self.encode(&mut buf) {
                Ok(len) => {
                    buf.truncate(len);
                    return Ok(buf);
                }
                Err(e) if e.kind() == ErrorKind::NoSpace && buf.len() < 65_535 => {
                    let larger = buf.len().saturating_mul(4).min(65_535);
                    buf.resize(larger, 0);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// The UDP size budget for a response to `query`: 512 bytes without EDNS, else the
/// requestor's advertised payload size, at least 512 (RFC 6891 §6.2.3, §6.2.5). Cap it with
/// your own limit (1232 is the DNS Flag Day 2020 value) before use.
pub fn udp_budget(query: &Message<'_>) -> usize {
    query.edns().map_or(UDP_BUDGET_WITHOUT_EDNS, |e| {
        usize::from(e.effective_payload_size())
    })
}
