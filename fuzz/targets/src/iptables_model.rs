//! Fuzz targets for the `iptables-model` crate.

use crate::Target;

/// The `iptables-model` targets.
pub const TARGETS: &[Target] = &[];
