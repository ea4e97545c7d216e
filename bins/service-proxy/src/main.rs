//! kube-proxy's iptables mode: Services and EndpointSlices to kernel rules, built on iptables-model.

fn main() {}
