#![doc = include_str!("../README.md")]

pub mod addresses;
pub mod chains;
pub mod cli;
pub mod config;
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

/// `reportingController` of the events service-proxy records (about Services and
/// EndpointSlices it leaves out as invalid).
pub const REPORTING_CONTROLLER: &str = "kube-node-net/service-proxy";
