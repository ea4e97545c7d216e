//! The other replicas of a pod: the running, ready pods of its namespace that carry its
//! labels, as ingress-nginx's `isRunningMultiplePods` finds them before it clears Ingress
//! status at shutdown (a rolling update must not clear what the next replica will keep).

use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, Client};

use crate::ApiCall;

/// The requests of [`Source::running_peers`](crate::Source::running_peers): `get` and `list`
/// of `pods` in the pod's namespace.
pub const PEER_API_CALLS: [ApiCall; 2] = [pod_call("get"), pod_call("list")];

const fn pod_call(verb: &'static str) -> ApiCall {
    ApiCall {
        verb,
        group: "",
        resource: "pods",
        subresource: None,
    }
}

/// How many pods other than `namespace/name` run, are ready and carry all of its labels.
pub(crate) async fn running_peers(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<usize, kube::Error> {
    let pods = Api::<Pod>::namespaced(client.clone(), namespace);
    let own = pods.get(name).await?;
    let selector = own
        .metadata
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let list = pods.list(&ListParams::default().labels(&selector)).await?;
    Ok(list
        .items
        .iter()
        .filter(|pod| pod.metadata.name.as_deref() != Some(name))
        .filter(|pod| {
            let status = pod.status.as_ref();
            status.and_then(|s| s.phase.as_deref()) == Some("Running")
                && status
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        })
        .count())
}
