//! The zero-copy message view (RFC 1035 §4.1): one validating pass, then lazy iterators.
//!
//! [`Message::parse`] checks the header, every name (with its compression pointers), every
//! length and the OPT rules once, and remembers where each section starts. The iterators then
//! re-read the validated bytes without allocating and cannot fail; typed RDATA is decoded on
//! demand with [`Record::data`]. The pass also checks, without failing, the names inside RDATA
//! that may be compressed (RFC 3597 §4), through the same cache of validated pointer targets
//! as the owner names; when they all hold, typed RDATA and the owned copy skip them instead of
//! validating them again.

use core::fmt;

use crate::edns::Edns;
use crate::error::{Error, ErrorKind, Result};
use crate::header::{Counts, HEADER_LEN, Header};
use crate::name::{self, NameRef, Targets};
use crate::rdata::RData;
use crate::rdata::layout::{self, Part};
use crate::text::write_generic;
use crate::types::{Class, Rcode, Type};

/// The three record sections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// Answer section.
    Answer,
    /// Authority section.
    Authority,
    /// Additional section.
    Additional,
}

impl Section {
    /// All three, in wire order.
    pub const ALL: [Self; 3] = [Self::Answer, Self::Authority, Self::Additional];

    /// This section's record count in `counts`.
    pub(crate) fn count_in(self, counts: &Counts) -> u16 {
        match self {
            Self::Answer => counts.answers,
            Self::Authority => counts.authority,
            Self::Additional => counts.additional,
        }
    }
}

/// The longest message: TCP's 16-bit length prefix (RFC 1035 §4.2.2).
pub const MAX_MESSAGE_LEN: usize = 65_535;

/// Offsets of one resource record, found by a validating read. Offsets are `u32` to keep
/// records small (messages are at most [`MAX_MESSAGE_LEN`] bytes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordAt {
    /// Where the owner name starts.
    pub(crate) name: u32,
    /// TYPE.
    pub(crate) rtype: Type,
    /// CLASS.
    pub(crate) class: u16,
    /// TTL.
    pub(crate) ttl: u32,
    /// Where the RDATA starts (the TTL is 6 bytes before it).
    pub(crate) rdata: u32,
    /// Where the record ends.
    pub(crate) end: u32,
    /// Whether the names of the RDATA that may be compressed were validated already
    /// ([`layout::names_valid`]).
    pub(crate) names_checked: bool,
}

impl RecordAt {
    /// The record whose owner name starts at `name` and whose fixed fields `fixed` start at
    /// `at`.
    fn new(name: usize, at: usize, fixed: [u8; 10], names_checked: bool) -> Self {
        let [t0, t1, c0, c1, l0, l1, l2, l3, r0, r1] = fixed;
        let rdata = at + 10;
        Self {
            name: name as u32,
            rtype: Type(u16::from_be_bytes([t0, t1])),
            class: u16::from_be_bytes([c0, c1]),
            ttl: u32::from_be_bytes([l0, l1, l2, l3]),
            rdata: rdata as u32,
            end: (rdata + usize::from(u16::from_be_bytes([r0, r1]))) as u32,
            names_checked,
        }
    }

    fn end(&self) -> usize {
        self.end as usize
    }

    fn rdata(&self) -> usize {
        self.rdata as usize
    }
}

/// Reads the fixed part after a name that ends at `at`: `N` bytes.
fn fixed<const N: usize>(msg: &[u8], at: usize, what: &'static str) -> Result<[u8; N]> {
    msg.get(at..)
        .and_then(|rest| rest.first_chunk::<N>())
        .copied()
        .ok_or(Error::new(ErrorKind::UnexpectedEnd { what }, at))
}

/// Validates the question at `pos`; returns its QTYPE, QCLASS and end.
pub(crate) fn read_question(
    msg: &[u8],
    pos: usize,
    targets: &mut Targets,
) -> Result<(Type, Class, usize)> {
    let end = name::scan_owner(msg, pos, targets)?;
    let [t0, t1, c0, c1] = fixed(msg, end, "question")?;
    Ok((
        Type(u16::from_be_bytes([t0, t1])),
        Class(u16::from_be_bytes([c0, c1])),
        end + 4,
    ))
}

/// Validates the record at `pos`: owner name, fixed fields and that RDATA fits; also checks
/// (without failing) the names in its RDATA, so that reading them later can skip them.
pub(crate) fn read_record(msg: &[u8], pos: usize, targets: &mut Targets) -> Result<RecordAt> {
    let at = name::scan_owner(msg, pos, targets)?;
    let mut rec = RecordAt::new(pos, at, fixed(msg, at, "record header")?, false);
    if rec.end() > msg.len() {
        return Err(Error::new(
            ErrorKind::UnexpectedEnd { what: "RDATA" },
            rec.rdata(),
        ));
    }
    rec.names_checked = layout::names_valid(rec.rtype, msg, rec.rdata(), rec.end(), targets);
    Ok(rec)
}

/// Checks the length and header of a message and validates its questions (their names go
/// into `targets`); returns the header, the counts and where the answer section starts.
fn read_head(msg: &[u8], targets: &mut Targets) -> Result<(Header, Counts, usize)> {
    if msg.len() > MAX_MESSAGE_LEN {
        return Err(Error::new(ErrorKind::MessageTooLong, MAX_MESSAGE_LEN));
    }
    let (header, counts) = Header::parse(msg)?;
    let mut pos = HEADER_LEN;
    for _ in 0..counts.questions {
        pos = read_question(msg, pos, targets)?.2;
    }
    Ok((header, counts, pos))
}

/// RFC 6891 §6.1.1: one OPT record (the one at `pos`, `rec`), in the additional section,
/// owned by the root, with options that fit its RDATA; `opt` remembers where the first was.
fn check_opt(
    msg: &[u8],
    section: Section,
    pos: usize,
    rec: &RecordAt,
    opt: &mut Option<usize>,
) -> Result<()> {
    if section != Section::Additional || msg.get(pos) != Some(&0) {
        return Err(Error::new(ErrorKind::MisplacedOpt, pos));
    }
    if opt.is_some() {
        return Err(Error::new(ErrorKind::DuplicateOpt, pos));
    }
    let rdata = msg.get(rec.rdata()..rec.end()).unwrap_or_default();
    crate::edns::Options::new(rdata).map_err(|e| Error::new(e.kind(), rec.rdata() + e.offset()))?;
    *opt = Some(pos);
    Ok(())
}

/// A validated DNS message borrowed from its wire bytes.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    bytes: &'a [u8],
    header: Header,
    counts: Counts,
    /// Where the question, answer, authority and additional sections start.
    starts: [usize; 4],
    /// Where the OPT record starts, if there is one.
    opt: Option<usize>,
    /// Whether the names that may be compressed in every RDATA were valid when parsed.
    names_checked: bool,
}

impl<'a> Message<'a> {
    /// Validates `bytes` as one whole message (no TCP length prefix).
    ///
    /// Rejects: more than 65,535 bytes; a header under 12 bytes; names with bad pointers, reserved label types, over
    /// 255 octets or running past the end; counts that promise more than the bytes hold;
    /// RDATA past the end; bytes after the last counted record; more than one OPT record, or
    /// an OPT record outside the additional section or not owned by the root (RFC 6891
    /// §6.1.1); OPT options that overrun their RDATA.
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        // The same checks in the same order as `Walk`, in one loop without its per-record
        // bookkeeping.
        let mut targets = Targets::default();
        let (header, counts, mut pos) = read_head(bytes, &mut targets)?;
        let mut starts = [HEADER_LEN, pos, pos, pos];
        let mut opt = None;
        let mut names_checked = true;
        for (section, start) in Section::ALL.into_iter().zip(starts.iter_mut().skip(1)) {
            *start = pos;
            for _ in 0..section.count_in(&counts) {
                let rec = read_record(bytes, pos, &mut targets)?;
                if rec.rtype == Type::OPT {
                    check_opt(bytes, section, pos, &rec, &mut opt)?;
                }
                names_checked &= rec.names_checked;
                pos = rec.end();
            }
        }
        if pos != bytes.len() {
            return Err(Error::new(ErrorKind::TrailingBytes, pos));
        }
        Ok(Self {
            bytes,
            header,
            counts,
            starts,
            opt,
            names_checked,
        })
    }

    /// Validates `bytes` in a single lazy pass: the header and questions now, then each
    /// record as the returned [`Walk`] reaches it. Checks exactly what [`Message::parse`]
    /// checks; the walk yields the first error it meets and then stops for good.
    pub fn walk(bytes: &'a [u8]) -> Result<Walk<'a>> {
        Walk::new(bytes)
    }

    /// The wire bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// ID and flags.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The four section counts as received (the additional count includes OPT).
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Where the answer section starts (the first record).
    pub(crate) fn records_start(&self) -> usize {
        self.starts[1]
    }

    /// The questions.
    pub fn questions(&self) -> Questions<'a> {
        Questions {
            msg: self.bytes,
            pos: self.starts[0],
            left: self.counts.questions,
        }
    }

    /// The first question, if any (almost every message has exactly one).
    pub fn question(&self) -> Option<Question<'a>> {
        self.questions().next()
    }

    /// The records of one section (the additional section includes the OPT record).
    pub fn section(&self, section: Section) -> Records<'a> {
        let (pos, left) = match section {
            Section::Answer => (self.starts[1], self.counts.answers),
            Section::Authority => (self.starts[2], self.counts.authority),
            Section::Additional => (self.starts[3], self.counts.additional),
        };
        Records {
            msg: self.bytes,
            pos,
            left,
            names_checked: self.names_checked,
        }
    }

    /// The answer records.
    pub fn answers(&self) -> Records<'a> {
        self.section(Section::Answer)
    }

    /// The authority records.
    pub fn authority(&self) -> Records<'a> {
        self.section(Section::Authority)
    }

    /// The additional records, OPT included.
    pub fn additional(&self) -> Records<'a> {
        self.section(Section::Additional)
    }

    /// Every record of the three sections, in wire order, with its section.
    pub fn records(&self) -> impl Iterator<Item = (Section, Record<'a>)> + 'a {
        // The sections follow each other: one run over all records, sectioned by index.
        let answers = u32::from(self.counts.answers);
        let authority = answers + u32::from(self.counts.authority);
        AllRecords {
            msg: self.bytes,
            pos: self.starts[1],
            index: 0,
            authority,
            answers,
            total: authority + u32::from(self.counts.additional),
            names_checked: self.names_checked,
        }
    }

    /// The OPT record, if any.
    pub fn opt(&self) -> Option<Record<'a>> {
        let at = self.opt?;
        Records {
            msg: self.bytes,
            pos: at,
            left: 1,
            names_checked: self.names_checked,
        }
        .next()
    }

    /// The EDNS fields of the OPT record, if any.
    pub fn edns(&self) -> Option<Edns<'a>> {
        let opt = self.opt()?;
        Edns::from_parts(opt.class().0, opt.ttl(), opt.rdata()).ok()
    }

    /// The response code, with the EDNS extended bits when there is an OPT record.
    pub fn rcode(&self) -> Rcode {
        let high = self.edns().map_or(0, |e| u16::from(e.ext_rcode));
        Rcode(high << 4 | u16::from(self.header.rcode))
    }
}

/// A question (RFC 1035 §4.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Question<'a> {
    /// QNAME.
    pub name: NameRef<'a>,
    /// QTYPE.
    pub qtype: Type,
    /// QCLASS.
    pub qclass: Class,
}

impl fmt::Display for Question<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\t\t{}\t{}", self.name, self.qclass, self.qtype)
    }
}

/// Iterator over the questions of a validated message.
#[derive(Clone, Debug)]
pub struct Questions<'a> {
    msg: &'a [u8],
    pos: usize,
    left: u16,
}

impl<'a> Iterator for Questions<'a> {
    type Item = Question<'a>;

    #[inline]
    fn next(&mut self) -> Option<Question<'a>> {
        self.left = self.left.checked_sub(1)?;
        let start = self.pos;
        let at = name::skip(self.msg, start);
        let [t0, t1, c0, c1] = fixed(self.msg, at, "question").ok()?;
        self.pos = at + 4;
        Some(Question {
            name: NameRef::validated(self.msg, start),
            qtype: Type(u16::from_be_bytes([t0, t1])),
            qclass: Class(u16::from_be_bytes([c0, c1])),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::from(self.left), Some(usize::from(self.left)))
    }
}

/// A resource record in a validated message (RFC 1035 §4.1.3).
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    msg: &'a [u8],
    at: RecordAt,
}

impl<'a> Record<'a> {
    /// The owner name.
    pub fn name(&self) -> NameRef<'a> {
        NameRef::validated(self.msg, self.at.name as usize)
    }

    /// TYPE.
    pub fn rtype(&self) -> Type {
        self.at.rtype
    }

    /// CLASS (for OPT: the UDP payload size).
    pub fn class(&self) -> Class {
        Class(self.at.class)
    }

    /// TTL (for OPT: extended RCODE, version and flags).
    pub fn ttl(&self) -> u32 {
        self.at.ttl
    }

    /// Offset of the TTL field in the message (for in-place rewrites).
    pub fn ttl_offset(&self) -> usize {
        self.at.rdata() - 6
    }

    /// The RDATA bytes as on the wire (names may be compressed).
    pub fn rdata(&self) -> &'a [u8] {
        self.msg
            .get(self.at.rdata()..self.at.end())
            .unwrap_or_default()
    }

    /// Offset of the RDATA in the message.
    pub fn rdata_offset(&self) -> usize {
        self.at.rdata()
    }

    /// The RDATA, typed (decoded now; RFC 3597 opaque bytes for unknown types).
    #[inline]
    pub fn data(&self) -> Result<RData<'a>> {
        RData::parse_checked(
            self.at.rtype,
            self.msg,
            self.at.rdata(),
            self.at.end(),
            self.at.names_checked,
        )
    }

    /// The whole message this record lives in (compression pointers address it).
    pub fn msg(&self) -> &'a [u8] {
        self.msg
    }

    /// Offset right after the RDATA (the end of the record).
    pub fn rdata_end(&self) -> usize {
        self.at.end()
    }

    /// Whether the names of the RDATA that may be compressed were validated already.
    pub(crate) fn names_checked(&self) -> bool {
        self.at.names_checked
    }
}

impl Record<'_> {
    /// `\# LEN HEX` of the RDATA with its names decompressed (RFC 3597 §5 describes the
    /// uncompressed RDATA), for untyped types whose names may be compressed (MB, MINFO, RP...).
    fn fmt_generic(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(fields) = layout::name_layout(self.rtype()) else {
            return write_generic(f, self.rdata());
        };
        let walk = |visit: &mut dyn FnMut(&[u8]) -> fmt::Result| {
            layout::walk(
                fields,
                self.msg,
                self.rdata_offset(),
                self.rdata_end(),
                self.at.names_checked,
                |part| {
                    let ok = match part {
                        Part::Bytes(b) => visit(b),
                        Part::Name(n) => n
                            .labels()
                            .try_for_each(|l| visit(&[l.len() as u8]).and_then(|()| visit(l)))
                            .and_then(|()| visit(&[0])),
                    };
                    ok.map_err(|_| Error::new(ErrorKind::NoSpace, 0))
                },
            )
        };
        let mut len = 0usize;
        if walk(&mut |b| {
            len += b.len();
            Ok(())
        })
        .is_err()
        {
            return write_generic(f, self.rdata());
        }
        write!(f, "\\# {len} ")?;
        walk(&mut |b| crate::text::write_hex(f, b)).map_err(|_| fmt::Error)
    }
}

/// Zone-file form (RFC 1035 §5.1) in dig's tab-separated layout; RDATA that cannot be typed
/// is shown in the generic `\#` form.
impl fmt::Display for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\t{}\t{}\t{}\t",
            self.name(),
            self.ttl(),
            self.class(),
            self.rtype()
        )?;
        match self.data() {
            Ok(RData::Unknown(rtype, _)) if layout::decompresses(rtype) => self.fmt_generic(f),
            Ok(data) => data.fmt(f),
            Err(_) => write_generic(f, self.rdata()),
        }
    }
}

/// A single validating pass over the records of a message, from [`Message::walk`]: yields
/// each record with its section, or the first error (then nothing more). Trailing bytes
/// after the last counted record are reported as an error at the end.
#[derive(Clone, Debug)]
pub struct Walk<'a> {
    msg: &'a [u8],
    header: Header,
    counts: Counts,
    pos: usize,
    /// Index of the current record section (0 answer, 1 authority, 2 additional, 3 done).
    section: usize,
    left: u16,
    starts: [usize; 4],
    opt: Option<usize>,
    targets: Targets,
    stopped: bool,
}

impl<'a> Walk<'a> {
    fn new(msg: &'a [u8]) -> Result<Self> {
        let mut targets = Targets::default();
        let (header, counts, pos) = read_head(msg, &mut targets)?;
        Ok(Self {
            msg,
            header,
            counts,
            pos,
            section: 0,
            left: counts.answers,
            starts: [HEADER_LEN, pos, pos, pos],
            opt: None,
            targets,
            stopped: false,
        })
    }

    /// ID and flags.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The section counts as received.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The questions (validated when the walk began).
    pub fn questions(&self) -> Questions<'a> {
        Questions {
            msg: self.msg,
            pos: HEADER_LEN,
            left: self.counts.questions,
        }
    }

    /// The next record, `None` at the end, or the error that ends the walk.
    fn advance(&mut self) -> Result<Option<(Section, Record<'a>)>> {
        while self.left == 0 {
            self.section += 1;
            let Some(&section) = Section::ALL.get(self.section) else {
                if self.pos != self.msg.len() {
                    return Err(Error::new(ErrorKind::TrailingBytes, self.pos));
                }
                return Ok(None);
            };
            if let Some(start) = self.starts.get_mut(self.section + 1) {
                *start = self.pos;
            }
            self.left = section.count_in(&self.counts);
        }
        let section = Section::ALL
            .get(self.section)
            .copied()
            .unwrap_or(Section::Additional);
        let pos = self.pos;
        let rec = read_record(self.msg, pos, &mut self.targets)?;
        if rec.rtype == Type::OPT {
            check_opt(self.msg, section, pos, &rec, &mut self.opt)?;
        }
        self.pos = rec.end();
        self.left -= 1;
        Ok(Some((
            section,
            Record {
                msg: self.msg,
                at: rec,
            },
        )))
    }
}

impl<'a> Iterator for Walk<'a> {
    type Item = Result<(Section, Record<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped {
            return None;
        }
        let item = self.advance().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.stopped = true;
        }
        item
    }
}

/// Iterator over the records of one section of a validated message.
#[derive(Clone, Debug)]
pub struct Records<'a> {
    msg: &'a [u8],
    pos: usize,
    left: u16,
    /// See [`Message`].
    names_checked: bool,
}

/// The validated record at `*pos` in `msg`; moves `*pos` past it.
#[inline]
fn next_record<'a>(msg: &'a [u8], pos: &mut usize, names_checked: bool) -> Option<Record<'a>> {
    let start = *pos;
    let at = name::skip(msg, start);
    let fixed = msg.get(at..).and_then(|rest| rest.first_chunk::<10>())?;
    let rec = RecordAt::new(start, at, *fixed, names_checked);
    *pos = rec.end();
    Some(Record { msg, at: rec })
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;

    #[inline]
    fn next(&mut self) -> Option<Record<'a>> {
        self.left = self.left.checked_sub(1)?;
        next_record(self.msg, &mut self.pos, self.names_checked)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::from(self.left), Some(usize::from(self.left)))
    }
}

/// Iterator over the records of all three sections of a validated message, in wire order.
#[derive(Clone, Debug)]
struct AllRecords<'a> {
    msg: &'a [u8],
    pos: usize,
    /// How many records were yielded.
    index: u32,
    /// The record counts of the answer section, then of answer and authority, then of all.
    answers: u32,
    authority: u32,
    total: u32,
    /// See [`Message`].
    names_checked: bool,
}

impl<'a> Iterator for AllRecords<'a> {
    type Item = (Section, Record<'a>);

    #[inline]
    fn next(&mut self) -> Option<(Section, Record<'a>)> {
        let section = match self.index {
            i if i < self.answers => Section::Answer,
            i if i < self.authority => Section::Authority,
            i if i < self.total => Section::Additional,
            _ => return None,
        };
        self.index += 1;
        Some((
            section,
            next_record(self.msg, &mut self.pos, self.names_checked)?,
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.total - self.index) as usize;
        (left, Some(left))
    }
}
