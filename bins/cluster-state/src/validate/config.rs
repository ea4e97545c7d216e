//! Secrets and ConfigMaps, as the API server's ValidateSecret and ValidateConfigMap
//! (`pkg/apis/core/validation`): keys, the 1 MiB total, and the keys each Secret type requires.
//!
//! A Secret's `stringData` is merged into its `data` by the API server before it validates
//! (a key in both takes the `stringData` value), so both are checked as one map here.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};

use super::field::{Errors, key};
use super::meta::{NameRule, object_meta};
use super::names;

/// The most bytes of data in a Secret or ConfigMap (1 MiB).
const MAX_DATA_BYTES: usize = 1024 * 1024;

/// As the API server's ValidateSecret (`pkg/apis/core/validation`).
pub(super) fn validate_secret(secret: &Secret, errors: &mut Errors) {
    object_meta(&secret.metadata, true, NameRule::Dns1123Subdomain, errors);
    let mut data: BTreeMap<&str, &[u8]> = BTreeMap::new();
    for (name, value) in secret.data.iter().flatten() {
        data.insert(name, &value.0);
    }
    for (name, value) in secret.string_data.iter().flatten() {
        data.insert(name, value.as_bytes());
    }
    let mut total = 0usize;
    for (name, value) in &data {
        errors.invalid_each(&key("data", name), name, names::config_map_key(name));
        total = total.saturating_add(value.len());
    }
    if total > MAX_DATA_BYTES {
        errors.too_long("data", MAX_DATA_BYTES);
    }
    let required = |errors: &mut Errors, name: &str| {
        if !data.contains_key(name) {
            errors.required(&key("data", name), "");
        }
    };
    match secret.type_.as_deref().unwrap_or_default() {
        "kubernetes.io/service-account-token" => {
            let account = secret
                .metadata
                .annotations
                .as_ref()
                .and_then(|annotations| annotations.get("kubernetes.io/service-account.name"));
            if account.is_none_or(String::is_empty) {
                let field = key("metadata.annotations", "kubernetes.io/service-account.name");
                errors.required(&field, "");
            }
        }
        "kubernetes.io/dockercfg" => docker_config(&data, ".dockercfg", errors),
        "kubernetes.io/dockerconfigjson" => docker_config(&data, ".dockerconfigjson", errors),
        "kubernetes.io/basic-auth"
            if !data.contains_key("username") && !data.contains_key("password") =>
        {
            required(errors, "username");
            required(errors, "password");
        }
        "kubernetes.io/ssh-auth"
            if data
                .get("ssh-privatekey")
                .is_none_or(|value| value.is_empty()) =>
        {
            errors.required(&key("data", "ssh-privatekey"), "");
        }
        "kubernetes.io/tls" => {
            required(errors, "tls.crt");
            required(errors, "tls.key");
        }
        _ => {}
    }
}

/// A Docker configuration Secret's key: present, and a JSON object.
fn docker_config(data: &BTreeMap<&str, &[u8]>, name: &str, errors: &mut Errors) {
    let field = key("data", name);
    match data.get(name) {
        None => errors.required(&field, ""),
        Some(value) => {
            let parsed =
                serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(value);
            if parsed.is_err() {
                errors.invalid(
                    &field,
                    "<secret contents redacted>",
                    "must be a JSON object",
                );
            }
        }
    }
}

/// As the API server's ValidateConfigMap (`pkg/apis/core/validation`): keys, no key in both
/// `data` and `binaryData`, at most 1 MiB of values in all.
pub(super) fn validate_config_map(map: &ConfigMap, errors: &mut Errors) {
    object_meta(&map.metadata, true, NameRule::Dns1123Subdomain, errors);
    let data = map.data.as_ref();
    let binary = map.binary_data.as_ref();
    let mut total = 0usize;
    for (name, value) in data.into_iter().flatten() {
        let field = key("data", name);
        errors.invalid_each(&field, name, names::config_map_key(name));
        if binary.is_some_and(|binary| binary.contains_key(name)) {
            errors.invalid(&field, name, "duplicate of key present in binaryData");
        }
        total = total.saturating_add(value.len());
    }
    for (name, value) in binary.into_iter().flatten() {
        let field = key("binaryData", name);
        errors.invalid_each(&field, name, names::config_map_key(name));
        if data.is_some_and(|data| data.contains_key(name)) {
            errors.invalid(&field, name, "duplicate of key present in data");
        }
        total = total.saturating_add(value.0.len());
    }
    if total > MAX_DATA_BYTES {
        errors.too_long("", MAX_DATA_BYTES);
    }
}
