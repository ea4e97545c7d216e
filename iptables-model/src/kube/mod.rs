//! kube-proxy's iptables mode: Services and EndpointSlices in, `iptables-restore` input out,
//! full or partial (KEP-3453), in kube-proxy's exact spelling (`docs/iptables.md`).

mod canonical;
mod endpoints;
mod fixed;
mod generate;
mod input;
mod local;
mod naming;
mod port;
mod resolve;
mod rules;
mod sync;
mod topology;

pub use canonical::canonical_order;
pub use fixed::{TOP_LEVEL_CHAINS, jump_rules, jump_rules_text};
pub use generate::{ChangedFn, Generated, Rejected, SyncRequest, generate};
pub use input::{
    Endpoint, EndpointPort, EndpointSlice, Protocol, ProxyOptions, Service, ServicePort,
    ServiceType, TrafficPolicy,
};
pub use local::{InterfaceName, InterfaceNameError, LocalDetector, MAX_INTERFACE_NAME};
pub use naming::{
    ServiceChains, endpoint_chain, is_service_chain, join_host_port, service_port_name,
};
pub use resolve::{EndpointAddr, ResolvedPort, resolve_ports};
pub use sync::{PartialSync, Proxier};
