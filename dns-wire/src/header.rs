//! The 12-byte message header (RFC 1035 §4.1.1; AD and CD from RFC 4035 §3.2).

use crate::error::{Error, ErrorKind, Result};
use crate::types::{Opcode, Rcode};

/// Length of the header on the wire.
pub const HEADER_LEN: usize = 12;

/// The ID and flag bits of a message header. Section counts live with the sections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Header {
    /// Query identifier, copied from query to response.
    pub id: u16,
    /// QR: this message is a response.
    pub qr: bool,
    /// Kind of query (4 bits).
    pub opcode: Opcode,
    /// AA: authoritative answer.
    pub aa: bool,
    /// TC: truncated.
    pub tc: bool,
    /// RD: recursion desired.
    pub rd: bool,
    /// RA: recursion available.
    pub ra: bool,
    /// Z: the reserved bit, kept as received.
    pub z: bool,
    /// AD: authentic data (RFC 4035 §3.2.3).
    pub ad: bool,
    /// CD: checking disabled (RFC 4035 §3.2.2).
    pub cd: bool,
    /// The low 4 bits of the response code (EDNS adds 8 more).
    pub rcode: u8,
}

/// The four section counts of a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// QDCOUNT: questions.
    pub questions: u16,
    /// ANCOUNT: answer records.
    pub answers: u16,
    /// NSCOUNT: authority records.
    pub authority: u16,
    /// ARCOUNT: additional records (the OPT record included).
    pub additional: u16,
}

const QR: u16 = 0x8000;
const AA: u16 = 0x0400;
const TC: u16 = 0x0200;
const RD: u16 = 0x0100;
const RA: u16 = 0x0080;
const Z: u16 = 0x0040;
const AD: u16 = 0x0020;
const CD: u16 = 0x0010;

impl Header {
    /// The ID and flags from the first 4 bytes of a message.
    pub fn from_id_flags(id: u16, flags: u16) -> Self {
        Self {
            id,
            qr: flags & QR != 0,
            opcode: Opcode(((flags >> 11) & 0xF) as u8),
            aa: flags & AA != 0,
            tc: flags & TC != 0,
            rd: flags & RD != 0,
            ra: flags & RA != 0,
            z: flags & Z != 0,
            ad: flags & AD != 0,
            cd: flags & CD != 0,
            rcode: (flags & 0xF) as u8,
        }
    }

    /// The 16 flag bits as on the wire.
    pub fn flags(&self) -> u16 {
        let bit = |on: bool, mask: u16| if on { mask } else { 0 };
        bit(self.qr, QR)
            | (u16::from(self.opcode.0 & 0xF) << 11)
            | bit(self.aa, AA)
            | bit(self.tc, TC)
            | bit(self.rd, RD)
            | bit(self.ra, RA)
            | bit(self.z, Z)
            | bit(self.ad, AD)
            | bit(self.cd, CD)
            | u16::from(self.rcode & 0xF)
    }

    /// The header rcode alone, as an [`Rcode`] (without EDNS's upper bits).
    pub fn rcode(&self) -> Rcode {
        Rcode(u16::from(self.rcode & 0xF))
    }

    /// Reads the header and counts from the first 12 bytes of `msg`.
    pub fn parse(msg: &[u8]) -> Result<(Self, Counts)> {
        let Some(h) = msg.first_chunk::<HEADER_LEN>() else {
            return Err(Error::new(
                ErrorKind::UnexpectedEnd { what: "header" },
                msg.len(),
            ));
        };
        let &[i0, i1, f0, f1, q0, q1, a0, a1, n0, n1, r0, r1] = h;
        let header =
            Self::from_id_flags(u16::from_be_bytes([i0, i1]), u16::from_be_bytes([f0, f1]));
        let counts = Counts {
            questions: u16::from_be_bytes([q0, q1]),
            answers: u16::from_be_bytes([a0, a1]),
            authority: u16::from_be_bytes([n0, n1]),
            additional: u16::from_be_bytes([r0, r1]),
        };
        Ok((header, counts))
    }

    /// The header and counts as 12 wire bytes.
    pub fn to_bytes(&self, counts: Counts) -> [u8; HEADER_LEN] {
        let mut out = [0; HEADER_LEN];
        let words = [
            self.id,
            self.flags(),
            counts.questions,
            counts.answers,
            counts.authority,
            counts.additional,
        ];
        for (chunk, word) in out.chunks_exact_mut(2).zip(words) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1035_s4_1_1_flags_round_trip_every_bit() {
        for flags in [0u16, 0xFFFF, 0x8180, 0x0100, 0x7800, 0x0040] {
            assert_eq!(Header::from_id_flags(7, flags).flags(), flags);
        }
    }

    #[test]
    fn rfc1035_s4_1_1_header_shorter_than_12_bytes_is_malformed() {
        let err = Header::parse(&[0; 11]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEnd { what: "header" });
    }

    #[test]
    fn rfc4035_s3_2_ad_and_cd_bits() {
        let h = Header::from_id_flags(0, 0x0030);
        assert!(h.ad && h.cd && !h.z);
    }
}
