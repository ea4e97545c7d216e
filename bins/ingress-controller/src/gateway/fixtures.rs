//! Objects the unit tests of the gateway modules share.

use cluster_state::gateway::{Gateway, GatewaySpec, Listener};
use cluster_state::k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Gateway `infra/gw` of class `c` with `listeners`.
pub(super) fn gateway(listeners: Vec<Listener>) -> Gateway {
    Gateway {
        metadata: ObjectMeta {
            namespace: Some("infra".into()),
            name: Some("gw".into()),
            ..Default::default()
        },
        spec: GatewaySpec {
            gateway_class_name: "c".into(),
            listeners,
            ..Default::default()
        },
        status: None,
    }
}
