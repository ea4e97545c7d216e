//! TLS certificates on disk: one PEM file (chain then key) per Secret, mode 0600 in a 0700
//! directory, written atomically; files of Secrets no longer used are removed.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use crate::model::Certificate;
use crate::render::Options;

/// Writes `certificates` where the rendered configuration expects them, and removes stale
/// files from the directory. Files whose content is unchanged are not rewritten.
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
    let mut wanted: Vec<PathBuf> = Vec::new();
    for (secret, certificate) in certificates {
        let path = options.certificate_path(secret);
        let mut pem = certificate.cert.clone();
        if !pem.ends_with(b"\n") {
            pem.push(b'\n');
        }
        pem.extend_from_slice(&certificate.key);
        if std::fs::read(&path).ok().as_deref() != Some(pem.as_slice()) {
            write_private(&path, &pem)?;
        }
        wanted.push(path);
    }
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "pem") && !wanted.contains(&path) {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
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
    fn written_0600_and_stale_files_removed() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            prefix: dir.path().to_owned(),
            listen_address: "127.0.0.1".into(),
            http_port: 1,
            https_port: 2,
            workers: "1".into(),
            modules_dir: None,
        };
        let mut certificates = BTreeMap::new();
        certificates.insert(
            "ns/a".to_owned(),
            Certificate {
                cert: b"-----BEGIN CERTIFICATE-----".to_vec(),
                key: b"-----BEGIN PRIVATE KEY-----\n".to_vec(),
            },
        );
        write_all(&options, &certificates).unwrap();
        let path = options.certificate_path("ns/a");
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
        write_all(&options, &BTreeMap::new()).unwrap();
        assert!(!path.exists());
    }
}
