//! Generated nginx configs for the `nginx_conf` benchmark and the profiling example
//! (`docs/nginx-conf.md` §10): `plain-10k` (about 15.3 MB) and `ingress-2k` (about 9.3 MB).

use core::fmt::Write;

/// The `plain-N` config: `servers` servers × 3 locations, regex locations, `if`, `map`, TLS,
/// comments and `servers / 10` upstreams (about 1.5 kB per server).
pub fn plain(servers: usize) -> String {
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
        # TLS for site{s}: certificates renewed by cert-manager
        listen 443 ssl http2;
        ssl_certificate /etc/nginx/ssl/site{s}.example.com/fullchain.pem;
        ssl_certificate_key /etc/nginx/ssl/site{s}.example.com/privkey.pem;
        ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384;
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

/// The `ingress-N` config: `servers` ingress-nginx style servers × 2 locations, 9 Lua blocks
/// per server, SSL (about 4.6 kB per server).
pub fn ingress(servers: usize) -> String {
    let mut out = String::with_capacity(servers * 4700);
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
