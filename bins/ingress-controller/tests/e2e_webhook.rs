//! The admission webhook end to end: the controller with `--validating-webhook` over HTTPS
//! (a self-signed certificate made here, curl trusting it), AdmissionReviews `POST`ed as the
//! API server sends them: accepted, refused with the model's message or nginx's, decided
//! without a check (another class, a DELETE, another kind), bad bodies, hostile reviews; and
//! the certificate replaced on disk served to the next connection.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use support::{Backends, CLASS, Controller, eventually, ingress, service, tls_secret};

/// A self-signed certificate for 127.0.0.1 with organisation `org`, written to
/// `dir/ORG.crt` and `dir/ORG.key`.
fn certificate(dir: &Path, org: &str) -> (PathBuf, PathBuf) {
    support::self_signed(dir, org, "webhook", "IP:127.0.0.1")
}

/// A controller serving the webhook on 127.0.0.1, and what a client needs to reach it.
struct Webhook {
    port: u16,
    /// The certificate clients trust (the one the webhook started with).
    ca: PathBuf,
    dir: tempfile::TempDir,
}

impl Webhook {
    /// Certificate files at `dir/cert` and `dir/key` (as a mounted Secret), and the flags.
    fn new(extra: &[String]) -> (Self, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let (crt, key) = certificate(dir.path(), "first");
        std::fs::copy(&crt, dir.path().join("cert")).unwrap();
        std::fs::copy(&key, dir.path().join("key")).unwrap();
        let port = support::free_port();
        let mut args = vec![
            format!("--validating-webhook=127.0.0.1:{port}"),
            format!(
                "--validating-webhook-certificate={}",
                dir.path().join("cert").display()
            ),
            format!(
                "--validating-webhook-key={}",
                dir.path().join("key").display()
            ),
        ];
        args.extend_from_slice(extra);
        (Self { port, ca: crt, dir }, args)
    }

    /// `POST`s `body` to the webhook: the HTTP status and the body of the answer.
    fn post(&self, body: &[u8]) -> (u16, String) {
        self.request("POST", body)
    }

    fn request(&self, method: &str, body: &[u8]) -> (u16, String) {
        let file = self.dir.path().join("body.json");
        std::fs::write(&file, body).unwrap();
        let out = Command::new("curl")
            .args(["-sS", "--max-time", "30", "-X", method, "--cacert"])
            .arg(&self.ca)
            .args(["-H", "Content-Type: application/json", "--data-binary"])
            .arg(format!("@{}", file.display()))
            .args(["-w", "\n%{http_code}"])
            .arg(format!(
                "https://127.0.0.1:{}/networking/v1/ingresses",
                self.port
            ))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (answer, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
        (code.trim().parse().unwrap_or(0), answer.to_owned())
    }

    /// The `response` of the AdmissionReview answering `ingress` (a JSON object).
    fn review(&self, uid: &str, ingress: &Value) -> Value {
        let (status, answer) = self.post(&review(uid, "CREATE", Some(ingress)));
        assert_eq!(status, 200, "{answer}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(answer["kind"], "AdmissionReview");
        assert_eq!(answer["response"]["uid"], uid, "{answer}");
        answer["response"].clone()
    }
}

/// An AdmissionReview body of an Ingress `operation`.
fn review(uid: &str, operation: &str, object: Option<&Value>) -> Vec<u8> {
    let name = object.map_or(Value::Null, |o| o["metadata"]["name"].clone());
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid, "operation": operation, "namespace": "e2e", "name": name,
            "kind": {"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"},
            "resource": {"group": "networking.k8s.io", "version": "v1", "resource": "ingresses"},
            "object": object,
        },
    }))
    .unwrap()
}

/// Ingress `e2e/NAME` of class `class` for `host` and `path`, to Service `web`.
fn candidate(name: &str, class: &str, host: &str, path: &str, annotations: &Value) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": "e2e", "annotations": annotations,
                     "creationTimestamp": "2030-01-01T00:00:00Z"},
        "spec": {
            "ingressClassName": class,
            "rules": [{"host": host, "http": {"paths": [{
                "path": path, "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}},
            }]}}],
        },
    })
}

fn message(response: &Value) -> String {
    response["status"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The running controller's objects: Service `e2e/web` and Ingress `e2e/first` for
/// `a.example.com`.
async fn start(extra: &[String]) -> (Controller, Backends) {
    let backends = Backends::start(&["web"]).await;
    let mut m = String::from(CLASS);
    m.push_str(&service("e2e", "web", &[backends.port("web")]));
    m.push_str(&tls_secret(
        "e2e",
        "weak",
        &support::fixture("sha1-signed.crt"),
        &support::fixture("sha1-signed.key"),
    ));
    m.push_str(&ingress(
        "e2e",
        "first",
        "a.example.com",
        "",
        None,
        &[("Prefix", "/", "web")],
    ));
    (Controller::start_with(&m, extra).await, backends)
}

fn tools_missing() -> bool {
    for (tool, version) in [("curl", "--version"), ("openssl", "version")] {
        if Command::new(tool).arg(version).output().is_err() {
            println!("skipped: {tool}");
            return true;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_are_answered_over_https() {
    if support::ran_elsewhere() || tools_missing() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let nginx = refusing_nginx(scratch.path());
    let (webhook, args) = Webhook::new(&[format!("--nginx-binary={}", nginx.display())]);
    let (controller, _backends) = start(&args).await;
    let none = json!({});

    let accepted = webhook.review(
        "u-ok",
        &candidate("second", "nginx", "b.example.com", "/", &none),
    );
    assert_eq!(accepted["allowed"], true, "{accepted}");

    // The model's refusal, with the message of the event it would record: the path is taken
    // (once the webhook has the objects of the first sync).
    let taken = candidate("third", "nginx", "a.example.com", "/", &none);
    eventually("a taken path refused", || async {
        webhook.review("u-taken", &taken)["allowed"] == false
    })
    .await;
    let refused = webhook.review("u-taken", &taken);
    assert_eq!(refused["status"]["code"], 400, "{refused}");
    assert!(
        message(&refused).contains("already served by Ingress e2e/first"),
        "{refused}"
    );
    // The same Ingress under review replaces its stored version: no conflict with itself.
    let itself = candidate("first", "nginx", "a.example.com", "/", &none);
    assert_eq!(webhook.review("u-self", &itself)["allowed"], true);
    // An accepted review is measured, as by ingress-nginx's admission collector.
    let size = controller
        .metric("nginx_ingress_controller_admission_config_size")
        .await;
    assert!(size > 1000.0, "{size}");
    let tested = controller
        .metric("nginx_ingress_controller_admission_tested_ingresses")
        .await;
    assert_eq!(tested, 1.0);

    let bad_annotation = json!({"nginx.ingress.kubernetes.io/limit-rps": "lots"});
    let refused = webhook.review(
        "u-ann",
        &candidate("rps", "nginx", "c.example.com", "/", &bad_annotation),
    );
    assert_eq!(refused["allowed"], false);
    assert!(message(&refused).contains("limit-rps"), "{refused}");

    // A DNS name of 253 characters: the model accepts it, and so does nginx -t, the
    // server-name hash bucket being sized for the longest host.
    let long = format!(
        "{}.{}.{}.{}",
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(61)
    );
    let accepted = webhook.review("u-long", &candidate("long", "nginx", &long, "/", &none));
    assert_eq!(accepted["allowed"], true, "{accepted}");

    // A certificate OpenSSL refuses to load (SHA-1 signed, tests/fixtures) is refused by the
    // controller's own checks before nginx sees it; the state of a Secret is not the
    // Ingress's (cert-manager writes it after the Ingress), so the Ingress is admitted and
    // its host presents the default certificate.
    let mut weak = candidate("weak", "nginx", "tls.example.com", "/", &none);
    weak["spec"]["tls"] = json!([{"hosts": ["tls.example.com"], "secretName": "weak"}]);
    let admitted = webhook.review("u-weak", &weak);
    assert_eq!(admitted["allowed"], true, "{admitted}");

    // What nginx -t refuses, the review refuses with nginx's message (this test's nginx
    // refuses configurations naming one host: the model leaves nothing it would refuse).
    let refused = webhook.review(
        "u-nginx",
        &candidate("nginx", "nginx", "refused-by-nginx.example.com", "/", &none),
    );
    assert_eq!(refused["allowed"], false, "{refused}");
    assert!(message(&refused).contains("nginx -t"), "{refused}");
    assert!(
        message(&refused).contains("this test's nginx refuses"),
        "{refused}"
    );

    // Another class's Ingress is not ours to judge, whatever it holds.
    let snippet = json!({"nginx.ingress.kubernetes.io/server-snippet": "load_module /tmp/x.so;"});
    let other = webhook.review(
        "u-class",
        &candidate("other", "traefik", "a.example.com", "/", &snippet),
    );
    assert_eq!(other["allowed"], true, "{other}");

    // A DELETE carries no object: allowed.
    let (status, answer) = webhook.post(&review("u-del", "DELETE", None));
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["response"], json!({"uid": "u-del", "allowed": true}));

    // Another kind is refused with a message.
    let mut service_review: Value =
        serde_json::from_slice(&review("u-svc", "CREATE", Some(&json!({})))).unwrap();
    service_review["request"]["kind"] = json!({"group": "", "version": "v1", "kind": "Service"});
    let (status, answer) = webhook.post(&serde_json::to_vec(&service_review).unwrap());
    assert_eq!(status, 200);
    assert!(answer.contains("not /v1 Service"), "{answer}");

    // Bodies that are no AdmissionReview: 400; too large: 413; not a POST: 405.
    for body in [
        &b"{"[..],
        b"null",
        b"\0\xff\xfe",
        b"{\"apiVersion\":\"admission.k8s.io/v1\"}",
    ] {
        assert_eq!(webhook.post(body).0, 400, "{body:?}");
    }
    let huge = vec![b' '; 3 * 1024 * 1024 + 1];
    assert_eq!(webhook.post(&huge).0, 413);
    assert_eq!(webhook.request("PUT", b"{}").0, 405);

    // The webhook still answers, the private prefixes are gone, and nginx serves as before.
    assert_eq!(
        webhook.review(
            "u-again",
            &candidate("second", "nginx", "b.example.com", "/", &none)
        )["allowed"],
        true
    );
    let left: Vec<_> = std::fs::read_dir(controller.prefix().join("webhook"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(controller.get("a.example.com", "/").await.backend(), "web");
}

/// The nginx binary, through a script whose `nginx -t` refuses any configuration naming the
/// host `refused-by-nginx.example.com`.
fn refusing_nginx(dir: &Path) -> PathBuf {
    let script = dir.join("nginx");
    let text = concat!(
        "#!/bin/sh\nfor a in \"$@\"; do\n",
        "  if [ \"$a\" = -t ] && grep -q refused-by-nginx.example.com \"$4\"; then\n",
        "    echo \"nginx: [emerg] this test's nginx refuses it\" >&2\n    exit 1\n  fi\n",
        "done\nexec nginx \"$@\"\n",
    );
    std::fs::write(&script, text).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// The nginx binary, through a script that keeps the arguments and the configuration of each
/// `nginx -t` in `log`.
fn recording_nginx(dir: &Path, log: &Path) -> PathBuf {
    let script = dir.join("nginx");
    std::fs::create_dir_all(log).unwrap();
    let text = format!(
        "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = -t ]; then\n    n=$(date +%s%N)\n    \
         printf '%s\\n' \"$@\" > '{log}'/args-$n\n    cp \"$4\" '{log}'/conf-$n\n  fi\ndone\n\
         exec nginx \"$@\"\n",
        log = log.display()
    );
    std::fs::write(&script, text).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_reviews_reach_nginx_only_as_arguments() {
    if support::ran_elsewhere() || tools_missing() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("log");
    let nginx = recording_nginx(scratch.path(), &log);
    let (webhook, args) = Webhook::new(&[format!("--nginx-binary={}", nginx.display())]);
    let (controller, _backends) = start(&args).await;
    // A "library" uploaded in the request (CVE-2025-1974 left one in nginx's client body
    // buffer) and directives pointing at it through /proc.
    let upload = "\x7fELF".repeat(200_000);
    let annotations = [
        (
            "auth-url",
            "http://x/#;\n}}}\nssl_engine /proc/self/fd/3;\n#",
        ),
        (
            "auth-tls-match-cn",
            "CN=abc #(\n){}\n }}}\nssl_engine ../../../../proc/1/fd/4;#", // check-paths: ignore
        ),
        (
            "mirror-target",
            "http://x/$request_uri;\n}\nload_module /proc/self/fd/5;#",
        ),
        ("configuration-snippet", "include /etc/passwd;"),
        (
            "permanent-redirect",
            "https://x.com;\n}\ninclude /etc/shadow;\n#",
        ),
        ("rewrite-target", "/$1\"; } location /x { return 200 $(id)"),
        ("proxy-body-size", "1m; ssl_engine x"),
        ("upload", upload.as_str()),
    ];
    let mut n = 0;
    for (annotation, value) in annotations {
        let key = format!("nginx.ingress.kubernetes.io/{annotation}");
        let ingress = candidate(
            "evil",
            "nginx",
            "e.example.com",
            "/",
            &json!({ key: value }),
        );
        let response = webhook.review(&format!("u-{n}"), &ingress);
        n += 1;
        assert_eq!(response["allowed"], false, "{annotation}: {response}");
        assert!(
            message(&response).contains(annotation),
            "{annotation}: {response}"
        );
    }
    for (host, path) in [
        ("e.example.com;\nssl_engine /tmp/x.so", "/"),
        ("e.example.com", "/x;\n}\nload_module /tmp/x.so;#"),
        ("e.example.com", "/a\"; include /etc/passwd; #"),
        ("e.example.com", "/$(id)"),
        ("e.example.com", "/é"),
    ] {
        let response = webhook.review(
            &format!("u-{n}"),
            &candidate("evil", "nginx", host, path, &json!({})),
        );
        n += 1;
        if response["allowed"] == false {
            assert!(!message(&response).is_empty(), "{host} {path}: {response}");
        }
    }
    // A benign review runs nginx -t; every nginx -t the webhook ran read a configuration of
    // its private prefix, with only the renderer's directives.
    let ok = webhook.review(
        "u-ok",
        &candidate("fine", "nginx", "f.example.com", "/ok", &json!({})),
    );
    assert_eq!(ok["allowed"], true, "{ok}");
    let private = controller.prefix().join("webhook");
    let mut checked = 0;
    for entry in std::fs::read_dir(&log).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stamp) = name.strip_prefix("args-") else {
            continue;
        };
        let args = std::fs::read_to_string(&path).unwrap();
        let args: Vec<&str> = args.lines().collect();
        let prefix = Path::new(args[1]);
        if !prefix.starts_with(&private) {
            continue; // the controller's own validation of its syncs
        }
        assert_eq!(args.len(), 8, "{args:?}");
        assert_eq!(args[3], prefix.join("nginx.conf").to_str().unwrap());
        assert_eq!(&args[4..], ["-e", "stderr", "-t", "-q"]);
        let text = std::fs::read_to_string(log.join(format!("conf-{stamp}"))).unwrap();
        let tree = nginx_conf::parse(text.as_bytes()).unwrap();
        let mut stack = vec![&tree];
        while let Some(block) = stack.pop() {
            for directive in &block.directives {
                let name = String::from_utf8_lossy(&directive.name.value()).into_owned();
                assert!(!matches!(name.as_str(), "include" | "ssl_engine"), "{name}");
                if name == "load_module" {
                    let arg = directive.arg_words().next().unwrap().value().into_owned();
                    assert!(arg.starts_with(b"/usr/lib/nginx/modules/"), "{arg:?}");
                }
                if let nginx_conf::End::Block(inner) = &directive.end {
                    stack.push(inner);
                }
            }
        }
        for marker in ["/etc/passwd", "/etc/shadow", "/proc/", "x.so", "ELF"] {
            assert!(
                !text.contains(marker),
                "{marker} in the configuration nginx -t read"
            );
        }
        checked += 1;
    }
    assert!(checked >= 1, "no nginx -t of the webhook recorded");
    assert!(std::fs::read_dir(&private).unwrap().next().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_certificate_serves_the_next_connection() {
    if support::ran_elsewhere() || tools_missing() {
        return;
    }
    let (mut webhook, args) = Webhook::new(&[]);
    let (_controller, _backends) = start(&args).await;
    let review = candidate("second", "nginx", "b.example.com", "/", &json!({}));
    assert_eq!(webhook.review("u-1", &review)["allowed"], true);
    // cert-manager renews; the kubelet swaps the mounted files.
    let (crt, key) = certificate(webhook.dir.path(), "second");
    for (from, to) in [(&key, "key"), (&crt, "cert")] {
        let tmp = webhook.dir.path().join(format!("{to}.tmp"));
        std::fs::copy(from, &tmp).unwrap();
        std::fs::rename(&tmp, webhook.dir.path().join(to)).unwrap();
    }
    let old_ca = std::mem::replace(&mut webhook.ca, crt);
    assert_eq!(webhook.review("u-2", &review)["allowed"], true);
    // The old certificate no longer verifies the webhook.
    let stale = Webhook {
        port: webhook.port,
        ca: old_ca,
        dir: tempfile::tempdir().unwrap(),
    };
    assert_eq!(stale.post(b"{}").0, 0);
}
