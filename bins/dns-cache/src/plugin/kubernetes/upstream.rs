//! The targets of ExternalName Services outside the plugin's zones, resolved through the
//! server itself, as CoreDNS's kubernetes plugin does with its `Upstream`
//! (`plugin/backend_lookup.go`: `b.Lookup` of the CNAME's target, whose answers follow the
//! CNAME). A reply is built twice: the first time the targets are collected and the plugin
//! asks the server for them ([`Serve::Lookup`](crate::plugin::Serve::Lookup)); the second
//! time, with their replies, the records go after each CNAME.

use dns_wire::{Name, OwnedMessage, OwnedRecord, Type};

use crate::plugin::SubQuery;

/// How a reply's out-of-zone targets are treated.
#[derive(Clone, Copy, Debug)]
pub(super) enum Targets<'a> {
    /// Not looked up (CoreDNS's fake A lookup, which only decides NXDOMAIN or NODATA).
    Ignored,
    /// To be collected: the CNAMEs go in alone.
    Collected,
    /// Looked up: their replies, in the order the targets were met.
    Answered(&'a [Option<Vec<u8>>]),
}

/// The out-of-zone targets of one reply.
#[derive(Debug)]
pub(super) struct Upstream<'a> {
    targets: Targets<'a>,
    /// The targets met, in order.
    asked: Vec<SubQuery>,
    /// A target's reply was truncated (the reply is too: CoreDNS's `m1.Truncated`).
    pub truncated: bool,
}

impl<'a> Upstream<'a> {
    /// Targets treated as `targets` says.
    pub(super) fn new(targets: Targets<'a>) -> Self {
        Self {
            targets,
            asked: Vec::new(),
            truncated: false,
        }
    }

    /// The records that follow the CNAME to `target` (of a query of `qtype`), or `None`
    /// when the CNAME is left out: CoreDNS drops it when its lookup gives no message.
    pub(super) fn follow(&mut self, target: &Name, qtype: Type) -> Option<Vec<OwnedRecord>> {
        let replies = match self.targets {
            Targets::Ignored => return Some(Vec::new()),
            Targets::Collected => {
                self.asked.push(SubQuery {
                    name: *target,
                    qtype,
                });
                return Some(Vec::new());
            }
            Targets::Answered(replies) => replies,
        };
        let position = self.asked.len();
        self.asked.push(SubQuery {
            name: *target,
            qtype,
        });
        let reply = OwnedMessage::parse(replies.get(position)?.as_deref()?).ok()?;
        // The objects may have changed between the two builds: a reply for another
        // question is no reply for this target (names compare without case).
        let asked = reply.questions.first()?;
        if asked.name != *target || asked.qtype != qtype {
            return None;
        }
        self.truncated |= reply.header.tc;
        Some(reply.answers)
    }

    /// The lookups to ask for, if the reply was built to collect them and met any.
    pub(super) fn lookups(self) -> Option<Vec<SubQuery>> {
        match self.targets {
            Targets::Collected if !self.asked.is_empty() => Some(self.asked),
            _ => None,
        }
    }
}
