//! Problems reported on the objects themselves (Ingresses, Gateways, HTTPRoutes), as
//! Kubernetes Events (`events.k8s.io/v1`, type `Warning`), deduplicated: a problem is reported
//! when it appears on an object, not on every reconcile; a problem that goes away and comes back
//! is a repeat of its first event (its `series.count` grows) rather than a new event.
//!
//! Pure: [`Reporter`] decides what to report, [`event`] builds the Event; the controller
//! records them through cluster-state (leader only).

use std::collections::{BTreeMap, BTreeSet};

use cluster_state::{EVENT_INSTANCE_LIMIT, EVENT_NOTE_LIMIT, Kind, ObjectRef, truncate_utf8};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;

/// `reportingController` of our events (a qualified name, as the API requires).
pub const REPORTING_CONTROLLER: &str = "kube-node-net/ingress-controller";

/// The object a problem regards.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Subject {
    /// Its kind.
    pub kind: Kind,
    /// Its key.
    pub key: ObjectRef,
}

impl Subject {
    /// The Ingress `key`.
    pub fn ingress(key: ObjectRef) -> Self {
        Self {
            kind: Kind::Ingress,
            key,
        }
    }
}

/// A problem as reported: the object, the event's reason and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The object.
    pub subject: Subject,
    /// The event's reason (`InvalidAnnotation`, `InvalidHTTPRoute`, …).
    pub reason: &'static str,
    /// What is wrong (the event's note).
    pub message: String,
}

impl From<&crate::model::Problem> for Finding {
    fn from(problem: &crate::model::Problem) -> Self {
        Self {
            subject: Subject::ingress(problem.ingress.clone()),
            reason: problem.reason.as_str(),
            message: problem.message.clone(),
        }
    }
}

impl From<&crate::gateway::plan::Problem> for Finding {
    /// A Gateway or route the configuration does not (fully) serve: `InvalidGateway`,
    /// `InvalidGRPCRoute`, `InvalidHTTPRoute`.
    fn from(problem: &crate::gateway::plan::Problem) -> Self {
        let reason = match problem.kind {
            Kind::Gateway => "InvalidGateway",
            Kind::GrpcRoute => "InvalidGRPCRoute",
            _ => "InvalidHTTPRoute",
        };
        Self {
            subject: Subject {
                kind: problem.kind,
                key: problem.object.clone(),
            },
            reason,
            message: problem.message.clone(),
        }
    }
}

/// One problem of one object, as reported.
type Key = (&'static str, String);

/// An event to record: a problem that appeared on an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The object.
    pub subject: Subject,
    /// The event's reason.
    pub reason: &'static str,
    /// What is wrong (the event's note).
    pub message: String,
    /// The event's name, the same for every repeat.
    pub name: String,
    /// When the problem was first reported.
    pub first: Timestamp,
    /// How many times it has been reported, this time included (1: a new event).
    pub count: i32,
}

/// An event recorded so far.
#[derive(Clone, Debug)]
struct Occurrence {
    name: String,
    first: Timestamp,
    count: i32,
}

/// What was reported, per object: decides which problems to report next.
#[derive(Debug, Default)]
pub struct Reporter {
    /// The problems of each object when last reported.
    reported: BTreeMap<Subject, BTreeSet<Key>>,
    /// The event of every problem reported on each object (for repeats).
    events: BTreeMap<Subject, BTreeMap<Key, Occurrence>>,
}

impl Reporter {
    /// The reports due at `now` for the current `findings`: the problems of each object that
    /// were not among its problems last time. The history of objects that no longer `exist`
    /// is dropped.
    pub fn update(
        &mut self,
        findings: &[Finding],
        exists: impl Fn(&Subject) -> bool,
        now: Timestamp,
    ) -> Vec<Report> {
        let mut current: BTreeMap<Subject, BTreeSet<Key>> = BTreeMap::new();
        for finding in findings {
            let key = (finding.reason, finding.message.clone());
            current
                .entry(finding.subject.clone())
                .or_default()
                .insert(key);
        }
        let mut reports = Vec::new();
        for (subject, keys) in &current {
            let before = self.reported.get(subject);
            let appeared = keys
                .iter()
                .filter(|key| before.is_none_or(|b| !b.contains(key)));
            for key in appeared {
                let events = self.events.entry(subject.clone()).or_default();
                let occurrence = events
                    .entry(key.clone())
                    .and_modify(|o| o.count = o.count.saturating_add(1))
                    .or_insert_with(|| Occurrence {
                        name: event_name(subject, key, now),
                        first: now,
                        count: 1,
                    });
                reports.push(Report {
                    subject: subject.clone(),
                    reason: key.0,
                    message: key.1.clone(),
                    name: occurrence.name.clone(),
                    first: occurrence.first,
                    count: occurrence.count,
                });
            }
        }
        self.reported = current;
        self.events.retain(|subject, _| exists(subject));
        reports
    }

    /// `report` could not be recorded: forget it, so that the next [`update`](Self::update)
    /// reports it again.
    pub fn failed(&mut self, report: &Report) {
        let key = (report.reason, report.message.clone());
        if let Some(keys) = self.reported.get_mut(&report.subject) {
            keys.remove(&key);
        }
        if let Some(events) = self.events.get_mut(&report.subject) {
            match events.get_mut(&key) {
                Some(occurrence) if occurrence.count > 1 => occurrence.count -= 1,
                Some(_) => {
                    events.remove(&key);
                }
                None => {}
            }
        }
    }
}

/// `NAME.HASH`: unique per object, problem and first time, and a valid object name.
fn event_name(subject: &Subject, key: &Key, now: Timestamp) -> String {
    let identity = (subject.kind.name(), &subject.key, key, now.as_nanosecond());
    cluster_state::event_name(&subject.key.name, identity)
}

/// The Event of `report` at `now`, regarding the object with `uid`, from the controller
/// replica `instance`.
pub fn event(report: &Report, uid: Option<&str>, instance: &str, now: Timestamp) -> Event {
    let series = (report.count > 1).then_some(EventSeries {
        count: report.count,
        last_observed_time: MicroTime(now),
    });
    let subject = &report.subject;
    Event {
        metadata: ObjectMeta {
            name: Some(report.name.clone()),
            namespace: Some(subject.key.namespace.clone()),
            ..ObjectMeta::default()
        },
        event_time: Some(MicroTime(report.first)),
        series,
        type_: Some("Warning".into()),
        reason: Some(report.reason.into()),
        action: Some("Reconcile".into()),
        note: Some(truncate_utf8(&report.message, EVENT_NOTE_LIMIT).to_owned()),
        regarding: Some(ObjectReference {
            api_version: Some(subject.kind.api_version().into()),
            kind: Some(subject.kind.name().into()),
            namespace: Some(subject.key.namespace.clone()),
            name: Some(subject.key.name.clone()),
            uid: uid.map(str::to_owned),
            ..ObjectReference::default()
        }),
        reporting_controller: Some(REPORTING_CONTROLLER.into()),
        reporting_instance: Some(truncate_utf8(instance, EVENT_INSTANCE_LIMIT).to_owned()),
        ..Event::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Problem, Reason};

    fn problem(ingress: &str, reason: Reason, message: &str) -> Finding {
        Finding::from(&Problem {
            ingress: ObjectRef::new("shop", ingress),
            reason,
            message: message.into(),
        })
    }

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_796_032_800 + second).unwrap()
    }

    fn summary(reports: &[Report]) -> Vec<(String, String, i32)> {
        reports
            .iter()
            .map(|r| (r.subject.key.name.clone(), r.message.clone(), r.count))
            .collect()
    }

    const BAD_RPS: &str = "annotation nginx.ingress.kubernetes.io/limit-rps: not a number";
    const SNIPPET: &str = "annotation nginx.ingress.kubernetes.io/server-snippet: refused";

    #[test]
    fn a_problem_is_reported_once_while_it_lasts() {
        let mut reporter = Reporter::default();
        let problems = [problem("web", Reason::InvalidAnnotation, BAD_RPS)];
        let first = reporter.update(&problems, |_| true, at(0));
        assert_eq!(summary(&first), [("web".into(), BAD_RPS.into(), 1)]);
        for second in 1..5 {
            assert!(reporter.update(&problems, |_| true, at(second)).is_empty());
        }
    }

    #[test]
    fn only_the_problems_that_appear_are_reported() {
        let mut reporter = Reporter::default();
        let one = [problem("web", Reason::InvalidAnnotation, BAD_RPS)];
        reporter.update(&one, |_| true, at(0));
        let two = [
            problem("web", Reason::InvalidAnnotation, BAD_RPS),
            problem("web", Reason::InvalidAnnotation, SNIPPET),
            problem("api", Reason::InvalidIngress, "no spec"),
        ];
        let reports = reporter.update(&two, |_| true, at(1));
        assert_eq!(
            summary(&reports),
            [
                ("api".into(), "no spec".into(), 1),
                ("web".into(), SNIPPET.into(), 1)
            ]
        );
    }

    #[test]
    fn a_problem_that_comes_back_is_a_repeat_of_its_event() {
        let mut reporter = Reporter::default();
        let problems = [problem("web", Reason::InvalidAnnotation, BAD_RPS)];
        let first = reporter.update(&problems, |_| true, at(0));
        assert!(reporter.update(&[], |_| true, at(1)).is_empty());
        let again = reporter.update(&problems, |_| true, at(2));
        assert_eq!(summary(&again), [("web".into(), BAD_RPS.into(), 2)]);
        assert_eq!(
            (&again[0].name, again[0].first),
            (&first[0].name, first[0].first)
        );

        // A deleted Ingress's history goes: the same problem later is a new event.
        reporter.update(&[], |_| false, at(3));
        let new = reporter.update(&problems, |_| true, at(4));
        assert_eq!(new[0].count, 1);
        assert_ne!(new[0].name, first[0].name);
    }

    #[test]
    fn a_failed_report_is_reported_again() {
        let mut reporter = Reporter::default();
        let problems = [problem("web", Reason::InvalidAnnotation, BAD_RPS)];
        let first = reporter.update(&problems, |_| true, at(0));
        reporter.failed(&first[0]);
        let retried = reporter.update(&problems, |_| true, at(1));
        assert_eq!(summary(&retried), summary(&first));
        assert!(reporter.update(&problems, |_| true, at(2)).is_empty());
    }

    #[test]
    fn events_are_warnings_regarding_the_ingress_with_a_series_for_repeats() {
        let report = Report {
            subject: Subject::ingress(ObjectRef::new("shop", "web")),
            reason: Reason::InvalidAnnotation.as_str(),
            message: "é".repeat(600),
            name: "web.0123456789abcdef".into(),
            first: at(0),
            count: 1,
        };
        let event = event(&report, Some("uid-1"), "replica-a", at(5));
        assert_eq!(event.type_.as_deref(), Some("Warning"));
        assert_eq!(event.reason.as_deref(), Some("InvalidAnnotation"));
        assert_eq!(event.event_time, Some(MicroTime(at(0))));
        assert!(event.series.is_none());
        let note = event.note.unwrap();
        assert!(note.len() <= EVENT_NOTE_LIMIT && note.chars().all(|c| c == 'é'));
        let regarding = event.regarding.unwrap();
        assert_eq!(
            (regarding.kind.as_deref(), regarding.uid.as_deref()),
            (Some("Ingress"), Some("uid-1"))
        );
        assert_eq!(event.metadata.namespace.as_deref(), Some("shop"));

        let repeat = super::event(&Report { count: 3, ..report }, None, "b", at(9));
        let series = repeat.series.unwrap();
        assert_eq!(
            (series.count, series.last_observed_time),
            (3, MicroTime(at(9)))
        );
    }

    /// What the Gateway planner cannot serve is reported on the route, by its API group.
    #[test]
    fn gateway_problems_are_events_regarding_the_route() {
        let problem = crate::gateway::plan::Problem {
            kind: Kind::HttpRoute,
            object: ObjectRef::new("shop", "web"),
            message: "timeouts are not applied".into(),
        };
        let mut reporter = Reporter::default();
        let reports = reporter.update(&[Finding::from(&problem)], |_| true, at(0));
        let event = event(&reports[0], None, "replica-a", at(0));
        assert_eq!(event.reason.as_deref(), Some("InvalidHTTPRoute"));
        let regarding = event.regarding.unwrap();
        assert_eq!(
            (regarding.api_version.as_deref(), regarding.kind.as_deref()),
            (Some("gateway.networking.k8s.io/v1"), Some("HTTPRoute"))
        );
    }

    #[test]
    fn event_names_are_valid_object_names() {
        let key = (Reason::InvalidIngress.as_str(), "no spec".to_owned());
        let long = Subject::ingress(ObjectRef::new("shop", format!("{}-x", "a".repeat(240))));
        let name = event_name(&long, &key, at(0));
        assert!(name.len() <= 253, "{name}");
        assert!(!name.contains("-."), "{name}");
        let web = Subject::ingress(ObjectRef::new("shop", "web"));
        let short = event_name(&web, &key, at(0));
        assert!(
            short.starts_with("web.") && short.len() == 4 + 16,
            "{short}"
        );
        assert_ne!(short, event_name(&web, &key, at(1)));
        // A route of the same name is another object: another event.
        let route = Subject {
            kind: Kind::HttpRoute,
            key: ObjectRef::new("shop", "web"),
        };
        assert_ne!(short, event_name(&route, &key, at(0)));
    }
}
