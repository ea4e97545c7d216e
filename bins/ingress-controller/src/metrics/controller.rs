//! ingress-nginx's controller families (`internal/ingress/metric/collectors/controller.go`):
//! configuration loads, the running configuration's hash, certificate expiry and leadership.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

use crate::election::LeaseStore;
use crate::hosts::Host;
use crate::model::Model;

/// A counter written without the `_total` suffix (untyped), as ingress-nginx's `success` and
/// `errors`, whose names dashboards query.
#[derive(Clone, Debug, Default)]
pub struct PlainCounter(Counter);

impl PlainCounter {
    /// Adds one.
    pub fn inc(&self) {
        self.0.inc();
    }
}

impl TypedMetric for PlainCounter {
    const TYPE: MetricType = MetricType::Unknown;
}

impl EncodeMetric for PlainCounter {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_gauge(&self.0.get())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Unknown
    }
}

/// Labels of `ssl_expire_time_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CertificateLabels {
    /// The Secret's namespace.
    pub namespace: String,
    /// The controller's class.
    pub class: String,
    /// The host served with the certificate.
    pub host: String,
    /// The Secret's name.
    pub secret_name: String,
    /// `ISSUER_SERIAL-SERIAL` of the certificate, as ingress-nginx's.
    pub identifier: String,
}

/// Labels of `ssl_certificate_info`: those of `ssl_expire_time_seconds` and the
/// certificate's issuer, serial number and key type.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CertificateInfoLabels {
    /// The Secret's namespace.
    pub namespace: String,
    /// The controller's class.
    pub class: String,
    /// The host served with the certificate.
    pub host: String,
    /// The Secret's name.
    pub secret_name: String,
    /// As in [`CertificateLabels`].
    pub identifier: String,
    /// The issuer's first organization, or empty.
    pub issuer_organization: String,
    /// The issuer's common name, or empty.
    pub issuer_common_name: String,
    /// The serial number, in decimal.
    pub serial_number: String,
    /// `RSA`, `ECDSA`, `Ed25519` or `DSA` (Go's names), else `0`.
    pub public_key_algorithm: String,
}

/// Labels of `leader_election_status`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeaderLabels {
    /// The lease's name.
    pub name: String,
}

/// The controller families.
#[derive(Debug, Default)]
pub struct ControllerMetrics {
    /// Hash of the running configuration (0 after a refused one).
    pub config_hash: Gauge<f64, AtomicU64>,
    /// 1 if the last configuration was accepted, else 0.
    pub last_reload_successful: Gauge,
    /// When a configuration was last accepted, in seconds since the epoch.
    pub last_reload_successful_timestamp: Gauge,
    /// Configurations loaded (start or reload).
    pub success: PlainCounter,
    /// Configurations refused (by `nginx -t`) or that nginx could not load.
    pub errors: PlainCounter,
    /// When each served certificate expires.
    pub ssl_expire_time: Family<CertificateLabels, Gauge>,
    /// 1 for each served certificate, labelled with what identifies it.
    pub ssl_certificate_info: Family<CertificateInfoLabels, Gauge>,
    /// 1 while this replica leads, else 0.
    pub leader_election_status: Family<LeaderLabels, Gauge>,
}

impl ControllerMetrics {
    /// Registers the families that carry the controller's constant labels (`with_labels`
    /// adds them).
    pub fn register(&self, with_labels: &mut Registry) {
        with_labels.register(
            "config_hash",
            "Hash of the configuration nginx runs",
            self.config_hash.clone(),
        );
        with_labels.register(
            "config_last_reload_successful",
            "Whether nginx accepted the last configuration it was given",
            self.last_reload_successful.clone(),
        );
        with_labels.register(
            "config_last_reload_successful_timestamp_seconds",
            "When nginx last accepted a configuration",
            self.last_reload_successful_timestamp.clone(),
        );
        with_labels.register(
            "success",
            "Configurations nginx loaded (start or reload)",
            self.success.clone(),
        );
        with_labels.register(
            "errors",
            "Configurations refused or that nginx could not load",
            self.errors.clone(),
        );
        with_labels.register(
            "leader_election_status",
            "1 while this replica leads the election named by `name`, else 0",
            self.leader_election_status.clone(),
        );
    }

    /// Registers the families ingress-nginx writes without the constant labels.
    pub fn register_unlabelled(&self, bare: &mut Registry) {
        bare.register(
            "ssl_expire_time_seconds",
            "When the certificate served for a host expires, in seconds since 1970",
            self.ssl_expire_time.clone(),
        );
        bare.register(
            "ssl_certificate_info",
            "1 for each certificate served, labelled with its issuer, serial number and key type",
            self.ssl_certificate_info.clone(),
        );
    }

    /// Counts a configuration load: its hash and time when `accepted`, else a failure.
    pub fn loaded(&self, accepted: bool, hash: u64) {
        if accepted {
            self.success.inc();
            self.last_reload_successful.set(1);
            #[allow(clippy::cast_precision_loss)]
            self.config_hash.set(hash as f64);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
            self.last_reload_successful_timestamp.set(now);
        } else {
            self.errors.inc();
            self.last_reload_successful.set(0);
            self.config_hash.set(0.0);
        }
    }

    /// Replaces the certificate families with the certificates of `model`'s servers that
    /// have a host (as ingress-nginx: not the catch-all server).
    pub fn certificates(&self, model: &Model, class: &str) {
        self.ssl_expire_time.clear();
        self.ssl_certificate_info.clear();
        for server in &model.servers {
            let host = match &server.host {
                Host::Any => continue,
                Host::Exact(name) => name.clone(),
                Host::Wildcard(suffix) => format!("*.{suffix}"),
            };
            let Some(secret) = &server.certificate else {
                continue;
            };
            let Some(certificate) = model.certificates.get(secret) else {
                continue;
            };
            let Some(facts) = facts(&certificate.cert) else {
                continue;
            };
            let (namespace, secret_name) = secret.split_once('/').unwrap_or(("", secret));
            let identifier = format!("{}-{}", facts.issuer_serial, facts.serial);
            if let Some(not_after) = crate::tls_check::not_after(&certificate.cert) {
                let labels = CertificateLabels {
                    namespace: namespace.to_owned(),
                    class: class.to_owned(),
                    host: host.clone(),
                    secret_name: secret_name.to_owned(),
                    identifier: identifier.clone(),
                };
                self.ssl_expire_time.get_or_create(&labels).set(not_after);
            }
            let labels = CertificateInfoLabels {
                namespace: namespace.to_owned(),
                class: class.to_owned(),
                host,
                secret_name: secret_name.to_owned(),
                identifier,
                issuer_organization: facts.issuer_organization,
                issuer_common_name: facts.issuer_common_name,
                serial_number: facts.serial,
                public_key_algorithm: facts.key_algorithm.to_owned(),
            };
            self.ssl_certificate_info.get_or_create(&labels).set(1);
        }
    }

    /// Records whether this replica leads the election `name`.
    pub fn leading(&self, name: &str, leading: bool) {
        self.leader_election_status
            .get_or_create(&LeaderLabels {
                name: name.to_owned(),
            })
            .set(i64::from(leading));
    }
}

/// The `name` label of `leader_election_status`: the lease's name (ingress-nginx's
/// `--election-id`), the lease file, or the etcd key.
pub fn lease_name(store: &LeaseStore) -> String {
    match store {
        LeaseStore::Kubernetes { name, .. } => name.clone(),
        LeaseStore::File(path) => path.display().to_string(),
        LeaseStore::Etcd { key, .. } => key.clone(),
    }
}

/// What the certificate families say of an end-entity certificate.
#[derive(Debug, PartialEq, Eq)]
struct Facts {
    /// The issuer's `serialNumber` attribute (usually empty).
    issuer_serial: String,
    issuer_organization: String,
    issuer_common_name: String,
    /// The serial number in decimal.
    serial: String,
    key_algorithm: &'static str,
}

/// The facts of the first certificate of the PEM text `cert`.
fn facts(cert: &[u8]) -> Option<Facts> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    use x509_parser::oid_registry as oid;
    let der = CertificateDer::pem_slice_iter(cert).next()?.ok()?;
    let (_, parsed) = x509_parser::parse_x509_certificate(&der).ok()?;
    let issuer = parsed.issuer();
    let first = |attribute: &x509_parser::oid_registry::Oid<'_>| {
        issuer
            .iter_by_oid(attribute)
            .next()
            .and_then(|a| a.as_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let algorithm = &parsed.public_key().algorithm.algorithm;
    let key_algorithm = if *algorithm == oid::OID_PKCS1_RSAENCRYPTION {
        "RSA"
    } else if *algorithm == oid::OID_KEY_TYPE_EC_PUBLIC_KEY {
        "ECDSA"
    } else if *algorithm == oid::OID_SIG_ED25519 {
        "Ed25519"
    } else if *algorithm == oid::OID_KEY_TYPE_DSA {
        "DSA"
    } else {
        "0"
    };
    Some(Facts {
        issuer_serial: first(&oid::OID_X509_SERIALNUMBER),
        issuer_organization: first(&oid::OID_X509_ORGANIZATION_NAME),
        issuer_common_name: first(&oid::OID_X509_COMMON_NAME),
        serial: parsed.serial.to_string(),
        key_algorithm,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_facts() {
        let cert = include_bytes!("../../tests/fixtures/tls.crt");
        // `openssl x509 -noout -issuer -serial`: CN = tls.example.com, serial
        // 283AEA75A1C44AAE8305E00D0270DD4B88D9BCC0 (hexadecimal), an RSA key.
        assert_eq!(
            facts(cert),
            Some(Facts {
                issuer_serial: String::new(),
                issuer_organization: String::new(),
                issuer_common_name: "tls.example.com".into(),
                serial: "229673498357438230989255230403126512916838857920".into(),
                key_algorithm: "RSA",
            })
        );
        assert_eq!(facts(b"junk"), None);
    }
}
