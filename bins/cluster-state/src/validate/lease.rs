//! Leases, as the API server's ValidateLease (`pkg/apis/coordination/validation`).

use k8s_openapi::api::coordination::v1::Lease;

use super::field::Errors;
use super::meta::{NameRule, object_meta};
use super::names;

/// The strategies Kubernetes defines; others must be prefixed (`example.com/mine`).
const STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// As the API server's ValidateLease and ValidateLeaseSpec (`pkg/apis/coordination/validation`):
/// a positive duration, a non-negative transition count, a known or prefixed strategy, and a
/// preferred holder only with a strategy.
pub(super) fn validate(lease: &Lease, errors: &mut Errors) {
    object_meta(&lease.metadata, true, NameRule::Dns1123Subdomain, errors);
    let Some(spec) = &lease.spec else {
        return;
    };
    if let Some(seconds) = spec.lease_duration_seconds.filter(|s| *s <= 0) {
        let field = "spec.leaseDurationSeconds";
        errors.invalid_number(field, seconds.into(), "must be greater than 0");
    }
    if let Some(transitions) = spec.lease_transitions.filter(|t| *t < 0) {
        let field = "spec.leaseTransitions";
        let why = "must be greater than or equal to 0";
        errors.invalid_number(field, transitions.into(), why);
    }
    let strategy = spec.strategy.as_deref().unwrap_or_default();
    if !strategy.is_empty() {
        if strategy.contains('/') {
            let messages = names::qualified_name(strategy);
            errors.invalid_each("spec.strategy", strategy, messages);
        } else if !STRATEGIES.contains(&strategy) {
            errors.unsupported("spec.strategy", strategy, STRATEGIES);
        }
    }
    let preferred = spec.preferred_holder.as_deref().unwrap_or_default();
    if !preferred.is_empty() && strategy.is_empty() {
        let why = "may only be specified if `strategy` is defined";
        errors.forbidden("spec.preferredHolder", why);
    }
}
