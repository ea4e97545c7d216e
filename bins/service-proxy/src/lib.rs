#![doc = include_str!("../README.md")]

pub mod cli;
pub mod health;
pub mod iptables;
pub mod manifests;
pub mod metrics;
pub mod pacing;
pub mod proxy;
pub mod translate;
