//! Fuzz targets for the `nginx-conf` crate.

use crate::Target;

/// The `nginx-conf` targets.
pub const TARGETS: &[Target] = &[];
