//! Scale measurement for BENCHMARKS.md: 5,000 Ingresses with 4 paths each (20,000 paths) on
//! 5,000 hosts and 500 Services; times the model, the rendering, `nginx -t`, and the time from
//! an Ingress change to nginx serving it (render, validate, reload, first answer).
//!
//! The `gateway` mode adds as many HTTPRoutes (issue #32) on one Gateway's HTTP listener, each
//! with a host of its own and the rules Prefix `/`, Prefix `/api`, Exact `/api/v1/status` and
//! Prefix `/static`; every fourth route also sends `/api` with header `x-canary: yes`
//! elsewhere (the Lua dispatcher's case), every third splits `/static` over two Services by
//! weight. Route `local` beside them serves two local backends that answer with their name,
//! on this host's address towards its default route (EndpointSlices refuse loopback;
//! `SCALE_BACKEND_IP` picks another). The mode then times three changes to the first correct
//! answer: a new route, a changed path (both reload nginx) and a weight-only change (a
//! backend table POST, no reload). `own` serves the Gateway on an address of its own from
//! `127.0.1.0/24`, as `--gateway-addresses` does; without it the Gateway shares the
//! Ingresses' listen address. Both modes print the peak RSS of this process (the
//! controller's side: objects, model, rendering) and the memory of nginx's master and
//! workers, after the start and after the last reload once the old workers are gone.
//!
//! ```text
//! cargo run --release -p ingress-controller --example scale [-- INGRESSES]
//! cargo run --release -p ingress-controller --example scale -- gateway [COUNT] [own]
//! ```
//!
//! `SCALE_WRITE_CONFIG=FILE` also writes the rendered configuration there. Needs nginx and
//! libnginx-mod-http-lua; runs nginx on free 127.0.0.1 ports in a temporary
//! prefix and stops it at the end.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use ingress_controller::class::Selection;
use ingress_controller::gateway::plan::Served;
use ingress_controller::nginx::Nginx;
use ingress_controller::objects::Objects;
use ingress_controller::{backends, control, model, render};

/// nginx's `worker_processes`.
const WORKERS: usize = 2;

/// The address pool of the `own` mode.
const POOL: &str = "127.0.1.0/24";

/// The Ingress-only cluster: 500 Services, `ingresses` Ingresses, then `extra`.
fn ingress_yaml(ingresses: usize, extra: &str) -> String {
    let mut yaml = String::from(
        "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: nginx}\n\
         spec: {controller: k8s.io/ingress-nginx}\n",
    );
    for s in 0..500 {
        let _ = write!(
            yaml,
            "---\napiVersion: v1\nkind: Service\nmetadata: {{name: svc{s}, namespace: scale}}\n\
             spec: {{ports: [{{name: http, port: 80}}]}}\n---\napiVersion: discovery.k8s.io/v1\n\
             kind: EndpointSlice\nmetadata: {{name: svc{s}-1, namespace: scale, labels: \
             {{kubernetes.io/service-name: svc{s}}}}}\naddressType: IPv4\n\
             ports: [{{name: http, port: 8080}}]\nendpoints: [{{addresses: [10.1.{}.{}, 10.2.{}.{}]}}]\n",
            s / 250,
            s % 250,
            s / 250,
            s % 250
        );
    }
    for i in 0..ingresses {
        let svc = |k: usize| {
            format!(
                "{{service: {{name: svc{}, port: {{number: 80}}}}}}",
                (i + k) % 500
            )
        };
        let _ = write!(
            yaml,
            "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: ing{i}\n  \
             namespace: scale\n  annotations: {{nginx.ingress.kubernetes.io/proxy-read-timeout: \
             '30'}}\nspec:\n  ingressClassName: nginx\n  rules:\n  - host: app{i}.example.com\n    \
             http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {}}}\n      \
             - {{path: /api, pathType: Prefix, backend: {}}}\n      - {{path: /api/v1/status, \
             pathType: Exact, backend: {}}}\n      - {{path: /static, pathType: Prefix, backend: {}}}\n",
            svc(0),
            svc(1),
            svc(2),
            svc(3)
        );
    }
    yaml.push_str(extra);
    yaml
}

fn cluster(ingresses: usize, extra: &str) -> Result<Objects, String> {
    let mut objects = Objects::default();
    objects.add_yaml(&ingress_yaml(ingresses, extra))?;
    Ok(objects)
}

/// The Gateway API side of the `gateway` mode: our GatewayClass, Gateway `scale/gw` with one
/// HTTP listener on port 80, `routes` HTTPRoutes over the Services of [`ingress_yaml`], the two
/// local Services `local-a` and `local-b` (EndpointSlices naming `backends`: their address and
/// ports), and route `local`
/// over them, whose rules are the ones the changes edit.
fn gateway_yaml(routes: usize, backends: (IpAddr, u16, u16), local: &LocalRoute) -> String {
    let mut yaml = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {{name: \
         scale}}\nspec: {{controllerName: {}}}\n---\napiVersion: gateway.networking.k8s.io/v1\n\
         kind: Gateway\nmetadata: {{name: gw, namespace: scale}}\nspec:\n  gatewayClassName: \
         scale\n  listeners:\n  - {{name: http, port: 80, protocol: HTTP}}\n",
        ingress_controller::gateway::DEFAULT_CONTROLLER_NAME
    );
    let (ip, a, b) = backends;
    for (name, port) in [("local-a", a), ("local-b", b)] {
        let _ = write!(
            yaml,
            "---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: scale}}\n\
             spec: {{ports: [{{name: http, port: 80}}]}}\n---\napiVersion: discovery.k8s.io/v1\n\
             kind: EndpointSlice\nmetadata: {{name: {name}-1, namespace: scale, labels: \
             {{kubernetes.io/service-name: {name}}}}}\naddressType: IPv4\n\
             ports: [{{name: http, port: {port}}}]\nendpoints: [{{addresses: ['{ip}']}}]\n"
        );
    }
    for i in 0..routes {
        let svc = |k: usize| format!("{{name: svc{}, port: 80}}", (i + k) % 500);
        let _ = write!(
            yaml,
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: \
             route{i}, namespace: scale}}\nspec:\n  parentRefs: [{{name: gw}}]\n  hostnames: \
             [route{i}.example.net]\n  rules:\n  - matches: [{{path: {{type: PathPrefix, value: \
             /}}}}]\n    backendRefs: [{}]\n  - matches: [{{path: {{type: PathPrefix, value: \
             /api}}}}]\n    backendRefs: [{}]\n  - matches: [{{path: {{type: Exact, value: \
             /api/v1/status}}}}]\n    backendRefs: [{}]\n",
            svc(0),
            svc(1),
            svc(2)
        );
        if i % 4 == 0 {
            let _ = write!(
                yaml,
                "  - matches: [{{path: {{type: PathPrefix, value: /api}}, headers: [{{name: \
                 x-canary, value: 'yes'}}]}}]\n    backendRefs: [{}]\n",
                svc(4)
            );
        }
        if i % 3 == 0 {
            let _ = write!(
                yaml,
                "  - matches: [{{path: {{type: PathPrefix, value: /static}}}}]\n    \
                 backendRefs: [{{name: svc{}, port: 80, weight: 80}}, {{name: svc{}, port: 80, \
                 weight: 20}}]\n",
                (i + 3) % 500,
                (i + 5) % 500
            );
        } else {
            let _ = write!(
                yaml,
                "  - matches: [{{path: {{type: PathPrefix, value: /static}}}}]\n    \
                 backendRefs: [{}]\n",
                svc(3)
            );
        }
    }
    let _ = write!(
        yaml,
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: \
         local, namespace: scale}}\nspec:\n  parentRefs: [{{name: gw}}]\n  hostnames: \
         [local.example.net]\n  rules:\n  - matches: [{{path: {{type: Exact, value: {}}}}}]\n    \
         backendRefs: [{{name: local-a, port: 80}}]\n  - matches: [{{path: {{type: PathPrefix, \
         value: /split}}}}]\n    backendRefs: [{{name: local-a, port: 80, weight: {}}}, {{name: \
         local-b, port: 80, weight: {}}}]\n",
        local.path, local.weights.0, local.weights.1
    );
    if local.new_route {
        yaml.push_str(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: \
             new, namespace: scale}\nspec:\n  parentRefs: [{name: gw}]\n  hostnames: \
             [new.example.net]\n  rules:\n  - backendRefs: [{name: local-b, port: 80}]\n",
        );
    }
    yaml
}

/// What the changes edit: route `local`'s Exact path and split weights, and whether route
/// `new` exists.
#[derive(Clone, Copy)]
struct LocalRoute {
    path: &'static str,
    weights: (u32, u32),
    new_route: bool,
}

/// This host's address towards its default route: EndpointSlices refuse loopback addresses, so
/// the local backends listen there (`SCALE_BACKEND_IP` chooses another).
fn backend_ip() -> anyhow::Result<IpAddr> {
    if let Ok(text) = std::env::var("SCALE_BACKEND_IP") {
        return Ok(text.parse()?);
    }
    // Connecting a UDP socket sends nothing; it only picks the route and its source address.
    let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
    socket.connect("198.51.100.1:9")?;
    Ok(socket.local_addr()?.ip())
}

/// A backend on `ip` answering every request with 200 and `name`; it runs on a thread of its
/// own until the process ends.
fn local_backend(ip: IpAddr, name: &'static str) -> std::io::Result<u16> {
    let listener = TcpListener::bind((ip, 0))?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut buffer = [0; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(buffer.get(..n).unwrap_or_default()),
                }
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{name}",
                name.len()
            );
        }
    });
    Ok(port)
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The status and body of `GET path` with `host` sent to `address:port`.
fn get(address: IpAddr, port: u16, host: &str, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect((address, port)).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    let status = reply.split(' ').nth(1)?.parse().ok()?;
    let body = reply.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Some((status, body.to_owned()))
}

fn status(port: u16, host: &str) -> Option<u16> {
    get(IpAddr::V4(Ipv4Addr::LOCALHOST), port, host, "/").map(|(status, _)| status)
}

/// Polls every 5 ms, for up to 60 s from `since`, until `answered`; the time since `since`.
async fn first_answer(since: Instant, answered: impl Fn() -> bool) -> Option<Duration> {
    while since.elapsed() < Duration::from_secs(60) {
        if answered() {
            return Some(since.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

/// A field of `/proc/PID/FILE` in kB (`VmRSS`, `VmHWM` of `status`; `Pss` of `smaps_rollup`).
fn proc_kb(pid: &str, file: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// This process's peak RSS: the objects, models and renderings it built.
fn own_peak() -> String {
    proc_kb("self", "status", "VmHWM").map_or_else(|| "unknown".to_owned(), mib)
}

fn mib(kb: u64) -> String {
    format!("{:.1} MiB", kb as f64 / 1024.0)
}

/// nginx's processes: the master of `prefix`'s pid file and its children (none without the
/// file).
fn nginx_processes(prefix: &Path) -> Vec<String> {
    let Some(master) = std::fs::read_to_string(ingress_controller::nginx::pid_file(prefix))
        .ok()
        .map(|s| s.trim().to_owned())
    else {
        return Vec::new();
    };
    let mut pids = vec![master.clone()];
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `PID (COMM) STATE PPID …`: the parent is the second field after the command.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if parent == Some(master.as_str()) {
            pids.push(pid);
        }
    }
    pids
}

/// nginx's memory once its master runs `workers` workers and no others (all started, or a
/// reload's old ones gone; waits up to 60 s): the sum of the processes' PSS (each shared page
/// divided among the processes that map it: the memory they take together), the sum of their
/// RSS (shared pages counted once per process), and how many there are.
async fn nginx_memory(prefix: &Path, workers: usize) -> String {
    let since = Instant::now();
    let mut pids = nginx_processes(prefix);
    while pids.len() != workers + 1 && since.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        pids = nginx_processes(prefix);
    }
    let sum = |file, field| {
        pids.iter()
            .filter_map(|p| proc_kb(p, file, field))
            .sum::<u64>()
    };
    format!(
        "{} PSS, {} RSS summed ({} processes)",
        mib(sum("smaps_rollup", "Pss")),
        mib(sum("status", "VmRSS")),
        pids.len()
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("gateway") {
        let count = args.get(1).map_or(Ok(5000), |a| a.parse())?;
        let own = args.get(2).map(String::as_str) == Some("own");
        return gateway(count, own).await;
    }
    let count: usize = args.first().map_or(Ok(5000), |a| a.parse())?;
    ingresses(count).await
}

fn options(dir: &Path, own: bool) -> anyhow::Result<render::Options> {
    Ok(render::Options {
        prefix: dir.to_owned(),
        listen_address: "127.0.0.1".into(),
        http_port: free_port()?,
        https_port: free_port()?,
        workers: WORKERS.to_string(),
        modules_dir: Some("/usr/lib/nginx/modules".into()),
        fallback_certificate: None,
        gateway_addresses: if own {
            Some(POOL.parse().map_err(anyhow::Error::msg)?)
        } else {
            None
        },
    })
}

async fn ingresses(count: usize) -> anyhow::Result<()> {
    let selection = Selection::default();
    let dir = tempfile::tempdir()?;
    let options = options(dir.path(), false)?;

    let objects = cluster(count, "").map_err(anyhow::Error::msg)?;
    let t = Instant::now();
    let built = model::build(&objects, &selection);
    let model_time = t.elapsed();
    let t = Instant::now();
    let text = render::render(&built, &options)?;
    let render_time = t.elapsed();
    let paths: usize = built.servers.iter().map(|s| s.locations.len()).sum();
    if let Ok(path) = std::env::var("SCALE_WRITE_CONFIG") {
        std::fs::write(path, &text)?;
    }
    let mut nginx = Nginx::new("nginx".into(), dir.path().to_owned())?;
    // `nginx -t` runs on the same model rendered for its private prefix.
    let private = options.with_prefix(nginx.validation_prefix());
    let t = Instant::now();
    nginx.validate(&render::render(&built, &private)?).await?;
    let validate_time = t.elapsed();
    println!("ingresses          {count}");
    println!("nginx locations    {paths}");
    println!(
        "config size        {} bytes ({} lines)",
        text.len(),
        text.lines().count()
    );
    println!("model              {model_time:?}");
    println!("render             {render_time:?}");
    println!("nginx -t           {validate_time:?}");
    nginx.install(&text).await?;
    let t = Instant::now();
    nginx.start(&options.control_socket()).await?;
    println!("nginx start        {:?}", t.elapsed());
    println!(
        "nginx memory       {}",
        nginx_memory(dir.path(), WORKERS).await
    );

    // One new Ingress: render, validate, install, reload, then poll until it answers.
    let extra = "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: new\n  \
                 namespace: scale\n  annotations: {nginx.ingress.kubernetes.io/permanent-redirect: \
                 'https://example.org/'}\nspec:\n  ingressClassName: nginx\n  rules:\n  - host: \
                 new.example.com\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: \
                 {name: svc0, port: {number: 80}}}}]}\n";
    let changed = cluster(count, extra).map_err(anyhow::Error::msg)?;
    let t = Instant::now();
    let changed = model::build(&changed, &selection);
    let new_text = render::render(&changed, &options)?;
    nginx.validate(&render::render(&changed, &private)?).await?;
    nginx.install(&new_text).await?;
    nginx.reload().await?;
    let served = first_answer(t, || {
        status(options.http_port, "new.example.com") == Some(301)
    })
    .await;
    println!(
        "nginx mem reloaded {}",
        nginx_memory(dir.path(), WORKERS).await
    );
    nginx.stop().await;

    match served {
        Some(d) => println!("change to serving  {d:?}"),
        None => println!("change to serving  not served within 60 s"),
    }
    println!("own peak RSS       {}", own_peak());
    Ok(())
}

/// What nginx runs, and what brings it a new model: the controller's steps for one change.
struct Running {
    nginx: Nginx,
    options: render::Options,
    private: render::Options,
    text: String,
    table: String,
}

/// The time each step of one change took.
#[derive(Default)]
struct Steps {
    model: Duration,
    render: Duration,
    post: Option<Duration>,
    validate: Option<Duration>,
    reload: Option<Duration>,
}

impl std::fmt::Display for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let or_none =
            |d: Option<Duration>| d.map_or_else(|| "none".to_owned(), |d| format!("{d:?}"));
        write!(
            f,
            "model {:?}, render {:?}, table POST {}, nginx -t {}, install + reload {}",
            self.model,
            self.render,
            or_none(self.post),
            or_none(self.validate),
            or_none(self.reload)
        )
    }
}

impl Running {
    /// Brings nginx to `objects` as the controller does: the table when it changed, then a
    /// validated reload when the configuration changed.
    async fn apply(&mut self, objects: &Objects, selection: &Selection) -> anyhow::Result<Steps> {
        let mut steps = Steps::default();
        let t = Instant::now();
        let built = model::build(objects, selection);
        steps.model = t.elapsed();
        let t = Instant::now();
        let text = render::render(&built, &self.options)?;
        let table = backends::table(&built);
        steps.render = t.elapsed();
        if table != self.table {
            let t = Instant::now();
            control::post_backends(&self.options.control_socket(), &table).await?;
            steps.post = Some(t.elapsed());
            self.table = table;
        }
        if text != self.text {
            let t = Instant::now();
            self.nginx
                .validate(&render::render(&built, &self.private)?)
                .await?;
            steps.validate = Some(t.elapsed());
            let t = Instant::now();
            self.nginx.install(&text).await?;
            self.nginx.reload().await?;
            steps.reload = Some(t.elapsed());
            self.text = text;
        }
        Ok(steps)
    }
}

async fn gateway(count: usize, own: bool) -> anyhow::Result<()> {
    let selection = Selection::default();
    let dir = tempfile::tempdir()?;
    let options = options(dir.path(), own)?;
    let ip = backend_ip()?;
    let backends = (ip, local_backend(ip, "a")?, local_backend(ip, "b")?);
    let mut local = LocalRoute {
        path: "/old",
        weights: (100, 0),
        new_route: false,
    };
    let objects_of = |local: &LocalRoute| {
        let mut objects = Objects::default();
        let yaml = ingress_yaml(count, &gateway_yaml(count, backends, local));
        objects.add_yaml(&yaml).map(|()| objects)
    };

    let t = Instant::now();
    let objects = objects_of(&local).map_err(anyhow::Error::msg)?;
    let parse_time = t.elapsed();
    let t = Instant::now();
    let built = model::build(&objects, &selection);
    let model_time = t.elapsed();
    let t = Instant::now();
    let text = render::render(&built, &options)?;
    let render_time = t.elapsed();
    let table = backends::table(&built);
    if let Ok(path) = std::env::var("SCALE_WRITE_CONFIG") {
        std::fs::write(path, &text)?;
    }
    let ingress_locations: usize = built.servers.iter().map(|s| s.locations.len()).sum();
    let gateway_servers: Vec<_> = built
        .gateway
        .gateways
        .iter()
        .flat_map(|g| &g.sockets)
        .flat_map(|s| &s.servers)
        .collect();
    let gateway_locations: usize = gateway_servers.iter().map(|s| s.locations.len()).sum();
    let dispatched = gateway_servers
        .iter()
        .flat_map(|s| &s.locations)
        .filter(|l| l.candidates.iter().any(|c| !c.conditions.is_empty()))
        .count();
    let address = match built
        .gateway
        .addresses(options.gateway_addresses.as_ref())
        .into_values()
        .next()
    {
        Some(Served::Own(address)) => address,
        Some(Served::Shared) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        None => anyhow::bail!("the Gateway is not served: {:?}", built.gateway.problems),
    };
    let mut nginx = Nginx::new("nginx".into(), dir.path().to_owned())?;
    let private = options.with_prefix(nginx.validation_prefix());
    let t = Instant::now();
    nginx.validate(&render::render(&built, &private)?).await?;
    let validate_time = t.elapsed();
    println!("ingresses          {count}");
    println!("httproutes         {}", count + 1);
    println!(
        "gateway address    {address} ({})",
        if own { "own" } else { "shared" }
    );
    println!("ingress locations  {ingress_locations}");
    println!(
        "gateway servers    {} ({gateway_locations} locations, {dispatched} with conditions)",
        gateway_servers.len()
    );
    println!(
        "gateway splits     {} ({} plan problems)",
        built.gateway.splits.len(),
        built.gateway.problems.len()
    );
    println!(
        "config size        {} bytes ({} lines); backend table {} bytes",
        text.len(),
        text.lines().count(),
        table.len()
    );
    println!("parse YAML         {parse_time:?}");
    println!("model              {model_time:?}");
    println!("render             {render_time:?}");
    println!("own peak RSS       {} after the first model", own_peak());
    println!("nginx -t           {validate_time:?}");
    drop(built);
    nginx.install(&text).await?;
    let t = Instant::now();
    nginx.start(&options.control_socket()).await?;
    control::post_backends(&options.control_socket(), &table).await?;
    println!("nginx start        {:?} (with the table POST)", t.elapsed());
    let port = options.http_port;
    let answers = |host: &str, path: &str, body: &str| {
        get(address, port, host, path).is_some_and(|(status, b)| status == 200 && b == body)
    };
    if first_answer(Instant::now(), || answers("local.example.net", "/old", "a"))
        .await
        .is_none()
    {
        anyhow::bail!("route local not served");
    }
    println!(
        "nginx memory       {}",
        nginx_memory(dir.path(), WORKERS).await
    );
    drop(objects);
    let mut running = Running {
        nginx,
        options: options.clone(),
        private,
        text,
        table,
    };

    // A new route, a changed path and a changed split, each timed from the model's build to
    // the first answer that shows it.
    local.new_route = true;
    let checks: [(&str, LocalRoute, (&str, &str, &str)); 3] = [
        ("new route", local, ("new.example.net", "/", "b")),
        (
            "changed path",
            LocalRoute {
                path: "/moved",
                ..local
            },
            ("local.example.net", "/moved", "a"),
        ),
        (
            "weights only",
            LocalRoute {
                path: "/moved",
                weights: (0, 100),
                ..local
            },
            ("local.example.net", "/split", "b"),
        ),
    ];
    for (name, local, (host, path, body)) in checks {
        let objects = objects_of(&local).map_err(anyhow::Error::msg)?;
        let t = Instant::now();
        let steps = running.apply(&objects, &selection).await?;
        match first_answer(t, || answers(host, path, body)).await {
            Some(d) => println!("{name:<18} {d:?} to serving ({steps})"),
            None => println!("{name:<18} not served within 60 s ({steps})"),
        }
    }
    println!(
        "nginx mem reloaded {}",
        nginx_memory(dir.path(), WORKERS).await
    );
    running.nginx.stop().await;
    println!("own peak RSS       {}", own_peak());
    Ok(())
}
