//! Reading a configuration file's text into a [`KubeProxyConfiguration`], with errors that name
//! the file, the line and column, and the field (as cluster-state reads manifests:
//! serde-saphyr, through `serde_path_to_error` for the field's path).
//!
//! The text is read twice: first only `apiVersion` and `kind`, which must be kube-proxy's,
//! then whole, where a field the type does not have, or a value of the wrong type, is an error.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::{MessageFormatter, Spanned};

use super::file::{API_VERSION, KIND, KubeProxyConfiguration};

/// The largest configuration file read, in bytes (1 MiB; kubeadm's is under 2 KiB).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// A configuration file that cannot be used: `PATH:LINE:COLUMN: FIELD: MESSAGE` (the position
/// and field when known).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// Line and column, from 1.
    pub position: Option<(u64, u64)>,
    /// The field's path (`iptables.masqueradeBit`), empty when the error is not about one.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl ConfigError {
    /// An error about the whole file, or about a field whose position is not known.
    pub fn new(path: &Path, field: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            position: None,
            field: field.to_owned(),
            message: message.into(),
        }
    }

    fn yaml(path: &Path, error: &serde_saphyr::Error, field: String) -> Self {
        let error = error.without_snippet();
        let message = serde_saphyr::DefaultMessageFormatter
            .format_message(error)
            .chars()
            .flat_map(|c| {
                // One printable line, whatever the input held.
                let escaped: Vec<char> = if c.is_control() {
                    c.escape_default().collect()
                } else {
                    vec![c]
                };
                escaped
            })
            .collect();
        Self {
            path: path.to_owned(),
            position: error.location().map(|l| (l.line(), l.column())),
            field: if field == "." { String::new() } else { field },
            message,
        }
    }
}

/// What the first reading looks at.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head {
    api_version: Option<Spanned<String>>,
    kind: Option<Spanned<String>>,
}

fn options() -> serde_saphyr::Options {
    serde_saphyr::options! { with_snippet: false }
}

/// Reads the configuration in `text`, the content of the file `path` (used in errors).
///
/// # Errors
///
/// Text that is not YAML, not one `KubeProxyConfiguration` of [`API_VERSION`], or that has a
/// field the type does not have or a value of the wrong type; a file larger than
/// [`MAX_CONFIG_BYTES`].
pub fn read_config(path: &Path, text: &str) -> Result<KubeProxyConfiguration, ConfigError> {
    if text.len() > MAX_CONFIG_BYTES {
        let message = format!(
            "{} bytes, over the limit of {MAX_CONFIG_BYTES} bytes for a configuration file",
            text.len()
        );
        return Err(ConfigError::new(path, "", message));
    }
    let head = serde_saphyr::from_str_with_options::<Option<Head>>(text, options())
        .map_err(|error| ConfigError::yaml(path, &error, String::new()))?;
    let Some(head) = head else {
        return Err(ConfigError::new(
            path,
            "",
            format!("empty: expected a {KIND} of {API_VERSION}"),
        ));
    };
    check_head(path, "apiVersion", head.api_version.as_ref(), API_VERSION)?;
    check_head(path, "kind", head.kind.as_ref(), KIND)?;
    let mut field = String::new();
    serde_saphyr::with_deserializer_from_str_with_options(text, options(), |deserializer| {
        let mut track = serde_path_to_error::Track::new();
        let tracked = serde_path_to_error::Deserializer::new(deserializer, &mut track);
        KubeProxyConfiguration::deserialize(tracked).inspect_err(|_| {
            field = track.path().to_string();
        })
    })
    .map_err(|error| ConfigError::yaml(path, &error, field))
}

fn check_head(
    path: &Path,
    field: &str,
    value: Option<&Spanned<String>>,
    wanted: &str,
) -> Result<(), ConfigError> {
    match value {
        Some(value) if value.value == wanted => Ok(()),
        Some(value) => Err(ConfigError {
            position: Some((value.referenced.line(), value.referenced.column())),
            ..ConfigError::new(
                path,
                field,
                format!("{:?} is not supported: expected {wanted:?}", value.value),
            )
        }),
        None => Err(ConfigError::new(
            path,
            field,
            format!("missing: expected {wanted:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<KubeProxyConfiguration, ConfigError> {
        read_config(Path::new("config.conf"), text)
    }

    const HEAD: &str =
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n";

    #[test]
    fn an_unknown_field_is_named_with_its_line_and_column() {
        let error = read(&format!(
            "{HEAD}iptables:\n  masqueradeAll: true\n  bogus: 1\n"
        ))
        .unwrap_err();
        assert_eq!(error.position, Some((5, 3)), "{error}");
        assert_eq!(error.field, "iptables.bogus", "{error}");
        assert!(error.message.contains("unknown field `bogus`"), "{error}");
        let top = read(&format!("{HEAD}udpIdleTimeout: 250ms\n")).unwrap_err();
        assert_eq!(top.position, Some((3, 1)), "{top}");
        assert!(top.message.contains("udpIdleTimeout"), "{top}");
    }

    #[test]
    fn a_wrong_type_is_named_with_its_line_and_column() {
        let error = read(&format!("{HEAD}iptables:\n  masqueradeBit: fourteen\n")).unwrap_err();
        assert_eq!(error.field, "iptables.masqueradeBit", "{error}");
        assert_eq!(error.position, Some((4, 18)), "{error}");
        assert_eq!(
            error.to_string(),
            format!(
                "config.conf:4:18: iptables.masqueradeBit: {}",
                error.message
            )
        );
        let duration = read(&format!("{HEAD}configSyncPeriod: 15\n")).unwrap_err();
        assert_eq!(duration.field, "configSyncPeriod", "{duration}");
        assert_eq!(duration.position.map(|p| p.0), Some(3), "{duration}");
        let list = read(&format!("{HEAD}nodePortAddresses: 10.0.0.0/8\n")).unwrap_err();
        assert_eq!(list.field, "nodePortAddresses", "{list}");
    }

    #[test]
    fn only_kube_proxys_api_version_and_kind_are_read() {
        let error =
            read("apiVersion: kubeproxy.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n")
                .unwrap_err();
        assert_eq!(error.field, "apiVersion");
        assert_eq!(error.position, Some((1, 13)));
        let error = read("apiVersion: kubeproxy.config.k8s.io/v1alpha1\n").unwrap_err();
        assert_eq!(error.field, "kind");
        assert!(read("").is_err());
        assert!(read("{HEAD}: [").is_err());
        assert!(read(HEAD).is_ok());
    }

    #[test]
    fn durations_are_go_durations() {
        let config = read(&format!(
            "{HEAD}iptables:\n  syncPeriod: 1m30s\n  minSyncPeriod: 500ms\n"
        ))
        .unwrap();
        let iptables = config.iptables.unwrap();
        assert_eq!(
            iptables.sync_period.map(|d| d.0),
            Some(std::time::Duration::from_secs(90))
        );
        assert_eq!(
            iptables.min_sync_period.map(|d| d.0),
            Some(std::time::Duration::from_millis(500))
        );
    }

    #[test]
    fn winkernel_is_read_and_ignored() {
        assert!(read(&format!("{HEAD}winkernel:\n  anything: [1, 2]\n")).is_ok());
    }

    #[test]
    fn an_oversized_file_is_refused_unread() {
        let text = format!("{HEAD}#{}\n", "x".repeat(MAX_CONFIG_BYTES));
        assert!(read(&text).unwrap_err().message.contains("over the limit"));
    }
}
