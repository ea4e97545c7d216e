//! The manifests under `deploy/` against the code: every document typed with no unknown
//! field, every container's arguments accepted by its binary's own parser, and RBAC rules
//! that grant exactly the API calls the code makes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::Parser as _;
use cluster_state::{
    ApiCall, EVENT_API_CALLS, INVALID_OBJECT_EVENT_API_CALLS, Kind, PEER_API_CALLS, api_calls,
};
use deploy_check::{Manifest, deploy_dir, kustomization_resources, read_all};
use k8s_openapi::api::core::v1::{Container, PodSpec};
use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lease_driver::KubernetesStore;

/// The kinds the service proxy starts its source with.
const SERVICE_PROXY_KINDS: &[Kind] = service_proxy::KINDS;

/// The kinds the ingress controller watches.
const INGRESS_KINDS: &[Kind] = &ingress_controller::objects::KINDS;

/// The kinds whose status the ingress controller writes.
const INGRESS_STATUS_KINDS: &[Kind] = &ingress_controller::objects::STATUS_KINDS;

#[test]
fn every_manifest_is_typed_with_no_unknown_field_and_listed_by_the_kustomization() {
    let manifests = read_all().unwrap();
    assert!(manifests.len() >= 15, "{}", manifests.len());

    let listed: BTreeSet<PathBuf> = kustomization_resources().unwrap().into_iter().collect();
    let mut on_disk = BTreeSet::new();
    for folder in ["dns-cache", "service-proxy", "ingress-controller"] {
        for entry in std::fs::read_dir(deploy_dir().join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                on_disk.insert(path);
            }
        }
    }
    assert_eq!(listed, on_disk, "kustomization.yaml lists every manifest");
}

/// `(image name, pod spec)` of every DaemonSet and Deployment.
fn pod_specs() -> Vec<(String, PodSpec)> {
    read_all()
        .unwrap()
        .into_iter()
        .filter_map(|(_, manifest)| match manifest {
            Manifest::DaemonSet(set) => set.spec?.template.spec,
            Manifest::Deployment(deployment) => deployment.spec?.template.spec,
            _ => None,
        })
        .flat_map(|pod| {
            pod.containers
                .iter()
                .map(|container| (image_name(container), pod.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `ghcr.io/kube-node-net/dns-cache:0.1.0` → `dns-cache`.
fn image_name(container: &Container) -> String {
    let image = container.image.as_deref().unwrap_or_default();
    let name = image.rsplit('/').next().unwrap_or(image);
    name.split(':').next().unwrap_or(name).to_owned()
}

/// The container's command line as the kubelet runs it: `$(VAR)` replaced with a sample value
/// of the variable's source (a node name, a node IP, a pod name), the program name first.
fn command_line(container: &Container) -> Vec<String> {
    let sample = |var: &str| {
        let env = container.env.iter().flatten().find(|env| env.name == var);
        let field = env
            .and_then(|env| env.value_from.as_ref())
            .and_then(|from| from.field_ref.as_ref())
            .map(|field| field.field_path.as_str());
        match field {
            Some("spec.nodeName") => "node-1",
            Some("status.hostIP" | "status.podIP") => "192.0.2.1",
            Some("metadata.name") => "pod-1",
            other => panic!("{}: $({var}) has no sample for {other:?}", container.name),
        }
    };
    let expand = |arg: &String| {
        let mut arg = arg.clone();
        while let Some(start) = arg.find("$(") {
            let end = start + arg[start..].find(')').unwrap();
            let value = sample(&arg[start + 2..end]);
            arg.replace_range(start..=end, value);
        }
        arg
    };
    let program = container.command.iter().flatten().map(expand);
    let args = container.args.iter().flatten().map(expand);
    std::iter::once(image_name(container))
        .chain(program.skip(1))
        .chain(args)
        .collect()
}

#[test]
fn every_container_command_line_is_accepted_by_its_binary() {
    let mut checked = BTreeSet::new();
    for (image, pod) in pod_specs() {
        for container in pod
            .containers
            .iter()
            .chain(pod.init_containers.iter().flatten())
        {
            let line = command_line(container);
            let parsed = match image.as_str() {
                "dns-cache" if line.get(1).is_some_and(|mode| mode == "node-local") => {
                    dns_cache::nodelocal::args::NodeLocalArgs::try_parse_node_cache(&line[1..])
                        .map(drop)
                }
                "dns-cache" => dns_cache::cli::Cli::try_parse_coredns(&line).map(drop),
                "ingress-controller" => {
                    ingress_controller::cli::Cli::try_parse_from(&line).map(drop)
                }
                "service-proxy" => service_proxy::cli::Args::try_parse_from(&line).map(drop),
                other => panic!("no parser for image {other}"),
            };
            if let Err(error) = parsed {
                panic!("{image}: {line:?} refused:\n{error}");
            }
            checked.insert(image.clone());
        }
    }
    let expected = ["dns-cache", "ingress-controller", "service-proxy"];
    assert_eq!(checked, expected.map(String::from).into());
}

/// The grants of RBAC rules, as calls (`resourceNames` narrow a grant, never widen it).
fn granted(rules: &[PolicyRule]) -> BTreeSet<String> {
    let mut calls = BTreeSet::new();
    for rule in rules {
        assert!(rule.non_resource_urls.is_none(), "{rule:?}");
        for group in rule.api_groups.iter().flatten() {
            for resource in rule.resources.iter().flatten() {
                for verb in &rule.verbs {
                    assert_ne!(verb, "*", "{rule:?}");
                    let group = if group.is_empty() { "core" } else { group };
                    calls.insert(format!("{verb} {group}/{resource}"));
                }
            }
        }
    }
    calls
}

fn named(calls: impl IntoIterator<Item = ApiCall>) -> BTreeSet<String> {
    calls.into_iter().map(|call| call.to_string()).collect()
}

/// RBAC of the manifests: per service account `namespace/name`, the calls granted everywhere
/// (ClusterRoles through ClusterRoleBindings) and in its namespace (Roles through
/// RoleBindings).
#[derive(Default, Debug)]
struct Grants {
    cluster: BTreeSet<String>,
    namespaced: BTreeSet<String>,
}

fn grants_of(account: &str) -> Grants {
    let manifests: Vec<Manifest> = read_all().unwrap().into_iter().map(|(_, m)| m).collect();
    let cluster_role = |name: &str| {
        manifests.iter().find_map(|m| match m {
            Manifest::ClusterRole(role) if role.metadata.name.as_deref() == Some(name) => {
                Some(granted(role.rules.as_deref().unwrap_or_default()))
            }
            _ => None,
        })
    };
    let role = |namespace: &str, name: &str| {
        manifests.iter().find_map(|m| match m {
            Manifest::Role(role)
                if role.metadata.name.as_deref() == Some(name)
                    && role.metadata.namespace.as_deref() == Some(namespace) =>
            {
                Some(granted(role.rules.as_deref().unwrap_or_default()))
            }
            _ => None,
        })
    };
    let binds = |subjects: &Option<Vec<Subject>>, namespace: Option<&str>| {
        subjects.iter().flatten().any(|subject| {
            let subject_namespace = subject.namespace.as_deref().or(namespace).unwrap_or("");
            subject.kind == "ServiceAccount"
                && format!("{subject_namespace}/{}", subject.name) == account
        })
    };
    let mut grants = Grants::default();
    for manifest in &manifests {
        let (role_ref, namespace, subjects): (&RoleRef, Option<&str>, _) = match manifest {
            Manifest::ClusterRoleBinding(b) => (&b.role_ref, None, &b.subjects),
            Manifest::RoleBinding(b) => (&b.role_ref, b.metadata.namespace.as_deref(), &b.subjects),
            _ => continue,
        };
        if !binds(subjects, namespace) {
            continue;
        }
        match (role_ref.kind.as_str(), namespace) {
            ("ClusterRole", None) => grants.cluster.extend(cluster_role(&role_ref.name).unwrap()),
            ("Role", Some(namespace)) => grants
                .namespaced
                .extend(role(namespace, &role_ref.name).unwrap()),
            other => panic!("unexpected binding {other:?} to {role_ref:?}"),
        }
    }
    grants
}

#[test]
fn rbac_grants_exactly_the_calls_the_code_makes() {
    let proxy = grants_of("kube-system/service-proxy");
    let proxy_calls = api_calls(SERVICE_PROXY_KINDS, &[])
        .into_iter()
        .chain(INVALID_OBJECT_EVENT_API_CALLS);
    assert_eq!(proxy.cluster, named(proxy_calls));
    assert!(proxy.namespaced.is_empty(), "{proxy:?}");

    let ingress = grants_of("ingress-nginx/ingress-controller");
    let ingress_calls = api_calls(INGRESS_KINDS, INGRESS_STATUS_KINDS)
        .into_iter()
        .chain(EVENT_API_CALLS);
    assert_eq!(ingress.cluster, named(ingress_calls));
    assert_eq!(
        ingress.namespaced,
        named(KubernetesStore::API_CALLS.into_iter().chain(PEER_API_CALLS))
    );

    let dns = grants_of("kube-system/dns-cache");
    assert!(
        dns.cluster.is_empty() && dns.namespaced.is_empty(),
        "{dns:?}"
    );
}

#[test]
fn pods_run_under_the_accounts_the_rbac_is_for() {
    let accounts: BTreeSet<(String, String)> = pod_specs()
        .into_iter()
        .map(|(image, pod)| (image, pod.service_account_name.unwrap_or_default()))
        .collect();
    let expected = [
        ("dns-cache", "dns-cache"),
        ("ingress-controller", "ingress-controller"),
        ("service-proxy", "service-proxy"),
    ];
    assert_eq!(
        accounts,
        expected.map(|(i, a)| (i.to_owned(), a.to_owned())).into()
    );
}

/// kubeadm's CoreDNS add-on as it ships (`tests/data/kubeadm-coredns.yaml`): an operator who
/// changes only the image to dns-cache's keeps a Deployment whose arguments dns-cache accepts,
/// a ConfigMap whose Corefile is the one `bins/dns-cache/tests/kubernetes.rs` runs unchanged
/// (it also checks the probe and metrics ports there), and a `system:coredns` ClusterRole that
/// grants every call the `kubernetes` plugin's source makes, whatever its options.
#[test]
fn kubeadm_coredns_addon_runs_dns_cache_with_only_the_image_changed() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kubeadm-coredns.yaml");
    let manifests = deploy_check::read_file(&path).unwrap();
    let mut checked = BTreeSet::new();
    for manifest in &manifests {
        match manifest {
            Manifest::Deployment(deployment) => {
                let pod = deployment
                    .spec
                    .as_ref()
                    .unwrap()
                    .template
                    .spec
                    .as_ref()
                    .unwrap();
                let mut container = pod.containers[0].clone();
                container.image = Some("ghcr.io/kube-node-net/dns-cache:0.1.0".into());
                let line = command_line(&container);
                if let Err(error) = dns_cache::cli::Cli::try_parse_coredns(&line) {
                    panic!("{line:?} refused:\n{error}");
                }
                let probes: Vec<(String, &IntOrString)> =
                    [&container.liveness_probe, &container.readiness_probe]
                        .into_iter()
                        .map(|probe| {
                            let get = probe.as_ref().unwrap().http_get.as_ref().unwrap();
                            (get.path.clone().unwrap(), &get.port)
                        })
                        .collect();
                let named_port = |name: &str| IntOrString::String(name.into());
                assert_eq!(
                    probes,
                    [
                        ("/health".to_owned(), &named_port("liveness-probe")),
                        ("/ready".to_owned(), &named_port("readiness-probe"))
                    ]
                );
                // The named ports: health's and ready's defaults, prometheus's `:9153`.
                let ports: Vec<(Option<&str>, i32)> = container
                    .ports
                    .iter()
                    .flatten()
                    .map(|p| (p.name.as_deref(), p.container_port))
                    .collect();
                for port in [
                    (Some("liveness-probe"), 8080),
                    (Some("readiness-probe"), 8181),
                    (Some("metrics"), 9153),
                ] {
                    assert!(ports.contains(&port), "{port:?} in {ports:?}");
                }
                checked.insert("Deployment");
            }
            Manifest::ConfigMap(map) => {
                let corefile = map.data.as_ref().unwrap().get("Corefile").unwrap();
                assert_eq!(
                    corefile,
                    include_str!(
                        "../../../testdata/corefile/k8s-kubernetes-cmd-kubeadm-app-phases-addons-dns-manifests-go-rendered.Corefile"
                    )
                );
                checked.insert("ConfigMap");
            }
            Manifest::ClusterRole(role) => {
                let granted = granted(role.rules.as_deref().unwrap_or_default());
                let needed = named(api_calls(dns_cache::plugin::kubernetes::KINDS, &[]));
                let missing: Vec<_> = needed.difference(&granted).collect();
                assert!(missing.is_empty(), "system:coredns lacks {missing:?}");
                checked.insert("ClusterRole");
            }
            _ => {}
        }
    }
    assert_eq!(checked.len(), 3, "{checked:?}");
}
