//! The admission webhook's families, as ingress-nginx's admission collector
//! (`internal/ingress/metric/collectors/admission.go`): six gauges with the controller's
//! constant labels, describing the last review whose configuration passed its checks.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A gauge of a float value.
type FloatGauge = Gauge<f64, AtomicU64>;

/// What one accepted review measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Review {
    /// The Ingresses of the configuration checked (the candidate among them).
    pub ingresses: usize,
    /// Building the model and rendering the configuration.
    pub render: Duration,
    /// `nginx -t` on it.
    pub test: Duration,
    /// The configuration's size, in bytes.
    pub size: usize,
    /// The whole review, waiting for its turn included.
    pub roundtrip: Duration,
}

/// The `nginx_ingress_controller_admission_*` gauges; clones share their values.
#[derive(Clone, Debug, Default)]
pub struct AdmissionMetrics {
    tested_ingresses: FloatGauge,
    tested_duration: FloatGauge,
    render_ingresses: FloatGauge,
    render_duration: FloatGauge,
    config_size: FloatGauge,
    roundtrip_duration: FloatGauge,
}

/// A count as a gauge value (exact below 2^53, which no count here reaches).
fn value(count: usize) -> f64 {
    u32::try_from(count).map_or(f64::from(u32::MAX), f64::from)
}

impl AdmissionMetrics {
    /// Registers the families in `with_labels` (which adds the constant labels).
    pub fn register(&self, with_labels: &mut Registry) {
        for (name, help, gauge) in [
            (
                "admission_tested_ingresses",
                "Ingresses in the configuration the last accepted review checked",
                &self.tested_ingresses,
            ),
            (
                "admission_tested_duration",
                "How long the last accepted review's nginx -t took (seconds)",
                &self.tested_duration,
            ),
            (
                "admission_render_ingresses",
                "Ingresses the last accepted review rendered",
                &self.render_ingresses,
            ),
            (
                "admission_render_duration",
                "How long the last accepted review's model and rendering took (seconds)",
                &self.render_duration,
            ),
            (
                "admission_config_size",
                "Size of the configuration the last accepted review checked (bytes)",
                &self.config_size,
            ),
            (
                "admission_roundtrip_duration",
                "How long the last accepted review took in all (seconds)",
                &self.roundtrip_duration,
            ),
        ] {
            with_labels.register(name, help, gauge.clone());
        }
    }

    /// Records an accepted review.
    pub fn reviewed(&self, review: &Review) {
        self.tested_ingresses.set(value(review.ingresses));
        self.tested_duration.set(review.test.as_secs_f64());
        self.render_ingresses.set(value(review.ingresses));
        self.render_duration.set(review.render.as_secs_f64());
        self.config_size.set(value(review.size));
        self.roundtrip_duration.set(review.roundtrip.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accepted_review_is_exported_with_ingress_nginx_names() {
        let metrics = AdmissionMetrics::default();
        let mut registry = Registry::default();
        let ingress_nginx = registry.sub_registry_with_prefix("nginx_ingress_controller");
        let labels = [("controller_class", "k8s.io/ingress-nginx")]
            .map(|(k, v)| (k.into(), v.into()))
            .into_iter();
        metrics.register(ingress_nginx.sub_registry_with_labels(labels));
        // Clones share the values: the webhook holds one, the registry another.
        metrics.clone().reviewed(&Review {
            ingresses: 3,
            render: Duration::from_millis(250),
            test: Duration::from_millis(1500),
            size: 12_345,
            roundtrip: Duration::from_secs(2),
        });
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let labels = "{controller_class=\"k8s.io/ingress-nginx\"}";
        for (name, value) in [
            ("admission_tested_ingresses", "3.0"),
            ("admission_tested_duration", "1.5"),
            ("admission_render_ingresses", "3.0"),
            ("admission_render_duration", "0.25"),
            ("admission_config_size", "12345.0"),
            ("admission_roundtrip_duration", "2.0"),
        ] {
            let line = format!("nginx_ingress_controller_{name}{labels} {value}");
            assert!(text.lines().any(|l| l == line), "no `{line}` in:\n{text}");
            let kind = format!("# TYPE nginx_ingress_controller_{name} gauge");
            assert!(text.contains(&kind), "no `{kind}` in:\n{text}");
        }
    }
}
