//! ingress-nginx's TLS defaults on the TLS port, end to end with curl and `openssl s_client`:
//! HTTP/2 negotiated, TLS 1.3 accepted (nginx 1.22 leaves it out unless `ssl_protocols` names it),
//! TLS 1.1 refused.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::process::{Command, Output, Stdio};

use support::{Backends, CLASS, Controller, eventually, ingress, service};

const HOST: &str = "tls.example.com";

/// The Secret `e2e/tls` of the fixture certificate.
fn tls_secret() -> String {
    support::tls_secret(
        "e2e",
        "tls",
        &support::fixture("tls.crt"),
        &support::fixture("tls.key"),
    )
}

/// `curl --http2` to `HOST`: the HTTP version and the status.
fn curl_http2(port: u16) -> String {
    let ca = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls.crt");
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "--http2", "--max-time", "10"])
        .args(["--cacert", ca, "-w", "%{http_version} %{http_code}"])
        .arg("--resolve")
        .arg(format!("{HOST}:{port}:127.0.0.1"))
        .arg(format!("https://{HOST}:{port}/"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A handshake with `openssl s_client` and `args`.
fn s_client(port: u16, args: &[&str]) -> Output {
    Command::new("openssl")
        .args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
        .args(["-servername", HOST])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_and_tls_1_3_accepted_tls_1_1_refused() {
    if support::ran_elsewhere() {
        return;
    }
    for (tool, version) in [("curl", "--version"), ("openssl", "version")] {
        if Command::new(tool).arg(version).output().is_err() {
            println!("skipped: {tool}");
            return;
        }
    }
    let backends = Backends::start(&["web"]).await;
    let mut m = String::from(CLASS);
    m.push_str(&service("e2e", "web", &[backends.port("web")]));
    m.push_str(&tls_secret());
    m.push_str(
        &ingress("e2e", "web", HOST, "", None, &[("Prefix", "/", "web")]).replace(
            "  rules:\n",
            &format!("  tls: [{{hosts: ['{HOST}'], secretName: tls}}]\n  rules:\n"),
        ),
    );
    let controller = Controller::start(&m).await;
    let port = controller.https;
    eventually(
        "HTTP/2 over TLS",
        || async move { curl_http2(port) == "2 200" },
    )
    .await;

    let tls13 = s_client(port, &["-tls1_3"]);
    let text = String::from_utf8_lossy(&tls13.stdout);
    assert!(tls13.status.success(), "{text}");
    assert!(text.contains("TLSv1.3"), "{text}");

    // The client allows TLS 1.1 (OpenSSL 3 refuses it below security level 0): nginx must not.
    let tls11 = s_client(port, &["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]);
    assert!(
        !tls11.status.success(),
        "{}",
        String::from_utf8_lossy(&tls11.stdout)
    );
}
