//! The API source: one kube-rs watcher per kind, mirrored into snapshots, and status writes.

use std::fmt::Debug;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::{BoxStream, SelectAll};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::mirror::{Mirror, Rejected, Update};
use crate::events::invalid_object_event;
use crate::gateway::{Gateway, GatewayClass, GrpcRoute, HttpRoute};
use crate::kind::with_kinds;
use crate::snapshot::publish;
use crate::{
    ApiCall, EventError, Filter, Kind, Metrics, Object, ObjectRef, Reporter, Snapshot, Status,
    StatusError,
};

/// The requests the API source makes, in every namespace: `list` and `watch` on each of
/// `kinds` (see [`Source::api`](crate::Source::api)), and the `patch` of the `status`
/// subresource of each of `status_kinds` (see [`Source::write_status`](crate::Source::write_status)).
/// A binary's RBAC rules are exactly these.
pub fn api_calls(kinds: &[Kind], status_kinds: &[Kind]) -> Vec<ApiCall> {
    let watches = kinds.iter().flat_map(|kind| {
        ["list", "watch"].map(|verb| ApiCall {
            verb,
            group: kind.group(),
            resource: kind.resource(),
            subresource: None,
        })
    });
    let statuses = status_kinds.iter().map(|kind| ApiCall {
        verb: "patch",
        group: kind.group(),
        resource: kind.resource(),
        subresource: Some("status"),
    });
    watches.chain(statuses).collect()
}

/// Merge-PATCHes the `status` subresource of `name` through `api`.
async fn patch_status<K>(api: Api<K>, name: &str, patch: &serde_json::Value) -> kube::Result<()>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let params = PatchParams::default();
    api.patch_status(name, &params, &Patch::Merge(patch))
        .await
        .map(drop)
}

/// Watches the API server until dropped.
pub(crate) struct ApiSource {
    client: Client,
    task: JoinHandle<()>,
}

impl ApiSource {
    /// Starts watching `kinds` in every namespace, recording into `metrics`; the first snapshot
    /// is published once each kind has been listed. An object that fails validation is left
    /// out, logged, and with a `reporter`, recorded as a `Warning` event regarding it.
    ///
    /// A kind served by a CRD that may be absent ([`Kind::is_optional`]) whose list the API
    /// server answers with 404 counts as listed and empty (logged once); its watcher keeps
    /// asking with the backoff below, and picks the kind up when the CRD is installed.
    ///
    /// Each watcher lists, then watches from the list's `resourceVersion` (with bookmarks); when
    /// the watch ends it resumes from the last version seen, and when that version has expired
    /// (410 Gone) it lists again, the new list replacing the old objects at once. Failed
    /// requests are retried with exponential backoff (0.8 s doubling to 30 s, jittered).
    pub(crate) fn start(
        client: Client,
        kinds: &[Kind],
        filter: Filter,
        reporter: Option<Reporter>,
        snapshots: watch::Sender<Arc<Snapshot>>,
        metrics: Metrics,
    ) -> Self {
        let streams: SelectAll<_> = kinds
            .iter()
            .map(|kind| watch_kind(*kind, &client, filter.field_selector(*kind)))
            .collect();
        let rejections = Rejections {
            client: client.clone(),
            reporter,
        };
        let mirrored = mirror(streams, Mirror::new(kinds), rejections, snapshots, metrics);
        let task = tokio::spawn(mirrored);
        Self { client, task }
    }

    /// The client the source reads with.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// PATCHes the `status` subresource of the object `key` of `status`'s kind with a JSON
    /// merge patch.
    pub(crate) async fn write_status(
        &self,
        key: &ObjectRef,
        status: Status,
    ) -> Result<(), StatusError> {
        let kind = status.kind();
        let patch = status.merge_patch();
        let client = self.client.clone();
        let patched = match status {
            Status::Ingress(_) => {
                let api = Api::<Ingress>::namespaced(client, &key.namespace);
                patch_status(api, &key.name, &patch).await
            }
            Status::GatewayClass(_) => {
                patch_status(Api::<GatewayClass>::all(client), &key.name, &patch).await
            }
            Status::Gateway(_) => {
                let api = Api::<Gateway>::namespaced(client, &key.namespace);
                patch_status(api, &key.name, &patch).await
            }
            Status::HttpRoute(_) => {
                let api = Api::<HttpRoute>::namespaced(client, &key.namespace);
                patch_status(api, &key.name, &patch).await
            }
            Status::GrpcRoute(_) => {
                let api = Api::<GrpcRoute>::namespaced(client, &key.namespace);
                patch_status(api, &key.name, &patch).await
            }
        };
        match patched {
            Ok(()) => Ok(()),
            Err(kube::Error::Api(status)) if status.is_not_found() => Err(StatusError::NotFound {
                kind,
                key: key.clone(),
            }),
            Err(source) => Err(StatusError::Api {
                kind,
                key: key.clone(),
                source,
            }),
        }
    }
}

impl ApiSource {
    /// Records `event` on the API server (see [`super::record_event`]).
    pub(crate) async fn record_event(
        &self,
        event: &k8s_openapi::api::events::v1::Event,
    ) -> Result<(), EventError> {
        super::record_event(&self.client, event).await
    }
}

impl Drop for ApiSource {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Updates = BoxStream<'static, Result<Update, watcher::Error>>;

/// Where the objects left out as invalid are reported.
struct Rejections {
    client: Client,
    reporter: Option<Reporter>,
}

impl Rejections {
    /// Logs `rejected`, and records an event regarding it if there is a reporter (in the
    /// background: the mirror does not wait for the API server).
    fn report(&self, rejected: Rejected) {
        let Rejected { object, invalid } = rejected;
        tracing::warn!(
            kind = %object.kind(),
            object = %object.key(),
            "invalid, left out: {invalid}"
        );
        let Some(reporter) = &self.reporter else {
            return;
        };
        let event = invalid_object_event(&object, &invalid, reporter, Timestamp::now());
        let client = self.client.clone();
        tokio::spawn(async move {
            match super::record_event(&client, &event).await {
                Ok(()) => {}
                // One per object version: a relist after a restart finds it recorded.
                Err(EventError::Api {
                    source: kube::Error::Api(status),
                    ..
                }) if status.code == 409 => {}
                Err(error) => tracing::warn!(%error, "recording an invalid object's event"),
            }
        });
    }
}

/// Applies the watchers' updates as they come, publishing after each batch of ready ones.
async fn mirror(
    streams: SelectAll<Updates>,
    mut mirror: Mirror,
    rejections: Rejections,
    snapshots: watch::Sender<Arc<Snapshot>>,
    metrics: Metrics,
) {
    let mut batches = streams.ready_chunks(1024);
    while let Some(batch) = batches.next().await {
        for result in batch {
            match result {
                Ok(Update::Absent(kind)) if !mirror.is_absent(kind) => {
                    tracing::warn!(
                        %kind,
                        "the API server does not serve {}/{} (its CRD is not installed): \
                         going on without; asking again with backoff",
                        kind.api_version(),
                        kind.resource(),
                    );
                    mirror.apply(Update::Absent(kind));
                }
                Ok(Update::Relisted(kind)) if mirror.is_absent(kind) => {
                    tracing::info!(%kind, "the API server serves {} now", kind.resource());
                    mirror.apply(Update::Relisted(kind));
                }
                Ok(update) => {
                    if let Some(rejected) = mirror.apply(update) {
                        rejections.report(rejected);
                    }
                }
                Err(error) => {
                    metrics.request_failed();
                    tracing::warn!(%error, "watching the API server; retrying");
                }
            }
        }
        metrics.invalid_objects(mirror.invalid_count());
        if let Some(objects) = mirror.objects() {
            publish(&snapshots, objects.clone(), "API server", &metrics);
        }
    }
}

macro_rules! define_watch_kind {
    ($($variant:ident($ty:ty) $field:ident, $scope:ident;)*) => {
        /// The updates of the watcher of `kind`, narrowed by `fields` (a field selector).
        fn watch_kind(kind: Kind, client: &Client, fields: Option<String>) -> Updates {
            match kind {
                $(Kind::$variant => watch::<$ty>(kind, client, fields),)*
            }
        }
    };
}

with_kinds!(define_watch_kind);

fn watch<K>(kind: Kind, client: &Client, fields: Option<String>) -> Updates
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
    Object: From<K>,
{
    let api = Api::<K>::all(client.clone());
    let config = watcher::Config::default();
    let config = match &fields {
        Some(fields) => config.fields(fields),
        None => config,
    };
    watcher::watcher(api, config)
        .default_backoff()
        .map(move |result| match result {
            Ok(Event::Init) => Ok(Update::Relisting(kind)),
            Ok(Event::InitApply(object)) => Ok(Update::Listed(object.into())),
            Ok(Event::InitDone) => Ok(Update::Relisted(kind)),
            Ok(Event::Apply(object)) => Ok(Update::Applied(object.into())),
            Ok(Event::Delete(object)) => {
                Ok(Update::Deleted(kind, ObjectRef::from_meta(object.meta())))
            }
            Err(error) if kind.is_optional() && not_served(&error) => Ok(Update::Absent(kind)),
            Err(error) => Err(error),
        })
        .boxed()
}

/// Whether the list failed because the API server does not serve the kind: 404, whose body is
/// the plain text `404 page not found` when the group or resource is unknown (its CRD is not
/// installed), so only the code tells (`Status::is_not_found` wants the reason `NotFound`).
fn not_served(error: &watcher::Error) -> bool {
    matches!(
        error,
        watcher::Error::InitialListFailed(kube::Error::Api(status)) if status.code == 404
    )
}
