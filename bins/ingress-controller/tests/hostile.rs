//! Hostile values in object fields and annotations never change the rendered structure: the
//! configuration read back by nginx-conf has the shape it has for some valid or some refused
//! benign value of the same field. Plus the published ingress-nginx CVE payloads.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use cluster_state::gateway::{
    BackendObjectReference, CorsFilter, GrpcMethodMatch, GrpcRoute, GrpcRouteRule, Header,
    HeaderModifier, HttpPathModifier, HttpRequestRedirectFilter, HttpRoute, HttpRouteFilter,
    HttpRouteMatch, HttpUrlRewriteFilter, RequestMirror,
};
use ingress_controller::class::Selection;
use ingress_controller::objects::Objects;
use ingress_controller::{backends, model, render};
use k8s_openapi::api::networking::v1::Ingress;
use nginx_conf::{Block, End};
use proptest::prelude::*;

const BASE: &str = r#"
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: demo, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: ["10.0.0.1"]}]
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: demo}
type: kubernetes.io/tls
data:
  # tests/fixtures/tls.crt and tls.key: a certificate and its key, as TLS Secrets must hold.
  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURXekNDQWtPZ0F3SUJBZ0lVS0RycWRhSEVTcTZEQmVBTkFuRGRTNGpadk1Bd0RRWUpLb1pJaHZjTkFRRUwKQlFBd0dqRVlNQllHQTFVRUF3d1BkR3h6TG1WNFlXMXdiR1V1WTI5dE1DQVhEVEkyTVRFek1EQTROREUwTmxvWQpEekl4TWpZeE1UQTJNRGcwTVRRMldqQWFNUmd3RmdZRFZRUUREQTkwYkhNdVpYaGhiWEJzWlM1amIyMHdnZ0VpCk1BMEdDU3FHU0liM0RRRUJBUVVBQTRJQkR3QXdnZ0VLQW9JQkFRQ3BteFFUSzE3UXlEMngxczhxMWxPM1JHRUQKc2FaUy9IMTVwd0M5UTVnaFBGSVc2TXAzK0prZDJJbGFseHdaVThxZUZyVVhNYzV1UjY5eURFeXRWN2c0L1cwNQpybXdscnhBc1IzZ3dnMUpwTnE4QW9TNkRXNDZYa2JtcGtMS2lPTzZzNjFyYWhFYzRVY3o1Rzc0d3ZKY2kxRW02ClNFYXNINStpbzR1c2p1ZndiMnk3NTFDbGJRZnlIVWtSNDZ0Z2E4SndOdjlXeEhwVlMzVUdUaFhoM2ZsSFJlaHcKbGs0T3Fjemg3UTJaT1FhbWttUDJtNzgvNm9xdXM0RVc2KzJVVlhBaTA5WnZjejdncW56WXJwSy9zek9zY3hNLwo4SCt3eUJvSEMzWmRQMDJoNHBDK0trRTkwb093cnM4TVhLN2VHbHVCWDJ1Z2o3aktYQmo2VHh5ZDdsYzVBZ01CCkFBR2pnWll3Z1pNd0hRWURWUjBPQkJZRUZCRWxHL0VsUUs2S0ZPblg3cVFhdG5LUXhHVWhNQjhHQTFVZEl3UVkKTUJhQUZCRWxHL0VsUUs2S0ZPblg3cVFhdG5LUXhHVWhNQThHQTFVZEV3RUIvd1FGTUFNQkFmOHdRQVlEVlIwUgpCRGt3TjRJUGRHeHpMbVY0WVcxd2JHVXVZMjl0Z2hFcUxuUnNjeTVsZUdGdGNHeGxMbU52YllJUmJtOTBiSE11ClpYaGhiWEJzWlM1amIyMHdEUVlKS29aSWh2Y05BUUVMQlFBRGdnRUJBQ0Nmbytla2V6cUZTbHBFTTNSWENHY3cKOEx0SzFtNy9zdy9PNi9ndTNleWozYkVnWHMxSHFXbklQUU8xd1FBbEdhVHNiOWVMQ2I3YWdOZmZTVHhkTVRnTAp4MGw3a0xsU21yVWpUaFJ1eU01VW1NVjBjYTdnTGthb1hrcERnQitMS1VHL3VxaFpvdFJudWVza215R3BTSHU3CmtFcGdYMFhPR3doMjZ5V2lhYzhpZG02azI0Wk9HemhaU21ZSTcralNPcFdGQ2FEWUV1T3g5VXl5bjJIdThMV1AKVHd6blROalRtVEZmcTgrOXpUT2tTQTlyaUdGQ2xSTGQwTGtUWE9mYjNldGZSSnNjN1FMeUZGSEVFTDNqQmJuOQpPV2wvZXVLd1g3KzBwTFA5YmpaWmprRllpcjhOaUkyUGI2ZnEwbUFpaGdPUWh3bUg2Y2EwcGduTVFOZkxDdFk9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K
  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2QUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDQktZd2dnU2lBZ0VBQW9JQkFRQ3BteFFUSzE3UXlEMngKMXM4cTFsTzNSR0VEc2FaUy9IMTVwd0M5UTVnaFBGSVc2TXAzK0prZDJJbGFseHdaVThxZUZyVVhNYzV1UjY5eQpERXl0VjdnNC9XMDVybXdscnhBc1IzZ3dnMUpwTnE4QW9TNkRXNDZYa2JtcGtMS2lPTzZzNjFyYWhFYzRVY3o1Ckc3NHd2SmNpMUVtNlNFYXNINStpbzR1c2p1ZndiMnk3NTFDbGJRZnlIVWtSNDZ0Z2E4SndOdjlXeEhwVlMzVUcKVGhYaDNmbEhSZWh3bGs0T3Fjemg3UTJaT1FhbWttUDJtNzgvNm9xdXM0RVc2KzJVVlhBaTA5WnZjejdncW56WQpycEsvc3pPc2N4TS84SCt3eUJvSEMzWmRQMDJoNHBDK0trRTkwb093cnM4TVhLN2VHbHVCWDJ1Z2o3aktYQmo2ClR4eWQ3bGM1QWdNQkFBRUNnZ0VBSTJTRkwrcmhBbGlHNTFHWU1heEFGQUprN0V4cUZPOHpqK3RWc0NrbTJlaW8KaUxkVGFPMnJwaHJGcnUzUm8wZGxCTkJnUWRMVzdSUndmREFzNEE5cUZocHNiSmtGWUdmRHpEbXR6eEhZWkxSUQptS1VKKzhkalhpVyt4Sys1VnpqaU5adDNmaG9VY3FBL1VjeUVSODlUQ3FXYUxSRmdEaE1iVU9rb0FINWgwRDVZCndyVG05MDR5RVJTQlEvVFlTL0Z4NXY3eDg4VzdabzdrVUNtTGNwZWxkcm52SVZramVjNFlPYmw1eEloOTE2QlcKZGVHL2pKTndhMDJjRHduczdsSHNaVjljczIrdzd0T1ZuTnNrV2xUcXFCNnlqUUErMjk4T2kzNnNXbmxoS2FhdQp2WTRrd2NnMXpKREc3bkpuelhnRTlsNHUxdC9HQWN4cU5CWllnRDM1d1FLQmdRRHBJSnhvYUlJbjRUcUtTSFEyClIrWHd6c2NzbzR1WU43ZmpWOG1hRTBjTElnYlZjMVIwdjZ3dUh5MXhvMG1hdmFJMmVoa3JkNlZhaFBCSXNIdTgKZXRSK1hiMGdJYWxWbFpraUpIbjFaNE1ZeDNHYkhRdVcycFVrdWh1V0ZKZDgyNHB6YmZ1M1JYUlY0OE9qZnNIVQpoc2QzNHZTWmMyd3hrR0dsd3lvcE51NjhIUUtCZ1FDNlB3TytkQlJCZmlmMkhJSUZsMVJkeWlkQU1UNXdoZzljCkZxS0VIWm16R1ZvNEpCellSN0xJQlVmM3BWT2l0M3E3eUpSeUhwN3lDak95RDU3RDJmU213ZkxPejRwOEU4ekMKakZ1SEFRSkRPNis2MnkrUUxvUTZYUEFIV1BJc2hBSFpzaTF5aVJXaDErQ01GUnJaSlR3N0xiN1BGaTJMaWpNaApoRUdLMDlKRXpRS0JnQkdPQWhrZW5ZWnhRRjQvWEhqbDZ4dTZCbWVISFREbUtUTzJYWmo3a0tMMitmckN4MzVQCkhLRVFlZlNQcmpBM3pXbzZ3WUJ6YndFazk0OFJzdytiVkRyN3hnMFFXOWIwLytZQlJ5bkNsSzJkL3lFR0MrUmQKSzFQcnE3NGVhTlhmRmtyZzRrNkhyVjMyVzdvSkJvR0JjSzNIYWxIUHpqcmhPMmtuREJxMFp6L0ZBb0dBZWpHWgp6VHp2aFVDMkN6ME0rWW9kNmlNVnVZSVZpMUlKaGN1NytKNUxGenlNK3NTR3dFZmFQbTFvbUV3NklVbnNGb1ExCkVPS1NPZzhEZDlIVHduK2Zpa0U1Z3dLYncyaGlNVXBSU3JRWXZlL05EZlY4c1VZenJ1OEc5R3NoQ0ovYmJ1NzkKN21XT2NjN25Ia0ZDaWpGcDRSSFVYSjRhWjdEV2R5a0VyNGJtTUFrQ2dZQXdmSW5vbDZ1am1pWHZVSmRKSTF4TgpiRWRlWGduQm44UFFnSWdKUHVvYlFkdnNlMUxWRXRRVDhNL2dtY04xSzVXb1E2aEhjS3NiaU9QaFd3bk9zN2RoCm5CajNQeUNIMUZ4S0hkZWdsbjJwRWZzcHhRalVQS2pmVUgzUVVCazZxSS91WG1HTjlLcWY0WWZLSVpSK0JKOWMKVkRpeGhWb2QzWkMzZnRXUWNkZFZjZz09Ci0tLS0tRU5EIFBSSVZBVEUgS0VZLS0tLS0K
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: demo
  namespace: demo
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
spec:
  ingressClassName: nginx
  defaultBackend: {service: {name: web, port: {number: 80}}}
  tls: [{hosts: [demo.example.com], secretName: tls}]
  rules:
    - host: demo.example.com
      http:
        paths:
          - {path: /a, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
          - {path: /b, pathType: Exact, backend: {service: {name: web, port: {name: http}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: kube-node-net.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: demo}
spec:
  gatewayClassName: gw
  listeners:
    - {name: http, port: 80, protocol: HTTP, hostname: gw.example.com}
    - name: https
      port: 443
      protocol: HTTPS
      hostname: gw.example.com
      tls: {mode: Terminate, certificateRefs: [{name: tls}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: demo}
spec:
  parentRefs: [{name: gw}]
  hostnames: [gw.example.com]
  rules:
    - matches:
        - path: {type: Exact, value: /x}
        - path: {type: PathPrefix, value: /p}
          method: GET
          headers: [{name: X-A, value: one}]
          queryParams: [{name: q, value: v}]
      backendRefs: [{name: web, port: 80}]
"#;

fn base() -> Objects {
    static BASE_OBJECTS: OnceLock<Objects> = OnceLock::new();
    BASE_OBJECTS
        .get_or_init(|| {
            let mut objects = Objects::default();
            objects.add_yaml(BASE).unwrap();
            objects
        })
        .clone()
}

fn options() -> render::Options {
    render::Options {
        prefix: PathBuf::from("/tmp/ingress-test"),
        listen_address: "127.0.0.1".into(),
        http_port: 8080,
        https_port: 8443,
        workers: "1".into(),
        modules_dir: Some("/usr/lib/nginx/modules".into()),
        fallback_certificate: None,
        gateway_addresses: None,
    }
}

fn selection() -> Selection {
    Selection::default()
}

/// The structure of a configuration: names, argument counts and how each directive ends,
/// without argument values. The `location`s of a block are compared as a set (sorted): where
/// a path sorts among the others is no structure.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    Directive(Vec<u8>, usize, Vec<Shape>),
    Lua(Vec<u8>, usize),
}

fn shape(block: &Block) -> Vec<Shape> {
    let mut out: Vec<Shape> = Vec::new();
    let mut locations: Vec<Shape> = Vec::new();
    for d in &block.directives {
        let name = d.name.value().into_owned();
        let shape = match &d.end {
            End::Semicolon => Shape::Directive(name, d.args.len(), Vec::new()),
            End::Block(inner) => Shape::Directive(name, d.args.len(), shape(inner)),
            End::Lua(body) => Shape::Lua(name, body.as_bytes().len()),
        };
        if matches!(&shape, Shape::Directive(n, _, _) if n.as_slice() == b"location") {
            locations.push(shape);
        } else {
            out.push(shape);
        }
    }
    locations.sort();
    out.extend(locations);
    out
}

/// Renders `objects`, checks that the text reads back as the tree that was built, and
/// returns its shape and the backend table.
fn rendered(objects: &Objects) -> (Vec<Shape>, String) {
    let model = model::build(objects, &selection());
    let tree = render::tree(&model, &options()).unwrap();
    let text = render::render(&model, &options()).unwrap();
    let reread = nginx_conf::parse(text.as_bytes()).unwrap();
    assert_eq!(shape(&reread), shape(&tree));
    let table = backends::table(&model);
    assert_eq!(
        table.lines().count(),
        model.backends.len() + model.gateway.splits.len()
    );
    for line in table.lines() {
        let mut words = line.split(' ');
        let name = words.next().unwrap();
        assert!(!name.is_empty() && !name.contains('='), "{line:?}");
        for word in words {
            let (key, value) = word.split_once('=').unwrap();
            assert!(key.bytes().all(|b| b.is_ascii_alphanumeric()), "{line:?}");
            assert!(!value.contains('='), "{line:?}");
        }
    }
    (shape(&reread), table)
}

fn ingress(objects: &mut Objects) -> &mut Ingress {
    // BASE holds one Ingress.
    let ingress = objects.ingresses.values_mut().next_back().unwrap();
    std::sync::Arc::make_mut(ingress)
}

type Slot = fn(&mut Objects, &str);

fn annotate(objects: &mut Objects, name: &str, value: &str) {
    ingress(objects)
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(format!("nginx.ingress.kubernetes.io/{name}"), value.into());
}

fn paths(objects: &mut Objects) -> &mut Vec<k8s_openapi::api::networking::v1::HTTPIngressPath> {
    let spec = ingress(objects).spec.as_mut().unwrap();
    let rule = &mut spec.rules.as_mut().unwrap()[0];
    &mut rule.http.as_mut().unwrap().paths
}

/// Every field a value from an object reaches, with a valid and a refused benign value.
const SLOTS: &[(&str, Slot, &str, &str)] = &[
    (
        "ingress name",
        |o, v| ingress(o).metadata.name = Some(v.into()),
        "demo2",
        "Demo2",
    ),
    (
        "host",
        |o, v| {
            ingress(o).spec.as_mut().unwrap().rules.as_mut().unwrap()[0].host = Some(v.into());
        },
        "demo.example.com",
        "Bad.example.com",
    ),
    (
        "prefix path",
        |o, v| paths(o)[0].path = Some(v.into()),
        "/z",
        "/a b",
    ),
    (
        "exact path",
        |o, v| paths(o)[1].path = Some(v.into()),
        "/z",
        "/a b",
    ),
    (
        "path type",
        |o, v| paths(o)[0].path_type = v.into(),
        "Prefix",
        "Bad",
    ),
    (
        "service name",
        |o, v| {
            paths(o)[0].backend.service.as_mut().unwrap().name = v.into();
        },
        "other",
        "Other",
    ),
    (
        "port name",
        |o, v| {
            let service = paths(o)[1].backend.service.as_mut().unwrap();
            service.port.as_mut().unwrap().name = Some(v.into());
        },
        "web",
        "Web",
    ),
    (
        "secret name",
        |o, v| {
            let spec = ingress(o).spec.as_mut().unwrap();
            spec.tls.as_mut().unwrap()[0].secret_name = Some(v.into());
        },
        "tls",
        "Tls",
    ),
    (
        "tls host",
        |o, v| {
            let spec = ingress(o).spec.as_mut().unwrap();
            spec.tls.as_mut().unwrap()[0].hosts = Some(vec![v.into()]);
        },
        "demo.example.com",
        "Bad.example.com",
    ),
    (
        "class annotation",
        |o, v| {
            ingress(o).spec.as_mut().unwrap().ingress_class_name = None;
            ingress(o)
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert("kubernetes.io/ingress.class".into(), v.into());
        },
        "nginx",
        "other",
    ),
    (
        "rewrite-target",
        |o, v| annotate(o, "rewrite-target", v),
        "/$1",
        "x",
    ),
    (
        "backend-protocol",
        |o, v| annotate(o, "backend-protocol", v),
        "HTTPS",
        "FCGI",
    ),
    (
        "proxy-read-timeout",
        |o, v| annotate(o, "proxy-read-timeout", v),
        "30",
        "x",
    ),
    (
        "proxy-body-size",
        |o, v| annotate(o, "proxy-body-size", v),
        "8m",
        "x",
    ),
    (
        "proxy-buffering",
        |o, v| annotate(o, "proxy-buffering", v),
        "off",
        "x",
    ),
    (
        "proxy-next-upstream",
        |o, v| annotate(o, "proxy-next-upstream", v),
        "error timeout http_502",
        "x",
    ),
    (
        "proxy-next-upstream-tries",
        |o, v| annotate(o, "proxy-next-upstream-tries", v),
        "2",
        "x",
    ),
    (
        "proxy-next-upstream-timeout",
        |o, v| annotate(o, "proxy-next-upstream-timeout", v),
        "10",
        "x",
    ),
    (
        "allowlist",
        |o, v| annotate(o, "allowlist-source-range", v),
        "10.0.0.0/8",
        "x",
    ),
    (
        "denylist",
        |o, v| annotate(o, "denylist-source-range", v),
        "10.0.0.0/8",
        "x",
    ),
    (
        "permanent-redirect",
        |o, v| annotate(o, "permanent-redirect", v),
        "https://x.org/",
        "x",
    ),
    (
        "temporal-redirect",
        |o, v| annotate(o, "temporal-redirect", v),
        "https://x.org/",
        "x",
    ),
    ("limit-rps", |o, v| annotate(o, "limit-rps", v), "5", "x"),
    (
        "limit-connections",
        |o, v| annotate(o, "limit-connections", v),
        "5",
        "x",
    ),
    (
        "cors-allow-origin",
        |o, v| annotate(o, "cors-allow-origin", v),
        "https://a.org",
        "x",
    ),
    (
        "cors-allow-methods",
        |o, v| annotate(o, "cors-allow-methods", v),
        "GET",
        "x",
    ),
    (
        "cors-allow-headers",
        |o, v| annotate(o, "cors-allow-headers", v),
        "X-A",
        "x y",
    ),
    (
        "cors-expose-headers",
        |o, v| annotate(o, "cors-expose-headers", v),
        "X-A",
        "x y",
    ),
    (
        "ssl-redirect",
        |o, v| annotate(o, "ssl-redirect", v),
        "false",
        "x",
    ),
    (
        "affinity cookie",
        |o, v| {
            annotate(o, "affinity", "cookie");
            annotate(o, "session-cookie-name", v);
        },
        "route",
        "a b",
    ),
    (
        "upstream-hash-by",
        |o, v| annotate(o, "upstream-hash-by", v),
        "$request_uri",
        "x",
    ),
    (
        "snippet",
        |o, v| annotate(o, "configuration-snippet", v),
        "x",
        "y",
    ),
];

/// The HTTPRoute of BASE.
fn route(objects: &mut Objects) -> &mut HttpRoute {
    let route = objects.http_routes.values_mut().next_back().unwrap();
    std::sync::Arc::make_mut(route)
}

/// The first rule's match `index` of the HTTPRoute of BASE.
fn route_match(objects: &mut Objects, index: usize) -> &mut HttpRouteMatch {
    let rules = route(objects).spec.rules.as_mut().unwrap();
    &mut rules[0].matches.as_mut().unwrap()[index]
}

/// Every field of a Gateway API object a value reaches, with a valid and a refused benign
/// value.
const GATEWAY_SLOTS: &[(&str, Slot, &str, &str)] = &[
    (
        "listener hostname",
        |o, v| {
            let gateway = o.gateways.values_mut().next_back().unwrap();
            let gateway = std::sync::Arc::make_mut(gateway);
            for listener in &mut gateway.spec.listeners {
                listener.hostname = Some(v.into());
            }
        },
        "gw.example.com",
        "bad_name.example.com",
    ),
    (
        "route hostname",
        |o, v| route(o).spec.hostnames = Some(vec![v.into()]),
        "gw.example.com",
        "other.example.com",
    ),
    (
        "route name",
        |o, v| {
            let key = o.http_routes.keys().next_back().unwrap().clone();
            let mut moved = o.http_routes.remove(&key).unwrap();
            std::sync::Arc::make_mut(&mut moved).metadata.name = Some(v.into());
            o.http_routes
                .insert(cluster_state::ObjectRef::new("demo", v), moved);
        },
        "route2",
        "Route2",
    ),
    (
        "route exact path",
        |o, v| route_match(o, 0).path.as_mut().unwrap().value = Some(v.into()),
        "/z",
        "/a b",
    ),
    (
        "route prefix path",
        |o, v| route_match(o, 1).path.as_mut().unwrap().value = Some(v.into()),
        "/z",
        "/a b",
    ),
    (
        "route regex path",
        |o, v| {
            let path = route_match(o, 0).path.as_mut().unwrap();
            path.type_ = Some("RegularExpression".into());
            path.value = Some(v.into());
        },
        "/c(.*)",
        "/c(",
    ),
    (
        "header name",
        |o, v| route_match(o, 1).headers.as_mut().unwrap()[0].name = v.into(),
        "X-B",
        "X_B",
    ),
    (
        "header value",
        |o, v| route_match(o, 1).headers.as_mut().unwrap()[0].value = v.into(),
        "two",
        "a\nb",
    ),
    (
        "header regex value",
        |o, v| {
            let header = &mut route_match(o, 1).headers.as_mut().unwrap()[0];
            header.type_ = Some("RegularExpression".into());
            header.value = v.into();
        },
        "t[a-z]+",
        "t(",
    ),
    (
        "query regex value",
        |o, v| {
            let param = &mut route_match(o, 1).query_params.as_mut().unwrap()[0];
            param.type_ = Some("RegularExpression".into());
            param.value = v.into();
        },
        "w|x",
        "w(",
    ),
    (
        "query name",
        |o, v| route_match(o, 1).query_params.as_mut().unwrap()[0].name = v.into(),
        "r",
        "",
    ),
    (
        "query value",
        |o, v| route_match(o, 1).query_params.as_mut().unwrap()[0].value = v.into(),
        "w",
        "a\nb",
    ),
    (
        "method",
        |o, v| route_match(o, 1).method = Some(v.into()),
        "POST",
        "post",
    ),
    (
        "backend name",
        |o, v| {
            let rules = route(o).spec.rules.as_mut().unwrap();
            rules[0].backend_refs.as_mut().unwrap()[0].name = v.into();
        },
        "web",
        "nope",
    ),
];

/// The first rule of BASE's route with `filter` as its only filter.
fn set_filter(objects: &mut Objects, filter: HttpRouteFilter) {
    let rules = route(objects).spec.rules.as_mut().unwrap();
    rules[0].filters = Some(vec![filter]);
}

/// A header modifier with `set`, `add` and `remove`.
fn modifier(set: &[(&str, &str)], add: &[(&str, &str)], remove: &[&str]) -> HeaderModifier {
    let headers = |list: &[(&str, &str)]| {
        let list = list.iter().map(|(name, value)| Header {
            name: (*name).into(),
            value: (*value).into(),
        });
        Some(list.collect())
    };
    HeaderModifier {
        set: headers(set),
        add: headers(add),
        remove: Some(remove.iter().map(|n| (*n).to_owned()).collect()),
    }
}

fn request_headers(objects: &mut Objects, modifier: HeaderModifier) {
    set_filter(
        objects,
        HttpRouteFilter {
            type_: "RequestHeaderModifier".into(),
            request_header_modifier: Some(modifier),
            ..Default::default()
        },
    );
}

fn response_headers(objects: &mut Objects, modifier: HeaderModifier) {
    set_filter(
        objects,
        HttpRouteFilter {
            type_: "ResponseHeaderModifier".into(),
            response_header_modifier: Some(modifier),
            ..Default::default()
        },
    );
}

/// A path modifier of `type_` with `value`.
fn path_modifier(type_: &str, value: &str) -> HttpPathModifier {
    let full = type_ == "ReplaceFullPath";
    HttpPathModifier {
        type_: type_.into(),
        replace_full_path: full.then(|| value.into()),
        replace_prefix_match: (!full).then(|| value.into()),
    }
}

fn redirect(objects: &mut Objects, redirect: HttpRequestRedirectFilter) {
    set_filter(
        objects,
        HttpRouteFilter {
            type_: "RequestRedirect".into(),
            request_redirect: Some(redirect),
            ..Default::default()
        },
    );
}

fn rewrite(objects: &mut Objects, rewrite: HttpUrlRewriteFilter) {
    set_filter(
        objects,
        HttpRouteFilter {
            type_: "URLRewrite".into(),
            url_rewrite: Some(rewrite),
            ..Default::default()
        },
    );
}

/// The first backendRef of BASE's route with `filter` of its own (S-F.9).
fn set_backend_filter(objects: &mut Objects, filter: HttpRouteFilter) {
    let rules = route(objects).spec.rules.as_mut().unwrap();
    rules[0].backend_refs.as_mut().unwrap()[0].filters = Some(vec![filter]);
}

/// The first backendRef of BASE's route with a RequestHeaderModifier of its own (S-F.9).
fn backend_request_headers(objects: &mut Objects, modifier: HeaderModifier) {
    set_backend_filter(
        objects,
        HttpRouteFilter {
            type_: "RequestHeaderModifier".into(),
            request_header_modifier: Some(modifier),
            ..Default::default()
        },
    );
}

/// The first backendRef of BASE's route with a ResponseHeaderModifier of its own (S-F.9).
fn backend_response_headers(objects: &mut Objects, modifier: HeaderModifier) {
    set_backend_filter(
        objects,
        HttpRouteFilter {
            type_: "ResponseHeaderModifier".into(),
            response_header_modifier: Some(modifier),
            ..Default::default()
        },
    );
}

/// A CORS filter with `origin`, `method`, `header` allowed and `exposed` exposed.
fn cors(objects: &mut Objects, origin: &str, method: &str, header: &str, exposed: &str) {
    set_filter(
        objects,
        HttpRouteFilter {
            type_: "CORS".into(),
            cors: Some(CorsFilter {
                allow_origins: Some(vec![origin.into()]),
                allow_methods: Some(vec![method.into()]),
                allow_headers: Some(vec![header.into()]),
                expose_headers: Some(vec![exposed.into()]),
                allow_credentials: Some(true),
                max_age: None,
            }),
            ..Default::default()
        },
    );
}

/// A RequestMirror to Service `name` port 80 in `namespace` (the route's when `None`).
fn mirror(objects: &mut Objects, name: &str, namespace: Option<&str>) {
    set_filter(
        objects,
        HttpRouteFilter {
            type_: "RequestMirror".into(),
            request_mirror: Some(RequestMirror {
                backend_ref: BackendObjectReference {
                    name: name.into(),
                    namespace: namespace.map(Into::into),
                    port: Some(80),
                    ..Default::default()
                },
                percent: Some(50),
                fraction: None,
            }),
            ..Default::default()
        },
    );
}

/// Every field of an HTTPRoute filter a value reaches (rendering notes §8), on the first rule
/// of BASE's route, with a valid and a refused benign value.
const FILTER_SLOTS: &[(&str, Slot, &str, &str)] = &[
    (
        "request header set name",
        |o, v| request_headers(o, modifier(&[(v, "x")], &[], &[])),
        "X-F",
        "X_F",
    ),
    (
        "request header set value",
        |o, v| request_headers(o, modifier(&[("X-F", v)], &[], &[])),
        "x",
        "a\nb",
    ),
    (
        "request header add name",
        |o, v| request_headers(o, modifier(&[], &[(v, "x")], &[])),
        "X-F",
        "X_F",
    ),
    (
        "request header add value",
        |o, v| request_headers(o, modifier(&[], &[("X-F", v)], &[])),
        "x",
        "a\nb",
    ),
    (
        "request header remove",
        |o, v| request_headers(o, modifier(&[], &[], &[v])),
        "X-F",
        "X_F",
    ),
    (
        "response header set name",
        |o, v| response_headers(o, modifier(&[(v, "x")], &[], &[])),
        "X-F",
        "X_F",
    ),
    (
        "response header set value",
        |o, v| response_headers(o, modifier(&[("X-F", v)], &[], &[])),
        "x",
        "a\nb",
    ),
    (
        "response header add value",
        |o, v| response_headers(o, modifier(&[], &[("X-F", v)], &[])),
        "x",
        "a\nb",
    ),
    (
        "response header remove",
        |o, v| response_headers(o, modifier(&[], &[], &[v])),
        "X-F",
        "X_F",
    ),
    (
        "redirect hostname",
        |o, v| {
            redirect(
                o,
                HttpRequestRedirectFilter {
                    hostname: Some(v.into()),
                    ..Default::default()
                },
            );
        },
        "example.org",
        "Example.org",
    ),
    (
        "redirect full path",
        |o, v| {
            redirect(
                o,
                HttpRequestRedirectFilter {
                    path: Some(path_modifier("ReplaceFullPath", v)),
                    ..Default::default()
                },
            );
        },
        "/new",
        "/a b",
    ),
    (
        "redirect prefix path",
        |o, v| {
            redirect(
                o,
                HttpRequestRedirectFilter {
                    path: Some(path_modifier("ReplacePrefixMatch", v)),
                    ..Default::default()
                },
            );
        },
        "/new",
        "/a b",
    ),
    (
        "rewrite hostname",
        |o, v| {
            rewrite(
                o,
                HttpUrlRewriteFilter {
                    hostname: Some(v.into()),
                    path: None,
                },
            );
        },
        "example.org",
        "Example.org",
    ),
    (
        "rewrite full path",
        |o, v| {
            rewrite(
                o,
                HttpUrlRewriteFilter {
                    hostname: None,
                    path: Some(path_modifier("ReplaceFullPath", v)),
                },
            );
        },
        "/new",
        "/a b",
    ),
    (
        "rewrite prefix path",
        |o, v| {
            rewrite(
                o,
                HttpUrlRewriteFilter {
                    hostname: None,
                    path: Some(path_modifier("ReplacePrefixMatch", v)),
                },
            );
        },
        "/new",
        "/a b",
    ),
    (
        "backendRef header set name",
        |o, v| backend_request_headers(o, modifier(&[(v, "x")], &[], &[])),
        "X-F",
        "X_F",
    ),
    (
        "backendRef header set value",
        |o, v| backend_request_headers(o, modifier(&[("X-F", v)], &[], &[])),
        "x",
        "a\nb",
    ),
    (
        "backendRef header add value",
        |o, v| backend_request_headers(o, modifier(&[], &[("X-F", v)], &[])),
        "x",
        "a\nb",
    ),
    (
        "backendRef response header set name",
        |o, v| backend_response_headers(o, modifier(&[(v, "x")], &[], &[])),
        "X-F",
        "X_F",
    ),
    (
        "backendRef response header set value",
        |o, v| backend_response_headers(o, modifier(&[("X-F", v)], &[], &[])),
        "x",
        "a\nb",
    ),
    (
        "CORS origin",
        |o, v| cors(o, v, "GET", "X-H", "X-E"),
        "https://*.example.org",
        "https://a b",
    ),
    (
        "CORS method",
        |o, v| cors(o, "*", v, "X-H", "X-E"),
        "PUT",
        "put",
    ),
    (
        "CORS allowed header",
        |o, v| cors(o, "*", "GET", v, "X-E"),
        "X-H",
        "X_H",
    ),
    (
        "CORS exposed header",
        |o, v| cors(o, "*", "GET", "X-H", v),
        "X-E",
        "X_E",
    ),
    (
        "mirror backend name",
        |o, v| mirror(o, v, None),
        "web",
        "nope",
    ),
    (
        "mirror backend namespace",
        |o, v| mirror(o, "web", Some(v)),
        "demo",
        "other",
    ),
];

/// BASE's Gateway with a plaintext listener for GRPCRoutes alone (its port then speaks h2c),
/// and a GRPCRoute on it with a conditional match and header filters.
const GRPC: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: demo}
spec:
  gatewayClassName: gw
  listeners:
    - {name: http, port: 80, protocol: HTTP, hostname: gw.example.com}
    - name: https
      port: 443
      protocol: HTTPS
      hostname: gw.example.com
      tls: {mode: Terminate, certificateRefs: [{name: tls}]}
    - {name: grpc, port: 9000, protocol: HTTP, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: demo}
spec:
  parentRefs: [{name: gw, sectionName: grpc}]
  rules:
    - matches:
        - method: {service: pkg.Svc, method: Echo}
          headers: [{name: X-G, value: one}]
      filters:
        - type: RequestHeaderModifier
          requestHeaderModifier: {set: [{name: X-S, value: s}], add: [{name: X-Add, value: a}]}
        - type: ResponseHeaderModifier
          responseHeaderModifier: {add: [{name: X-R, value: r}]}
      backendRefs: [{name: web, port: 80}]
"#;

/// The GRPCRoute of [`GRPC`], added to `objects` (with its Gateway) the first time.
fn grpc_route(objects: &mut Objects) -> &mut GrpcRoute {
    if objects.grpc_routes.is_empty() {
        objects.add_yaml(GRPC).unwrap();
    }
    let route = objects.grpc_routes.values_mut().next_back().unwrap();
    std::sync::Arc::make_mut(route)
}

/// The first rule of the GRPCRoute of [`GRPC`].
fn grpc_rule(objects: &mut Objects) -> &mut GrpcRouteRule {
    &mut grpc_route(objects).spec.rules.as_mut().unwrap()[0]
}

/// The method match of the first rule of the GRPCRoute of [`GRPC`].
fn grpc_method(objects: &mut Objects) -> &mut GrpcMethodMatch {
    let rule = grpc_rule(objects);
    let matches = rule.matches.as_mut().unwrap();
    matches[0].method.as_mut().unwrap()
}

/// The filter `index` of the first rule of the GRPCRoute of [`GRPC`].
fn grpc_filter(objects: &mut Objects, index: usize) -> &mut HeaderModifier {
    let filter = &mut grpc_rule(objects).filters.as_mut().unwrap()[index];
    filter
        .request_header_modifier
        .as_mut()
        .or(filter.response_header_modifier.as_mut())
        .unwrap()
}

/// Every field of a GRPCRoute a value reaches (S-GR.1, S-GR.4), with a valid and a refused
/// benign value.
const GRPC_SLOTS: &[(&str, Slot, &str, &str)] = &[
    (
        "grpc service",
        |o, v| grpc_method(o).service = Some(v.into()),
        "pkg.Other",
        "pkg Svc",
    ),
    (
        "grpc method",
        |o, v| grpc_method(o).method = Some(v.into()),
        "Other",
        "a b",
    ),
    (
        "grpc regex method",
        |o, v| {
            let method = grpc_method(o);
            method.type_ = Some("RegularExpression".into());
            method.method = Some(v.into());
        },
        "Ec.*",
        "Ec(",
    ),
    (
        "grpc header value",
        |o, v| {
            let rule = grpc_rule(o);
            let matches = rule.matches.as_mut().unwrap();
            matches[0].headers.as_mut().unwrap()[0].value = v.into();
        },
        "two",
        "a\nb",
    ),
    (
        "grpc request header set value",
        |o, v| grpc_filter(o, 0).set.as_mut().unwrap()[0].value = v.into(),
        "x",
        "a\nb",
    ),
    (
        "grpc request header add value",
        |o, v| grpc_filter(o, 0).add.as_mut().unwrap()[0].value = v.into(),
        "x",
        "a\nb",
    ),
    (
        "grpc response header add value",
        |o, v| grpc_filter(o, 1).add.as_mut().unwrap()[0].value = v.into(),
        "x",
        "a\nb",
    ),
];

/// Regex paths: the Ingress opts in, and the path becomes a pattern.
fn regex_slot(objects: &mut Objects, value: &str) {
    annotate(objects, "use-regex", "true");
    paths(objects)[0].path_type = "ImplementationSpecific".into();
    paths(objects)[0].path = Some(value.into());
}

fn slots() -> Vec<(&'static str, Slot, &'static str, &'static str)> {
    let mut slots = SLOTS.to_vec();
    slots.push(("regex path", regex_slot, "/c(.*)", "/c("));
    slots.extend_from_slice(GATEWAY_SLOTS);
    slots.extend_from_slice(FILTER_SLOTS);
    slots.extend_from_slice(GRPC_SLOTS);
    slots
}

fn shape_with(set: Slot, value: &str) -> Vec<Shape> {
    let mut objects = base();
    set(&mut objects, value);
    rendered(&objects).0
}

/// Other valid values of a slot with a structure of their own: a Gateway Exact path ending
/// in `/` gets the `= /p` location beside it (S-PM.3 allows bytes the Ingress refuses, so
/// hostile values can be valid paths).
/// A ReplacePrefixMatch rewrite to `/` (or nothing) is written as two `rewrite`s.
const MORE_VALID: &[(&str, &str)] = &[("route exact path", "/z/"), ("rewrite prefix path", "")];

/// The shapes for each slot's benign values (valid, refused, [`MORE_VALID`]), computed once.
fn baselines() -> &'static [Vec<Vec<Shape>>] {
    static BASELINES: OnceLock<Vec<Vec<Vec<Shape>>>> = OnceLock::new();
    BASELINES.get_or_init(|| {
        slots()
            .into_iter()
            .map(|(what, set, valid, refused)| {
                let more = MORE_VALID.iter().filter(|(w, _)| *w == what);
                [valid, refused]
                    .into_iter()
                    .chain(more.map(|(_, v)| *v))
                    .map(|v| shape_with(set, v))
                    .collect()
            })
            .collect()
    })
}

/// Checks one hostile value in every slot.
fn check_everywhere(value: &str) {
    for ((what, set, _, _), benign) in slots().into_iter().zip(baselines()) {
        let hostile = shape_with(set, value);
        assert!(
            benign.contains(&hostile),
            "{what}: {value:?} changed the structure"
        );
    }
}

/// Pieces of hostile text: nginx and Lua syntax, escapes, and the CVE payloads' shapes.
fn hostile() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        ";",
        "{",
        "}",
        "\"",
        "'",
        "\n",
        "\r",
        "$",
        "#",
        "\\",
        " ",
        "\t",
        "${x}",
        "$host",
        "}}}\nssl_engine /tmp/evil.so;",
        "content_by_lua_block { os.execute('id') }",
        "]]--",
        "/",
        "a",
        ".",
        "(",
        ")",
        "*",
        "=",
        ",",
        ":",
        "1",
    ]);
    (
        prop::collection::vec(pieces, 1..12),
        prop::option::of(0_usize..5000),
    )
        .prop_map(|(pieces, long)| {
            let mut s = pieces.concat();
            if let Some(n) = long {
                s.push_str(&"x".repeat(n));
            }
            s
        })
        // Plain values such as `/` or `a` are legitimately different valid values.
        .prop_filter("a hostile byte", |s| {
            s.contains([
                ';', '{', '}', '"', '\'', '\n', '\r', '$', '#', '\\', ' ', '\t',
            ])
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn hostile_values_never_change_the_structure(value in hostile()) {
        check_everywhere(&value);
    }
}

/// The published payloads (`docs/ingress.md` §5) in the annotations they used, and in every
/// other field.
#[test]
fn cve_payloads() {
    let cases: &[(&str, &str, &str)] = &[
        // CVE-2021-25742: snippets reading the service-account token.
        (
            "CVE-2021-25742",
            "configuration-snippet",
            "content_by_lua_block { ngx.say(io.open('/var/run/secrets/kubernetes.io/serviceaccount/token'):read('*a')) }",
        ),
        // CVE-2021-25746: directive injection through annotation values.
        (
            "CVE-2021-25746",
            "rewrite-target",
            "/\"; } location /x { return 200 \"pwned",
        ),
        // CVE-2023-5043: annotation injection to command execution.
        (
            "CVE-2023-5043",
            "server-snippet",
            "location /x { content_by_lua_block { os.execute('id') } }",
        ),
        // CVE-2023-5044: permanent-redirect injection.
        (
            "CVE-2023-5044",
            "permanent-redirect",
            "https://x.com;\n}\nlocation /pwn {\ncontent_by_lua_block { os.execute('id') }\n}\n#",
        ),
        // CVE-2025-24514: auth-url.
        (
            "CVE-2025-24514",
            "auth-url",
            "http://x/#;\n}}}\nssl_engine /tmp/evil.so;\n#",
        ),
        // CVE-2025-1097: auth-tls-match-cn.
        (
            "CVE-2025-1097",
            "auth-tls-match-cn",
            "CN=abc #(\n){}\n }}}\nssl_engine /tmp/evil.so;#",
        ),
        // CVE-2025-1098: mirror-target / mirror-host.
        (
            "CVE-2025-1098",
            "mirror-target",
            "http://x/$request_uri;\n}\nssl_engine /tmp/evil.so;#",
        ),
        (
            "CVE-2025-1098",
            "mirror-host",
            "x;\n}\nssl_engine /tmp/evil.so;#",
        ),
    ];
    let (baseline, _) = rendered(&base());
    for (cve, annotation, payload) in cases {
        let mut objects = base();
        annotate(&mut objects, annotation, payload);
        let model = model::build(&objects, &selection());
        assert!(
            model
                .problems
                .iter()
                .any(|p| p.message.contains(annotation)),
            "{cve}: {annotation} not reported: {:?}",
            model.problems
        );
        assert_eq!(rendered(&objects).0, baseline, "{cve}");
        let text = render::render(&model, &options()).unwrap();
        assert!(!text.contains("ssl_engine /tmp"), "{cve}");
        assert!(!text.contains("os.execute"), "{cve}");
        // CVE-2025-1974 (IngressNightmare) chained these into `nginx -t`: the same payloads in
        // every other field never reach the configuration as directives either.
        check_everywhere(payload);
    }
}

/// The Gateway slots reach the configuration: BASE's Gateway is served, its route's
/// conditional match goes through the dispatcher, and its split is in the table.
#[test]
fn the_gateway_of_base_is_rendered() {
    let model = model::build(&base(), &selection());
    let text = render::render(&model, &options()).unwrap();
    for line in [
        "server_name gw.example.com;",
        "listen 127.0.0.1:8443 ssl http2;",
        "location = /x {",
        "location /p/ {",
        "set $proxy_upstream_name gw:demo/route#0;",
        "set $gw_candidates a=0,m=GET,h=x-a:one,q=q:v;",
        "location @gw0 {",
    ] {
        assert!(
            text.lines().any(|l| l.trim() == line),
            "no `{line}` in:\n{text}"
        );
    }
    assert!(backends::table(&model).contains("gw:demo/route#0 split=demo/web:80*1\n"));
}

/// The GRPCRoute slots reach the configuration: its plaintext port speaks h2c, its call goes
/// through the dispatcher to `grpc_pass`, with `grpc_set_header`, and the server answers
/// gRPC statuses (S-GR.3, S-GR.5).
#[test]
fn the_grpc_route_is_rendered() {
    let mut objects = base();
    grpc_route(&mut objects);
    let model = model::build(&objects, &selection());
    let text = render::render(&model, &options()).unwrap();
    for line in [
        "listen 127.0.0.1:9000 http2 default_server;",
        "location = /pkg.Svc/Echo {",
        "set $gw_candidates a=0,h=x-g:one;",
        "set $proxy_upstream_name gw:grpc:demo/grpc#0;",
        "grpc_set_header X-S s;",
        "grpc_set_header X-Add $gw_add_0;",
        "add_header X-R r always;",
        "grpc_pass grpc://ingress_balancer;",
        "error_page 404 = @gw_grpc_unimplemented;",
        "error_page 500 502 503 504 = @gw_grpc_unavailable;",
        "add_trailer grpc-status 12 always;",
        "add_trailer grpc-status 14 always;",
    ] {
        assert!(
            text.lines().any(|l| l.trim() == line),
            "no `{line}` in:\n{text}"
        );
    }
    assert!(!text.contains("grpc_set_header Upgrade"));
    // The HTTP/1 sockets speak no h2c.
    assert!(
        text.contains("listen 127.0.0.1:8080 default_server;"),
        "{text}"
    );
}
