//! Pods, as far as a binary reads them: the name and the pod IPs, as the API server's
//! ValidatePodCreate and ValidatePodStatusUpdate (`pkg/apis/core/validation`) check them.
//! The spec (containers, volumes, …) is not checked: no binary reads it.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

use super::field::{Errors, index};
use super::ip::parse_ip;
use super::meta::{NameRule, object_meta};

/// A DNS subdomain for a name, and pod IPs (`status.podIPs`) that are IP addresses, at most
/// one per family, without repeats (validatePodIPs).
pub(super) fn validate(pod: &Pod, errors: &mut Errors) {
    object_meta(&pod.metadata, true, NameRule::Dns1123Subdomain, errors);
    let ips: Vec<&str> = pod
        .status
        .as_ref()
        .and_then(|status| status.pod_ips.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|ip| ip.ip.as_str())
        .collect();
    const FIELD: &str = "status.podIPs";
    let mut families = Vec::new();
    for (position, ip) in ips.iter().enumerate() {
        match parse_ip(ip) {
            Ok(parsed) => families.push(parsed.is_ipv4()),
            Err(why) => errors.invalid(&index(FIELD, position), ip, why),
        }
    }
    if ips.len() < 2 {
        return;
    }
    let dual_stack =
        families.len() == ips.len() && families.contains(&true) && families.contains(&false);
    if !dual_stack || ips.len() > 2 {
        let why = "may specify no more than one IP for each IP family";
        errors.invalid(FIELD, &ips.join(", "), why);
    }
    let mut seen = BTreeSet::new();
    for (position, ip) in ips.iter().enumerate() {
        if !seen.insert(*ip) {
            errors.duplicate(&index(FIELD, position), ip);
        }
    }
}
