//! The `prometheus` plugin's part in a query chain: on the way back, every query is counted
//! in CoreDNS's server metrics (`coredns_dns_*`, CoreDNS's `vars.Report`). The HTTP
//! endpoint is the server's (`server/http.rs`).

use std::sync::Arc;
use std::time::Instant;

use dns_wire::Rcode;

use super::handler::{Plugin, Query, Reply};
use crate::metrics::{Metrics, qtype_label};
use crate::query::reply::ReplyInfo;
use crate::query::request::Request;

/// The per-query metrics of a block that uses `prometheus`.
pub struct Prometheus {
    /// The metrics.
    metrics: Arc<Metrics>,
    /// `server` label: `dns://:PORT` or `dns://ADDR:PORT`.
    server: String,
}

impl Prometheus {
    /// Counts into `metrics` with `server` as the server label.
    pub fn new(metrics: Arc<Metrics>, server: &str) -> Self {
        Self {
            metrics,
            server: server.to_owned(),
        }
    }
}

impl Plugin for Prometheus {
    fn name(&self) -> &'static str {
        "prometheus"
    }

    fn reply(&self, query: &mut Query<'_, '_>, out: &mut Vec<u8>, reply: &mut Reply) {
        let rcode = ReplyInfo::of(out).map_or(Rcode::SERVFAIL, |i| i.rcode);
        report(
            &self.metrics,
            &self.server,
            query.zone,
            query.req,
            rcode,
            reply.plugin(),
            out.len(),
            query.start,
        );
    }
}

/// CoreDNS's `vars.Report`: the per-query server metrics.
#[allow(clippy::too_many_arguments)]
pub fn report(
    metrics: &Metrics,
    server: &str,
    zone: &str,
    req: &Request<'_>,
    rcode: Rcode,
    plugin: &str,
    size: usize,
    start: Instant,
) {
    let proto = req.proto.as_str();
    let base = || {
        vec![
            ("server", server.to_owned()),
            ("zone", zone.to_owned()),
            ("view", String::new()),
        ]
    };
    if req.dnssec_ok() {
        metrics
            .do_requests
            .get_or_create(&vec![
                ("server", server.to_owned()),
                ("view", String::new()),
                ("zone", zone.to_owned()),
            ])
            .inc();
    }
    let mut labels = base();
    labels.push(("proto", proto.to_owned()));
    labels.push(("family", req.family().to_string()));
    labels.push(("type", qtype_label(req.question.qtype).to_owned()));
    metrics.requests.get_or_create(&labels).inc();
    metrics
        .request_duration
        .get_or_create(&base())
        .observe(start.elapsed().as_secs_f64());
    let mut with_proto = base();
    with_proto.push(("proto", proto.to_owned()));
    metrics
        .response_size
        .get_or_create(&with_proto)
        .observe(size as f64);
    metrics
        .request_size
        .get_or_create(&with_proto)
        .observe(req.bytes().len() as f64);
    let mut labels = base();
    let rcode = rcode
        .mnemonic()
        .map_or_else(|| rcode.0.to_string(), str::to_owned);
    labels.push(("rcode", rcode));
    labels.push(("plugin", plugin.to_owned()));
    metrics.responses.get_or_create(&labels).inc();
}
