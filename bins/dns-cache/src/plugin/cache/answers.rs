//! Whether a NOERROR reply answers its question, as CoreDNS v1.14.7's cache decides it
//! (plugin/cache/cache.go `answersQuestion`, `canonicalName`, `uniqueCNAMETarget`): the
//! queried type must be present at the end of the CNAME chain that starts at the question's
//! name. A reply with answers that fails this test is a NODATA in disguise (a forwarder's
//! unfinished CNAME chase): without an SOA it is not cached, with one it is cached as a
//! denial.

use dns_wire::{Class, Message, NameRef, RData, Rcode, Type};

/// A record's class satisfies the question's (`ANY` takes every class).
fn class_matches(record: Class, question: Class) -> bool {
    question == Class::ANY || record == question
}

/// The canonical name `owner` is aliased to: `Ok(None)` at the end of the chain,
/// `Err(())` when `owner` has two different CNAME targets (RFC 2181 §10.1) or one that
/// does not read.
fn cname_target<'a>(
    msg: &Message<'a>,
    owner: &NameRef<'_>,
    qclass: Class,
) -> Result<Option<NameRef<'a>>, ()> {
    let mut target: Option<NameRef<'a>> = None;
    for record in msg.answers() {
        if record.rtype() != Type::CNAME
            || !class_matches(record.class(), qclass)
            || !record.name().eq_ignore_case(owner)
        {
            continue;
        }
        let Ok(RData::Cname(next)) = record.data() else {
            return Err(());
        };
        match target {
            Some(previous) if !previous.eq_ignore_case(&next) => return Err(()),
            _ => target = Some(next),
        }
    }
    Ok(target)
}

/// Whether `msg`, a NOERROR reply with answers, answers its question.
fn answers_question(msg: &Message<'_>) -> bool {
    let answers = usize::from(msg.counts().answers);
    if msg.rcode() != Rcode::NOERROR || answers == 0 {
        return false;
    }
    let Some(q) = msg.question() else {
        return false;
    };
    if q.qtype == Type::ANY {
        return msg
            .answers()
            .any(|r| class_matches(r.class(), q.qclass) && r.name().eq_ignore_case(&q.name));
    }
    if q.qtype == Type::CNAME {
        return matches!(cname_target(msg, &q.name, q.qclass), Ok(Some(_)));
    }
    // The walk visits one CNAME owner per step; more steps than answers means it came back
    // to an owner already seen: a loop, which has no terminal name.
    let mut name = q.name;
    for _ in 0..=answers {
        match cname_target(msg, &name, q.qclass) {
            Err(()) => return false,
            Ok(Some(next)) => name = next,
            Ok(None) => {
                return msg.answers().any(|r| {
                    r.rtype() == q.qtype
                        && class_matches(r.class(), q.qclass)
                        && r.name().eq_ignore_case(&name)
                });
            }
        }
    }
    false
}

/// CoreDNS `isNODATA`: answers are present but do not answer the question.
pub(super) fn is_nodata(msg: &Message<'_>) -> bool {
    msg.counts().answers > 0 && !answers_question(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dns_wire::{Name, OwnedMessage, OwnedQuestion, OwnedRecord};

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    fn cname(owner: &str, target: &str) -> OwnedRecord {
        OwnedRecord::new(
            name(owner),
            Class::IN,
            60,
            &RData::Cname(name(target).as_ref()),
        )
    }

    fn a(owner: &str) -> OwnedRecord {
        OwnedRecord::new(name(owner), Class::IN, 60, &RData::A([192, 0, 2, 1].into()))
    }

    fn reply(qtype: Type, answers: Vec<OwnedRecord>) -> Vec<u8> {
        let mut m = OwnedMessage::default();
        m.header.qr = true;
        m.questions.push(OwnedQuestion {
            name: name("www.example.org."),
            qtype,
            qclass: Class::IN,
        });
        m.answers = answers;
        m.to_vec().unwrap()
    }

    fn answers(qtype: Type, records: Vec<OwnedRecord>) -> bool {
        answers_question(&Message::parse(&reply(qtype, records)).unwrap())
    }

    /// The cases of CoreDNS v1.14.7 plugin/cache/cache.go `isNODATA`'s comment.
    #[test]
    fn the_queried_type_must_end_the_cname_chain() {
        assert!(answers(Type::A, vec![a("www.example.org.")]));
        assert!(answers(
            Type::A,
            vec![
                cname("www.example.org.", "cdn.example.net."),
                a("CDN.example.net.")
            ]
        ));
        // The chain stops at a name without the type: an incomplete recursion.
        assert!(!answers(
            Type::A,
            vec![cname("www.example.org.", "cdn.example.net.")]
        ));
        // A record at a name off the chain does not count.
        assert!(!answers(
            Type::A,
            vec![
                cname("www.example.org.", "cdn.example.net."),
                a("other.example.net.")
            ]
        ));
        // Two different targets for one owner, and a loop: no terminal name.
        assert!(!answers(
            Type::A,
            vec![
                cname("www.example.org.", "a.example.net."),
                cname("www.example.org.", "b.example.net."),
                a("a.example.net.")
            ]
        ));
        assert!(!answers(
            Type::A,
            vec![
                cname("www.example.org.", "a.example.net."),
                cname("a.example.net.", "www.example.org."),
            ]
        ));
        // CNAME and ANY questions are answered by a record at the question's name.
        assert!(answers(
            Type::CNAME,
            vec![cname("www.example.org.", "a.example.net.")]
        ));
        assert!(answers(Type::ANY, vec![a("www.example.org.")]));
        assert!(!answers(Type::ANY, vec![a("a.example.net.")]));
        // No answers is not NODATA (whoami answers in the additional section).
        assert!(!is_nodata(
            &Message::parse(&reply(Type::A, vec![])).unwrap()
        ));
    }
}
