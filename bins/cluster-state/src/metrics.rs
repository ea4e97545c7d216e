//! What a source reports to a binary's `/metrics` (prometheus-client).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::{Kind, Snapshot};

/// The metrics of a [`Source`](crate::Source); clones share the same values.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    revision: Gauge,
    objects: Family<Vec<(&'static str, &'static str)>, Gauge>,
    rejected_files: Gauge,
    invalid_objects: Gauge,
    request_errors: Counter,
}

impl Metrics {
    /// Registers the metrics in `registry`, named `cluster_state_*`.
    pub fn register(&self, registry: &mut Registry) {
        let registry = registry.sub_registry_with_prefix("cluster_state");
        let revision = "the revision of the latest snapshot (0: not everything read yet)";
        registry.register("revision", revision, self.revision.clone());
        let objects = "objects in the latest snapshot, by kind";
        registry.register("objects", objects, self.objects.clone());
        let rejected = "manifest files whose latest version was rejected (their last good \
                        version is used)";
        registry.register(
            "rejected_manifest_files",
            rejected,
            self.rejected_files.clone(),
        );
        let invalid = "objects left out because they are invalid, by the latest reading";
        registry.register("invalid_objects", invalid, self.invalid_objects.clone());
        let errors = "failed list and watch requests to the API server, expired watches \
                      included (all retried)";
        registry.register("api_request_errors", errors, self.request_errors.clone());
    }

    /// Records a published snapshot.
    pub(crate) fn published(&self, snapshot: &Snapshot) {
        self.revision
            .set(i64::try_from(snapshot.revision).unwrap_or(i64::MAX));
        for kind in Kind::ALL {
            let count = snapshot.objects(*kind).count();
            let gauge = self.objects.get_or_create(&vec![("kind", kind.name())]);
            gauge.set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }

    /// Records how many manifest files are rejected now.
    pub(crate) fn rejected_files(&self, count: usize) {
        self.rejected_files
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// Records how many objects are left out now because they are invalid (as the API server
    /// would refuse them).
    pub(crate) fn invalid_objects(&self, count: usize) {
        self.invalid_objects
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// Records a failed API request.
    pub(crate) fn request_failed(&self) {
        self.request_errors.inc();
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::text::encode;

    use super::*;

    #[test]
    fn renders_as_openmetrics() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let snapshot = Snapshot {
            revision: 3,
            ..Snapshot::default()
        };
        metrics.published(&snapshot);
        metrics.rejected_files(1);
        metrics.invalid_objects(2);
        metrics.request_failed();
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        for line in [
            "cluster_state_revision 3",
            "cluster_state_objects{kind=\"Service\"} 0",
            "cluster_state_rejected_manifest_files 1",
            "cluster_state_invalid_objects 2",
            "cluster_state_api_request_errors_total 1",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
