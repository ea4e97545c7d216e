//! Fuzz targets for the `corefile` crate.

use crate::Target;

/// The `corefile` targets.
pub const TARGETS: &[Target] = &[];
