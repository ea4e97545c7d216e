//! The required fields the API server would insist on, checked for objects read from files.
//!
//! `k8s-openapi` reads a missing required field as its default (an empty string, port 0), as
//! the API server's clients may; a manifest folder has no API server to reject such objects, so
//! the fields the binaries rely on are checked here.

use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::{Ingress, IngressBackend};

use crate::Object;

/// The first required field `object` lacks: its path and what is expected there.
pub(super) fn missing_field(object: &Object) -> Option<(String, String)> {
    match object {
        Object::Service(service) => service_field(service),
        Object::EndpointSlice(slice) => endpoint_slice_field(slice),
        Object::Ingress(ingress) => ingress_field(ingress),
        Object::Secret(secret) => secret_field(secret),
        Object::IngressClass(_)
        | Object::ConfigMap(_)
        | Object::Lease(_)
        | Object::Namespace(_)
        | Object::Node(_) => None,
    }
}

fn service_field(service: &Service) -> Option<(String, String)> {
    let ports = service.spec.as_ref()?.ports.as_deref().unwrap_or_default();
    ports.iter().enumerate().find_map(|(index, port)| {
        (!(1..=65535).contains(&port.port)).then(|| {
            let field = format!("spec.ports[{index}].port");
            (field, "required, a number from 1 to 65535".to_owned())
        })
    })
}

fn endpoint_slice_field(slice: &EndpointSlice) -> Option<(String, String)> {
    if !matches!(slice.address_type.as_str(), "IPv4" | "IPv6" | "FQDN") {
        let message = "required: IPv4, IPv6 or FQDN";
        return Some(("addressType".to_owned(), message.to_owned()));
    }
    slice
        .endpoints
        .iter()
        .enumerate()
        .find_map(|(index, endpoint)| {
            endpoint.addresses.is_empty().then(|| {
                let field = format!("endpoints[{index}].addresses");
                (field, "required, at least one address".to_owned())
            })
        })
}

fn ingress_field(ingress: &Ingress) -> Option<(String, String)> {
    let spec = ingress.spec.as_ref()?;
    let default_backend = spec.default_backend.as_ref();
    let missing = default_backend.and_then(|backend| backend_field(backend, "spec.defaultBackend"));
    if missing.is_some() {
        return missing;
    }
    let rules = spec.rules.as_deref().unwrap_or_default();
    rules.iter().enumerate().find_map(|(rule_index, rule)| {
        let paths = rule.http.as_ref().map(|http| http.paths.as_slice());
        let paths = paths.unwrap_or_default();
        if rule.http.is_some() && paths.is_empty() {
            let field = format!("spec.rules[{rule_index}].http.paths");
            return Some((field, "required, at least one path".to_owned()));
        }
        paths.iter().enumerate().find_map(|(path_index, path)| {
            let at = format!("spec.rules[{rule_index}].http.paths[{path_index}]");
            if !matches!(
                path.path_type.as_str(),
                "Exact" | "Prefix" | "ImplementationSpecific"
            ) {
                let message = "required: Exact, Prefix or ImplementationSpecific";
                return Some((format!("{at}.pathType"), message.to_owned()));
            }
            backend_field(&path.backend, &format!("{at}.backend"))
        })
    })
}

fn backend_field(backend: &IngressBackend, at: &str) -> Option<(String, String)> {
    match (&backend.service, &backend.resource) {
        (Some(service), _) if service.name.is_empty() => {
            Some((format!("{at}.service.name"), "required".to_owned()))
        }
        (Some(service), _) => {
            let port = service.port.as_ref();
            let named = port
                .and_then(|port| port.name.as_deref())
                .is_some_and(|name| !name.is_empty());
            let numbered = port
                .and_then(|port| port.number)
                .is_some_and(|n| (1..=65535).contains(&n));
            (!named && !numbered).then(|| {
                let message = "required: a name or a number from 1 to 65535";
                (format!("{at}.service.port"), message.to_owned())
            })
        }
        (None, Some(_)) => None,
        (None, None) => Some((
            at.to_owned(),
            "required: a service or a resource".to_owned(),
        )),
    }
}

fn secret_field(secret: &Secret) -> Option<(String, String)> {
    if secret.type_.as_deref() != Some("kubernetes.io/tls") {
        return None;
    }
    ["tls.crt", "tls.key"].into_iter().find_map(|key| {
        let in_data = secret
            .data
            .as_ref()
            .is_some_and(|data| data.contains_key(key));
        let in_string_data = secret
            .string_data
            .as_ref()
            .is_some_and(|data| data.contains_key(key));
        (!in_data && !in_string_data).then(|| {
            let message = "required in a kubernetes.io/tls Secret";
            (format!("data[{key:?}]"), message.to_owned())
        })
    })
}
