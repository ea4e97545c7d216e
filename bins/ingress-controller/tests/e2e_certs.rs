//! Certificates end to end: a Secret whose certificate is replaced is served by the running
//! nginx within seconds, seen by `openssl s_client`, without a restart and without a failed
//! request; a Secret that is no certificate is refused on its own (an event on its Ingress,
//! its host presents the default certificate) while another Ingress's change still applies;
//! the default certificate is the generated "Fake Certificate", or `--default-ssl-certificate`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use support::{Backends, CLASS, Controller, eventually, ingress, service, tls_secret, with_tls};

/// The common name of the generated default certificate.
const FAKE: &str = "Kubernetes Ingress Controller Fake Certificate";

/// A self-signed certificate for `host` with organisation `org`, and its key, as PEM texts.
fn certificate(dir: &Path, host: &str, org: &str) -> (String, String) {
    let (crt, key) = support::self_signed(dir, org, host, &format!("DNS:{host}"));
    (
        std::fs::read_to_string(crt).unwrap(),
        std::fs::read_to_string(key).unwrap(),
    )
}

/// The subject of the certificate 127.0.0.1:`port` presents for SNI `host`, as `openssl
/// s_client` sees it; `None` when the handshake fails.
fn served_subject(port: u16, host: &str) -> Option<String> {
    let handshake = Command::new("openssl")
        .args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
        .args(["-servername", host])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let mut x509 = Command::new("openssl")
        .args(["x509", "-noout", "-subject"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    use std::io::Write as _;
    x509.stdin.take()?.write_all(&handshake.stdout).ok()?;
    let out = x509.wait_with_output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The event files of namespace `ns` beside the manifests, as text.
fn events(manifests: &Path, ns: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(manifests.join(".status/events").join(ns)) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_certificate_is_served_without_a_restart() {
    if support::ran_elsewhere() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let host = "rot.example.com";
    let (old_crt, old_key) = certificate(keys.path(), host, "first");
    let (new_crt, new_key) = certificate(keys.path(), host, "second");
    let backends = Backends::start(&["a"]).await;
    let objects = |crt: &str, key: &str| {
        let mut m = String::from(CLASS);
        m.push_str(&service("rot", "a", &[backends.port("a")]));
        m.push_str(&tls_secret("rot", "cert", crt, key));
        let web = ingress("rot", "web", host, "", None, &[("Prefix", "/", "a")]);
        m.push_str(&with_tls(&web, host, "cert"));
        m
    };
    let c = Controller::start(&objects(&old_crt, &old_key)).await;
    let subject = served_subject(c.https, host).unwrap_or_default();
    assert!(
        subject.contains("O=first") || subject.contains("O = first"),
        "{subject}"
    );
    let pid = std::fs::read_to_string(c.prefix().join("nginx.pid")).unwrap();

    // HTTPS requests all along the rotation: none may fail. A connection that no answer came
    // back on (curl's `000`) is tried once more: while nginx reloads, an old worker that is
    // shutting down can close a connection it accepted before serving it (seen once in CI
    // under load), a race of nginx's reload that any client meets and that its next
    // connection, to a new worker, does not. A certificate that could not be served would
    // fail the second try too.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let client = {
        let stop = std::sync::Arc::clone(&stop);
        let https = c.https;
        std::thread::spawn(move || {
            let get = || {
                let out = Command::new("curl")
                    .args(["-sk", "-o", "/dev/null", "-w", "%{http_code}"])
                    .args(["--resolve", &format!("{host}:{https}:127.0.0.1")])
                    .arg(format!("https://{host}:{https}/"))
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            let (mut ok, mut failed) = (0, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut code = get();
                if code == "000" {
                    code = get();
                }
                match code.as_str() {
                    "200" => ok += 1,
                    _ => failed.push(code),
                }
            }
            (ok, failed)
        })
    };
    c.update(&objects(&new_crt, &new_key)).await;
    eventually("the new certificate served", || async {
        let subject = served_subject(c.https, host).unwrap_or_default();
        subject.contains("O=second") || subject.contains("O = second")
    })
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (ok, failed) = client.join().unwrap();
    assert!(
        ok > 0 && failed.is_empty(),
        "{ok} served, failed: {failed:?}"
    );
    // Reloaded, not restarted: the same master process, no restart counted.
    let after = std::fs::read_to_string(c.prefix().join("nginx.pid")).unwrap();
    assert_eq!(pid, after);
    assert_eq!(
        c.metric("ingress_controller_nginx_restarts_total").await,
        0.0
    );
    assert_eq!(
        c.metric("nginx_ingress_controller_config_last_reload_successful")
            .await,
        1.0
    );
    // The first certificate's file goes once nginx no longer reads it.
    let files: Vec<_> = std::fs::read_dir(c.prefix().join("certs"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".pem"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junk_secret_is_refused_alone_and_other_changes_apply() {
    if support::ran_elsewhere() {
        return;
    }
    let backends = Backends::start(&["one", "two"]).await;
    let good = tls_secret(
        "mix",
        "a-tls",
        &support::fixture("tls.crt"),
        &support::fixture("tls.key"),
    );
    let junk = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: a-tls, namespace: mix}\n\
                type: kubernetes.io/tls\nstringData:\n  tls.crt: \"-----BEGIN CERTIFICATE-----\\n\
                aGVsbG8gd29ybGQ=\\n-----END CERTIFICATE-----\\n\"\n  tls.key: \"-----BEGIN PRIVATE \
                KEY-----\\naGVsbG8gd29ybGQ=\\n-----END PRIVATE KEY-----\\n\"\n";
    let objects = |secret: &str, b_backend: &str| {
        let mut m = String::from(CLASS);
        m.push_str(&service("mix", "one", &[backends.port("one")]));
        m.push_str(&service("mix", "two", &[backends.port("two")]));
        m.push_str(secret);
        let a = ingress(
            "mix",
            "a",
            "tls.example.com",
            "",
            None,
            &[("Prefix", "/", "one")],
        );
        m.push_str(&with_tls(&a, "tls.example.com", "a-tls"));
        m.push_str(&ingress(
            "mix",
            "b",
            "b.example.com",
            "",
            None,
            &[("Prefix", "/", b_backend)],
        ));
        m
    };
    let c = Controller::start(&objects(&good, "one")).await;
    assert_eq!(c.get("b.example.com", "/").await.backend(), "one");
    assert!(served_subject(c.https, "tls.example.com").is_some());

    // A's Secret turns to junk in the same change that moves B to another Service.
    c.update(&objects(junk, "two")).await;
    eventually("B's change applied", || async {
        c.get("b.example.com", "/").await.backend() == "two"
    })
    .await;
    assert_eq!(
        c.metric("nginx_ingress_controller_config_last_reload_successful")
            .await,
        1.0
    );
    let dir = c.manifests_dir();
    eventually("an event on A", || async {
        events(&dir, "mix")
            .iter()
            .any(|e| e.contains("name: a\n") && e.contains("TLS Secret mix/a-tls refused"))
    })
    .await;
    assert!(
        !events(&dir, "mix").iter().any(|e| e.contains("name: b\n")),
        "{:#?}",
        events(&dir, "mix")
    );
    // A's host is served without the refused Secret: over HTTP, and on TLS with the default
    // certificate (ingress-nginx's generated one), as ingress-nginx does.
    assert_eq!(c.get("tls.example.com", "/").await.backend(), "one");
    let subject = served_subject(c.https, "tls.example.com").unwrap_or_default();
    assert!(subject.contains(FAKE), "{subject}");

    // Later changes keep applying while the junk Secret stays.
    c.update(&objects(junk, "one")).await;
    eventually("B's second change applied", || async {
        c.get("b.example.com", "/").await.backend() == "one"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_certificate_is_generated_or_the_named_secret() {
    if support::ran_elsewhere() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let backends = Backends::start(&["a"]).await;
    let mut m = String::from(CLASS);
    m.push_str(&service("def", "a", &[backends.port("a")]));
    // An Ingress whose tls entry names no Secret: its host presents the default certificate.
    let web = ingress(
        "def",
        "web",
        "web.example.com",
        "",
        None,
        &[("Prefix", "/", "a")],
    );
    m.push_str(&web.replace("spec:\n", "spec:\n  tls: [{hosts: [web.example.com]}]\n"));

    // Without --default-ssl-certificate: the generated one, for unknown names too.
    let c = Controller::start(&m).await;
    for name in ["web.example.com", "unknown.example.com"] {
        let subject = served_subject(c.https, name).unwrap_or_default();
        assert!(subject.contains(FAKE), "{name}: {subject}");
    }
    drop(c);

    // With it: that Secret's certificate.
    let (crt, key) = certificate(keys.path(), "default.example.com", "chosen");
    m.push_str(&tls_secret("def", "default-cert", &crt, &key));
    let flag = [
        "--default-ssl-certificate".to_owned(),
        "def/default-cert".to_owned(),
    ];
    let c = Controller::start_with(&m, &flag).await;
    for name in ["web.example.com", "unknown.example.com"] {
        let subject = served_subject(c.https, name).unwrap_or_default();
        assert!(
            subject.contains("O=chosen") || subject.contains("O = chosen"),
            "{name}: {subject}"
        );
    }
    assert_eq!(c.get("web.example.com", "/").await.backend(), "a");
}
