//! A drop-in for ingress-nginx: the controller container of ingress-nginx's own deploy manifest
//! (its `args` and `env`, verbatim), with its IngressClass, its LoadBalancer Service and a
//! ConfigMap that sets the keys operators set most, in manifests mode. It serves with the
//! ConfigMap's settings in effect, publishes the Service's address as Ingress status, answers
//! the webhook on :8443 and `/healthz` and `/metrics` on 10254, and names no flag as
//! unimplemented.
//!
//! The ports are ingress-nginx's (80, 443, 8443, 10254): they are free inside the test's
//! private network namespace ([`support::ran_elsewhere`]). The webhook's certificate paths
//! (`/usr/local/certificates/cert|key`) exist only for the controller: it runs in a private
//! mount namespace (`unshare --mount`) where a temporary directory is bind-mounted on
//! `/usr/local`, so the host's `/usr/local` is neither read nor written.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use support::{Backends, eventually, ingress, service, tls_secret, with_tls};

/// The controller container's `args` in ingress-nginx's deploy manifest
/// (kubernetes/ingress-nginx, `deploy/static/provider/cloud/deploy.yaml`, controller v1.15.1),
/// verbatim. The first is the program the image's entrypoint runs.
const ARGS: &[&str] = &[
    "/nginx-ingress-controller",
    "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
    "--election-id=ingress-nginx-leader",
    "--controller-class=k8s.io/ingress-nginx",
    "--ingress-class=nginx",
    "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
    "--validating-webhook=:8443",
    "--validating-webhook-certificate=/usr/local/certificates/cert",
    "--validating-webhook-key=/usr/local/certificates/key",
];

/// Where an environment variable of the container takes its value from.
enum Source {
    /// `valueFrom.fieldRef.fieldPath`: a field of the pod.
    Field(&'static str),
    /// `value`.
    Value(&'static str),
}

/// The same container's `env`, verbatim (same manifest). `LD_PRELOAD` names a library of
/// ingress-nginx's image that does not exist here: the dynamic loader says so on stderr and
/// goes on, as it would in our image.
const ENV: &[(&str, Source)] = &[
    ("POD_NAME", Source::Field("metadata.name")),
    ("POD_NAMESPACE", Source::Field("metadata.namespace")),
    ("LD_PRELOAD", Source::Value("/usr/local/lib/libmimalloc.so")),
];

/// The pod the kubelet would run: the Deployment's namespace, a ReplicaSet pod's name.
const POD: &[(&str, &str)] = &[
    ("metadata.name", "ingress-nginx-controller-6f9d7c8b5-x2k4q"),
    ("metadata.namespace", "ingress-nginx"),
];

/// ingress-nginx's IngressClass, verbatim from the same manifest.
const INGRESS_CLASS: &str = "---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  labels:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/part-of: ingress-nginx
    app.kubernetes.io/version: 1.15.1
  name: nginx
spec:
  controller: k8s.io/ingress-nginx
";

/// ingress-nginx's controller Service, verbatim from the same manifest, with the `status`
/// a cloud's load balancer would give it.
const CONTROLLER_SERVICE: &str = "---
apiVersion: v1
kind: Service
metadata:
  labels:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
    app.kubernetes.io/part-of: ingress-nginx
    app.kubernetes.io/version: 1.15.1
  name: ingress-nginx-controller
  namespace: ingress-nginx
spec:
  externalTrafficPolicy: Local
  ipFamilies:
  - IPv4
  ipFamilyPolicy: SingleStack
  ports:
  - appProtocol: http
    name: http
    port: 80
    protocol: TCP
    targetPort: http
  - appProtocol: https
    name: https
    port: 443
    protocol: TCP
    targetPort: https
  selector:
    app.kubernetes.io/component: controller
    app.kubernetes.io/instance: ingress-nginx
    app.kubernetes.io/name: ingress-nginx
  type: LoadBalancer
status:
  loadBalancer:
    ingress:
    - ip: 203.0.113.80
";

/// The address of [`CONTROLLER_SERVICE`]'s load balancer.
const LOAD_BALANCER: &str = "203.0.113.80";

/// The ConfigMap `--configmap` names, every key away from its default.
const CONFIGMAP: &str = "---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ingress-nginx-controller
  namespace: ingress-nginx
data:
  proxy-body-size: 8k
  proxy-connect-timeout: '7'
  proxy-read-timeout: '33'
  proxy-send-timeout: '34'
  proxy-buffer-size: 16k
  use-http2: 'false'
  ssl-protocols: TLSv1.3
  ssl-ciphers: ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384
  hsts: 'false'
  hsts-max-age: '600'
  hsts-include-subdomains: 'false'
  hsts-preload: 'true'
  ssl-redirect: 'false'
  use-forwarded-headers: 'true'
  forwarded-for-header: X-Client-Address
  compute-full-forwarded-for: 'true'
  enable-real-ip: 'true'
  proxy-real-ip-cidr: 127.0.0.1/32
  log-format-upstream: 'dropin client=$remote_addr scheme=$pass_access_scheme xff=[$full_x_forwarded_for] $status $request_uri'
  worker-processes: '2'
  max-worker-connections: '2048'
  keep-alive: '10'
  keep-alive-requests: '50'
  upstream-keepalive-connections: '16'
  upstream-keepalive-time: 30m
  upstream-keepalive-timeout: '30'
  upstream-keepalive-requests: '500'
  allow-snippet-annotations: 'false'
";

/// The host of the test's Ingress, which its certificate names (tests/fixtures).
const HOST: &str = "tls.example.com";

/// The container's environment as the kubelet gives it: each `fieldRef` resolved on [`POD`].
fn environment() -> Vec<(String, String)> {
    ENV.iter()
        .map(|(name, source)| {
            let value = match source {
                Source::Value(value) => *value,
                Source::Field(path) => POD.iter().find(|(p, _)| p == path).unwrap().1,
            };
            ((*name).to_owned(), value.to_owned())
        })
        .collect()
}

/// `arg` with each `$(NAME)` of a variable in `env` replaced by its value, as the kubelet
/// expands a container's args.
fn expand(arg: &str, env: &[(String, String)]) -> String {
    env.iter().fold(arg.to_owned(), |arg, (name, value)| {
        arg.replace(&format!("$({name})"), value)
    })
}

/// The controller of the manifest, stopped (and its nginx) on drop.
struct Pod {
    child: Child,
    dir: tempfile::TempDir,
}

impl Pod {
    fn manifests(&self) -> PathBuf {
        self.dir.path().join("manifests")
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stdout")).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr")).unwrap_or_default()
    }

    /// Writes `objects` and the webhook's certificate, and starts the controller with the
    /// manifest's args and environment, in a private mount namespace.
    fn start(objects: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("manifests")).unwrap();
        std::fs::write(dir.path().join("manifests/objects.yaml"), objects).unwrap();
        // What the Deployment mounts at /usr/local/certificates/ (the webhook's Secret).
        let local = dir.path().join("usr-local");
        std::fs::create_dir_all(local.join("certificates")).unwrap();
        certificate(&local.join("certificates"));

        let env = environment();
        let mut args: Vec<String> = ARGS.iter().map(|a| expand(a, &env)).collect();
        // What the test adds: the objects (manifests mode instead of the API server) and
        // nginx's prefix (the default, /var/lib/ingress-controller, is the host's).
        args.extend([
            "--manifests".to_owned(),
            dir.path().join("manifests").display().to_string(),
            "--prefix".to_owned(),
            dir.path().join("nginx").display().to_string(),
        ]);
        // Bind-mount `local` on /usr/local in a mount namespace of the controller's own, then
        // run our binary under the manifest's program name (args[0]).
        let child = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--", "bash", "-c"])
            .arg(r#"mount --bind "$1" /usr/local && exec -a "$3" "$2" "${@:4}""#)
            .arg("bash")
            .arg(&local)
            .arg(env!("CARGO_BIN_EXE_ingress-controller"))
            .args(&args)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.path().join("stdout")).unwrap())
            .stderr(std::fs::File::create(dir.path().join("stderr")).unwrap())
            .spawn()
            .unwrap();
        Self { child, dir }
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-s", "TERM", &pid]).status();
        for _ in 0..200 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("controller stderr:\n{}", self.stderr());
        }
    }
}

/// A self-signed certificate for 127.0.0.1 at `dir/cert` and `dir/key`.
fn certificate(dir: &Path) {
    let status = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:P-256", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=ingress-nginx-controller-admission"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(dir.join("key"))
        .arg("-out")
        .arg(dir.join("cert"))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "openssl req failed");
}

/// `curl -sS ARGS`.
fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .output()
        .unwrap()
}

/// A handshake with the TLS port by `openssl s_client` and `args`.
fn s_client(args: &[&str]) -> Output {
    Command::new("openssl")
        .args(["s_client", "-connect", "127.0.0.1:443", "-servername", HOST])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn tools_missing() -> bool {
    for (tool, version) in [
        ("curl", "--version"),
        ("openssl", "version"),
        ("unshare", "--version"),
        ("bash", "--version"),
    ] {
        if Command::new(tool).arg(version).output().is_err() {
            println!("skipped: {tool}");
            return true;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_nginx_deploy_manifest_runs_as_it_is() {
    if support::ran_elsewhere() || tools_missing() {
        return;
    }
    let backends = Backends::start(&["web"]).await;
    let mut objects = String::from(INGRESS_CLASS);
    objects.push_str(CONTROLLER_SERVICE);
    objects.push_str(CONFIGMAP);
    objects.push_str(&service("demo", "web", &[backends.port("web")]));
    objects.push_str(&tls_secret(
        "demo",
        "tls",
        &support::fixture("tls.crt"),
        &support::fixture("tls.key"),
    ));
    let web = ingress("demo", "web", HOST, "", None, &[("Prefix", "/", "web")]);
    objects.push_str(&with_tls(&web, HOST, "tls"));
    let pod = Pod::start(&objects);

    // ingress-nginx's ports: /healthz and /metrics on 10254, the site on 80.
    eventually("nginx serving", || async {
        support::get(10254, "x", "/healthz", &[])
            .await
            .is_some_and(|r| r.status == 200)
    })
    .await;
    let metrics = support::get(10254, "x", "/metrics", &[]).await.unwrap();
    assert_eq!(metrics.status, 200);
    assert!(metrics.body.contains("# TYPE"), "{}", metrics.body);
    let answer = support::get(80, HOST, "/first", &[]).await.unwrap();
    assert_eq!((answer.status, answer.body.as_str()), (200, "web /first"));

    // proxy-body-size 8k: a body above it is refused by nginx, one below it passes.
    let small = "x".repeat(4 * 1024);
    let large = "x".repeat(16 * 1024);
    let post = |body: String| async move {
        support::request(80, "POST", HOST, "/upload", &[], &body)
            .await
            .unwrap()
            .status
    };
    assert_eq!(post(small).await, 200);
    assert_eq!(post(large).await, 413);

    // ssl-redirect false: plain HTTP to a TLS host is served, not redirected (checked above).
    // hsts false: no Strict-Transport-Security on TLS; use-http2 false: HTTP/1.1 on TLS.
    let resolve = format!("{HOST}:443:127.0.0.1");
    let url = format!("https://{HOST}/tls");
    let tls = curl(&[
        "-k",
        "-i",
        "--http2",
        "--resolve",
        &resolve,
        "-w",
        "\n%{http_version}",
        &url,
    ]);
    let text = String::from_utf8_lossy(&tls.stdout);
    assert!(tls.status.success(), "{text}");
    assert!(text.contains("web /tls"), "{text}");
    assert!(
        !text
            .to_ascii_lowercase()
            .contains("strict-transport-security"),
        "{text}"
    );
    assert!(text.ends_with("\n1.1"), "{text}");

    // ssl-protocols TLSv1.3 alone: TLS 1.2 is refused.
    let tls13 = s_client(&["-tls1_3"]);
    assert!(
        tls13.status.success(),
        "{}",
        String::from_utf8_lossy(&tls13.stdout)
    );
    let tls12 = s_client(&["-tls1_2"]);
    assert!(
        !tls12.status.success(),
        "{}",
        String::from_utf8_lossy(&tls12.stdout)
    );

    // log-format-upstream, on stdout: the client address from forwarded-for-header (trusted
    // from proxy-real-ip-cidr), the scheme from X-Forwarded-Proto (use-forwarded-headers), and
    // X-Forwarded-For extended with the peer (compute-full-forwarded-for).
    let headers = [
        ("X-Client-Address", "192.0.2.7"),
        ("X-Forwarded-Proto", "https"),
        ("X-Forwarded-For", "198.51.100.1"),
    ];
    let logged = support::get(80, HOST, "/logged?n=1", &headers)
        .await
        .unwrap();
    assert_eq!(logged.status, 200);
    let line = "dropin client=192.0.2.7 scheme=https xff=[198.51.100.1, 127.0.0.1] 200 \
                /logged?n=1";
    eventually("the access log line on stdout", || async {
        pod.stdout().lines().any(|l| l == line)
    })
    .await;

    // The keys whose effect a request does not show, in the configuration nginx runs.
    let conf = std::fs::read_to_string(pod.dir.path().join("nginx/nginx.conf")).unwrap();
    let lines: Vec<&str> = conf.lines().map(str::trim).collect();
    for line in [
        "worker_processes 2;",
        "worker_connections 2048;",
        "proxy_connect_timeout 7s;",
        "proxy_read_timeout 33s;",
        "proxy_send_timeout 34s;",
        "proxy_buffer_size 16k;",
        "keepalive_timeout 10s;",
        "keepalive_requests 50;",
        "keepalive 16;",
        "ssl_protocols TLSv1.3;",
    ] {
        assert!(lines.contains(&line), "no `{line}` in:\n{conf}");
    }

    // --publish-service: the Service's load balancer address as the Ingress's status, kept
    // beside the manifests.
    let status = pod.manifests().join(".status/ingresses/demo/web.yaml");
    eventually("the Ingress status written", || async { status.exists() }).await;
    let text = std::fs::read_to_string(&status).unwrap();
    assert!(text.contains(LOAD_BALANCER), "{text}");

    // The webhook on :8443 with the certificate of /usr/local/certificates/.
    let review = serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1", "operation": "CREATE", "namespace": "demo", "name": "other",
            "kind": {"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"},
            "resource": {"group": "networking.k8s.io", "version": "v1", "resource": "ingresses"},
            "object": {
                "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "other", "namespace": "demo"},
                "spec": {"ingressClassName": "nginx", "rules": [{"host": "other.example.com",
                    "http": {"paths": [{"path": "/", "pathType": "Prefix",
                        "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]},
            },
        },
    });
    let ca = pod.dir.path().join("usr-local/certificates/cert");
    let answer = curl(&[
        "--cacert",
        &ca.display().to_string(),
        "-H",
        "Content-Type: application/json",
        "--data-binary",
        &review.to_string(),
        "https://127.0.0.1:8443/networking/v1/ingresses",
    ]);
    let text = String::from_utf8_lossy(&answer.stdout);
    assert!(answer.status.success(), "{text}");
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["response"]["uid"], "u-1", "{answer}");
    assert_eq!(answer["response"]["allowed"], true, "{answer}");

    // Every flag of the manifest is implemented: none is named as ignored.
    let stderr = pod.stderr();
    assert!(!stderr.contains("is not implemented"), "{stderr}");
    // Every key of the ConfigMap is read and its value taken; only the snippets' switch is
    // named, as ignored.
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("ConfigMap key"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].contains("allow-snippet-annotations"), "{stderr}");

    // The manifest's preStop hook, `/wait-shutdown` (this binary under that name): the
    // controller stops, and it returns once nginx is gone too.
    let mut pod = pod;
    let nginx_pid = std::fs::read_to_string(pod.dir.path().join("nginx/nginx.pid")).unwrap();
    let hook = pod.dir.path().join("wait-shutdown");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ingress-controller"), &hook).unwrap();
    let out = Command::new(&hook)
        .arg("--prefix")
        .arg(pod.dir.path().join("nginx"))
        .arg(pod.child.id().to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(pod.child.wait().unwrap().success());
    let nginx = Path::new("/proc").join(nginx_pid.trim());
    assert!(!nginx.exists(), "nginx {} still runs", nginx_pid.trim());
}
