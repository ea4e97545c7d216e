//! `coredns_kubernetes_dns_programming_duration_seconds`, as CoreDNS v1.14.7 measures it
//! (`plugin/kubernetes/object/metrics.go`, the DNS programming latency SLI of
//! sig-scalability): for each EndpointSlice added, changed or deleted whose
//! `endpoints.kubernetes.io/last-change-trigger-time` annotation is set (the endpoint
//! controller's time of the change) and whose Service is known, the time from that instant
//! to the moment the change is served, labelled `cluster_ip` or `headless_with_selector`.
//!
//! CoreDNS observes when its informer stores the object; here it is when the index built
//! from the snapshot is swapped in, the moment the change is answered. Snapshots that follow
//! each other quickly are built once, so the slices are compared with those of the last
//! snapshot built (by pointer: an unchanged object keeps its `Arc`), not with the
//! snapshot's own list of changes.

use std::sync::Arc;

use cluster_state::k8s::jiff::Timestamp;
use cluster_state::{ObjectRef, Snapshot};
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::metrics::Metrics;

/// The annotation of the endpoint controller's change time (`api.EndpointsLastChangeTriggerTime`).
const TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";
/// The label naming an EndpointSlice's Service.
const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// Observes, at `now`, the slices of `current` that differ from those of `previous` (all of
/// them for the first snapshot), and those `previous` had that `current` has not.
pub(super) fn record(
    metrics: &Metrics,
    previous: Option<&Snapshot>,
    current: &Snapshot,
    now: Timestamp,
) {
    let empty = Snapshot::default();
    let previous = previous.unwrap_or(&empty);
    let changed = current.endpoint_slices.iter().filter(|(key, slice)| {
        previous
            .endpoint_slices
            .get(*key)
            .is_none_or(|before| !Arc::ptr_eq(before, slice))
    });
    let deleted = previous
        .endpoint_slices
        .iter()
        .filter(|(key, _)| !current.endpoint_slices.contains_key(*key));
    for (_, slice) in changed.chain(deleted) {
        if let Some((kind, seconds)) = latency(current, slice, now) {
            metrics
                .kubernetes_dns_programming
                .get_or_create(&vec![("service_kind", kind.to_owned())])
                .observe(seconds);
        }
    }
}

/// The `service_kind` label and the seconds since the slice's trigger time, if it has one
/// and its Service is in `snapshot`.
fn latency(
    snapshot: &Snapshot,
    slice: &EndpointSlice,
    now: Timestamp,
) -> Option<(&'static str, f64)> {
    let meta = &slice.metadata;
    let trigger: Timestamp = meta.annotations.as_ref()?.get(TRIGGER_TIME)?.parse().ok()?;
    let service_name = meta.labels.as_ref()?.get(SERVICE_NAME)?;
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    let service = snapshot
        .services
        .get(&ObjectRef::new(namespace, service_name.as_str()))?;
    let headless = service
        .spec
        .as_ref()
        .and_then(|spec| spec.cluster_ip.as_deref())
        == Some("None");
    let kind = if headless {
        "headless_with_selector"
    } else {
        "cluster_ip"
    };
    let seconds = now.duration_since(trigger).as_secs_f64();
    Some((kind, seconds))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use cluster_state::parse_manifest;

    use super::*;

    fn snapshot(yaml: &str) -> Snapshot {
        let mut snapshot = Snapshot::default();
        for object in parse_manifest(Path::new("t.yaml"), yaml).unwrap() {
            snapshot.insert(object);
        }
        snapshot
    }

    fn slice(name: &str, service: &str, trigger: &str) -> String {
        format!(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {name}\n  namespace: ns\n  labels: {{kubernetes.io/service-name: {service}}}\n  annotations: {{endpoints.kubernetes.io/last-change-trigger-time: \"{trigger}\"}}\naddressType: IPv4\nendpoints: []\n"
        )
    }

    const SERVICES: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: ns}\nspec: {clusterIP: None, ports: [{port: 5432}]}\n";

    fn exposition(metrics: &Metrics) -> Vec<String> {
        metrics
            .encode()
            .lines()
            .filter(|l| l.starts_with("coredns_kubernetes_dns_programming_duration_seconds_count"))
            .map(str::to_owned)
            .collect()
    }

    /// CoreDNS's `TestDNSProgrammingLatencyEndpointSlices` in substance: a slice of a
    /// ClusterIP Service and one of a headless Service are observed under their kinds, a slice
    /// without the annotation or without a known Service is not; an unchanged slice is not
    /// observed again, a changed or deleted one is.
    #[test]
    fn changed_slices_with_a_trigger_time_and_a_known_service_are_observed() {
        let metrics = Metrics::new();
        let now: Timestamp = "2026-12-05T10:00:03Z".parse().unwrap();
        let first = snapshot(&format!(
            "{SERVICES}---\n{}---\n{}---\n{}---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: plain\n  namespace: ns\n  labels: {{kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints: []\n",
            slice("web-1", "web", "2026-12-05T10:00:00Z"),
            slice("db-1", "db", "2026-12-05T10:00:01.5Z"),
            slice("orphan-1", "gone", "2026-12-05T10:00:00Z"),
        ));
        record(&metrics, None, &first, now);
        let counts = exposition(&metrics);
        assert!(
            counts
                .iter()
                .any(|l| l.contains("service_kind=\"cluster_ip\"") && l.ends_with(" 1")),
            "{counts:?}"
        );
        assert!(counts.iter().any(|l| l.contains("service_kind=\"headless_with_selector\"") && l.ends_with(" 1")), "{counts:?}");
        let text = metrics.encode();
        // 3 s and 1.5 s.
        assert!(text.contains("coredns_kubernetes_dns_programming_duration_seconds_sum{service_kind=\"cluster_ip\"} 3.0"), "{text}");
        assert!(text.contains("coredns_kubernetes_dns_programming_duration_seconds_sum{service_kind=\"headless_with_selector\"} 1.5"), "{text}");

        // The same objects again: nothing new. web-1 changed and db-1 deleted: one each.
        let mut second = first.clone();
        record(&metrics, Some(&first), &second, now);
        assert_eq!(exposition(&metrics), counts);
        second.remove(
            cluster_state::Kind::EndpointSlice,
            &ObjectRef::new("ns", "db-1"),
        );
        for object in parse_manifest(
            Path::new("t.yaml"),
            &slice("web-1", "web", "2026-12-05T10:00:02Z"),
        )
        .unwrap()
        {
            second.insert(object);
        }
        record(&metrics, Some(&first), &second, now);
        let counts = exposition(&metrics);
        assert!(counts.iter().all(|l| l.ends_with(" 2")), "{counts:?}");
    }
}
