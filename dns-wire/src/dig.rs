//! Whole messages in the layout `dig` prints.

use core::fmt;

use crate::message::{Message, Section};

/// The layout of `dig`'s output: header, flags and counts, the OPT pseudosection, then each
/// non-empty section with its records in zone-file form.
impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = self.header();
        let c = self.counts();
        writeln!(
            f,
            ";; ->>HEADER<<- opcode: {}, status: {}, id: {}",
            h.opcode,
            self.rcode(),
            h.id
        )?;
        f.write_str(";; flags:")?;
        let flags = [
            (h.qr, "qr"),
            (h.aa, "aa"),
            (h.tc, "tc"),
            (h.rd, "rd"),
            (h.ra, "ra"),
            (h.ad, "ad"),
            (h.cd, "cd"),
        ];
        for (_, name) in flags.iter().filter(|(on, _)| *on) {
            write!(f, " {name}")?;
        }
        writeln!(
            f,
            "; QUERY: {}, ANSWER: {}, AUTHORITY: {}, ADDITIONAL: {}",
            c.questions, c.answers, c.authority, c.additional
        )?;
        if h.z {
            writeln!(f, ";; WARNING: Message has the reserved Z bit set")?;
        }
        f.write_str("\n")?;
        if let Some(edns) = self.edns() {
            f.write_str(";; OPT PSEUDOSECTION:\n")?;
            write!(f, "; EDNS: version: {}, flags:", edns.version)?;
            if edns.dnssec_ok {
                f.write_str(" do")?;
            }
            if edns.z != 0 {
                write!(f, "; MBZ: 0x{:04x}", edns.z)?;
            }
            writeln!(f, "; udp: {}", edns.udp_payload_size)?;
            for option in edns.options.iter() {
                writeln!(f, "; {option}")?;
            }
        }
        if c.questions > 0 {
            f.write_str(";; QUESTION SECTION:\n")?;
            for q in self.questions() {
                writeln!(f, ";{q}")?;
            }
        }
        for section in Section::ALL {
            let mut records = self
                .section(section)
                .filter(|r| r.rtype() != crate::Type::OPT);
            let Some(first) = records.next() else {
                continue;
            };
            let title = match section {
                Section::Answer => "ANSWER",
                Section::Authority => "AUTHORITY",
                Section::Additional => "ADDITIONAL",
            };
            writeln!(f, "\n;; {title} SECTION:\n{first}")?;
            for record in records {
                writeln!(f, "{record}")?;
            }
        }
        Ok(())
    }
}
