//! Namespaces, as the API server's ValidateNamespace (`pkg/apis/core/validation`).

use k8s_openapi::api::core::v1::Namespace;

use super::field::{Errors, index};
use super::meta::{NameRule, object_meta};
use super::names;

/// As the API server's ValidateNamespace (`pkg/apis/core/validation`): a DNS-1123 label for a
/// name, and qualified names for finalizers.
pub(super) fn validate(namespace: &Namespace, errors: &mut Errors) {
    object_meta(&namespace.metadata, false, NameRule::Dns1123Label, errors);
    let finalizers = namespace
        .spec
        .as_ref()
        .and_then(|spec| spec.finalizers.as_deref());
    for (position, finalizer) in finalizers.unwrap_or_default().iter().enumerate() {
        let field = index("spec.finalizers", position);
        errors.invalid_each(&field, finalizer, names::qualified_name(finalizer));
    }
}
