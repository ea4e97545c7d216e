//! Events on the API server: a new event is created; a repeat (an event with `series`)
//! patches the series of the event, or creates it again once the API server has expired it.

use k8s_openapi::api::events::v1::Event;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};

use crate::events::event_key;
use crate::{ApiCall, EventError};

/// The requests [`Source::record_event`](crate::Source::record_event) makes to the API
/// server, in the events' namespaces: `create` and `patch` of `events.k8s.io` `events`.
pub const EVENT_API_CALLS: [ApiCall; 2] = [event_call("create"), event_call("patch")];

/// The requests a source given a [`Reporter`](crate::Reporter) makes to record the objects it
/// leaves out as invalid, in their namespaces: `create` of `events.k8s.io` `events` (one event
/// per object version, never patched).
pub const INVALID_OBJECT_EVENT_API_CALLS: [ApiCall; 1] = [event_call("create")];

const fn event_call(verb: &'static str) -> ApiCall {
    ApiCall {
        verb,
        group: "events.k8s.io",
        resource: "events",
        subresource: None,
    }
}

/// Records `event` (see the module documentation).
pub(crate) async fn record(client: &Client, event: &Event) -> Result<(), EventError> {
    let key = event_key(event)?;
    let api = Api::<Event>::namespaced(client.clone(), &key.namespace);
    let failed = |source| EventError::Api {
        key: key.clone(),
        source,
    };
    if let Some(series) = &event.series {
        let patch = serde_json::json!({ "series": series });
        let patched = api
            .patch(&key.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        match patched {
            Ok(_) => return Ok(()),
            // Expired (an hour after its last update, by default): create it again.
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => return Err(failed(source)),
        }
    }
    let created = api.create(&PostParams::default(), event).await;
    created.map(drop).map_err(failed)
}
