//! The object metadata every kind shares: name (by the kind's rule), namespace, labels,
//! annotations, finalizers.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::field::Errors;
use super::names;

/// The most bytes of annotation keys and values, all together (256 KiB).
const MAX_ANNOTATION_BYTES: usize = 256 * 1024;

/// Which format a kind's object names take.
#[derive(Debug, Clone, Copy)]
pub(super) enum NameRule {
    /// A DNS-1123 label (NameIsDNSLabel): Namespaces.
    Dns1123Label,
    /// A DNS-1123 subdomain (NameIsDNSSubdomain): most kinds.
    Dns1123Subdomain,
    /// A DNS-1035 label (NameIsDNS1035Label): Services.
    Dns1035Label,
}

impl NameRule {
    /// As the API server's name functions (apimachinery `pkg/api/validation/generic.go`):
    /// why `name` is not a valid name; a `generateName` prefix (`prefix`) may end with `-`.
    pub(super) fn check(self, name: &str, prefix: bool) -> Vec<String> {
        let masked;
        let name = match name.strip_suffix('-') {
            Some(rest) if prefix && !rest.is_empty() => {
                masked = format!("{rest}a");
                masked.as_str()
            }
            _ => name,
        };
        match self {
            NameRule::Dns1123Label => names::dns1123_label(name),
            NameRule::Dns1123Subdomain => names::dns1123_subdomain(name),
            NameRule::Dns1035Label => names::dns1035_label(name),
        }
    }
}

/// As the API server's ValidateObjectMeta (apimachinery `pkg/api/validation/objectmeta.go`):
/// the name by `rule`, the namespace (required and a DNS-1123 label if `namespaced`, else
/// forbidden), the generation, labels, annotations and finalizers.
///
/// Owner references and managed fields are not checked: the binaries do not read them.
pub(super) fn object_meta(
    meta: &ObjectMeta,
    namespaced: bool,
    rule: NameRule,
    errors: &mut Errors,
) {
    if let Some(generate_name) = meta.generate_name.as_deref().filter(|g| !g.is_empty()) {
        let messages = rule.check(generate_name, true);
        errors.invalid_each("metadata.generateName", generate_name, messages);
    }
    match meta.name.as_deref().filter(|name| !name.is_empty()) {
        None => errors.required("metadata.name", "name or generateName is required"),
        Some(name) => errors.invalid_each("metadata.name", name, rule.check(name, false)),
    }
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    if namespaced {
        if namespace.is_empty() {
            errors.required("metadata.namespace", "");
        } else {
            let messages = names::dns1123_label(namespace);
            errors.invalid_each("metadata.namespace", namespace, messages);
        }
    } else if !namespace.is_empty() {
        errors.forbidden("metadata.namespace", "not allowed on this type");
    }
    if let Some(generation) = meta.generation.filter(|g| *g < 0) {
        errors.invalid_number(
            "metadata.generation",
            generation,
            "must be greater than or equal to 0",
        );
    }
    if let Some(map) = &meta.labels {
        labels(map, "metadata.labels", errors);
    }
    if let Some(map) = &meta.annotations {
        annotations(map, errors);
    }
    for (position, finalizer) in meta.finalizers.iter().flatten().enumerate() {
        let field = super::field::index("metadata.finalizers", position);
        errors.invalid_each(&field, finalizer, names::qualified_name(finalizer));
    }
}

/// As the API server's ValidateLabels (apimachinery `pkg/apis/meta/v1/validation`): every key
/// a qualified name, every value a label value; errors at `path` itself.
pub(super) fn labels(map: &BTreeMap<String, String>, path: &str, errors: &mut Errors) {
    for (key, value) in map {
        errors.invalid_each(path, key, names::qualified_name(key));
        errors.invalid_each(path, value, names::label_value(value));
    }
}

/// As the API server's ValidateAnnotations (apimachinery `pkg/api/validation/objectmeta.go`):
/// every key a qualified name (in any case), keys and values at most 256 KiB together.
fn annotations(map: &BTreeMap<String, String>, errors: &mut Errors) {
    const PATH: &str = "metadata.annotations";
    let mut total = 0usize;
    for (key, value) in map {
        errors.invalid_each(PATH, key, names::qualified_name(&key.to_lowercase()));
        total = total.saturating_add(key.len()).saturating_add(value.len());
    }
    if total > MAX_ANNOTATION_BYTES {
        errors.too_long(PATH, MAX_ANNOTATION_BYTES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(meta: &ObjectMeta, namespaced: bool, rule: NameRule) -> Vec<String> {
        let mut errors = Errors::default();
        object_meta(meta, namespaced, rule, &mut errors);
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(invalid) => invalid.errors.iter().map(ToString::to_string).collect(),
        }
    }

    fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            namespace: namespace.map(str::to_owned),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn names_follow_the_rule_of_the_kind_as_validate_object_meta() {
        let web = meta("web", Some("shop"));
        assert!(check(&web, true, NameRule::Dns1035Label).is_empty());
        // A Service name may not start with a digit; a ConfigMap's may, with dots.
        let digit = meta("1web", Some("shop"));
        assert_eq!(check(&digit, true, NameRule::Dns1035Label).len(), 1);
        assert!(
            check(
                &meta("1web.v2", Some("shop")),
                true,
                NameRule::Dns1123Subdomain
            )
            .is_empty()
        );
        assert_eq!(
            check(&meta("a.b", None), false, NameRule::Dns1123Label).len(),
            1
        );
        let missing = ObjectMeta::default();
        assert_eq!(
            check(&missing, false, NameRule::Dns1123Label),
            ["metadata.name: Required value: name or generateName is required"]
        );
    }

    #[test]
    fn namespaces_are_required_or_forbidden_as_validate_object_meta() {
        assert_eq!(
            check(&meta("a", None), true, NameRule::Dns1123Subdomain),
            ["metadata.namespace: Required value"]
        );
        assert_eq!(
            check(&meta("a", Some("x")), false, NameRule::Dns1123Subdomain),
            ["metadata.namespace: Forbidden: not allowed on this type"]
        );
        let bad = check(&meta("a", Some("Shop\n")), true, NameRule::Dns1123Subdomain);
        assert_eq!(bad.len(), 1);
        assert!(
            bad[0].starts_with("metadata.namespace: Invalid value: \"Shop\\n\": "),
            "{bad:?}"
        );
    }

    #[test]
    fn generate_name_may_end_with_a_dash() {
        let mut generated = meta("web-x1", Some("a"));
        generated.generate_name = Some("web-".to_owned());
        assert!(check(&generated, true, NameRule::Dns1035Label).is_empty());
    }

    #[test]
    fn labels_and_annotations_as_validate_labels_and_validate_annotations() {
        let mut object = meta("a", Some("b"));
        object.labels = Some(BTreeMap::from([
            ("app.kubernetes.io/name".to_owned(), "web".to_owned()),
            ("bad key".to_owned(), "-bad-value".to_owned()),
        ]));
        object.annotations = Some(BTreeMap::from([
            ("Example.com/Any-Case".to_owned(), "any\nvalue".to_owned()),
            ("big".to_owned(), "x".repeat(MAX_ANNOTATION_BYTES)),
        ]));
        object.finalizers = Some(vec!["kubernetes".to_owned(), "a/b/c".to_owned()]);
        let errors = check(&object, true, NameRule::Dns1123Subdomain);
        let fields: Vec<_> = errors
            .iter()
            .map(|e| e.split(':').next().unwrap())
            .collect();
        assert_eq!(
            fields,
            [
                "metadata.labels",
                "metadata.labels",
                "metadata.annotations",
                "metadata.finalizers[1]"
            ],
            "{errors:?}"
        );
        assert_eq!(
            errors[2],
            "metadata.annotations: Too long: may not be more than 262144 bytes"
        );
    }
}
