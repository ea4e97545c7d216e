//! The duplicate / overlap check of zone addresses and listen addresses (spec section 4.4,
//! CoreDNS `validateZonesAndListeningAddresses`).

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use core::fmt;

use crate::zone::ZoneAddr;

/// A zone address bound to a listen address (`""` means every address).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Listener {
    /// The zone address.
    pub zone: ZoneAddr,
    /// The listen address from `bind`, or `""` when unbound.
    pub address: String,
}

impl fmt::Display for Listener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.zone)?;
        if !self.address.is_empty() {
            write!(f, " on {}", self.address)?;
        }
        Ok(())
    }
}

/// Two configurations claim the same zone address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OverlapError {
    /// The same zone, port, transport and address twice.
    AlreadyDefined(Box<Listener>),
    /// The same zone, port and transport, one bound to an address and one unbound.
    Overlap {
        /// The listener being added.
        listener: Box<Listener>,
        /// The one it collides with.
        with: Box<Listener>,
    },
}

impl fmt::Display for OverlapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyDefined(l) => write!(f, "cannot serve {l} - it is already defined"),
            Self::Overlap { listener, with } => write!(
                f,
                "cannot serve {listener} - zone overlap listener capacity with {with}"
            ),
        }
    }
}

impl core::error::Error for OverlapError {}

/// The checker, on interned ids: feed it every (zone address, listen address) pair in block
/// and key order. Host id [`UNBOUND`] means "no `bind`". Ids keep the check cheap when many
/// zones meet many listen addresses.
#[derive(Clone, Debug, Default)]
pub struct OverlapChecker {
    registered: BTreeSet<(usize, usize)>,
    /// Per zone address, the host of the listener registered last (CoreDNS's
    /// `unboundOverlap` map, overwritten on every registration).
    last: BTreeMap<usize, usize>,
}

/// The host id of an unbound listener.
pub const UNBOUND: usize = 0;

/// Why a listener was refused, with the host id of the one it collides with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The same zone address and host were registered before.
    AlreadyDefined,
    /// The same zone address is registered bound and unbound; the other listener's host.
    Overlap(usize),
}

impl OverlapChecker {
    /// Checks the listener `(zone, host)` and, unless `filtered` (the block uses `view`),
    /// registers it.
    pub fn add(&mut self, zone: usize, host: usize, filtered: bool) -> Result<(), Conflict> {
        if self.registered.contains(&(zone, host)) {
            return Err(Conflict::AlreadyDefined);
        }
        if let Some(&already) = self.last.get(&zone) {
            if host == UNBOUND {
                return Err(Conflict::Overlap(already));
            }
            if self.registered.contains(&(zone, UNBOUND)) {
                return Err(Conflict::Overlap(UNBOUND));
            }
        }
        if !filtered {
            self.registered.insert((zone, host));
            self.last.insert(zone, host);
        }
        Ok(())
    }
}
