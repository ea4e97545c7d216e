//! nginx-conf: lossless parsing and emitting of large generated configs, beside
//! nginx-lint-parser (lossless rowan CST, in process) and crossplane 0.5.8 (Python, timed in
//! its own process so that interpreter start-up is not counted).
//!
//! Inputs are generated (spec section 10): `plain-10k` (10,000 servers × 3 locations, regex
//! locations, `if`, `map`, comments, 1,000 upstreams, about 15 MB), `ingress-2k` (2,000
//! ingress-style servers × 2 locations, 16,000 Lua blocks, SSL, about 15 MB), and the
//! one-tenth versions `plain-1k` / `ingress-200` used for crossplane, which needs seconds per
//! megabyte.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use benches::OURS;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::fmt::Write;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn plain(servers: usize) -> String {
    let mut out = String::with_capacity(servers * 1600);
    out.push_str("# generated: plain nginx config\nuser www-data;\nworker_processes auto;\n");
    out.push_str("events {\n    worker_connections 4096;\n}\n\nhttp {\n");
    out.push_str("    include mime.types;\n    default_type application/octet-stream;\n");
    out.push_str("    map $http_upgrade $connection_upgrade {\n        default upgrade;\n        '' close;\n    }\n");
    for u in 0..servers / 10 {
        let _ = write!(
            out,
            "    upstream backend_{u} {{\n        least_conn;\n        server 10.{}.{}.1:8080 weight=3 max_fails=2;\n        server 10.{}.{}.2:8080;\n        keepalive 32;\n    }}\n",
            u / 250,
            u % 250,
            u / 250,
            u % 250
        );
    }
    for s in 0..servers {
        let u = s % (servers / 10).max(1);
        let _ = write!(
            out,
            r#"
    # site {s}: served by backend_{u}
    server {{
        listen 80;
        listen [::]:80;
        server_name site{s}.example.com www.site{s}.example.com;
        root /var/www/site{s}/public;
        index index.html index.htm;
        access_log /var/log/nginx/site{s}.access.log combined buffer=32k;
        error_log /var/log/nginx/site{s}.error.log warn;
        client_max_body_size 16m;

        location / {{
            try_files $uri $uri/ /index.html =404;
            add_header Cache-Control "no-cache, no-store";
        }}

        location ~* "^/assets/[a-f0-9]{{8}}/(.+)\.(css|js|png)$" {{
            expires 30d;
            add_header X-Site "site{s}" always;
            if ($http_referer ~* "(spam|bot)\.example") {{
                return 403;
            }}
        }}

        location /api/ {{
            proxy_pass http://backend_{u};
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 60s;
        }}
    }}
"#
        );
    }
    out.push_str("}\n");
    out
}

fn ingress(servers: usize) -> String {
    let mut out = String::with_capacity(servers * 7500);
    out.push_str("# generated: ingress-nginx style render\npid /tmp/nginx.pid;\nevents {\n    multi_accept on;\n    worker_connections 16384;\n}\n\nhttp {\n");
    out.push_str("    init_by_lua_block {\n        collectgarbage(\"collect\")\n        local ok, res = pcall(require, \"lua_ingress\")\n        if not ok then\n            error(\"require failed: \" .. tostring(res))\n        else\n            lua_ingress = res\n            lua_ingress.set_config({ use_forwarded_headers = false, hsts = true })\n        end\n    }\n");
    for s in 0..servers {
        let _ = write!(
            out,
            "\n    ## start server app{s}.example.com\n    server {{\n        server_name app{s}.example.com ;\n        listen 80 ;\n        listen 443 ssl http2 ;\n        set $proxy_upstream_name \"-\";\n        ssl_certificate_by_lua_block {{\n            certificate.call()\n        }}\n        ssl_certificate /etc/ingress-controller/ssl/default-fake-certificate.pem;\n        ssl_certificate_key /etc/ingress-controller/ssl/default-fake-certificate.pem;\n"
        );
        for l in 0..2 {
            let _ = write!(
                out,
                r#"
        location /svc{l}/ {{
            set $namespace      "ns-{s}";
            set $ingress_name   "ing-{s}";
            set $service_name   "svc-{s}-{l}";
            set $service_port   "8080";
            set $location_path  "/svc{l}";
            rewrite_by_lua_block {{
                lua_ingress.rewrite({{
                    force_ssl_redirect = false,
                    ssl_redirect = true,
                    force_no_ssl_redirect = false,
                    use_port_in_redirects = false,
                    global_throttle = {{ namespace = "", limit = 0, window_size = 0, key = {{ }}, ignored_cidrs = {{ }} }},
                }})
                balancer.rewrite()
                plugins.run()
            }}
            header_filter_by_lua_block {{
                lua_ingress.header()
                plugins.run() -- headers {{ }} in comments are fine
            }}
            body_filter_by_lua_block {{
                plugins.run()
            }}
            log_by_lua_block {{
                balancer.log()
                monitor.call()
                plugins.run()
            }}
            port_in_redirect off;
            set $balancer_ewma_score -1;
            set $proxy_upstream_name "ns-{s}-svc-{s}-{l}-8080";
            set $proxy_host          $proxy_upstream_name;
            set $pass_access_scheme  $scheme;
            client_max_body_size                    1m;
            proxy_set_header Host                   $best_http_host;
            proxy_set_header X-Request-ID           $req_id;
            proxy_set_header X-Forwarded-For        $remote_addr;
            proxy_set_header X-Forwarded-Proto      $pass_access_scheme;
            proxy_connect_timeout                   5s;
            proxy_send_timeout                      60s;
            proxy_read_timeout                      60s;
            proxy_buffering                         off;
            proxy_next_upstream                     error timeout;
            proxy_pass http://upstream_balancer;
            proxy_redirect                          off;
        }}
"#
            );
        }
        let _ = write!(out, "    }}\n    ## end server app{s}.example.com\n");
    }
    out.push_str("}\n");
    out
}

struct Input {
    name: &'static str,
    text: String,
}

fn inputs() -> Vec<Input> {
    vec![
        Input {
            name: "plain-10k",
            text: plain(10_000),
        },
        Input {
            name: "ingress-2k",
            text: ingress(2_000),
        },
    ]
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("nginx_conf_parse");
    group.sample_size(10);
    for input in inputs() {
        let bytes = input.text.as_bytes();
        assert_eq!(nginx_conf::parse(bytes).unwrap().to_bytes().unwrap(), bytes);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new(OURS, input.name), bytes, |b, bytes| {
            b.iter(|| nginx_conf::parse(black_box(bytes)).unwrap());
        });
        group.bench_with_input(
            BenchmarkId::new("nginx-lint-parser", input.name),
            &input.text,
            |b, text| b.iter(|| nginx_lint_parser::parse_string_rowan(black_box(text))),
        );
    }
    group.finish();
}

fn emit(c: &mut Criterion) {
    let mut group = c.benchmark_group("nginx_conf_emit");
    group.sample_size(10);
    for input in inputs() {
        let bytes = input.text.as_bytes();
        let config = nginx_conf::parse(bytes).unwrap();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new(OURS, format!("lossless/{}", input.name)),
            &config,
            |b, config| {
                b.iter(|| black_box(config).to_bytes().unwrap());
            },
        );
        group.bench_with_input(
            BenchmarkId::new(OURS, format!("format/{}", input.name)),
            &config,
            |b, config| {
                b.iter(|| black_box(config).format());
            },
        );
    }
    group.finish();
}

/// Times `crossplane.parse(path, single=True)` inside one Python process, `iters` times.
const CROSSPLANE: &str = "import sys, time, crossplane
path, iters = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
for _ in range(iters):
    payload = crossplane.parse(path, single=True)
    assert payload['config'][0]['parsed'], payload['errors']
print(time.perf_counter() - start)";

fn crossplane_available() -> bool {
    Command::new("python3")
        .args(["-c", "import crossplane"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn versus_crossplane(c: &mut Criterion) {
    if !crossplane_available() {
        eprintln!(
            "skipping nginx_conf_vs_crossplane: `pip install crossplane==0.5.8` to measure it"
        );
        return;
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("nginx-conf-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("nginx_conf_vs_crossplane");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    for (name, text) in [("plain-1k", plain(1_000)), ("ingress-200", ingress(200))] {
        let path = dir.join(format!("{name}.conf"));
        std::fs::write(&path, &text).unwrap();
        let bytes = text.as_bytes();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new(OURS, name), bytes, |b, bytes| {
            b.iter(|| nginx_conf::parse(black_box(bytes)).unwrap());
        });
        group.bench_with_input(BenchmarkId::new("crossplane", name), &path, |b, path| {
            b.iter_custom(|iters| {
                let output = Command::new("python3")
                    .args(["-c", CROSSPLANE])
                    .arg(path)
                    .arg(iters.to_string())
                    .output()
                    .unwrap();
                assert!(
                    output.status.success(),
                    "{}",
                    String::from_utf8_lossy(&output.stderr)
                );
                let seconds: f64 = String::from_utf8_lossy(&output.stdout)
                    .trim()
                    .parse()
                    .unwrap();
                Duration::from_secs_f64(seconds)
            });
        });
    }
    group.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, parse, emit, versus_crossplane);
criterion_main!(benches);
