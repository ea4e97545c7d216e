//! What service-proxy reads from its own Node: the zone topology hints are matched against,
//! and whether load balancers may send traffic to the node (`/healthz`'s `nodeEligible`).

use iptables_model::Cidr;
use k8s_openapi::api::core::v1::Node;

/// The well-known label naming a node's zone (`v1.LabelTopologyZone`).
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// The taint the Cluster Autoscaler puts on a node it is about to delete
/// (`ToBeDeletedTaint` in kube-proxy's `pkg/proxy/healthcheck/proxy_health.go`).
pub const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";

/// The node's zone: its [`ZONE_LABEL`], empty when the label or the Node is missing (then no
/// zone hint matches, and every endpoint is used, as kube-proxy does).
pub fn zone(node: Option<&Node>) -> &str {
    node.and_then(|node| node.metadata.labels.as_ref()?.get(ZONE_LABEL))
        .map_or("", String::as_str)
}

/// kube-proxy's `NodeEligible` (`pkg/proxy/healthcheck/proxy_health.go`): a node is eligible
/// unless it is missing, being deleted (a deletion timestamp) or carries the
/// [`TO_BE_DELETED_TAINT`], whatever the taint's value and effect.
pub fn eligible(node: Option<&Node>) -> bool {
    let Some(node) = node else {
        return false;
    };
    if node.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let taints = node.spec.as_ref().and_then(|spec| spec.taints.as_deref());
    !taints
        .unwrap_or_default()
        .iter()
        .any(|taint| taint.key == TO_BE_DELETED_TAINT)
}

/// The Node's pod CIDRs (`spec.podCIDRs`, else the older `spec.podCIDR`), for
/// `--detect-local-mode NodeCIDR`; empty while none is assigned. The source validated them
/// as the API server does, so each parses.
pub fn pod_cidrs(node: Option<&Node>) -> Vec<Cidr> {
    let Some(spec) = node.and_then(|node| node.spec.as_ref()) else {
        return Vec::new();
    };
    let listed = spec.pod_cidrs.as_deref().unwrap_or_default();
    let single = spec.pod_cidr.as_slice();
    let cidrs = if listed.is_empty() { single } else { listed };
    cidrs.iter().filter_map(|cidr| cidr.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(yaml: &str) -> Node {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn the_zone_is_the_label_or_empty() {
        let zoned = node("metadata: {name: a, labels: {topology.kubernetes.io/zone: eu-1a}}");
        assert_eq!(zone(Some(&zoned)), "eu-1a");
        assert_eq!(zone(Some(&node("metadata: {name: a}"))), "");
        assert_eq!(zone(None), "");
    }

    #[test]
    fn pod_cidrs_from_either_field() {
        let dual = node(
            "metadata: {name: a}\nspec: {podCIDR: 10.244.1.0/24, podCIDRs: [10.244.1.0/24, 'fd00:1::/64']}",
        );
        let text: Vec<_> = pod_cidrs(Some(&dual))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(text, ["10.244.1.0/24", "fd00:1::/64"]);
        let old = node("metadata: {name: a}\nspec: {podCIDR: 10.244.2.0/24}");
        assert_eq!(pod_cidrs(Some(&old)).len(), 1);
        assert!(pod_cidrs(Some(&node("metadata: {name: a}"))).is_empty());
        assert!(pod_cidrs(None).is_empty());
    }

    #[test]
    fn eligibility_as_kube_proxys_node_eligible() {
        assert!(eligible(Some(&node("metadata: {name: a}"))));
        assert!(!eligible(None));
        let deleting = node("metadata: {name: a, deletionTimestamp: '2026-12-05T01:00:00Z'}");
        assert!(!eligible(Some(&deleting)));
        let tainted = node(
            "metadata: {name: a}\nspec: {taints: [{key: ToBeDeletedByClusterAutoscaler, \
             value: '1733360000', effect: NoSchedule}]}",
        );
        assert!(!eligible(Some(&tainted)));
        let other = node("metadata: {name: a}\nspec: {taints: [{key: x, effect: NoSchedule}]}");
        assert!(eligible(Some(&other)));
    }
}
