//! The Gateway API statuses the leader writes (issue #32, semantics S-ST): the statuses the
//! evaluation wants, with the addresses the Gateways are served on, less those the objects
//! already hold. Writing only differences keeps a status write from feeding itself: the write
//! comes back in the next snapshot, which then holds what is wanted.

use std::collections::BTreeMap;

use cluster_state::gateway::{GatewayStatus, GatewayStatusAddress};
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use cluster_state::{ObjectRef, Status};
use k8s_openapi::api::networking::v1::IngressLoadBalancerStatus;

use crate::gateway::collisions::Conflict;
use crate::gateway::{Evaluation, Fault};
use crate::objects::Objects;

/// The statuses of `evaluation` that `objects` do not hold: GatewayClasses first, then
/// Gateways, then HTTPRoutes and GRPCRoutes (a route's parent is then already described).
pub fn changed(evaluation: Evaluation, objects: &Objects) -> Vec<(ObjectRef, Status)> {
    let mut out = Vec::new();
    for (key, status) in evaluation.gateway_classes {
        let held = objects
            .gateway_classes
            .get(&key)
            .and_then(|o| o.status.as_ref());
        if held != Some(&status) {
            out.push((key, Status::GatewayClass(status)));
        }
    }
    for (key, status) in evaluation.gateways {
        let held = objects.gateways.get(&key).and_then(|o| o.status.as_ref());
        if held != Some(&status) {
            out.push((key, Status::Gateway(status)));
        }
    }
    for (key, status) in evaluation.http_routes {
        let held = objects
            .http_routes
            .get(&key)
            .and_then(|o| o.status.as_ref());
        if held != Some(&status) {
            out.push((key, Status::HttpRoute(status)));
        }
    }
    for (key, status) in evaluation.grpc_routes {
        let held = objects
            .grpc_routes
            .get(&key)
            .and_then(|o| o.status.as_ref());
        if held != Some(&status) {
            out.push((key, Status::GrpcRoute(status)));
        }
    }
    out
}

/// The resets of the Gateways that stopped being ours (S-ST.2: their class went away or now
/// names another controller): each Gateway `last` holds (what was wanted for the Gateways of
/// ours at the previous write) that `evaluation` no longer has, and whose status is still the
/// one wanted then, gets `Accepted` and `Programmed` back to `Unknown/Pending` (the CRD's
/// default), `ResolvedRefs`, `listeners` and `addresses` removed, other conditions kept. A
/// status someone else wrote since is left alone: the new controller owns it.
pub fn released(
    last: &BTreeMap<ObjectRef, GatewayStatus>,
    evaluation: &Evaluation,
    objects: &Objects,
    now: &Time,
) -> Vec<(ObjectRef, Status)> {
    let mut out = Vec::new();
    for (key, wanted) in last {
        if evaluation.gateways.contains_key(key) {
            continue;
        }
        let Some(gateway) = objects.gateways.get(key) else {
            continue;
        };
        if gateway.status.as_ref() != Some(wanted) {
            continue;
        }
        let generation = gateway.metadata.generation.unwrap_or(0);
        let pending = |type_: &str| Condition {
            type_: type_.to_owned(),
            status: "Unknown".into(),
            reason: "Pending".into(),
            message: "Waiting for controller".into(),
            observed_generation: Some(generation),
            last_transition_time: now.clone(),
        };
        let mut conditions = vec![pending("Accepted"), pending("Programmed")];
        let ours = ["Accepted", "Programmed", "ResolvedRefs"];
        let others = wanted.conditions.iter().flatten();
        conditions.extend(
            others
                .filter(|c| !ours.contains(&c.type_.as_str()))
                .cloned(),
        );
        let status = GatewayStatus {
            addresses: Some(Vec::new()),
            conditions: Some(conditions),
            listeners: Some(Vec::new()),
            attached_listener_sets: wanted.attached_listener_sets,
        };
        out.push((key.clone(), Status::Gateway(status)));
    }
    out
}

/// Sets `status.addresses` of every Gateway of `evaluation` that `addresses` knows, in its
/// order; the others keep what they hold (S-ST: addresses come from where the Gateway is
/// served, not from the evaluation).
pub fn set_addresses(
    evaluation: &mut Evaluation,
    addresses: impl Fn(&ObjectRef) -> Option<Vec<GatewayStatusAddress>>,
) {
    for (key, status) in &mut evaluation.gateways {
        if let Some(list) = addresses(key) {
            status.addresses = Some(list);
        }
    }
}

/// Sets `Conflicted=True` on each listener of `evaluation` that `conflicts` names (a
/// listener the configuration serves nothing of: every host name it has is held by an Ingress
/// or an older Gateway on its socket, or the socket speaks the other protocol). The transition
/// time the object already holds for that condition is kept; a conflict the evaluation found
/// itself stays.
pub fn set_conflicts(
    evaluation: &mut Evaluation,
    conflicts: &BTreeMap<(ObjectRef, String), Conflict>,
    objects: &Objects,
    now: &Time,
) {
    for (key, status) in &mut evaluation.gateways {
        let held = objects
            .gateways
            .get(key)
            .and_then(|g| g.status.as_ref())
            .and_then(|s| s.listeners.as_ref());
        for listener in status.listeners.iter_mut().flatten() {
            let Some(conflict) = conflicts.get(&(key.clone(), listener.name.clone())) else {
                continue;
            };
            let Some(condition) = listener
                .conditions
                .iter_mut()
                .find(|c| c.type_ == "Conflicted" && c.status != "True")
            else {
                continue;
            };
            let since = held
                .into_iter()
                .flatten()
                .filter(|l| l.name == listener.name)
                .flat_map(|l| &l.conditions)
                .find(|c| c.type_ == "Conflicted" && c.status == "True")
                .map_or_else(|| now.clone(), |c| c.last_transition_time.clone());
            condition.status = "True".into();
            condition.reason = conflict.reason.into();
            condition.message.clone_from(&conflict.message);
            condition.last_transition_time = since;
        }
    }
}

/// Sets `Programmed=False` with the fault's reason on each Gateway of `evaluation` that
/// `faults` names (S-GW.7: the pool has no address for it, `AddressNotUsable` or
/// `AddressNotAssigned`), and empties the addresses its status lists: it is bound to none.
/// A Gateway the evaluation already finds not programmed (not accepted) keeps that. The
/// transition time the object holds for `Programmed=False` is kept.
pub fn set_address_faults(
    evaluation: &mut Evaluation,
    faults: &BTreeMap<ObjectRef, Fault>,
    objects: &Objects,
    now: &Time,
) {
    for (key, status) in &mut evaluation.gateways {
        let Some(fault) = faults.get(key) else {
            continue;
        };
        let Some(condition) = status
            .conditions
            .iter_mut()
            .flatten()
            .find(|c| c.type_ == "Programmed" && c.status != "False")
        else {
            continue;
        };
        let since = objects
            .gateways
            .get(key)
            .and_then(|g| g.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .find(|c| c.type_ == "Programmed" && c.status == "False")
            .map_or_else(|| now.clone(), |c| c.last_transition_time.clone());
        condition.status = "False".into();
        condition.reason = fault.reason.into();
        condition.message.clone_from(&fault.message);
        condition.last_transition_time = since;
        // Written empty once; the API server then drops the empty list.
        if status.addresses.as_ref().is_some_and(|a| !a.is_empty()) {
            status.addresses = Some(Vec::new());
        }
    }
}

/// The addresses an Ingress status publishes (`--publish-service`,
/// `--publish-status-address`), as Gateway status addresses: `IPAddress` or `Hostname`
/// entries, in the same order. Gateways served on the shared listen address are reached
/// where the Ingresses are.
pub fn published_addresses(published: &IngressLoadBalancerStatus) -> Vec<GatewayStatusAddress> {
    let entries = published.ingress.iter().flatten();
    entries
        .filter_map(|entry| match (&entry.ip, &entry.hostname) {
            (Some(ip), _) => Some(address("IPAddress", ip)),
            (None, Some(hostname)) => Some(address("Hostname", hostname)),
            (None, None) => None,
        })
        .collect()
}

/// One status address of `type_`.
pub fn address(type_: &str, value: &str) -> GatewayStatusAddress {
    GatewayStatusAddress {
        type_: Some(type_.to_owned()),
        value: value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::Time;
    use cluster_state::k8s::jiff::Timestamp;
    use k8s_openapi::api::networking::v1::IngressLoadBalancerIngress;

    use super::*;
    use crate::gateway::{GatewayInputs, Settings, evaluate};

    fn addresses_of(status: &GatewayStatus) -> Vec<(String, String)> {
        let list = status.addresses.iter().flatten();
        list.map(|a| (a.type_.clone().unwrap_or_default(), a.value.clone()))
            .collect()
    }

    const MANIFEST: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ours}
spec: {controllerName: kube-node-net.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: theirs}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra, generation: 1}
spec:
  gatewayClassName: ours
  listeners:
    - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop, generation: 1}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80}]}
"#;

    fn objects() -> Objects {
        let mut objects = Objects::default();
        objects.add_yaml(MANIFEST).unwrap();
        objects
    }

    fn evaluation(objects: &Objects) -> Evaluation {
        let loaded = BTreeSet::new();
        let now = Time(Timestamp::from_second(1_800_000_000).unwrap());
        evaluate(
            GatewayInputs::new(objects, &loaded),
            &Settings::default(),
            &now,
        )
    }

    /// What is ours is written once: a second evaluation over objects that hold the written
    /// statuses wants nothing more; another controller's class is never written.
    #[test]
    fn only_what_differs_is_written() {
        let mut objects = objects();
        let writes = changed(evaluation(&objects), &objects);
        let keys: Vec<String> = writes
            .iter()
            .map(|(key, status)| format!("{} {key}", status.kind()))
            .collect();
        assert_eq!(
            keys,
            [
                "GatewayClass ours",
                "Gateway infra/gw",
                "HTTPRoute shop/web"
            ]
        );

        for (key, status) in writes {
            match status {
                Status::GatewayClass(s) => {
                    let class = objects.gateway_classes.get_mut(&key).unwrap();
                    std::sync::Arc::make_mut(class).status = Some(s);
                }
                Status::Gateway(s) => {
                    let gateway = objects.gateways.get_mut(&key).unwrap();
                    std::sync::Arc::make_mut(gateway).status = Some(s);
                }
                Status::HttpRoute(s) => {
                    let route = objects.http_routes.get_mut(&key).unwrap();
                    std::sync::Arc::make_mut(route).status = Some(s);
                }
                Status::GrpcRoute(s) => {
                    let route = objects.grpc_routes.get_mut(&key).unwrap();
                    std::sync::Arc::make_mut(route).status = Some(s);
                }
                Status::Ingress(_) => unreachable!("no Ingress here"),
            }
        }
        assert_eq!(changed(evaluation(&objects), &objects), []);
    }

    /// Gateways get the published addresses, typed as the Gateway API types them.
    #[test]
    fn published_addresses_become_gateway_addresses() {
        let published = IngressLoadBalancerStatus {
            ingress: Some(vec![
                IngressLoadBalancerIngress {
                    ip: Some("192.0.2.1".into()),
                    ..Default::default()
                },
                IngressLoadBalancerIngress {
                    hostname: Some("lb.example.com".into()),
                    ..Default::default()
                },
            ]),
        };
        let objects = objects();
        let mut evaluation = evaluation(&objects);
        let list = published_addresses(&published);
        set_addresses(&mut evaluation, |_| Some(list.clone()));
        let status = &evaluation.gateways[&ObjectRef::new("infra", "gw")];
        assert_eq!(
            addresses_of(status),
            [
                ("IPAddress".to_owned(), "192.0.2.1".to_owned()),
                ("Hostname".to_owned(), "lb.example.com".to_owned())
            ]
        );
    }

    /// A listener the configuration serves nothing of is `Conflicted=True`, and the
    /// condition keeps its transition time while the object holds it.
    #[test]
    fn conflicted_listeners_say_so_in_their_status() {
        use crate::gateway::collisions::Conflict;
        let mut objects = objects();
        let key = ObjectRef::new("infra", "gw");
        let conflicts = BTreeMap::from([(
            (key.clone(), "http".to_owned()),
            Conflict {
                reason: "HostnameConflict",
                message: "taken".into(),
            },
        )]);
        let conflicted = |evaluation: &Evaluation| {
            let status = &evaluation.gateways[&key];
            let listener = &status.listeners.as_ref().unwrap()[0];
            let c = listener
                .conditions
                .iter()
                .find(|c| c.type_ == "Conflicted")
                .unwrap()
                .clone();
            (c.status, c.reason, c.message, c.last_transition_time)
        };
        let mut first = evaluation(&objects);
        assert_eq!(conflicted(&first).0, "False");
        let then = Time(Timestamp::from_second(1_800_000_100).unwrap());
        set_conflicts(&mut first, &conflicts, &objects, &then);
        let (status, reason, message, time) = conflicted(&first);
        assert_eq!(
            (status.as_str(), reason.as_str(), message.as_str()),
            ("True", "HostnameConflict", "taken")
        );
        assert_eq!(time, then);

        // Written, then evaluated again later: nothing more to write.
        let written = first.gateways[&key].clone();
        std::sync::Arc::make_mut(objects.gateways.get_mut(&key).unwrap()).status = Some(written);
        let mut again = evaluation(&objects);
        let later = Time(Timestamp::from_second(1_800_000_200).unwrap());
        set_conflicts(&mut again, &conflicts, &objects, &later);
        assert_eq!(conflicted(&again).3, then);
        let changed = changed(again, &objects);
        assert!(!changed.iter().any(|(k, _)| *k == key), "{changed:?}");
    }

    /// S-ST.2: a Gateway whose class stops being ours gets our conditions reset to
    /// `Unknown/Pending` once, while it still holds what we wrote; a status another
    /// controller wrote since is left alone.
    #[test]
    fn s_st_2_a_released_gateway_is_reset_once() {
        let mut objects = objects();
        let key = ObjectRef::new("infra", "gw");
        let first = evaluation(&objects);
        let mut written = first.gateways[&key].clone();
        written.conditions.as_mut().unwrap().push(Condition {
            type_: "Example".into(),
            status: "True".into(),
            reason: "Someone".into(),
            message: String::new(),
            observed_generation: Some(1),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
        });
        let mut last = first.gateways.clone();
        last.insert(key.clone(), written.clone());
        std::sync::Arc::make_mut(objects.gateways.get_mut(&key).unwrap()).status =
            Some(written.clone());
        // Still ours: nothing to reset.
        let now = Time(Timestamp::from_second(1_800_000_300).unwrap());
        assert_eq!(released(&last, &evaluation(&objects), &objects, &now), []);

        let class = objects
            .gateway_classes
            .get_mut(&ObjectRef::cluster("ours"))
            .unwrap();
        std::sync::Arc::make_mut(class).spec.controller_name = "example.com/other".into();
        let second = evaluation(&objects);
        assert!(second.gateways.is_empty());
        let resets = released(&last, &second, &objects, &now);
        let [(reset_key, Status::Gateway(reset))] = resets.as_slice() else {
            panic!("{resets:?}");
        };
        assert_eq!(*reset_key, key);
        let conditions: Vec<(&str, &str, &str)> = reset
            .conditions
            .iter()
            .flatten()
            .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_str()))
            .collect();
        assert_eq!(
            conditions,
            [
                ("Accepted", "Unknown", "Pending"),
                ("Programmed", "Unknown", "Pending"),
                ("Example", "True", "Someone"),
            ]
        );
        assert!(reset.conditions.iter().flatten().all(|c| {
            c.type_ == "Example"
                || (c.last_transition_time == now && c.observed_generation == Some(1))
        }));
        assert_eq!(reset.listeners, Some(Vec::new()));
        assert_eq!(reset.addresses, Some(Vec::new()));

        // Once written, the object holds the reset, not what was last wanted: no second write.
        let mut after = objects.clone();
        let gateway = after.gateways.get_mut(&key).unwrap();
        std::sync::Arc::make_mut(gateway).status = Some(reset.clone());
        assert_eq!(released(&last, &second, &after, &now), []);
        // Another controller wrote first: its status stays.
        let mut theirs = written;
        theirs.listeners = Some(Vec::new());
        std::sync::Arc::make_mut(objects.gateways.get_mut(&key).unwrap()).status = Some(theirs);
        assert_eq!(released(&last, &second, &objects, &now), []);
    }
}
