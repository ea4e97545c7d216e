//! Helpers shared by the integration tests: the iptables corpus (`testdata/iptables/`) and its
//! JSON inputs.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

/// Reads a file of the iptables corpus (`testdata/iptables/`).
pub(crate) fn read(name: &str) -> String {
    testdata::read_to_string("iptables", name)
}

/// Every `.txt` file of the corpus, sorted by name.
pub(crate) fn corpus_texts() -> Vec<(String, String)> {
    testdata::files("iptables", "txt")
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            let text = read(&name);
            (name, text)
        })
        .collect()
}

/// Compares two texts line by line and reports the first difference readably.
pub(crate) fn assert_text_eq(what: &str, got: &str, expected: &str) {
    if got == expected {
        return;
    }
    for (i, (g, e)) in got.lines().zip(expected.lines()).enumerate() {
        assert_eq!(g, e, "{what}: first difference at line {}", i + 1);
    }
    panic!(
        "{what}: {} lines vs {} expected (or trailing newline differs)\n--- got:\n{got}",
        got.lines().count(),
        expected.lines().count()
    );
}

use iptables_model::Cidr;
use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, LocalDetector, Protocol, ProxyOptions, Service,
    ServicePort, ServiceType, TrafficPolicy,
};
use serde_json::Value;
use std::net::IpAddr;

/// Reads a corpus JSON vector.
pub(crate) fn vector(name: &str) -> Value {
    serde_json::from_str(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The node addresses of the unit tests' fake interfaces (corpus README), loopback first.
pub(crate) fn interface_addresses() -> Vec<IpAddr> {
    [
        "127.0.0.1",
        "::1",
        "192.168.0.2",
        "192.168.1.2",
        "192.168.99.11",
        "2001:db8::1",
        "2001:db8:1::2",
    ]
    .iter()
    .map(|a| a.parse().unwrap())
    .collect()
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

fn protocol(v: &Value) -> Protocol {
    match str_of(v, "protocol").unwrap_or("TCP") {
        "TCP" => Protocol::Tcp,
        "UDP" => Protocol::Udp,
        "SCTP" => Protocol::Sctp,
        other => panic!("protocol {other}"),
    }
}

fn policy(v: &Value, key: &str) -> TrafficPolicy {
    if str_of(v, key) == Some("Local") {
        TrafficPolicy::Local
    } else {
        TrafficPolicy::Cluster
    }
}

/// Proxier options: the corpus defaults, overridden by each layer of `layers` in turn.
pub(crate) fn options(layers: &[&Value]) -> ProxyOptions {
    let mut o = ProxyOptions::new("test-hostname", "192.168.0.2".parse().unwrap());
    o.local_detector = LocalDetector::Cidr("10.0.0.0/8".parse().unwrap());
    o.nfacct = true;
    o.interface_addresses = interface_addresses();
    for layer in layers {
        let Some(map) = layer.as_object() else {
            continue;
        };
        for (key, value) in map {
            match key.as_str() {
                "hostname" => o.hostname = value.as_str().unwrap().into(),
                "nodeIP" => o.node_ip = value.as_str().unwrap().parse().unwrap(),
                "podCIDR" => {
                    o.local_detector = value.as_str().map_or(LocalDetector::None, |c| {
                        LocalDetector::Cidr(c.parse::<Cidr>().unwrap())
                    })
                }
                "masqueradeMark" => {
                    o.masquerade_mark =
                        u32::from_str_radix(value.as_str().unwrap().trim_start_matches("0x"), 16)
                            .unwrap()
                }
                "masqueradeAll" => o.masquerade_all = value.as_bool().unwrap(),
                "localhostNodePorts" => o.localhost_node_ports = value.as_bool().unwrap(),
                "nfacct" => o.nfacct = value.as_bool().unwrap(),
                "conntrackTCPLiberal" => o.conntrack_tcp_liberal = value.as_bool().unwrap(),
                "randomFully" => o.random_fully = value.as_bool().unwrap(),
                "ipv6" => o.ipv6 = value.as_bool().unwrap(),
                "nodePortAddresses" => {
                    o.node_port_addresses = Some(
                        value
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|c| c.as_str().unwrap().parse().unwrap())
                            .collect(),
                    );
                }
                other => panic!("unknown option {other}"),
            }
        }
    }
    o
}

/// A Service from the corpus schema.
pub(crate) fn service(v: &Value) -> Service {
    Service {
        namespace: str_of(v, "namespace").unwrap().into(),
        name: str_of(v, "name").unwrap().into(),
        service_type: match str_of(v, "type").unwrap_or("ClusterIP") {
            "ClusterIP" => ServiceType::ClusterIp,
            "NodePort" => ServiceType::NodePort,
            "LoadBalancer" => ServiceType::LoadBalancer,
            "ExternalName" => ServiceType::ExternalName,
            other => panic!("type {other}"),
        },
        cluster_ip: str_of(v, "clusterIP").unwrap_or("").into(),
        ports: v["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| ServicePort {
                name: str_of(p, "name").unwrap_or("").into(),
                port: p["port"].as_u64().unwrap() as u16,
                protocol: protocol(p),
                node_port: p.get("nodePort").and_then(Value::as_u64).unwrap_or(0) as u16,
            })
            .collect(),
        external_ips: strings(v, "externalIPs"),
        load_balancer_ips: strings(v, "loadBalancerIPs"),
        load_balancer_source_ranges: strings(v, "loadBalancerSourceRanges"),
        external_traffic_policy: policy(v, "externalTrafficPolicy"),
        internal_traffic_policy: policy(v, "internalTrafficPolicy"),
        health_check_node_port: v
            .get("healthCheckNodePort")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u16,
        client_ip_affinity: (str_of(v, "sessionAffinity") == Some("ClientIP")).then(|| {
            v.get("affinityTimeoutSeconds")
                .and_then(Value::as_u64)
                .unwrap_or(10800) as u32
        }),
    }
}

/// An EndpointSlice from the corpus schema.
pub(crate) fn slice(v: &Value) -> EndpointSlice {
    EndpointSlice {
        namespace: str_of(v, "namespace").unwrap().into(),
        service: str_of(v, "service").unwrap().into(),
        ports: v["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| EndpointPort {
                name: str_of(p, "name").unwrap_or("").into(),
                port: p["port"].as_u64().unwrap() as u16,
                protocol: protocol(p),
            })
            .collect(),
        endpoints: v["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let c = e.get("conditions");
                let cond = |k: &str| c.and_then(|c| c.get(k)).and_then(Value::as_bool);
                Endpoint {
                    addresses: strings(e, "addresses"),
                    node_name: str_of(e, "nodeName").map(Into::into),
                    ready: cond("ready"),
                    serving: cond("serving"),
                    terminating: cond("terminating"),
                    ..Endpoint::default()
                }
            })
            .collect(),
    }
}

/// The services and slices of a vector (or case) object.
pub(crate) fn inputs(v: &Value) -> (Vec<Service>, Vec<EndpointSlice>) {
    let list = |k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    (
        list("services").iter().map(service).collect(),
        list("endpointSlices").iter().map(slice).collect(),
    )
}
