//! Topology-aware routing: which of a port's ready endpoints this node prefers, from the hints
//! the EndpointSlice controller writes (`pkg/proxy/topology.go`: `topologyModeFromHints` and
//! `availableForTopology`).
//!
//! kube-proxy does not read a Service's `trafficDistribution` itself: the EndpointSlice
//! controller turns `PreferClose`/`PreferSameZone` into zone hints (`hints.forZones`) and
//! `PreferSameNode` into node hints as well (`hints.forNodes`), and kube-proxy follows the
//! hints. This is the behaviour of Kubernetes 1.35, where the PreferSameTrafficDistribution
//! feature gate is GA and locked on (node hints are always followed); in 1.33 and 1.34 the gate
//! could be off, and before 1.31 the `service.kubernetes.io/topology-mode` annotation also had
//! to ask for hints.

use alloc::string::String;

use super::endpoints::Ep;

/// Where this node is: its name and its zone (empty when unknown).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place<'a> {
    /// The node's name, matched against node hints.
    pub(crate) node: &'a str,
    /// The node's `topology.kubernetes.io/zone` label, matched against zone hints.
    pub(crate) zone: &'a str,
}

/// Which hints a port's cluster endpoints follow on this node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Preference {
    /// Only the endpoints hinted for this node (`PreferSameNode`).
    SameNode,
    /// Only the endpoints hinted for this node's zone (`PreferSameZone`, `PreferClose`).
    SameZone,
}

fn hinted(hints: &[String], name: &str) -> bool {
    hints.iter().any(|hint| hint == name)
}

impl Preference {
    /// The hints `eps` ask this node to follow, if any. Only ready endpoints count. Node hints
    /// win when every ready endpoint has one and one names this node; else zone hints, when
    /// every ready endpoint has one and one names this node's zone. Otherwise (an endpoint
    /// without hints, no endpoint for this node or zone, a node without a zone) there is no
    /// preference and every ready endpoint is used: kube-proxy's fallback.
    pub(crate) fn of(eps: &[Ep], place: Place<'_>) -> Option<Self> {
        let ready = eps.iter().filter(|e| e.ready);
        // Without a ready endpoint there are no hints to follow.
        ready.clone().next()?;
        let every = |hints: fn(&Ep) -> &[String], name: &str| {
            ready.clone().all(|e| !hints(e).is_empty())
                && ready.clone().any(|e| hinted(hints(e), name))
        };
        if every(|e| &e.node_hints, place.node) {
            Some(Self::SameNode)
        } else if every(|e| &e.zone_hints, place.zone) {
            Some(Self::SameZone)
        } else {
            None
        }
    }

    /// Whether `ep` may serve this node's cluster traffic under this preference (no fallback
    /// here: that is decided by [`Preference::of`]).
    pub(crate) fn admits(self, ep: &Ep, place: Place<'_>) -> bool {
        match self {
            Self::SameNode => hinted(&ep.node_hints, place.node),
            Self::SameZone => hinted(&ep.zone_hints, place.zone),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The vectors of kube-proxy's `TestCategorizeEndpoints` (kubernetes/kubernetes,
    //! `pkg/proxy/topology_test.go`, Apache-2.0), transcribed: the version after the
    //! topology-mode annotation was dropped (hints alone decide), and the four PreferSameNode
    //! cases added for KEP-3015 as antrea-io/antrea carries them in its copy of the test
    //! (`pkg/agent/proxy/topology_test.go`, Apache-2.0). Left out: "PreferSameNode falls back
    //! to same-zone when feature gate disabled" (the gate is locked on in 1.35). The Go cases'
    //! `pteEnabled` field no longer changes anything and is dropped.
    //!
    //! As in the Go test: a list given as `None` is one the port does not use (empty here); a
    //! missing `all` is whichever of `cluster` and `local` is used alone; "has any endpoints"
    //! is expected when `all` is not empty or `only_remote` says endpoints exist elsewhere.

    use alloc::vec::Vec;

    use super::*;
    use crate::kube::endpoints::{categorize, uses_endpoints};

    /// One endpoint: `ip:port`, zone hints, node hints, ready, serving, terminating, local.
    type E = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        bool,
        bool,
        bool,
        bool,
    );

    struct Case {
        name: &'static str,
        node: &'static str,
        zone: &'static str,
        itp_local: bool,
        etp_local: bool,
        node_port: bool,
        endpoints: &'static [E],
        cluster: Option<&'static [&'static str]>,
        local: Option<&'static [&'static str]>,
        all: Option<&'static [&'static str]>,
        only_remote: bool,
    }

    const fn case(name: &'static str, endpoints: &'static [E]) -> Case {
        Case {
            name,
            node: "test-node",
            zone: "",
            itp_local: false,
            etp_local: false,
            node_port: false,
            endpoints,
            cluster: None,
            local: None,
            all: None,
            only_remote: false,
        }
    }

    /// A ready endpoint with zone hints.
    const fn zr(address: &'static str, zones: &'static [&'static str]) -> E {
        (address, zones, &[], true, false, false, false)
    }

    /// A ready endpoint without hints, local or not.
    const fn r(address: &'static str, local: bool) -> E {
        (address, &[], &[], true, false, false, local)
    }

    const A: &[&str] = &["zone-a"];
    const B: &[&str] = &["zone-b"];
    const C: &[&str] = &["zone-c"];

    /// The four zone-hinted endpoints most cases start from.
    const ZONED: &[E] = &[
        zr("10.1.2.3:80", A),
        zr("10.1.2.4:80", B),
        zr("10.1.2.5:80", C),
        zr("10.1.2.6:80", A),
    ];

    /// The four endpoints of the PreferSameNode cases: zone and node hints.
    const NODED: &[E] = &[
        ("10.1.2.3:80", A, &["node-1"], true, false, false, false),
        ("10.1.2.4:80", B, &["node-2"], true, false, false, false),
        ("10.1.2.5:80", C, &["node-3"], true, false, false, false),
        ("10.1.2.6:80", A, &["node-4"], true, false, false, false),
    ];

    /// The endpoints of zone-a in [`ZONED`].
    const TWO_AB: &[&str] = &["10.1.2.3:80", "10.1.2.6:80"];

    /// One entry per Go test case, in the Go file's order.
    const CASES: &[Case] = &[
        Case {
            zone: "zone-a",
            cluster: Some(&["10.1.2.3:80", "10.1.2.6:80"]),
            ..case(
                "should use topology since all endpoints have hints, node has a zone \
                     label and and there are endpoints for the node's zone",
                ZONED,
            )
        },
        Case {
            zone: "zone-a",
            etp_local: true,
            node_port: true,
            cluster: Some(TWO_AB),
            local: Some(&["10.1.2.3:80", "10.1.2.4:80"]),
            all: Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"]),
            ..case(
                "externalTrafficPolicy: Local, topology ignored for Local endpoints",
                &[
                    ("10.1.2.3:80", A, &[], true, false, false, true),
                    ("10.1.2.4:80", B, &[], true, false, false, true),
                    zr("10.1.2.5:80", C),
                    zr("10.1.2.6:80", A),
                ],
            )
        },
        Case {
            zone: "zone-a",
            itp_local: true,
            node_port: true,
            cluster: Some(TWO_AB),
            local: Some(&["10.1.2.3:80", "10.1.2.4:80"]),
            all: Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"]),
            ..case(
                "internalTrafficPolicy: Local, topology ignored for Local endpoints",
                &[
                    ("10.1.2.3:80", A, &[], true, false, false, true),
                    ("10.1.2.4:80", B, &[], true, false, false, true),
                    zr("10.1.2.5:80", C),
                    zr("10.1.2.6:80", A),
                ],
            )
        },
        Case {
            cluster: Some(&["10.1.2.3:80"]),
            ..case("empty node labels", &[zr("10.1.2.3:80", A)])
        },
        Case {
            cluster: Some(&["10.1.2.3:80"]),
            ..case("empty zone label", &[zr("10.1.2.3:80", A)])
        },
        Case {
            zone: "zone-b",
            cluster: Some(&["10.1.2.3:80"]),
            ..case(
                "node in different zone, no endpoint filtering",
                &[zr("10.1.2.3:80", A)],
            )
        },
        Case {
            zone: "zone-a",
            cluster: Some(&["10.1.2.3:80"]),
            ..case(
                "unready endpoint",
                &[
                    zr("10.1.2.3:80", A),
                    zr("10.1.2.4:80", B),
                    zr("10.1.2.5:80", C),
                    ("10.1.2.6:80", A, &[], false, false, false, false),
                ],
            )
        },
        Case {
            zone: "zone-a",
            cluster: Some(&["10.1.2.4:80", "10.1.2.5:80"]),
            ..case(
                "only unready endpoints in same zone (should not filter)",
                &[
                    ("10.1.2.3:80", A, &[], false, false, false, false),
                    zr("10.1.2.4:80", B),
                    zr("10.1.2.5:80", C),
                    ("10.1.2.6:80", A, &[], false, false, false, false),
                ],
            )
        },
        Case {
            zone: "zone-a",
            cluster: Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.5:80", "10.1.2.6:80"]),
            ..case(
                "missing hints, no filtering applied",
                &[
                    zr("10.1.2.3:80", A),
                    zr("10.1.2.4:80", B),
                    zr("10.1.2.5:80", &[]),
                    zr("10.1.2.6:80", A),
                ],
            )
        },
        Case {
            zone: "zone-c",
            cluster: Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"]),
            ..case(
                "multiple hints per endpoint, filtering includes any endpoint with zone \
                     included",
                &[
                    zr("10.1.2.3:80", &["zone-a", "zone-b", "zone-c"]),
                    zr("10.1.2.4:80", &["zone-b", "zone-c"]),
                    zr("10.1.2.5:80", &["zone-b", "zone-d"]),
                    zr("10.1.2.6:80", C),
                ],
            )
        },
        Case {
            node: "node-1",
            zone: "zone-a",
            cluster: Some(&["10.1.2.3:80"]),
            ..case("PreferSameNode available", NODED)
        },
        Case {
            node: "node-1",
            zone: "zone-a",
            cluster: Some(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.5:80", "10.1.2.6:80"]),
            ..case(
                "PreferSameNode ignored if some endpoints unhinted",
                &[
                    ("10.1.2.3:80", A, &["node-1"], true, false, false, false),
                    zr("10.1.2.4:80", &[]),
                    ("10.1.2.5:80", C, &["node-3"], true, false, false, false),
                    ("10.1.2.6:80", A, &["node-4"], true, false, false, false),
                ],
            )
        },
        Case {
            node: "node-0",
            zone: "zone-a",
            cluster: Some(TWO_AB),
            ..case(
                "PreferSameNode falls back to PreferSameZone if no endpoint for node",
                NODED,
            )
        },
        Case {
            zone: "zone-a",
            etp_local: true,
            node_port: true,
            cluster: Some(&["10.0.0.0:80", "10.0.0.2:80"]),
            local: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            all: Some(&["10.0.0.0:80", "10.0.0.1:80", "10.0.0.2:80"]),
            ..case(
                "conflicting topology and localness require merging allEndpoints",
                &[
                    ("10.0.0.0:80", A, &[], true, false, false, true),
                    ("10.0.0.1:80", B, &[], true, false, false, true),
                    zr("10.0.0.2:80", A),
                    zr("10.0.0.3:80", B),
                ],
            )
        },
        Case {
            itp_local: true,
            local: Some(&[]),
            ..case("internalTrafficPolicy: Local, with empty endpoints", &[])
        },
        Case {
            itp_local: true,
            local: Some(&[]),
            only_remote: true,
            ..case(
                "internalTrafficPolicy: Local, but all endpoints are remote",
                &[r("10.0.0.0:80", false), r("10.0.0.1:80", false)],
            )
        },
        Case {
            itp_local: true,
            local: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            ..case(
                "internalTrafficPolicy: Local, all endpoints are local",
                &[r("10.0.0.0:80", true), r("10.0.0.1:80", true)],
            )
        },
        Case {
            itp_local: true,
            local: Some(&["10.0.0.0:80"]),
            ..case(
                "internalTrafficPolicy: Local, some endpoints are local",
                &[r("10.0.0.0:80", true), r("10.0.0.1:80", false)],
            )
        },
        Case {
            cluster: Some(&[]),
            ..case(
                "Cluster traffic policy, endpoints not Ready",
                &[
                    ("10.0.0.0:80", &[], &[], false, false, false, false),
                    ("10.0.0.1:80", &[], &[], false, false, false, false),
                ],
            )
        },
        Case {
            cluster: Some(&["10.0.0.1:80"]),
            ..case(
                "Cluster traffic policy, some endpoints are Ready",
                &[
                    ("10.0.0.0:80", &[], &[], false, false, false, false),
                    r("10.0.0.1:80", false),
                ],
            )
        },
        Case {
            cluster: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            ..case(
                "Cluster traffic policy, all endpoints are terminating",
                &[
                    ("10.0.0.0:80", &[], &[], false, true, true, true),
                    ("10.0.0.1:80", &[], &[], false, true, true, false),
                ],
            )
        },
        Case {
            itp_local: true,
            node_port: true,
            cluster: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            local: Some(&["10.0.0.0:80"]),
            all: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            ..case(
                "iTP: Local, eTP: Cluster, some endpoints local",
                &[r("10.0.0.0:80", true), r("10.0.0.1:80", false)],
            )
        },
        Case {
            etp_local: true,
            node_port: true,
            cluster: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            local: Some(&["10.0.0.0:80"]),
            all: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            ..case(
                "iTP: Cluster, eTP: Local, some endpoints local",
                &[r("10.0.0.0:80", true), r("10.0.0.1:80", false)],
            )
        },
        Case {
            itp_local: true,
            etp_local: true,
            node_port: true,
            cluster: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            local: Some(&["10.0.0.0:80"]),
            all: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            ..case(
                "iTP: Local, eTP: Local, some endpoints local",
                &[r("10.0.0.0:80", true), r("10.0.0.1:80", false)],
            )
        },
        Case {
            itp_local: true,
            etp_local: true,
            node_port: true,
            cluster: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            local: Some(&[]),
            all: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            ..case(
                "iTP: Local, eTP: Local, all endpoints remote",
                &[r("10.0.0.0:80", false), r("10.0.0.1:80", false)],
            )
        },
        Case {
            itp_local: true,
            etp_local: true,
            node_port: true,
            cluster: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            local: Some(&[]),
            all: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            only_remote: true,
            ..case(
                "iTP: Local, eTP: Local, all endpoints remote and terminating",
                &[
                    ("10.0.0.0:80", &[], &[], false, true, true, false),
                    ("10.0.0.1:80", &[], &[], false, true, true, false),
                ],
            )
        },
        Case {
            etp_local: true,
            node_port: true,
            cluster: Some(&["10.0.0.0:80"]),
            local: Some(&["10.0.0.2:80"]),
            all: Some(&["10.0.0.0:80", "10.0.0.2:80"]),
            ..case(
                "iTP: Cluster, eTP: Local, with terminating endpoints",
                &[
                    r("10.0.0.0:80", false),
                    ("10.0.0.1:80", &[], &[], false, false, false, true),
                    ("10.0.0.2:80", &[], &[], false, true, true, true),
                    ("10.0.0.3:80", &[], &[], false, true, true, false),
                ],
            )
        },
        Case {
            etp_local: true,
            cluster: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            all: Some(&["10.0.0.0:80", "10.0.0.1:80"]),
            ..case(
                "externalTrafficPolicy ignored if not externally accessible",
                &[r("10.0.0.0:80", false), r("10.0.0.1:80", true)],
            )
        },
        Case {
            itp_local: true,
            local: Some(&["10.0.0.1:80"]),
            all: Some(&["10.0.0.1:80"]),
            ..case(
                "no cluster endpoints for iTP:Local internal-only service",
                &[r("10.0.0.0:80", false), r("10.0.0.1:80", true)],
            )
        },
    ];

    fn endpoint(e: &E) -> Ep {
        let (host_port, zones, nodes, ready, serving, terminating, local) = *e;
        let ip = host_port.split(':').next().and_then(|ip| ip.parse().ok());
        Ep {
            ip: ip.unwrap_or(core::net::IpAddr::V4(core::net::Ipv4Addr::UNSPECIFIED)),
            port: host_port
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0),
            host_port: host_port.into(),
            local,
            ready,
            serving_terminating: serving && terminating,
            zone_hints: zones.iter().map(|z| (*z).into()).collect(),
            node_hints: nodes.iter().map(|n| (*n).into()).collect(),
        }
    }

    fn sorted(eps: &[&Ep]) -> Vec<String> {
        let mut out: Vec<String> = eps.iter().map(|e| e.host_port.clone()).collect();
        out.sort();
        out
    }

    fn expected(list: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = list.iter().map(|s| (*s).into()).collect();
        out.sort();
        out
    }

    #[test]
    fn kube_proxys_categorize_endpoints_vectors() {
        for case in CASES {
            let eps: Vec<Ep> = case.endpoints.iter().map(endpoint).collect();
            let (uses_cluster, uses_local) =
                uses_endpoints(case.itp_local, case.etp_local, case.node_port);
            let place = Place {
                node: case.node,
                zone: case.zone,
            };
            let got = categorize(&eps, uses_cluster, uses_local, place);
            let name = case.name;
            assert_eq!(uses_cluster, case.cluster.is_some(), "{name}: uses cluster");
            assert_eq!(uses_local, case.local.is_some(), "{name}: uses local");
            let cluster = case.cluster.unwrap_or_default();
            let local = case.local.unwrap_or_default();
            assert_eq!(sorted(&got.cluster), expected(cluster), "{name}: cluster");
            assert_eq!(sorted(&got.local), expected(local), "{name}: local");
            let all = match (case.cluster, case.local) {
                (Some(cluster), None) => cluster,
                (None, Some(local)) => local,
                _ => case.all.unwrap_or_default(),
            };
            assert_eq!(sorted(&got.all), expected(all), "{name}: all");
            let any = !all.is_empty() || case.only_remote;
            assert_eq!(got.any, any, "{name}: has any endpoints");
        }
    }

    #[test]
    fn node_hints_win_over_zone_hints_only_for_this_node() {
        let eps: Vec<Ep> = NODED.iter().map(endpoint).collect();
        let at = |node, zone| Preference::of(&eps, Place { node, zone });
        assert_eq!(at("node-4", "zone-b"), Some(Preference::SameNode));
        assert_eq!(at("node-9", "zone-b"), Some(Preference::SameZone));
        assert_eq!(at("node-9", "zone-z"), None);
        assert_eq!(at("node-9", ""), None);
        assert_eq!(
            Preference::of(
                &[],
                Place {
                    node: "n",
                    zone: "z"
                }
            ),
            None
        );
    }
}
