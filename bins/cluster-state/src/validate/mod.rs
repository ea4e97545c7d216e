//! Validation of objects as the API server validates them, so that an object read from a
//! manifest file (which no API server has seen) or handed to this crate by a program is held
//! to the same rules as one read from a cluster.
//!
//! The rules are transcribed from the Kubernetes sources (each function names the Go function it
//! follows). Where a rule depends on the API server's version, its feature gates or its flags,
//! the most permissive form is kept: a rule stricter than the API server's would hide valid
//! objects of a live cluster. Fields the API server defaults or allocates may be absent. Pure:
//! no I/O.

mod config;
mod endpoint_slice;
mod field;
mod gateway;
mod ingress;
mod ip;
mod lease;
mod meta;
pub(crate) mod names;
mod namespace;
mod node;
mod pod;
mod service;
#[cfg(test)]
mod tests;

pub use field::{FieldError, Invalid};

use crate::Object;

/// Checks `object` as the API server's validation would on creation (ValidateService,
/// ValidateEndpointSlice, ValidateIngressCreate, ValidateNode, … of the Kubernetes sources), reading the
/// fields it defaults or allocates as their defaults when absent.
///
/// Returns every field error found, in the order the API server lists them.
pub fn validate(object: &Object) -> Result<(), Invalid> {
    let mut errors = field::Errors::default();
    match object {
        Object::Service(service) => service::validate(service, &mut errors),
        Object::EndpointSlice(slice) => endpoint_slice::validate(slice, &mut errors),
        Object::Ingress(ingress) => ingress::validate(ingress, &mut errors),
        Object::IngressClass(class) => ingress::validate_class(class, &mut errors),
        Object::Secret(secret) => config::validate_secret(secret, &mut errors),
        Object::ConfigMap(map) => config::validate_config_map(map, &mut errors),
        Object::Lease(lease) => lease::validate(lease, &mut errors),
        Object::Namespace(namespace) => namespace::validate(namespace, &mut errors),
        Object::Node(node) => node::validate(node, &mut errors),
        Object::Pod(pod) => pod::validate(pod, &mut errors),
        Object::GatewayClass(class) => gateway::validate_class(class, &mut errors),
        Object::Gateway(object) => gateway::validate_gateway(object, &mut errors),
        Object::HttpRoute(route) => gateway::validate_http_route(route, &mut errors),
        Object::GrpcRoute(route) => gateway::validate_grpc_route(route, &mut errors),
        Object::ReferenceGrant(grant) => gateway::validate_reference_grant(grant, &mut errors),
    }
    errors.finish()
}
