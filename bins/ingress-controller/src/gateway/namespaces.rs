//! Whether a listener's `allowedRoutes.namespaces` admits a route's namespace (semantics
//! S-GW.15): `Same`, `All`, or `Selector` over the Namespace's labels, which always include the
//! implicit `kubernetes.io/metadata.name` label the API server sets.

use std::collections::BTreeMap;

use cluster_state::gateway::ListenerNamespaces;
use cluster_state::k8s::api::core::v1::Namespace;
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::LabelSelector;
use cluster_state::{ObjectRef, Objects};

/// The label the API server puts on every Namespace, holding its name.
pub const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Whether routes of namespace `route_namespace` may attach to a listener of a Gateway in
/// `gateway_namespace` whose `allowedRoutes.namespaces` is `allowed`. An unknown `from` value,
/// or `Selector` without a selector, admits nothing.
pub fn admits(
    allowed: &ListenerNamespaces,
    gateway_namespace: &str,
    route_namespace: &str,
    namespaces: &Objects<Namespace>,
) -> bool {
    match allowed.from() {
        "All" => true,
        "Same" => gateway_namespace == route_namespace,
        "Selector" => allowed
            .selector
            .as_ref()
            .is_some_and(|selector| selects(selector, &labels(route_namespace, namespaces))),
        _ => false,
    }
}

/// The labels of namespace `name`, with the implicit name label; just that label when the
/// Namespace object is not known.
fn labels(name: &str, namespaces: &Objects<Namespace>) -> BTreeMap<String, String> {
    let mut labels = namespaces
        .get(&ObjectRef::cluster(name))
        .and_then(|namespace| namespace.metadata.labels.clone())
        .unwrap_or_default();
    labels.insert(NAME_LABEL.to_owned(), name.to_owned());
    labels
}

/// Whether the structured `selector` selects `labels`, as apimachinery defines it: every
/// `matchLabels` entry equal, and every expression true (`In`, `NotIn`, `Exists`,
/// `DoesNotExist`; an unknown operator selects nothing). An empty selector selects everything.
fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let equal = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    let expressions = selector.match_expressions.iter().flatten().all(|e| {
        let value = labels.get(&e.key);
        let listed = |v: &String| e.values.iter().flatten().any(|allowed| allowed == v);
        match e.operator.as_str() {
            "In" => value.is_some_and(listed),
            "NotIn" => !value.is_some_and(listed),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    equal && expressions
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::{
        LabelSelectorRequirement, ObjectMeta,
    };

    use super::*;

    fn namespaces() -> Objects<Namespace> {
        let web = Namespace {
            metadata: ObjectMeta {
                name: Some("web".into()),
                labels: Some(BTreeMap::from([("team".into(), "a".into())])),
                ..Default::default()
            },
            ..Default::default()
        };
        Objects::from([(ObjectRef::cluster("web"), Arc::new(web))])
    }

    fn from(value: Option<&str>, selector: Option<LabelSelector>) -> ListenerNamespaces {
        ListenerNamespaces {
            from: value.map(Into::into),
            selector,
        }
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: key.into(),
                operator: operator.into(),
                values: Some(values.iter().map(|v| (*v).into()).collect()),
            }]),
            ..Default::default()
        }
    }

    #[test]
    fn s_gw_15_same_is_the_default_and_all_admits_any() {
        let ns = namespaces();
        assert!(admits(&from(None, None), "infra", "infra", &ns));
        assert!(!admits(&from(None, None), "infra", "web", &ns));
        assert!(!admits(&from(Some("Same"), None), "infra", "web", &ns));
        assert!(admits(&from(Some("All"), None), "infra", "web", &ns));
        assert!(!admits(&from(Some("None"), None), "infra", "infra", &ns));
    }

    #[test]
    fn s_gw_15_selector_sees_the_labels_and_the_implicit_name_label() {
        let ns = namespaces();
        let by_label = LabelSelector {
            match_labels: Some(BTreeMap::from([("team".into(), "a".into())])),
            ..Default::default()
        };
        assert!(admits(
            &from(Some("Selector"), Some(by_label.clone())),
            "i",
            "web",
            &ns
        ));
        assert!(!admits(
            &from(Some("Selector"), Some(by_label)),
            "i",
            "other",
            &ns
        ));
        // GatewayWithAttachedRoutes selects on the implicit label; an unknown Namespace has it.
        let by_name = expression(NAME_LABEL, "In", &["web", "ghost"]);
        let selector = from(Some("Selector"), Some(by_name));
        assert!(admits(&selector, "i", "web", &ns));
        assert!(admits(&selector, "i", "ghost", &ns));
        assert!(!admits(&selector, "i", "infra", &ns));
        let not_in = from(Some("Selector"), Some(expression("team", "NotIn", &["a"])));
        assert!(!admits(&not_in, "i", "web", &ns));
        assert!(admits(&not_in, "i", "infra", &ns));
        let exists = from(Some("Selector"), Some(expression("team", "Exists", &[])));
        assert!(admits(&exists, "i", "web", &ns));
        let absent = from(
            Some("Selector"),
            Some(expression("team", "DoesNotExist", &[])),
        );
        assert!(admits(&absent, "i", "infra", &ns));
        let unknown = from(Some("Selector"), Some(expression("team", "Gt", &["1"])));
        assert!(!admits(&unknown, "i", "web", &ns));
        assert!(!admits(&from(Some("Selector"), None), "i", "web", &ns));
        let everything = from(Some("Selector"), Some(LabelSelector::default()));
        assert!(admits(&everything, "i", "anything", &ns));
    }
}
