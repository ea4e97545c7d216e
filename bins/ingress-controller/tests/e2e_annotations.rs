//! Every supported annotation end to end, in one nginx: one host per feature, requests with
//! a small HTTP client (curl for HTTPS), each answer checked.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::fmt::Write as _;
use std::process::Command;

use support::{Backends, CLASS, Controller, ingress, request, service};

const P: &str = "nginx.ingress.kubernetes.io/";

fn a(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{P}{k}: '{v}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Secret `e2e/tls` of the fixture certificate.
fn tls_secret() -> String {
    support::tls_secret(
        "e2e",
        "tls",
        &support::fixture("tls.crt"),
        &support::fixture("tls.key"),
    )
}

fn with_tls(ingress: String, host: &str) -> String {
    ingress.replace(
        "  rules:\n",
        &format!("  tls: [{{hosts: ['{host}'], secretName: tls}}]\n  rules:\n"),
    )
}

/// HTTPS through curl (SNI for `host`, the test certificate trusted as CA).
fn curl_https(port: u16, host: &str, path: &str) -> (u16, String) {
    let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls.crt");
    let out = Command::new("curl")
        .args([
            "-s",
            "--max-time",
            "10",
            "--cacert",
            ca,
            "-w",
            "\n%{http_code}",
        ])
        .arg("--resolve")
        .arg(format!("{host}:{port}:127.0.0.1"))
        .arg(format!("https://{host}:{port}{path}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.parse().unwrap_or(0), body.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_annotation_end_to_end() {
    if support::ran_elsewhere() {
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        println!("skipped: curl (Debian package curl)");
        return;
    }
    let backends =
        Backends::start(&["web", "other", "canary", "ep-a", "ep-b", "regex", "ba"]).await;
    let mut m = String::from(CLASS);
    for name in ["web", "other", "canary", "regex", "ba"] {
        m.push_str(&service("e2e", name, &[backends.port(name)]));
    }
    m.push_str(&service(
        "e2e",
        "pair",
        &[backends.port("ep-a"), backends.port("ep-b")],
    ));
    m.push_str(&tls_secret());
    let web = [("Prefix", "/", "web")];
    let mut add = |name: &str, annotations: &str, paths: &[(&str, &str, &str)]| {
        m.push_str(&ingress(
            "e2e",
            name,
            &format!("{name}.example.com"),
            annotations,
            None,
            paths,
        ));
    };
    add("force", &a(&[("force-ssl-redirect", "true")]), &web);
    add(
        "rewrite",
        &a(&[("use-regex", "true"), ("rewrite-target", "/$2")]),
        &[("ImplementationSpecific", "/app(/|$)(.*)", "web")],
    );
    add("timeout", &a(&[("proxy-read-timeout", "1")]), &web);
    add(
        "body",
        &a(&[("proxy-body-size", "1k"), ("proxy-buffering", "off")]),
        &web,
    );
    add(
        "allow",
        &a(&[("allowlist-source-range", "10.0.0.0/8")]),
        &web,
    );
    add(
        "allow-me",
        &a(&[("whitelist-source-range", "127.0.0.1/32")]),
        &web,
    );
    add("deny", &a(&[("denylist-source-range", "127.0.0.1")]), &web);
    add(
        "perm",
        &a(&[("permanent-redirect", "https://example.org/new")]),
        &web,
    );
    add(
        "perm-code",
        &a(&[
            ("permanent-redirect", "https://example.org/new"),
            ("permanent-redirect-code", "308"),
        ]),
        &web,
    );
    add(
        "temp",
        &a(&[("temporal-redirect", "https://example.org/tmp")]),
        &web,
    );
    add(
        "rps",
        &a(&[("limit-rps", "1"), ("limit-burst-multiplier", "1")]),
        &web,
    );
    add("conn", &a(&[("limit-connections", "1")]), &web);
    add(
        "cors",
        &a(&[
            ("enable-cors", "true"),
            (
                "cors-allow-origin",
                "https://a.example.org, https://*.b.example.org",
            ),
            ("cors-allow-methods", "GET, POST"),
            ("cors-expose-headers", "X-Backend"),
        ]),
        &web,
    );
    add("canary-header", "", &web);
    add(
        "affinity",
        &a(&[("affinity", "cookie"), ("session-cookie-name", "route")]),
        &[("Prefix", "/", "pair")],
    );
    add(
        "hash",
        &a(&[("upstream-hash-by", "$request_uri")]),
        &[("Prefix", "/", "pair")],
    );
    add("rr", "", &[("Prefix", "/", "pair")]);
    add("proto", &a(&[("backend-protocol", "HTTPS")]), &web);
    // Regex only where asked: a plain Prefix /ba beside a regex Ingress on the same host.
    // Its paths that would match every URI (`/a|`) or backtrack exponentially are left out.
    m.push_str(&ingress(
        "e2e",
        "rx",
        "mixed.example.com",
        &a(&[("use-regex", "true")]),
        None,
        &[
            ("ImplementationSpecific", "/api/v[0-9]+", "regex"),
            ("ImplementationSpecific", "/a|", "regex"),
            ("ImplementationSpecific", "/(b+)+$", "regex"),
        ],
    ));
    m.push_str(&ingress(
        "e2e",
        "plain",
        "mixed.example.com",
        "",
        None,
        &[("Prefix", "/ba", "ba")],
    ));
    // Canary Ingresses share the primary's host and path.
    for (name, annotations) in [
        (
            "canary-header",
            a(&[("canary", "true"), ("canary-by-header", "X-Canary")]),
        ),
        (
            "canary-cookie",
            a(&[("canary", "true"), ("canary-by-cookie", "beta")]),
        ),
        (
            "canary-weight",
            a(&[("canary", "true"), ("canary-weight", "100")]),
        ),
    ] {
        if name != "canary-header" {
            m.push_str(&ingress(
                "e2e",
                name,
                &format!("{name}.example.com"),
                "",
                None,
                &web,
            ));
        }
        m.push_str(&ingress(
            "e2e",
            &format!("{name}-c"),
            &format!("{name}.example.com"),
            &annotations,
            None,
            &[("Prefix", "/", "canary")],
        ));
    }
    // TLS: redirect by default, opt-out, and SNI with the Secret's certificate.
    m.push_str(&with_tls(
        ingress("e2e", "tls", "tls.example.com", "", None, &web),
        "tls.example.com",
    ));
    m.push_str(&with_tls(
        ingress(
            "e2e",
            "notls",
            "notls.example.com",
            &a(&[("ssl-redirect", "false")]),
            None,
            &web,
        ),
        "notls.example.com",
    ));
    let c = Controller::start(&m).await;
    let mut failures = String::new();
    let mut check = |what: &str, ok: bool, detail: &dyn std::fmt::Debug| {
        if !ok {
            let _ = writeln!(failures, "{what}: {detail:?}");
        }
    };

    let r = c.get("force.example.com", "/x?y=1").await;
    let https = format!("https://force.example.com:{}/x?y=1", c.https);
    check(
        "force-ssl-redirect",
        r.status == 308 && r.header("location") == Some(&https),
        &r,
    );

    let r = c.get("tls.example.com", "/x").await;
    check("ssl-redirect by default with TLS", r.status == 308, &r);
    let r = c.get("notls.example.com", "/x").await;
    check(
        "ssl-redirect: false",
        r.status == 200 && r.backend() == "web",
        &r,
    );
    let (code, body) = curl_https(c.https, "tls.example.com", "/secure");
    check(
        "TLS with SNI",
        code == 200 && body == "web /secure",
        &(code, &body),
    );

    let r = c.get("rewrite.example.com", "/app/deep/path?q=1").await;
    check(
        "rewrite-target with captures",
        r.body == "web /deep/path?q=1",
        &r,
    );

    let r = c.get("mixed.example.com", "/api/v2/users").await;
    check("use-regex path", r.backend() == "regex", &r);
    let r = c.get("mixed.example.com", "/banana").await;
    check("regex does not leak to Prefix /ba", r.status == 404, &r);
    let r = c.get("mixed.example.com", "/ba/x").await;
    check("Prefix /ba beside a regex", r.backend() == "ba", &r);
    let r = c.get("mixed.example.com", "/zzz").await;
    check("regex /a| is refused, not a match-all", r.status == 404, &r);
    let r = c
        .get("mixed.example.com", &format!("/{}!", "b".repeat(40)))
        .await;
    check("regex /(b+)+$ is refused", r.status == 404, &r);

    let r = c.get("timeout.example.com", "/slow").await;
    check("proxy-read-timeout", r.status == 504, &r);

    let big = "x".repeat(2048);
    let r = request(c.http, "POST", "body.example.com", "/", &[], &big)
        .await
        .unwrap();
    check("proxy-body-size", r.status == 413, &r);
    let r = request(c.http, "POST", "body.example.com", "/", &[], "small")
        .await
        .unwrap();
    check("proxy-body-size (under)", r.status == 200, &r);

    check(
        "allowlist-source-range",
        c.get("allow.example.com", "/").await.status == 403,
        &"",
    );
    check(
        "whitelist-source-range",
        c.get("allow-me.example.com", "/").await.status == 200,
        &"",
    );
    check(
        "denylist-source-range",
        c.get("deny.example.com", "/").await.status == 403,
        &"",
    );

    let r = c.get("perm.example.com", "/").await;
    check(
        "permanent-redirect",
        r.status == 301 && r.header("location") == Some("https://example.org/new"),
        &r,
    );
    let r = c.get("perm-code.example.com", "/").await;
    check("permanent-redirect-code", r.status == 308, &r);
    let r = c.get("temp.example.com", "/").await;
    check(
        "temporal-redirect",
        r.status == 302 && r.header("location") == Some("https://example.org/tmp"),
        &r,
    );

    let mut statuses = Vec::new();
    for _ in 0..10 {
        statuses.push(c.get("rps.example.com", "/").await.status);
    }
    check(
        "limit-rps",
        statuses.contains(&503) && statuses[0] == 200,
        &statuses,
    );

    let slow = tokio::spawn({
        let port = c.http;
        async move { support::get(port, "conn.example.com", "/slow", &[]).await }
    });
    // Poll for as long as the slow request holds its connection (the backend sleeps 3 s), so
    // a slow start of that request on a loaded machine cannot make the test miss the window.
    // If the slow request reaches nginx while a poll is in flight, it is the one refused: either
    // way one of two concurrent requests got 503.
    let mut limited = false;
    while !slow.is_finished() {
        if c.get("conn.example.com", "/").await.status == 503 {
            limited = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let slow_status = slow.await.ok().flatten().map(|r| r.status);
    check(
        "limit-connections",
        limited || slow_status == Some(503),
        &format!("no 503 while a connection was held (slow request: {slow_status:?})"),
    );

    let r = c
        .get_with(
            "cors.example.com",
            "/",
            &[("Origin", "https://x.b.example.org")],
        )
        .await;
    check(
        "enable-cors: allowed origin echoed",
        r.header("access-control-allow-origin") == Some("https://x.b.example.org")
            && r.header("access-control-expose-headers") == Some("X-Backend"),
        &r,
    );
    let r = c
        .get_with("cors.example.com", "/", &[("Origin", "https://evil.org")])
        .await;
    check(
        "enable-cors: other origin",
        r.header("access-control-allow-origin").is_none(),
        &r,
    );
    let r = request(
        c.http,
        "OPTIONS",
        "cors.example.com",
        "/",
        &[("Origin", "https://a.example.org")],
        "",
    )
    .await
    .unwrap();
    check(
        "enable-cors: preflight",
        r.status == 204 && r.header("access-control-allow-methods") == Some("GET, POST"),
        &r,
    );

    let r = c
        .get_with("canary-header.example.com", "/", &[("X-Canary", "always")])
        .await;
    check("canary-by-header always", r.backend() == "canary", &r);
    let r = c
        .get_with("canary-header.example.com", "/", &[("X-Canary", "never")])
        .await;
    check("canary-by-header never", r.backend() == "web", &r);
    let r = c.get("canary-header.example.com", "/").await;
    check("canary-by-header absent", r.backend() == "web", &r);
    let r = c
        .get_with(
            "canary-cookie.example.com",
            "/",
            &[("Cookie", "beta=always")],
        )
        .await;
    check("canary-by-cookie", r.backend() == "canary", &r);
    let r = c.get("canary-cookie.example.com", "/").await;
    check("canary-by-cookie absent", r.backend() == "web", &r);
    let r = c.get("canary-weight.example.com", "/").await;
    check("canary-weight 100", r.backend() == "canary", &r);

    let first = c.get("affinity.example.com", "/").await;
    let cookie = first
        .header("set-cookie")
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_owned();
    check(
        "affinity sets the cookie",
        cookie.starts_with("route="),
        &first,
    );
    let mut pinned = Vec::new();
    for _ in 0..6 {
        pinned.push(
            c.get_with("affinity.example.com", "/", &[("Cookie", &cookie)])
                .await
                .backend()
                .to_owned(),
        );
    }
    check(
        "affinity pins",
        pinned.iter().all(|b| *b == first.backend()),
        &(first.backend(), &pinned),
    );

    let mut hashed = Vec::new();
    for _ in 0..6 {
        hashed.push(
            c.get("hash.example.com", "/same/uri")
                .await
                .backend()
                .to_owned(),
        );
    }
    check(
        "upstream-hash-by",
        hashed.iter().all(|b| *b == hashed[0]),
        &hashed,
    );
    let mut spread = Vec::new();
    for _ in 0..6 {
        spread.push(c.get("rr.example.com", "/").await.backend().to_owned());
    }
    check(
        "round robin by default",
        spread.contains(&"ep-a".into()) && spread.contains(&"ep-b".into()),
        &spread,
    );

    // The test backends speak plain HTTP: a TLS handshake to them fails, so nginx answers 502.
    let r = c.get("proto.example.com", "/").await;
    check("backend-protocol HTTPS", r.status == 502, &r);
    let conf = std::fs::read_to_string(c.prefix().join("nginx.conf")).unwrap();
    check(
        "proxy-buffering off",
        conf.contains("proxy_buffering off;"),
        &"",
    );

    assert!(failures.is_empty(), "{failures}");
}
