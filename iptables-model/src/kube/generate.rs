//! kube-proxy's `syncProxyRules`: Services and EndpointSlices in, restore text out
//! (`docs/iptables.md` §2-§3, §11 for partial syncs).

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::endpoints::{Ep, collect};
use super::fixed;
use super::input::{EndpointSlice, ProxyOptions, Service, ServicePort, ServiceType};
use super::naming::is_service_chain;
use super::port::{Output, PortContext, Probabilities, Shared, Sink, family_ip};
use super::rules::{declare, delete_chain};
use crate::codec::parse;
use crate::error::{EmitError, ParseError};
use crate::model::{OwnedRestoreFile, RestoreFile};

/// Whether the service `(namespace, name)` changed since the last successful sync.
pub type ChangedFn<'a> = &'a dyn Fn(&str, &str) -> bool;

/// What a sync may assume about the kernel and which services it must rewrite.
#[derive(Clone, Copy)]
pub struct SyncRequest<'a> {
    /// The nat chains that exist in the kernel now; service chains among them that the new
    /// state does not use are flushed and deleted (`:CHAIN` + `-X CHAIN`).
    pub existing_chains: &'a BTreeSet<String>,
    /// `None` for a full sync; for a partial sync (KEP-3453), whether the service
    /// `(namespace, name)` changed since the last successful sync: only those services' own
    /// chains (SVC, SVL, EXT, FW, SEP) are written.
    pub changed: Option<ChangedFn<'a>>,
}

impl core::fmt::Debug for SyncRequest<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SyncRequest")
            .field("existing_chains", &self.existing_chains)
            .field("partial", &self.changed.is_some())
            .finish()
    }
}

/// The result of a sync: the text to pipe to `iptables-restore --noflush`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generated {
    /// The restore input (filter, then nat), in kube-proxy's spelling and emission order.
    pub text: String,
    /// Whether the text rewrites every chain (a full sync) or only what changed.
    pub full: bool,
    /// The services this sync left out, as if they did not exist, for the caller to log.
    pub rejected: Vec<Rejected>,
}

/// A Service left out of a sync because a value its rules carry cannot be written
/// ([`Service::check_text`]); its other rules are not written either, and the rest of the sync
/// goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// The value refused.
    pub error: EmitError,
}

impl core::fmt::Display for Rejected {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "Service {:?}/{:?} left out: {}",
            self.namespace, self.name, self.error
        )
    }
}

impl core::error::Error for Rejected {}

impl Generated {
    /// The restore input as a document that owns its text (it outlives this value; borrow
    /// from [`Generated::text`] with [`crate::parse`] instead when it need not).
    ///
    /// # Errors
    ///
    /// Never for text this crate generated; the error is [`crate::parse`]'s.
    pub fn restore(&self) -> Result<OwnedRestoreFile, ParseError> {
        parse(&self.text).map(RestoreFile::into_owned)
    }
}

/// A Service ready to be written: its ClusterIP, and its ports (sorted by name, as kube-proxy's
/// tests order them) with their endpoints.
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    pub(crate) service: &'a Service,
    cluster_ip: IpAddr,
    ports: Vec<(&'a ServicePort, Vec<Ep>)>,
}

/// `service` with the endpoints of `slices`, or `None` when it has no rules (ExternalName, no
/// ClusterIP of the proxier's family).
///
/// # Errors
///
/// [`Rejected`] when one of its values cannot be written ([`Service::check_text`]).
pub(crate) fn prepare<'a>(
    options: &ProxyOptions,
    service: &'a Service,
    slices: &[&EndpointSlice],
) -> Result<Option<Prepared<'a>>, Rejected> {
    if service.service_type == ServiceType::ExternalName {
        return Ok(None);
    }
    let Some(cluster_ip) = family_ip(&service.cluster_ip, options) else {
        return Ok(None);
    };
    service.check_text().map_err(|error| Rejected {
        namespace: service.namespace.clone(),
        name: service.name.clone(),
        error,
    })?;
    let mut ports: Vec<&ServicePort> = service.ports.iter().collect();
    ports.sort_by(|a, b| a.name.cmp(&b.name));
    let ports = ports
        .into_iter()
        .map(|port| (port, collect(slices, port, options)))
        .collect();
    Ok(Some(Prepared {
        service,
        cluster_ip,
        ports,
    }))
}

/// How a service is written into a sync.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteMode {
    /// Also write its shared lines into the restore text (not only into its [`Shared`]).
    pub(crate) copy_shared: bool,
    /// Write its own chains.
    pub(crate) write_own: bool,
    /// Whether the sync is in large-cluster mode.
    pub(crate) large: bool,
}

impl WriteMode {
    /// Writes the service's own chains, and its shared lines as `copy_shared` says.
    pub(crate) const fn all(large: bool, copy_shared: bool) -> Self {
        Self {
            copy_shared,
            write_own: true,
            large,
        }
    }
}

impl Prepared<'_> {
    /// The endpoints of all its ports (the large-cluster threshold counts these).
    pub(crate) fn endpoints(&self) -> usize {
        self.ports.iter().map(|(_, eps)| eps.len()).sum()
    }

    /// Its ports.
    pub(crate) const fn ports(&self) -> usize {
        self.ports.len()
    }

    /// Writes every port: shared lines into `shared` (and `out` when `mode.copy_shared`), own
    /// chains into `out` when `mode.write_own`; the nat chains used are added to `chains`.
    pub(crate) fn write(
        &self,
        options: &ProxyOptions,
        mode: WriteMode,
        probabilities: &mut Probabilities,
        out: &mut Output,
        shared: &mut Shared,
        mut chains: Option<&mut Vec<String>>,
    ) {
        for (port, eps) in &self.ports {
            let ctx = PortContext {
                options,
                service: self.service,
                port,
                cluster_ip: self.cluster_ip,
                large: mode.large,
            };
            let sink = Sink {
                shared: &mut *shared,
                out: &mut *out,
                copy_shared: mode.copy_shared,
                write_own: mode.write_own,
                chains: chains.as_deref_mut(),
            };
            ctx.emit(eps, sink, probabilities);
        }
    }
}

/// Declares and deletes `stale` chains (`:CHAIN - [0:0]` + `-X CHAIN`).
pub(crate) fn delete_stale<'a>(out: &mut Output, stale: impl IntoIterator<Item = &'a String>) {
    for chain in stale {
        declare(&mut out.nat_chains, chain);
        delete_chain(&mut out.nat_rules, chain);
    }
}

/// Generates the restore input for `services` and `slices` (`docs/iptables.md` §3).
pub fn generate(
    options: &ProxyOptions,
    services: &[Service],
    slices: &[EndpointSlice],
    request: SyncRequest<'_>,
) -> Generated {
    // Services and slices in (namespace, name) order, each stably (a service's slices keep
    // their order), then walked together: no map, one comparison per step.
    fn service_key(s: &Service) -> (&str, &str) {
        (&s.namespace, &s.name)
    }
    fn slice_key(e: &EndpointSlice) -> (&str, &str) {
        (&e.namespace, &e.service)
    }
    let mut ordered: Vec<&Service> = services.iter().collect();
    ordered.sort_by(|a, b| service_key(a).cmp(&service_key(b)));
    let mut by_service: Vec<&EndpointSlice> = slices.iter().collect();
    by_service.sort_by(|a, b| slice_key(a).cmp(&slice_key(b)));
    let mut rest = by_service.as_slice();
    let mut rejected = Vec::new();
    let prepared: Vec<Prepared<'_>> = ordered
        .into_iter()
        .filter_map(|s| {
            let key = service_key(s);
            while let Some((_, later)) = rest.split_first().filter(|(e, _)| slice_key(e) < key) {
                rest = later;
            }
            // Not consumed: a service listed twice gets the same slices.
            let own = rest.iter().take_while(|e| slice_key(e) == key).count();
            prepare(options, s, rest.get(..own).unwrap_or_default()).unwrap_or_else(|r| {
                rejected.push(r);
                None
            })
        })
        .collect();
    let endpoints = prepared.iter().map(Prepared::endpoints).sum::<usize>();
    let large = endpoints > options.large_cluster_endpoints;

    let ports = prepared.iter().map(Prepared::ports).sum();
    let mut out = Output::with_room_for(ports, endpoints);
    let mut probabilities = Probabilities::default();
    fixed::head(options, &mut out);
    // The chains in use are only needed to find stale ones.
    let mut active = (!request.existing_chains.is_empty()).then(Vec::new);
    let mut shared = Shared::default();
    for p in &prepared {
        let mode = WriteMode {
            copy_shared: true,
            write_own: request
                .changed
                .is_none_or(|changed| changed(&p.service.namespace, &p.service.name)),
            large,
        };
        shared.filter.clear();
        shared.nat.clear();
        p.write(
            options,
            mode,
            &mut probabilities,
            &mut out,
            &mut shared,
            active.as_mut(),
        );
    }
    if let Some(mut active) = active {
        active.sort_unstable();
        let stale = request
            .existing_chains
            .iter()
            .filter(|c| is_service_chain(c) && active.binary_search(c).is_err());
        delete_stale(&mut out, stale);
    }
    fixed::tail(options, &mut out);
    Generated {
        text: out.finish(),
        full: request.changed.is_none(),
        rejected,
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::vec;

    use super::*;
    use crate::kube::{Endpoint, EndpointPort, InterfaceName, LocalDetector, Protocol, Proxier};

    fn service(i: u8) -> Service {
        Service {
            namespace: format!("ns{}", i % 2),
            name: format!("svc{i}"),
            cluster_ip: format!("172.30.0.{i}"),
            ports: vec![ServicePort {
                name: "p".into(),
                port: 80,
                protocol: Protocol::Tcp,
                node_port: 0,
            }],
            ..Service::default()
        }
    }

    fn slice(i: u8, endpoint: u8) -> EndpointSlice {
        EndpointSlice {
            namespace: format!("ns{}", i % 2),
            service: format!("svc{i}"),
            ports: vec![EndpointPort {
                name: "p".into(),
                port: 8080,
                protocol: Protocol::Tcp,
            }],
            endpoints: vec![Endpoint {
                addresses: vec![format!("10.0.{i}.{endpoint}")],
                ..Endpoint::default()
            }],
        }
    }

    #[test]
    fn slices_in_any_order_reach_their_service() {
        let services = [3, 0, 2, 1].map(service);
        let slices = [
            slice(2, 1),
            slice(0, 1),
            slice(9, 1),
            slice(2, 0),
            slice(3, 5),
            slice(0, 2),
        ];
        let options = ProxyOptions::new("node-a", [192, 168, 0, 2].into());
        let request = SyncRequest {
            existing_chains: &BTreeSet::new(),
            changed: None,
        };
        let generated = generate(&options, &services, &slices, request);
        // The proxier groups the same inputs with a map.
        let mut proxier = Proxier::new(options);
        assert_eq!(generated.text, proxier.sync(&services, &slices).text);
        for endpoint in [
            "10.0.2.0:8080",
            "10.0.2.1:8080",
            "10.0.0.2:8080",
            "10.0.3.5:8080",
        ] {
            assert!(generated.text.contains(endpoint), "{endpoint}");
        }
        assert!(!generated.text.contains("10.0.9.1"));
        assert!(generated.text.contains("ns1/svc1:p has no endpoints"));
    }

    /// kube-proxy's detectors (`pkg/proxy/util/localdetector.go`): `-s CIDR`, `-i BRIDGE`,
    /// `-i PREFIX+`, negated in the masquerade rule, plain in the pod-traffic rule of KUBE-EXT.
    #[test]
    fn each_local_detector_writes_its_match() {
        let mut local = service(0);
        local.service_type = crate::kube::ServiceType::NodePort;
        local.external_traffic_policy = crate::kube::TrafficPolicy::Local;
        local.health_check_node_port = 30001;
        local.ports[0].node_port = 30000;
        let mut slice = slice(0, 1);
        slice.endpoints[0].node_name = Some("node-a".into());
        let bridge = InterfaceName::new("cbr0").unwrap();
        let prefix = InterfaceName::prefix("veth").unwrap();
        for (detector, masquerade, pods) in [
            (LocalDetector::None, None, None),
            (
                LocalDetector::Cidr("10.0.0.0/8".parse().unwrap()),
                Some("! -s 10.0.0.0/8 -j KUBE-MARK-MASQ"),
                Some("-s 10.0.0.0/8 -j KUBE-SVC-"),
            ),
            (
                LocalDetector::BridgeInterface(bridge.clone()),
                Some("! -i cbr0 -j KUBE-MARK-MASQ"),
                Some("-i cbr0 -j KUBE-SVC-"),
            ),
            (
                LocalDetector::InterfaceNamePrefix(prefix.clone()),
                Some("! -i veth+ -j KUBE-MARK-MASQ"),
                Some("-i veth+ -j KUBE-SVC-"),
            ),
        ] {
            let mut options = ProxyOptions::new("node-a", [192, 168, 0, 2].into());
            options.local_detector = detector.clone();
            let request = SyncRequest {
                existing_chains: &BTreeSet::new(),
                changed: None,
            };
            let text = generate(&options, &[local.clone()], &[slice.clone()], request).text;
            let masq = text
                .lines()
                .find(|line| line.contains("\"ns0/svc0:p cluster IP\"") && line.contains("MASQ"));
            let pod = text
                .lines()
                .find(|line| line.contains("pod traffic for ns0/svc0:p external destinations"));
            assert_eq!(
                masq.map(|line| line.ends_with(masquerade.unwrap_or_default())),
                masquerade.map(|_| true),
                "{detector:?}: {masq:?}"
            );
            assert_eq!(
                pod.map(|line| line.contains(pods.unwrap_or_default())),
                pods.map(|_| true),
                "{detector:?}: {pod:?}"
            );
        }
    }
}
