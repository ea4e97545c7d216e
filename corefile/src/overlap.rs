//! The duplicate / overlap check of zone addresses and listen addresses (spec section 4.4,
//! CoreDNS `validateZonesAndListeningAddresses`).

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
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

impl Listener {
    fn unbound(&self) -> Listener {
        Listener {
            zone: self.zone.clone(),
            address: String::new(),
        }
    }
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

/// The checker: feed it every listener in block and key order.
#[derive(Clone, Debug, Default)]
pub struct OverlapChecker {
    registered: BTreeMap<Listener, ()>,
    unbound: BTreeMap<Listener, Listener>,
}

impl OverlapChecker {
    /// Checks `listener` and, unless `filtered` (the block uses `view`), registers it.
    pub fn add(&mut self, listener: Listener, filtered: bool) -> Result<(), OverlapError> {
        self.check(&listener)?;
        if !filtered {
            self.unbound.insert(listener.unbound(), listener.clone());
            self.registered.insert(listener, ());
        }
        Ok(())
    }

    fn check(&self, listener: &Listener) -> Result<(), OverlapError> {
        if self.registered.contains_key(listener) {
            return Err(OverlapError::AlreadyDefined(Box::new(listener.clone())));
        }
        let unbound = listener.unbound();
        if let Some(already) = self.unbound.get(&unbound) {
            if listener.address.is_empty() {
                return Err(OverlapError::Overlap {
                    listener: Box::new(listener.clone()),
                    with: Box::new(already.clone()),
                });
            }
            if self.registered.contains_key(&unbound) {
                return Err(OverlapError::Overlap {
                    listener: Box::new(listener.clone()),
                    with: Box::new(unbound),
                });
            }
        }
        Ok(())
    }
}
