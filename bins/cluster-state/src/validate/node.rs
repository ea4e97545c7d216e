//! Nodes, as the API server's ValidateNode (`pkg/apis/core/validation`).
//!
//! Only what the API server checks on the fields a binary reads: the name, labels and
//! annotations (through the object metadata), the taints and the pod CIDRs. The status is not
//! checked (the API server checks only its resource quantities, which no binary reads), nor
//! the node-specific annotations (the scheduler's, which no binary reads either).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Node;

use super::field::{Errors, index};
use super::ip::parse_cidr;
use super::meta::{NameRule, object_meta};
use super::names;

/// The effects a node's taint may have.
const TAINT_EFFECTS: &[&str] = &["NoExecute", "NoSchedule", "PreferNoSchedule"];

/// As the API server's ValidateNode (`pkg/apis/core/validation`): a DNS subdomain for a name
/// (ValidateNodeName), valid taints (validateNodeTaints) and pod CIDRs that are CIDRs, at most
/// one per IP family, without repeats.
pub(super) fn validate(node: &Node, errors: &mut Errors) {
    object_meta(&node.metadata, false, NameRule::Dns1123Subdomain, errors);
    let Some(spec) = &node.spec else {
        return;
    };
    taints(spec.taints.as_deref().unwrap_or_default(), errors);
    // The API server's internal object has only `podCIDRs`; a v1 object whose `podCIDRs` is
    // empty gets its `podCIDR` there when converted.
    let pod_cidrs = match (spec.pod_cidrs.as_deref(), spec.pod_cidr.as_deref()) {
        (Some(cidrs), _) if !cidrs.is_empty() => cidrs.to_vec(),
        (_, Some(cidr)) if !cidr.is_empty() => vec![cidr.to_owned()],
        _ => Vec::new(),
    };
    pod_cidr_list(&pod_cidrs, errors);
}

/// As validateNodeTaints: the key a qualified name, the value a label value, a known effect,
/// and each key and effect pair once. The field path is `metadata.taints`, as the API server
/// spells it (it builds the path from `metadata`).
fn taints(taints: &[k8s_openapi::api::core::v1::Taint], errors: &mut Errors) {
    let mut seen = BTreeSet::new();
    for (position, taint) in taints.iter().enumerate() {
        let field = index("metadata.taints", position);
        let key = format!("{field}.key");
        errors.invalid_each(&key, &taint.key, names::qualified_name(&taint.key));
        let value = taint.value.as_deref().unwrap_or_default();
        let value_errors = names::label_value(value);
        if !value_errors.is_empty() {
            errors.invalid(&format!("{field}.value"), value, &value_errors.join(";"));
        }
        let effect = format!("{field}.effect");
        if taint.effect.is_empty() {
            errors.required(&effect, "");
        } else if !TAINT_EFFECTS.contains(&taint.effect.as_str()) {
            errors.unsupported(&effect, &taint.effect, TAINT_EFFECTS);
        }
        // The API server's detail: taints must be unique by key and effect pair.
        if !seen.insert((taint.effect.as_str(), taint.key.as_str())) {
            errors.duplicate(&field, &taint.key);
        }
    }
}

/// As ValidateNode on `spec.podCIDRs`: each a CIDR (IsValidCIDRForLegacyField); with more than
/// one, one IPv4 and one IPv6 (IsDualStackCIDRStrings) and no repeats.
fn pod_cidr_list(cidrs: &[String], errors: &mut Errors) {
    const FIELD: &str = "spec.podCIDRs";
    let mut families = Vec::new();
    for (position, cidr) in cidrs.iter().enumerate() {
        match parse_cidr(cidr) {
            Ok((ip, _)) => families.push(ip.is_ipv4()),
            Err(why) => errors.invalid(&index(FIELD, position), cidr, why),
        }
    }
    if cidrs.len() < 2 {
        return;
    }
    let dual_stack =
        families.len() == cidrs.len() && families.contains(&true) && families.contains(&false);
    if !dual_stack || cidrs.len() > 2 {
        let why = "may specify no more than one CIDR for each IP family";
        errors.invalid(FIELD, &cidrs.join(", "), why);
    }
    let mut seen = BTreeSet::new();
    for (position, cidr) in cidrs.iter().enumerate() {
        if !seen.insert(cidr.as_str()) {
            errors.duplicate(&index(FIELD, position), cidr);
        }
    }
}
