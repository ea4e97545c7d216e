//! Ingress rule hosts: exact DNS names and single-label `*.` wildcards, as the v1 API defines
//! them, and how a host matches a request's `Host` header.

/// A rule's host, validated.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    /// No host: the rule applies to requests for any host (the catch-all server).
    Any,
    /// An exact, lower-case DNS name.
    Exact(String),
    /// `*.SUFFIX`: any single label followed by `.SUFFIX` (stored without `*.`).
    Wildcard(String),
}

/// Whether `name` is a lower-case DNS-1123 subdomain: dot-separated labels of `a-z`, `0-9`
/// and inner `-`, 1 to 63 bytes each, 253 bytes in all.
pub fn is_dns_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

impl Host {
    /// Reads a rule's `host` field: empty or absent is [`Host::Any`].
    ///
    /// # Errors
    ///
    /// A message for hosts that are not DNS names, are IP addresses, or put `*` anywhere but
    /// as the whole first label.
    pub fn parse(host: Option<&str>) -> Result<Self, String> {
        let host = match host {
            None | Some("") => return Ok(Self::Any),
            Some(host) => host,
        };
        if host.parse::<std::net::IpAddr>().is_ok() {
            return Err(format!(
                "host {host:?} is an IP address; hosts must be names"
            ));
        }
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(suffix) => (true, suffix),
            None => (false, host),
        };
        if !is_dns_name(name) || (!wildcard && name.parse::<std::net::Ipv4Addr>().is_ok()) {
            return Err(format!(
                "host {host:?} is not a lower-case DNS name (a leading \"*.\" is the only wildcard)"
            ));
        }
        Ok(if wildcard {
            Self::Wildcard(name.to_owned())
        } else {
            Self::Exact(name.to_owned())
        })
    }

    /// Whether a request whose `Host` header is `header` (port stripped) matches.
    pub fn matches(&self, header: &str) -> bool {
        let header = header.to_ascii_lowercase();
        match self {
            Self::Any => true,
            Self::Exact(name) => *name == header,
            Self::Wildcard(suffix) => header
                .strip_suffix(suffix.as_str())
                .and_then(|rest| rest.strip_suffix('.'))
                .is_some_and(|label| !label.is_empty() && !label.contains('.')),
        }
    }

    /// The host as written in the Ingress (`*.foo.com`), or empty for [`Host::Any`].
    pub fn spelling(&self) -> String {
        match self {
            Self::Any => String::new(),
            Self::Exact(name) => name.clone(),
            Self::Wildcard(suffix) => format!("*.{suffix}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_wildcard_table() {
        let wildcard = Host::parse(Some("*.foo.com")).unwrap();
        assert!(wildcard.matches("bar.foo.com"));
        assert!(!wildcard.matches("baz.bar.foo.com"));
        assert!(!wildcard.matches("foo.com"));
        assert!(!wildcard.matches(".foo.com"));
        assert!(Host::parse(Some("foo.com")).unwrap().matches("FOO.com"));
        assert!(Host::parse(None).unwrap().matches("anything"));
    }

    #[test]
    fn refusals() {
        for bad in [
            "10.0.0.1",
            "::1",
            "foo.*.com",
            "*foo.com",
            "Foo.com",
            "a b",
            "x;}",
            "*.",
            "-a.com",
        ] {
            assert!(Host::parse(Some(bad)).is_err(), "{bad}");
        }
    }
}
