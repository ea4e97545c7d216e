//! HTTPRoutes and GRPCRoutes, as their CRD schemas (`gateway.networking.k8s.io_httproutes.yaml`,
//! `…_grpcroutes.yaml`, standard channel, v1.6.1).

use super::{
    at_most, backend_fields, bounded, duplicate_name, filter_fields, filters_once, header_matches,
    header_modifier, hostname, longer_than, one_of, parent_refs, port, precise_hostname,
    request_mirror, section_name, weight,
};
use crate::gateway::{
    BackendRef, CorsFilter, GrpcRoute, GrpcRouteFilter, GrpcRouteMatch, HttpPathMatch,
    HttpPathModifier, HttpRoute, HttpRouteFilter, HttpRouteMatch, HttpRouteRule, HttpRouteTimeouts,
    LocalObjectReference,
};
use crate::validate::field::{Errors, index};
use crate::validate::meta::{NameRule, object_meta};

/// The most rules of a route.
const MAX_RULES: usize = 16;
/// The most matches of a rule.
const MAX_MATCHES: usize = 64;
/// The most matches of all the rules of a route, plus one (the CRD says "less than 128").
const MAX_ROUTE_MATCHES: usize = 127;
/// The most filters of a rule or a backend, and backends of a rule.
const MAX_FILTERS: usize = 16;
/// The longest path, path replacement, query parameter value, or gRPC service or method.
const MAX_PATH_LENGTH: usize = 1024;
/// The methods a match may require.
const METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];
/// The filter types of an HTTPRoute and the field each one sets (`ExternalAuth` is the
/// experimental channel's; its field is not typed).
const HTTP_FILTERS: &[(&str, &str)] = &[
    ("RequestHeaderModifier", "requestHeaderModifier"),
    ("ResponseHeaderModifier", "responseHeaderModifier"),
    ("RequestMirror", "requestMirror"),
    ("RequestRedirect", "requestRedirect"),
    ("URLRewrite", "urlRewrite"),
    ("ExtensionRef", "extensionRef"),
    ("CORS", "cors"),
    ("ExternalAuth", "externalAuth"),
];
/// The filter types of a GRPCRoute and the field each one sets.
const GRPC_FILTERS: &[(&str, &str)] = &[
    ("ResponseHeaderModifier", "responseHeaderModifier"),
    ("RequestHeaderModifier", "requestHeaderModifier"),
    ("RequestMirror", "requestMirror"),
    ("ExtensionRef", "extensionRef"),
];
/// What an Exact or PathPrefix path may not contain.
const INVALID_PATH_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F", "#"];
/// What an Exact or PathPrefix path may not end with.
const INVALID_PATH_SUFFIXES: &[&str] = &["/..", "/."];

/// As the CRD of HTTPRoute: metadata, parents, host names, rules.
pub(in crate::validate) fn validate_http_route(route: &HttpRoute, errors: &mut Errors) {
    object_meta(&route.metadata, true, NameRule::Dns1123Subdomain, errors);
    let spec = &route.spec;
    parent_refs(spec.parent_refs(), errors);
    hostnames(spec.hostnames(), errors);
    let rules = spec.rules.as_deref().unwrap_or_default();
    if spec.rules.is_some() && rules.is_empty() {
        errors.required("spec.rules", "must have at least 1 item");
    }
    at_most(rules, MAX_RULES, "spec.rules", errors);
    let total: usize = rules.iter().map(|rule| rule.matches().len()).sum();
    if total > MAX_ROUTE_MATCHES {
        errors.too_many("spec.rules", total, MAX_ROUTE_MATCHES);
    }
    for (position, rule) in rules.iter().enumerate() {
        http_rule(rule, &index("spec.rules", position), errors);
    }
}

/// The host names of a route: at most 16, each possibly a wildcard.
fn hostnames(names: &[String], errors: &mut Errors) {
    at_most(names, 16, "spec.hostnames", errors);
    for (position, name) in names.iter().enumerate() {
        hostname(name, &index("spec.hostnames", position), errors);
    }
}

/// One HTTPRoute rule: name, matches, filters, backends, timeouts, and the CEL rules tying
/// them together.
fn http_rule(rule: &HttpRouteRule, path: &str, errors: &mut Errors) {
    if let Some(name) = &rule.name {
        section_name(name, &format!("{path}.name"), errors);
    }
    let matches = rule.matches();
    let matches_field = format!("{path}.matches");
    at_most(&matches, MAX_MATCHES, &matches_field, errors);
    for (position, route_match) in matches.iter().enumerate() {
        http_match(route_match, &index(&matches_field, position), errors);
    }
    let filters = rule.filters();
    http_filters(filters, &format!("{path}.filters"), errors);
    let backends = rule.backend_refs();
    let backends_field = format!("{path}.backendRefs");
    at_most(backends, MAX_FILTERS, &backends_field, errors);
    for (position, backend) in backends.iter().enumerate() {
        let item = index(&backends_field, position);
        backend_ref(backend, &item, errors);
        http_filters(backend.filters(), &format!("{item}.filters"), errors);
    }
    if !backends.is_empty() && filters.iter().any(|f| f.request_redirect.is_some()) {
        let why = "RequestRedirect filter must not be used together with backendRefs";
        errors.forbidden(&format!("{path}.filters"), why);
    }
    let one_prefix_match = matches.len() == 1
        && matches
            .first()
            .is_some_and(|m| m.path().match_type() == "PathPrefix");
    let replaces_prefix = |filters: &[HttpRouteFilter]| {
        filters.iter().any(|filter| {
            let redirect = filter
                .request_redirect
                .as_ref()
                .and_then(|r| r.path.as_ref());
            let rewrite = filter.url_rewrite.as_ref().and_then(|r| r.path.as_ref());
            [redirect, rewrite].into_iter().flatten().any(|modifier| {
                modifier.type_ == "ReplacePrefixMatch" && modifier.replace_prefix_match.is_some()
            })
        })
    };
    let in_backends = backends.iter().any(|b| replaces_prefix(b.filters()));
    if !one_prefix_match && (replaces_prefix(filters) || in_backends) {
        let why = "When using a RequestRedirect or URLRewrite filter with \
                   path.replacePrefixMatch, exactly one PathPrefix match must be specified";
        errors.forbidden(&matches_field, why);
    }
    if let Some(timeouts) = &rule.timeouts {
        http_timeouts(timeouts, &format!("{path}.timeouts"), errors);
    }
}

/// One match of an HTTPRoute rule.
fn http_match(route_match: &HttpRouteMatch, path: &str, errors: &mut Errors) {
    if let Some(path_match) = &route_match.path {
        http_path_match(path_match, &format!("{path}.path"), errors);
    }
    header_matches(route_match.headers(), &format!("{path}.headers"), errors);
    let params = route_match.query_params();
    let params_field = format!("{path}.queryParams");
    at_most(params, 16, &params_field, errors);
    for (position, param) in params.iter().enumerate() {
        let item = index(&params_field, position);
        if let Some(value) = &param.type_ {
            one_of(
                value,
                &["Exact", "RegularExpression"],
                &format!("{item}.type"),
                errors,
            );
        }
        let name_field = format!("{item}.name");
        // The CRD gives a parameter name the pattern and length of a header name.
        super::header_name(&param.name, &name_field, errors);
        if duplicate_name(params, position, |p| &p.name) {
            errors.duplicate(&name_field, &param.name);
        }
        bounded(
            &param.value,
            MAX_PATH_LENGTH,
            &format!("{item}.value"),
            errors,
        );
    }
    if let Some(method) = &route_match.method {
        one_of(method, METHODS, &format!("{path}.method"), errors);
    }
}

/// Whether `value` is made of the characters a path may hold: unreserved and sub-delimiter
/// characters, `/`, `:`, `@`, and `%` escapes of two hex digits.
fn is_path_text(value: &str) -> bool {
    let bytes = value.as_bytes();
    let mut position = 0;
    while let Some(&byte) = bytes.get(position) {
        if byte == b'%' {
            let escape = bytes.get(position + 1..position + 3);
            if !escape.is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
                return false;
            }
            position += 3;
        } else if byte.is_ascii_alphanumeric() || b"-/._~!$&'()*+,;=:@".contains(&byte) {
            position += 1;
        } else {
            return false;
        }
    }
    true
}

/// A path condition: its type, and for `Exact` and `PathPrefix`, an absolute, normalised path
/// of path characters (as the CRD's CEL rules).
fn http_path_match(path_match: &HttpPathMatch, path: &str, errors: &mut Errors) {
    let match_type = path_match.match_type();
    one_of(
        match_type,
        &["Exact", "PathPrefix", "RegularExpression"],
        &format!("{path}.type"),
        errors,
    );
    let value = path_match.value();
    let field = format!("{path}.value");
    if longer_than(value, MAX_PATH_LENGTH) {
        errors.too_long(&field, MAX_PATH_LENGTH);
    }
    if !matches!(match_type, "Exact" | "PathPrefix") {
        return;
    }
    if !value.starts_with('/') {
        errors.invalid(
            &field,
            value,
            "value must be an absolute path and start with '/'",
        );
    }
    for sequence in INVALID_PATH_SEQUENCES {
        if value.contains(sequence) {
            errors.invalid(&field, value, &format!("must not contain '{sequence}'"));
        }
    }
    for suffix in INVALID_PATH_SUFFIXES {
        if value.ends_with(suffix) {
            errors.invalid(&field, value, &format!("must not end with '{suffix}'"));
        }
    }
    if value.is_empty() || !is_path_text(value) {
        let why = "must only contain valid characters (letters, digits, \
                   -/._~!$&'()*+,;=:@ and %XX escapes)";
        errors.invalid(&field, value, why);
    }
}

/// The filters of a rule or a backend: at most 16, each well formed, and the CEL rules on the
/// list (no redirect beside a rewrite, at most one of most types).
fn http_filters(filters: &[HttpRouteFilter], path: &str, errors: &mut Errors) {
    at_most(filters, MAX_FILTERS, path, errors);
    for (position, filter) in filters.iter().enumerate() {
        http_filter(filter, &index(path, position), errors);
    }
    let types: Vec<&str> = filters.iter().map(|f| f.type_.as_str()).collect();
    if types.contains(&"RequestRedirect") && types.contains(&"URLRewrite") {
        let why = "May specify either httpRouteFilterRequestRedirect or \
                   httpRouteFilterRequestRewrite, but not both";
        errors.forbidden(path, why);
    }
    let once = [
        "CORS",
        "RequestHeaderModifier",
        "ResponseHeaderModifier",
        "RequestRedirect",
        "URLRewrite",
    ];
    filters_once(&types, &once, path, errors);
}

/// One HTTPRoute filter.
fn http_filter(filter: &HttpRouteFilter, path: &str, errors: &mut Errors) {
    let present = [
        (
            "requestHeaderModifier",
            filter.request_header_modifier.is_some(),
        ),
        (
            "responseHeaderModifier",
            filter.response_header_modifier.is_some(),
        ),
        ("requestMirror", filter.request_mirror.is_some()),
        ("requestRedirect", filter.request_redirect.is_some()),
        ("urlRewrite", filter.url_rewrite.is_some()),
        ("extensionRef", filter.extension_ref.is_some()),
        ("cors", filter.cors.is_some()),
    ];
    filter_fields(&filter.type_, HTTP_FILTERS, &present, path, errors);
    if let Some(modifier) = &filter.request_header_modifier {
        header_modifier(modifier, &format!("{path}.requestHeaderModifier"), errors);
    }
    if let Some(modifier) = &filter.response_header_modifier {
        header_modifier(modifier, &format!("{path}.responseHeaderModifier"), errors);
    }
    if let Some(mirror) = &filter.request_mirror {
        request_mirror(mirror, &format!("{path}.requestMirror"), errors);
    }
    if let Some(redirect) = &filter.request_redirect {
        let field = format!("{path}.requestRedirect");
        if let Some(scheme) = &redirect.scheme {
            one_of(
                scheme,
                &["http", "https"],
                &format!("{field}.scheme"),
                errors,
            );
        }
        if let Some(host) = &redirect.hostname {
            precise_hostname(host, &format!("{field}.hostname"), errors);
        }
        if let Some(modifier) = &redirect.path {
            path_modifier(modifier, &format!("{field}.path"), errors);
        }
        if let Some(value) = redirect.port {
            port(value, &format!("{field}.port"), errors);
        }
        let status = redirect.status_code();
        if ![301, 302, 303, 307, 308].contains(&status) {
            let field = format!("{field}.statusCode");
            let status = status.to_string();
            errors.unsupported(&field, &status, &["301", "302", "303", "307", "308"]);
        }
    }
    if let Some(rewrite) = &filter.url_rewrite {
        let field = format!("{path}.urlRewrite");
        if let Some(host) = &rewrite.hostname {
            precise_hostname(host, &format!("{field}.hostname"), errors);
        }
        if let Some(modifier) = &rewrite.path {
            path_modifier(modifier, &format!("{field}.path"), errors);
        }
    }
    if let Some(reference) = &filter.extension_ref {
        extension_ref(reference, &format!("{path}.extensionRef"), errors);
    }
    if let Some(cors) = &filter.cors {
        cors_filter(cors, &format!("{path}.cors"), errors);
    }
}

/// A path replacement: its type, the one field the type names, and (ours) path characters.
fn path_modifier(modifier: &HttpPathModifier, path: &str, errors: &mut Errors) {
    let type_field = format!("{path}.type");
    one_of(
        &modifier.type_,
        &["ReplaceFullPath", "ReplacePrefixMatch"],
        &type_field,
        errors,
    );
    let fields = [
        (
            "replaceFullPath",
            "ReplaceFullPath",
            &modifier.replace_full_path,
        ),
        (
            "replacePrefixMatch",
            "ReplacePrefixMatch",
            &modifier.replace_prefix_match,
        ),
    ];
    for (name, type_, value) in fields {
        let field = format!("{path}.{name}");
        match value {
            None if modifier.type_ == type_ => {
                errors.required(
                    &field,
                    &format!("{name} must be specified when type is set to '{type_}'"),
                );
            }
            Some(_) if modifier.type_ != type_ => {
                errors.forbidden(
                    &field,
                    &format!("type must be '{type_}' when {name} is set"),
                );
            }
            Some(value) => {
                if longer_than(value, MAX_PATH_LENGTH) {
                    errors.too_long(&field, MAX_PATH_LENGTH);
                }
                if !is_path_text(value) {
                    let why = "must only contain path characters (letters, digits, \
                               -/._~!$&'()*+,;=:@ and %XX escapes)";
                    errors.invalid(&field, value, why);
                }
            }
            None => {}
        }
    }
}

/// An `ExtensionRef` filter's object: group, kind and name.
fn extension_ref(reference: &LocalObjectReference, path: &str, errors: &mut Errors) {
    super::group(&reference.group, &format!("{path}.group"), errors);
    super::kind(&reference.kind, &format!("{path}.kind"), errors);
    super::object_name(&reference.name, &format!("{path}.name"), errors);
}

/// A CORS filter: origins, methods and headers well formed, `*` alone, a positive maximum
/// age.
fn cors_filter(cors: &CorsFilter, path: &str, errors: &mut Errors) {
    let origins = cors.allow_origins.as_deref().unwrap_or_default();
    let field = format!("{path}.allowOrigins");
    star_alone(origins, &field, errors);
    at_most(origins, 64, &field, errors);
    for (position, origin) in origins.iter().enumerate() {
        let item = index(&field, position);
        bounded(origin, 253, &item, errors);
        if !is_origin(origin) {
            let why = "must be '*' or http(s)://HOST[:PORT], HOST a name that may start with \
                       '*.'";
            errors.invalid(&item, origin, why);
        }
    }
    let methods = cors.allow_methods.as_deref().unwrap_or_default();
    let field = format!("{path}.allowMethods");
    star_alone(methods, &field, errors);
    at_most(methods, 9, &field, errors);
    for (position, method) in methods.iter().enumerate() {
        let mut supported = METHODS.to_vec();
        supported.push("*");
        one_of(method, &supported, &index(&field, position), errors);
    }
    for (name, headers) in [
        ("allowHeaders", &cors.allow_headers),
        ("exposeHeaders", &cors.expose_headers),
    ] {
        let headers = headers.as_deref().unwrap_or_default();
        let field = format!("{path}.{name}");
        if name == "allowHeaders" {
            star_alone(headers, &field, errors);
        }
        at_most(headers, 64, &field, errors);
        for (position, header) in headers.iter().enumerate() {
            super::header_name(header, &index(&field, position), errors);
        }
    }
    if let Some(age) = cors.max_age
        && age < 1
    {
        let why = "must be greater than or equal to 1";
        errors.invalid_number(&format!("{path}.maxAge"), age.into(), why);
    }
}

/// `*` may only stand alone in a CORS list.
fn star_alone(values: &[String], field: &str, errors: &mut Errors) {
    if values.len() > 1 && values.iter().any(|v| v == "*") {
        errors.invalid(field, "*", "cannot contain '*' alongside other values");
    }
}

/// Whether `origin` is `*` or `http(s)://HOST[:PORT]` as the CRD's pattern: HOST `*`, or
/// labels of letters, digits and `-` joined by dots, optionally after `*.`; PORT 1 to 5
/// digits.
fn is_origin(origin: &str) -> bool {
    if origin == "*" {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
    else {
        return false;
    };
    let (host, port) = match rest.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let port_ok =
        port.is_none_or(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    let host = host.strip_prefix("*.").unwrap_or(host);
    let label =
        |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    port_ok && (host == "*" || host.split('.').all(label))
}

/// The timeouts of a rule: Gateway API durations, the backend's at most the request's
/// (unless that one is `0s`, no limit).
fn http_timeouts(timeouts: &HttpRouteTimeouts, path: &str, errors: &mut Errors) {
    let request = timeouts
        .request
        .as_ref()
        .and_then(|value| duration(value, &format!("{path}.request"), errors));
    let backend = timeouts
        .backend_request
        .as_ref()
        .and_then(|value| duration(value, &format!("{path}.backendRequest"), errors));
    if let (Some(request), Some(backend)) = (request, backend)
        && request != 0
        && backend > request
    {
        let why = "backendRequest timeout cannot be longer than request timeout";
        let value = timeouts.backend_request.as_deref().unwrap_or_default();
        errors.invalid(&format!("{path}.backendRequest"), value, why);
    }
}

/// A Gateway API duration (`^([0-9]{1,5}(h|m|s|ms)){1,4}$`), in milliseconds; `None` (with an
/// error) when it is not one.
pub(super) fn duration(value: &str, field: &str, errors: &mut Errors) -> Option<u64> {
    let parsed = parse_duration(value);
    if parsed.is_none() {
        let why = "must be 1 to 4 numbers of 1 to 5 digits each followed by a unit (h, m, s, \
                   ms), such as 1h30m or 500ms";
        errors.invalid(field, value, why);
    }
    parsed
}

/// [`duration`]'s parser.
fn parse_duration(value: &str) -> Option<u64> {
    let mut rest = value;
    let mut parts = 0;
    let mut total = 0u64;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if !(1..=5).contains(&digits) {
            return None;
        }
        let (number, after) = rest.split_at(digits);
        let number: u64 = number.parse().ok()?;
        let (unit, after) = if let Some(after) = after.strip_prefix("ms") {
            (1, after)
        } else if let Some(after) = after.strip_prefix('h') {
            (3_600_000, after)
        } else if let Some(after) = after.strip_prefix('m') {
            (60_000, after)
        } else if let Some(after) = after.strip_prefix('s') {
            (1_000, after)
        } else {
            return None;
        };
        total += number * unit;
        parts += 1;
        rest = after;
    }
    (1..=4).contains(&parts).then_some(total)
}

/// A backend of a rule: the reference and its weight.
fn backend_ref<F>(backend: &BackendRef<F>, path: &str, errors: &mut Errors) {
    backend_fields(
        backend.group.as_deref(),
        backend.kind.as_deref(),
        &backend.name,
        backend.namespace.as_deref(),
        backend.port,
        path,
        errors,
    );
    if let Some(value) = backend.weight {
        weight(value, &format!("{path}.weight"), errors);
    }
}

/// As the CRD of GRPCRoute: metadata, parents, host names, rules.
pub(in crate::validate) fn validate_grpc_route(route: &GrpcRoute, errors: &mut Errors) {
    object_meta(&route.metadata, true, NameRule::Dns1123Subdomain, errors);
    let spec = &route.spec;
    parent_refs(spec.parent_refs(), errors);
    hostnames(spec.hostnames(), errors);
    let rules = spec.rules();
    at_most(rules, MAX_RULES, "spec.rules", errors);
    let total: usize = rules.iter().map(|rule| rule.matches().len()).sum();
    if total > MAX_ROUTE_MATCHES {
        errors.too_many("spec.rules", total, MAX_ROUTE_MATCHES);
    }
    for (position, rule) in rules.iter().enumerate() {
        let path = index("spec.rules", position);
        if let Some(name) = &rule.name {
            section_name(name, &format!("{path}.name"), errors);
        }
        let matches_field = format!("{path}.matches");
        at_most(rule.matches(), MAX_MATCHES, &matches_field, errors);
        for (number, route_match) in rule.matches().iter().enumerate() {
            grpc_match(route_match, &index(&matches_field, number), errors);
        }
        grpc_filters(rule.filters(), &format!("{path}.filters"), errors);
        let backends_field = format!("{path}.backendRefs");
        at_most(rule.backend_refs(), MAX_FILTERS, &backends_field, errors);
        for (number, backend) in rule.backend_refs().iter().enumerate() {
            let item = index(&backends_field, number);
            backend_ref(backend, &item, errors);
            grpc_filters(backend.filters(), &format!("{item}.filters"), errors);
        }
    }
}

/// One match of a GRPCRoute rule: the method condition (service and method names as the
/// CRD's CEL rules) and headers.
fn grpc_match(route_match: &GrpcRouteMatch, path: &str, errors: &mut Errors) {
    if let Some(method) = &route_match.method {
        let field = format!("{path}.method");
        let match_type = method.match_type();
        one_of(
            match_type,
            &["Exact", "RegularExpression"],
            &format!("{field}.type"),
            errors,
        );
        if method.service.is_none() && method.method.is_none() {
            errors.required(
                &field,
                "One or both of 'service' or 'method' must be specified",
            );
        }
        if let Some(service) = &method.service {
            let service_field = format!("{field}.service");
            if longer_than(service, MAX_PATH_LENGTH) {
                errors.too_long(&service_field, MAX_PATH_LENGTH);
            }
            if match_type == "Exact" && !is_grpc_service(service) {
                let why = "must be dot-separated names of letters, digits and '_', each \
                           starting with a letter or '_', optionally after a '.'";
                errors.invalid(&service_field, service, why);
            }
        }
        if let Some(name) = &method.method {
            let method_field = format!("{field}.method");
            if longer_than(name, MAX_PATH_LENGTH) {
                errors.too_long(&method_field, MAX_PATH_LENGTH);
            }
            if match_type == "Exact" && !is_grpc_name(name) {
                let why = "must be letters, digits and '_', starting with a letter or '_'";
                errors.invalid(&method_field, name, why);
            }
        }
    }
    header_matches(route_match.headers(), &format!("{path}.headers"), errors);
}

/// Whether `value` is `[A-Za-z_][A-Za-z_0-9]*`.
fn is_grpc_name(value: &str) -> bool {
    value.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `value` is `\.?NAME(\.NAME)*` with names as [`is_grpc_name`].
fn is_grpc_service(value: &str) -> bool {
    let value = value.strip_prefix('.').unwrap_or(value);
    value.split('.').all(is_grpc_name)
}

/// The filters of a GRPCRoute rule or backend.
fn grpc_filters(filters: &[GrpcRouteFilter], path: &str, errors: &mut Errors) {
    at_most(filters, MAX_FILTERS, path, errors);
    for (position, filter) in filters.iter().enumerate() {
        let item = index(path, position);
        let present = [
            (
                "requestHeaderModifier",
                filter.request_header_modifier.is_some(),
            ),
            (
                "responseHeaderModifier",
                filter.response_header_modifier.is_some(),
            ),
            ("requestMirror", filter.request_mirror.is_some()),
            ("extensionRef", filter.extension_ref.is_some()),
        ];
        filter_fields(&filter.type_, GRPC_FILTERS, &present, &item, errors);
        if let Some(modifier) = &filter.request_header_modifier {
            header_modifier(modifier, &format!("{item}.requestHeaderModifier"), errors);
        }
        if let Some(modifier) = &filter.response_header_modifier {
            header_modifier(modifier, &format!("{item}.responseHeaderModifier"), errors);
        }
        if let Some(mirror) = &filter.request_mirror {
            request_mirror(mirror, &format!("{item}.requestMirror"), errors);
        }
        if let Some(reference) = &filter.extension_ref {
            extension_ref(reference, &format!("{item}.extensionRef"), errors);
        }
    }
    let types: Vec<&str> = filters.iter().map(|f| f.type_.as_str()).collect();
    filters_once(
        &types,
        &["RequestHeaderModifier", "ResponseHeaderModifier"],
        path,
        errors,
    );
}
