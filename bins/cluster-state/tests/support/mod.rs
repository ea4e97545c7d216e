//! Shared test helpers.
#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod fake_api;
