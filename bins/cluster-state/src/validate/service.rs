//! Services, as the API server's ValidateService (`pkg/apis/core/validation`).
//!
//! An object from a manifest file has not been through the API server's defaulting, so every
//! field the API server defaults may be absent and is then read as its default: `type`
//! (ClusterIP), `sessionAffinity` (None) and its timeout, a port's `protocol` (TCP) and
//! `targetPort` (the port), the traffic policies, `allocateLoadBalancerNodePorts`, and
//! `clusterIP`/`clusterIPs` (either one fills the other). Fields the API server allocates
//! (`healthCheckNodePort`, node ports, cluster IPs) may be absent too.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::field::{Errors, index, key};
use super::ip::{parse_cidr, parse_ip, special_range};
use super::meta::{NameRule, labels, object_meta};
use super::names;

/// The protocols of Service and EndpointSlice ports, as the API server lists them.
pub(super) const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const SESSION_AFFINITIES: &[&str] = &["ClientIP", "None"];
const IP_FAMILIES: &[&str] = &["IPv4", "IPv6"];
const IP_FAMILY_POLICIES: &[&str] = &["PreferDualStack", "RequireDualStack", "SingleStack"];
const TRAFFIC_POLICIES: &[&str] = &["Cluster", "Local"];
/// The longest ClientIP session affinity, in seconds (a day).
const MAX_AFFINITY_SECONDS: i32 = 86_400;
/// The kubelet's port, which a LoadBalancer may not expose.
const KUBELET_PORT: i32 = 10_250;
/// The annotation that predates `spec.loadBalancerSourceRanges`.
const SOURCE_RANGES_ANNOTATION: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";

/// As the API server's ValidateService (`pkg/apis/core/validation`), on a Service that may
/// lack the fields the API server defaults.
pub(super) fn validate(service: &Service, errors: &mut Errors) {
    object_meta(&service.metadata, true, NameRule::Dns1035Label, errors);
    let default_spec = ServiceSpec::default();
    let spec = service.spec.as_ref().unwrap_or(&default_spec);
    let kind = or_default(spec.type_.as_deref(), "ClusterIP");
    let cluster_ips = cluster_ips(spec);
    let headless = cluster_ips.len() == 1 && cluster_ips.first() == Some(&"None");
    let ports = spec.ports.as_deref().unwrap_or_default();

    if ports.is_empty() && !headless && kind != "ExternalName" {
        errors.required("spec.ports", "");
    }
    match kind {
        "LoadBalancer" | "NodePort" if headless => {
            let why = format!("may not be set to 'None' for {kind} services");
            errors.invalid("spec.clusterIPs[0]", "None", &why);
        }
        _ => {}
    }
    if kind == "LoadBalancer" {
        for (position, port) in ports.iter().enumerate() {
            if port.port == KUBELET_PORT {
                let why = "may not expose port 10250 externally since it is used by kubelet";
                let field = index("spec.ports", position);
                errors.invalid_number(&field, KUBELET_PORT.into(), why);
            }
        }
    }
    if kind == "ExternalName" {
        external_name(spec, &cluster_ips, errors);
    }

    let mut names = BTreeSet::new();
    for (position, port) in ports.iter().enumerate() {
        let field = index("spec.ports", position);
        service_port(port, ports.len() > 1, &mut names, &field, errors);
    }
    if let Some(selector) = &spec.selector {
        labels(selector, "spec.selector", errors);
    }
    session_affinity(spec, errors);
    if kind != "ExternalName" {
        cluster_ips_related(spec, &cluster_ips, headless, errors);
    }
    for (position, ip) in spec.external_ips.iter().flatten().enumerate() {
        let field = index("spec.externalIPs", position);
        match parse_ip(ip) {
            Err(why) => errors.invalid(&field, ip, why),
            Ok(parsed) => {
                if let Some(why) = special_range(parsed) {
                    errors.invalid(&field, ip, why);
                }
            }
        }
    }
    if !TYPES.contains(&kind) {
        errors.unsupported("spec.type", kind, TYPES);
    }
    node_ports(kind, ports, errors);
    duplicate_ports(ports, errors);
    source_ranges(service, spec, kind, errors);
    if spec.allocate_load_balancer_node_ports.is_some() && kind != "LoadBalancer" {
        let why = "may only be used when `type` is 'LoadBalancer'";
        errors.forbidden("spec.allocateLoadBalancerNodePorts", why);
    }
    if let Some(class) = &spec.load_balancer_class {
        if kind == "LoadBalancer" {
            let messages = names::qualified_name(class);
            errors.invalid_each("spec.loadBalancerClass", class, messages);
        } else {
            let why = "may only be used when `type` is 'LoadBalancer'";
            errors.forbidden("spec.loadBalancerClass", why);
        }
    }
    traffic_policies(spec, kind, errors);
    // `trafficDistribution` is left unchecked: its values depend on the API server's version
    // and feature gates, and a value this check did not know would hide a valid Service.
}

/// `value`, or `default` when it is absent or empty: the API server defaults both.
fn or_default<'a>(value: Option<&'a str>, default: &'a str) -> &'a str {
    value.filter(|value| !value.is_empty()).unwrap_or(default)
}

/// A port's protocol, TCP when absent or empty (the API server's default).
fn protocol(port: &ServicePort) -> &str {
    or_default(port.protocol.as_deref(), "TCP")
}

/// `clusterIPs`, or `[clusterIP]` when only that is set: the API server fills either from the
/// other before it validates (NormalizeClusterIPs).
fn cluster_ips(spec: &ServiceSpec) -> Vec<&str> {
    let listed: Vec<&str> = spec
        .cluster_ips
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    match spec.cluster_ip.as_deref().filter(|ip| !ip.is_empty()) {
        Some(single) if listed.is_empty() => vec![single],
        _ => listed,
    }
}

/// The ExternalName case of ValidateService: no cluster IPs nor families, and a DNS name.
fn external_name(spec: &ServiceSpec, cluster_ips: &[&str], errors: &mut Errors) {
    let why = "may not be set for ExternalName services";
    if !cluster_ips.is_empty() {
        errors.forbidden("spec.clusterIPs", why);
    }
    if spec.ip_families.as_ref().is_some_and(|f| !f.is_empty()) {
        errors.forbidden("spec.ipFamilies", why);
    }
    if spec.ip_family_policy.is_some() {
        errors.forbidden("spec.ipFamilyPolicy", why);
    }
    // A trailing dot marks the name as fully qualified.
    let name = spec.external_name.as_deref().unwrap_or_default();
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() {
        errors.required("spec.externalName", "");
    } else {
        let messages = names::dns1123_subdomain(name);
        errors.invalid_each("spec.externalName", name, messages);
    }
}

/// As the API server's validateServicePort (`pkg/apis/core/validation`).
fn service_port(
    port: &ServicePort,
    name_required: bool,
    names: &mut BTreeSet<String>,
    path: &str,
    errors: &mut Errors,
) {
    let name = port.name.as_deref().unwrap_or_default();
    let name_field = format!("{path}.name");
    if name.is_empty() {
        if name_required {
            errors.required(&name_field, "");
        }
    } else {
        errors.invalid_each(&name_field, name, names::dns1123_label(name));
        if !names.insert(name.to_owned()) {
            errors.duplicate(&name_field, name);
        }
    }
    for why in names::port_number(port.port.into()) {
        errors.invalid_number(&format!("{path}.port"), port.port.into(), &why);
    }
    if let Some(protocol) = port.protocol.as_deref().filter(|p| !p.is_empty())
        && !PROTOCOLS.contains(&protocol)
    {
        errors.unsupported(&format!("{path}.protocol"), protocol, PROTOCOLS);
    }
    if let Some(target) = &port.target_port {
        port_number_or_name(target, &format!("{path}.targetPort"), errors);
    }
    if let Some(app_protocol) = &port.app_protocol {
        let messages = names::qualified_name(app_protocol);
        errors.invalid_each(&format!("{path}.appProtocol"), app_protocol, messages);
    }
}

/// As the API server's ValidatePortNumOrName (`pkg/apis/core/validation`), but for the empty
/// values (`0`, `""`) the API server replaces with the port before it validates.
fn port_number_or_name(port: &IntOrString, field: &str, errors: &mut Errors) {
    match port {
        IntOrString::Int(0) => {}
        IntOrString::Int(number) => {
            for why in names::port_number((*number).into()) {
                errors.invalid_number(field, (*number).into(), &why);
            }
        }
        IntOrString::String(name) if name.is_empty() => {}
        IntOrString::String(name) => errors.invalid_each(field, name, names::port_name(name)),
    }
}

/// The session affinity part of ValidateService, with validateClientIPAffinityConfig.
fn session_affinity(spec: &ServiceSpec, errors: &mut Errors) {
    let affinity = or_default(spec.session_affinity.as_deref(), "None");
    if !SESSION_AFFINITIES.contains(&affinity) {
        errors.unsupported("spec.sessionAffinity", affinity, SESSION_AFFINITIES);
    }
    let config = spec.session_affinity_config.as_ref();
    match affinity {
        "ClientIP" => {
            let timeout = config
                .and_then(|config| config.client_ip.as_ref())
                .and_then(|client_ip| client_ip.timeout_seconds);
            if let Some(seconds) = timeout.filter(|s| !(1..=MAX_AFFINITY_SECONDS).contains(s)) {
                let field = "spec.sessionAffinityConfig.clientIP.timeoutSeconds";
                let why = "must be greater than 0 and less than 86400";
                errors.invalid_number(field, seconds.into(), why);
            }
        }
        "None" if config.is_some() => {
            let why = "must not be set when session affinity is None";
            errors.forbidden("spec.sessionAffinityConfig", why);
        }
        _ => {}
    }
}

/// As the API server's ValidateServiceClusterIPsRelatedFields (`pkg/apis/core/validation`), on
/// the normalised cluster IPs.
fn cluster_ips_related(spec: &ServiceSpec, ips: &[&str], headless: bool, errors: &mut Errors) {
    let families = spec.ip_families.as_deref().unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (position, family) in families.iter().enumerate() {
        let field = index("spec.ipFamilies", position);
        if !IP_FAMILIES.contains(&family.as_str()) {
            errors.unsupported(&field, family, IP_FAMILIES);
        }
        if !seen.insert(family.as_str()) {
            errors.duplicate(&field, family);
        }
    }
    if let Some(policy) = &spec.ip_family_policy
        && !IP_FAMILY_POLICIES.contains(&policy.as_str())
    {
        errors.unsupported("spec.ipFamilyPolicy", policy, IP_FAMILY_POLICIES);
    }
    if let (Some(single), Some(first)) = (spec.cluster_ip.as_deref(), ips.first())
        && !single.is_empty()
        && single != *first
    {
        errors.invalid(
            "spec.clusterIPs",
            first,
            "first value must match `clusterIP`",
        );
    }
    let mut parsed = Vec::new();
    let mut bad = false;
    for (position, ip) in ips.iter().enumerate() {
        if position == 0 && *ip == "None" {
            if ips.len() > 1 {
                bad = true;
                errors.invalid(
                    "spec.clusterIPs",
                    ip,
                    "'None' must be the first and only value",
                );
            }
            continue;
        }
        match parse_ip(ip) {
            Ok(address) => parsed.push(address),
            Err(why) => {
                bad = true;
                errors.invalid(&index("spec.clusterIPs", position), ip, why);
            }
        }
    }
    if ips.len() > 2 {
        errors.invalid(
            "spec.clusterIPs",
            &ips.join(","),
            "may only hold up to 2 values",
        );
    }
    if bad {
        return;
    }
    if let [first, second] = parsed.as_slice()
        && first.is_ipv6() == second.is_ipv6()
    {
        let why = "may specify no more than one IP for each IP family";
        errors.invalid("spec.clusterIPs", &ips.join(","), why);
    }
    if !headless {
        for (position, (ip, family)) in parsed.iter().zip(families).enumerate() {
            let expected = match family.as_str() {
                "IPv4" if ip.is_ipv6() => "IPv4",
                "IPv6" if !ip.is_ipv6() => "IPv6",
                _ => continue,
            };
            let why =
                format!("expected an {expected} value as indicated by `ipFamilies[{position}]`");
            let shown = ips.get(position).copied().unwrap_or_default();
            errors.invalid(&index("spec.clusterIPs", position), shown, &why);
        }
    }
}

/// The node port parts of ValidateService: none on a ClusterIP Service, each a port number
/// (the allowed range is the API server's `--service-node-port-range`, unknown here), no two
/// equal for the same protocol.
fn node_ports(kind: &str, ports: &[ServicePort], errors: &mut Errors) {
    let mut seen = BTreeSet::new();
    for (position, port) in ports.iter().enumerate() {
        let Some(node_port) = port.node_port.filter(|n| *n != 0) else {
            continue;
        };
        let field = format!("{}.nodePort", index("spec.ports", position));
        if kind == "ClusterIP" {
            errors.forbidden(&field, "may not be used when `type` is 'ClusterIP'");
        }
        for why in names::port_number(node_port.into()) {
            errors.invalid_number(&field, node_port.into(), &why);
        }
        let protocol = protocol(port);
        if !seen.insert((protocol, node_port)) {
            errors.duplicate(&field, &format!("{node_port}/{protocol}"));
        }
    }
}

/// The duplicate port part of ValidateService: no two ports equal for the same protocol.
fn duplicate_ports(ports: &[ServicePort], errors: &mut Errors) {
    let mut seen = BTreeSet::new();
    for (position, port) in ports.iter().enumerate() {
        let protocol = protocol(port);
        if !seen.insert((protocol, port.port)) {
            let shown = format!("{}/{protocol}", port.port);
            errors.duplicate(&index("spec.ports", position), &shown);
        }
    }
}

/// The source range part of ValidateService: the field, or else the older annotation, only on
/// LoadBalancer Services, each value a CIDR (blanks around it allowed, as the API server
/// allows them).
fn source_ranges(service: &Service, spec: &ServiceSpec, kind: &str, errors: &mut Errors) {
    let only_load_balancer = "may only be used when `type` is 'LoadBalancer'";
    let ranges = spec
        .load_balancer_source_ranges
        .as_deref()
        .unwrap_or_default();
    let annotation = service
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(SOURCE_RANGES_ANNOTATION));
    if !ranges.is_empty() {
        const FIELD: &str = "spec.loadBalancerSourceRanges";
        if kind != "LoadBalancer" {
            errors.forbidden(FIELD, only_load_balancer);
        }
        for (position, range) in ranges.iter().enumerate() {
            if let Err(why) = parse_cidr(range.trim()) {
                errors.invalid(&index(FIELD, position), range.trim(), why);
            }
        }
    } else if let Some(value) = annotation {
        let field = key("metadata.annotations", SOURCE_RANGES_ANNOTATION);
        if kind != "LoadBalancer" {
            errors.forbidden(&field, only_load_balancer);
        }
        let value = value.trim();
        if !value.is_empty() {
            for range in value.split(',').map(str::trim) {
                if let Err(why) = parse_cidr(range) {
                    errors.invalid(&field, range, why);
                }
            }
        }
    }
}

/// As the API server's validateServiceExternalTrafficPolicy and
/// validateServiceInternalTrafficFieldsValue (`pkg/apis/core/validation`); absent policies are
/// defaulted, an absent health check node port is allocated.
fn traffic_policies(spec: &ServiceSpec, kind: &str, errors: &mut Errors) {
    let has_external_ips = spec
        .external_ips
        .as_ref()
        .is_some_and(|ips| !ips.is_empty());
    let externally_accessible =
        matches!(kind, "LoadBalancer" | "NodePort") || (kind == "ClusterIP" && has_external_ips);
    let external = spec.external_traffic_policy.as_deref();
    match external.filter(|policy| !policy.is_empty()) {
        Some(policy) if !externally_accessible => {
            let why = "may only be set for externally-accessible services";
            errors.invalid("spec.externalTrafficPolicy", policy, why);
        }
        Some(policy) if !TRAFFIC_POLICIES.contains(&policy) => {
            errors.unsupported("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES);
        }
        _ => {}
    }
    let needs_health_check = kind == "LoadBalancer" && external == Some("Local");
    if let Some(port) = spec.health_check_node_port.filter(|port| *port != 0) {
        const FIELD: &str = "spec.healthCheckNodePort";
        if needs_health_check {
            for why in names::port_number(port.into()) {
                errors.invalid_number(FIELD, port.into(), &why);
            }
        } else {
            let why = "may only be set when `type` is 'LoadBalancer' and \
                       `externalTrafficPolicy` is 'Local'";
            errors.invalid_number(FIELD, port.into(), why);
        }
    }
    if let Some(policy) = spec.internal_traffic_policy.as_deref()
        && !TRAFFIC_POLICIES.contains(&policy)
    {
        errors.unsupported("spec.internalTrafficPolicy", policy, TRAFFIC_POLICIES);
    }
}
