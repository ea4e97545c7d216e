//! Parsers for the value types annotations carry: each accepts only an allow-listed spelling
//! and answers with a typed value, or a reason an operator can act on.

use std::net::IpAddr;

/// Why a value was refused.
pub type Reason = String;

/// Longest annotation value looked at; longer ones are refused whole.
pub const MAX_VALUE: usize = 2048;

/// `true` or `false`, as ingress-nginx spells them.
pub fn boolean(value: &str) -> Result<bool, Reason> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

/// A decimal integer within `min..=max`.
pub fn integer(value: &str, min: u32, max: u32) -> Result<u32, Reason> {
    let out_of_range = || format!("expected an integer from {min} to {max}");
    if value.is_empty() || value.len() > 10 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(out_of_range());
    }
    match value.parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(out_of_range()),
    }
}

/// An nginx size: digits with an optional `k`, `m` or `g` suffix (`0` means unlimited).
pub fn size(value: &str) -> Result<String, Reason> {
    let digits = value
        .strip_suffix(['k', 'K', 'm', 'M', 'g', 'G'])
        .unwrap_or(value);
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected a size such as 8m, 512k or 1024".into());
    }
    Ok(value.to_ascii_lowercase())
}

/// A comma-separated list of at most 64 IPv4/IPv6 addresses or CIDR blocks.
pub fn cidrs(value: &str) -> Result<Vec<String>, Reason> {
    let items: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() || items.len() > 64 {
        return Err("expected 1 to 64 comma-separated CIDRs".into());
    }
    items.into_iter().map(cidr).collect()
}

fn cidr(item: &str) -> Result<String, Reason> {
    let bad = || format!("{item:?} is not an IP address or CIDR block");
    let (address, length) = match item.split_once('/') {
        Some((address, length)) => (address, Some(length)),
        None => (item, None),
    };
    let address: IpAddr = address.parse().map_err(|_| bad())?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    if let Some(length) = length {
        integer(length, 0, max).map_err(|_| bad())?;
    }
    Ok(item.to_owned())
}

/// Whether `b` may appear in a URL we write into nginx.conf: RFC 3986 characters minus the
/// ones nginx or a shell gives meaning to (`;`, quotes, `#`, `$`, braces, backslash, spaces).
fn url_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~:/?[]@!&()*+,=%".contains(&b)
}

/// An absolute `http://` or `https://` URL of allow-listed characters.
pub fn url(value: &str) -> Result<String, Reason> {
    let rest = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))
        .ok_or("expected an absolute http:// or https:// URL")?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err("the URL has no host".into());
    }
    if let Some(b) = value.bytes().find(|&b| !url_byte(b)) {
        return Err(format!(
            "the URL contains {:?}, which is not allowed",
            char::from(b)
        ));
    }
    Ok(value.to_owned())
}

/// A rewrite target: an absolute path of allow-listed characters in which `$1`…`$9` name
/// the captures of the rule's path.
pub fn rewrite_target(value: &str) -> Result<String, Reason> {
    if !value.starts_with('/') {
        return Err("expected a path starting with /".into());
    }
    let bytes = value.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let allowed = if b == b'$' {
            bytes.get(i + 1).is_some_and(|c| (b'1'..=b'9').contains(c))
        } else {
            url_byte(b)
        };
        if !allowed {
            return Err(format!(
                "{:?} is not allowed (only $1 to $9 may follow $)",
                char::from(b)
            ));
        }
    }
    Ok(value.to_owned())
}

/// An HTTP header name (an RFC 9110 token of letters, digits and `-`, at most 64 bytes).
pub fn header_name(value: &str) -> Result<String, Reason> {
    if value.is_empty()
        || value.len() > 64
        || !value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err("expected a header name of letters, digits and -".into());
    }
    Ok(value.to_owned())
}

/// A plain token (letters, digits, `-`, `_`, `.`), as used for cookie names and header values.
pub fn token(value: &str) -> Result<String, Reason> {
    if value.is_empty()
        || value.len() > 128
        || !value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        return Err("expected letters, digits, -, _ or .".into());
    }
    Ok(value.to_owned())
}

/// A comma-separated list of items each accepted by `item`, returned joined by `, `.
pub fn list(value: &str, item: fn(&str) -> Result<String, Reason>) -> Result<String, Reason> {
    let items: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(item)
        .collect::<Result<_, _>>()?;
    if items.is_empty() || items.len() > 64 {
        return Err("expected 1 to 64 comma-separated items".into());
    }
    Ok(items.join(", "))
}

/// An HTTP method name (upper-case letters).
pub fn method(value: &str) -> Result<String, Reason> {
    if value.is_empty() || value.len() > 16 || !value.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!("{value:?} is not an HTTP method"));
    }
    Ok(value.to_owned())
}

/// A CORS origin: `*`, or `http(s)://host[:port]` where the host may start with `*.`.
pub fn origin(value: &str) -> Result<String, Reason> {
    if value == "*" {
        return Ok(value.to_owned());
    }
    let bad = || format!("{value:?} is not an origin such as https://app.example.com");
    let rest = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))
        .ok_or_else(bad)?;
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    if let Some(port) = port {
        integer(port, 1, 65535).map_err(|_| bad())?;
    }
    let host = host.strip_prefix("*.").unwrap_or(host);
    if crate::hosts::is_dns_name(host) {
        Ok(value.to_owned())
    } else {
        Err(bad())
    }
}

/// The failures after which nginx passes a request to another endpoint
/// (`proxy_next_upstream`, `grpc_next_upstream`): the tokens ingress-nginx's
/// `proxy-next-upstream` annotation accepts, all of them nginx's own.
pub const NEXT_UPSTREAM: [&str; 12] = [
    "error",
    "timeout",
    "invalid_header",
    "http_500",
    "http_502",
    "http_503",
    "http_504",
    "http_403",
    "http_404",
    "http_429",
    "non_idempotent",
    "off",
];

/// A space-separated list of [`NEXT_UPSTREAM`] tokens, each kept once, in the order given.
/// `off` disables passing on whatever else the list names (nginx's reading), so a list with
/// `off` is `off` alone.
pub fn next_upstream(value: &str) -> Result<Vec<&'static str>, Reason> {
    let mut out: Vec<&'static str> = Vec::new();
    for word in value.split_ascii_whitespace() {
        let Some(token) = NEXT_UPSTREAM.iter().find(|t| **t == word) else {
            return Err(format!(
                "{word:?} is not one of {}",
                NEXT_UPSTREAM.join(", ")
            ));
        };
        if !out.contains(token) {
            out.push(token);
        }
    }
    if out.is_empty() {
        return Err(format!(
            "expected space-separated values among {}",
            NEXT_UPSTREAM.join(", ")
        ));
    }
    if out.contains(&"off") {
        out = vec!["off"];
    }
    Ok(out)
}

/// The nginx variables `upstream-hash-by` may name: a fixed set, or one header, cookie or
/// query argument.
pub fn hash_variable(value: &str) -> Result<String, Reason> {
    const FIXED: [&str; 5] = [
        "$remote_addr",
        "$binary_remote_addr",
        "$request_uri",
        "$uri",
        "$host",
    ];
    if FIXED.contains(&value) {
        return Ok(value.to_owned());
    }
    let named = ["$http_", "$cookie_", "$arg_"]
        .iter()
        .find_map(|prefix| value.strip_prefix(prefix));
    match named {
        Some(name)
            if !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') =>
        {
            Ok(value.to_owned())
        }
        _ => Err(format!(
            "expected one of {}, or $http_NAME, $cookie_NAME, $arg_NAME",
            FIXED.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_sizes() {
        assert_eq!(integer("30", 1, 3600), Ok(30));
        assert!(integer("0", 1, 3600).is_err());
        assert!(integer("30s", 1, 3600).is_err());
        assert!(integer("99999999999", 1, u32::MAX).is_err());
        assert_eq!(size("8M"), Ok("8m".into()));
        assert_eq!(size("0"), Ok("0".into()));
        assert!(size("8m;").is_err());
        assert!(size("m").is_err());
    }

    #[test]
    fn cidr_lists() {
        assert_eq!(
            cidrs("10.0.0.0/8, 192.168.1.1,::1/128"),
            Ok(vec![
                "10.0.0.0/8".into(),
                "192.168.1.1".into(),
                "::1/128".into()
            ])
        );
        assert!(cidrs("10.0.0.0/33").is_err());
        assert!(cidrs("10.0.0.0/8; deny all").is_err());
        assert!(cidrs("").is_err());
    }

    #[test]
    fn urls_refuse_what_nginx_or_lua_would_read() {
        assert!(url("https://example.com/a?b=c&d=e").is_ok());
        for bad in [
            "https://example.com/;}",
            "https://x/$host",
            "https://x/\"",
            "https://x/#",
            "https://x/ a",
            "https://x/\n",
            "ftp://x",
            "https:///x",
        ] {
            assert!(url(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rewrite_targets_allow_only_captures_after_dollar() {
        assert!(rewrite_target("/$2").is_ok());
        assert!(rewrite_target("/api/$1?x=1").is_ok());
        for bad in ["/$host", "/$", "/$0", "x", "/a;b", "/a b", "/{"] {
            assert!(rewrite_target(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn small_types() {
        assert!(header_name("X-Canary").is_ok());
        assert!(header_name("X Canary").is_err());
        assert!(token("always").is_ok());
        assert!(token("a;b").is_err());
        assert_eq!(list("GET,POST , PUT", method), Ok("GET, POST, PUT".into()));
        assert!(list("GET;", method).is_err());
        assert!(origin("https://*.example.com:8443").is_ok());
        assert!(origin("*").is_ok());
        assert!(origin("https://exa mple.com").is_err());
        assert!(hash_variable("$request_uri").is_ok());
        assert!(hash_variable("$http_x_user").is_ok());
        assert!(hash_variable("$request_uri$host").is_err());
        assert!(hash_variable("${lua}").is_err());
    }

    #[test]
    fn next_upstream_conditions_are_nginx_tokens() {
        assert_eq!(
            next_upstream("error timeout http_502"),
            Ok(vec!["error", "timeout", "http_502"])
        );
        assert_eq!(next_upstream(" error  error "), Ok(vec!["error"]));
        assert_eq!(next_upstream("error off"), Ok(vec!["off"]));
        for bad in [
            "",
            "error;",
            "http_501",
            "error timeout; ssl_engine x",
            "updating",
        ] {
            assert!(next_upstream(bad).is_err(), "{bad:?}");
        }
    }
}
