//! Ingress objects to a real nginx. See the README for usage; the modules split as:
//!
//! - pure (no I/O): [`annotations`], [`hosts`], [`paths`], [`class`], [`endpoints`],
//!   [`model`], [`render`], [`backends`], [`lua`];
//! - I/O: [`manifests`] (objects from YAML files).

pub mod annotations;
pub mod backends;
pub mod class;
pub mod endpoints;
pub mod hosts;
pub mod lua;
pub mod manifests;
pub mod model;
pub mod objects;
pub mod paths;
pub mod render;
