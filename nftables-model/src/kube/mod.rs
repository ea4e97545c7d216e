//! kube-proxy's nftables mode (`pkg/proxy/nftables/proxier.go`, Kubernetes 1.35): Services
//! and EndpointSlices in (the inputs of [`iptables_model::kube`], so one input feeds both
//! modes), one `nft -f` transaction out, full or incremental.

mod chains;
mod local;
pub mod names;
mod options;
mod proxier;
mod service;
mod setup;
mod store;

pub use options::NftOptions;
pub use proxier::{Proxier, Rejected, Synced};
