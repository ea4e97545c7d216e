//! EndpointSlices, as the API server's ValidateEndpointSlice (`pkg/apis/discovery/validation`).
//!
//! An address of an IPv4 or IPv6 slice must be an address of that family outside the ranges
//! the API server refuses for endpoints (unspecified, loopback, link-local unicast and
//! multicast): an endpoint is a DNAT target, and those would send a Service's traffic to the
//! node itself or its metadata service. A port's absent `protocol` and `name` are read as their
//! defaults (`TCP`, `""`).

use std::collections::BTreeSet;
use std::net::IpAddr;

use k8s_openapi::api::discovery::v1::{Endpoint, EndpointPort, EndpointSlice};

use super::field::{Errors, index};
use super::ip::{parse_ip, special_range};
use super::meta::{NameRule, labels, object_meta};
use super::names;
use super::service::PROTOCOLS;

const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
/// The API server's limit (it was 100 before Kubernetes 1.20; 20,000 since).
const MAX_PORTS: usize = 20_000;
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ZONE_HINTS: usize = 8;

/// As the API server's ValidateEndpointSlice (`pkg/apis/discovery/validation`).
pub(super) fn validate(slice: &EndpointSlice, errors: &mut Errors) {
    object_meta(&slice.metadata, true, NameRule::Dns1123Subdomain, errors);
    let address_type = slice.address_type.as_str();
    if address_type.is_empty() {
        errors.required("addressType", "");
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errors.unsupported("addressType", address_type, ADDRESS_TYPES);
    }
    endpoints(&slice.endpoints, address_type, errors);
    ports(slice.ports.as_deref().unwrap_or_default(), errors);
}

/// As the API server's validateEndpoints (`pkg/apis/discovery/validation`).
fn endpoints(endpoints: &[Endpoint], address_type: &str, errors: &mut Errors) {
    if endpoints.len() > MAX_ENDPOINTS {
        errors.too_many("endpoints", endpoints.len(), MAX_ENDPOINTS);
        return;
    }
    for (position, endpoint) in endpoints.iter().enumerate() {
        let path = index("endpoints", position);
        let addresses_path = format!("{path}.addresses");
        if endpoint.addresses.is_empty() {
            errors.required(&addresses_path, "must contain at least 1 address");
        } else if endpoint.addresses.len() > MAX_ADDRESSES {
            errors.too_many(&addresses_path, endpoint.addresses.len(), MAX_ADDRESSES);
        }
        for (number, address) in endpoint.addresses.iter().enumerate() {
            endpoint_address(
                address,
                address_type,
                &index(&addresses_path, number),
                errors,
            );
        }
        if let Some(node_name) = &endpoint.node_name {
            let messages = names::dns1123_subdomain(node_name);
            errors.invalid_each(&format!("{path}.nodeName"), node_name, messages);
        }
        if let Some(topology) = &endpoint.deprecated_topology {
            let topology_path = format!("{path}.deprecatedTopology");
            if topology.len() > MAX_TOPOLOGY_LABELS {
                errors.too_many(&topology_path, topology.len(), MAX_TOPOLOGY_LABELS);
            }
            labels(topology, &topology_path, errors);
        }
        if let Some(hostname) = &endpoint.hostname {
            let messages = names::dns1123_label(hostname);
            errors.invalid_each(&format!("{path}.hostname"), hostname, messages);
        }
        let zones = endpoint
            .hints
            .as_ref()
            .and_then(|hints| hints.for_zones.as_deref());
        zone_hints(
            zones.unwrap_or_default(),
            &format!("{path}.hints.forZones"),
            errors,
        );
    }
}

/// One address of a slice of `address_type`: IsValidIPv4Address or IsValidIPv6Address then
/// ValidateEndpointIP, or IsFullyQualifiedDomainName. Addresses of an unknown type are
/// reported with the type, not each.
fn endpoint_address(address: &str, address_type: &str, field: &str, errors: &mut Errors) {
    let family = match address_type {
        "IPv4" => "IPv4",
        "IPv6" => "IPv6",
        "FQDN" => {
            if address.is_empty() {
                errors.required(field, "");
            } else if let Some((value, why)) = names::fully_qualified_domain_name(address) {
                errors.invalid(field, &value, &why);
            }
            return;
        }
        _ => return,
    };
    let ip = parse_ip(address).ok().filter(|ip| match ip {
        IpAddr::V4(_) => family == "IPv4",
        IpAddr::V6(_) => family == "IPv6",
    });
    match ip {
        None => errors.invalid(field, address, &format!("must be a valid {family} address")),
        Some(ip) => {
            if let Some(why) = special_range(ip) {
                errors.invalid(field, address, why);
            }
        }
    }
}

/// As the API server's validateHints (`pkg/apis/discovery/validation`), for zones.
fn zone_hints(zones: &[k8s_openapi::api::discovery::v1::ForZone], path: &str, errors: &mut Errors) {
    if zones.len() > MAX_ZONE_HINTS {
        errors.too_many(path, zones.len(), MAX_ZONE_HINTS);
        return;
    }
    let mut seen = BTreeSet::new();
    for (position, zone) in zones.iter().enumerate() {
        let field = format!("{}.name", index(path, position));
        if !seen.insert(zone.name.as_str()) {
            errors.duplicate(&field, &zone.name);
        }
        errors.invalid_each(&field, &zone.name, names::label_value(&zone.name));
    }
}

/// As the API server's validatePorts (`pkg/apis/discovery/validation`). The API server does not
/// check a slice's port numbers (a slice not made for a Service may have none), so neither
/// does this (a rule stricter than the API server's would hide valid slices).
fn ports(ports: &[EndpointPort], errors: &mut Errors) {
    if ports.len() > MAX_PORTS {
        errors.too_many("ports", ports.len(), MAX_PORTS);
        return;
    }
    let mut seen = BTreeSet::new();
    for (position, port) in ports.iter().enumerate() {
        let path = index("ports", position);
        let name = port.name.as_deref().unwrap_or_default();
        let name_field = format!("{path}.name");
        if !name.is_empty() {
            errors.invalid_each(&name_field, name, names::dns1123_label(name));
        }
        if !seen.insert(name) {
            errors.duplicate(&name_field, name);
        }
        if let Some(protocol) = port.protocol.as_deref()
            && !PROTOCOLS.contains(&protocol)
        {
            errors.unsupported(&format!("{path}.protocol"), protocol, PROTOCOLS);
        }
        if let Some(app_protocol) = &port.app_protocol {
            let messages = names::qualified_name(app_protocol);
            errors.invalid_each(&format!("{path}.appProtocol"), app_protocol, messages);
        }
    }
}
