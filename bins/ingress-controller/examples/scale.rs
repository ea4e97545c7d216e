//! Scale measurement for BENCHMARKS.md: 5,000 Ingresses with 4 paths each (20,000 paths) on
//! 5,000 hosts and 500 Services; times the model, the rendering, `nginx -t`, and the time from
//! an Ingress change to nginx serving it (render, validate, reload, first answer).
//!
//! ```text
//! cargo run --release -p ingress-controller --example scale [-- INGRESSES]
//! ```
//!
//! `SCALE_WRITE_CONFIG=FILE` also writes the rendered configuration there. Needs nginx and
//! libnginx-mod-http-lua; runs nginx on free 127.0.0.1 ports in a temporary
//! prefix and stops it at the end.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use ingress_controller::class::Selection;
use ingress_controller::nginx::Nginx;
use ingress_controller::objects::Objects;
use ingress_controller::{model, render};

fn cluster(ingresses: usize, extra: &str) -> Result<Objects, String> {
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
    let mut objects = Objects::default();
    objects.add_yaml(&yaml)?;
    Ok(objects)
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn status(port: u16, host: &str) -> Option<u16> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(
        stream,
        "GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    reply.split(' ').nth(1)?.parse().ok()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let count: usize = std::env::args().nth(1).map_or(Ok(5000), |a| a.parse())?;
    let selection = Selection::default();
    let dir = tempfile::tempdir()?;
    let options = render::Options {
        prefix: dir.path().to_owned(),
        listen_address: "127.0.0.1".into(),
        http_port: free_port()?,
        https_port: free_port()?,
        workers: "2".into(),
        modules_dir: Some("/usr/lib/nginx/modules".into()),
        fallback_certificate: None,
        gateway_addresses: None,
    };

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
    let mut served = None;
    while t.elapsed() < Duration::from_secs(60) {
        if status(options.http_port, "new.example.com") == Some(301) {
            served = Some(t.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    nginx.stop().await;

    match served {
        Some(d) => println!("change to serving  {d:?}"),
        None => println!("change to serving  not served within 60 s"),
    }
    Ok(())
}
