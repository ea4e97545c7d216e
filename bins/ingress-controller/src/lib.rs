//! Ingress objects to a real nginx. See the README for usage; the modules split as:
//!
//! - pure (no I/O): [`annotations`], [`hosts`], [`paths`], [`regex_path`], [`class`],
//!   [`endpoints`], [`configmap`] (global settings), [`model`], [`render`], [`backends`], [`lua`], [`reconcile`], [`reports`],
//!   [`tls_check`] (a TLS Secret checked before nginx sees it), [`gateway`] (the Gateway API's
//!   semantics: desired statuses and attached routes);
//! - the command line: [`cli`];
//! - objects: [`objects`] (from cluster-state's snapshots or YAML text);
//! - I/O: [`nginx`] (the child
//!   process), [`control`] (its control socket), [`certs`] (key material on disk),
//!   [`metrics`] and [`serve`] (`/healthz`, `/metrics`), [`election`] and [`status`] (the
//!   leader writes Ingress status), [`controller`] (the loop), [`webhook`] (the validating
//!   admission webhook), [`wait_shutdown`] (ingress-nginx's preStop hook, `/wait-shutdown`).

pub mod annotations;
pub mod backends;
pub mod certs;
pub mod class;
pub mod cli;
pub mod configmap;
pub mod control;
pub mod controller;
pub mod election;
pub mod endpoints;
pub mod gateway;
pub mod gateway_status;
pub mod hosts;
pub mod lua;
pub mod metrics;
pub mod model;
pub mod nginx;
pub mod objects;
pub mod paths;
pub mod reconcile;
pub mod regex_path;
pub mod render;
pub mod reports;
pub mod serve;
pub mod status;
pub mod tls_check;
pub mod wait_shutdown;
pub mod webhook;
