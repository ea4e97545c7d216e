//! The `nginx.ingress.kubernetes.io/` annotations we support, parsed into typed values.
//!
//! Every value goes through an allow-list parser ([`values`]); a value that fails is reported
//! as an [`AnnotationError`] and ignored, as if the annotation were absent. Annotations with our
//! prefix that we do not support (snippets above all) are reported too and never reach
//! nginx.conf.

use std::collections::BTreeMap;

pub mod values;

/// The prefix of every annotation we read.
pub const PREFIX: &str = "nginx.ingress.kubernetes.io/";

/// How nginx talks to the backend (`backend-protocol`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendProtocol {
    /// Plain HTTP/1.1 (the default).
    #[default]
    Http,
    /// HTTP over TLS.
    Https,
    /// gRPC over cleartext HTTP/2.
    Grpc,
}

/// A redirect answered by nginx itself instead of proxying.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The status code (301, 302, 303, 307 or 308).
    pub code: u16,
    /// The absolute URL.
    pub url: String,
}

/// Cross-origin resource sharing headers (`enable-cors` and the `cors-*` options).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cors {
    /// Allowed origins: `*`, or exact origins (a `*.` host matches one label).
    pub allow_origins: Vec<String>,
    /// `Access-Control-Allow-Methods`.
    pub allow_methods: String,
    /// `Access-Control-Allow-Headers`.
    pub allow_headers: String,
    /// `Access-Control-Expose-Headers`, if any.
    pub expose_headers: Option<String>,
    /// `Access-Control-Allow-Credentials: true` when set.
    pub allow_credentials: bool,
    /// `Access-Control-Max-Age` in seconds.
    pub max_age: u32,
}

/// How a canary Ingress takes traffic from the primary one (`canary-*`); header, then cookie,
/// then weight.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Canary {
    /// Request header that selects the canary (`always`, `never`, or [`Canary::header_value`]).
    pub header: Option<String>,
    /// The header value that selects the canary instead of `always`.
    pub header_value: Option<String>,
    /// Cookie that selects the canary (`always` or `never`).
    pub cookie: Option<String>,
    /// Share of the remaining requests sent to the canary, out of [`Canary::weight_total`].
    pub weight: u32,
    /// The denominator of [`Canary::weight`] (default 100).
    pub weight_total: u32,
}

/// Session affinity by cookie (`affinity: cookie` and `session-cookie-*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Affinity {
    /// The cookie's name (default `INGRESSCOOKIE`).
    pub cookie_name: String,
    /// The cookie's `Path` (default `/`).
    pub path: String,
    /// The cookie's `Max-Age`, if any.
    pub max_age: Option<u32>,
}

/// Request limits per client address, per replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `limit-rps`: requests per second.
    pub rps: Option<u32>,
    /// `limit-connections`: concurrent connections.
    pub connections: Option<u32>,
    /// `limit-burst-multiplier` (default 5): burst = rate × multiplier.
    pub burst_multiplier: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            rps: None,
            connections: None,
            burst_multiplier: 5,
        }
    }
}

/// When a request that failed on one endpoint is passed to another (`proxy-next-upstream`,
/// `proxy-next-upstream-tries`, `proxy-next-upstream-timeout`). The Lua balancer gives each
/// try an endpoint this request has not tried yet ([`crate::lua`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextUpstream {
    /// The failures that pass the request on ([`values::NEXT_UPSTREAM`] tokens).
    pub conditions: Vec<&'static str>,
    /// Most tries in all, the first included (`0`: as many as there are endpoints).
    pub tries: u32,
    /// Most seconds spent passing the request on (`0`: no limit).
    pub timeout: u32,
}

impl Default for NextUpstream {
    /// ingress-nginx's defaults: `error timeout`, 3 tries, no time limit.
    fn default() -> Self {
        Self {
            conditions: vec!["error", "timeout"],
            tries: 3,
            timeout: 0,
        }
    }
}

/// Proxy settings (`proxy-*`); `None` keeps nginx's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proxy {
    /// `proxy-connect-timeout` in seconds.
    pub connect_timeout: Option<u32>,
    /// `proxy-send-timeout` in seconds.
    pub send_timeout: Option<u32>,
    /// `proxy-read-timeout` in seconds.
    pub read_timeout: Option<u32>,
    /// `proxy-body-size` (`client_max_body_size`), an nginx size.
    pub body_size: Option<String>,
    /// `proxy-buffering`.
    pub buffering: Option<bool>,
    /// `proxy-next-upstream*`.
    pub next_upstream: NextUpstream,
}

/// The typed annotations of one Ingress.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `ssl-redirect` (default: redirect when the host has TLS).
    pub ssl_redirect: Option<bool>,
    /// `force-ssl-redirect`: redirect to HTTPS even without a certificate here.
    pub force_ssl_redirect: bool,
    /// `use-regex`: this Ingress's ImplementationSpecific paths are regular expressions.
    pub use_regex: bool,
    /// `rewrite-target`.
    pub rewrite_target: Option<String>,
    /// `backend-protocol`.
    pub backend_protocol: BackendProtocol,
    /// `proxy-*` settings.
    pub proxy: Proxy,
    /// `whitelist-source-range` / `allowlist-source-range`: only these clients.
    pub allow_sources: Vec<String>,
    /// `denylist-source-range`: never these clients.
    pub deny_sources: Vec<String>,
    /// `permanent-redirect` or `temporal-redirect` (the permanent one wins if both are set).
    pub redirect: Option<Redirect>,
    /// `limit-*`.
    pub limits: Limits,
    /// `enable-cors` and its options.
    pub cors: Option<Cors>,
    /// `canary: "true"` and its rules.
    pub canary: Option<Canary>,
    /// `affinity: cookie`.
    pub affinity: Option<Affinity>,
    /// `upstream-hash-by`: the nginx variable to hash on.
    pub upstream_hash_by: Option<String>,
}

/// An annotation that was refused, and why; the annotation is ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnotationError {
    /// The annotation's key, prefix included.
    pub key: String,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for AnnotationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "annotation {}: {} (ignored)", self.key, self.reason)
    }
}

/// The annotations we read, without the prefix. Anything else with the prefix is refused.
const KNOWN: &[&str] = &[
    "ssl-redirect",
    "force-ssl-redirect",
    "use-regex",
    "rewrite-target",
    "backend-protocol",
    "proxy-connect-timeout",
    "proxy-send-timeout",
    "proxy-read-timeout",
    "proxy-body-size",
    "proxy-buffering",
    "proxy-next-upstream",
    "proxy-next-upstream-tries",
    "proxy-next-upstream-timeout",
    "whitelist-source-range",
    "allowlist-source-range",
    "denylist-source-range",
    "permanent-redirect",
    "permanent-redirect-code",
    "temporal-redirect",
    "temporal-redirect-code",
    "limit-rps",
    "limit-connections",
    "limit-burst-multiplier",
    "enable-cors",
    "cors-allow-origin",
    "cors-allow-methods",
    "cors-allow-headers",
    "cors-expose-headers",
    "cors-allow-credentials",
    "cors-max-age",
    "canary",
    "canary-by-header",
    "canary-by-header-value",
    "canary-by-cookie",
    "canary-weight",
    "canary-weight-total",
    "affinity",
    "session-cookie-name",
    "session-cookie-path",
    "session-cookie-max-age",
    "upstream-hash-by",
];

/// Reads one annotation at a time, collecting the refusals.
struct Reader<'a> {
    annotations: &'a BTreeMap<String, String>,
    errors: Vec<AnnotationError>,
}

impl Reader<'_> {
    /// The parsed value of `name`, or `None` when absent or refused (and then reported).
    fn get<T>(&mut self, name: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Option<T> {
        let key = format!("{PREFIX}{name}");
        let raw = self.annotations.get(&key)?;
        let parsed = if raw.len() > values::MAX_VALUE {
            Err(format!("longer than {} bytes", values::MAX_VALUE))
        } else {
            parse(raw.trim())
        };
        parsed
            .map_err(|reason| self.errors.push(AnnotationError { key, reason }))
            .ok()
    }

    fn flag(&mut self, name: &str) -> Option<bool> {
        self.get(name, values::boolean)
    }

    fn seconds(&mut self, name: &str) -> Option<u32> {
        self.get(name, |v| values::integer(v, 1, 86_400))
    }

    fn redirect(&mut self, name: &str, default_code: u16) -> Option<Redirect> {
        let url = self.get(name, values::url)?;
        let code = self
            .get(&format!("{name}-code"), |v| {
                match values::integer(v, 300, 308) {
                    Ok(c @ (301 | 302 | 303 | 307 | 308)) => Ok(c),
                    _ => Err("expected 301, 302, 303, 307 or 308".into()),
                }
            })
            .unwrap_or(u32::from(default_code));
        Some(Redirect {
            code: u16::try_from(code).unwrap_or(default_code),
            url,
        })
    }
}

/// Parses the annotations of one object. Refused values are returned as errors and left out.
pub fn parse(annotations: &BTreeMap<String, String>) -> (Annotations, Vec<AnnotationError>) {
    let mut r = Reader {
        annotations,
        errors: Vec::new(),
    };
    for key in annotations.keys() {
        if let Some(name) = key.strip_prefix(PREFIX)
            && !KNOWN.contains(&name)
        {
            let reason = if name.ends_with("snippet") {
                "snippet annotations are not supported: raw nginx text is never accepted"
            } else {
                "not supported by this controller"
            };
            r.errors.push(AnnotationError {
                key: key.clone(),
                reason: reason.into(),
            });
        }
    }
    let backend_protocol = r
        .get("backend-protocol", |v| {
            match v.to_ascii_uppercase().as_str() {
                "HTTP" => Ok(BackendProtocol::Http),
                "HTTPS" => Ok(BackendProtocol::Https),
                "GRPC" => Ok(BackendProtocol::Grpc),
                _ => Err("expected HTTP, HTTPS or GRPC".into()),
            }
        })
        .unwrap_or_default();
    let proxy = Proxy {
        connect_timeout: r.seconds("proxy-connect-timeout"),
        send_timeout: r.seconds("proxy-send-timeout"),
        read_timeout: r.seconds("proxy-read-timeout"),
        body_size: r.get("proxy-body-size", values::size),
        buffering: r.get("proxy-buffering", |v| match v {
            "on" => Ok(true),
            "off" => Ok(false),
            _ => Err("expected on or off".into()),
        }),
        next_upstream: next_upstream(&mut r),
    };
    let allowlist = r.get("allowlist-source-range", values::cidrs);
    let whitelist = r.get("whitelist-source-range", values::cidrs);
    let permanent = r.redirect("permanent-redirect", 301);
    let temporal = r.redirect("temporal-redirect", 302);
    let limits = Limits {
        rps: r.get("limit-rps", |v| values::integer(v, 1, 1_000_000)),
        connections: r.get("limit-connections", |v| values::integer(v, 1, 1_000_000)),
        burst_multiplier: r
            .get("limit-burst-multiplier", |v| values::integer(v, 1, 100))
            .unwrap_or(5),
    };
    let annotations = Annotations {
        ssl_redirect: r.flag("ssl-redirect"),
        force_ssl_redirect: r.flag("force-ssl-redirect").unwrap_or(false),
        use_regex: r.flag("use-regex").unwrap_or(false),
        rewrite_target: r.get("rewrite-target", values::rewrite_target),
        backend_protocol,
        proxy,
        allow_sources: allowlist.or(whitelist).unwrap_or_default(),
        deny_sources: r
            .get("denylist-source-range", values::cidrs)
            .unwrap_or_default(),
        redirect: permanent.or(temporal),
        limits,
        cors: cors(&mut r),
        canary: canary(&mut r),
        affinity: affinity(&mut r),
        upstream_hash_by: r.get("upstream-hash-by", values::hash_variable),
    };
    (annotations, r.errors)
}

fn next_upstream(r: &mut Reader<'_>) -> NextUpstream {
    let default = NextUpstream::default();
    NextUpstream {
        conditions: r
            .get("proxy-next-upstream", values::next_upstream)
            .unwrap_or(default.conditions),
        tries: r
            .get("proxy-next-upstream-tries", |v| values::integer(v, 0, 100))
            .unwrap_or(default.tries),
        timeout: r
            .get("proxy-next-upstream-timeout", |v| {
                values::integer(v, 0, 86_400)
            })
            .unwrap_or(default.timeout),
    }
}

fn cors(r: &mut Reader<'_>) -> Option<Cors> {
    const METHODS: &str = "GET, PUT, POST, DELETE, PATCH, OPTIONS";
    const HEADERS: &str = "DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, \
                           Cache-Control, Content-Type, Range, Authorization";
    let enabled = r.flag("enable-cors").unwrap_or(false);
    // Read the options even when disabled, so that bad values are reported either way.
    let origins = r.get("cors-allow-origin", |v| {
        values::list(v, values::origin).map(|l| l.split(", ").map(String::from).collect())
    });
    let cors = Cors {
        allow_origins: origins.unwrap_or_else(|| vec!["*".into()]),
        allow_methods: r
            .get("cors-allow-methods", |v| values::list(v, values::method))
            .unwrap_or_else(|| METHODS.into()),
        allow_headers: r
            .get("cors-allow-headers", |v| {
                values::list(v, values::header_name)
            })
            .unwrap_or_else(|| HEADERS.into()),
        expose_headers: r.get("cors-expose-headers", |v| {
            values::list(v, values::header_name)
        }),
        allow_credentials: r.flag("cors-allow-credentials").unwrap_or(true),
        max_age: r
            .get("cors-max-age", |v| values::integer(v, 0, 315_360_000))
            .unwrap_or(1_728_000),
    };
    enabled.then_some(cors)
}

fn canary(r: &mut Reader<'_>) -> Option<Canary> {
    let enabled = r.flag("canary").unwrap_or(false);
    let weight_total = r
        .get("canary-weight-total", |v| values::integer(v, 1, 1_000_000))
        .unwrap_or(100);
    let canary = Canary {
        header: r.get("canary-by-header", values::header_name),
        header_value: r.get("canary-by-header-value", values::token),
        cookie: r.get("canary-by-cookie", values::token),
        weight: r
            .get("canary-weight", |v| values::integer(v, 0, weight_total))
            .unwrap_or(0),
        weight_total,
    };
    enabled.then_some(canary)
}

fn affinity(r: &mut Reader<'_>) -> Option<Affinity> {
    let enabled = r
        .get("affinity", |v| match v {
            "cookie" => Ok(true),
            _ => Err("the only supported affinity is cookie".into()),
        })
        .unwrap_or(false);
    let affinity = Affinity {
        cookie_name: r
            .get("session-cookie-name", values::token)
            .unwrap_or_else(|| "INGRESSCOOKIE".into()),
        path: r
            .get("session-cookie-path", |v| {
                if v.starts_with('/')
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"/-._~".contains(&b))
                {
                    Ok(v.to_owned())
                } else {
                    Err("expected a path of letters, digits and /-._~".into())
                }
            })
            .unwrap_or_else(|| "/".into()),
        max_age: r.get("session-cookie-max-age", |v| {
            values::integer(v, 1, 315_360_000)
        }),
    };
    enabled.then_some(affinity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (format!("{PREFIX}{k}"), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn valid_values_are_typed() {
        let (a, errors) = parse(&annotations(&[
            ("ssl-redirect", "false"),
            ("backend-protocol", "grpc"),
            ("proxy-read-timeout", "120"),
            ("proxy-body-size", "8m"),
            ("allowlist-source-range", "10.0.0.0/8,127.0.0.1"),
            ("temporal-redirect", "https://example.com/x"),
            ("limit-rps", "5"),
            ("enable-cors", "true"),
            ("cors-allow-origin", "https://a.com, https://*.b.com"),
            ("canary", "true"),
            ("canary-by-header", "X-Canary"),
            ("canary-weight", "30"),
            ("affinity", "cookie"),
            ("upstream-hash-by", "$request_uri"),
        ]));
        assert_eq!(errors, []);
        assert_eq!(a.ssl_redirect, Some(false));
        assert_eq!(a.backend_protocol, BackendProtocol::Grpc);
        assert_eq!(a.proxy.read_timeout, Some(120));
        assert_eq!(a.allow_sources, ["10.0.0.0/8", "127.0.0.1"]);
        assert_eq!(
            a.redirect,
            Some(Redirect {
                code: 302,
                url: "https://example.com/x".into()
            })
        );
        assert_eq!(a.limits.rps, Some(5));
        assert_eq!(a.limits.burst_multiplier, 5);
        let cors = a.cors.unwrap();
        assert_eq!(cors.allow_origins, ["https://a.com", "https://*.b.com"]);
        let canary = a.canary.unwrap();
        assert_eq!((canary.weight, canary.weight_total), (30, 100));
        assert_eq!(a.affinity.unwrap().cookie_name, "INGRESSCOOKIE");
        assert_eq!(a.upstream_hash_by.as_deref(), Some("$request_uri"));
    }

    #[test]
    fn invalid_values_are_reported_and_ignored() {
        let (a, errors) = parse(&annotations(&[
            ("proxy-body-size", "1m; }"),
            ("permanent-redirect", "https://x/;\nssl_engine evil"),
            ("rewrite-target", "/$host"),
            ("configuration-snippet", "more_set_headers x;"),
            ("auth-url", "http://x/#;}"),
        ]));
        assert_eq!(a, Annotations::default());
        let keys: Vec<&str> = errors.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys.len(), 5, "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.reason.contains("snippet annotations are not supported"))
        );
    }

    #[test]
    fn next_upstream_defaults_are_ingress_nginx_s_and_values_are_checked() {
        let (a, errors) = parse(&annotations(&[]));
        assert_eq!(errors, []);
        assert_eq!(
            a.proxy.next_upstream,
            NextUpstream {
                conditions: vec!["error", "timeout"],
                tries: 3,
                timeout: 0
            }
        );
        let (a, errors) = parse(&annotations(&[
            (
                "proxy-next-upstream",
                "error timeout http_503 non_idempotent",
            ),
            ("proxy-next-upstream-tries", "5"),
            ("proxy-next-upstream-timeout", "10"),
        ]));
        assert_eq!(errors, []);
        assert_eq!(
            a.proxy.next_upstream,
            NextUpstream {
                conditions: vec!["error", "timeout", "http_503", "non_idempotent"],
                tries: 5,
                timeout: 10
            }
        );
        let (a, errors) = parse(&annotations(&[
            ("proxy-next-upstream", "error; proxy_pass http://evil"),
            ("proxy-next-upstream-tries", "-1"),
            ("proxy-next-upstream-timeout", "10s"),
        ]));
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert_eq!(a.proxy.next_upstream, NextUpstream::default());
    }

    #[test]
    fn overlong_values_are_refused_before_parsing() {
        let long = "1".repeat(values::MAX_VALUE + 1);
        let (a, errors) = parse(&annotations(&[("limit-rps", &long)]));
        assert_eq!(a.limits.rps, None);
        assert_eq!(errors.len(), 1);
    }
}
