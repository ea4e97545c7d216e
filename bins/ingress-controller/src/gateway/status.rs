//! The desired `status` of GatewayClasses, Gateways and routes (semantics §8, S-ST.1 to
//! S-ST.3), from the verdicts of the other files, as the typed status structs.
//!
//! Every condition carries the object's `metadata.generation` (0 when missing, S-0.3) and keeps
//! the `lastTransitionTime` the object already holds while its status stays the same.
//! Conditions of other types, and route parent entries of other controllers, are kept as they
//! are. `status.addresses` of a Gateway is kept as the object holds it: addresses come from the
//! address assignment, a later part.

use cluster_state::gateway::{
    Gateway, GatewayClass, GatewayClassStatus, GatewayStatus, ListenerStatus, RouteParentStatus,
    RouteStatus, SupportedFeature,
};
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};

use super::attach::Parent;
use super::class;
use super::listeners::{ListenerCheck, Verdict};
use super::{Fault, Settings, rules};

/// The most parent entries a route's status holds (the CRD's `maxItems`).
const MAX_PARENTS: usize = 32;

/// A condition of `type_` with `status` (`True`, `False`, `Unknown`), written now.
fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    meta: &ObjectMeta,
    now: &Time,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        observed_generation: Some(meta.generation.unwrap_or(0)),
        last_transition_time: now.clone(),
    }
}

/// `True` or `False`.
fn status_text(status: bool) -> &'static str {
    if status { "True" } else { "False" }
}

/// The condition of a verdict that is `True` with reason `type_` when `Ok`.
fn from_result(
    type_: &str,
    result: &Result<(), Fault>,
    ok: &str,
    meta: &ObjectMeta,
    now: &Time,
) -> Condition {
    match result {
        Ok(()) => condition(type_, "True", type_, ok, meta, now),
        Err(fault) => condition(type_, "False", fault.reason, &fault.message, meta, now),
    }
}

/// `ours` with the transition times `previous` holds for the same type and status, followed by
/// the conditions of `previous` whose types `ours` does not set.
pub fn merge_conditions(previous: &[Condition], mut ours: Vec<Condition>) -> Vec<Condition> {
    for condition in &mut ours {
        let same = previous
            .iter()
            .find(|p| p.type_ == condition.type_ && p.status == condition.status);
        if let Some(same) = same {
            condition.last_transition_time = same.last_transition_time.clone();
        }
    }
    let others: Vec<Condition> = previous
        .iter()
        .filter(|p| !ours.iter().any(|o| o.type_ == p.type_))
        .cloned()
        .collect();
    ours.extend(others);
    ours
}

/// The desired status of a class of ours (S-GC.2 to S-GC.4).
pub fn class_status(class: &GatewayClass, settings: &Settings, now: &Time) -> GatewayClassStatus {
    let meta = &class.metadata;
    let ours = vec![
        from_result(
            "Accepted",
            &class::accepted(class),
            "the class is accepted",
            meta,
            now,
        ),
        from_result(
            "SupportedVersion",
            &class::supported_version(settings),
            "the Gateway API version is supported",
            meta,
            now,
        ),
    ];
    let previous = class.status.as_ref().and_then(|s| s.conditions.as_deref());
    let mut features = settings.supported_features.clone();
    features.sort();
    features.dedup();
    GatewayClassStatus {
        conditions: Some(merge_conditions(previous.unwrap_or_default(), ours)),
        supported_features: Some(
            features
                .into_iter()
                .map(|name| SupportedFeature { name })
                .collect(),
        ),
    }
}

/// The desired status of a Gateway of ours (S-GW.5, S-GW.9 to S-GW.14): `accepted` from
/// `listeners::gateway_accepted`, `listeners` its listeners' checks, `attached` the
/// attachedRoutes of each listener (same order), `loaded` whether the running nginx
/// configuration holds the Gateway.
pub fn gateway_status(
    gateway: &Gateway,
    accepted: &Verdict,
    listeners: &[ListenerCheck],
    attached: &[i32],
    loaded: bool,
    now: &Time,
) -> GatewayStatus {
    let meta = &gateway.metadata;
    let previous = gateway.status.as_ref();
    let programmed = if !accepted.status {
        condition(
            "Programmed",
            "False",
            "Invalid",
            "the Gateway is not accepted",
            meta,
            now,
        )
    } else if loaded {
        condition(
            "Programmed",
            "True",
            "Programmed",
            "nginx serves the Gateway",
            meta,
            now,
        )
    } else {
        condition(
            "Programmed",
            "Unknown",
            "Pending",
            "not loaded into nginx yet",
            meta,
            now,
        )
    };
    let unresolved = listeners.iter().any(|l| l.resolved_refs.is_err());
    let resolved = if unresolved {
        let message = "some listeners have unresolved references";
        condition(
            "ResolvedRefs",
            "False",
            "ListenersNotResolved",
            message,
            meta,
            now,
        )
    } else {
        condition(
            "ResolvedRefs",
            "True",
            "ResolvedRefs",
            "every reference resolved",
            meta,
            now,
        )
    };
    let ours = vec![
        condition(
            "Accepted",
            status_text(accepted.status),
            accepted.reason,
            &accepted.message,
            meta,
            now,
        ),
        programmed,
        resolved,
    ];
    let previous_conditions = previous.and_then(|s| s.conditions.as_deref());
    let previous_listeners = previous
        .and_then(|s| s.listeners.as_deref())
        .unwrap_or_default();
    let statuses = listeners
        .iter()
        .enumerate()
        .map(|(index, check)| {
            let count = attached.get(index).copied().unwrap_or(0);
            let before = previous_listeners.iter().find(|l| l.name == check.name);
            listener_status(check, count, loaded, before, meta, now)
        })
        .collect();
    GatewayStatus {
        addresses: previous.and_then(|s| s.addresses.clone()),
        conditions: Some(merge_conditions(
            previous_conditions.unwrap_or_default(),
            ours,
        )),
        listeners: Some(statuses),
        attached_listener_sets: None,
    }
}

/// One listener's status (S-GW.5, S-GW.13): Accepted, Programmed, ResolvedRefs, Conflicted, and
/// OverlappingTLSConfig only when true.
fn listener_status(
    check: &ListenerCheck,
    attached: i32,
    loaded: bool,
    previous: Option<&ListenerStatus>,
    meta: &ObjectMeta,
    now: &Time,
) -> ListenerStatus {
    let valid = check.accepted.is_ok() && check.resolved_refs.is_ok();
    let programmed = match (valid, loaded) {
        (false, _) => condition(
            "Programmed",
            "False",
            "Invalid",
            "the listener is invalid or has unresolved references",
            meta,
            now,
        ),
        (true, true) => condition(
            "Programmed",
            "True",
            "Programmed",
            "nginx serves the listener",
            meta,
            now,
        ),
        (true, false) => condition(
            "Programmed",
            "False",
            "Pending",
            "not loaded into nginx yet",
            meta,
            now,
        ),
    };
    let conflicted = match &check.conflicted {
        Some(fault) => condition(
            "Conflicted",
            "True",
            fault.reason,
            &fault.message,
            meta,
            now,
        ),
        None => condition(
            "Conflicted",
            "False",
            "NoConflicts",
            "no conflicts",
            meta,
            now,
        ),
    };
    let mut ours = vec![
        from_result(
            "Accepted",
            &check.accepted,
            "the listener is accepted",
            meta,
            now,
        ),
        programmed,
        from_result(
            "ResolvedRefs",
            &check.resolved_refs,
            "every reference resolved",
            meta,
            now,
        ),
        conflicted,
    ];
    if check.overlapping_tls {
        let message = "another HTTPS listener on this port has an overlapping hostname";
        ours.push(condition(
            "OverlappingTLSConfig",
            "True",
            "OverlappingHostnames",
            message,
            meta,
            now,
        ));
    }
    let previous = previous
        .map(|p| p.conditions.as_slice())
        .unwrap_or_default();
    let mut conditions = merge_conditions(previous, ours);
    // A condition type we no longer set (OverlappingTLSConfig resolved) must not linger.
    if !check.overlapping_tls {
        conditions.retain(|c| c.type_ != "OverlappingTLSConfig");
    }
    ListenerStatus {
        name: check.name.clone(),
        supported_kinds: Some(check.supported_kinds.clone()),
        attached_routes: attached,
        conditions,
    }
}

/// What was found about a route as a whole, the same under every parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteFindings {
    /// Whether every backendRef resolves (S-BR.2).
    pub resolved: Result<(), Fault>,
    /// Whether its rules can be served (S-IR.3, S-AT.6).
    pub rules: rules::Verdict,
}

/// The desired status of a route (S-ST.1): the entries of other controllers kept in place, ours
/// replaced by one per parent in `parents` (Accepted, unless every rule is invalid;
/// ResolvedRefs, written even when not accepted; PartiallyInvalid when some rules are
/// invalid, removed when none is), at most 32 entries.
pub fn route_status(
    meta: &ObjectMeta,
    previous: Option<&RouteStatus>,
    parents: &[Parent],
    findings: &RouteFindings,
    settings: &Settings,
    now: &Time,
) -> RouteStatus {
    let previous = previous.map(|s| s.parents.as_slice()).unwrap_or_default();
    let mut entries: Vec<RouteParentStatus> = previous
        .iter()
        .filter(|p| p.controller_name != settings.controller_name)
        .cloned()
        .collect();
    for parent in parents {
        let accepted = match (&parent.accepted, &findings.rules) {
            (Ok(_), rules::Verdict::Invalid(fault)) => {
                condition("Accepted", "False", fault.reason, &fault.message, meta, now)
            }
            (Ok(_), _) => condition(
                "Accepted",
                "True",
                "Accepted",
                "the route is accepted",
                meta,
                now,
            ),
            (Err(fault), _) => {
                condition("Accepted", "False", fault.reason, &fault.message, meta, now)
            }
        };
        let mut ours = vec![
            accepted,
            from_result(
                "ResolvedRefs",
                &findings.resolved,
                "every reference resolved",
                meta,
                now,
            ),
        ];
        if let rules::Verdict::Partial(message) = &findings.rules {
            let reason = "UnsupportedValue";
            ours.push(condition(
                "PartiallyInvalid",
                "True",
                reason,
                message,
                meta,
                now,
            ));
        }
        let before = previous
            .iter()
            .find(|p| {
                p.controller_name == settings.controller_name && p.parent_ref == parent.parent_ref
            })
            .map(|p| p.conditions.as_slice())
            .unwrap_or_default();
        let mut conditions = merge_conditions(before, ours);
        // Never written as False (S-IR.3): gone once every rule is valid again.
        if !matches!(findings.rules, rules::Verdict::Partial(_)) {
            conditions.retain(|c| c.type_ != "PartiallyInvalid");
        }
        entries.push(RouteParentStatus {
            parent_ref: parent.parent_ref.clone(),
            controller_name: settings.controller_name.clone(),
            conditions,
        });
    }
    entries.truncate(MAX_PARENTS);
    RouteStatus { parents: entries }
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::{GatewayClassSpec, ParentReference};
    use cluster_state::k8s::jiff::Timestamp;

    use super::*;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).unwrap())
    }

    fn meta(generation: Option<i64>) -> ObjectMeta {
        ObjectMeta {
            generation,
            ..Default::default()
        }
    }

    #[test]
    fn s_0_3_generation_and_transition_times() {
        let old = condition("Accepted", "True", "Accepted", "", &meta(Some(1)), &at(1));
        let other = condition("Custom", "True", "X", "", &meta(Some(1)), &at(1));
        let same = condition("Accepted", "True", "Accepted", "", &meta(Some(2)), &at(5));
        let merged = merge_conditions(&[old.clone(), other.clone()], vec![same]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].last_transition_time, at(1));
        assert_eq!(merged[0].observed_generation, Some(2));
        assert_eq!(merged[1], other);
        let flipped = condition("Accepted", "False", "Invalid", "", &meta(None), &at(5));
        let merged = merge_conditions(&[old], vec![flipped]);
        assert_eq!(merged[0].last_transition_time, at(5));
        assert_eq!(merged[0].observed_generation, Some(0));
    }

    /// GatewayClassObservedGenerationBump: Accepted carries the new generation.
    #[test]
    fn s_st_3_class_status() {
        let mut class = GatewayClass {
            metadata: meta(Some(3)),
            spec: GatewayClassSpec {
                controller_name: "kube-node-net.io/gateway-controller".into(),
                ..Default::default()
            },
            status: None,
        };
        let settings = Settings {
            supported_features: vec!["HTTPRoute".into(), "Gateway".into()],
            ..Settings::default()
        };
        let status = class_status(&class, &settings, &at(1));
        let conditions = status.conditions.clone().unwrap();
        assert_eq!(conditions[0].type_, "Accepted");
        assert_eq!(conditions[0].status, "True");
        assert_eq!(conditions[0].observed_generation, Some(3));
        assert_eq!(conditions[1].type_, "SupportedVersion");
        let names: Vec<String> = status
            .supported_features
            .unwrap()
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["Gateway", "HTTPRoute"]);
        class.status = Some(GatewayClassStatus {
            conditions: Some(conditions),
            supported_features: None,
        });
        class.metadata.generation = Some(4);
        let bumped = class_status(&class, &settings, &at(9));
        let accepted = &bumped.conditions.unwrap()[0];
        assert_eq!(accepted.observed_generation, Some(4));
        assert_eq!(accepted.last_transition_time, at(1));
    }

    #[test]
    fn s_st_1_other_controllers_entries_are_kept_ours_replaced() {
        let settings = Settings::default();
        let parent_ref = ParentReference {
            name: "gw".into(),
            ..Default::default()
        };
        let theirs = RouteParentStatus {
            parent_ref: parent_ref.clone(),
            controller_name: "example.com/other".into(),
            conditions: Vec::new(),
        };
        let stale = RouteParentStatus {
            parent_ref: ParentReference {
                name: "gone".into(),
                ..Default::default()
            },
            controller_name: settings.controller_name.clone(),
            conditions: Vec::new(),
        };
        let previous = RouteStatus {
            parents: vec![theirs.clone(), stale],
        };
        let parents = [Parent {
            parent_ref: parent_ref.clone(),
            gateway: cluster_state::ObjectRef::new("ns", "gw"),
            accepted: Err(Fault::new("NotAllowedByListeners", "no")),
        }];
        let findings = RouteFindings {
            resolved: Err(Fault::new("BackendNotFound", "gone")),
            rules: rules::Verdict::Valid,
        };
        let status = route_status(
            &meta(Some(2)),
            Some(&previous),
            &parents,
            &findings,
            &settings,
            &at(1),
        );
        assert_eq!(status.parents.len(), 2);
        assert_eq!(status.parents[0], theirs);
        let ours = &status.parents[1];
        assert_eq!(ours.controller_name, settings.controller_name);
        let reasons: Vec<(&str, &str, &str)> = ours
            .conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                ("Accepted", "False", "NotAllowedByListeners"),
                ("ResolvedRefs", "False", "BackendNotFound")
            ]
        );
    }
}
