//! A route's backendRefs resolved to Service ports (semantics S-BR.1), and the route's
//! `ResolvedRefs` condition from them (S-BR.2).

use cluster_state::gateway::{BackendRef, GROUP, GrpcRoute, HttpRoute};
use cluster_state::k8s::Resource;
use cluster_state::k8s::api::core::v1::Service;
use cluster_state::{ObjectRef, Objects};

use super::Fault;
use super::grants::{self, From, To};

/// A backendRef that resolved: the Service and its port number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backend {
    /// The Service.
    pub service: ObjectRef,
    /// The Service port, by number.
    pub port: i32,
}

/// The objects a backendRef is resolved against.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// Every Service.
    pub services: &'a Objects<Service>,
    /// Every ReferenceGrant.
    pub grants: &'a Objects<cluster_state::gateway::ReferenceGrant>,
}

/// Resolves `backend`, written in a route of kind `route_kind` in `route_namespace`, in the
/// order of S-BR.1: kind, then permission, then existence and port, then the Service's type
/// and the port's `appProtocol`.
///
/// # Errors
///
/// The route's `ResolvedRefs` reason and a message: `InvalidKind` (not a core Service, or an
/// ExternalName Service), `RefNotPermitted` (another namespace without a grant),
/// `BackendNotFound` (no such Service or port), `UnsupportedProtocol` (`kubernetes.io/h2c`,
/// but for a GRPCRoute).
pub fn resolve<F>(
    backend: &BackendRef<F>,
    route_kind: &str,
    route_namespace: &str,
    context: Context<'_>,
) -> Result<Backend, Fault> {
    let name = backend.name.as_str();
    if backend.group() != "" || backend.kind() != "Service" {
        return Err(Fault::new(
            "InvalidKind",
            format!(
                "backendRef {name}: kind {}/{} is not supported, only core Services",
                backend.group(),
                backend.kind()
            ),
        ));
    }
    let namespace = backend.namespace.as_deref().unwrap_or(route_namespace);
    let from = From {
        group: GROUP,
        kind: route_kind,
        namespace: route_namespace,
    };
    let to = To {
        group: "",
        kind: Service::KIND,
        namespace,
        name,
    };
    if !grants::permits(context.grants, from, to) {
        return Err(Fault::new(
            "RefNotPermitted",
            format!("backendRef {namespace}/{name}: no ReferenceGrant in {namespace} permits it"),
        ));
    }
    let service = ObjectRef::new(namespace, name);
    let Some(found) = context.services.get(&service) else {
        return Err(Fault::new(
            "BackendNotFound",
            format!("backendRef {service}: Service not found"),
        ));
    };
    let Some(port) = backend.port else {
        return Err(Fault::new(
            "BackendNotFound",
            format!("backendRef {service}: a Service backendRef needs a port"),
        ));
    };
    let spec = found.spec.as_ref();
    if spec.and_then(|s| s.type_.as_deref()) == Some("ExternalName") {
        return Err(Fault::new(
            "InvalidKind",
            format!("backendRef {service}: ExternalName Services are not supported"),
        ));
    }
    let service_port = spec
        .and_then(|s| s.ports.as_ref())
        .and_then(|ports| ports.iter().find(|p| p.port == port));
    let Some(service_port) = service_port else {
        return Err(Fault::new(
            "BackendNotFound",
            format!("backendRef {service}: the Service has no port {port}"),
        ));
    };
    // A GRPCRoute's backends are reached over h2c (`grpc_pass`, S-GR.5): that appProtocol is
    // what they speak; an HTTPRoute's are reached over HTTP/1.1.
    let h2c = service_port.app_protocol.as_deref() == Some("kubernetes.io/h2c");
    if h2c && route_kind != GrpcRoute::KIND {
        return Err(Fault::new(
            "UnsupportedProtocol",
            format!("backendRef {service}: appProtocol kubernetes.io/h2c is not supported"),
        ));
    }
    Ok(Backend { service, port })
}

/// The `ResolvedRefs` (S-BR.2) of `route` of kind `kind` (an HTTPRoute, or the HTTPRoute a
/// GRPCRoute is served as, whose grants must name GRPCRoute): `Ok` when every backendRef of
/// every rule resolves (a rule without backendRefs is no failure), and the backend of every
/// RequestMirror (S-F.6); otherwise the reason of the first failure, in rule order, each
/// rule's backendRefs then its mirrors, with a message listing every failure.
///
/// # Errors
///
/// As above.
pub fn route_refs(route: &HttpRoute, kind: &str, context: Context<'_>) -> Result<(), Fault> {
    let namespace = route.metadata.namespace.as_deref().unwrap_or_default();
    let faults: Vec<Fault> = route
        .spec
        .rules()
        .iter()
        .flat_map(|rule| {
            let refs = rule.backend_refs().iter();
            let refs = refs.filter_map(|backend| resolve(backend, kind, namespace, context).err());
            let mirrors = super::mirror::mirror_refs(rule);
            refs.chain(mirrors.filter_map(|backend| {
                super::mirror::resolve(backend, kind, namespace, context).err()
            }))
        })
        .collect();
    match faults.first() {
        None => Ok(()),
        Some(first) => {
            let messages: Vec<&str> = faults.iter().map(|f| f.message.as_str()).collect();
            Err(Fault::new(first.reason, messages.join("; ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cluster_state::gateway::{
        BackendObjectReference, HttpBackendRef, HttpRouteFilter, HttpRouteRule, HttpRouteSpec,
        ReferenceGrant, ReferenceGrantFrom, ReferenceGrantSpec, ReferenceGrantTo, RequestMirror,
    };
    use cluster_state::k8s::api::core::v1::{ServicePort, ServiceSpec};
    use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn service(
        namespace: &str,
        name: &str,
        ports: &[(i32, Option<&str>)],
    ) -> (ObjectRef, Arc<Service>) {
        let service = Service {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(ServiceSpec {
                ports: Some(
                    ports
                        .iter()
                        .map(|(port, app)| ServicePort {
                            port: *port,
                            app_protocol: app.map(Into::into),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        };
        (ObjectRef::new(namespace, name), Arc::new(service))
    }

    fn services() -> Objects<Service> {
        let mut external = service("infra", "external", &[(80, None)]);
        Arc::make_mut(&mut external.1).spec.as_mut().unwrap().type_ = Some("ExternalName".into());
        Objects::from([
            service("infra", "web", &[(8080, None)]),
            service("infra", "h2c", &[(80, Some("kubernetes.io/h2c"))]),
            service("backend", "web", &[(8080, None)]),
            external,
        ])
    }

    fn backend(namespace: Option<&str>, name: &str, port: Option<i32>) -> HttpBackendRef {
        HttpBackendRef {
            namespace: namespace.map(Into::into),
            name: name.into(),
            port,
            ..Default::default()
        }
    }

    fn reason(
        backend: &HttpBackendRef,
        grants: &Objects<ReferenceGrant>,
    ) -> Result<Backend, &'static str> {
        let services = services();
        let context = Context {
            services: &services,
            grants,
        };
        resolve(backend, "HTTPRoute", "infra", context).map_err(|f| f.reason)
    }

    #[test]
    fn s_br_1_resolution_order() {
        let none = Objects::new();
        let ok = reason(&backend(None, "web", Some(8080)), &none);
        assert_eq!(
            ok,
            Ok(Backend {
                service: ObjectRef::new("infra", "web"),
                port: 8080
            })
        );
        let mut kind = backend(None, "web", Some(8080));
        kind.kind = Some("UnknownKind".into());
        assert_eq!(reason(&kind, &none), Err("InvalidKind"));
        let mut group = backend(None, "web", Some(8080));
        group.group = Some("example.com".into());
        assert_eq!(reason(&group, &none), Err("InvalidKind"));
        // Permission comes before existence: a missing Service elsewhere is RefNotPermitted.
        let cross = backend(Some("backend"), "web", Some(8080));
        assert_eq!(reason(&cross, &none), Err("RefNotPermitted"));
        let ghost = backend(Some("backend"), "ghost", Some(8080));
        assert_eq!(reason(&ghost, &none), Err("RefNotPermitted"));
        assert_eq!(
            reason(&backend(None, "ghost", Some(80)), &none),
            Err("BackendNotFound")
        );
        assert_eq!(
            reason(&backend(None, "web", Some(81)), &none),
            Err("BackendNotFound")
        );
        assert_eq!(
            reason(&backend(None, "web", None), &none),
            Err("BackendNotFound")
        );
        assert_eq!(
            reason(&backend(None, "external", Some(80)), &none),
            Err("InvalidKind")
        );
        assert_eq!(
            reason(&backend(None, "h2c", Some(80)), &none),
            Err("UnsupportedProtocol")
        );
    }

    #[test]
    fn s_br_1_a_grant_permits_the_cross_namespace_backend() {
        let grant = ReferenceGrant {
            metadata: Default::default(),
            spec: ReferenceGrantSpec {
                from: vec![ReferenceGrantFrom {
                    group: GROUP.into(),
                    kind: "HTTPRoute".into(),
                    namespace: "infra".into(),
                }],
                to: vec![ReferenceGrantTo {
                    group: String::new(),
                    kind: "Service".into(),
                    name: None,
                }],
            },
        };
        let grants = Objects::from([(ObjectRef::new("backend", "g"), Arc::new(grant))]);
        let cross = backend(Some("backend"), "web", Some(8080));
        assert!(reason(&cross, &grants).is_ok());
    }

    #[test]
    fn s_br_2_first_failure_names_the_reason_and_every_failure_is_listed() {
        let route = |rules: Vec<HttpRouteRule>| HttpRoute {
            metadata: ObjectMeta {
                namespace: Some("infra".into()),
                ..Default::default()
            },
            spec: HttpRouteSpec {
                rules: Some(rules),
                ..Default::default()
            },
            status: None,
        };
        let rule = |refs: Vec<HttpBackendRef>| HttpRouteRule {
            backend_refs: Some(refs),
            ..Default::default()
        };
        let services = services();
        let grants = Objects::new();
        let context = Context {
            services: &services,
            grants: &grants,
        };
        // No backendRefs at all is not a failure (HTTPRouteNoBackendRefs).
        assert_eq!(
            route_refs(&route(vec![rule(vec![])]), "HTTPRoute", context),
            Ok(())
        );
        assert_eq!(
            route_refs(&route(vec![HttpRouteRule::default()]), "HTTPRoute", context),
            Ok(())
        );
        let bad = route(vec![
            rule(vec![backend(None, "web", Some(8080))]),
            rule(vec![
                backend(None, "ghost", Some(1)),
                backend(Some("backend"), "web", Some(8080)),
            ]),
        ]);
        let fault = route_refs(&bad, "HTTPRoute", context).unwrap_err();
        assert_eq!(fault.reason, "BackendNotFound");
        assert!(fault.message.contains("infra/ghost"), "{}", fault.message);
        assert!(fault.message.contains("backend/web"), "{}", fault.message);

        // A RequestMirror's backend counts too (S-F.6): without a grant, RefNotPermitted.
        let mirror = |namespace: Option<&str>| HttpRouteFilter {
            type_: "RequestMirror".into(),
            request_mirror: Some(RequestMirror {
                backend_ref: BackendObjectReference {
                    namespace: namespace.map(Into::into),
                    name: "web".into(),
                    port: Some(8080),
                    ..Default::default()
                },
                percent: None,
                fraction: None,
            }),
            ..Default::default()
        };
        let mirrored = |namespace: Option<&str>| {
            let mut with_mirror = rule(vec![backend(None, "web", Some(8080))]);
            with_mirror.filters = Some(vec![mirror(namespace)]);
            route(vec![with_mirror])
        };
        assert_eq!(route_refs(&mirrored(None), "HTTPRoute", context), Ok(()));
        let fault = route_refs(&mirrored(Some("backend")), "HTTPRoute", context).unwrap_err();
        assert_eq!(fault.reason, "RefNotPermitted");
        assert!(
            fault
                .message
                .starts_with("RequestMirror backendRef backend/web"),
            "{}",
            fault.message
        );
    }
}
