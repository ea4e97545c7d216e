//! Fuzz targets for the `leader-lease` crate.

use crate::Target;

/// The `leader-lease` targets.
pub const TARGETS: &[Target] = &[];
