//! The status a binary writes to one object: which part of which kind, as the API server's
//! `status` subresource takes it, and how it is laid over an object read back.

use std::sync::Arc;

use k8s_openapi::api::networking::v1::{Ingress, IngressLoadBalancerStatus, IngressStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::gateway::{
    Gateway, GatewayClass, GatewayClassStatus, GatewayStatus, GrpcRoute, HttpRoute, RouteStatus,
};
use crate::{Kind, Object, ObjectRef, Snapshot};

/// A status to write: the kind it belongs to and its value.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// An Ingress's `status.loadBalancer` (the rest of its status is left alone).
    Ingress(IngressLoadBalancerStatus),
    /// A GatewayClass's whole `status`.
    GatewayClass(GatewayClassStatus),
    /// A Gateway's whole `status`.
    Gateway(GatewayStatus),
    /// An HTTPRoute's whole `status` (a writer keeps the `parents` entries of other
    /// controllers in it: the list is replaced as a whole).
    HttpRoute(RouteStatus),
    /// A GRPCRoute's whole `status` (kept like an HTTPRoute's).
    GrpcRoute(RouteStatus),
}

impl Status {
    /// The kinds whose status can be written.
    pub const KINDS: [Kind; 5] = [
        Kind::Ingress,
        Kind::GatewayClass,
        Kind::Gateway,
        Kind::HttpRoute,
        Kind::GrpcRoute,
    ];

    /// The kind of the object this status belongs to.
    pub fn kind(&self) -> Kind {
        match self {
            Status::Ingress(_) => Kind::Ingress,
            Status::GatewayClass(_) => Kind::GatewayClass,
            Status::Gateway(_) => Kind::Gateway,
            Status::HttpRoute(_) => Kind::HttpRoute,
            Status::GrpcRoute(_) => Kind::GrpcRoute,
        }
    }

    /// The JSON merge patch that sets this status (RFC 7386: objects merge, lists are
    /// replaced).
    pub(crate) fn merge_patch(&self) -> serde_json::Value {
        match self {
            Status::Ingress(status) => serde_json::json!({ "status": { "loadBalancer": status } }),
            Status::GatewayClass(status) => serde_json::json!({ "status": status }),
            Status::Gateway(status) => serde_json::json!({ "status": status }),
            Status::HttpRoute(status) | Status::GrpcRoute(status) => {
                serde_json::json!({ "status": status })
            }
        }
    }

    /// The object `key` of this status's kind holding only its name, namespace and this
    /// status: what a status file keeps.
    pub(crate) fn object(&self, key: &ObjectRef) -> Object {
        let metadata = ObjectMeta {
            name: Some(key.name.clone()),
            namespace: (!key.namespace.is_empty()).then(|| key.namespace.clone()),
            ..ObjectMeta::default()
        };
        match self {
            Status::Ingress(status) => Object::Ingress(Arc::new(Ingress {
                metadata,
                status: Some(IngressStatus {
                    load_balancer: Some(status.clone()),
                }),
                ..Ingress::default()
            })),
            Status::GatewayClass(status) => Object::GatewayClass(Arc::new(GatewayClass {
                metadata,
                spec: Default::default(),
                status: Some(status.clone()),
            })),
            Status::Gateway(status) => Object::Gateway(Arc::new(Gateway {
                metadata,
                spec: Default::default(),
                status: Some(status.clone()),
            })),
            Status::HttpRoute(status) => Object::HttpRoute(Arc::new(HttpRoute {
                metadata,
                spec: Default::default(),
                status: Some(status.clone()),
            })),
            Status::GrpcRoute(status) => Object::GrpcRoute(Arc::new(GrpcRoute {
                metadata,
                spec: Default::default(),
                status: Some(status.clone()),
            })),
        }
    }

    /// The status `object` holds, if it is of a kind whose status is written and has one.
    pub(crate) fn of(object: &Object) -> Option<Status> {
        match object {
            Object::Ingress(o) => Some(Status::Ingress(o.status.as_ref()?.load_balancer.clone()?)),
            Object::GatewayClass(o) => o.status.clone().map(Status::GatewayClass),
            Object::Gateway(o) => o.status.clone().map(Status::Gateway),
            Object::HttpRoute(o) => o.status.clone().map(Status::HttpRoute),
            Object::GrpcRoute(o) => o.status.clone().map(Status::GrpcRoute),
            _ => None,
        }
    }

    /// Whether `snapshot` holds the object `key` of this status's kind.
    pub(crate) fn target_exists(&self, snapshot: &Snapshot, key: &ObjectRef) -> bool {
        snapshot.get(self.kind(), key).is_some()
    }

    /// Sets this status on the object `key` of `snapshot`, if it is there.
    pub(crate) fn lay_over(&self, snapshot: &mut Snapshot, key: &ObjectRef) {
        match self {
            Status::Ingress(status) => {
                if let Some(o) = snapshot.ingresses.get_mut(key) {
                    Arc::make_mut(o).status = Some(IngressStatus {
                        load_balancer: Some(status.clone()),
                    });
                }
            }
            Status::GatewayClass(status) => {
                if let Some(o) = snapshot.gateway_classes.get_mut(key) {
                    Arc::make_mut(o).status = Some(status.clone());
                }
            }
            Status::Gateway(status) => {
                if let Some(o) = snapshot.gateways.get_mut(key) {
                    Arc::make_mut(o).status = Some(status.clone());
                }
            }
            Status::HttpRoute(status) => {
                if let Some(o) = snapshot.http_routes.get_mut(key) {
                    Arc::make_mut(o).status = Some(status.clone());
                }
            }
            Status::GrpcRoute(status) => {
                if let Some(o) = snapshot.grpc_routes.get_mut(key) {
                    Arc::make_mut(o).status = Some(status.clone());
                }
            }
        }
    }
}
