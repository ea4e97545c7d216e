//! Events on objects (`events.k8s.io/v1`), recorded through a source: the checks both sources
//! share.

use k8s_openapi::api::events::v1::Event;

use crate::{EventError, ObjectRef};

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
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

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
