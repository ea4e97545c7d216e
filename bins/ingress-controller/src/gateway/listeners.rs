//! The checks of a Gateway's listeners (semantics S-GW.1 to S-GW.5: protocol, route kinds, TLS
//! certificate references, conflicts) and the Gateway-level verdict built from them (S-GW.6 to
//! S-GW.9, S-GW.11).
//!
//! Conflicts are computed over one Gateway's listeners. Listeners of several Gateways that share
//! one address (S-GW.4's `PortUnavailable`) depend on the address assignment, a later part.

use cluster_state::gateway::{GROUP, Gateway, Listener, ReferenceGrant, RouteGroupKind};
use cluster_state::k8s::Resource;
use cluster_state::k8s::api::core::v1::Secret;
use cluster_state::{ObjectRef, Objects};

use super::Fault;
use super::grants::{self, From, To};
use super::hostname::Hostname;

/// The route kinds an HTTP or HTTPS listener can carry (S-GW.2), in the order
/// `supportedKinds` lists them.
pub const ROUTE_KINDS: &[&str] = &["HTTPRoute", "GRPCRoute"];

/// The Secret type a certificate must have.
const TLS_SECRET: &str = "kubernetes.io/tls";

/// What the checks found about one listener.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenerCheck {
    /// The listener's name.
    pub name: String,
    /// The listener's port.
    pub port: i32,
    /// The listener's protocol, as written.
    pub protocol: String,
    /// The listener's host name; `None` for any.
    pub hostname: Option<Hostname>,
    /// The route kinds it carries, group written out (S-GW.2); empty for an unsupported
    /// protocol, which attaches nothing.
    pub supported_kinds: Vec<RouteGroupKind>,
    /// `Accepted` (S-GW.5): refused for an unsupported protocol or a conflict.
    pub accepted: Result<(), Fault>,
    /// `ResolvedRefs` (S-GW.5): refused for invalid route kinds or certificate references.
    pub resolved_refs: Result<(), Fault>,
    /// `Conflicted=True` with its reason, or `None` for `NoConflicts` (S-GW.4).
    pub conflicted: Option<Fault>,
    /// Whether an HTTPS listener on the same port has an overlapping host name (S-GW.4b).
    pub overlapping_tls: bool,
    /// The certificate Secrets that passed, in reference order (HTTPS; all are served).
    pub certificates: Vec<ObjectRef>,
}

impl ListenerCheck {
    /// Whether routes of `kind` (group `gateway.networking.k8s.io`) may attach (S-AT.4).
    pub fn carries(&self, kind: &str) -> bool {
        self.supported_kinds
            .iter()
            .any(|k| k.group() == GROUP && k.kind == kind)
    }

    /// Whether the listener can be served: Accepted, and with a usable certificate when HTTPS
    /// (S-AT.8).
    pub fn servable(&self) -> bool {
        self.accepted.is_ok() && (self.protocol != "HTTPS" || !self.certificates.is_empty())
    }
}

/// The objects a listener's certificate references are checked against.
#[derive(Debug, Clone, Copy)]
pub struct TlsContext<'a> {
    /// Every Secret.
    pub secrets: &'a Objects<Secret>,
    /// Every ReferenceGrant.
    pub grants: &'a Objects<ReferenceGrant>,
    /// The time certificates must be valid at, in seconds since the Unix epoch.
    pub now: i64,
}

/// The checks of every listener of `gateway`, in spec order.
pub fn check(gateway: &Gateway, context: TlsContext<'_>) -> Vec<ListenerCheck> {
    let namespace = gateway.metadata.namespace.as_deref().unwrap_or_default();
    let mut checks: Vec<ListenerCheck> = gateway
        .spec
        .listeners
        .iter()
        .map(|listener| check_one(listener, namespace, context))
        .collect();
    conflicts(&mut checks);
    checks
}

/// Steps 1 to 3 of S-GW.1 to S-GW.3 for one listener.
fn check_one(listener: &Listener, namespace: &str, context: TlsContext<'_>) -> ListenerCheck {
    let mut check = ListenerCheck {
        name: listener.name.clone(),
        port: listener.port,
        protocol: listener.protocol.clone(),
        hostname: listener.hostname.as_deref().and_then(Hostname::new),
        supported_kinds: Vec::new(),
        accepted: Ok(()),
        resolved_refs: Ok(()),
        conflicted: None,
        overlapping_tls: false,
        certificates: Vec::new(),
    };
    if !matches!(listener.protocol.as_str(), "HTTP" | "HTTPS") {
        check.accepted = Err(Fault::new(
            "UnsupportedProtocol",
            format!(
                "protocol {} is not supported: HTTP and HTTPS are",
                listener.protocol
            ),
        ));
        return check;
    }
    let (kinds, kinds_ok) = supported_kinds(listener);
    check.supported_kinds = kinds;
    check.resolved_refs = kinds_ok;
    if listener.protocol == "HTTPS" {
        let (certificates, refs_ok) = certificates(listener, namespace, context);
        check.certificates = certificates;
        if check.resolved_refs.is_ok() {
            check.resolved_refs = refs_ok;
        }
    }
    check
}

/// The listener's `supportedKinds` and whether every kind it lists is one we carry (S-GW.2).
fn supported_kinds(listener: &Listener) -> (Vec<RouteGroupKind>, Result<(), Fault>) {
    let listed = listener.allowed_routes().kinds.unwrap_or_default();
    let written = |kind: &str| RouteGroupKind {
        group: Some(GROUP.to_owned()),
        kind: kind.to_owned(),
    };
    if listed.is_empty() {
        return (ROUTE_KINDS.iter().map(|k| written(k)).collect(), Ok(()));
    }
    let mut kinds: Vec<RouteGroupKind> = Vec::new();
    let mut refused = Vec::new();
    for kind in &listed {
        if kind.group() == GROUP && ROUTE_KINDS.contains(&kind.kind.as_str()) {
            let kind = written(&kind.kind);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        } else {
            refused.push(format!("{}/{}", kind.group(), kind.kind));
        }
    }
    let verdict = if refused.is_empty() {
        Ok(())
    } else {
        Err(Fault::new(
            "InvalidRouteKinds",
            format!("route kinds not supported: {}", refused.join(", ")),
        ))
    };
    (kinds, verdict)
}

/// The certificate Secrets of an HTTPS listener that pass S-GW.3's checks, and the verdict of
/// the first that fails.
fn certificates(
    listener: &Listener,
    namespace: &str,
    context: TlsContext<'_>,
) -> (Vec<ObjectRef>, Result<(), Fault>) {
    let refs = listener
        .tls
        .as_ref()
        .map(|tls| tls.certificate_refs())
        .unwrap_or_default();
    if refs.is_empty() {
        let fault = Fault::new(
            "InvalidCertificateRef",
            "HTTPS listener needs a certificate",
        );
        return (Vec::new(), Err(fault));
    }
    let mut passed = Vec::new();
    let mut verdict = Ok(());
    for reference in refs {
        let secret_namespace = reference.namespace.as_deref().unwrap_or(namespace);
        let key = ObjectRef::new(secret_namespace, reference.name.as_str());
        let result = if reference.group() != "" || reference.kind() != Secret::KIND {
            Err(Fault::new(
                "InvalidCertificateRef",
                format!(
                    "certificateRef {key}: kind {}/{} is not supported, only core Secrets",
                    reference.group(),
                    reference.kind()
                ),
            ))
        } else if !grants::permits(
            context.grants,
            From {
                group: GROUP,
                kind: Gateway::KIND,
                namespace,
            },
            To {
                group: "",
                kind: Secret::KIND,
                namespace: secret_namespace,
                name: &reference.name,
            },
        ) {
            Err(Fault::new(
                "RefNotPermitted",
                format!("certificateRef {key}: no ReferenceGrant in {secret_namespace} permits it"),
            ))
        } else {
            usable(&key, context)
        };
        match result {
            Ok(()) => passed.push(key),
            Err(fault) => {
                if verdict.is_ok() {
                    verdict = Err(fault);
                }
            }
        }
    }
    (passed, verdict)
}

/// Whether Secret `key` is a TLS Secret whose certificate and key nginx can serve at `now`
/// (S-GW.3 c and d, with the Ingress checks of `tls_check`).
fn usable(key: &ObjectRef, context: TlsContext<'_>) -> Result<(), Fault> {
    let invalid = |why: String| {
        Fault::new(
            "InvalidCertificateRef",
            format!("certificateRef {key}: {why}"),
        )
    };
    let secret = context
        .secrets
        .get(key)
        .filter(|s| s.type_.as_deref() == Some(TLS_SECRET))
        .ok_or_else(|| invalid(format!("no Secret of type {TLS_SECRET}")))?;
    let field = |name: &str| {
        crate::tls_check::secret_pem(secret, name).ok_or_else(|| invalid(format!("no PEM {name}")))
    };
    let (cert, private_key) = (field("tls.crt")?, field("tls.key")?);
    crate::tls_check::check(&cert, &private_key, Some(context.now)).map_err(invalid)
}

/// S-GW.4 and S-GW.4b over the listeners of one Gateway that passed the protocol check.
fn conflicts(checks: &mut [ListenerCheck]) {
    let snapshot: Vec<(i32, String, Option<Hostname>, bool)> = checks
        .iter()
        .map(|c| {
            (
                c.port,
                c.protocol.clone(),
                c.hostname.clone(),
                c.accepted.is_ok(),
            )
        })
        .collect();
    for (index, check) in checks.iter_mut().enumerate() {
        if check.accepted.is_err() {
            continue;
        }
        let others = snapshot
            .iter()
            .enumerate()
            .filter(|(other, (port, _, _, ok))| *other != index && *ok && *port == check.port)
            .map(|(_, other)| other);
        let mut protocol = false;
        let mut hostname = false;
        for (_, other_protocol, other_hostname, _) in others {
            if *other_protocol != check.protocol {
                protocol = true;
            } else {
                hostname |= *other_hostname == check.hostname;
                // Only two names can overlap: a listener without one is the catch-all, which
                // the more specific listeners take precedence over (S-LI.1).
                check.overlapping_tls |= check.protocol == "HTTPS"
                    && match (&check.hostname, other_hostname) {
                        (Some(a), Some(b)) => a.intersect(b).is_some(),
                        _ => false,
                    };
            }
        }
        let conflict = if protocol {
            Some(Fault::new(
                "ProtocolConflict",
                format!("port {} is used with another protocol", check.port),
            ))
        } else if hostname {
            Some(Fault::new(
                "HostnameConflict",
                format!(
                    "another listener on port {} has the same hostname",
                    check.port
                ),
            ))
        } else {
            None
        };
        if let Some(fault) = conflict {
            check.accepted = Err(fault.clone());
            check.conflicted = Some(fault);
        }
    }
}

/// The Gateway's `Accepted` (S-GW.9), first match wins: `InvalidParameters` (S-GW.6),
/// `UnsupportedAddress` (S-GW.7: any `spec.addresses` without a `pool` of addresses, an address
/// type other than `IPAddress` with one), `Invalid` (S-GW.8
/// `spec.tls`; S-GC.5 class not accepted), then `ListenersNotValid` (False when no listener is
/// Accepted, True when some are not), then `Accepted`.
pub fn gateway_accepted(
    gateway: &Gateway,
    class_accepted: bool,
    pool: bool,
    listeners: &[ListenerCheck],
) -> Verdict {
    let spec = &gateway.spec;
    let refused = |reason, message: String| Verdict {
        status: false,
        reason,
        message,
    };
    if let Some(reference) = spec
        .infrastructure
        .as_ref()
        .and_then(|i| i.parameters_ref.as_ref())
    {
        let message = format!(
            "infrastructure.parametersRef {}/{} {}: this controller supports no parameters",
            reference.group, reference.kind, reference.name
        );
        return refused("InvalidParameters", message);
    }
    let requested = spec.addresses.as_deref().unwrap_or_default();
    if !pool && !requested.is_empty() {
        let message = "spec.addresses needs a pool of addresses (--gateway-addresses)";
        return refused("UnsupportedAddress", message.into());
    }
    if let Some(other) = requested.iter().find(|a| a.address_type() != "IPAddress") {
        let message = format!(
            "address type {:?} is not supported, only IPAddress",
            other.address_type()
        );
        return refused("UnsupportedAddress", message);
    }
    if spec.tls.is_some() {
        return refused("Invalid", "spec.tls is not supported".into());
    }
    if !class_accepted {
        let message = format!("GatewayClass {} is not accepted", spec.gateway_class_name);
        return refused("Invalid", message);
    }
    let accepted = listeners.iter().filter(|l| l.accepted.is_ok()).count();
    if accepted == 0 {
        return refused("ListenersNotValid", "no listener is valid".into());
    }
    if accepted < listeners.len() {
        return Verdict {
            status: true,
            reason: "ListenersNotValid",
            message: "some listeners are not valid".into(),
        };
    }
    Verdict {
        status: true,
        reason: "Accepted",
        message: "the Gateway is accepted".into(),
    }
}

/// A condition's status, reason and message, where a `True` status can carry a reason other
/// than the condition's name (the Gateway's `True/ListenersNotValid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `True` or `False`.
    pub status: bool,
    /// The reason.
    pub reason: &'static str,
    /// The message.
    pub message: String,
}

#[cfg(test)]
pub(super) mod tests {
    use crate::gateway::fixtures::gateway;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use cluster_state::gateway::{
        AllowedRoutes, GatewaySpecAddress, ListenerTlsConfig, ReferenceGrantFrom,
        ReferenceGrantSpec, ReferenceGrantTo, SecretObjectReference,
    };
    use cluster_state::k8s::ByteString;
    use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    /// A self-signed certificate for `example.com` and its key, as PEM.
    pub(crate) fn certificate() -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["example.com".into()]).unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// A TLS Secret holding `cert` and `key`.
    pub(crate) fn tls_secret(
        namespace: &str,
        name: &str,
        cert: &str,
        key: &str,
    ) -> (ObjectRef, Arc<Secret>) {
        let secret = Secret {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                ..Default::default()
            },
            type_: Some(TLS_SECRET.into()),
            data: Some(BTreeMap::from([
                ("tls.crt".into(), ByteString(cert.as_bytes().to_vec())),
                ("tls.key".into(), ByteString(key.as_bytes().to_vec())),
            ])),
            ..Default::default()
        };
        (ObjectRef::new(namespace, name), Arc::new(secret))
    }

    fn listener(name: &str, port: i32, protocol: &str, hostname: Option<&str>) -> Listener {
        Listener {
            name: name.into(),
            port,
            protocol: protocol.into(),
            hostname: hostname.map(Into::into),
            ..Default::default()
        }
    }

    fn https(name: &str, refs: Vec<SecretObjectReference>) -> Listener {
        Listener {
            tls: Some(ListenerTlsConfig {
                certificate_refs: Some(refs),
                ..Default::default()
            }),
            ..listener(name, 443, "HTTPS", None)
        }
    }

    fn secret_ref(namespace: Option<&str>, name: &str) -> SecretObjectReference {
        SecretObjectReference {
            namespace: namespace.map(Into::into),
            name: name.into(),
            ..Default::default()
        }
    }

    fn run(gateway: &Gateway, grants: &Objects<ReferenceGrant>) -> Vec<ListenerCheck> {
        let (cert, key) = certificate();
        let secrets = Objects::from([
            tls_secret("infra", "good", &cert, &key),
            tls_secret("certs", "good", &cert, &key),
            tls_secret("infra", "malformed", "Hello world", &key),
        ]);
        let context = TlsContext {
            secrets: &secrets,
            grants,
            now: 1_800_000_000,
        };
        check(gateway, context)
    }

    fn reason<T>(result: &Result<T, Fault>) -> &'static str {
        result.as_ref().err().map_or("ok", |f| f.reason)
    }

    #[test]
    fn s_gw_1_unsupported_protocol_is_not_accepted_and_carries_nothing() {
        let gw = gateway(vec![
            listener("http", 80, "HTTP", None),
            listener("invalid", 1111, "INVALID", None),
        ]);
        let checks = run(&gw, &Objects::new());
        assert_eq!(reason(&checks[0].accepted), "ok");
        assert!(checks[0].carries("HTTPRoute"));
        assert_eq!(reason(&checks[1].accepted), "UnsupportedProtocol");
        assert!(checks[1].supported_kinds.is_empty());
        let verdict = gateway_accepted(&gw, true, false, &checks);
        assert_eq!(
            (verdict.status, verdict.reason),
            (true, "ListenersNotValid")
        );
        let only_bad = gateway(vec![listener("invalid", 1111, "TCP", None)]);
        let verdict = gateway_accepted(&only_bad, true, false, &run(&only_bad, &Objects::new()));
        assert_eq!(
            (verdict.status, verdict.reason),
            (false, "ListenersNotValid")
        );
    }

    /// GatewayInvalidRouteKind: `[InvalidRoute]` → no kinds; `[InvalidRoute, HTTPRoute]` →
    /// HTTPRoute; both `ResolvedRefs=False/InvalidRouteKinds`.
    #[test]
    fn s_gw_2_route_kinds() {
        let with_kinds = |kinds: &[&str]| Listener {
            allowed_routes: Some(AllowedRoutes {
                namespaces: None,
                kinds: Some(
                    kinds
                        .iter()
                        .map(|k| RouteGroupKind {
                            group: None,
                            kind: (*k).into(),
                        })
                        .collect(),
                ),
            }),
            ..listener("http", 80, "HTTP", None)
        };
        let checks = run(
            &gateway(vec![with_kinds(&["InvalidRoute"])]),
            &Objects::new(),
        );
        assert!(checks[0].supported_kinds.is_empty());
        assert_eq!(reason(&checks[0].resolved_refs), "InvalidRouteKinds");
        assert_eq!(reason(&checks[0].accepted), "ok");
        let both = with_kinds(&["InvalidRoute", "HTTPRoute", "HTTPRoute"]);
        let checks = run(&gateway(vec![both]), &Objects::new());
        let kind = |kind: &str| RouteGroupKind {
            group: Some(GROUP.into()),
            kind: kind.into(),
        };
        assert_eq!(checks[0].supported_kinds, [kind("HTTPRoute")]);
        assert_eq!(reason(&checks[0].resolved_refs), "InvalidRouteKinds");
        // Without a list, every kind carried (S-GW.2: GRPCRoute too).
        let checks = run(&gateway(vec![with_kinds(&[])]), &Objects::new());
        assert_eq!(
            checks[0].supported_kinds,
            [kind("HTTPRoute"), kind("GRPCRoute")]
        );
        assert_eq!(reason(&checks[0].resolved_refs), "ok");
    }

    /// GatewayInvalidTLSConfiguration and GatewaySecret*ReferenceGrant*.
    #[test]
    fn s_gw_3_certificate_refs() {
        let mut unsupported_group = secret_ref(None, "good");
        unsupported_group.group = Some("wrong.group".into());
        let mut unsupported_kind = secret_ref(None, "good");
        unsupported_kind.kind = Some("WrongKind".into());
        let mut gw = gateway(vec![
            https("good", vec![secret_ref(None, "good")]),
            https("nonexistent", vec![secret_ref(None, "ghost")]),
            https("malformed", vec![secret_ref(None, "malformed")]),
            https("group", vec![unsupported_group]),
            https("kind", vec![unsupported_kind]),
            https("none", vec![]),
            https("cross", vec![secret_ref(Some("certs"), "good")]),
            https("cross-ghost", vec![secret_ref(Some("certs"), "ghost")]),
            https(
                "mixed",
                vec![secret_ref(None, "ghost"), secret_ref(None, "good")],
            ),
        ]);
        // Each on its own port, so that none conflicts with another.
        for (port, listener) in (1000..).zip(gw.spec.listeners.iter_mut()) {
            listener.port = port;
        }
        let checks = run(&gw, &Objects::new());
        let reasons: Vec<&str> = checks.iter().map(|c| reason(&c.resolved_refs)).collect();
        assert_eq!(
            reasons,
            [
                "ok",
                "InvalidCertificateRef",
                "InvalidCertificateRef",
                "InvalidCertificateRef",
                "InvalidCertificateRef",
                "InvalidCertificateRef",
                "RefNotPermitted",
                "RefNotPermitted",
                "InvalidCertificateRef",
            ]
        );
        assert_eq!(checks[0].certificates, [ObjectRef::new("infra", "good")]);
        assert!(checks[0].servable());
        assert!(!checks[1].servable());
        // The refs that passed are served.
        assert_eq!(checks[8].certificates, [ObjectRef::new("infra", "good")]);

        let grant = |name: Option<&str>| {
            let grant = ReferenceGrant {
                metadata: Default::default(),
                spec: ReferenceGrantSpec {
                    from: vec![ReferenceGrantFrom {
                        group: GROUP.into(),
                        kind: "Gateway".into(),
                        namespace: "infra".into(),
                    }],
                    to: vec![ReferenceGrantTo {
                        group: String::new(),
                        kind: "Secret".into(),
                        name: name.map(Into::into),
                    }],
                },
            };
            Objects::from([(ObjectRef::new("certs", "g"), Arc::new(grant))])
        };
        let cross = gateway(vec![https(
            "cross",
            vec![secret_ref(Some("certs"), "good")],
        )]);
        assert_eq!(reason(&run(&cross, &grant(None))[0].resolved_refs), "ok");
        assert_eq!(
            reason(&run(&cross, &grant(Some("good")))[0].resolved_refs),
            "ok"
        );
        let wrong_name = run(&cross, &grant(Some("other")));
        assert_eq!(reason(&wrong_name[0].resolved_refs), "RefNotPermitted");
    }

    #[test]
    fn s_gw_4_conflicts_within_a_gateway() {
        let gw = gateway(vec![
            listener("a", 80, "HTTP", Some("a.io")),
            https("b", vec![secret_ref(None, "good")]),
            Listener {
                port: 80,
                ..https("c", vec![secret_ref(None, "good")])
            },
            listener("d", 8080, "HTTP", Some("d.io")),
            listener("e", 8080, "HTTP", Some("d.io")),
            listener("f", 8080, "HTTP", Some("f.io")),
        ]);
        let checks = run(&gw, &Objects::new());
        let conflicted: Vec<Option<&str>> = checks
            .iter()
            .map(|c| c.conflicted.as_ref().map(|f| f.reason))
            .collect();
        assert_eq!(
            conflicted,
            [
                Some("ProtocolConflict"),
                None,
                Some("ProtocolConflict"),
                Some("HostnameConflict"),
                Some("HostnameConflict"),
                None
            ]
        );
        assert_eq!(reason(&checks[0].accepted), "ProtocolConflict");
        assert_eq!(reason(&checks[3].accepted), "HostnameConflict");
        assert_eq!(reason(&checks[5].accepted), "ok");
    }

    #[test]
    fn s_gw_4b_overlapping_tls_hostnames() {
        let with_host = |name: &str, host: &str| Listener {
            hostname: Some(host.into()),
            ..https(name, vec![secret_ref(None, "good")])
        };
        let gw = gateway(vec![
            with_host("wild", "*.wildcard.org"),
            with_host("fourth", "fourth-example.wildcard.org"),
            with_host("other", "other.io"),
            https("catch-all", vec![secret_ref(None, "good")]),
        ]);
        let checks = run(&gw, &Objects::new());
        let overlapping: Vec<bool> = checks.iter().map(|c| c.overlapping_tls).collect();
        assert_eq!(overlapping, [true, true, false, false]);
        assert!(checks.iter().all(|c| c.accepted.is_ok()));
    }

    #[test]
    fn s_gw_6_to_9_gateway_accepted_first_match_wins() {
        let listeners = vec![listener("http", 80, "HTTP", None)];
        let mut gw = gateway(listeners.clone());
        let checks = run(&gw, &Objects::new());
        assert_eq!(
            gateway_accepted(&gw, true, false, &checks).reason,
            "Accepted"
        );
        assert_eq!(
            gateway_accepted(&gw, false, false, &checks).reason,
            "Invalid"
        );
        gw.spec.addresses = Some(vec![GatewaySpecAddress::default()]);
        assert_eq!(
            gateway_accepted(&gw, true, false, &checks).reason,
            "UnsupportedAddress"
        );
        // S-GW.7 with a pool: IPAddress entries are accepted (whether usable is the pool's
        // business), any other type is not (GatewayStaticAddresses' first step).
        assert_eq!(
            gateway_accepted(&gw, true, true, &checks).reason,
            "Accepted"
        );
        let fake = GatewaySpecAddress {
            type_: Some("test/fake-invalid-type".into()),
            value: Some("fake address teehee!".into()),
        };
        gw.spec.addresses = Some(vec![fake, GatewaySpecAddress::default()]);
        assert_eq!(
            gateway_accepted(&gw, true, true, &checks).reason,
            "UnsupportedAddress"
        );
        gw.spec.infrastructure = Some(cluster_state::gateway::GatewayInfrastructure {
            parameters_ref: Some(cluster_state::gateway::ParametersReference {
                group: "invalid.io".into(),
                kind: "InvalidParameters".into(),
                name: "p".into(),
            }),
            ..Default::default()
        });
        let verdict = gateway_accepted(&gw, true, false, &checks);
        assert_eq!(
            (verdict.status, verdict.reason),
            (false, "InvalidParameters")
        );
        let mut gw = gateway(listeners);
        gw.spec.tls = Some(Default::default());
        assert_eq!(
            gateway_accepted(&gw, true, false, &checks).reason,
            "Invalid"
        );
    }
}
