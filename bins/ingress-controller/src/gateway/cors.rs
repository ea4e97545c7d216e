//! The CORS filter (S-F.7, `HTTPCORSFilter`) as a typed value: the origins, methods and
//! headers a rule allows, checked so that every one is plain data. nginx answers with them as
//! the Lua `access()` decides per request (docs §8): a preflight from an allowed origin gets
//! 204 and the `Access-Control-*` headers without reaching a backend, an actual request gets
//! `Access-Control-Allow-Origin` (and credentials and exposed headers) on its response.
//!
//! An origin is `*` alone, or `http` or `https`, `://`, a host and an optional port: the host is
//! a lower-case DNS name, `*` (any host), or `*.` and a DNS name, which matches any host that
//! ends with `.` and that name (the spec's wildcard, greedy to the left, so
//! `https://*.bar.com` allows `https://a.b.bar.com` but not `https://bar.com` nor
//! `https://foobar.com`). Without a port the scheme's (80, 443) is meant, on both sides.

use cluster_state::gateway::CorsFilter;

use super::Fault;
use super::filters::usable_header_name;
use crate::hosts::is_dns_name;

/// The CORS of a rule, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cors {
    /// The allowed origins as written (`*` alone, or scheme, host and optional port).
    pub origins: Vec<String>,
    /// Whether credentials are allowed (`Access-Control-Allow-Credentials: true`).
    pub credentials: bool,
    /// The allowed methods, or `["*"]`.
    pub methods: Vec<String>,
    /// The allowed request headers, or `["*"]`.
    pub headers: Vec<String>,
    /// The response headers exposed to scripts.
    pub expose: Vec<String>,
    /// How long a preflight answer may be cached, in seconds.
    pub max_age: u32,
}

/// The most entries a list may have (the CRD's largest `MaxItems`).
const MAX_ENTRIES: usize = 64;

/// The most bytes all the values together may have: percent-encoded (at most three bytes
/// each) with their field names, they still fit one nginx word (4 KB).
const MAX_BYTES: usize = 1000;

/// Whether `origin` is an origin S-F.7 serves (see the module documentation).
fn usable_origin(origin: &str) -> bool {
    if origin == "*" {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let port_ok = port.is_none_or(|p| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u16>().is_ok_and(|p| p > 0)
    });
    let host_ok = host == "*" || is_dns_name(host.strip_prefix("*.").unwrap_or(host));
    matches!(scheme, "http" | "https") && port_ok && host_ok
}

/// The typed CORS of `filter`, or why its rule is invalid: an origin, method or header name
/// outside what the module documentation describes, `*` beside other entries, too many
/// entries (64) or bytes (1000 in all), or a `maxAge` below 1.
pub fn cors(filter: &CorsFilter) -> Result<Cors, Fault> {
    let refused = |why: String| Fault::new("UnsupportedValue", format!("CORS: {why}"));
    let list = |what: &str,
                values: &Option<Vec<String>>,
                star: bool,
                usable: &dyn Fn(&str) -> bool|
     -> Result<Vec<String>, Fault> {
        let values = values.clone().unwrap_or_default();
        if values.len() > MAX_ENTRIES {
            return Err(refused(format!("more than {MAX_ENTRIES} {what}")));
        }
        if values.len() > 1 && values.iter().any(|v| v == "*") {
            return Err(refused(format!("* among other {what}")));
        }
        match values.iter().find(|v| !((star && *v == "*") || usable(v))) {
            Some(bad) => Err(refused(format!("{what}: {bad:?} is not served"))),
            None => Ok(values),
        }
    };
    let method =
        |m: &str| !m.is_empty() && m.len() <= 32 && m.bytes().all(|b| b.is_ascii_uppercase());
    let max_age = u32::try_from(filter.max_age())
        .ok()
        .filter(|age| *age >= 1)
        .ok_or_else(|| refused(format!("maxAge {} is below 1", filter.max_age())))?;
    let cors = Cors {
        origins: list("origins", &filter.allow_origins, true, &usable_origin)?,
        credentials: filter.allow_credentials.unwrap_or(false),
        methods: list("methods", &filter.allow_methods, true, &method)?,
        headers: list("headers", &filter.allow_headers, true, &usable_header_name)?,
        expose: list(
            "exposed headers",
            &filter.expose_headers,
            false,
            &usable_header_name,
        )?,
        max_age,
    };
    let lists = [&cors.origins, &cors.methods, &cors.headers, &cors.expose];
    let bytes: usize = lists
        .iter()
        .flat_map(|l| l.iter())
        .map(|v| v.len() + 2)
        .sum();
    if bytes > MAX_BYTES {
        return Err(refused(format!(
            "its values are longer than {MAX_BYTES} bytes"
        )));
    }
    Ok(cors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(origins: &[&str], methods: &[&str], headers: &[&str]) -> CorsFilter {
        let list = |l: &[&str]| Some(l.iter().map(|s| (*s).to_owned()).collect());
        CorsFilter {
            allow_origins: list(origins),
            allow_methods: list(methods),
            allow_headers: list(headers),
            ..Default::default()
        }
    }

    /// The values of HTTPRouteCORS's manifest are served; what could not be plain data, or
    /// what the CRD's rules forbid, makes the rule invalid.
    #[test]
    fn s_f_7_values() {
        let fine = cors(&filter(
            &[
                "https://www.foo.com",
                "https://*.bar.com",
                "http://a.example:8080",
            ],
            &["GET", "OPTIONS"],
            &["x-header-1", "x-header-2"],
        ))
        .unwrap();
        assert_eq!(fine.max_age, 5);
        assert!(!fine.credentials);
        assert!(cors(&filter(&["*"], &["*"], &["*"])).is_ok());
        assert!(cors(&filter(&["https://*"], &[], &[])).is_ok());
        for refused in [
            filter(&["*", "https://a.example"], &[], &[]),
            filter(&["ftp://a.example"], &[], &[]),
            filter(&["https://A.example"], &[], &[]),
            filter(&["https://a.example:0"], &[], &[]),
            filter(&["https://a.example:x"], &[], &[]),
            filter(&["https://a.example/path"], &[], &[]),
            filter(&["https://a.*.example"], &[], &[]),
            filter(&["https://a.example\r\nX: y"], &[], &[]),
            filter(&["https://a.example"], &["get"], &[]),
            filter(&["https://a.example"], &["GET", "*"], &[]),
            filter(&["https://a.example"], &[], &["x_h"]),
            filter(&["https://a.example"], &[], &["x-h\n"]),
        ] {
            let fault = cors(&refused).unwrap_err();
            assert_eq!(fault.reason, "UnsupportedValue", "{refused:?}");
        }
        let mut exposed = filter(&[], &[], &[]);
        exposed.expose_headers = Some(vec!["*".into()]);
        assert!(cors(&exposed).is_err());
        let long = format!("https://{}.example", "a".repeat(60));
        let many: Vec<&str> = std::iter::repeat_n(long.as_str(), 20).collect();
        assert!(cors(&filter(&many, &[], &[])).is_err());
        let mut zero = filter(&[], &[], &[]);
        zero.max_age = Some(0);
        assert!(cors(&zero).is_err());
    }
}
