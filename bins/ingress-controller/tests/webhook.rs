//! Hostile AdmissionReviews (CVE-2025-1974: ingress-nginx's webhook let an unauthenticated
//! review make `nginx -t` load a library through an injected directive): whatever a review's
//! annotations, hosts, paths, Secret and Service names carry, the configuration the webhook
//! gives `nginx -t` holds only directives the renderer writes, with every file path in the
//! private prefix; or the review is refused with a message. Read back with nginx-conf's
//! parser, which splits text as nginx does.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ingress_controller::class::Selection;
use ingress_controller::objects::Objects;
use ingress_controller::render;
use ingress_controller::webhook::check::{Prepared, prepare};
use ingress_controller::webhook::review::{self, Subject, Verdict};
use nginx_conf::{Block, End};
use serde_json::{Value, json};

const MODULES: &str = "/usr/lib/nginx/modules";
/// The private prefix of the check (see `webhook::check`); only rendered here, never created.
const PRIVATE: &str = "/var/lib/ingress-controller/webhook/check-1-0/validate";

/// An IngressClass of ours, Service `demo/web`, and TLS Secret `demo/tls` (the fixture pair).
fn objects() -> Objects {
    let indent = |pem: &str| {
        pem.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    };
    let yaml = format!(
        "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {{name: nginx}}\n\
         spec: {{controller: k8s.io/ingress-nginx}}\n\
         ---\napiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: demo}}\n\
         spec: {{ports: [{{name: http, port: 80}}]}}\n\
         ---\napiVersion: v1\nkind: Secret\nmetadata: {{name: tls, namespace: demo}}\n\
         type: kubernetes.io/tls\nstringData:\n  tls.crt: |\n{}  tls.key: |\n{}",
        indent(include_str!("fixtures/tls.crt")),
        indent(include_str!("fixtures/tls.key")),
    );
    let mut objects = Objects::default();
    objects.add_yaml(&yaml).unwrap();
    objects
}

fn options() -> render::Options {
    render::Options {
        prefix: PathBuf::from("/var/lib/ingress-controller"),
        listen_address: "0.0.0.0".into(),
        http_port: 80,
        https_port: 443,
        workers: "auto".into(),
        modules_dir: Some(PathBuf::from(MODULES)),
        fallback_certificate: None,
        gateway_addresses: None,
    }
}

fn selection() -> Selection {
    Selection::default()
}

/// The fields of a candidate Ingress a review controls.
#[derive(Clone)]
struct Fields {
    name: String,
    host: String,
    path: String,
    path_type: String,
    service: String,
    port_name: Option<String>,
    secret: String,
    annotations: Vec<(String, String)>,
}

impl Default for Fields {
    fn default() -> Self {
        Self {
            name: "web".into(),
            host: "web.example.com".into(),
            path: "/".into(),
            path_type: "Prefix".into(),
            service: "web".into(),
            port_name: None,
            secret: "tls".into(),
            annotations: Vec::new(),
        }
    }
}

/// The body of an AdmissionReview of `fields` as an Ingress.
fn review_body(fields: &Fields) -> Vec<u8> {
    let port = match &fields.port_name {
        Some(name) => json!({"name": name}),
        None => json!({"number": 80}),
    };
    let annotations: serde_json::Map<String, Value> = fields
        .annotations
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    let ingress = json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": fields.name, "namespace": "demo", "annotations": annotations},
        "spec": {
            "ingressClassName": "nginx",
            "tls": [{"hosts": [fields.host], "secretName": fields.secret}],
            "rules": [{"host": fields.host, "http": {"paths": [{
                "path": fields.path, "pathType": fields.path_type,
                "backend": {"service": {"name": fields.service, "port": port}},
            }]}}],
        },
    });
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0b3c", "operation": "CREATE", "namespace": "demo", "name": fields.name,
            "kind": {"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"},
            "object": ingress,
        },
    }))
    .unwrap()
}

/// What the webhook does with `body` before nginx: the text `nginx -t` would read, or the
/// refusal's message.
fn outcome(body: &[u8]) -> Result<String, String> {
    let request = review::parse(body)?;
    let ingress = match request.subject() {
        Subject::Ingress(ingress) => ingress,
        Subject::Decided(Verdict::Refused(message)) => return Err(message),
        Subject::Decided(other) => panic!("decided without a check: {other:?}"),
    };
    match prepare(&objects(), &selection(), &options(), *ingress) {
        Prepared::Model(model) => {
            Ok(render::render(&model, &options().with_prefix(PRIVATE.into())).unwrap())
        }
        Prepared::Refused(message) => Err(message),
        Prepared::Skipped => panic!("skipped"),
    }
}

/// Every directive of `block`, nested ones included.
fn walk<'a>(block: &'a Block, out: &mut Vec<&'a nginx_conf::Directive>) {
    for directive in &block.directives {
        out.push(directive);
        if let End::Block(inner) = &directive.end {
            walk(inner, out);
        }
    }
}

fn args(directive: &nginx_conf::Directive) -> Vec<String> {
    directive
        .arg_words()
        .map(|w| String::from_utf8_lossy(&w.value()).into_owned())
        .collect()
}

/// The Lua code of the configuration (the renderer's own, whatever the objects).
fn lua_bodies(text: &str) -> BTreeSet<Vec<u8>> {
    let tree = nginx_conf::parse(text.as_bytes()).unwrap();
    let mut all = Vec::new();
    walk(&tree, &mut all);
    all.iter()
        .filter_map(|d| match &d.end {
            End::Lua(body) => Some(body.as_bytes().to_vec()),
            _ => None,
        })
        .collect()
}

/// The directives that name files, and where theirs must be.
fn assert_only_ours(text: &str, baseline_lua: &BTreeSet<Vec<u8>>, what: &str) {
    let tree = nginx_conf::parse(text.as_bytes())
        .unwrap_or_else(|e| panic!("{what}: the text does not read back: {e}"));
    let mut all = Vec::new();
    walk(&tree, &mut all);
    let private = Path::new(PRIVATE);
    let under_private =
        |arg: &str| Path::new(arg).starts_with(private) && !arg.split('/').any(|part| part == "..");
    let mut modules = Vec::new();
    for directive in &all {
        let name = String::from_utf8_lossy(&directive.name.value()).into_owned();
        let args = args(directive);
        assert!(
            !matches!(
                name.as_str(),
                "include"
                    | "ssl_engine"
                    | "env"
                    | "user"
                    | "lua_package_path"
                    | "lua_package_cpath"
                    | "ssl_password_file"
                    | "ssl_client_certificate"
                    | "ssl_trusted_certificate"
                    | "auth_basic_user_file"
                    | "root"
                    | "alias"
            ),
            "{what}: {name} {args:?}"
        );
        assert!(
            !name.ends_with("_by_lua") && !name.ends_with("_by_lua_file"),
            "{what}: {name}"
        );
        match name.as_str() {
            "load_module" => modules.extend(args),
            "pid"
            | "client_body_temp_path"
            | "proxy_temp_path"
            | "fastcgi_temp_path"
            | "uwsgi_temp_path"
            | "scgi_temp_path"
            | "ssl_certificate"
            | "ssl_certificate_key" => {
                assert_eq!(args.len(), 1, "{what}: {name} {args:?}");
                assert!(under_private(&args[0]), "{what}: {name} {args:?}");
            }
            "error_log" => assert_eq!(args, ["stderr", "notice"], "{what}"),
            "access_log" => assert!(
                args == ["/dev/stdout", "upstreaminfo"] || args == ["off"],
                "{what}: {args:?}"
            ),
            "listen" => {
                for arg in args.iter().filter(|a| a.starts_with("unix:")) {
                    assert_eq!(arg, &format!("unix:{PRIVATE}/control.sock"), "{what}");
                }
            }
            _ => {}
        }
        if let End::Lua(body) = &directive.end {
            assert!(
                baseline_lua.contains(body.as_bytes()),
                "{what}: Lua of {name}"
            );
        }
    }
    assert_eq!(
        modules,
        [
            format!("{MODULES}/ndk_http_module.so"),
            format!("{MODULES}/ngx_http_lua_module.so")
        ],
        "{what}"
    );
}

/// What hostile reviews carry, after CVE-2025-1974 and the annotation CVEs before it.
fn payloads() -> Vec<String> {
    let mut out: Vec<String> = [
        ";",
        "}",
        "{",
        "a\nb",
        "a\r\nb",
        "load_module /tmp/x.so;",
        "x;\nload_module /tmp/x.so;\n#",
        "x;\n}\nssl_engine /tmp/evil.so;\n#",
        "http://x/#;\n}}}\nssl_engine ../../../../proc/1/fd/3;#", // check-paths: ignore
        "/x; include /etc/passwd;",
        "\"; include /etc/passwd; #",
        "'; include '/etc/passwd'; #",
        "$(id)",
        "`id`",
        "${jndi:x}",
        "# nothing after",
        "a\0b",
        "\\\"; }",
        "/proc/self/fd/0",
        "/tmp/x.so",
        "../../etc/passwd", // check-paths: ignore
        "*.example.com; include /etc/passwd",
        "web.example.com\nssl_engine x",
        "é\u{2028}\u{feff}",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    out.push("A".repeat(70_000));
    out.push(format!("{}\nload_module /tmp/x.so;", "/".repeat(4096)));
    out
}

/// The annotations a value may reach: the typed ones, and refused ones (snippets, auth-url…).
const ANNOTATIONS: &[&str] = &[
    "rewrite-target",
    "permanent-redirect",
    "temporal-redirect",
    "proxy-body-size",
    "proxy-read-timeout",
    "backend-protocol",
    "whitelist-source-range",
    "cors-allow-origin",
    "cors-allow-headers",
    "canary-by-header",
    "session-cookie-name",
    "session-cookie-path",
    "upstream-hash-by",
    "use-regex",
    "configuration-snippet",
    "server-snippet",
    "auth-url",
    "auth-tls-match-cn",
    "mirror-target",
];

/// Every slot of a review a payload can go to.
fn hostile_reviews(value: &str) -> Vec<(String, Fields)> {
    let base = Fields::default();
    let mut out = vec![
        (
            "host".to_owned(),
            Fields {
                host: value.into(),
                ..base.clone()
            },
        ),
        (
            "path".to_owned(),
            Fields {
                path: format!("/{value}"),
                ..base.clone()
            },
        ),
        (
            "raw path".to_owned(),
            Fields {
                path: value.into(),
                ..base.clone()
            },
        ),
        (
            "regex path".to_owned(),
            Fields {
                path: format!("/{value}"),
                path_type: "ImplementationSpecific".into(),
                annotations: vec![(
                    "nginx.ingress.kubernetes.io/use-regex".into(),
                    "true".into(),
                )],
                ..base.clone()
            },
        ),
        (
            "secretName".to_owned(),
            Fields {
                secret: value.into(),
                ..base.clone()
            },
        ),
        (
            "service".to_owned(),
            Fields {
                service: value.into(),
                ..base.clone()
            },
        ),
        (
            "port name".to_owned(),
            Fields {
                port_name: Some(value.into()),
                ..base.clone()
            },
        ),
        (
            "name".to_owned(),
            Fields {
                name: value.into(),
                ..base.clone()
            },
        ),
        (
            "annotation name".to_owned(),
            Fields {
                annotations: vec![(format!("nginx.ingress.kubernetes.io/{value}"), "x".into())],
                ..base.clone()
            },
        ),
    ];
    for annotation in ANNOTATIONS {
        out.push((
            format!("annotation {annotation}"),
            Fields {
                annotations: vec![(
                    format!("nginx.ingress.kubernetes.io/{annotation}"),
                    value.into(),
                )],
                ..base.clone()
            },
        ));
    }
    out
}

#[test]
fn a_plain_review_renders_and_passes_the_checks() {
    let text = outcome(&review_body(&Fields::default())).unwrap();
    let lua = lua_bodies(&text);
    assert!(!lua.is_empty());
    assert_only_ours(&text, &lua, "plain");
    // The Secret the cluster holds is the one certificate nginx -t reads, in the private prefix.
    assert!(
        text.contains(&format!("ssl_certificate {PRIVATE}/certs/demo_tls-")),
        "{text}"
    );
}

#[test]
fn hostile_reviews_render_only_our_directives_or_are_refused() {
    let lua = lua_bodies(&outcome(&review_body(&Fields::default())).unwrap());
    let (mut rendered, mut refused) = (0, 0);
    for value in payloads() {
        for (slot, fields) in hostile_reviews(&value) {
            let what = format!("{slot} = {:?}", value.chars().take(60).collect::<String>());
            match outcome(&review_body(&fields)) {
                Ok(text) => {
                    assert_only_ours(&text, &lua, &what);
                    rendered += 1;
                }
                Err(message) => {
                    assert!(
                        !message.trim().is_empty(),
                        "{what}: refused without a message"
                    );
                    refused += 1;
                }
            }
        }
    }
    // Most of them are refused, with a message; the rest render as harmless arguments.
    assert!(
        refused > rendered && rendered > 0,
        "{refused} refused, {rendered} rendered"
    );
}

#[test]
fn the_check_sees_a_smuggled_directive() {
    let text = outcome(&review_body(&Fields::default())).unwrap();
    let lua = lua_bodies(&text);
    for smuggled in [
        "include /etc/passwd;\n",
        "ssl_engine /tmp/evil.so;\n",
        "load_module /tmp/x.so;\n",
        "pid /tmp/x.pid;\n",
    ] {
        let text = format!("{smuggled}{text}");
        let caught = std::panic::catch_unwind(|| assert_only_ours(&text, &lua, "smuggled"));
        assert!(caught.is_err(), "{smuggled}");
    }
}

#[test]
fn published_payloads_are_refused_with_a_message() {
    let cases = [
        // CVE-2025-1974 by way of CVE-2025-24514 (auth-url) and -1097 (auth-tls-match-cn):
        // ssl_engine loading a library uploaded beside the webhook.
        ("auth-url", "http://x/#;\n}}}\nssl_engine /proc/1/fd/3;\n#"),
        (
            "auth-tls-match-cn",
            "CN=abc #(\n){}\n }}}\nssl_engine /tmp/evil.so;#",
        ),
        (
            "mirror-target",
            "http://x/$request_uri;\n}\nssl_engine /tmp/evil.so;#",
        ),
        ("configuration-snippet", "load_module /tmp/x.so;"),
        (
            "permanent-redirect",
            "https://x.com;\n}\ninclude /etc/passwd;\n#",
        ),
    ];
    for (annotation, payload) in cases {
        let fields = Fields {
            annotations: vec![(
                format!("nginx.ingress.kubernetes.io/{annotation}"),
                payload.into(),
            )],
            ..Fields::default()
        };
        let message = outcome(&review_body(&fields)).unwrap_err();
        assert!(message.contains(annotation), "{annotation}: {message}");
    }
}

#[test]
fn its_secret_other_classes_and_its_stored_version_do_not_refuse() {
    // The Secret does not exist yet (cert-manager writes it after the Ingress): allowed; the
    // problem stays an event.
    let missing = Fields {
        secret: "not-yet".into(),
        ..Fields::default()
    };
    assert!(outcome(&review_body(&missing)).is_ok());
    // An Ingress of another class is not reviewed, whatever it holds.
    let mut body: Value = serde_json::from_slice(&review_body(&Fields {
        annotations: vec![(
            "nginx.ingress.kubernetes.io/server-snippet".into(),
            "load_module /tmp/x.so;".into(),
        )],
        ..Fields::default()
    }))
    .unwrap();
    body["request"]["object"]["spec"]["ingressClassName"] = "other".into();
    let request = review::parse(&serde_json::to_vec(&body).unwrap()).unwrap();
    let Subject::Ingress(ingress) = request.subject() else {
        panic!("not an Ingress");
    };
    assert!(matches!(
        prepare(&objects(), &selection(), &options(), *ingress),
        Prepared::Skipped
    ));
    // The candidate replaces its stored version: an update of an Ingress keeps its paths.
    let mut stored = objects();
    let request = review::parse(&review_body(&Fields::default())).unwrap();
    let Subject::Ingress(ingress) = request.subject() else {
        panic!("not an Ingress");
    };
    let key = cluster_state::ObjectRef::from_meta(&ingress.metadata);
    stored
        .ingresses
        .insert(key, std::sync::Arc::new(*ingress.clone()));
    assert!(matches!(
        prepare(&stored, &selection(), &options(), *ingress),
        Prepared::Model(_)
    ));
}
