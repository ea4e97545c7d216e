//! The validating admission webhook (`--validating-webhook ADDR` with
//! `--validating-webhook-certificate` and `--validating-webhook-key`, as ingress-nginx): the
//! API server sends each Ingress it is about to store, and the webhook refuses those a sync
//! would refuse or nginx would not load, with the messages their events would carry.
//!
//! - [`args`]: the flags;
//! - [`review`]: AdmissionReview `admission.k8s.io/v1` in and out;
//! - [`check`]: the model, the rendering and `nginx -t` of the objects with the candidate;
//! - [`tls`]: the certificate and key, followed as they rotate;
//! - [`server`]: HTTPS and its bounds.
//!
//! ingress-nginx's webhook was the way in of CVE-2025-1974 (an unauthenticated review made
//! `nginx -t` load a library through an injected directive). Here a review's values reach
//! nginx only as quoted arguments of directives the renderer writes, its file paths are
//! those of the private prefix, and what it asks for is reviewed but never stored.

pub mod args;
pub mod check;
pub mod review;
pub mod server;
pub mod tls;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::info;

use crate::controller::Settings;
use crate::metrics::admission::AdmissionMetrics;
use crate::objects::Objects;

/// Where and as whom the webhook serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The address it listens on.
    pub address: SocketAddr,
    /// Its certificate chain (PEM).
    pub certificate: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
}

/// Why the webhook could not start.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The certificate or key cannot serve.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// The address could not be bound.
    #[error("cannot listen on {address} for the admission webhook: {source}")]
    Listen {
        /// The address.
        address: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}

/// Starts the webhook of `settings`, if it has one, reviewing against the objects `objects`
/// holds (empty until the controller has applied its first set: until then no IngressClass is
/// known, and every Ingress is allowed as another controller's); accepted reviews are measured
/// in `metrics`.
///
/// # Errors
///
/// [`WebhookError`] when the certificate cannot serve or the address cannot be bound.
pub async fn spawn(
    settings: &Settings,
    objects: watch::Receiver<Arc<Objects>>,
    metrics: AdmissionMetrics,
) -> Result<Option<JoinHandle<()>>, WebhookError> {
    let Some(config) = &settings.webhook else {
        return Ok(None);
    };
    let identity = tls::Identity::load(config.certificate.clone(), config.key.clone())?;
    let listener = listen(config.address).await?;
    let checker = check::Checker::new(
        settings.nginx.clone(),
        settings.options.clone(),
        settings.selection.clone(),
        objects,
        metrics,
    );
    info!(address = %config.address, "serving the validating admission webhook");
    Ok(Some(tokio::spawn(server::serve(
        listener,
        Arc::new(identity),
        Arc::new(checker),
    ))))
}

/// Binds `address`; the unspecified IPv6 address falls back to IPv4's where IPv6 is off.
async fn listen(address: SocketAddr) -> Result<tokio::net::TcpListener, WebhookError> {
    let error = |source| WebhookError::Listen { address, source };
    match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => Ok(listener),
        Err(e) if address.ip().is_unspecified() && address.is_ipv6() => {
            let v4 = SocketAddr::from((Ipv4Addr::UNSPECIFIED, address.port()));
            tokio::net::TcpListener::bind(v4)
                .await
                .map_err(|_| error(e))
        }
        Err(e) => Err(error(e)),
    }
}
