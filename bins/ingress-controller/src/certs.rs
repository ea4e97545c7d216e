//! TLS certificates on disk: one PEM file (chain then key) per Secret and content, mode 0600 in
//! a 0700 directory, written atomically.
//!
//! A file's name holds a hash of its content (`namespace_name-HASH.pem`), so a rotated
//! certificate is a new file and a new `ssl_certificate` path: the configuration text changes,
//! which is what makes the controller validate and reload it, and the running nginx's files are
//! never rewritten under it. `nginx -t` checks the new files; the old ones stay until a
//! configuration without them is loaded ([`prune`]).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Secret;
use sha2::{Digest as _, Sha256};

use crate::model::Certificate;
use crate::render::Options;

/// The certificate of Secret `secret_key` (`namespace/name`), `secret` when it exists, checked
/// at `now` (seconds since the Unix epoch; `None`: expiry not checked). The one loader of
/// Ingress TLS Secrets, the default certificate and Gateway listeners' certificateRefs.
///
/// # Errors
///
/// Why the Secret cannot serve: missing, without PEM `tls.crt` or `tls.key`, or refused by
/// [`crate::tls_check::check`]; the message ends by saying the default certificate serves.
pub fn load(
    secret_key: &str,
    secret: Option<&Secret>,
    now: Option<i64>,
) -> Result<Certificate, String> {
    let secret = secret.ok_or_else(|| {
        format!("TLS Secret {secret_key} not found; its hosts present the default certificate")
    })?;
    let field = |name: &str| {
        crate::tls_check::secret_pem(secret, name)
            .ok_or_else(|| format!("TLS Secret {secret_key} has no PEM {name}"))
    };
    let certificate = Certificate {
        cert: field("tls.crt")?,
        key: field("tls.key")?,
    };
    crate::tls_check::check(&certificate.cert, &certificate.key, now).map_err(|e| {
        format!("TLS Secret {secret_key} refused: {e}; its hosts present the default certificate")
    })?;
    Ok(certificate)
}

/// The bytes of `certificate`'s file: the chain, then the key.
fn contents(certificate: &Certificate) -> Vec<u8> {
    let mut pem = certificate.cert.clone();
    if !pem.ends_with(b"\n") {
        pem.push(b'\n');
    }
    pem.extend_from_slice(&certificate.key);
    pem
}

/// The file name of Secret `secret`'s (`namespace/name`) `certificate`: the Secret, then the
/// first 128 bits of the SHA-256 of the file's content, in hex.
pub fn file_name(secret: &str, certificate: &Certificate) -> String {
    let digest = Sha256::digest(contents(certificate));
    let hash: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{}-{hash}.pem", secret.replace('/', "_"))
}

/// Writes `certificates` where the rendered configuration expects them. Files already there
/// with that content are not rewritten; no file is removed (see [`prune`]).
///
/// # Errors
///
/// The I/O error, with the path.
pub fn write_all(
    options: &Options,
    certificates: &BTreeMap<String, Certificate>,
) -> Result<(), std::io::Error> {
    let dir = options.prefix.join("certs");
    std::fs::create_dir_all(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    for (secret, certificate) in certificates {
        let path = options.certificate_path(secret, certificate);
        let pem = contents(certificate);
        if std::fs::read(&path).ok().as_deref() != Some(pem.as_slice()) {
            write_private(&path, &pem)?;
        }
    }
    Ok(())
}

/// Removes the certificate files that `certificates`, those of the configuration nginx now
/// runs, do not name.
///
/// # Errors
///
/// The I/O error.
pub fn prune(
    options: &Options,
    certificates: &BTreeMap<String, Certificate>,
) -> Result<(), std::io::Error> {
    let wanted: Vec<PathBuf> = certificates
        .iter()
        .map(|(secret, certificate)| options.certificate_path(secret, certificate))
        .collect();
    for entry in std::fs::read_dir(options.prefix.join("certs"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "pem") && !wanted.contains(&path) {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// The subject of the generated default certificate, as ingress-nginx names its own.
pub const FAKE_CERTIFICATE_NAME: &str = "Kubernetes Ingress Controller Fake Certificate";

/// Generates a self-signed certificate and key (ECDSA P-256; CN and organization as
/// ingress-nginx's fake certificate, SAN `ingress.local`) and writes them to
/// `PREFIX/default-certificate.pem`, mode 0600, outside `certs/` (which [`prune`] owns). It is
/// the default server's certificate when `--default-ssl-certificate` names none.
///
/// # Errors
///
/// The generator's or the I/O error.
pub fn write_fake(prefix: &Path) -> Result<PathBuf, std::io::Error> {
    let key = rcgen::KeyPair::generate().map_err(std::io::Error::other)?;
    let mut params = rcgen::CertificateParams::new(vec!["ingress.local".to_owned()])
        .map_err(std::io::Error::other)?;
    let mut name = rcgen::DistinguishedName::new();
    name.push(rcgen::DnType::OrganizationName, "Acme Co");
    name.push(rcgen::DnType::CommonName, FAKE_CERTIFICATE_NAME);
    params.distinguished_name = name;
    let cert = params.self_signed(&key).map_err(std::io::Error::other)?;
    let mut pem = cert.pem().into_bytes();
    pem.extend_from_slice(key.serialize_pem().as_bytes());
    std::fs::create_dir_all(prefix)?;
    let path = prefix.join("default-certificate.pem");
    write_private(&path, &pem)?;
    Ok(path)
}

/// Writes `data` to `path` with mode 0600 through a temporary file renamed into place.
fn write_private(path: &Path, data: &[u8]) -> Result<(), std::io::Error> {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(data)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fake_certificate_is_a_valid_pair_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_fake(dir.path()).unwrap();
        let pem = std::fs::read(&path).unwrap();
        assert_eq!(crate::tls_check::check(&pem, &pem, Some(0)), Ok(()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(!path.starts_with(dir.path().join("certs")));
    }

    fn certificate(cert: &str) -> Certificate {
        Certificate {
            cert: cert.as_bytes().to_vec(),
            key: b"-----BEGIN PRIVATE KEY-----\n".to_vec(),
        }
    }

    #[test]
    fn written_0600_and_stale_files_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            prefix: dir.path().to_owned(),
            listen_address: "127.0.0.1".into(),
            http_port: 1,
            https_port: 2,
            workers: "1".into(),
            modules_dir: None,
            fallback_certificate: None,
            gateway_addresses: None,
        };
        let mut certificates = BTreeMap::new();
        let first = certificate("-----BEGIN CERTIFICATE-----");
        certificates.insert("ns/a".to_owned(), first.clone());
        write_all(&options, &certificates).unwrap();
        let path = options.certificate_path("ns/a", &first);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(dir.path().join("certs"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"-----BEGIN CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\n"
        );

        // A rotated certificate is a new file beside the one nginx runs with.
        let second = certificate("-----BEGIN CERTIFICATE-----\nnew\n");
        certificates.insert("ns/a".to_owned(), second.clone());
        write_all(&options, &certificates).unwrap();
        let rotated = options.certificate_path("ns/a", &second);
        assert_ne!(rotated, path);
        assert!(path.exists() && rotated.exists());
        prune(&options, &certificates).unwrap();
        assert!(!path.exists() && rotated.exists());
        prune(&options, &BTreeMap::new()).unwrap();
        assert!(!rotated.exists());
    }

    #[test]
    fn names_follow_the_secret_and_the_content() {
        let a = certificate("-----BEGIN CERTIFICATE-----");
        let name = file_name("ns/a", &a);
        assert!(
            name.starts_with("ns_a-") && name.ends_with(".pem"),
            "{name}"
        );
        assert_eq!(name.len(), "ns_a-".len() + 32 + ".pem".len());
        assert_eq!(name, file_name("ns/a", &a.clone()));
        assert_ne!(name, file_name("ns/b", &a));
        let other_key = Certificate {
            key: b"-----BEGIN EC PRIVATE KEY-----\n".to_vec(),
            ..a
        };
        assert_ne!(name, file_name("ns/a", &other_key));
    }
}
