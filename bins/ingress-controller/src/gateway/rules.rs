//! Which rules of an HTTPRoute can be served (S-IR): a rule is invalid when one of its
//! filters or timeouts is refused or not implemented, or when nginx cannot serve one of its
//! matches ([`super::matches::rule_matches`], the planner's own check). An invalid rule keeps its place in the
//! precedence and answers 500 (S-IR.2); the route's status says which rules were dropped
//! (S-IR.3), and a route whose every rule is invalid is not accepted (S-AT.6).

use cluster_state::gateway::{HttpRoute, HttpRouteRule};

use super::Fault;
use super::filters::{Filter, rule_filters};
use super::timeouts::{Timeouts, timeouts};

/// What a valid rule does besides matching and forwarding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleActions {
    /// Its filters, in the order written.
    pub filters: Vec<Filter>,
    /// Its timeouts.
    pub timeouts: Timeouts,
}

/// The actions of `rule`, or why it is invalid.
pub fn rule_actions(rule: &HttpRouteRule) -> Result<RuleActions, Fault> {
    super::matches::rule_matches(rule)?;
    Ok(RuleActions {
        filters: rule_filters(rule)?,
        timeouts: timeouts(rule.timeouts.as_ref())?,
    })
}

/// The invalid rules of `route`: index and fault, in rule order.
fn invalid_rules(route: &HttpRoute) -> Vec<(usize, Fault)> {
    let rules = route.spec.rules();
    let checked = rules.iter().enumerate();
    checked
        .filter_map(|(index, rule)| rule_actions(rule).err().map(|fault| (index, fault)))
        .collect()
}

/// How the invalid rules of a route with `rules` rules bear on its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every rule can be served.
    Valid,
    /// Some rules are dropped: `PartiallyInvalid=True` with this message (S-IR.3).
    Partial(String),
    /// Every rule is invalid: `Accepted=False` for this reason (S-AT.6).
    Invalid(Fault),
}

/// The verdict on `route`'s rules; an invalid rule is named by its `name` when it has one,
/// else by its index.
pub fn verdict(route: &HttpRoute) -> Verdict {
    let rules = route.spec.rules();
    let invalid = invalid_rules(route);
    let Some((_, first)) = invalid.first() else {
        return Verdict::Valid;
    };
    let listed: Vec<String> = invalid
        .iter()
        .map(|(index, fault)| {
            let name = rules.get(*index).and_then(|r| r.name.as_deref());
            match name {
                Some(name) => format!("{name:?} ({})", fault.message),
                None => format!("{index} ({})", fault.message),
            }
        })
        .collect();
    // SH:478: the message of PartiallyInvalid starts with "Dropped Rule".
    let message = format!("Dropped Rule(s): {}", listed.join("; "));
    if invalid.len() >= rules.len() {
        Verdict::Invalid(Fault::new(first.reason, message))
    } else {
        Verdict::Partial(message)
    }
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::{HttpRouteFilter, HttpRouteSpec};

    use super::*;

    fn rule(filter: Option<&str>) -> HttpRouteRule {
        HttpRouteRule {
            filters: filter.map(|f| {
                vec![HttpRouteFilter {
                    type_: f.into(),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        }
    }

    fn route(rules: Vec<HttpRouteRule>) -> HttpRoute {
        HttpRoute {
            metadata: Default::default(),
            spec: HttpRouteSpec {
                rules: Some(rules),
                ..Default::default()
            },
            status: None,
        }
    }

    /// S-IR.3 and S-AT.6: no invalid rule, some, all.
    #[test]
    fn s_ir_3_verdicts() {
        let valid = route(vec![rule(None), rule(None)]);
        assert_eq!(verdict(&valid), Verdict::Valid);

        let partial = route(vec![rule(None), rule(Some("ExtensionRef"))]);
        assert_eq!(invalid_rules(&partial).len(), 1);
        let Verdict::Partial(message) = verdict(&partial) else {
            panic!("not partial");
        };
        assert!(message.starts_with("Dropped Rule"), "{message}");
        assert!(message.contains("1 (filter ExtensionRef"), "{message}");

        // A match the planner leaves out drops its rule too (one check for both).
        let mut unservable = rule(None);
        unservable.matches = Some(vec![cluster_state::gateway::HttpRouteMatch {
            method: Some("get".into()),
            ..Default::default()
        }]);
        let Verdict::Partial(message) = verdict(&route(vec![rule(None), unservable])) else {
            panic!("not partial");
        };
        assert!(message.contains("1 (match 0: method"), "{message}");

        let all = route(vec![rule(Some("CORS"))]);
        let Verdict::Invalid(fault) = verdict(&all) else {
            panic!("not invalid");
        };
        assert_eq!(fault.reason, "UnsupportedValue");
    }
}
