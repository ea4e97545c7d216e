//! The Gateway API kinds, as the API server applies their v1.6.1 standard-channel CRD schemas
//! (`config/crd/standard/*.yaml` of kubernetes-sigs/gateway-api): the `maxLength`,
//! `maxItems`, `enum`, `pattern` and range constraints, and the `x-kubernetes-validations`
//! (CEL) rules that keep a value from becoming something else once rendered (hostnames, paths,
//! header names and values, redirects, ports, weights, names).
//!
//! Where the CRDs of the experimental channel accept more (the `ExternalAuth` filter type), the
//! more permissive form is kept, as elsewhere in [`crate::validate`]. Three rules are ours, not
//! the CRD's, because a value that breaks them can only be an attack on what it is rendered
//! into: header values (set, added or matched) may not hold control characters other than tab
//! (RFC 9110's field-value; the experimental CRD has a stricter pattern), header names to
//! remove must be HTTP tokens like every other header name, and redirect and rewrite paths
//! must use the characters a path match may use. Status is not checked: the binaries write it.

mod gateways;
mod routes;

pub(super) use gateways::{validate_class, validate_gateway, validate_reference_grant};
pub(super) use routes::{validate_grpc_route, validate_http_route};

use super::field::{Errors, index};
use super::names;
use crate::gateway::{
    BackendObjectReference, Header, HeaderMatch, HeaderModifier, ParentReference, RequestMirror,
};

/// The longest object name a reference may hold.
const MAX_NAME_LENGTH: usize = 253;
/// The longest kind name.
const MAX_KIND_LENGTH: usize = 63;
/// The longest header name.
const MAX_HEADER_NAME_LENGTH: usize = 256;
/// The longest header value (set, added or matched).
const MAX_HEADER_VALUE_LENGTH: usize = 4096;
/// The most headers a modifier sets, adds or removes, and a match requires.
const MAX_HEADERS: usize = 16;
/// The highest weight of a backend.
const MAX_WEIGHT: i32 = 1_000_000;

/// Whether `value` is longer than `max` characters (the CRDs' `maxLength` counts characters).
fn longer_than(value: &str, max: usize) -> bool {
    value.chars().nth(max).is_some()
}

/// A string the CRD bounds to `1..=max` characters.
fn bounded(value: &str, max: usize, field: &str, errors: &mut Errors) {
    if value.is_empty() {
        errors.required(field, "");
    } else if longer_than(value, max) {
        errors.too_long(field, max);
    }
}

/// A list the CRD bounds to `max` items.
fn at_most<T>(items: &[T], max: usize, field: &str, errors: &mut Errors) {
    if items.len() > max {
        errors.too_many(field, items.len(), max);
    }
}

/// A value the CRD restricts to `supported`.
fn one_of(value: &str, supported: &[&str], field: &str, errors: &mut Errors) {
    if !supported.contains(&value) {
        errors.unsupported(field, value, supported);
    }
}

/// The name of a referenced object: 1 to 253 characters.
fn object_name(value: &str, field: &str, errors: &mut Errors) {
    bounded(value, MAX_NAME_LENGTH, field, errors);
}

/// An API group: empty (the core group) or a DNS-1123 subdomain.
fn group(value: &str, field: &str, errors: &mut Errors) {
    if !value.is_empty() {
        errors.invalid_each(field, value, names::dns1123_subdomain(value));
    }
}

/// A kind: a letter, then letters, digits and `-`, ending with a letter or digit; at most 63.
fn kind(value: &str, field: &str, errors: &mut Errors) {
    bounded(value, MAX_KIND_LENGTH, field, errors);
    let fits = value.starts_with(|c: char| c.is_ascii_alphabetic())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric())
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !value.is_empty() && !fits {
        let why = "a kind is letters, digits and '-', starting with a letter and ending with a \
                   letter or digit";
        errors.invalid(field, value, why);
    }
}

/// A namespace: a DNS-1123 label.
fn namespace(value: &str, field: &str, errors: &mut Errors) {
    errors.invalid_each(field, value, names::dns1123_label(value));
}

/// A section (listener) or rule name: a DNS-1123 subdomain.
fn section_name(value: &str, field: &str, errors: &mut Errors) {
    errors.invalid_each(field, value, names::dns1123_subdomain(value));
}

/// A port number: 1 to 65535.
fn port(value: i32, field: &str, errors: &mut Errors) {
    for why in names::port_number(value.into()) {
        errors.invalid_number(field, value.into(), &why);
    }
}

/// A host name that may start with `*.` (a listener's or a route's).
fn hostname(value: &str, field: &str, errors: &mut Errors) {
    let messages = if value.starts_with('*') {
        names::wildcard_dns1123_subdomain(value)
    } else {
        names::dns1123_subdomain(value)
    };
    errors.invalid_each(field, value, messages);
}

/// A host name without wildcard (a redirect's or a rewrite's).
fn precise_hostname(value: &str, field: &str, errors: &mut Errors) {
    errors.invalid_each(field, value, names::dns1123_subdomain(value));
}

/// Whether `c` may appear in an HTTP token (RFC 9110 `tchar`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// A header name: an HTTP token of at most 256 characters.
fn header_name(value: &str, field: &str, errors: &mut Errors) {
    bounded(value, MAX_HEADER_NAME_LENGTH, field, errors);
    if !value.is_empty() && !value.chars().all(is_token_char) {
        let why = "must be an HTTP token: letters, digits and !#$%&'*+-.^_`|~";
        errors.invalid(field, value, why);
    }
}

/// A header value of 1 to `max` characters without control characters other than tab (ours:
/// RFC 9110's field-value, which no request or response can carry otherwise).
fn header_value(value: &str, max: usize, field: &str, errors: &mut Errors) {
    bounded(value, max, field, errors);
    if value.chars().any(|c| c.is_control() && c != '\t') {
        errors.invalid(
            field,
            value,
            "must not contain control characters other than tab",
        );
    }
}

/// The parent references of a route: at most 32, each well formed, and as the CRD's CEL rules
/// say, references to one parent either all name a section or none does, and no two are alike.
fn parent_refs(refs: &[ParentReference], errors: &mut Errors) {
    const FIELD: &str = "spec.parentRefs";
    at_most(refs, 32, FIELD, errors);
    for (position, reference) in refs.iter().enumerate() {
        let path = index(FIELD, position);
        parent_ref(reference, &path, errors);
    }
    let same_parent = |a: &ParentReference, b: &ParentReference| {
        a.group() == b.group()
            && a.kind() == b.kind()
            && a.name == b.name
            && a.namespace.as_deref().unwrap_or_default()
                == b.namespace.as_deref().unwrap_or_default()
    };
    let section = |r: &ParentReference| r.section_name.as_deref().unwrap_or_default().to_owned();
    for (position, reference) in refs.iter().enumerate() {
        let earlier = refs.get(..position).unwrap_or_default();
        let field = index(FIELD, position);
        if earlier.iter().any(|other| {
            same_parent(reference, other)
                && section(reference).is_empty() != section(other).is_empty()
        }) {
            let why = "sectionName must be specified when parentRefs includes 2 or more \
                       references to the same parent";
            errors.invalid(&field, &reference.name, why);
        } else if earlier
            .iter()
            .any(|other| same_parent(reference, other) && section(reference) == section(other))
        {
            let why = "sectionName must be unique when parentRefs includes 2 or more \
                       references to the same parent";
            errors.invalid(&field, &reference.name, why);
        }
    }
}

/// One parent reference.
fn parent_ref(reference: &ParentReference, path: &str, errors: &mut Errors) {
    if let Some(value) = &reference.group {
        group(value, &format!("{path}.group"), errors);
    }
    if let Some(value) = &reference.kind {
        kind(value, &format!("{path}.kind"), errors);
    }
    if let Some(value) = &reference.namespace {
        namespace(value, &format!("{path}.namespace"), errors);
    }
    object_name(&reference.name, &format!("{path}.name"), errors);
    if let Some(value) = &reference.section_name {
        section_name(value, &format!("{path}.sectionName"), errors);
    }
    if let Some(value) = reference.port {
        port(value, &format!("{path}.port"), errors);
    }
}

/// The fields of a backend reference, and its port, required for a Service.
fn backend_fields(
    group_value: Option<&str>,
    kind_value: Option<&str>,
    name: &str,
    namespace_value: Option<&str>,
    port_value: Option<i32>,
    path: &str,
    errors: &mut Errors,
) {
    if let Some(value) = group_value {
        group(value, &format!("{path}.group"), errors);
    }
    if let Some(value) = kind_value {
        kind(value, &format!("{path}.kind"), errors);
    }
    object_name(name, &format!("{path}.name"), errors);
    if let Some(value) = namespace_value {
        namespace(value, &format!("{path}.namespace"), errors);
    }
    match port_value {
        Some(value) => port(value, &format!("{path}.port"), errors),
        None if group_value.unwrap_or_default().is_empty()
            && kind_value.unwrap_or("Service") == "Service" =>
        {
            errors.required(
                &format!("{path}.port"),
                "Must have port for Service reference",
            );
        }
        None => {}
    }
}

/// A backend reference without weight (a mirror's).
fn backend_object_ref(reference: &BackendObjectReference, path: &str, errors: &mut Errors) {
    backend_fields(
        reference.group.as_deref(),
        reference.kind.as_deref(),
        &reference.name,
        reference.namespace.as_deref(),
        reference.port,
        path,
        errors,
    );
}

/// The weight of a backend: 0 to 1,000,000.
fn weight(value: i32, field: &str, errors: &mut Errors) {
    if !(0..=MAX_WEIGHT).contains(&value) {
        errors.invalid_number(
            field,
            value.into(),
            "must be between 0 and 1000000, inclusive",
        );
    }
}

/// The header conditions of a match: at most 16, names unique, each well formed.
fn header_matches(matches: &[HeaderMatch], path: &str, errors: &mut Errors) {
    at_most(matches, MAX_HEADERS, path, errors);
    for (position, header) in matches.iter().enumerate() {
        let item = index(path, position);
        if let Some(value) = &header.type_ {
            one_of(
                value,
                &["Exact", "RegularExpression"],
                &format!("{item}.type"),
                errors,
            );
        }
        header_name(&header.name, &format!("{item}.name"), errors);
        let value_field = format!("{item}.value");
        header_value(&header.value, MAX_HEADER_VALUE_LENGTH, &value_field, errors);
        if duplicate_name(matches, position, |h| &h.name) {
            errors.duplicate(&format!("{item}.name"), &header.name);
        }
    }
}

/// Whether the item at `position` of a list keyed by `name` (an `x-kubernetes-list-type: map`
/// list) repeats an earlier item's key. Keys are compared exactly, as the API server compares
/// them: header names that differ in case only are allowed (the specification says which of
/// them counts).
fn duplicate_name<T>(items: &[T], position: usize, name: impl Fn(&T) -> &String) -> bool {
    let earlier = items.get(..position).unwrap_or_default();
    items
        .get(position)
        .is_some_and(|item| earlier.iter().any(|other| name(other) == name(item)))
}

/// A header modifier: at most 16 headers set, added and removed, each name an HTTP token and
/// each value a field value; no name twice in one list.
fn header_modifier(modifier: &HeaderModifier, path: &str, errors: &mut Errors) {
    for (list, headers) in [("set", &modifier.set), ("add", &modifier.add)] {
        let headers: &[Header] = headers.as_deref().unwrap_or_default();
        let field = format!("{path}.{list}");
        at_most(headers, MAX_HEADERS, &field, errors);
        for (position, header) in headers.iter().enumerate() {
            let item = index(&field, position);
            header_name(&header.name, &format!("{item}.name"), errors);
            let value_field = format!("{item}.value");
            header_value(&header.value, MAX_HEADER_VALUE_LENGTH, &value_field, errors);
            if duplicate_name(headers, position, |h| &h.name) {
                errors.duplicate(&format!("{item}.name"), &header.name);
            }
        }
    }
    let remove = modifier.remove.as_deref().unwrap_or_default();
    let field = format!("{path}.remove");
    at_most(remove, MAX_HEADERS, &field, errors);
    for (position, name) in remove.iter().enumerate() {
        let item = index(&field, position);
        header_name(name, &item, errors);
        if duplicate_name(remove, position, |n| n) {
            errors.duplicate(&item, name);
        }
    }
}

/// A request mirror: its backend, and a percentage (0 to 100) or a fraction (numerator at
/// most the denominator, which is at least 1), not both.
fn request_mirror(mirror: &RequestMirror, path: &str, errors: &mut Errors) {
    backend_object_ref(&mirror.backend_ref, &format!("{path}.backendRef"), errors);
    if let Some(percent) = mirror.percent
        && !(0..=100).contains(&percent)
    {
        let why = "must be between 0 and 100, inclusive";
        errors.invalid_number(&format!("{path}.percent"), percent.into(), why);
    }
    if let Some(fraction) = &mirror.fraction {
        let field = format!("{path}.fraction");
        if fraction.numerator < 0 {
            let why = "must be greater than or equal to 0";
            errors.invalid_number(
                &format!("{field}.numerator"),
                fraction.numerator.into(),
                why,
            );
        }
        if fraction.denominator() < 1 {
            let why = "must be greater than or equal to 1";
            let denominator = fraction.denominator().into();
            errors.invalid_number(&format!("{field}.denominator"), denominator, why);
        }
        if fraction.numerator > fraction.denominator() {
            let why = "numerator must be less than or equal to denominator";
            errors.invalid_number(&field, fraction.numerator.into(), why);
        }
        if mirror.percent.is_some() {
            let why = "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter";
            errors.forbidden(&field, why);
        }
    }
}

/// The filter `type_` and which of its fields are set (`present`, by field name): the one
/// named by the type must be set, the others not; `types` maps each type to its field.
fn filter_fields(
    type_: &str,
    types: &[(&str, &str)],
    present: &[(&str, bool)],
    path: &str,
    errors: &mut Errors,
) {
    let supported: Vec<&str> = types.iter().map(|(name, _)| *name).collect();
    one_of(type_, &supported, &format!("{path}.type"), errors);
    for (field_name, is_set) in present {
        let wanted = types
            .iter()
            .any(|(name, field)| *name == type_ && field == field_name);
        let field = format!("{path}.{field_name}");
        if wanted && !is_set {
            errors.required(
                &field,
                &format!("must be specified for {type_} filter.type"),
            );
        } else if *is_set && !wanted {
            let why = format!("must be nil if the filter.type is not {type_}");
            errors.forbidden(&field, &why);
        }
    }
}

/// At most one filter of each type in `once` among `types` (the filters of one list).
fn filters_once(types: &[&str], once: &[&str], path: &str, errors: &mut Errors) {
    for single in once {
        if types.iter().filter(|t| *t == single).count() > 1 {
            errors.invalid(path, single, &format!("{single} filter cannot be repeated"));
        }
    }
}

#[cfg(test)]
mod tests;
