//! Ingresses and IngressClasses, as the API server's ValidateIngressCreate and
//! ValidateIngressClass (`pkg/apis/networking/validation`).
//!
//! In `networking.k8s.io/v1` a path's `pathType` is required: the API server does not default
//! it (only the older `extensions/v1beta1` did).

use k8s_openapi::api::core::v1::TypedLocalObjectReference;
use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, Ingress, IngressBackend, IngressClass, IngressClassParametersReference,
    IngressRule, IngressSpec,
};

use super::field::{Errors, index, key};
use super::ip::parse_ip;
use super::meta::{NameRule, object_meta};
use super::names;

const PATH_TYPES: &[&str] = &["Exact", "ImplementationSpecific", "Prefix"];
/// What an Exact or Prefix path may not contain.
const INVALID_PATH_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F"];
/// What an Exact or Prefix path may not end with.
const INVALID_PATH_SUFFIXES: &[&str] = &["/..", "/."];
/// The annotation that predates `spec.ingressClassName`.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const MAX_CONTROLLER_LENGTH: usize = 250;
const SCOPES: &[&str] = &["Cluster", "Namespace"];

/// As the API server's ValidateIngressCreate (`pkg/apis/networking/validation`).
pub(super) fn validate(ingress: &Ingress, errors: &mut Errors) {
    object_meta(&ingress.metadata, true, NameRule::Dns1123Subdomain, errors);
    let default_spec = IngressSpec::default();
    let spec = ingress.spec.as_ref().unwrap_or(&default_spec);
    ingress_spec(spec, errors);
    let annotation = ingress
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(CLASS_ANNOTATION));
    if let (Some(annotation), Some(class)) = (annotation, &spec.ingress_class_name)
        && annotation != class
    {
        let field = key("metadata.annotations", CLASS_ANNOTATION);
        let why = "must match `ingressClassName` when both are specified";
        errors.invalid(&field, annotation, why);
    }
}

/// As the API server's ValidateIngressSpec (`pkg/apis/networking/validation`).
fn ingress_spec(spec: &IngressSpec, errors: &mut Errors) {
    let rules = spec.rules.as_deref().unwrap_or_default();
    if rules.is_empty() && spec.default_backend.is_none() {
        errors.invalid(
            "spec",
            "",
            "either `defaultBackend` or `rules` must be specified",
        );
    }
    if let Some(backend) = &spec.default_backend {
        ingress_backend(backend, "spec.defaultBackend", errors);
    }
    for (position, rule) in rules.iter().enumerate() {
        ingress_rule(rule, &index("spec.rules", position), errors);
    }
    for (position, tls) in spec.tls.iter().flatten().enumerate() {
        let path = index("spec.tls", position);
        for (number, host) in tls.hosts.iter().flatten().enumerate() {
            host_name(host, &index(&format!("{path}.hosts"), number), errors);
        }
        if let Some(secret) = tls.secret_name.as_deref().filter(|s| !s.is_empty()) {
            let messages = names::dns1123_subdomain(secret);
            errors.invalid_each(&format!("{path}.secretName"), secret, messages);
        }
    }
    if let Some(class) = &spec.ingress_class_name {
        let messages = names::dns1123_subdomain(class);
        errors.invalid_each("spec.ingressClassName", class, messages);
    }
}

/// A host of a rule or TLS entry: a DNS-1123 subdomain, or a wildcard one if it has a `*`.
fn host_name(host: &str, field: &str, errors: &mut Errors) {
    let messages = if host.contains('*') {
        names::wildcard_dns1123_subdomain(host)
    } else {
        names::dns1123_subdomain(host)
    };
    errors.invalid_each(field, host, messages);
}

/// One rule of validateIngressRules (`pkg/apis/networking/validation`): a host that is a name,
/// not an IP address, and its HTTP paths.
fn ingress_rule(rule: &IngressRule, path: &str, errors: &mut Errors) {
    let host = rule.host.as_deref().unwrap_or_default();
    if !host.is_empty() {
        let field = format!("{path}.host");
        if parse_ip(host).is_ok() {
            errors.invalid(&field, host, "must be a DNS name, not an IP address");
        }
        host_name(host, &field, errors);
    }
    if let Some(http) = &rule.http {
        let paths_field = format!("{path}.http.paths");
        if http.paths.is_empty() {
            errors.required(&paths_field, "");
        }
        for (position, http_path) in http.paths.iter().enumerate() {
            ingress_path(http_path, &index(&paths_field, position), errors);
        }
    }
}

/// As the API server's validateHTTPIngressPath (`pkg/apis/networking/validation`).
fn ingress_path(http_path: &HTTPIngressPath, path: &str, errors: &mut Errors) {
    let value = http_path.path.as_deref().unwrap_or_default();
    let field = format!("{path}.path");
    match http_path.path_type.as_str() {
        "" => {
            errors.required(&format!("{path}.pathType"), "pathType must be specified");
            return;
        }
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errors.invalid(&field, value, "must be an absolute path");
            }
            for sequence in INVALID_PATH_SEQUENCES {
                if value.contains(sequence) {
                    errors.invalid(&field, value, &format!("must not contain '{sequence}'"));
                }
            }
            for suffix in INVALID_PATH_SUFFIXES {
                if value.ends_with(suffix) {
                    errors.invalid(&field, value, &format!("cannot end with '{suffix}'"));
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errors.invalid(&field, value, "must be an absolute path");
            }
        }
        other => errors.unsupported(&format!("{path}.pathType"), other, PATH_TYPES),
    }
    ingress_backend(&http_path.backend, &format!("{path}.backend"), errors);
}

/// As the API server's validateIngressBackend (`pkg/apis/networking/validation`): a Service
/// (a DNS-1035 name and exactly one of a port name or number) or a resource.
fn ingress_backend(backend: &IngressBackend, path: &str, errors: &mut Errors) {
    match (&backend.service, &backend.resource) {
        (Some(_), Some(_)) => {
            errors.invalid(path, "", "cannot set both resource and service backends");
        }
        (None, Some(resource)) => {
            local_object_reference(resource, &format!("{path}.resource"), errors)
        }
        (Some(service), None) => {
            let field = format!("{path}.service.name");
            if service.name.is_empty() {
                errors.required(&field, "");
            } else {
                errors.invalid_each(&field, &service.name, names::dns1035_label(&service.name));
            }
            let port = service.port.as_ref();
            let name = port.and_then(|p| p.name.as_deref()).unwrap_or_default();
            let number = port.and_then(|p| p.number).unwrap_or_default();
            match (name.is_empty(), number == 0) {
                (false, false) => {
                    errors.invalid(path, "", "cannot set both port name & port number")
                }
                (false, true) => {
                    let field = format!("{path}.service.port.name");
                    errors.invalid_each(&field, name, names::port_name(name));
                }
                (true, false) => {
                    let field = format!("{path}.service.port.number");
                    for why in names::port_number(number.into()) {
                        errors.invalid_number(&field, number.into(), &why);
                    }
                }
                (true, true) => errors.required(path, "port name or number is required"),
            }
        }
        (None, None) => errors.invalid(path, "", "resource or service backend is required"),
    }
}

/// As the API server's validateIngressTypedLocalObjectReference
/// (`pkg/apis/networking/validation`).
fn local_object_reference(reference: &TypedLocalObjectReference, path: &str, errors: &mut Errors) {
    reference_fields(
        reference.api_group.as_deref(),
        &reference.kind,
        &reference.name,
        path,
        errors,
    );
}

/// The group, kind and name of a reference: a DNS-1123 subdomain, and two URL path segments.
fn reference_fields(group: Option<&str>, kind: &str, name: &str, path: &str, errors: &mut Errors) {
    if let Some(group) = group {
        let messages = names::dns1123_subdomain(group);
        errors.invalid_each(&format!("{path}.apiGroup"), group, messages);
    }
    for (short, value) in [("kind", kind), ("name", name)] {
        let field = format!("{path}.{short}");
        if value.is_empty() {
            errors.required(&field, &format!("{short} is required"));
        } else {
            errors.invalid_each(&field, value, names::path_segment_name(value));
        }
    }
}

/// As the API server's ValidateIngressClass (`pkg/apis/networking/validation`): the name, the
/// controller (a domain-prefixed path of at most 250 characters), the parameters.
pub(super) fn validate_class(class: &IngressClass, errors: &mut Errors) {
    object_meta(&class.metadata, false, NameRule::Dns1123Subdomain, errors);
    let spec = class.spec.as_ref();
    let controller = spec
        .and_then(|spec| spec.controller.as_deref())
        .unwrap_or_default();
    const FIELD: &str = "spec.controller";
    if controller.len() > MAX_CONTROLLER_LENGTH {
        errors.too_long(FIELD, MAX_CONTROLLER_LENGTH);
    }
    if controller.is_empty() {
        errors.required(FIELD, "");
    } else {
        for (value, why) in names::domain_prefixed_path(controller) {
            errors.invalid(FIELD, &value, &why);
        }
    }
    if let Some(parameters) = spec.and_then(|spec| spec.parameters.as_ref()) {
        class_parameters(parameters, errors);
    }
}

/// As the API server's validateIngressClassParametersReference
/// (`pkg/apis/networking/validation`); an absent scope is the default, `Cluster`.
fn class_parameters(parameters: &IngressClassParametersReference, errors: &mut Errors) {
    const PATH: &str = "spec.parameters";
    let group = parameters.api_group.as_deref();
    reference_fields(group, &parameters.kind, &parameters.name, PATH, errors);
    let scope = parameters.scope.as_deref().unwrap_or("Cluster");
    let namespace = parameters.namespace.as_deref();
    match (scope, namespace) {
        ("Namespace", None) => {
            errors.required(
                "spec.parameters.namespace",
                "`parameters.scope` is set to 'Namespace'",
            );
        }
        ("Namespace", Some(namespace)) => {
            let messages = names::dns1123_label(namespace);
            errors.invalid_each("spec.parameters.namespace", namespace, messages);
        }
        ("Cluster", Some(_)) => {
            errors.forbidden(
                "spec.parameters.namespace",
                "`parameters.scope` is set to 'Cluster'",
            );
        }
        ("Cluster", None) => {}
        (other, _) => errors.unsupported("spec.parameters.scope", other, SCOPES),
    }
}
