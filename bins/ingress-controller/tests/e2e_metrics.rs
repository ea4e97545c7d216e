//! ingress-nginx's metric families end to end: requests through the real nginx counted in
//! `nginx_ingress_controller_requests` with ingress-nginx's labels, histograms with its
//! default buckets, certificate expiry, nginx's processes and connections; and the series a
//! client can create bounded (random Host headers and methods).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::collections::BTreeMap;

use ingress_controller::metrics::requests::{LENGTH_BUCKETS, TIME_BUCKETS};
use support::{Backends, CLASS, Controller, eventually, ingress, service};

const HOST: &str = "metrics.example.com";

/// One sample of the exposition: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of `/metrics` (label values hold no `"`, `,` or `}` here).
async fn scrape(c: &Controller) -> Vec<Sample> {
    let body = support::get(c.metrics, "x", "/metrics", &[])
        .await
        .unwrap()
        .body;
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split(',')
                .filter_map(|pair| {
                    let (k, v) = pair.split_once('=')?;
                    Some((k.to_owned(), v.trim_matches('"').to_owned()))
                })
                .collect();
            Some(Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().ok()?,
            })
        })
        .collect()
}

/// The samples named `name` whose labels include `want`.
fn find<'a>(samples: &'a [Sample], name: &str, want: &[(&str, &str)]) -> Vec<&'a Sample> {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect()
}

fn objects(backends: &Backends) -> String {
    let mut m = String::from(CLASS);
    m.push_str(&service("e2e", "web", &[backends.port("web")]));
    m.push_str(&support::tls_secret(
        "e2e",
        "tls",
        &support::fixture("tls.crt"),
        &support::fixture("tls.key"),
    ));
    m.push_str(&support::with_tls(
        &ingress(
            "e2e",
            "web",
            HOST,
            "nginx.ingress.kubernetes.io/ssl-redirect: 'false'",
            None,
            &[("Prefix", "/app", "web")],
        ),
        HOST,
        "tls",
    ));
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_histograms_certificates_and_processes() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["web"]).await;
    let c = Controller::start(&objects(&backends)).await;
    for _ in 0..5 {
        assert_eq!(c.get(HOST, "/app/x").await.status, 200);
    }
    let labels = [
        ("host", HOST),
        ("namespace", "e2e"),
        ("ingress", "web"),
        ("service", "web"),
        ("path", "/app"),
        ("method", "GET"),
        ("status", "200"),
        ("canary", ""),
    ];
    // The log phase flushes its counts to the shared dict every second.
    eventually("the 5 requests counted", || async {
        let samples = scrape(&c).await;
        find(&samples, "nginx_ingress_controller_requests", &labels)
            .first()
            .is_some_and(|s| s.value == 5.0)
    })
    .await;
    let samples = scrape(&c).await;
    let requests = find(&samples, "nginx_ingress_controller_requests", &labels);
    assert_eq!(
        requests[0]
            .labels
            .get("controller_class")
            .map(String::as_str),
        Some("k8s.io/ingress-nginx")
    );
    for label in ["controller_namespace", "controller_pod"] {
        assert!(requests[0].labels.contains_key(label), "{requests:?}");
    }

    // Histograms: ingress-nginx's default buckets, cumulative, 5 observations.
    let without_status = &labels[..6];
    for (name, bounds) in [
        ("request_duration_seconds", &TIME_BUCKETS[..]),
        ("response_duration_seconds", &TIME_BUCKETS[..]),
        ("connect_duration_seconds", &TIME_BUCKETS[..]),
        ("request_size", &LENGTH_BUCKETS[..]),
        ("response_size", &LENGTH_BUCKETS[..]),
    ] {
        let family = format!("nginx_ingress_controller_{name}");
        let buckets = find(&samples, &format!("{family}_bucket"), without_status);
        let les: Vec<f64> = buckets
            .iter()
            .map(|s| match s.labels["le"].as_str() {
                "+Inf" => f64::INFINITY,
                le => le.parse().unwrap(),
            })
            .collect();
        let mut want = bounds.to_vec();
        want.push(f64::INFINITY);
        assert_eq!(les, want, "{family}");
        assert_eq!(buckets.last().unwrap().value, 5.0, "{family}");
        let count = find(&samples, &format!("{family}_count"), without_status);
        assert_eq!(count[0].value, 5.0, "{family}");
    }
    // A request is larger than 10 bytes, and bytes_sent has the size buckets.
    let sizes = find(
        &samples,
        "nginx_ingress_controller_request_size_bucket",
        &[("ingress", "web"), ("le", "10.0")],
    );
    assert_eq!(sizes[0].value, 0.0);
    assert!(
        !find(
            &samples,
            "nginx_ingress_controller_bytes_sent_bucket",
            &labels[..6]
        )
        .is_empty()
    );

    // The certificate's expiry, labelled as ingress-nginx's.
    let not_after =
        ingress_controller::tls_check::not_after(support::fixture("tls.crt").as_bytes()).unwrap();
    let expiry = find(
        &samples,
        "nginx_ingress_controller_ssl_expire_time_seconds",
        &[("host", HOST), ("namespace", "e2e"), ("secret_name", "tls")],
    );
    #[allow(clippy::cast_precision_loss)]
    let not_after = not_after as f64;
    assert_eq!(expiry.len(), 1, "{samples:?}");
    assert_eq!(expiry[0].value, not_after);
    let info = find(
        &samples,
        "nginx_ingress_controller_ssl_certificate_info",
        &[
            ("host", HOST),
            ("secret_name", "tls"),
            ("issuer_common_name", "tls.example.com"),
            ("public_key_algorithm", "RSA"),
            ("identifier", &expiry[0].labels["identifier"]),
        ],
    );
    assert_eq!(info.len(), 1, "{samples:?}");
    assert_eq!(info[0].value, 1.0);

    // Configuration loads and nginx's processes (master and 2 workers) and connections.
    let one = |name: &str| {
        find(&samples, &format!("nginx_ingress_controller_{name}"), &[])
            .iter()
            .map(|s| s.value)
            .sum::<f64>()
    };
    assert_eq!(one("config_last_reload_successful"), 1.0);
    assert!(one("config_last_reload_successful_timestamp_seconds") > 1.6e9);
    assert!(one("success") >= 1.0);
    assert_eq!(one("errors"), 0.0);
    // Master and 2 workers (more for a moment should a reload's old workers still exit).
    assert!(one("nginx_process_num_procs") >= 3.0);
    assert!(one("nginx_process_resident_memory_bytes") > 0.0);
    assert!(one("nginx_process_requests_total") >= 5.0);
    assert!(
        !find(
            &samples,
            "nginx_ingress_controller_nginx_process_connections",
            &[("state", "active")]
        )
        .is_empty()
    );
    assert!(
        !find(
            &samples,
            "nginx_ingress_controller_nginx_process_connections_total",
            &[("state", "accepted")]
        )
        .is_empty()
    );
}

/// Random Host headers and methods, `count` requests.
async fn hostile_requests(c: &Controller, count: usize) {
    for i in 0..count {
        let host = format!("h{i}-{}.attacker.example", i * 7919 % 1000);
        let method = if i % 2 == 0 { "GET" } else { "XMETHOD" };
        let method = format!(
            "{method}{}",
            if i % 2 == 0 {
                String::new()
            } else {
                i.to_string()
            }
        );
        support::request(c.http, &method, &host, "/", &[], "")
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_hosts_and_methods_create_no_series() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["web"]).await;
    let c = Controller::start(&objects(&backends)).await;
    let d = Controller::start_with(&objects(&backends), &["--metrics-per-host=false".into()]).await;
    hostile_requests(&c, 1000).await;
    hostile_requests(&d, 1000).await;
    // A request of the configuration after them: once it is counted, so are they.
    c.get(HOST, "/app").await;
    d.get(HOST, "/app").await;
    for (controller, per_host) in [(&c, true), (&d, false)] {
        eventually("the last request counted", || async {
            let samples = scrape(controller).await;
            !find(
                &samples,
                "nginx_ingress_controller_requests",
                &[("ingress", "web")],
            )
            .is_empty()
        })
        .await;
        // A second flush has passed everywhere.
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        let samples = scrape(controller).await;
        let series = find(&samples, "nginx_ingress_controller_requests", &[]);
        assert!(series.len() <= 4, "{series:#?}");
        assert!(
            series
                .iter()
                .all(|s| s.labels.get("host").is_none_or(|h| !h.contains("attacker"))),
            "{series:#?}"
        );
        let other: f64 = series
            .iter()
            .filter(|s| s.labels.get("ingress").is_some_and(String::is_empty))
            .map(|s| s.value)
            .sum();
        if per_host {
            // As ingress-nginx: requests to no host of the configuration are left out.
            assert_eq!(other, 0.0, "{series:#?}");
        } else {
            // Counted, without a host label, with the unknown methods as OTHER.
            assert_eq!(other, 1000.0, "{series:#?}");
            assert!(series.iter().all(|s| !s.labels.contains_key("host")));
            let methods: Vec<&str> = series.iter().map(|s| s.labels["method"].as_str()).collect();
            assert!(methods.contains(&"OTHER"), "{methods:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_backend_and_regex_path_labels() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["web", "canary", "regex"]).await;
    let a = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| format!("nginx.ingress.kubernetes.io/{k}: '{v}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut m = String::from(CLASS);
    m.push_str(&backends.manifests("e2e"));
    m.push_str(&ingress(
        "e2e",
        "web",
        HOST,
        "",
        None,
        &[("Prefix", "/", "web")],
    ));
    m.push_str(&ingress(
        "e2e",
        "web-canary",
        HOST,
        &a(&[("canary", "true"), ("canary-weight", "100")]),
        None,
        &[("Prefix", "/", "canary")],
    ));
    // A regex path with `$`: written as `${literal_dollar}` in `set $location_path`.
    m.push_str(&ingress(
        "e2e",
        "rx",
        "rx.example.com",
        &a(&[("use-regex", "true")]),
        None,
        &[("ImplementationSpecific", "/re/[a-z]+$", "regex")],
    ));
    let c = Controller::start(&m).await;
    assert_eq!(c.get(HOST, "/").await.backend(), "canary");
    assert_eq!(c.get("rx.example.com", "/re/abc").await.backend(), "regex");
    eventually("both requests counted", || async {
        let samples = scrape(&c).await;
        let canary = find(
            &samples,
            "nginx_ingress_controller_requests",
            &[
                ("ingress", "web"),
                ("service", "web"),
                ("canary", "e2e/canary:80"),
                ("status", "200"),
            ],
        );
        let regex = find(
            &samples,
            "nginx_ingress_controller_requests",
            &[
                ("ingress", "rx"),
                ("service", "regex"),
                ("path", "/re/[a-z]+$"),
                ("canary", ""),
                ("host", "rx.example.com"),
            ],
        );
        canary.len() == 1 && regex.len() == 1
    })
    .await;
}
