//! The ConfigMap of global settings (`--configmap NAMESPACE/NAME`), as ingress-nginx reads it
//! (`internal/ingress/controller/config/config.go`): the keys operators set most, typed and
//! validated like annotations. A refused value is named with its reason and its default
//! applies; the other keys still apply. Keys this controller does not read are listed.
//!
//! - [`log_format`]: `log-format-upstream` as a typed list of fields.

pub mod log_format;

use std::collections::BTreeMap;

use crate::annotations::values;
use log_format::LogFormat;

/// The global settings, with ingress-nginx's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Global {
    /// `proxy-body-size`: `client_max_body_size` (default `1m`).
    pub body_size: String,
    /// `proxy-connect-timeout`, seconds (default 5).
    pub connect_timeout: u32,
    /// `proxy-read-timeout`, seconds (default 60).
    pub read_timeout: u32,
    /// `proxy-send-timeout`, seconds (default 60).
    pub send_timeout: u32,
    /// `proxy-buffer-size` (default `4k`), with `proxy-buffers-number` buffers of it
    /// (default 4).
    pub buffer_size: String,
    /// `proxy-buffers-number` (default 4).
    pub buffers_number: u32,
    /// `use-http2`: HTTP/2 on the TLS port (default true).
    pub http2: bool,
    /// `ssl-protocols` (default `TLSv1.2 TLSv1.3`).
    pub ssl_protocols: Vec<String>,
    /// `ssl-ciphers` (default ingress-nginx's ECDHE/AEAD list).
    pub ssl_ciphers: String,
    /// `hsts` and its options: the `Strict-Transport-Security` value on TLS responses, or
    /// `None` when off.
    pub hsts: Option<String>,
    /// `ssl-redirect`: hosts with TLS redirect plain HTTP (default true).
    pub ssl_redirect: bool,
    /// `use-forwarded-headers`: trust the client's `X-Forwarded-*` (default false).
    pub use_forwarded_headers: bool,
    /// `forwarded-for-header`: the header the client address is read from with real IP
    /// (default `X-Forwarded-For`).
    pub forwarded_for_header: String,
    /// `compute-full-forwarded-for`: append to the client's `X-Forwarded-For` rather than
    /// replace it (with `use-forwarded-headers`; default false).
    pub compute_full_forwarded_for: bool,
    /// `enable-real-ip`: the client address from `forwarded-for-header` (default false).
    pub enable_real_ip: bool,
    /// `proxy-real-ip-cidr`: who may set it (default `0.0.0.0/0`).
    pub real_ip_cidrs: Vec<String>,
    /// `log-format-upstream` (default ingress-nginx's `upstreaminfo`).
    pub log_format: LogFormat,
    /// `worker-processes`: a number or `auto` (default: the `--workers` flag).
    pub worker_processes: Option<String>,
    /// `max-worker-connections` (default 16384).
    pub max_worker_connections: u32,
    /// `keep-alive`, seconds (default 75).
    pub keep_alive: u32,
    /// `keep-alive-requests` (default 1000).
    pub keep_alive_requests: u32,
    /// `upstream-keepalive-connections` (default 320; 0 turns upstream keepalive off).
    pub upstream_keepalive_connections: u32,
    /// `upstream-keepalive-time`, an nginx time (default `1h`).
    pub upstream_keepalive_time: String,
    /// `upstream-keepalive-timeout`, seconds (default 60).
    pub upstream_keepalive_timeout: u32,
    /// `upstream-keepalive-requests` (default 10000).
    pub upstream_keepalive_requests: u32,
}

/// ingress-nginx's default `log-format-upstream` (`upstreaminfo`).
pub const LOG_FORMAT_UPSTREAM: &str = "$remote_addr - $remote_user [$time_local] \"$request\" \
$status $body_bytes_sent \"$http_referer\" \"$http_user_agent\" $request_length $request_time \
[$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr \
$upstream_response_length $upstream_response_time $upstream_status $req_id";

/// ingress-nginx's default `ssl-ciphers`.
pub const SSL_CIPHERS: &str = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:\
ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384";

impl Default for Global {
    fn default() -> Self {
        Self {
            body_size: "1m".into(),
            connect_timeout: 5,
            read_timeout: 60,
            send_timeout: 60,
            buffer_size: "4k".into(),
            buffers_number: 4,
            http2: true,
            ssl_protocols: vec!["TLSv1.2".into(), "TLSv1.3".into()],
            ssl_ciphers: SSL_CIPHERS.into(),
            hsts: Some(hsts_value(31_536_000, true, false)),
            ssl_redirect: true,
            use_forwarded_headers: false,
            forwarded_for_header: "X-Forwarded-For".into(),
            compute_full_forwarded_for: false,
            enable_real_ip: false,
            real_ip_cidrs: vec!["0.0.0.0/0".into()],
            log_format: LogFormat::parse(LOG_FORMAT_UPSTREAM).unwrap_or(LogFormat(Vec::new())),
            worker_processes: None,
            max_worker_connections: 16_384,
            keep_alive: 75,
            keep_alive_requests: 1000,
            upstream_keepalive_connections: 320,
            upstream_keepalive_time: "1h".into(),
            upstream_keepalive_timeout: 60,
            upstream_keepalive_requests: 10_000,
        }
    }
}

/// The `Strict-Transport-Security` value of these options.
fn hsts_value(max_age: u32, include_subdomains: bool, preload: bool) -> String {
    let mut value = format!("max-age={max_age}");
    if include_subdomains {
        value.push_str("; includeSubDomains");
    }
    if preload {
        value.push_str("; preload");
    }
    value
}

/// The keys this controller reads (besides `allow-snippet-annotations`, accepted and
/// ignored).
const KNOWN: &[&str] = &[
    "proxy-body-size",
    "proxy-connect-timeout",
    "proxy-read-timeout",
    "proxy-send-timeout",
    "proxy-buffer-size",
    "proxy-buffers-number",
    "use-http2",
    "ssl-protocols",
    "ssl-ciphers",
    "hsts",
    "hsts-max-age",
    "hsts-include-subdomains",
    "hsts-preload",
    "ssl-redirect",
    "use-forwarded-headers",
    "forwarded-for-header",
    "compute-full-forwarded-for",
    "enable-real-ip",
    "proxy-real-ip-cidr",
    "log-format-upstream",
    "worker-processes",
    "max-worker-connections",
    "keep-alive",
    "keep-alive-requests",
    "upstream-keepalive-connections",
    "upstream-keepalive-time",
    "upstream-keepalive-timeout",
    "upstream-keepalive-requests",
];

/// What reading a ConfigMap found besides the settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// `key: reason` of each refused value (its default applies).
    pub refused: Vec<String>,
    /// Keys read and deliberately ignored, with why.
    pub ignored: Vec<String>,
    /// Keys this controller does not read.
    pub unknown: Vec<String>,
}

impl Notes {
    /// One log line per refused or ignored key, and one listing the unknown keys.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .refused
            .iter()
            .map(|r| format!("ConfigMap key {r}; its default applies"))
            .chain(self.ignored.iter().map(|i| format!("ConfigMap key {i}")))
            .collect();
        if !self.unknown.is_empty() {
            lines.push(format!(
                "ConfigMap keys this controller does not read (ignored): {}",
                self.unknown.join(", ")
            ));
        }
        lines
    }
}

/// Go's `strconv.ParseBool`, which ingress-nginx's ConfigMap decoding uses.
fn go_bool(value: &str) -> Result<bool, String> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

/// An nginx time: one or more numbers each with a unit (`ms`, `s`, `m`, `h`, `d`, `w`, `M`,
/// `y`; the last may have none), such as `1h` or `1h30m`.
fn nginx_time(value: &str) -> Result<String, String> {
    let bad = || "expected an nginx time such as 1h, 90s or 1h30m".to_owned();
    if value.is_empty() || value.len() > 32 {
        return Err(bad());
    }
    let mut rest = value;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        rest = rest.get(digits..).unwrap_or_default();
        let unit = ["ms", "s", "m", "h", "d", "w", "M", "y"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            Some(unit) => rest = rest.get(unit.len()..).unwrap_or_default(),
            None if rest.is_empty() => {}
            None => return Err(bad()),
        }
    }
    Ok(value.to_owned())
}

/// An OpenSSL cipher list: names of letters, digits, `-`, `_`, `.`, `=`, `@` joined by `:`,
/// with `!`, `+`, `-` prefixes (what nginx passes to OpenSSL).
fn cipher_list(value: &str) -> Result<String, String> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-_.=@:!+, ".contains(&b);
    if value.is_empty() || value.len() > 2048 || !value.bytes().all(allowed) {
        return Err("expected an OpenSSL cipher list (names joined by ':')".into());
    }
    Ok(value.to_owned())
}

/// Protocol names nginx's `ssl_protocols` takes that OpenSSL 3 still offers.
fn protocols(value: &str) -> Result<Vec<String>, String> {
    let list: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
    if list.is_empty() {
        return Err("expected one or more of TLSv1, TLSv1.1, TLSv1.2, TLSv1.3".into());
    }
    for p in &list {
        if !["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"].contains(&p.as_str()) {
            return Err(format!(
                "{p:?} is not one of TLSv1, TLSv1.1, TLSv1.2, TLSv1.3"
            ));
        }
    }
    Ok(list)
}

/// Reads one key at a time, collecting the refusals.
struct Reader<'a> {
    data: &'a BTreeMap<String, String>,
    refused: Vec<String>,
}

impl Reader<'_> {
    fn get<T>(&mut self, key: &str, parse: impl FnOnce(&str) -> Result<T, String>) -> Option<T> {
        let raw = self.data.get(key)?;
        let parsed = if raw.len() > 4096 {
            Err("longer than 4096 bytes".into())
        } else {
            parse(raw.trim())
        };
        parsed
            .map_err(|reason| self.refused.push(format!("{key}: {reason}")))
            .ok()
    }

    fn flag(&mut self, key: &str, default: bool) -> bool {
        self.get(key, go_bool).unwrap_or(default)
    }

    fn number(&mut self, key: &str, min: u32, max: u32, default: u32) -> u32 {
        self.get(key, |v| values::integer(v, min, max))
            .unwrap_or(default)
    }
}

impl Global {
    /// The settings of the ConfigMap among `objects` (`--configmap`), else the defaults.
    pub fn of(objects: &crate::objects::Objects) -> Global {
        let data = objects.config_map.as_ref().and_then(|c| c.data.as_ref());
        data.map_or_else(Global::default, |data| Global::parse(data).0)
    }

    /// Reads the `data` of the ConfigMap. Refused values keep their default.
    pub fn parse(data: &BTreeMap<String, String>) -> (Global, Notes) {
        let d = Global::default();
        let mut r = Reader {
            data,
            refused: Vec::new(),
        };
        let hsts = r.flag("hsts", true);
        let hsts_max_age = r.number("hsts-max-age", 0, i32::MAX.unsigned_abs(), 31_536_000);
        let hsts_subdomains = r.flag("hsts-include-subdomains", true);
        let hsts_preload = r.flag("hsts-preload", false);
        let global = Global {
            body_size: r
                .get("proxy-body-size", values::size)
                .unwrap_or(d.body_size),
            connect_timeout: r.number("proxy-connect-timeout", 1, 86_400, d.connect_timeout),
            read_timeout: r.number("proxy-read-timeout", 1, 86_400, d.read_timeout),
            send_timeout: r.number("proxy-send-timeout", 1, 86_400, d.send_timeout),
            buffer_size: r
                .get("proxy-buffer-size", values::size)
                .unwrap_or(d.buffer_size),
            buffers_number: r.number("proxy-buffers-number", 1, 1024, d.buffers_number),
            http2: r.flag("use-http2", d.http2),
            ssl_protocols: r.get("ssl-protocols", protocols).unwrap_or(d.ssl_protocols),
            ssl_ciphers: r.get("ssl-ciphers", cipher_list).unwrap_or(d.ssl_ciphers),
            hsts: hsts.then(|| hsts_value(hsts_max_age, hsts_subdomains, hsts_preload)),
            ssl_redirect: r.flag("ssl-redirect", d.ssl_redirect),
            use_forwarded_headers: r.flag("use-forwarded-headers", d.use_forwarded_headers),
            forwarded_for_header: r
                .get("forwarded-for-header", values::header_name)
                .unwrap_or(d.forwarded_for_header),
            compute_full_forwarded_for: r
                .flag("compute-full-forwarded-for", d.compute_full_forwarded_for),
            enable_real_ip: r.flag("enable-real-ip", d.enable_real_ip),
            real_ip_cidrs: r
                .get("proxy-real-ip-cidr", values::cidrs)
                .unwrap_or(d.real_ip_cidrs),
            log_format: r
                .get("log-format-upstream", LogFormat::parse)
                .unwrap_or(d.log_format),
            worker_processes: r.get("worker-processes", |v| {
                if v == "auto" {
                    Ok(v.to_owned())
                } else {
                    values::integer(v, 1, 1024).map(|n| n.to_string())
                }
            }),
            max_worker_connections: match r.number("max-worker-connections", 0, 1_048_576, 0) {
                // 0: ingress-nginx derives it from the open-file limit; the default here.
                0 => d.max_worker_connections,
                n => n,
            },
            keep_alive: r.number("keep-alive", 0, 86_400, d.keep_alive),
            keep_alive_requests: r.number(
                "keep-alive-requests",
                0,
                1_000_000_000,
                d.keep_alive_requests,
            ),
            upstream_keepalive_connections: r.number(
                "upstream-keepalive-connections",
                0,
                1_000_000,
                d.upstream_keepalive_connections,
            ),
            upstream_keepalive_time: r
                .get("upstream-keepalive-time", nginx_time)
                .unwrap_or(d.upstream_keepalive_time),
            upstream_keepalive_timeout: r.number(
                "upstream-keepalive-timeout",
                0,
                86_400,
                d.upstream_keepalive_timeout,
            ),
            upstream_keepalive_requests: r.number(
                "upstream-keepalive-requests",
                0,
                1_000_000_000,
                d.upstream_keepalive_requests,
            ),
        };
        let mut notes = Notes {
            refused: r.refused,
            ..Notes::default()
        };
        for key in data.keys() {
            if key == "allow-snippet-annotations" {
                notes.ignored.push(
                    "allow-snippet-annotations: snippets do not exist here; raw nginx text is \
                     never accepted"
                        .into(),
                );
            } else if !KNOWN.contains(&key.as_str()) {
                notes.unknown.push(key.clone());
            }
        }
        (global, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn empty_is_ingress_nginx_defaults() {
        let (global, notes) = Global::parse(&BTreeMap::new());
        assert_eq!(global, Global::default());
        assert_eq!(notes, Notes::default());
        assert_eq!(
            global.hsts.as_deref(),
            Some("max-age=31536000; includeSubDomains")
        );
        assert_eq!(global.log_format.to_string(), LOG_FORMAT_UPSTREAM);
    }

    #[test]
    fn keys_are_typed() {
        let (global, notes) = Global::parse(&data(&[
            ("proxy-body-size", "8m"),
            ("proxy-connect-timeout", "10"),
            ("proxy-read-timeout", "120"),
            ("proxy-send-timeout", "30"),
            ("proxy-buffer-size", "16k"),
            ("use-http2", "false"),
            ("ssl-protocols", "TLSv1.3"),
            ("hsts-max-age", "600"),
            ("hsts-include-subdomains", "false"),
            ("hsts-preload", "true"),
            ("ssl-redirect", "False"),
            ("use-forwarded-headers", "true"),
            ("forwarded-for-header", "CF-Connecting-IP"),
            ("compute-full-forwarded-for", "true"),
            ("enable-real-ip", "true"),
            ("proxy-real-ip-cidr", "10.0.0.0/8, 192.168.0.0/16"),
            ("worker-processes", "4"),
            ("max-worker-connections", "1024"),
            ("keep-alive", "30"),
            ("upstream-keepalive-connections", "0"),
            ("upstream-keepalive-time", "30m"),
            ("allow-snippet-annotations", "true"),
            ("enable-opentelemetry", "true"),
        ]));
        assert_eq!(notes.refused, Vec::<String>::new());
        assert_eq!(notes.unknown, ["enable-opentelemetry"]);
        assert_eq!(notes.ignored.len(), 1);
        assert_eq!(global.body_size, "8m");
        assert_eq!(
            (
                global.connect_timeout,
                global.read_timeout,
                global.send_timeout
            ),
            (10, 120, 30)
        );
        assert_eq!(global.buffer_size, "16k");
        assert!(!global.http2 && !global.ssl_redirect);
        assert_eq!(global.ssl_protocols, ["TLSv1.3"]);
        assert_eq!(global.hsts.as_deref(), Some("max-age=600; preload"));
        assert!(
            global.use_forwarded_headers
                && global.compute_full_forwarded_for
                && global.enable_real_ip
        );
        assert_eq!(global.forwarded_for_header, "CF-Connecting-IP");
        assert_eq!(global.real_ip_cidrs, ["10.0.0.0/8", "192.168.0.0/16"]);
        assert_eq!(global.worker_processes.as_deref(), Some("4"));
        assert_eq!(global.max_worker_connections, 1024);
        assert_eq!(global.keep_alive, 30);
        assert_eq!(global.upstream_keepalive_connections, 0);
        assert_eq!(global.upstream_keepalive_time, "30m");
        let (off, _) = Global::parse(&data(&[("hsts", "false")]));
        assert_eq!(off.hsts, None);
    }

    #[test]
    fn a_bad_value_is_refused_and_the_rest_applies() {
        let (global, notes) = Global::parse(&data(&[
            ("proxy-body-size", "8m; include /etc/passwd"),
            ("proxy-read-timeout", "forever"),
            ("ssl-protocols", "TLSv1.2 SSLv2"),
            ("ssl-ciphers", "HIGH'; load_module x"),
            ("log-format-upstream", "$remote_addr $"),
            ("upstream-keepalive-time", "1 hour"),
            ("worker-processes", "-1"),
            ("forwarded-for-header", "X-Real-IP\nX"),
            ("proxy-connect-timeout", "7"),
        ]));
        assert_eq!(notes.refused.len(), 8, "{:#?}", notes.refused);
        assert!(
            notes
                .refused
                .iter()
                .any(|r| r.starts_with("proxy-body-size: "))
        );
        let d = Global::default();
        assert_eq!(global.body_size, d.body_size);
        assert_eq!(global.read_timeout, d.read_timeout);
        assert_eq!(global.ssl_protocols, d.ssl_protocols);
        assert_eq!(global.ssl_ciphers, d.ssl_ciphers);
        assert_eq!(global.log_format, d.log_format);
        assert_eq!(global.connect_timeout, 7);
    }

    #[test]
    fn nginx_times() {
        for good in ["1h", "90s", "1h30m", "500ms", "10", "1d"] {
            assert!(nginx_time(good).is_ok(), "{good}");
        }
        for bad in ["", "h", "1 h", "1x", "1h;", "-1s"] {
            assert!(nginx_time(bad).is_err(), "{bad}");
        }
    }
}
