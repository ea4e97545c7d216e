//! End-to-end harness: small HTTP backends that answer with their name, the controller binary
//! running a real nginx on 127.0.0.1, manifests written to a temporary directory, and a tiny
//! HTTP/1.1 client; all of it in a private network namespace per test ([`netns`]).
#![allow(dead_code, unreachable_pub)]

pub mod gateway_filter_tables;
pub mod gateway_tables;
pub mod netns;

pub use netns::ran_elsewhere;

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Why the end-to-end tests cannot run here, if they cannot.
pub fn missing_prerequisite() -> Option<String> {
    let nginx = Command::new("nginx")
        .arg("-v")
        .stderr(Stdio::null())
        .status();
    if !nginx.is_ok_and(|s| s.success()) {
        return Some("nginx (Debian package nginx)".into());
    }
    if !Path::new("/usr/lib/nginx/modules/ngx_http_lua_module.so").exists() {
        return Some("the nginx Lua module (Debian package libnginx-mod-http-lua)".into());
    }
    None
}

/// A port that was free a moment ago on 127.0.0.1. Ports come from a per-process sequence in
/// 20000..60000 (never the same one twice in a process, unlike the kernel's ephemeral ports,
/// which two tests running at once may both be given after releasing them).
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = 20_000 + (std::process::id() * 97) % 30_000;
    let _ = NEXT.compare_exchange(0, start, Ordering::SeqCst, Ordering::SeqCst);
    loop {
        let candidate = NEXT.fetch_add(1, Ordering::SeqCst);
        let port = u16::try_from(20_000 + candidate % 40_000).unwrap();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// The address the backends listen on and their EndpointSlices name: [`netns::BACKEND_IP`], on
/// the loopback interface of the test's private namespace. Not 127.0.0.1: cluster-state refuses
/// loopback endpoints, as the API server does (issue 28).
pub fn backend_ip() -> IpAddr {
    assert!(
        netns::inside(),
        "backends run only inside the test's network namespace (begin with ran_elsewhere)"
    );
    netns::BACKEND_IP
}

/// HTTP backends, one listener per name, each answering `NAME URI` with `x-backend: NAME`.
/// As the conformance suite's echo backend: `?delay=DURATION` (GEP-2257) waits that long
/// first, and `X-Echo-Set-Header: NAME:VALUE,…` adds those response headers; with
/// `X-Echo-Request-Headers` the body lists the request's headers after the first line, one
/// `name: value` a line. Every request any of them gets is kept in `seen`, in arrival order.
pub struct Backends {
    pub ports: Vec<(String, u16)>,
    pub seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// A request a backend got: the backend's name, the request target, and the headers
/// (lower-case names).
#[derive(Clone, Debug)]
pub struct Seen {
    pub backend: String,
    pub uri: String,
    pub headers: Vec<(String, String)>,
}

impl Drop for Backends {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Backends {
    pub async fn start(names: &[&str]) -> Self {
        let mut ports = Vec::new();
        let mut tasks = Vec::new();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        for name in names {
            let log = std::sync::Arc::clone(&seen);
            let listener = TcpListener::bind((backend_ip(), 0)).await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let name = (*name).to_owned();
            ports.push((name.clone(), port));
            let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
                let name = name.clone();
                let log = std::sync::Arc::clone(&log);
                async move {
                    let uri = request.uri().to_string();
                    log.lock().unwrap().push(Seen {
                        backend: name.clone(),
                        uri: uri.clone(),
                        headers: request
                            .headers()
                            .iter()
                            .map(|(n, v)| {
                                (n.to_string(), String::from_utf8_lossy(v.as_bytes()).into())
                            })
                            .collect(),
                    });
                    if request.uri().path().starts_with("/slow") {
                        tokio::time::sleep(Duration::from_secs(3)).await;
                    }
                    let delay = request.uri().query().into_iter().flat_map(|q| q.split('&'));
                    let delay = delay
                        .filter_map(|pair| pair.strip_prefix("delay="))
                        .find_map(ingress_controller::gateway::timeouts::duration_ms);
                    if let Some(ms) = delay {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                    }
                    let mut body = format!("{name} {uri}");
                    let headers = request.headers();
                    if headers.contains_key("x-echo-request-headers") {
                        for (header, value) in headers {
                            let value = String::from_utf8_lossy(value.as_bytes());
                            let _ = write!(body, "\n{header}: {value}");
                        }
                    }
                    let mut response = axum::response::Response::new(axum::body::Body::from(body));
                    let out = response.headers_mut();
                    out.insert("x-backend", name.parse().unwrap());
                    out.insert(
                        "content-type",
                        axum::http::HeaderValue::from_static("text/plain; charset=utf-8"),
                    );
                    let set = headers.get_all("x-echo-set-header").iter();
                    let set = set
                        .filter_map(|v| v.to_str().ok())
                        .flat_map(|v| v.split(','));
                    for (header, value) in set.filter_map(|pair| pair.split_once(':')) {
                        if let (Ok(header), Ok(value)) = (
                            axum::http::HeaderName::try_from(header.trim()),
                            axum::http::HeaderValue::try_from(value.trim()),
                        ) {
                            out.append(header, value);
                        }
                    }
                    response
                }
            });
            tasks.push(tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            }));
        }
        Self { ports, seen, tasks }
    }

    /// Stops the listener of backend `name` (connections already open finish).
    pub fn stop(&mut self, name: &str) {
        if let Some(i) = self.ports.iter().position(|(n, _)| n == name) {
            self.tasks[i].abort();
        }
    }

    pub fn port(&self, name: &str) -> u16 {
        self.ports.iter().find(|(n, _)| n == name).unwrap().1
    }

    /// A Service `NAME` (port 80) and an EndpointSlice pointing at each backend in `ns`.
    pub fn manifests(&self, ns: &str) -> String {
        let mut out = String::new();
        for (name, port) in &self.ports {
            out.push_str(&service(ns, name, &[*port]));
        }
        out
    }
}

/// A Service `name` in `ns` with port 80, and an EndpointSlice with [`backend_ip`] on `ports`
/// (one endpoint per port, all in one slice: each port as its own slice).
pub fn service(ns: &str, name: &str, ports: &[u16]) -> String {
    let mut out = format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         spec: {{ports: [{{name: http, port: 80}}]}}\n"
    );
    for (i, port) in ports.iter().enumerate() {
        let _ = write!(
            out,
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: \
             {name}-{i}, namespace: {ns}, labels: {{kubernetes.io/service-name: {name}}}}}\n\
             addressType: IPv4\nports: [{{name: http, port: {port}}}]\n\
             endpoints: [{{addresses: ['{}']}}]\n",
            backend_ip()
        );
    }
    out
}

pub const CLASS: &str = "---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\n\
                         metadata: {name: nginx}\nspec: {controller: k8s.io/ingress-nginx}\n";

/// The controller binary running nginx; stopped (and nginx with it) on drop.
pub struct Controller {
    child: Child,
    /// Its command-line arguments and environment, for [`Controller::restart`].
    args: Vec<String>,
    env: Vec<(String, String)>,
    pub dir: tempfile::TempDir,
    manifests: PathBuf,
    pub http: u16,
    pub https: u16,
    pub metrics: u16,
}

impl Controller {
    /// The manifests directory (empty for a controller on an API server).
    pub fn manifests_dir(&self) -> PathBuf {
        self.manifests.clone()
    }

    pub fn prefix(&self) -> PathBuf {
        self.dir.path().join("nginx")
    }

    /// Starts the controller on `manifests` (written as one file) and waits until nginx serves.
    pub async fn start(manifests: &str) -> Self {
        Self::start_with(manifests, &[]).await
    }

    /// As [`Controller::start`], with extra command-line arguments.
    pub async fn start_with(manifests: &str, extra: &[String]) -> Self {
        Self::start_as(manifests, None, extra).await
    }

    /// As [`Controller::start_with`], as the pod `pod` (its `POD_NAME`: the replica's
    /// identity) when given.
    pub async fn start_as(manifests: &str, pod: Option<&str>, extra: &[String]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("manifests")).unwrap();
        std::fs::write(dir.path().join("manifests/objects.yaml"), manifests).unwrap();
        let manifests_dir = dir.path().join("manifests");
        Self::launch(dir, &manifests_dir, pod, extra).await
    }

    /// Another replica, the pod `pod`, on the same manifests directory as `other`.
    pub async fn start_beside(other: &Controller, pod: &str, extra: &[String]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::launch(dir, &other.manifests_dir(), Some(pod), extra).await
    }

    /// A controller reading the API server of `kubeconfig` (no manifests), as the pod
    /// `ingress-nginx/POD`, with extra command-line arguments.
    pub async fn start_api(kubeconfig: &Path, pod: &str, extra: &[String]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let source = ["--kubeconfig".to_owned(), kubeconfig.display().to_string()];
        let env = [("POD_NAME", pod), ("POD_NAMESPACE", "ingress-nginx")];
        Self::launch_on(dir, &source, PathBuf::new(), &env, extra).await
    }

    async fn launch(
        dir: tempfile::TempDir,
        manifests: &Path,
        pod: Option<&str>,
        extra: &[String],
    ) -> Self {
        let source = ["--manifests".to_owned(), manifests.display().to_string()];
        let env: Vec<(&str, &str)> = pod.map(|p| ("POD_NAME", p)).into_iter().collect();
        Self::launch_on(dir, &source, manifests.to_owned(), &env, extra).await
    }

    async fn launch_on(
        dir: tempfile::TempDir,
        source: &[String],
        manifests: PathBuf,
        env: &[(&str, &str)],
        extra: &[String],
    ) -> Self {
        let (http, https, metrics) = (free_port(), free_port(), free_port());
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut args = vec!["run".to_owned()];
        args.extend_from_slice(source);
        args.extend([
            "--prefix".to_owned(),
            dir.path().join("nginx").display().to_string(),
        ]);
        for [flag, value] in [
            ["--listen-address", "127.0.0.1"],
            ["--workers", "2"],
            ["--http-port", &http.to_string()],
            ["--https-port", &https.to_string()],
            ["--healthz-host", "127.0.0.1"],
            ["--healthz-port", &metrics.to_string()],
            ["--poll-ms", "50"],
            ["--debounce-ms", "100"],
        ] {
            args.extend([flag.to_owned(), value.to_owned()]);
        }
        // ingress-nginx's families, which the tests read (off by default, as there).
        args.push("--enable-metrics=true".to_owned());
        args.extend_from_slice(extra);
        let controller = Self {
            child: spawn(&args, &env),
            args,
            env,
            dir,
            manifests,
            http,
            https,
            metrics,
        };
        eventually("nginx serving", || async {
            get(controller.metrics, "x", "/healthz", &[])
                .await
                .is_some_and(|r| r.status == 200)
        })
        .await;
        controller
    }

    /// Replaces the manifests (atomically) and waits until the controller has applied them.
    pub async fn update(&self, manifests: &str) {
        let before = self
            .metric("ingress_controller_backend_updates_total")
            .await
            + self.loads().await;
        let tmp = self.dir.path().join("objects.yaml.tmp");
        std::fs::write(&tmp, manifests).unwrap();
        std::fs::rename(&tmp, self.manifests_dir().join("objects.yaml")).unwrap();
        eventually("the update applied", || async {
            self.metric("ingress_controller_backend_updates_total")
                .await
                + self.loads().await
                > before
        })
        .await;
    }

    /// Configurations nginx was given: loaded (ingress-nginx's `success`) or not (`errors`).
    pub async fn loads(&self) -> f64 {
        self.metric("nginx_ingress_controller_success").await
            + self.metric("nginx_ingress_controller_errors").await
    }

    /// The sum of a metric's samples (all label values).
    pub async fn metric(&self, name: &str) -> f64 {
        let Some(response) = get(self.metrics, "x", "/metrics", &[]).await else {
            return 0.0;
        };
        response
            .body
            .lines()
            .filter(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    pub async fn get(&self, host: &str, path: &str) -> Response {
        self.get_with(host, path, &[]).await
    }

    pub async fn get_with(&self, host: &str, path: &str, headers: &[(&str, &str)]) -> Response {
        get(self.http, host, path, headers)
            .await
            .unwrap_or_else(|| panic!("no answer for {host}{path}"))
    }
}

impl Controller {
    /// Kills the controller process (SIGKILL: a crash; its nginx is cleaned up on drop).
    pub fn crash(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// After [`Controller::crash`]: a new controller process with the same command line (same
    /// objects, prefix and ports), not waited for.
    pub fn restart(&mut self) {
        self.child = spawn(&self.args, &self.env);
    }
}

/// The controller binary with `args` and the environment variables `env`.
fn spawn(args: &[String], env: &[(String, String)]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ingress-controller"))
        .args(args)
        .env("RUST_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

impl Controller {
    /// Stops the controller as Kubernetes does (SIGTERM), waiting up to 10 s before SIGKILL.
    pub fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-s", "TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..200 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.stop();
        // Should the controller have failed to stop nginx, end its process group.
        if let Ok(pid) = std::fs::read_to_string(self.prefix().join("nginx.pid")) {
            let _ = Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{}", pid.trim())])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// A self-signed certificate (EC P-256, 2 days) with organisation `org`, common name `cn` and
/// the subject alternative name `san` (`DNS:host` or `IP:address`), made by `openssl req` and
/// written to `dir/ORG.crt` and `dir/ORG.key`.
pub fn self_signed(dir: &Path, org: &str, cn: &str, san: &str) -> (PathBuf, PathBuf) {
    let (crt, key) = (
        dir.join(format!("{org}.crt")),
        dir.join(format!("{org}.key")),
    );
    let status = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args([
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/O={org}/CN={cn}"),
        ])
        .args(["-addext", &format!("subjectAltName={san}")])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&crt)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "openssl req failed");
    (crt, key)
}

/// Polls `check` every 25 ms until it holds; panics after 30 s.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..1200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The name of the backend that answered, or `-` when nginx answered itself.
    pub fn backend(&self) -> &str {
        self.header("x-backend").unwrap_or("-")
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port`; `None` when the connection fails.
pub async fn get(port: u16, host: &str, path: &str, headers: &[(&str, &str)]) -> Option<Response> {
    request(port, "GET", host, path, headers, "").await
}

pub async fn request(
    port: u16,
    method: &str,
    host: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Option<Response> {
    let to = SocketAddr::from(([127, 0, 0, 1], port));
    request_to(to, method, host, path, headers, body).await
}

/// One HTTP/1.1 request to `to`; `None` when the connection fails.
pub async fn request_to(
    to: SocketAddr,
    method: &str,
    host: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Option<Response> {
    let exchange = async {
        let mut stream = TcpStream::connect(to).await.ok()?;
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
        for (name, value) in headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        let _ = write!(head, "Content-Length: {}\r\n\r\n{body}", body.len());
        stream.write_all(head.as_bytes()).await.ok()?;
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await.ok()?;
        parse(&String::from_utf8_lossy(&reply))
    };
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .ok()
        .flatten()
}

fn parse(reply: &str) -> Option<Response> {
    let (head, body) = reply.split_once("\r\n\r\n")?;
    let mut lines = head.lines();
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        ingress_controller::control::dechunk(body)
    } else {
        body.to_owned()
    };
    Some(Response {
        status,
        headers,
        body,
    })
}

/// An Ingress in `ns` named `name` for `host`, with `paths` of `(pathType, path, service)`,
/// a default backend `default` (if any), and `annotations` as YAML flow entries.
pub fn ingress(
    ns: &str,
    name: &str,
    host: &str,
    annotations: &str,
    default: Option<&str>,
    paths: &[(&str, &str, &str)],
) -> String {
    let mut out = format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  \
         namespace: {ns}\n  annotations: {{{annotations}}}\nspec:\n  ingressClassName: nginx\n"
    );
    if let Some(default) = default {
        let _ = writeln!(
            out,
            "  defaultBackend: {{service: {{name: {default}, port: {{number: 80}}}}}}"
        );
    }
    let _ = write!(
        out,
        "  rules:\n  - host: '{host}'\n    http:\n      paths:\n"
    );
    for (kind, path, service) in paths {
        let _ = writeln!(
            out,
            "      - {{path: '{path}', pathType: {kind}, backend: {{service: {{name: {service}, \
             port: {{number: 80}}}}}}}}"
        );
    }
    out
}

/// The event files of namespace `ns`, as text (a file being written is a `.yaml.tmp`, then
/// renamed: skipped, as is one renamed away while it is read).
pub fn events(manifests: &Path, ns: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(manifests.join(".status/events").join(ns)) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .collect()
}

/// A `kubernetes.io/tls` Secret `name` in `ns` holding the PEM texts `crt` and `key`.
pub fn tls_secret(ns: &str, name: &str, crt: &str, key: &str) -> String {
    let indent = |pem: &str| {
        pem.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    };
    format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         type: kubernetes.io/tls\nstringData:\n  tls.crt: |\n{}  tls.key: |\n{}",
        indent(crt),
        indent(key)
    )
}

/// `ingress` (from [`ingress`]) with a `tls` entry for `host` and Secret `secret`.
pub fn with_tls(ingress: &str, host: &str, secret: &str) -> String {
    ingress.replace(
        "  rules:\n",
        &format!("  tls: [{{hosts: ['{host}'], secretName: {secret}}}]\n  rules:\n"),
    )
}

/// A file of `tests/fixtures`, as text.
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// The GatewayClass the Gateway API conformance suite uses.
pub const CONFORMANCE_CLASS: &str = "gateway-conformance";

/// What the conformance suite applies for one test: a GatewayClass of ours named
/// [`CONFORMANCE_CLASS`], the suite's base manifests and the test's `file`, all from
/// `testdata/gateway-api` (Gateway API v1.6.1).
pub fn conformance_manifests(file: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/gateway-api");
    let mut out = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\n\
         metadata: {{name: {CONFORMANCE_CLASS}}}\nspec: {{controllerName: {}}}\n",
        ingress_controller::gateway::DEFAULT_CONTROLLER_NAME
    );
    for relative in ["base/manifests.yaml".to_owned(), format!("tests/{file}")] {
        let text = std::fs::read_to_string(root.join(relative)).unwrap();
        out.push_str("\n---\n");
        out.push_str(&text.replace("{GATEWAY_CLASS_NAME}", CONFORMANCE_CLASS));
    }
    out
}

/// `curl -k` to `https://SNI:PORT/PATH` at `address` with the `Host` header `host` (an
/// address as `sni` sends no server name): the status (0: no answer) and the backend that
/// answered (its `x-backend` header; `-`: nginx).
pub fn https_get_sni(
    address: IpAddr,
    port: u16,
    sni: &str,
    host: &str,
    path: &str,
) -> (u16, String) {
    let out = Command::new("curl")
        .args(["-sk", "--max-time", "10", "-o", "/dev/null", "-D", "-"])
        .args(["-w", "%{http_code}"])
        .arg("--resolve")
        .arg(format!("{sni}:{port}:{address}"))
        .arg("-H")
        .arg(format!("Host: {host}"))
        .arg(format!("https://{sni}:{port}{path}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let status = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    let backend = text
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("x-backend")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| "-".to_owned());
    (status, backend)
}
