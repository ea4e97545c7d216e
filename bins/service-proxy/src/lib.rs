#![doc = include_str!("../README.md")]

pub mod addresses;
pub mod chains;
pub mod cli;
pub mod config;
pub mod conntrack;
pub mod feed;
pub mod health;
pub mod leftovers;
pub mod metrics;
pub mod nft_elements;
pub mod nftables;
pub mod node;
pub mod nodeports;
pub mod pacing;
pub mod process;
pub mod proxy;
pub mod sysctl;
pub mod tally;
pub mod translate;

/// `reportingController` of the events service-proxy records (about Services and
/// EndpointSlices it leaves out as invalid).
pub const REPORTING_CONTROLLER: &str = "kube-node-net/service-proxy";

/// The kinds service-proxy reads: Services, EndpointSlices, and its own Node (narrowed to one
/// name with `cluster_state::Filter::only_node`) for its zone and `/healthz`'s `nodeEligible`.
pub const KINDS: &[cluster_state::Kind] = &[
    cluster_state::Kind::Service,
    cluster_state::Kind::EndpointSlice,
    cluster_state::Kind::Node,
];
