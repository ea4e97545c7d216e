//! Events on objects (`events.k8s.io/v1`), recorded through a source: the checks both sources
//! share, the limits and names every event must respect, and the event a source records on
//! its own, for an object it leaves out as invalid.

use std::hash::{DefaultHasher, Hash, Hasher};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;

use crate::{EventError, Invalid, Object, ObjectRef};

/// The longest `note` the API server accepts (bytes).
pub const EVENT_NOTE_LIMIT: usize = 1024;

/// The longest `reportingInstance` the API server accepts (bytes).
pub const EVENT_INSTANCE_LIMIT: usize = 128;

/// The longest object name (a DNS subdomain).
const NAME_LIMIT: usize = 253;

/// Who records the events a source records on its own: the binary (`reportingController`, a
/// qualified name such as `kube-node-net/service-proxy`) and this replica or node
/// (`reportingInstance`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reporter {
    /// The `reportingController` of the events.
    pub controller: &'static str,
    /// The `reportingInstance` of the events (cut to the API's 128 bytes).
    pub instance: String,
}

/// An event name for an event regarding the object named `regarding`: `NAME.HASH`, with the
/// name cut so that the whole stays a valid object name, `HASH` from `unique` (what makes the
/// event distinct: the problem, the version, the time it was first seen).
pub fn event_name(regarding: &str, unique: impl Hash) -> String {
    let mut hasher = DefaultHasher::new();
    (regarding, unique).hash(&mut hasher);
    let suffix = format!(".{:016x}", hasher.finish());
    let mut prefix = truncate_utf8(regarding, NAME_LIMIT.saturating_sub(suffix.len()));
    while prefix.ends_with(['.', '-']) {
        prefix = prefix.get(..prefix.len() - 1).unwrap_or_default();
    }
    format!("{prefix}{suffix}")
}

/// The longest prefix of `text` of at most `limit` bytes that ends on a character boundary.
pub fn truncate_utf8(text: &str, limit: usize) -> &str {
    let end = (0..=limit.min(text.len()))
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    text.get(..end).unwrap_or_default()
}

/// The `Warning` event `Invalid` regarding `object`, which the source leaves out because of
/// `invalid`, recorded by `reporter` at `now`. One per version of the object: its name derives
/// from the object's `resourceVersion`. A cluster-scoped object's event goes to `default`.
pub(crate) fn invalid_object_event(
    object: &Object,
    invalid: &Invalid,
    reporter: &Reporter,
    now: Timestamp,
) -> Event {
    let meta = object.metadata();
    let key = object.key();
    let namespace = meta
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_owned());
    let kind = object.kind();
    let note = format!(
        "{kind} {key} is invalid, so {} leaves it out: {invalid}",
        reporter.controller
    );
    Event {
        metadata: ObjectMeta {
            name: Some(event_name(&key.name, (kind, &meta.resource_version))),
            namespace: Some(namespace),
            ..ObjectMeta::default()
        },
        event_time: Some(MicroTime(now)),
        type_: Some("Warning".into()),
        reason: Some("Invalid".into()),
        action: Some("Validate".into()),
        note: Some(truncate_utf8(&note, EVENT_NOTE_LIMIT).to_owned()),
        regarding: Some(ObjectReference {
            api_version: Some(kind.api_version().into()),
            kind: Some(kind.name().into()),
            namespace: meta.namespace.clone(),
            name: meta.name.clone(),
            uid: meta.uid.clone(),
            resource_version: meta.resource_version.clone(),
            ..ObjectReference::default()
        }),
        reporting_controller: Some(reporter.controller.into()),
        reporting_instance: Some(
            truncate_utf8(&reporter.instance, EVENT_INSTANCE_LIMIT).to_owned(),
        ),
        ..Event::default()
    }
}

/// The namespace and name of `event`, once both are safe as an API path segment and as a file
/// name: non-empty lowercase DNS characters (`a-z`, `0-9`, `-`, `.`), not starting with `.`.
pub(crate) fn event_key(event: &Event) -> Result<ObjectRef, EventError> {
    let key = ObjectRef::from_meta(&event.metadata);
    let safe = |part: &str| {
        !part.is_empty()
            && !part.starts_with('.')
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    };
    if safe(&key.namespace) && safe(&key.name) {
        Ok(key)
    } else {
        Err(EventError::InvalidName { key })
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Service;

    use super::*;
    use crate::FieldError;

    #[test]
    fn event_names_stay_valid_object_names() {
        let long = "a".repeat(250) + "-b";
        let name = event_name(&long, 1);
        assert_eq!(name.len(), NAME_LIMIT);
        assert!(name.starts_with("aaa") && !name.contains("-."), "{name}");
        assert_ne!(event_name("web", 1), event_name("web", 2));
        assert_eq!(truncate_utf8("héllo", 2), "h");
    }

    #[test]
    fn an_invalid_object_event_regards_the_object_and_says_why() {
        let service: Object = Service {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("shop".into()),
                uid: Some("u-1".into()),
                resource_version: Some("42".into()),
                ..ObjectMeta::default()
            },
            ..Service::default()
        }
        .into();
        let invalid = Invalid {
            errors: vec![FieldError {
                field: "spec.ports[0].name".into(),
                message: "Invalid value: \"x\\n-A\"".into(),
            }],
        };
        let reporter = Reporter {
            controller: "kube-node-net/service-proxy",
            instance: "node-1".into(),
        };
        let event = invalid_object_event(&service, &invalid, &reporter, Timestamp::UNIX_EPOCH);
        assert_eq!(event.metadata.namespace.as_deref(), Some("shop"));
        assert!(event_key(&event).is_ok(), "a valid event name");
        assert_eq!(event.reason.as_deref(), Some("Invalid"));
        assert_eq!(
            event.note.as_deref(),
            Some(
                "Service shop/web is invalid, so kube-node-net/service-proxy leaves it out: \
                 spec.ports[0].name: Invalid value: \"x\\n-A\""
            )
        );
        let regarding = event.regarding.unwrap();
        assert_eq!(regarding.uid.as_deref(), Some("u-1"));
        assert_eq!(regarding.kind.as_deref(), Some("Service"));
        // Another version of the object is another event.
        let mut newer = service.clone();
        newer.metadata_mut().resource_version = Some("43".into());
        let again = invalid_object_event(&newer, &invalid, &reporter, Timestamp::UNIX_EPOCH);
        assert_ne!(again.metadata.name, event.metadata.name);
    }

    fn named(namespace: &str, name: &str) -> Event {
        Event {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..Event::default()
        }
    }

    #[test]
    fn event_names_must_be_dns_names() {
        let key = event_key(&named("shop", "web.17a3f0c2d4e5b6a7")).unwrap();
        assert_eq!(key.to_string(), "shop/web.17a3f0c2d4e5b6a7");
        for (namespace, name) in [
            ("shop", ""),
            ("", "web"),
            ("shop", ".."),
            ("..", "web"),
            ("shop", "a/b"),
            ("shop", "Web"),
            ("shop", "web\n"),
        ] {
            let error = event_key(&named(namespace, name)).unwrap_err();
            assert!(
                matches!(error, EventError::InvalidName { .. }),
                "{namespace:?}/{name:?}"
            );
        }
    }
}
