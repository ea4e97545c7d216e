#![doc = include_str!("../README.md")]

pub mod addresses;
pub mod chains;
pub mod cli;
pub mod conntrack;
pub mod feed;
pub mod health;
pub mod metrics;
pub mod nodeports;
pub mod pacing;
pub mod proxy;
pub mod sysctl;
pub mod tally;
pub mod translate;
