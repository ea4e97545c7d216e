//! The name and key formats of the API server: DNS labels and subdomains, qualified names,
//! label values, IANA service (port) names, ConfigMap keys, and the few others objects use.
//!
//! Each function returns the reasons a value does not fit (empty when it fits), as the
//! functions of apimachinery's `pkg/util/validation` do; the callers turn them into field
//! errors. The character classes are checked by hand, with no regular expressions.

/// The longest DNS-1123 or DNS-1035 label, qualified name (part) or label value.
pub(super) const MAX_LABEL_LENGTH: usize = 63;
/// The longest DNS-1123 subdomain (and ConfigMap key).
pub(super) const MAX_SUBDOMAIN_LENGTH: usize = 253;
/// The longest IANA service name.
const MAX_PORT_NAME_LENGTH: usize = 15;

fn too_long(max: usize) -> String {
    format!("must be no more than {max} characters")
}

fn is_lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// Whether `value` is `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (any length).
fn fits_dns1123_label(value: &str) -> bool {
    let starts_and_ends_well = value.starts_with(is_lower_alnum) && value.ends_with(is_lower_alnum);
    starts_and_ends_well && value.chars().all(|c| is_lower_alnum(c) || c == '-')
}

/// Whether `value` is DNS-1123 labels joined by dots (any length, labels of any length).
fn fits_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(fits_dns1123_label)
}

/// Whether `value` is `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` (any length).
fn fits_qualified_name(value: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    value.starts_with(alnum)
        && value.ends_with(alnum)
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// As the API server's IsDNS1123Label (apimachinery `pkg/util/validation`): at most 63
/// characters, lower-case letters, digits and `-`, starting and ending with a letter or digit.
pub(super) fn dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > MAX_LABEL_LENGTH {
        errors.push(too_long(MAX_LABEL_LENGTH));
    }
    if !fits_dns1123_label(value) {
        errors.push(
            "a DNS-1123 label is lower-case letters, digits and '-', with a letter or digit at \
             each end (e.g. 'my-name', '123-abc')"
                .to_owned(),
        );
    }
    errors
}

/// As the API server's IsDNS1123Subdomain (apimachinery `pkg/util/validation`): at most 253
/// characters, DNS-1123 labels joined by dots.
pub(super) fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > MAX_SUBDOMAIN_LENGTH {
        errors.push(too_long(MAX_SUBDOMAIN_LENGTH));
    }
    if !fits_dns1123_subdomain(value) {
        errors.push(
            "a DNS-1123 subdomain is lower-case letters, digits, '-' and '.', with a letter or \
             digit at each end of each dot-separated part (e.g. 'example.com')"
                .to_owned(),
        );
    }
    errors
}

/// As the API server's IsDNS1035Label (apimachinery `pkg/util/validation`): at most 63
/// characters, lower-case letters, digits and `-`, starting with a letter and ending with a
/// letter or digit.
pub(super) fn dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > MAX_LABEL_LENGTH {
        errors.push(too_long(MAX_LABEL_LENGTH));
    }
    if !(fits_dns1123_label(value) && value.starts_with(|c: char| c.is_ascii_lowercase())) {
        errors.push(
            "a DNS-1035 label is lower-case letters, digits and '-', starting with a letter and \
             ending with a letter or digit (e.g. 'my-name', 'abc-123')"
                .to_owned(),
        );
    }
    errors
}

/// As the API server's IsWildcardDNS1123Subdomain (apimachinery `pkg/util/validation`): `*.`
/// then a DNS-1123 subdomain, at most 253 characters in all.
pub(super) fn wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > MAX_SUBDOMAIN_LENGTH {
        errors.push(too_long(MAX_SUBDOMAIN_LENGTH));
    }
    let fits = value.strip_prefix("*.").is_some_and(fits_dns1123_subdomain);
    if !fits {
        errors.push(
            "a wildcard DNS-1123 subdomain is '*.' followed by a DNS-1123 subdomain (e.g. \
             '*.example.com')"
                .to_owned(),
        );
    }
    errors
}

/// As the API server's IsQualifiedName (apimachinery `pkg/util/validation`): a name of at
/// most 63 characters (letters, digits, `-`, `_`, `.`, with a letter or digit at each end),
/// optionally after a DNS-1123 subdomain prefix and `/`.
pub(crate) fn qualified_name(value: &str) -> Vec<String> {
    const NAME_FORM: &str = "must be letters, digits, '-', '_' or '.', with a letter or digit \
                             at each end (e.g. 'MyName', 'my.name', '123-abc')";
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                let prefix_errors = dns1123_subdomain(prefix);
                errors.extend(
                    prefix_errors
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            *name
        }
        _ => {
            errors.push(format!(
                "a qualified name is a name that {NAME_FORM}, with an optional DNS subdomain \
                 prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return errors;
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > MAX_LABEL_LENGTH {
        errors.push(format!("name part {}", too_long(MAX_LABEL_LENGTH)));
    }
    if !fits_qualified_name(name) {
        errors.push(format!("name part {NAME_FORM}"));
    }
    errors
}

/// As the API server's IsValidLabelValue (apimachinery `pkg/util/validation`): empty, or at
/// most 63 characters of letters, digits, `-`, `_` and `.` with a letter or digit at each end.
pub(crate) fn label_value(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > MAX_LABEL_LENGTH {
        errors.push(too_long(MAX_LABEL_LENGTH));
    }
    if !(value.is_empty() || fits_qualified_name(value)) {
        errors.push(
            "a label value is empty or letters, digits, '-', '_' or '.', with a letter or digit \
             at each end (e.g. 'MyValue', 'my_value', '12345')"
                .to_owned(),
        );
    }
    errors
}

/// As the API server's IsValidPortName (apimachinery `pkg/util/validation`): an IANA service
/// name, at most 15 characters of lower-case letters, digits and `-`, with at least one letter,
/// no `--`, and no `-` at either end.
pub(super) fn port_name(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > MAX_PORT_NAME_LENGTH {
        errors.push(too_long(MAX_PORT_NAME_LENGTH));
    }
    if value.is_empty() || !value.chars().all(|c| is_lower_alnum(c) || c == '-') {
        errors.push("must contain only lower-case letters, digits and '-'".to_owned());
    }
    if !value.contains(|c: char| c.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_owned());
    }
    if value.contains("--") {
        errors.push("must not contain two '-' in a row".to_owned());
    }
    if value.starts_with('-') || value.ends_with('-') {
        errors.push("must not begin or end with '-'".to_owned());
    }
    errors
}

/// As the API server's IsValidPortNum (apimachinery `pkg/util/validation`): 1 to 65535.
pub(super) fn port_number(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_owned()]
    }
}

/// As the API server's IsConfigMapKey (apimachinery `pkg/util/validation`): at most 253
/// characters of letters, digits, `-`, `_` and `.`, neither `.` nor `..` nor starting with
/// `..`.
pub(super) fn config_map_key(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > MAX_SUBDOMAIN_LENGTH {
        errors.push(too_long(MAX_SUBDOMAIN_LENGTH));
    }
    let charset = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if value.is_empty() || !value.chars().all(charset) {
        errors.push(
            "a key is letters, digits, '-', '_' or '.' (e.g. 'key.name', 'KEY_NAME', \
             'key-name')"
                .to_owned(),
        );
    }
    if value == "." {
        errors.push("must not be '.'".to_owned());
    } else if value == ".." {
        errors.push("must not be '..'".to_owned());
    } else if value.starts_with("..") {
        errors.push("must not start with '..'".to_owned());
    }
    errors
}

/// As the API server's IsValidPathSegmentName (apimachinery `pkg/api/validation/path`): a
/// name that can be one segment of a URL path: not `.` or `..`, no `/` or `%`.
pub(super) fn path_segment_name(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value == "." || value == ".." {
        errors.push(format!("may not be '{value}'"));
    }
    for forbidden in ["/", "%"] {
        if value.contains(forbidden) {
            errors.push(format!("may not contain '{forbidden}'"));
        }
    }
    errors
}

/// As the API server's IsFullyQualifiedDomainName (apimachinery `pkg/util/validation`): a
/// DNS-1123 subdomain of at least two labels, each a DNS-1123 label, after an optional final
/// dot. Returns `None` when valid, else the value the message is about (the name or the bad
/// label) and why.
pub(super) fn fully_qualified_domain_name(value: &str) -> Option<(String, String)> {
    let name = value.strip_suffix('.').unwrap_or(value);
    let subdomain = dns1123_subdomain(name);
    if !subdomain.is_empty() {
        return Some((name.to_owned(), subdomain.join(",")));
    }
    if !name.contains('.') {
        let why = "should be a domain with at least two segments separated by dots";
        return Some((name.to_owned(), why.to_owned()));
    }
    name.split('.').find_map(|label| {
        let errors = dns1123_label(label);
        (!errors.is_empty()).then(|| (label.to_owned(), errors.join(",")))
    })
}

/// As the API server's IsDomainPrefixedPath (apimachinery `pkg/util/validation`): `DOMAIN/PATH`,
/// the domain a DNS-1123 subdomain and the path of URL path characters. Returns the value each
/// message is about (the whole value, the domain or the path) and why.
pub(super) fn domain_prefixed_path(value: &str) -> Vec<(String, String)> {
    let Some((host, path)) = value
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        let why = "must be a domain-prefixed path (such as \"acme.io/foo\")";
        return vec![(value.to_owned(), why.to_owned())];
    };
    let mut errors: Vec<(String, String)> = dns1123_subdomain(host)
        .into_iter()
        .map(|why| (host.to_owned(), why))
        .collect();
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(path_char) {
        let why = "Invalid path: must be letters, digits and the characters /-._~%!$&'()*+,;=:";
        errors.push((path.to_owned(), why.to_owned()));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors from apimachinery's pkg/util/validation/validation_test.go
    // (TestIsDNS1123Label, TestIsDNS1123Subdomain, TestIsDNS1035Label, TestIsQualifiedName,
    // TestIsValidLabelValue, TestIsValidPortName, TestIsConfigMapKey,
    // TestIsWildcardDNS1123Subdomain, TestIsFullyQualifiedDomainName, TestIsDomainPrefixedPath).

    fn ok(check: fn(&str) -> Vec<String>, values: &[&str]) {
        for value in values {
            assert_eq!(
                check(value),
                Vec::<String>::new(),
                "{value:?} should be valid"
            );
        }
    }

    fn bad(check: fn(&str) -> Vec<String>, values: &[&str]) {
        for value in values {
            assert!(!check(value).is_empty(), "{value:?} should be invalid");
        }
    }

    #[test]
    fn dns1123_label_as_is_dns1123_label() {
        let max = "a".repeat(63);
        ok(
            dns1123_label,
            &[
                "a",
                "ab",
                "abc",
                "a1",
                "a-1",
                "a--1--2--b",
                "0",
                "01",
                "012",
                "1a",
                "1-a",
                "1--a--b--2",
                &max,
            ],
        );
        let long = "a".repeat(64);
        bad(
            dns1123_label,
            &[
                "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_",
                "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ",
                "a ", " a", "a b", "1 ", " 1", "1 2", &long,
            ],
        );
    }

    #[test]
    fn dns1123_subdomain_as_is_dns1123_subdomain() {
        let max = "a".repeat(253);
        ok(
            dns1123_subdomain,
            &[
                "a",
                "ab",
                "abc",
                "a1",
                "a-1",
                "a--1--2--b",
                "0",
                "01",
                "012",
                "1a",
                "1-a",
                "1--a--b--2",
                "a.a",
                "ab.a",
                "abc.a",
                "a1.a",
                "a-1.a",
                "a--1--2--b.a",
                "a.1",
                "ab.1",
                "abc.1",
                "a1.1",
                "a-1.1",
                "a--1--2--b.1",
                "0.a",
                "01.a",
                "012.a",
                "1a.a",
                "1-a.a",
                "1--a--b--2",
                "0.1",
                "01.1",
                "012.1",
                "1a.1",
                "1-a.1",
                "1--a--b--2.1",
                "a.b.c.d.e",
                "aa.bb.cc.dd.ee",
                "1.2.3.4.5",
                "11.22.33.44.55",
                &max,
            ],
        );
        let long = "a".repeat(254);
        bad(
            dns1123_subdomain,
            &[
                "",
                "A",
                "ABC",
                "aBc",
                "A1",
                "A-1",
                "1-A",
                "-",
                "a-",
                "-a",
                "1-",
                "-1",
                "_",
                "a_",
                "_a",
                "a_b",
                "1_",
                "_1",
                "1_2",
                ".",
                "a.",
                ".a",
                "a..b",
                "1.",
                ".1",
                "1..2",
                " ",
                "a ",
                " a",
                "a b",
                "1 ",
                " 1",
                "1 2",
                "A.a",
                "aB.a",
                "ab.A",
                "A1.a",
                "a1.A",
                "A.1",
                "aB.1",
                "A1.1",
                "1A.1",
                "0.A",
                "01.A",
                "012.A",
                "1A.a",
                "1a.A",
                "A.B.C.D.E",
                "AA.BB.CC.DD.EE",
                "a.B.c.d.e",
                "aa.bB.cc.dd.ee",
                "a@b",
                "a,b",
                "a_b",
                "a;b",
                "a:b",
                "a%b",
                "a?b",
                "a$b",
                &long,
            ],
        );
    }

    #[test]
    fn dns1035_label_as_is_dns1035_label() {
        let max = "a".repeat(63);
        ok(
            dns1035_label,
            &["a", "ab", "abc", "a1", "a-1", "a--1--2--b", &max],
        );
        let long = "a".repeat(64);
        bad(
            dns1035_label,
            &[
                "0",
                "01",
                "012",
                "1a",
                "1-a",
                "1--a--b--2",
                "",
                "A",
                "ABC",
                "aBc",
                "A1",
                "A-1",
                "1-A",
                "-",
                "a-",
                "-a",
                "1-",
                "-1",
                "_",
                "a_",
                "_a",
                "a_b",
                "1_",
                "_1",
                "1_2",
                ".",
                "a.",
                ".a",
                "a.b",
                "1.",
                ".1",
                "1.2",
                " ",
                "a ",
                " a",
                "a b",
                "1 ",
                " 1",
                "1 2",
                &long,
            ],
        );
    }

    #[test]
    fn qualified_name_as_is_qualified_name() {
        let max = format!("{}/{}", "a".repeat(253), "b".repeat(63));
        ok(
            qualified_name,
            &[
                "simple",
                "now-with-dashes",
                "1-starts-with-num",
                "1234",
                "simple/simple",
                "now-with-dashes/simple",
                "now-with-dashes/now-with-dashes",
                "now.with.dots/simple",
                "now-with.dashes-and.dots/simple",
                "1-num.2-num/3-num",
                "1234/5678",
                "1.2.3.4/5678",
                "Uppercase_Is_OK_123",
                "example.com/Uppercase_Is_OK_123",
                "requests.storage-foo",
                &"a".repeat(63),
                &max,
            ],
        );
        let long = "a".repeat(64);
        let long_prefix = format!("{}/b", "a".repeat(254));
        bad(
            qualified_name,
            &[
                "nospecialchars%^=@",
                "cantendwithadash-",
                "-cantstartwithadash-",
                "only/one/slash",
                "Example.com/abc",
                "example_com/abc",
                "example.com/",
                "/simple",
                &long,
                &long_prefix,
            ],
        );
    }

    #[test]
    fn label_value_as_is_valid_label_value() {
        ok(
            label_value,
            &[
                "simple",
                "now-with-dashes",
                "1-starts-with-num",
                "end-with-num-1",
                "1234",
                "",
                "A",
                "AB",
                "AbC",
                "A1",
                "A-1",
                "1-A",
                "A.1",
                "A_1",
                "Uppercase_Is_OK_123",
                &"a".repeat(63),
            ],
        );
        bad(
            label_value,
            &[
                "nospecialchars%^=@",
                "Tama-nui-te-rā.is_Māori.sun",
                "\\backslashes\\are\\bad",
                "-starts-with-dash",
                "ends-with-dash-",
                ".starts.with.dot",
                "ends.with.dot.",
                &"a".repeat(64),
            ],
        );
    }

    #[test]
    fn port_name_as_is_valid_port_name() {
        ok(
            port_name,
            &[
                "telnet",
                "re-mail-ck",
                "pop3",
                "a",
                "a-1",
                "1-a",
                "a-1-b-2-c",
                "1-a-2-b-3",
            ],
        );
        bad(
            port_name,
            &[
                "longerthan15characters",
                "",
                &"a".repeat(16),
                "12345",
                "1-2-3-4",
                "-begin",
                "end-",
                "two--hyphens",
                "whois++",
            ],
        );
        // The hostile name of issue 28: a line break and an iptables rule.
        let payload = "x\n-A KUBE-SERVICES -p tcp -d 10.96.0.1 --dport 443 -j DNAT \
                       --to-destination 6.6.6.6:443\n#";
        assert!(!port_name(payload).is_empty());
    }

    #[test]
    fn port_number_as_is_valid_port_num() {
        for port in [1, 2, 1000, 16384, 32768, 65535] {
            assert!(port_number(port).is_empty(), "{port}");
        }
        for port in [0, -1, 65536, 100000] {
            assert!(!port_number(port).is_empty(), "{port}");
        }
    }

    #[test]
    fn config_map_key_as_is_config_map_key() {
        ok(
            config_map_key,
            &[
                "a",
                "good",
                "good-good",
                "still.good",
                "this.is.also.good",
                ".so.is.this",
                "THIS_IS_GOOD",
                "so_is_this_17",
            ],
        );
        bad(
            config_map_key,
            &["", ".", "..", "..bad", "b*d", "bad!&bad", &"a".repeat(254)],
        );
    }

    #[test]
    fn wildcard_subdomain_as_is_wildcard_dns1123_subdomain() {
        ok(
            wildcard_dns1123_subdomain,
            &["*.example.com", "*.bar.com", "*.foo.bar.com"],
        );
        bad(
            wildcard_dns1123_subdomain,
            &[
                "*.*.bar.com",
                "*.foo.*.com",
                "*bar.com",
                "f*.bar.com",
                "*",
                "",
                "*.",
            ],
        );
    }

    #[test]
    fn fqdn_as_is_fully_qualified_domain_name() {
        for good in [
            "a.com",
            "k8s.io",
            "dev.k8s.io",
            "dev.k8s.io.",
            "foo.example.com",
            "this.is.a.really.long.fqdn",
            "bbc.co.uk",
            "10.0.0.1",
            "hyphens-are-good.k8s.io",
            "numbers-are-good-123.k8s.io",
        ] {
            assert_eq!(fully_qualified_domain_name(good), None, "{good}");
        }
        for bad in [
            "",
            "a",
            "a.",
            ".",
            "1.",
            "k8s.io..",
            "..k8s.io",
            ".io",
            "k8s..io",
            "a..b",
            "-a.b",
            "a.-b",
            "A.b",
            "underscores_are_bad.k8s.io",
            "foo@bar.example.com",
            "http://foo.example.com",
        ] {
            assert!(fully_qualified_domain_name(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn domain_prefixed_path_as_is_domain_prefixed_path() {
        for good in [
            "acme.io/foo",
            "example.com/foo/bar",
            "k8s.io/ingress-nginx",
            "a.b/~x%y",
        ] {
            assert!(domain_prefixed_path(good).is_empty(), "{good}");
        }
        for bad in [
            "",
            "acme",
            "acme.io/",
            "/foo",
            "Acme.io/foo",
            "acme.io/foo bar",
            "acme.io/a\nb",
        ] {
            assert!(!domain_prefixed_path(bad).is_empty(), "{bad}");
        }
    }

    #[test]
    fn path_segment_names_as_is_valid_path_segment_name() {
        assert!(path_segment_name("ok-name").is_empty());
        for bad in [".", "..", "a/b", "a%b"] {
            assert!(!path_segment_name(bad).is_empty(), "{bad}");
        }
    }
}
