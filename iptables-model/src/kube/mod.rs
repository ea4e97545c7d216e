//! kube-proxy's iptables mode: Services and EndpointSlices in, `iptables-restore` input out,
//! full or partial (KEP-3453), in kube-proxy's exact spelling (`../shared/specs/iptables.md`).

mod canonical;
mod endpoints;
mod generate;
mod input;
mod naming;
mod rules;
mod sync;

pub use canonical::canonical_order;
pub use generate::{ChangedFn, Generated, SyncRequest, generate, jump_rules};
pub use input::{
    Endpoint, EndpointPort, EndpointSlice, Protocol, ProxyOptions, Service, ServicePort,
    ServiceType, TrafficPolicy,
};
pub use naming::{ServiceChains, endpoint_chain, join_host_port, service_port_name};
pub use sync::Proxier;
