//! Gateways, GatewayClasses and ReferenceGrants, as their CRD schemas
//! (`gateway.networking.k8s.io_gateways.yaml`, `…_gatewayclasses.yaml`,
//! `…_referencegrants.yaml`, standard channel, v1.6.1).

use super::{
    at_most, bounded, group, hostname, kind, longer_than, namespace, object_name, one_of, port,
    section_name,
};
use crate::gateway::{
    CaCertificateReference, Gateway, GatewayClass, GatewaySpec, Listener, ReferenceGrant,
    SecretObjectReference, TlsConfig,
};
use crate::validate::field::{Errors, index, key};
use crate::validate::meta::{NameRule, object_meta};
use crate::validate::names;

/// The most listeners of a Gateway.
const MAX_LISTENERS: usize = 64;
/// The longest value of a TLS option.
const MAX_OPTION_LENGTH: usize = 4096;
/// The longest address value, class name and controller name.
const MAX_LONG_NAME: usize = 253;

/// As the CRD of GatewayClass: the controller name (a domain-prefixed path of at most 253
/// characters), the description (at most 64), the parameters reference.
pub(in crate::validate) fn validate_class(class: &GatewayClass, errors: &mut Errors) {
    object_meta(&class.metadata, false, NameRule::Dns1123Subdomain, errors);
    const FIELD: &str = "spec.controllerName";
    let controller = &class.spec.controller_name;
    bounded(controller, MAX_LONG_NAME, FIELD, errors);
    if !controller.is_empty() {
        for (value, why) in names::domain_prefixed_path(controller) {
            errors.invalid(FIELD, &value, &why);
        }
    }
    if let Some(description) = &class.spec.description
        && longer_than(description, 64)
    {
        errors.too_long("spec.description", 64);
    }
    if let Some(parameters) = &class.spec.parameters_ref {
        const PATH: &str = "spec.parametersRef";
        group(&parameters.group, &format!("{PATH}.group"), errors);
        kind(&parameters.kind, &format!("{PATH}.kind"), errors);
        object_name(&parameters.name, &format!("{PATH}.name"), errors);
        if let Some(value) = &parameters.namespace {
            namespace(value, &format!("{PATH}.namespace"), errors);
        }
    }
}

/// As the CRD of ReferenceGrant: 1 to 16 referrers and referents, each well formed.
pub(in crate::validate) fn validate_reference_grant(grant: &ReferenceGrant, errors: &mut Errors) {
    object_meta(&grant.metadata, true, NameRule::Dns1123Subdomain, errors);
    let spec = &grant.spec;
    for (field, len) in [("spec.from", spec.from.len()), ("spec.to", spec.to.len())] {
        if len == 0 {
            errors.required(field, "must have at least 1 item");
        }
    }
    at_most(&spec.from, 16, "spec.from", errors);
    for (position, from) in spec.from.iter().enumerate() {
        let path = index("spec.from", position);
        group(&from.group, &format!("{path}.group"), errors);
        kind(&from.kind, &format!("{path}.kind"), errors);
        let field = format!("{path}.namespace");
        if from.namespace.is_empty() {
            errors.required(&field, "");
        } else {
            namespace(&from.namespace, &field, errors);
        }
    }
    at_most(&spec.to, 16, "spec.to", errors);
    for (position, to) in spec.to.iter().enumerate() {
        let path = index("spec.to", position);
        group(&to.group, &format!("{path}.group"), errors);
        kind(&to.kind, &format!("{path}.kind"), errors);
        if let Some(name) = &to.name {
            object_name(name, &format!("{path}.name"), errors);
        }
    }
}

/// As the CRD of Gateway: class name, listeners, addresses, TLS references.
pub(in crate::validate) fn validate_gateway(gateway: &Gateway, errors: &mut Errors) {
    object_meta(&gateway.metadata, true, NameRule::Dns1123Subdomain, errors);
    let spec = &gateway.spec;
    bounded(
        &spec.gateway_class_name,
        MAX_LONG_NAME,
        "spec.gatewayClassName",
        errors,
    );
    listeners(&spec.listeners, errors);
    addresses(spec, errors);
    let allowed = spec.allowed_listeners.as_ref();
    if let Some(from) = allowed.and_then(|a| a.namespaces.as_ref()?.from.as_deref()) {
        let field = "spec.allowedListeners.namespaces.from";
        one_of(from, &["All", "Selector", "Same", "None"], field, errors);
    }
    if let Some(tls) = &spec.tls {
        if let Some(reference) = tls
            .backend
            .as_ref()
            .and_then(|b| b.client_certificate_ref.as_ref())
        {
            secret_ref(reference, "spec.tls.backend.clientCertificateRef", errors);
        }
        if let Some(frontend) = &tls.frontend {
            tls_config(&frontend.default, "spec.tls.frontend.default", errors);
            let per_port = frontend.per_port.as_deref().unwrap_or_default();
            at_most(per_port, MAX_LISTENERS, "spec.tls.frontend.perPort", errors);
            for (position, entry) in per_port.iter().enumerate() {
                let path = index("spec.tls.frontend.perPort", position);
                port(entry.port, &format!("{path}.port"), errors);
                if per_port
                    .get(..position)
                    .unwrap_or_default()
                    .iter()
                    .any(|e| e.port == entry.port)
                {
                    let why = "Port for TLS configuration must be unique within the Gateway";
                    errors.invalid_number(&format!("{path}.port"), entry.port.into(), why);
                }
                tls_config(&entry.tls, &format!("{path}.tls"), errors);
            }
        }
    }
}

/// The listeners: 1 to 64, each well formed, names unique, and no two with the same port,
/// protocol and host name (the CRD's CEL rules).
fn listeners(listeners: &[Listener], errors: &mut Errors) {
    const FIELD: &str = "spec.listeners";
    if listeners.is_empty() {
        errors.required(FIELD, "must have at least 1 item");
    }
    at_most(listeners, MAX_LISTENERS, FIELD, errors);
    for (position, listener) in listeners.iter().enumerate() {
        let path = index(FIELD, position);
        self::listener(listener, &path, errors);
        let earlier = listeners.get(..position).unwrap_or_default();
        if earlier.iter().any(|other| other.name == listener.name) {
            errors.duplicate(&format!("{path}.name"), &listener.name);
        }
        let same_binding = |other: &&Listener| {
            other.port == listener.port
                && other.protocol == listener.protocol
                && other.hostname == listener.hostname
        };
        if earlier.iter().any(|other| same_binding(&other)) {
            let why = "Combination of port, protocol and hostname must be unique for each \
                       listener";
            errors.invalid(&path, &listener.name, why);
        }
    }
}

/// One listener: name, host name, port, protocol, TLS as its protocol allows, allowed routes.
fn listener(listener: &Listener, path: &str, errors: &mut Errors) {
    section_name(&listener.name, &format!("{path}.name"), errors);
    if let Some(value) = &listener.hostname {
        hostname(value, &format!("{path}.hostname"), errors);
    }
    port(listener.port, &format!("{path}.port"), errors);
    let protocol = listener.protocol.as_str();
    let protocol_field = format!("{path}.protocol");
    bounded(protocol, 255, &protocol_field, errors);
    if !protocol.is_empty() && !is_protocol(protocol) {
        let why = "must be letters, digits and '-', or end with a domain-prefixed name \
                   (example.com/PROTOCOL)";
        errors.invalid(&protocol_field, protocol, why);
    }
    let tls_field = format!("{path}.tls");
    match (&listener.tls, protocol) {
        (Some(_), "HTTP" | "TCP" | "UDP") => {
            errors.forbidden(
                &tls_field,
                "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
            );
        }
        (Some(tls), "HTTPS") if tls.mode() != "Terminate" => {
            errors.invalid(
                &format!("{tls_field}.mode"),
                tls.mode(),
                "tls mode must be Terminate for protocol HTTPS",
            );
        }
        (None, "TLS") => errors.required(&tls_field, "tls mode must be set for protocol TLS"),
        _ => {}
    }
    if matches!(protocol, "TCP" | "UDP")
        && listener.hostname.as_deref().is_some_and(|h| !h.is_empty())
    {
        let why = "hostname must not be specified for protocols ['TCP', 'UDP']";
        errors.forbidden(&format!("{path}.hostname"), why);
    }
    if let Some(tls) = &listener.tls {
        if let Some(mode) = &tls.mode {
            one_of(
                mode,
                &["Terminate", "Passthrough"],
                &format!("{tls_field}.mode"),
                errors,
            );
        }
        let refs = tls.certificate_refs();
        let refs_field = format!("{tls_field}.certificateRefs");
        at_most(refs, 64, &refs_field, errors);
        for (position, reference) in refs.iter().enumerate() {
            secret_ref(reference, &index(&refs_field, position), errors);
        }
        let options = tls.options.as_ref();
        if let Some(options) = options {
            let options_field = format!("{tls_field}.options");
            if options.len() > 16 {
                errors.too_many(&options_field, options.len(), 16);
            }
            for (name, value) in options {
                if longer_than(value, MAX_OPTION_LENGTH) {
                    errors.too_long(&key(&options_field, name), MAX_OPTION_LENGTH);
                }
            }
        }
        if tls.mode() == "Terminate" && refs.is_empty() && options.is_none_or(|o| o.is_empty()) {
            let why = "certificateRefs or options must be specified when mode is Terminate";
            errors.required(&tls_field, why);
        }
    }
    if let Some(allowed) = &listener.allowed_routes {
        let allowed_field = format!("{path}.allowedRoutes");
        if let Some(from) = allowed.namespaces.as_ref().and_then(|n| n.from.as_deref()) {
            let field = format!("{allowed_field}.namespaces.from");
            one_of(from, &["All", "Selector", "Same"], &field, errors);
        }
        let kinds = allowed.kinds.as_deref().unwrap_or_default();
        let kinds_field = format!("{allowed_field}.kinds");
        at_most(kinds, 8, &kinds_field, errors);
        for (position, route_kind) in kinds.iter().enumerate() {
            let item = index(&kinds_field, position);
            if let Some(value) = &route_kind.group {
                group(value, &format!("{item}.group"), errors);
            }
            kind(&route_kind.kind, &format!("{item}.kind"), errors);
        }
    }
}

/// Whether `protocol` fits the CRD's pattern: letters, digits and `-` with a letter or digit
/// at each end; or (the pattern's second branch, anchored at the end only) ending with a
/// lower-case letter or digit, `/`, and letters and digits.
fn is_protocol(protocol: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let plain = protocol.starts_with(alnum)
        && protocol.ends_with(alnum)
        && protocol.chars().all(|c| alnum(c) || c == '-');
    let prefixed = protocol.rsplit_once('/').is_some_and(|(domain, name)| {
        !name.is_empty()
            && name.chars().all(alnum)
            && domain.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    plain || prefixed
}

/// The addresses asked for: at most 16, types and values well formed, no value twice.
fn addresses(spec: &GatewaySpec, errors: &mut Errors) {
    const FIELD: &str = "spec.addresses";
    let addresses = spec.addresses.as_deref().unwrap_or_default();
    at_most(addresses, 16, FIELD, errors);
    for (position, address) in addresses.iter().enumerate() {
        let path = index(FIELD, position);
        let type_ = address.address_type();
        let type_field = format!("{path}.type");
        bounded(type_, MAX_LONG_NAME, &type_field, errors);
        if !matches!(type_, "IPAddress" | "Hostname" | "NamedAddress")
            && !names::domain_prefixed_path(type_).is_empty()
        {
            let why = "must be IPAddress, Hostname, NamedAddress or a domain-prefixed path";
            errors.invalid(&type_field, type_, why);
        }
        let Some(value) = address.value.as_deref().filter(|v| !v.is_empty()) else {
            continue;
        };
        let value_field = format!("{path}.value");
        if longer_than(value, MAX_LONG_NAME) {
            errors.too_long(&value_field, MAX_LONG_NAME);
        }
        if type_ == "Hostname" {
            hostname(value, &value_field, errors);
        }
        let earlier = addresses.get(..position).unwrap_or_default();
        if matches!(type_, "IPAddress" | "Hostname")
            && earlier
                .iter()
                .any(|a| a.address_type() == type_ && a.value.as_deref() == Some(value))
        {
            errors.duplicate(&value_field, value);
        }
    }
}

/// A certificate reference: group, kind, name, namespace.
fn secret_ref(reference: &SecretObjectReference, path: &str, errors: &mut Errors) {
    if let Some(value) = &reference.group {
        group(value, &format!("{path}.group"), errors);
    }
    if let Some(value) = &reference.kind {
        kind(value, &format!("{path}.kind"), errors);
    }
    object_name(&reference.name, &format!("{path}.name"), errors);
    if let Some(value) = &reference.namespace {
        namespace(value, &format!("{path}.namespace"), errors);
    }
}

/// Client-certificate settings: 1 to 16 CA references, the mode.
fn tls_config(config: &TlsConfig, path: &str, errors: &mut Errors) {
    let Some(validation) = &config.validation else {
        return;
    };
    let path = format!("{path}.validation");
    let refs = &validation.ca_certificate_refs;
    let refs_field = format!("{path}.caCertificateRefs");
    if refs.is_empty() {
        errors.required(&refs_field, "must have at least 1 item");
    }
    at_most(refs, 16, &refs_field, errors);
    for (position, reference) in refs.iter().enumerate() {
        ca_ref(reference, &index(&refs_field, position), errors);
    }
    if let Some(mode) = &validation.mode {
        let modes = ["AllowValidOnly", "AllowInsecureFallback"];
        one_of(mode, &modes, &format!("{path}.mode"), errors);
    }
}

/// A CA certificate reference: group, kind, name, namespace.
fn ca_ref(reference: &CaCertificateReference, path: &str, errors: &mut Errors) {
    group(&reference.group, &format!("{path}.group"), errors);
    kind(&reference.kind, &format!("{path}.kind"), errors);
    object_name(&reference.name, &format!("{path}.name"), errors);
    if let Some(value) = &reference.namespace {
        namespace(value, &format!("{path}.namespace"), errors);
    }
}
