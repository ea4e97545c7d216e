//! Problems reported on the Ingresses themselves, as Kubernetes Events (`events.k8s.io/v1`,
//! type `Warning`), deduplicated: a problem is reported when it appears on an Ingress, not on
//! every reconcile; a problem that goes away and comes back is a repeat of its first event
//! (its `series.count` grows) rather than a new event.
//!
//! Pure: [`Reporter`] decides what to report, [`event`] builds the Event; the controller
//! records them through cluster-state (leader only).

use std::collections::{BTreeMap, BTreeSet};

use cluster_state::{EVENT_INSTANCE_LIMIT, EVENT_NOTE_LIMIT, ObjectRef, truncate_utf8};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;

use crate::model::{Problem, Reason};

/// `reportingController` of our events (a qualified name, as the API requires).
pub const REPORTING_CONTROLLER: &str = "kube-node-net/ingress-controller";

/// One problem of one Ingress, as reported.
type Key = (Reason, String);

/// An event to record: a problem that appeared on an Ingress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The Ingress.
    pub ingress: ObjectRef,
    /// The event's reason.
    pub reason: Reason,
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

/// What was reported, per Ingress: decides which problems to report next.
#[derive(Debug, Default)]
pub struct Reporter {
    /// The problems of each Ingress when last reported.
    reported: BTreeMap<ObjectRef, BTreeSet<Key>>,
    /// The event of every problem reported on each Ingress (for repeats).
    events: BTreeMap<ObjectRef, BTreeMap<Key, Occurrence>>,
}

impl Reporter {
    /// The reports due at `now` for the current `problems`: the problems of each Ingress that
    /// were not among its problems last time. The history of Ingresses that no longer `exist`
    /// is dropped.
    pub fn update(
        &mut self,
        problems: &[Problem],
        exists: impl Fn(&ObjectRef) -> bool,
        now: Timestamp,
    ) -> Vec<Report> {
        let mut current: BTreeMap<ObjectRef, BTreeSet<Key>> = BTreeMap::new();
        for problem in problems {
            let key = (problem.reason, problem.message.clone());
            current
                .entry(problem.ingress.clone())
                .or_default()
                .insert(key);
        }
        let mut reports = Vec::new();
        for (ingress, keys) in &current {
            let before = self.reported.get(ingress);
            let appeared = keys
                .iter()
                .filter(|key| before.is_none_or(|b| !b.contains(key)));
            for key in appeared {
                let events = self.events.entry(ingress.clone()).or_default();
                let occurrence = events
                    .entry(key.clone())
                    .and_modify(|o| o.count = o.count.saturating_add(1))
                    .or_insert_with(|| Occurrence {
                        name: event_name(ingress, key, now),
                        first: now,
                        count: 1,
                    });
                reports.push(Report {
                    ingress: ingress.clone(),
                    reason: key.0,
                    message: key.1.clone(),
                    name: occurrence.name.clone(),
                    first: occurrence.first,
                    count: occurrence.count,
                });
            }
        }
        self.reported = current;
        self.events.retain(|ingress, _| exists(ingress));
        reports
    }

    /// `report` could not be recorded: forget it, so that the next [`update`](Self::update)
    /// reports it again.
    pub fn failed(&mut self, report: &Report) {
        let key = (report.reason, report.message.clone());
        if let Some(keys) = self.reported.get_mut(&report.ingress) {
            keys.remove(&key);
        }
        if let Some(events) = self.events.get_mut(&report.ingress) {
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

/// `INGRESS.HASH`: unique per Ingress, problem and first time, and a valid object name.
fn event_name(ingress: &ObjectRef, key: &Key, now: Timestamp) -> String {
    cluster_state::event_name(&ingress.name, (ingress, key, now.as_nanosecond()))
}

/// The Event of `report` at `now`, regarding the Ingress with `uid`, from the controller
/// replica `instance`.
pub fn event(report: &Report, uid: Option<&str>, instance: &str, now: Timestamp) -> Event {
    let series = (report.count > 1).then_some(EventSeries {
        count: report.count,
        last_observed_time: MicroTime(now),
    });
    Event {
        metadata: ObjectMeta {
            name: Some(report.name.clone()),
            namespace: Some(report.ingress.namespace.clone()),
            ..ObjectMeta::default()
        },
        event_time: Some(MicroTime(report.first)),
        series,
        type_: Some("Warning".into()),
        reason: Some(report.reason.as_str().into()),
        action: Some("Reconcile".into()),
        note: Some(truncate_utf8(&report.message, EVENT_NOTE_LIMIT).to_owned()),
        regarding: Some(ObjectReference {
            api_version: Some("networking.k8s.io/v1".into()),
            kind: Some("Ingress".into()),
            namespace: Some(report.ingress.namespace.clone()),
            name: Some(report.ingress.name.clone()),
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

    fn problem(ingress: &str, reason: Reason, message: &str) -> Problem {
        Problem {
            ingress: ObjectRef::new("shop", ingress),
            reason,
            message: message.into(),
        }
    }

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_796_032_800 + second).unwrap()
    }

    fn summary(reports: &[Report]) -> Vec<(String, String, i32)> {
        reports
            .iter()
            .map(|r| (r.ingress.name.clone(), r.message.clone(), r.count))
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
            ingress: ObjectRef::new("shop", "web"),
            reason: Reason::InvalidAnnotation,
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

    #[test]
    fn event_names_are_valid_object_names() {
        let key = (Reason::InvalidIngress, "no spec".to_owned());
        let long = ObjectRef::new("shop", format!("{}-x", "a".repeat(240)));
        let name = event_name(&long, &key, at(0));
        assert!(name.len() <= 253, "{name}");
        assert!(!name.contains("-."), "{name}");
        let short = event_name(&ObjectRef::new("shop", "web"), &key, at(0));
        assert!(
            short.starts_with("web.") && short.len() == 4 + 16,
            "{short}"
        );
        assert_ne!(
            short,
            event_name(&ObjectRef::new("shop", "web"), &key, at(1))
        );
    }
}
