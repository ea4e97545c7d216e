//! Fuzz targets for the `dns-wire` crate.

use crate::Target;

/// The `dns-wire` targets.
pub const TARGETS: &[Target] = &[];
