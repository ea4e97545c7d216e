//! The per-request families of ingress-nginx (`nginx_ingress_controller_requests` and its
//! histograms), read from nginx at scrape time: the Lua log phase ([`crate::lua`]) keeps the
//! counts in nginx's shared dict and `GET /metrics` on the control socket returns them, one
//! slot per line:
//!
//! `host TAB namespace TAB ingress TAB service TAB path TAB method TAB status TAB canary TAB
//! slot TAB value`
//!
//! where the slot is `n` (the request count) or a histogram's letter and an index: 0 for the
//! sum, `i` for the count of bucket `i` (not cumulative; the last one is `+Inf`).
//!
//! Names, types, label names and default buckets are ingress-nginx's
//! (`internal/ingress/metric/collectors/socket.go`, `pkg/flags/flags.go`). As there,
//! `--metrics-per-host` labels series with the host, and then leaves out requests to no host
//! of the configuration (the catch-all server); without it there is no `host` label. Series of
//! an Ingress no longer served are left out too (ingress-nginx deletes them on the next sync).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

/// `--time-buckets`' default (Prometheus' default buckets), in seconds.
pub const TIME_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// `--length-buckets`' default (10 to 100 by 10), in bytes.
pub const LENGTH_BUCKETS: [f64; 10] = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0];
/// `--size-buckets`' default (10 to 10^7 by powers of 10), in bytes.
pub const SIZE_BUCKETS: [f64; 7] = [10.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7];

/// One histogram family: the letter the Lua uses, its name, help and bucket bounds.
struct HistogramFamily {
    letter: char,
    name: &'static str,
    help: &'static str,
    bounds: &'static [f64],
}

/// The histograms, in the order of [`Series::histograms`].
const HISTOGRAMS: [HistogramFamily; 7] = [
    HistogramFamily {
        letter: 'd',
        name: "request_duration_seconds",
        help: "Time nginx spent on the request, from its first byte to the log phase.",
        bounds: &TIME_BUCKETS,
    },
    HistogramFamily {
        letter: 'u',
        name: "response_duration_seconds",
        help: "Time spent receiving the response from the upstream.",
        bounds: &TIME_BUCKETS,
    },
    HistogramFamily {
        letter: 'c',
        name: "connect_duration_seconds",
        help: "Time spent connecting to the upstream.",
        bounds: &TIME_BUCKETS,
    },
    HistogramFamily {
        letter: 'h',
        name: "header_duration_seconds",
        help: "Time until the upstream's response header arrived.",
        bounds: &TIME_BUCKETS,
    },
    HistogramFamily {
        letter: 'q',
        name: "request_size",
        help: "Request length in bytes: request line, header and body.",
        bounds: &LENGTH_BUCKETS,
    },
    HistogramFamily {
        letter: 'r',
        name: "response_size",
        help: "Bytes sent to the client for the response.",
        bounds: &LENGTH_BUCKETS,
    },
    HistogramFamily {
        letter: 'b',
        name: "bytes_sent",
        help: "DEPRECATED: bytes sent to the client, as response_size with larger buckets.",
        bounds: &SIZE_BUCKETS,
    },
];

/// The labels of one series, as nginx reports them (`host` empty: the catch-all server).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Labels {
    /// The host of the server that answered, as the configuration names it, or `None` when
    /// series are not labelled by host.
    pub host: Option<String>,
    /// The Ingress's namespace.
    pub namespace: String,
    /// The Ingress's name.
    pub ingress: String,
    /// The Service of the location's backend.
    pub service: String,
    /// The Ingress path.
    pub path: String,
    /// The request method (a known one, else `OTHER`).
    pub method: String,
    /// The response status.
    pub status: String,
    /// The canary backend the request went to, else empty.
    pub canary: String,
}

impl Labels {
    fn pairs(&self) -> Vec<(&'static str, &str)> {
        let mut pairs = vec![
            ("status", self.status.as_str()),
            ("method", self.method.as_str()),
            ("path", self.path.as_str()),
            ("namespace", self.namespace.as_str()),
            ("ingress", self.ingress.as_str()),
            ("service", self.service.as_str()),
            ("canary", self.canary.as_str()),
        ];
        if let Some(host) = &self.host {
            pairs.push(("host", host.as_str()));
        }
        pairs
    }
}

/// One histogram of one series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// The sum of the observations.
    pub sum: f64,
    /// The count of each bucket (not cumulative), `+Inf` last.
    pub buckets: Vec<u64>,
}

impl Histogram {
    fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    fn add(&mut self, other: &Histogram) {
        self.sum += other.sum;
        if self.buckets.len() < other.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            *mine += theirs;
        }
    }
}

/// The counts of one series.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Requests.
    pub requests: u64,
    /// The histograms, in the order of ingress-nginx's families above.
    pub histograms: [Histogram; 7],
}

impl Default for Series {
    fn default() -> Self {
        Series {
            requests: 0,
            histograms: HISTOGRAMS.each_ref().map(|h| Histogram {
                sum: 0.0,
                buckets: vec![0; h.bounds.len() + 1],
            }),
        }
    }
}

impl Series {
    fn add(&mut self, other: &Series) {
        self.requests += other.requests;
        for (mine, theirs) in self.histograms.iter_mut().zip(&other.histograms) {
            mine.add(theirs);
        }
    }
}

/// Every series nginx reported.
pub type Requests = BTreeMap<Labels, Series>;

/// Reads the control socket's `GET /metrics` reply. Malformed lines are skipped.
///
/// With `per_host`, series carry the host and the catch-all server's requests are left out;
/// without it, series that differ only by host are added up.
pub fn parse(text: &str, per_host: bool) -> Requests {
    let mut out = Requests::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let [
            host,
            namespace,
            ingress,
            service,
            path,
            method,
            status,
            canary,
            slot,
            value,
        ] = fields[..]
        else {
            continue;
        };
        if per_host && host.is_empty() {
            continue;
        }
        let Ok(value) = value.trim().parse::<f64>() else {
            continue;
        };
        let labels = Labels {
            host: per_host.then(|| host.to_owned()),
            namespace: namespace.to_owned(),
            ingress: ingress.to_owned(),
            service: service.to_owned(),
            path: path.to_owned(),
            method: method.to_owned(),
            status: status.to_owned(),
            canary: canary.to_owned(),
        };
        let mut one = Series::default();
        if !set_slot(&mut one, slot, value) {
            continue;
        }
        out.entry(labels).or_default().add(&one);
    }
    out
}

/// Stores `value` in the slot named `slot`; false when there is no such slot.
fn set_slot(series: &mut Series, slot: &str, value: f64) -> bool {
    // Counts come from Lua numbers: whole, non-negative, far below 2^53.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let count = value.max(0.0) as u64;
    if slot == "n" {
        series.requests = count;
        return true;
    }
    let mut chars = slot.chars();
    let Some(letter) = chars.next() else {
        return false;
    };
    let Ok(index) = chars.as_str().parse::<usize>() else {
        return false;
    };
    let Some(position) = HISTOGRAMS.iter().position(|h| h.letter == letter) else {
        return false;
    };
    let Some(histogram) = series.histograms.get_mut(position) else {
        return false;
    };
    if index == 0 {
        histogram.sum = value;
        return true;
    }
    match histogram.buckets.get_mut(index - 1) {
        Some(bucket) => {
            *bucket = count;
            true
        }
        None => false,
    }
}

/// The request families, encoded from the last series read from nginx.
#[derive(Clone, Debug, Default)]
pub struct RequestCollector {
    /// The series of the last scrape.
    pub last: Arc<Mutex<Requests>>,
    /// The Ingresses served (`namespace/name`), once a model was built.
    pub served: Arc<Mutex<Option<BTreeSet<String>>>>,
}

impl RequestCollector {
    /// Replaces the series, leaving out those of Ingresses no longer served.
    pub fn set(&self, mut requests: Requests) {
        if let Ok(served) = self.served.lock()
            && let Some(served) = served.as_ref()
        {
            requests.retain(|labels, _| {
                labels.ingress.is_empty()
                    || served.contains(&format!("{}/{}", labels.namespace, labels.ingress))
            });
        }
        if let Ok(mut last) = self.last.lock() {
            *last = requests;
        }
    }

    /// Records the Ingresses served now.
    pub fn serve(&self, ingresses: &[String]) {
        if let Ok(mut served) = self.served.lock() {
            *served = Some(ingresses.iter().cloned().collect());
        }
    }
}

impl Collector for RequestCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Ok(last) = self.last.lock() else {
            return Ok(());
        };
        if last.is_empty() {
            return Ok(());
        }
        // ingress-nginx's `requests` is a counter without the `_total` suffix, which
        // OpenMetrics requires of counters: it is written untyped to keep the name dashboards
        // query.
        let mut family = encoder.encode_descriptor(
            "requests",
            "Client requests nginx answered.",
            None,
            MetricType::Unknown,
        )?;
        for (labels, series) in last.iter() {
            let pairs = labels.pairs();
            family
                .encode_family(&pairs)?
                .encode_gauge(&series.requests)?;
        }
        for (i, h) in HISTOGRAMS.iter().enumerate() {
            let observed =
                |series: &Series| series.histograms.get(i).is_some_and(|h| h.count() > 0);
            if !last.values().any(observed) {
                continue;
            }
            let mut family =
                encoder.encode_descriptor(h.name, h.help, None, MetricType::Histogram)?;
            for (labels, series) in last.iter() {
                let Some(histogram) = series.histograms.get(i) else {
                    continue;
                };
                let count = histogram.count();
                if count == 0 {
                    continue;
                }
                let buckets: Vec<(f64, u64)> = h
                    .bounds
                    .iter()
                    .copied()
                    .chain([f64::INFINITY])
                    .zip(histogram.buckets.iter().copied())
                    .collect();
                let pairs = labels.pairs();
                family
                    .encode_family(&pairs)?
                    .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                        histogram.sum,
                        count,
                        &buckets,
                        None,
                    )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "web.example.com\te2e\tweb\tsvc\t/app\tGET\t200\t";

    fn dump(host: &str, lines: &[(&str, &str)]) -> String {
        lines
            .iter()
            .map(|(slot, value)| {
                format!(
                    "{}\t{slot}\t{value}\n",
                    LINE.replacen("web.example.com", host, 1)
                )
            })
            .collect()
    }

    #[test]
    fn slots_become_counts_sums_and_buckets() {
        let text = dump(
            "web.example.com",
            &[
                ("n", "3"),
                ("d0", "0.012"),
                ("d1", "2"),
                ("d3", "1"),
                ("b8", "1"),
            ],
        );
        let parsed = parse(&text, true);
        let (labels, series) = parsed.iter().next().unwrap();
        assert_eq!(labels.host.as_deref(), Some("web.example.com"));
        assert_eq!(labels.path, "/app");
        assert_eq!(labels.canary, "");
        assert_eq!(series.requests, 3);
        let duration = &series.histograms[0];
        assert_eq!(duration.sum, 0.012);
        assert_eq!(duration.buckets.len(), TIME_BUCKETS.len() + 1);
        assert_eq!(duration.buckets[0], 2);
        assert_eq!(duration.buckets[2], 1);
        assert_eq!(duration.count(), 3);
        // Bucket 8 of bytes_sent is its +Inf.
        assert_eq!(series.histograms[6].buckets[SIZE_BUCKETS.len()], 1);
    }

    #[test]
    fn malformed_lines_and_slots_are_skipped() {
        let mut text = dump("h", &[("n", "1"), ("d99", "1"), ("z1", "1"), ("n", "x")]);
        text.push_str("too\tfew\tfields\n\n");
        text.push_str(&format!("{LINE}\tn\t1\textra\n"));
        let parsed = parse(&text, true);
        assert_eq!(parsed.len(), 1);
        let series = parsed.values().next().unwrap();
        assert_eq!(series.requests, 1);
        assert_eq!(series.histograms[0].count(), 0);
    }

    #[test]
    fn per_host_leaves_out_the_catch_all_server_and_without_it_hosts_merge() {
        let mut text = dump("a.example.com", &[("n", "1"), ("d1", "1")]);
        text.push_str(&dump("b.example.com", &[("n", "2"), ("d1", "2")]));
        text.push_str(&dump("", &[("n", "4")]));
        let per_host = parse(&text, true);
        assert_eq!(per_host.len(), 2);
        assert!(per_host.keys().all(|l| l.host.as_deref() != Some("")));
        let merged = parse(&text, false);
        assert_eq!(merged.len(), 1);
        let (labels, series) = merged.iter().next().unwrap();
        assert_eq!(labels.host, None);
        assert_eq!(series.requests, 7);
        assert_eq!(series.histograms[0].buckets[0], 3);
    }

    #[test]
    fn families_are_encoded_with_ingress_nginx_names_and_buckets() {
        let collector = RequestCollector::default();
        collector.set(parse(
            &dump(
                "web.example.com",
                &[("n", "2"), ("q0", "300"), ("q11", "2")],
            ),
            true,
        ));
        let mut registry =
            prometheus_client::registry::Registry::with_prefix("nginx_ingress_controller");
        registry.register_collector(Box::new(collector));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let labels = "status=\"200\",method=\"GET\",path=\"/app\",namespace=\"e2e\",\
                      ingress=\"web\",service=\"svc\",canary=\"\",host=\"web.example.com\"";
        for line in [
            "# TYPE nginx_ingress_controller_requests unknown".to_owned(),
            format!("nginx_ingress_controller_requests{{{labels}}} 2"),
            "# TYPE nginx_ingress_controller_request_size histogram".to_owned(),
            format!("nginx_ingress_controller_request_size_sum{{{labels}}} 300.0"),
            format!("nginx_ingress_controller_request_size_count{{{labels}}} 2"),
            format!("nginx_ingress_controller_request_size_bucket{{le=\"100.0\",{labels}}} 0"),
            format!("nginx_ingress_controller_request_size_bucket{{le=\"+Inf\",{labels}}} 2"),
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in\n{text}");
        }
        // Histograms nothing was observed in are left out.
        assert!(!text.contains("request_duration_seconds"), "{text}");
    }

    #[test]
    fn series_of_ingresses_no_longer_served_are_left_out() {
        let collector = RequestCollector::default();
        let mut text = dump("a.example.com", &[("n", "1")]);
        text.push_str(&dump("a.example.com", &[("n", "1")]).replace("\tweb\t", "\tgone\t"));
        text.push_str(&dump("a.example.com", &[("n", "1")]).replace("\tweb\t", "\t\t"));
        collector.set(parse(&text, true));
        assert_eq!(collector.last.lock().unwrap().len(), 3);
        collector.serve(&["e2e/web".to_owned()]);
        collector.set(parse(&text, true));
        let last = collector.last.lock().unwrap();
        let ingresses: Vec<&str> = last.keys().map(|l| l.ingress.as_str()).collect();
        assert_eq!(ingresses, ["", "web"]);
    }

    /// The Lua names buckets by index: its bounds must be these.
    #[test]
    fn the_lua_log_phase_has_the_same_buckets() {
        let lua = |bounds: &[f64]| {
            let list: Vec<String> = bounds.iter().map(ToString::to_string).collect();
            format!("{{ {} }}", list.join(", "))
        };
        for (name, bounds) in [
            ("TIME", &TIME_BUCKETS[..]),
            ("LENGTH", &LENGTH_BUCKETS[..]),
            ("SIZE", &SIZE_BUCKETS[..]),
        ] {
            let line = format!("local {name} = {}", lua(bounds));
            assert!(crate::lua::MODULE.contains(&line), "{line}");
        }
        for h in &HISTOGRAMS {
            let list = if std::ptr::eq(h.bounds, &TIME_BUCKETS[..]) {
                "TIME"
            } else if std::ptr::eq(h.bounds, &LENGTH_BUCKETS[..]) {
                "LENGTH"
            } else {
                "SIZE"
            };
            let entry = format!("{{ \"{}\", {list} }}", h.letter);
            assert!(crate::lua::MODULE.contains(&entry), "{entry}");
        }
    }
}
