//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used)]

use cluster_state::Source;

/// The source's metrics as OpenMetrics text.
pub(crate) fn metrics(source: &Source) -> String {
    let mut registry = prometheus_client::registry::Registry::default();
    source.metrics().register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    text
}
