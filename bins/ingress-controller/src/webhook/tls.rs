//! The webhook's certificate and key (PEM files, as ingress-nginx's
//! `--validating-webhook-certificate` and `--validating-webhook-key`), read again when either
//! file changes: cert-manager rotates the Secret, and the kubelet swaps the mounted files
//! (new files behind a symbolic link). Each new connection looks at the files' identity
//! (device, inode, size, modification time); the TLS configuration is rebuilt only when that
//! changed. A pair that cannot be used (half-written, a key of another certificate) is logged
//! once and the last good one kept.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tracing::{info, warn};

/// Why the certificate and key cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file holds no usable PEM.
    #[error("{path}: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// rustls refused the pair (e.g. the key is not the certificate's).
    #[error("the webhook's certificate and key cannot serve: {0}")]
    Config(#[from] rustls::Error),
}

/// What identifies a file's content without reading it.
type Stamp = Option<(u64, u64, u64, SystemTime)>;

fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino(), meta.len(), meta.modified().ok()?))
}

#[derive(Debug)]
struct Loaded {
    stamps: [Stamp; 2],
    config: Arc<ServerConfig>,
    /// The stamps of the last pair that failed, so that it is logged once.
    failed: Option<[Stamp; 2]>,
}

/// The webhook's certificate and key files, and the TLS configuration last built from them.
#[derive(Debug)]
pub struct Identity {
    certificate: PathBuf,
    key: PathBuf,
    loaded: Mutex<Loaded>,
}

impl Identity {
    /// Reads `certificate` and `key`.
    ///
    /// # Errors
    ///
    /// [`TlsError`] when they cannot serve.
    pub fn load(certificate: PathBuf, key: PathBuf) -> Result<Self, TlsError> {
        let stamps = [stamp(&certificate), stamp(&key)];
        let config = Arc::new(server_config(&certificate, &key)?);
        Ok(Self {
            certificate,
            key,
            loaded: Mutex::new(Loaded {
                stamps,
                config,
                failed: None,
            }),
        })
    }

    /// The TLS configuration for a new connection: rebuilt if a file changed, else the last.
    pub fn server_config(&self) -> Arc<ServerConfig> {
        let stamps = [stamp(&self.certificate), stamp(&self.key)];
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if loaded.stamps != stamps && loaded.failed != Some(stamps) {
            match server_config(&self.certificate, &self.key) {
                Ok(config) => {
                    info!("the webhook's certificate changed; new connections use it");
                    *loaded = Loaded {
                        stamps,
                        config: Arc::new(config),
                        failed: None,
                    };
                }
                Err(e) => {
                    warn!("{e}; the webhook keeps its previous certificate");
                    loaded.failed = Some(stamps);
                }
            }
        }
        Arc::clone(&loaded.config)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

/// A server configuration (rustls's safe protocol versions, HTTP/1.1 over ALPN) presenting `certificate`'s chain.
fn server_config(certificate: &Path, key: &Path) -> Result<ServerConfig, TlsError> {
    let pem_error = |path: &Path, message: String| TlsError::Pem {
        path: path.to_owned(),
        message,
    };
    let chain = CertificateDer::pem_slice_iter(&read(certificate)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(certificate, format!("not valid PEM: {e}")))?;
    if chain.is_empty() {
        return Err(pem_error(certificate, "no CERTIFICATE block".into()));
    }
    let private = PrivateKeyDer::from_pem_slice(&read(key)?)
        .map_err(|e| pem_error(key, format!("no valid PEM private key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, private)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &[u8] = include_bytes!("../../tests/fixtures/tls.crt");
    const KEY: &[u8] = include_bytes!("../../tests/fixtures/tls.key");
    const OTHER_KEY: &[u8] = include_bytes!("../../tests/fixtures/other.key");

    fn files(dir: &Path, cert: &[u8], key: &[u8]) -> (PathBuf, PathBuf) {
        let (c, k) = (dir.join("cert"), dir.join("key"));
        // Through a rename, as the kubelet and cert-manager swap files: a new inode.
        for (path, data) in [(&c, cert), (&k, key)] {
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, data).unwrap();
            std::fs::rename(&tmp, path).unwrap();
        }
        (c, k)
    }

    #[test]
    fn a_pair_that_cannot_serve_is_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let (c, k) = files(dir.path(), CERT, OTHER_KEY);
        assert!(matches!(
            Identity::load(c.clone(), k.clone()),
            Err(TlsError::Config(_))
        ));
        files(dir.path(), b"junk", KEY);
        assert!(matches!(
            Identity::load(c.clone(), k.clone()),
            Err(TlsError::Pem { .. })
        ));
        assert!(matches!(
            Identity::load(dir.path().join("none"), k),
            Err(TlsError::Read { .. })
        ));
    }

    #[test]
    fn changed_files_are_read_again_and_a_bad_change_keeps_the_last_pair() {
        let dir = tempfile::tempdir().unwrap();
        let (c, k) = files(dir.path(), CERT, KEY);
        let identity = Identity::load(c, k).unwrap();
        let first = identity.server_config();
        assert!(Arc::ptr_eq(&first, &identity.server_config()));
        // A key of another certificate: the last good configuration stays.
        files(dir.path(), CERT, OTHER_KEY);
        assert!(Arc::ptr_eq(&first, &identity.server_config()));
        // A good pair again (new files): a new configuration.
        files(dir.path(), CERT, KEY);
        let second = identity.server_config();
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(Arc::ptr_eq(&second, &identity.server_config()));
    }
}
