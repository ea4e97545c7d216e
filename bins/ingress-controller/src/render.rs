//! The model as an nginx.conf tree, built only through nginx-conf's builder: every value is one
//! argument that the emitter quotes, so no value can end a directive or open a block.

use std::path::{Path, PathBuf};

use nginx_conf::{Block, Directive, EmitError, LuaBody};

use crate::annotations::{Annotations, BackendProtocol, Cors, NextUpstream};
use crate::configmap::Global;
use crate::hosts::Host;
use crate::lua;
use crate::model::{Certificate, DefaultCertificate, Location, Model, Server, Target};
use crate::paths::LocationKey;

/// Where and how nginx runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// nginx's prefix directory: pid file, logs, temp files, certificates, control socket.
    pub prefix: PathBuf,
    /// Address the HTTP and HTTPS ports listen on.
    pub listen_address: String,
    /// The HTTP port.
    pub http_port: u16,
    /// The HTTPS port.
    pub https_port: u16,
    /// `worker_processes`.
    pub workers: String,
    /// Directory of `ndk_http_module.so` and `ngx_http_lua_module.so`, or `None` when the Lua
    /// module is built in.
    pub modules_dir: Option<PathBuf>,
    /// The generated default certificate (PEM: chain then key), presented when no
    /// `--default-ssl-certificate` loads ([`crate::certs::write_fake`]).
    pub fallback_certificate: Option<PathBuf>,
    /// `--gateway-addresses`: each Gateway's own address comes from this pool; `None`: the
    /// Gateways share [`Options::listen_address`] with the Ingresses.
    pub gateway_addresses: Option<crate::gateway::addresses::Pool>,
}

impl Options {
    /// The same options in another prefix (the private prefix of `nginx -t`).
    pub fn with_prefix(&self, prefix: PathBuf) -> Options {
        Options {
            prefix,
            ..self.clone()
        }
    }

    /// The control socket nginx listens on for backend tables.
    pub fn control_socket(&self) -> PathBuf {
        self.prefix.join("control.sock")
    }

    /// Where `certificate`, the certificate and key of Secret `secret` (`namespace/name`), is
    /// written (a name that changes with the content: see [`crate::certs`]).
    pub fn certificate_path(&self, secret: &str, certificate: &Certificate) -> PathBuf {
        self.prefix
            .join("certs")
            .join(crate::certs::file_name(secret, certificate))
    }
}

/// Why the model could not be written as nginx.conf.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A value cannot be written safely (NUL byte, or too long for nginx's buffer).
    #[error("cannot write {what}: {source}")]
    Emit {
        /// Which directive.
        what: String,
        /// The emitter's refusal.
        source: EmitError,
    },
}

pub(crate) type Result<T> = std::result::Result<T, RenderError>;

/// `name args…;`
pub(crate) fn directive<I>(name: &str, args: I) -> Result<Directive>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    Directive::new(name)
        .and_then(|d| d.args(args))
        .map_err(|source| RenderError::Emit {
            what: name.to_owned(),
            source,
        })
}

/// `name { code }` with a Lua body.
pub(crate) fn lua_block(name: &str, code: &str) -> Result<Directive> {
    let body = LuaBody::new(code).map_err(|source| RenderError::Emit {
        what: name.to_owned(),
        source,
    })?;
    Ok(directive(name, [""; 0])?.lua(body))
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Renders the whole configuration as text.
///
/// # Errors
///
/// [`RenderError`] when a value cannot be written safely.
pub fn render(model: &Model, options: &Options) -> Result<String> {
    let tree = tree(model, options)?;
    Ok(String::from_utf8_lossy(&tree.format()).into_owned())
}

/// Renders the whole configuration as a tree.
///
/// # Errors
///
/// [`RenderError`] when a value cannot be written safely.
pub fn tree(model: &Model, options: &Options) -> Result<Block> {
    let mut main = Vec::new();
    if let Some(dir) = &options.modules_dir {
        for module in ["ndk_http_module.so", "ngx_http_lua_module.so"] {
            main.push(directive("load_module", [path(&dir.join(module))])?);
        }
    }
    main.extend([
        directive("daemon", ["off"])?,
        directive(
            "worker_processes",
            [model
                .global
                .worker_processes
                .as_ref()
                .unwrap_or(&options.workers)],
        )?,
        directive("pid", [path(&crate::nginx::pid_file(&options.prefix))])?,
        // As ingress-nginx's image: errors on stderr at its `error-log-level` default.
        directive("error_log", ["stderr", "notice"])?,
        directive("worker_shutdown_timeout", ["10s"])?,
        directive("events", [""; 0])?.block(vec![directive(
            "worker_connections",
            [model.global.max_worker_connections.to_string()],
        )?]),
        directive("http", [""; 0])?.block(http(model, options)?),
    ]);
    Ok(Block::new(main))
}

/// What the configuration of `model` leaves out where Ingresses and Gateways share a socket:
/// the Gateway servers left out and who keeps their names or sockets, and the locations an
/// Ingress and HTTPRoutes both claim on one host (docs/gateway-api.md §8 item 9).
pub fn gateway_collisions(
    model: &Model,
    options: &Options,
) -> crate::gateway::collisions::Collisions {
    let context = Context {
        model,
        options,
        numbers: std::collections::HashMap::new(),
        gateway_catch_alls: (false, false),
        gateway_merged: std::collections::BTreeSet::new(),
    };
    crate::gateway::render::place(&context).1
}

/// What rendering one model needs: the model, the options, and each Ingress's number (its
/// position in [`Model::ingresses`], which names its limit zones).
pub(crate) struct Context<'a> {
    /// The model.
    pub(crate) model: &'a Model,
    /// The options.
    pub(crate) options: &'a Options,
    numbers: std::collections::HashMap<&'a str, usize>,
    /// Whether a Gateway listener without host name is the default server of the HTTP and
    /// of the HTTPS port (only when no Ingress claims the catch-all; see
    /// [`crate::gateway::render`]): the generated catch-all then leaves that port to it.
    gateway_catch_alls: (bool, bool),
    /// The exact Ingress host names a Gateway server joins, and whether on the HTTPS port:
    /// the joined `server` is written with the Gateway's (see [`crate::gateway::render`]), the
    /// Ingress server does not listen there.
    gateway_merged: std::collections::BTreeSet<(String, bool)>,
}

impl Context<'_> {
    /// The zone names of `ingress`'s limits.
    fn zones(&self, ingress: &str) -> (String, String) {
        let n = self.numbers.get(ingress).copied().unwrap_or_default();
        (format!("ingress_rps_{n}"), format!("ingress_conn_{n}"))
    }
}

fn http(model: &Model, options: &Options) -> Result<Vec<Directive>> {
    let mut context = Context {
        model,
        options,
        numbers: model
            .ingresses
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i))
            .collect(),
        gateway_catch_alls: (false, false),
        gateway_merged: std::collections::BTreeSet::new(),
    };
    let (gateways, _) = crate::gateway::render::place(&context);
    context.gateway_catch_alls = crate::gateway::render::catch_alls(&gateways);
    context.gateway_merged = crate::gateway::render::merged_hosts(&gateways);
    let prefix = &options.prefix;
    let mut http = vec![
        directive("default_type", ["application/octet-stream"])?,
        directive(
            "log_format",
            [
                "upstreaminfo".to_owned(),
                model.global.log_format.to_string(),
            ],
        )?,
        directive("access_log", ["/dev/stdout", "upstreaminfo"])?,
        directive("server_tokens", ["off"])?,
        // As ingress-nginx's nginx.tmpl: a request refused before its location sets the
        // metrics' variables (a 413, say) logs them empty, not as warnings.
        directive("uninitialized_variable_warn", ["off"])?,
        directive("server_names_hash_max_size", ["65536"])?,
        directive(
            "server_names_hash_bucket_size",
            [server_names_bucket(model).to_string()],
        )?,
        directive("variables_hash_max_size", ["2048"])?,
    ];
    for (name, dir) in [
        ("client_body_temp_path", "client_body"),
        ("proxy_temp_path", "proxy"),
        ("fastcgi_temp_path", "fastcgi"),
        ("uwsgi_temp_path", "uwsgi"),
        ("scgi_temp_path", "scgi"),
    ] {
        http.push(directive(name, [path(&prefix.join("tmp").join(dir))])?);
    }
    http.extend(tls(&model.global)?);
    http.extend(timeouts(&model.global)?);
    http.extend(real_ip(&model.global)?);
    http.extend(proxy_headers(options, &model.global)?);
    http.extend([
        directive("lua_shared_dict", ["ingress", "16m"])?,
        directive("lua_shared_dict", ["ingress_metrics", "16m"])?,
        lua_block("init_by_lua_block", lua::MODULE)?,
        lua_block("init_worker_by_lua_block", lua::INIT_WORKER)?,
        // A literal `$` where `set` would read a variable (ingress-nginx's `literal_dollar`).
        directive("geo", ["$literal_dollar"])?.block(vec![directive("default", ["$"])?]),
        lua_block("log_by_lua_block", lua::LOG)?,
    ]);
    http.extend(limit_zones(&context)?);
    http.push(
        directive("upstream", ["ingress_balancer"])?.block(
            [
                directive("server", ["0.0.0.1"])?,
                lua_block("balancer_by_lua_block", lua::BALANCE)?,
            ]
            .into_iter()
            .chain(upstream_keepalive(&model.global)?)
            .collect::<Vec<_>>(),
        ),
    );
    http.push(directive("server", [""; 0])?.block(vec![
            directive(
                "listen",
                [format!("unix:{}", path(&options.control_socket()))],
            )?,
            // The controller's own backend updates are no traffic: not in the access log, and
            // named "-" where the log phase reads the upstream's name.
            directive("access_log", ["off"])?,
            directive("set", ["$proxy_upstream_name", "-"])?,
            directive("client_max_body_size", ["64m"])?,
            directive("client_body_buffer_size", ["64m"])?,
            // Answered by nginx alone once a worker runs: the controller's start and `/healthz`
            // ask it (as ingress-nginx's status server's `/healthz`).
            directive("location", ["=", "/healthz"])?.block(vec![directive("return", ["200"])?]),
            directive("location", ["/"])?
                .block(vec![lua_block("content_by_lua_block", lua::CONTROL)?]),
            // nginx's connection and request counts, for the `nginx_process_*` metrics.
            directive("location", ["=", "/nginx_status"])?
                .block(vec![directive("stub_status", [""; 0])?]),
        ]));
    let catch_all_needed = context.gateway_catch_alls != (true, true);
    if catch_all_needed && model.servers.first().is_none_or(|s| s.host != Host::Any) {
        let catch_all = Server {
            host: Host::Any,
            certificate: None,
            default_tls: false,
            default_target: Target::NotFound,
            locations: Vec::new(),
        };
        http.extend(server(&context, &catch_all)?);
    }
    for s in &model.servers {
        if let Some(server) = server(&context, s)? {
            http.push(server);
        }
    }
    http.extend(crate::gateway::render::servers(&context, &gateways)?);
    Ok(http)
}

/// `server_names_hash_bucket_size`: large enough for the longest name of a `server_name`
/// nginx hashes (the exact hosts and the Gateway wildcards; the Ingress wildcards are written
/// as regexes, which it does not hash).
///
/// nginx refuses the whole configuration when one name does not fit a bucket ("could not build
/// server_names_hash, you should increase server_names_hash_bucket_size"). `ngx_hash_init`
/// needs, for a name of `len` bytes, a pointer to its value, the length (2 bytes) and the
/// name padded to the pointer size (`NGX_HASH_ELT_SIZE`), and one more pointer ending the
/// bucket. With 8-byte pointers, 256 (the size written before, kept as the least) holds names
/// of up to 238 bytes; a DNS name of 253 needs 512. nginx's documentation asks for a power of
/// two.
fn server_names_bucket(model: &Model) -> usize {
    const POINTER: usize = 8;
    const LEAST: usize = 256;
    let longest = model
        .servers
        .iter()
        .filter_map(|s| match &s.host {
            Host::Exact(name) => Some(name.len()),
            Host::Any | Host::Wildcard(_) => None,
        })
        .chain(
            model
                .gateway
                .gateways
                .iter()
                .flat_map(|g| &g.sockets)
                .flat_map(|s| &s.servers)
                .filter_map(|s| s.name.as_ref().map(|n| n.to_string().len())),
        )
        .max()
        .unwrap_or(0);
    let needed = POINTER + (longest + 2).next_multiple_of(POINTER) + POINTER;
    needed.next_power_of_two().max(LEAST)
}

/// TLS as the ConfigMap says (`ssl-protocols`, `ssl-ciphers`; ingress-nginx's defaults: TLS
/// 1.2 and 1.3 only, its ECDHE/AEAD list for TLS 1.2, preferred over the client's order), and
/// `hsts`: the `Strict-Transport-Security` value for TLS requests (`$https` is `on`).
fn tls(global: &Global) -> Result<Vec<Directive>> {
    Ok(vec![
        directive("ssl_protocols", &global.ssl_protocols)?,
        directive("ssl_ciphers", [&global.ssl_ciphers])?,
        directive("ssl_prefer_server_ciphers", ["on"])?,
        directive("map", ["$https", "$hsts_header"])?.block(vec![
            directive("default", [""])?,
            directive("on", [global.hsts.as_deref().unwrap_or_default()])?,
        ]),
        hsts_header()?,
    ])
}

/// `add_header Strict-Transport-Security $hsts_header always;` (an empty value adds nothing).
/// At `http` level, and again in every location with `add_header`s of its own, which would
/// otherwise hide it (nginx inherits `add_header` only into levels that have none).
pub(crate) fn hsts_header() -> Result<Directive> {
    directive(
        "add_header",
        ["Strict-Transport-Security", "$hsts_header", "always"],
    )
}

/// The ConfigMap's defaults of what annotations may override per location: body size,
/// timeouts (for `proxy_pass` and `grpc_pass`), buffers, and client keepalive.
fn timeouts(global: &Global) -> Result<Vec<Directive>> {
    let seconds = |n: u32| format!("{n}s");
    let mut out = vec![
        directive("client_max_body_size", [&global.body_size])?,
        directive("proxy_buffer_size", [&global.buffer_size])?,
        directive(
            "proxy_buffers",
            [
                global.buffers_number.to_string(),
                global.buffer_size.clone(),
            ],
        )?,
        directive("keepalive_timeout", [seconds(global.keep_alive)])?,
        directive(
            "keepalive_requests",
            [global.keep_alive_requests.to_string()],
        )?,
    ];
    for prefix in ["proxy", "grpc"] {
        out.push(directive(
            &format!("{prefix}_connect_timeout"),
            [seconds(global.connect_timeout)],
        )?);
        out.push(directive(
            &format!("{prefix}_send_timeout"),
            [seconds(global.send_timeout)],
        )?);
        out.push(directive(
            &format!("{prefix}_read_timeout"),
            [seconds(global.read_timeout)],
        )?);
    }
    Ok(out)
}

/// `enable-real-ip` or `use-forwarded-headers`: the client address from
/// `forwarded-for-header`, trusted from `proxy-real-ip-cidr` (ingress-nginx's nginx.tmpl).
fn real_ip(global: &Global) -> Result<Vec<Directive>> {
    if !(global.enable_real_ip || global.use_forwarded_headers) {
        return Ok(Vec::new());
    }
    let mut out = vec![
        directive("real_ip_header", [&global.forwarded_for_header])?,
        directive("real_ip_recursive", ["on"])?,
    ];
    for cidr in &global.real_ip_cidrs {
        out.push(directive("set_real_ip_from", [cidr])?);
    }
    Ok(out)
}

/// The `ingress_balancer` upstream's keepalive (`upstream-keepalive-*`; off at 0 connections).
fn upstream_keepalive(global: &Global) -> Result<Vec<Directive>> {
    if global.upstream_keepalive_connections == 0 {
        return Ok(Vec::new());
    }
    Ok(vec![
        directive(
            "keepalive",
            [global.upstream_keepalive_connections.to_string()],
        )?,
        directive("keepalive_time", [&global.upstream_keepalive_time])?,
        directive(
            "keepalive_timeout",
            [format!("{}s", global.upstream_keepalive_timeout)],
        )?,
        directive(
            "keepalive_requests",
            [global.upstream_keepalive_requests.to_string()],
        )?,
    ])
}

/// The request headers every proxied request carries (gRPC ones too), as ingress-nginx sets them without
/// `use-forwarded-headers`: HTTP/1.1 to the upstream; `Upgrade` passed on and `Connection`
/// from `$connection_upgrade` (`upgrade` when the client asked for one, else empty so the
/// upstream connection stays in the keepalive pool), so WebSockets pass through; the client's
/// `X-Request-ID` or a generated one; the client's address, scheme, host and port (the HTTPS
/// port as 443, whatever port nginx listens on).
fn proxy_headers(options: &Options, global: &Global) -> Result<Vec<Directive>> {
    let map = |from: &str, to: &str, default: &str, empty: &str| -> Result<Directive> {
        Ok(directive("map", [from, to])?.block(vec![
            directive("default", [default])?,
            directive("", [empty])?,
        ]))
    };
    // Without upstream keepalive, ingress-nginx closes the upstream connection.
    let no_upgrade = if global.upstream_keepalive_connections == 0 {
        "close"
    } else {
        ""
    };
    let mut out = vec![
        map(
            "$http_upgrade",
            "$connection_upgrade",
            "upgrade",
            no_upgrade,
        )?,
        // The access log's canary field; no location names an alternative upstream.
        directive("map", ["", "$proxy_alternative_upstream_name"])?
            .block(vec![directive("default", [""])?]),
        map(
            "$http_x_request_id",
            "$req_id",
            "$http_x_request_id",
            "$request_id",
        )?,
        // The request's host as the client wrote it (ingress-nginx's $best_http_host).
        map("$http_host", "$this_host", "$http_host", "$host")?,
    ];
    if global.use_forwarded_headers {
        // The client's X-Forwarded-* win (ingress-nginx's lua_ingress rewrite phase; the first
        // host of a list).
        out.extend([
            map(
                "$http_x_forwarded_proto",
                "$pass_access_scheme",
                "$http_x_forwarded_proto",
                "$scheme",
            )?,
            map(
                "$http_x_forwarded_port",
                "$pass_server_port",
                "$http_x_forwarded_port",
                "$server_port",
            )?,
            directive("map", ["$http_x_forwarded_host", "$best_http_host"])?.block(vec![
                directive("default", ["$this_host"])?,
                directive(
                    "~^\\s*(?<first_forwarded_host>[^,\\s]+)",
                    ["$first_forwarded_host"],
                )?,
            ]),
        ]);
    } else {
        out.extend([
            map("$scheme", "$pass_access_scheme", "$scheme", "$scheme")?,
            map(
                "$server_port",
                "$pass_server_port",
                "$server_port",
                "$server_port",
            )?,
            map("$this_host", "$best_http_host", "$this_host", "$this_host")?,
        ]);
    }
    if global.use_forwarded_headers && global.compute_full_forwarded_for {
        out.push(map(
            "$http_x_forwarded_for",
            "$full_x_forwarded_for",
            "$http_x_forwarded_for, $realip_remote_addr",
            "$realip_remote_addr",
        )?);
    }
    out.extend([
        directive("map", ["$pass_server_port", "$pass_port"])?.block(vec![
            directive(&options.https_port.to_string(), ["443"])?,
            directive("default", ["$pass_server_port"])?,
        ]),
        directive("proxy_http_version", ["1.1"])?,
    ]);
    for (name, value) in standard_headers(global) {
        out.push(directive("proxy_set_header", [name, value])?);
        // grpc_pass reads only its own header directives (ingress-nginx writes each line with
        // `grpc_set_header` in gRPC locations). HTTP/2 has no upgrade: nginx's gRPC module
        // drops `Upgrade` and `Connection` itself.
        if !matches!(name, "Upgrade" | "Connection") {
            out.push(directive("grpc_set_header", [name, value])?);
        }
    }
    Ok(out)
}

/// The request headers every proxied request carries, name and value, as [`proxy_headers`]
/// writes them at `http` level. A location with a `proxy_set_header` of its own inherits none
/// of them, so it writes this list again with its changes (the Gateway header filters).
pub(crate) fn standard_headers(global: &Global) -> [(&'static str, &'static str); 11] {
    let forwarded_for = if global.use_forwarded_headers && global.compute_full_forwarded_for {
        "$full_x_forwarded_for"
    } else {
        "$remote_addr"
    };
    [
        ("Host", "$best_http_host"),
        ("Upgrade", "$http_upgrade"),
        ("Connection", "$connection_upgrade"),
        ("X-Request-ID", "$req_id"),
        ("X-Real-IP", "$remote_addr"),
        ("X-Forwarded-For", forwarded_for),
        ("X-Forwarded-Host", "$best_http_host"),
        ("X-Forwarded-Port", "$pass_port"),
        ("X-Forwarded-Proto", "$pass_access_scheme"),
        ("X-Forwarded-Scheme", "$pass_access_scheme"),
        ("X-Scheme", "$pass_access_scheme"),
    ]
}

/// The `limit_req_zone` / `limit_conn_zone` of every Ingress that sets limits.
fn limit_zones(context: &Context<'_>) -> Result<Vec<Directive>> {
    let mut zones = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for location in context.model.servers.iter().flat_map(|s| &s.locations) {
        let limits = &location.annotations.limits;
        if (limits.rps.is_none() && limits.connections.is_none())
            || !seen.insert(location.ingress.as_str())
        {
            continue;
        }
        let (rps, conn) = context.zones(&location.ingress);
        if let Some(rate) = limits.rps {
            zones.push(directive(
                "limit_req_zone",
                [
                    "$binary_remote_addr".to_owned(),
                    format!("zone={rps}:1m"),
                    format!("rate={rate}r/s"),
                ],
            )?);
        }
        if limits.connections.is_some() {
            zones.push(directive(
                "limit_conn_zone",
                ["$binary_remote_addr".to_owned(), format!("zone={conn}:1m")],
            )?);
        }
    }
    Ok(zones)
}

/// The `server` of `s`; `None` when a Gateway server joins it on every port it listens on.
fn server(context: &Context<'_>, s: &Server) -> Result<Option<Directive>> {
    let options = context.options;
    let address = &options.listen_address;
    let http_listen = format!("{address}:{}", options.http_port);
    let https_listen = format!("{address}:{}", options.https_port);
    // What the access log names for requests no location sends upstream (ingress-nginx's "-").
    let mut body = vec![directive("set", ["$proxy_upstream_name", "-"])?];
    match &s.host {
        Host::Any => {
            let (http_taken, https_taken) = context.gateway_catch_alls;
            if !http_taken {
                body.push(directive(
                    "listen",
                    [http_listen.as_str(), "default_server"],
                )?);
            }
            if !https_taken {
                let mut listen = vec![https_listen.as_str(), "ssl"];
                if context.model.global.http2 {
                    listen.push("http2");
                }
                listen.push("default_server");
                body.push(directive("listen", listen)?);
            }
            body.push(directive("server_name", ["_"])?);
            // Unknown names get the default certificate, as ingress-nginx's; without one
            // (`render` without a generated certificate) the handshake is refused.
            match default_certificate(context) {
                Some(file) => {
                    body.push(directive("ssl_certificate", [&file])?);
                    body.push(directive("ssl_certificate_key", [&file])?);
                }
                None => body.push(directive("ssl_reject_handshake", ["on"])?),
            }
        }
        Host::Exact(name) => {
            if !context.gateway_merged.contains(&(name.clone(), false)) {
                body.push(directive("listen", [&http_listen])?);
            }
            body.push(directive("server_name", [name])?);
            // The `host` label of the request metrics: a host of the configuration only.
            body.push(directive("set", ["$ingress_host", name])?);
        }
        Host::Wildcard(suffix) => {
            body.push(directive("listen", [&http_listen])?);
            let pattern = format!("~^[^.]+\\.{}$", suffix.replace('.', "\\."));
            body.push(directive("server_name", [pattern])?);
            body.push(directive(
                "set",
                ["$ingress_host".to_owned(), format!("*.{suffix}")],
            )?);
        }
    }
    let https_merged = match &s.host {
        Host::Exact(name) => context.gateway_merged.contains(&(name.clone(), true)),
        Host::Any | Host::Wildcard(_) => false,
    };
    let file = server_certificate(context, s).filter(|_| !https_merged);
    if let Some(file) = file {
        let mut listen = vec![https_listen.as_str(), "ssl"];
        if context.model.global.http2 {
            listen.push("http2");
        }
        body.push(directive("listen", listen)?);
        body.push(directive("ssl_certificate", [&file])?);
        body.push(directive("ssl_certificate_key", [&file])?);
    }
    if !body.iter().any(|d| d.name.value().as_ref() == b"listen") {
        return Ok(None);
    }
    for location in &s.locations {
        body.push(location_block(context, location)?);
    }
    let has_root = s
        .locations
        .iter()
        .any(|l| l.key == LocationKey::Prefix("/".into()));
    if !has_root {
        body.push(fallback_location(s)?);
    }
    Ok(Some(directive("server", [""; 0])?.block(body)))
}

/// The certificate file `s` presents on the HTTPS port, if it listens there: its Secret's,
/// else the default one when it is under an Ingress's `tls` without a usable Secret.
pub(crate) fn server_certificate(context: &Context<'_>, s: &Server) -> Option<String> {
    let own = s
        .certificate
        .as_ref()
        .and_then(|secret| Some((secret, context.model.certificates.get(secret)?)))
        .map(|(secret, certificate)| path(&context.options.certificate_path(secret, certificate)));
    match own {
        Some(file) => Some(file),
        None if s.default_tls && s.host != Host::Any => default_certificate(context),
        None => None,
    }
}

/// `location /` of a server without a rule for `/`: its default backend, else 404.
pub(crate) fn fallback_location(s: &Server) -> Result<Directive> {
    let fallback = match &s.default_target {
        Target::Backend(name) => {
            let mut block = vec![directive("set", ["$proxy_upstream_name", name])?];
            block.extend(proxy(BackendProtocol::Http, &NextUpstream::default())?);
            block
        }
        Target::NotFound => vec![directive("return", ["404"])?],
    };
    Ok(directive("location", ["/"])?.block(fallback))
}

/// The file of the default certificate: the `--default-ssl-certificate` Secret's when it
/// loaded, else the generated one ([`Options::fallback_certificate`]).
pub(crate) fn default_certificate(context: &Context<'_>) -> Option<String> {
    match &context.model.default_certificate {
        DefaultCertificate::Secret(secret) => {
            let certificate = context.model.certificates.get(secret)?;
            Some(path(&context.options.certificate_path(secret, certificate)))
        }
        DefaultCertificate::Generated | DefaultCertificate::Refused(_) => {
            context.options.fallback_certificate.as_deref().map(path)
        }
    }
}

/// The end of a proxied location: the Lua access phase that picks the peer, when a failed
/// request is passed to another endpoint (ingress-nginx's `proxy_next_upstream*` lines; the
/// `grpc_` ones for gRPC, where the `proxy_` ones do nothing), and the pass to the balancer.
pub(crate) fn proxy(protocol: BackendProtocol, next: &NextUpstream) -> Result<Vec<Directive>> {
    proxy_within(protocol, next, &next.timeout.to_string())
}

/// [`proxy`], with `next_timeout` (an nginx time) bounding the time spent passing it on.
pub(crate) fn proxy_within(
    protocol: BackendProtocol,
    next: &NextUpstream,
    next_timeout: &str,
) -> Result<Vec<Directive>> {
    let module = match protocol {
        BackendProtocol::Http | BackendProtocol::Https => "proxy",
        BackendProtocol::Grpc => "grpc",
    };
    Ok(vec![
        lua_block("access_by_lua_block", lua::ACCESS)?,
        directive(&format!("{module}_next_upstream"), &next.conditions)?,
        directive(
            &format!("{module}_next_upstream_tries"),
            [next.tries.to_string()],
        )?,
        directive(&format!("{module}_next_upstream_timeout"), [next_timeout])?,
        match protocol {
            BackendProtocol::Http => directive("proxy_pass", ["http://ingress_balancer"])?,
            BackendProtocol::Https => directive("proxy_pass", ["https://ingress_balancer"])?,
            BackendProtocol::Grpc => directive("grpc_pass", ["grpc://ingress_balancer"])?,
        },
    ])
}

/// `location = PATH`, `location PATH` or `location ~ PATTERN`, without its block.
pub(crate) fn location_header(key: &LocationKey) -> Result<Directive> {
    match key {
        LocationKey::Exact(p) => directive("location", ["=", p.as_str()]),
        LocationKey::Prefix(p) => directive("location", [p.as_str()]),
        LocationKey::Regex(r) => directive("location", ["~", r.as_str()]),
    }
}

/// The `location` of `location`, an Ingress rule's.
pub(crate) fn location_block(context: &Context<'_>, location: &Location) -> Result<Directive> {
    let options = context.options;
    let header = location_header(&location.key)?;
    let a: &Annotations = &location.annotations;
    let mut body = Vec::new();
    for cidr in &a.deny_sources {
        body.push(directive("deny", [cidr])?);
    }
    if !a.allow_sources.is_empty() {
        for cidr in &a.allow_sources {
            body.push(directive("allow", [cidr])?);
        }
        body.push(directive("deny", ["all"])?);
    }
    // `set` first: a `rewrite … break` below ends the rewrite directives of the location.
    if let Target::Backend(name) = &location.target {
        body.push(directive("set", ["$proxy_upstream_name", name])?);
    }
    body.extend(metric_labels(location)?);
    let (rps_zone, conn_zone) = context.zones(&location.ingress);
    if let Some(rate) = a.limits.rps {
        let burst = rate.saturating_mul(a.limits.burst_multiplier);
        body.push(directive(
            "limit_req",
            [
                format!("zone={rps_zone}"),
                format!("burst={burst}"),
                "nodelay".into(),
            ],
        )?);
    }
    if let Some(connections) = a.limits.connections {
        body.push(directive(
            "limit_conn",
            [conn_zone, connections.to_string()],
        )?);
    }
    if location.ssl_redirect {
        let port = match options.https_port {
            443 => String::new(),
            port => format!(":{port}"),
        };
        body.push(
            directive("if", ["($scheme", "=", "http)"])?.block(vec![directive(
                "return",
                ["308".to_owned(), format!("https://$host{port}$request_uri")],
            )?]),
        );
    }
    if let Some(redirect) = &a.redirect {
        body.push(directive(
            "return",
            [redirect.code.to_string(), redirect.url.clone()],
        )?);
        return Ok(header.block(body));
    }
    if let Some(cors) = &a.cors {
        body.extend(cors_directives(cors)?);
        body.push(hsts_header()?);
    }
    if let Some(target) = &a.rewrite_target {
        let pattern = match &location.key {
            LocationKey::Regex(r) => r.clone(),
            // `(?s)`: the path nginx rewrites is decoded, and `.` would stop at a `%0A` in it,
            // leaving the rest of the path out of `$1` (rendering notes §6.4).
            LocationKey::Exact(_) | LocationKey::Prefix(_) => {
                format!("(?s)^{}(.*)", regex_escape(&location.rule.path))
            }
        };
        body.push(directive("rewrite", [pattern.as_str(), target, "break"])?);
    }
    let p = &a.proxy;
    let (connect, send, read) = match a.backend_protocol {
        BackendProtocol::Grpc => (
            "grpc_connect_timeout",
            "grpc_send_timeout",
            "grpc_read_timeout",
        ),
        _ => (
            "proxy_connect_timeout",
            "proxy_send_timeout",
            "proxy_read_timeout",
        ),
    };
    for (name, value) in [
        (connect, p.connect_timeout),
        (send, p.send_timeout),
        (read, p.read_timeout),
    ] {
        if let Some(seconds) = value {
            body.push(directive(name, [format!("{seconds}s")])?);
        }
    }
    if let Some(size) = &p.body_size {
        body.push(directive("client_max_body_size", [size])?);
    }
    if let Some(buffering) = p.buffering {
        body.push(directive(
            "proxy_buffering",
            [if buffering { "on" } else { "off" }],
        )?);
    }
    match &location.target {
        Target::Backend(_) => body.extend(proxy(a.backend_protocol, &p.next_upstream)?),
        Target::NotFound => body.push(directive("return", ["404"])?),
    }
    Ok(header.block(body))
}

/// The variables the log phase labels request metrics with, named as ingress-nginx's: the
/// location's Ingress, its Service and port (from the backend name `namespace/service:port`)
/// and the Ingress path.
fn metric_labels(location: &Location) -> Result<Vec<Directive>> {
    let (namespace, ingress) = location.ingress.split_once('/').unwrap_or(("", ""));
    let (service, port) = match &location.target {
        Target::Backend(name) => name
            .split_once('/')
            .and_then(|(_, rest)| rest.rsplit_once(':'))
            .unwrap_or(("", "")),
        Target::NotFound => ("", ""),
    };
    [
        ("$namespace", namespace),
        ("$ingress_name", ingress),
        ("$service_name", service),
        ("$service_port", port),
        // `set` reads `$` as a variable: a regex path's `$` is written as `${literal_dollar}`.
        (
            "$location_path",
            &location.rule.path.replace('$', "${literal_dollar}"),
        ),
    ]
    .into_iter()
    .map(|(name, value)| directive("set", [name, value]))
    .collect()
}

/// A literal path as a PCRE (the path's characters are allow-listed; only these are special).
pub(crate) fn regex_escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    for c in path.chars() {
        if ".+*?()|[]^$\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn cors_directives(cors: &Cors) -> Result<Vec<Directive>> {
    let mut out = Vec::new();
    let origin = if cors.allow_origins.iter().any(|o| o == "*") {
        "*".to_owned()
    } else {
        let alternatives: Vec<String> = cors
            .allow_origins
            .iter()
            .map(|o| regex_escape(o).replace("://\\*\\.", "://[^.]+\\."))
            .collect();
        out.push(directive("set", ["$cors_origin", ""])?);
        out.push(
            directive(
                "if",
                [
                    "($http_origin".to_owned(),
                    "~".to_owned(),
                    format!("^({})$)", alternatives.join("|")),
                ],
            )?
            .block(vec![directive("set", ["$cors_origin", "$http_origin"])?]),
        );
        "$cors_origin".to_owned()
    };
    let mut headers = vec![
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Allow-Methods", cors.allow_methods.clone()),
        ("Access-Control-Allow-Headers", cors.allow_headers.clone()),
        ("Access-Control-Max-Age", cors.max_age.to_string()),
    ];
    if cors.allow_credentials {
        headers.push(("Access-Control-Allow-Credentials", "true".into()));
    }
    if let Some(expose) = &cors.expose_headers {
        headers.push(("Access-Control-Expose-Headers", expose.clone()));
    }
    let add =
        |(name, value): &(&str, String)| directive("add_header", [*name, value.as_str(), "always"]);
    let mut preflight: Vec<Directive> = headers.iter().map(add).collect::<Result<_>>()?;
    preflight.push(directive("return", ["204"])?);
    out.push(directive("if", ["($request_method", "=", "OPTIONS)"])?.block(preflight));
    for h in &headers {
        out.push(add(h)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Options {
        Options {
            prefix: PathBuf::from("/prefix"),
            listen_address: "0.0.0.0".into(),
            http_port: 8080,
            https_port: 8443,
            workers: "1".into(),
            modules_dir: None,
            fallback_certificate: None,
            gateway_addresses: None,
        }
    }

    /// The conf of a model with one TLS host.
    fn text() -> String {
        let model = Model {
            servers: vec![Server {
                host: Host::Exact("web.example.com".into()),
                certificate: Some("ns/web".into()),
                default_tls: false,
                default_target: Target::NotFound,
                locations: Vec::new(),
            }],
            certificates: [(
                "ns/web".to_owned(),
                crate::model::Certificate {
                    cert: b"CERT".to_vec(),
                    key: b"KEY".to_vec(),
                },
            )]
            .into(),
            ..Model::default()
        };
        render(&model, &options()).unwrap()
    }

    fn has(line: &str) {
        let text = text();
        assert!(
            text.lines().any(|l| l.trim() == line),
            "no `{line}` in:\n{text}"
        );
    }

    /// The conf of a model with one host whose `/` is proxied with `annotations`.
    fn proxied(annotations: Annotations) -> String {
        let location = Location {
            key: LocationKey::Prefix("/".into()),
            rule: crate::paths::PathRule {
                kind: crate::paths::Kind::Prefix,
                path: "/".into(),
            },
            ingress: "ns/web".into(),
            target: Target::Backend("ns/web:80".into()),
            ssl_redirect: false,
            annotations: annotations.into(),
        };
        let model = Model {
            servers: vec![Server {
                host: Host::Exact("web.example.com".into()),
                certificate: None,
                default_tls: false,
                default_target: Target::NotFound,
                locations: vec![location],
            }],
            ..Model::default()
        };
        render(&model, &options()).unwrap()
    }

    fn lines(text: &str) -> Vec<&str> {
        text.lines().map(str::trim).collect()
    }

    #[test]
    fn a_failed_endpoint_passes_the_request_on_as_ingress_nginx_does() {
        let text = proxied(Annotations::default());
        let lines = lines(&text);
        for line in [
            "proxy_next_upstream error timeout;",
            "proxy_next_upstream_tries 3;",
            "proxy_next_upstream_timeout 0;",
        ] {
            assert!(lines.contains(&line), "no `{line}` in:\n{text}");
        }
        let text = proxied(Annotations {
            backend_protocol: BackendProtocol::Grpc,
            proxy: crate::annotations::Proxy {
                next_upstream: NextUpstream {
                    conditions: vec!["error", "http_503"],
                    tries: 2,
                    timeout: 5,
                },
                ..Default::default()
            },
            ..Annotations::default()
        });
        let lines = self::lines(&text);
        for line in [
            "grpc_next_upstream error http_503;",
            "grpc_next_upstream_tries 2;",
            "grpc_next_upstream_timeout 5;",
            "grpc_pass grpc://ingress_balancer;",
        ] {
            assert!(lines.contains(&line), "no `{line}` in:\n{text}");
        }
        assert!(!lines.iter().any(|l| l.starts_with("proxy_next_upstream")));
    }

    #[test]
    fn server_names_bucket_fits_the_longest_exact_host() {
        let with = |hosts: &[Host]| Model {
            servers: hosts
                .iter()
                .map(|host| Server {
                    host: host.clone(),
                    certificate: None,
                    default_tls: false,
                    default_target: Target::NotFound,
                    locations: Vec::new(),
                })
                .collect(),
            ..Model::default()
        };
        let exact = |len: usize| Host::Exact("a".repeat(len));
        assert_eq!(server_names_bucket(&with(&[])), 256);
        // 8 + (238 + 2) + 8 = 256 bytes: the last length 256 holds.
        assert_eq!(server_names_bucket(&with(&[exact(10), exact(238)])), 256);
        assert_eq!(server_names_bucket(&with(&[exact(239)])), 512);
        assert_eq!(server_names_bucket(&with(&[exact(253), exact(3)])), 512);
        // Wildcards are regexes in server_name, not hashed.
        let wildcard = Host::Wildcard("b".repeat(251));
        assert_eq!(server_names_bucket(&with(&[wildcard])), 256);
        let text = render(&with(&[exact(253)]), &options()).unwrap();
        assert!(lines(&text).contains(&"server_names_hash_bucket_size 512;"));
    }

    /// Rendering notes §6.4: the `rewrite-target` pattern of a Prefix path reads the decoded
    /// path dot-all, so that a `%0A` in it does not cut the rest of the path from `$1`.
    #[test]
    fn rewrite_target_reads_a_decoded_newline() {
        let text = proxied(Annotations {
            rewrite_target: Some("/new/$1".into()),
            ..Annotations::default()
        });
        let rewrite: Vec<&str> = lines(&text)
            .into_iter()
            .filter(|l| l.starts_with("rewrite "))
            .collect();
        assert_eq!(rewrite, ["rewrite (?s)^/(.*) /new/$1 break;"], "{text}");
    }

    #[test]
    fn websocket_upgrades_pass_through() {
        has("map $http_upgrade $connection_upgrade {");
        has("default upgrade;");
        has("\"\" \"\";");
        has("proxy_http_version 1.1;");
        has("proxy_set_header Upgrade $http_upgrade;");
        has("proxy_set_header Connection $connection_upgrade;");
    }

    #[test]
    fn tls_1_2_and_1_3_with_ingress_nginx_ciphers_and_http2() {
        has("ssl_protocols TLSv1.2 TLSv1.3;");
        has(&format!("ssl_ciphers {};", crate::configmap::SSL_CIPHERS));
        has("ssl_prefer_server_ciphers on;");
        has("listen 0.0.0.0:8443 ssl http2 default_server;");
        has("listen 0.0.0.0:8443 ssl http2;");
    }

    #[test]
    fn access_log_on_stdout_in_upstreaminfo_and_errors_on_stderr() {
        has("error_log stderr notice;");
        has("access_log /dev/stdout upstreaminfo;");
        has(&format!(
            "log_format upstreaminfo \"{}\";",
            crate::configmap::LOG_FORMAT_UPSTREAM.replace('"', "\\\"")
        ));
        has("set $proxy_upstream_name -;");
        assert!(!text().contains("logs/error.log"));
    }

    #[test]
    fn forwarded_headers_and_request_id() {
        has("map $http_x_request_id $req_id {");
        has("default $http_x_request_id;");
        has("\"\" $request_id;");
        has("map $pass_server_port $pass_port {");
        has("8443 443;");
        for (name, value) in [
            ("X-Request-ID", "$req_id"),
            ("X-Real-IP", "$remote_addr"),
            ("X-Forwarded-For", "$remote_addr"),
            ("X-Forwarded-Host", "$best_http_host"),
            ("X-Forwarded-Port", "$pass_port"),
            ("X-Forwarded-Proto", "$pass_access_scheme"),
            ("X-Forwarded-Scheme", "$pass_access_scheme"),
            ("X-Scheme", "$pass_access_scheme"),
        ] {
            has(&format!("proxy_set_header {name} {value};"));
            has(&format!("grpc_set_header {name} {value};"));
        }
        has("grpc_set_header Host $best_http_host;");
        assert!(!text().contains("grpc_set_header Upgrade"));
        assert!(!text().contains("grpc_set_header Connection"));
    }

    #[test]
    fn request_metrics_labels_stub_status_and_flush_timer() {
        use crate::paths::{Kind, PathRule};
        let location = Location {
            key: LocationKey::Regex("/a$host".into()),
            rule: PathRule {
                kind: Kind::Regex,
                path: "/a$host".into(),
            },
            ingress: "ns/web".into(),
            target: Target::Backend("ns/svc:http".into()),
            ssl_redirect: false,
            annotations: std::sync::Arc::default(),
        };
        let model = Model {
            servers: vec![
                Server {
                    host: Host::Exact("web.example.com".into()),
                    certificate: None,
                    default_tls: false,
                    default_target: Target::NotFound,
                    locations: vec![location],
                },
                Server {
                    host: Host::Wildcard("example.org".into()),
                    certificate: None,
                    default_tls: false,
                    default_target: Target::NotFound,
                    locations: Vec::new(),
                },
            ],
            ..Model::default()
        };
        let text = render(&model, &options()).unwrap();
        for line in [
            "set $ingress_host web.example.com;",
            "set $ingress_host *.example.org;",
            "set $namespace ns;",
            "set $ingress_name web;",
            "set $service_name svc;",
            "set $service_port http;",
            // A `$` of the path is no variable.
            "set $location_path \"/a${literal_dollar}host\";",
            "geo $literal_dollar {",
            "default \"$\";",
            "location = /nginx_status {",
            "stub_status;",
        ] {
            assert!(
                text.lines()
                    .any(|l| l.trim() == line || l.trim() == line.replace('$', "\\$")),
                "no `{line}` in:\n{text}"
            );
        }
        assert!(text.contains("init_worker_by_lua_block"));
    }
}
