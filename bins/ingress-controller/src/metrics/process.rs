//! ingress-nginx's `nginx_process_*` families, read at scrape time: connection and request
//! counts from nginx's `stub_status` (`collectors/nginx_status.go`), and CPU, memory, I/O and
//! start time of the nginx master and its workers from `/proc` (`collectors/process.go`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// nginx's `stub_status` page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StubStatus {
    /// Open client connections.
    pub active: u64,
    /// Connections accepted since nginx started.
    pub accepted: u64,
    /// Connections handled.
    pub handled: u64,
    /// Requests.
    pub requests: u64,
    /// Connections reading a request.
    pub reading: u64,
    /// Connections writing a response.
    pub writing: u64,
    /// Idle keep-alive connections.
    pub waiting: u64,
}

/// Reads a `stub_status` page; `None` when it is not one.
pub fn parse_stub_status(text: &str) -> Option<StubStatus> {
    let numbers = |line: &str| -> Vec<u64> {
        line.split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let mut lines = text.lines();
    let active = *numbers(lines.next()?.strip_prefix("Active connections:")?).first()?;
    lines.next()?;
    let [accepted, handled, requests] = numbers(lines.next()?)[..] else {
        return None;
    };
    let [reading, writing, waiting] = numbers(lines.next()?)[..] else {
        return None;
    };
    Some(StubStatus {
        active,
        accepted,
        handled,
        requests,
        reading,
        writing,
        waiting,
    })
}

/// The nginx master and workers, added up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Processes {
    /// How many.
    pub count: u64,
    /// User and system CPU time, in seconds.
    pub cpu_seconds: f64,
    /// Bytes read from storage.
    pub read_bytes: u64,
    /// Bytes written to storage.
    pub write_bytes: u64,
    /// Resident memory in bytes.
    pub resident_bytes: u64,
    /// Virtual memory in bytes.
    pub virtual_bytes: u64,
    /// Start of the oldest, in seconds since the epoch.
    pub oldest_start: f64,
}

/// Clock ticks per second of `/proc/PID/stat` (`USER_HZ`, 100 on every Linux ABI).
const TICKS: f64 = 100.0;

/// Reads the master (pid `master`) and its children from `proc` (`/proc`).
pub fn read_processes(proc: &Path, master: u32) -> Option<Processes> {
    let boot: f64 = std::fs::read_to_string(proc.join("stat"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    let mut out = Processes::default();
    let mut oldest: Option<f64> = None;
    for entry in std::fs::read_dir(proc).ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(stat) = parse_stat(&stat) else {
            continue;
        };
        if pid != master && stat.parent != master {
            continue;
        }
        out.count += 1;
        #[allow(clippy::cast_precision_loss)]
        {
            out.cpu_seconds += (stat.user + stat.system) as f64 / TICKS;
            let start = boot + stat.start as f64 / TICKS;
            oldest = Some(oldest.map_or(start, |o: f64| o.min(start)));
        }
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        out.resident_bytes += field(&status, "VmRSS:") * 1024;
        out.virtual_bytes += field(&status, "VmSize:") * 1024;
        let io = std::fs::read_to_string(entry.path().join("io")).unwrap_or_default();
        out.read_bytes += field(&io, "read_bytes:");
        out.write_bytes += field(&io, "write_bytes:");
    }
    out.oldest_start = oldest?;
    Some(out)
}

/// The fields of `/proc/PID/stat` used here.
#[derive(Debug, PartialEq, Eq)]
struct Stat {
    parent: u32,
    user: u64,
    system: u64,
    start: u64,
}

/// Reads `/proc/PID/stat` (the command name, in parentheses, may hold spaces).
fn parse_stat(text: &str) -> Option<Stat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3rd field of the line) at 0, ppid (4th) at 1, utime (14th) at
    // 11, stime at 12, starttime (22nd) at 19.
    let number = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(Stat {
        parent: u32::try_from(number(1)?).ok()?,
        user: number(11)?,
        system: number(12)?,
        start: number(19)?,
    })
}

fn field(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(name)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// What the last scrape read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessScrape {
    /// nginx's `stub_status`, if it answered.
    pub status: Option<StubStatus>,
    /// The processes, if nginx runs.
    pub processes: Option<Processes>,
}

/// The `nginx_process_*` families, encoded from the last scrape.
#[derive(Clone, Debug, Default)]
pub struct ProcessCollector {
    /// The last scrape.
    pub last: Arc<Mutex<ProcessScrape>>,
}

impl ProcessCollector {
    /// Replaces the last scrape.
    pub fn set(&self, scrape: ProcessScrape) {
        if let Ok(mut last) = self.last.lock() {
            *last = scrape;
        }
    }
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let metric = ConstCounter::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, MetricType::Counter)?)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Ok(last) = self.last.lock() else {
            return Ok(());
        };
        if let Some(s) = &last.status {
            let mut family = encoder.encode_descriptor(
                "nginx_process_connections",
                "Client connections, by state (active, reading, writing, waiting).",
                None,
                MetricType::Gauge,
            )?;
            for (state, value) in [
                ("active", s.active),
                ("reading", s.reading),
                ("writing", s.writing),
                ("waiting", s.waiting),
            ] {
                family
                    .encode_family(&[("state", state)])?
                    .encode_gauge(&value)?;
            }
            // A counter family of this name would clash with the gauge family above in
            // OpenMetrics (both named `connections`): written untyped, with its full name.
            let mut family = encoder.encode_descriptor(
                "nginx_process_connections_total",
                "Client connections since nginx started, by state (accepted, handled).",
                None,
                MetricType::Unknown,
            )?;
            for (state, value) in [("accepted", s.accepted), ("handled", s.handled)] {
                family
                    .encode_family(&[("state", state)])?
                    .encode_gauge(&value)?;
            }
            #[allow(clippy::cast_precision_loss)]
            counter(
                &mut encoder,
                "nginx_process_requests",
                "Client requests since nginx started.",
                s.requests as f64,
            )?;
        }
        if let Some(p) = &last.processes {
            #[allow(clippy::cast_precision_loss)]
            {
                gauge(
                    &mut encoder,
                    "nginx_process_num_procs",
                    "nginx processes (master and workers).",
                    p.count as f64,
                )?;
                counter(
                    &mut encoder,
                    "nginx_process_cpu_seconds",
                    "CPU time of the nginx processes, in seconds.",
                    p.cpu_seconds,
                )?;
                counter(
                    &mut encoder,
                    "nginx_process_read_bytes",
                    "Bytes the nginx processes read from storage.",
                    p.read_bytes as f64,
                )?;
                counter(
                    &mut encoder,
                    "nginx_process_write_bytes",
                    "Bytes the nginx processes wrote to storage.",
                    p.write_bytes as f64,
                )?;
                gauge(
                    &mut encoder,
                    "nginx_process_resident_memory_bytes",
                    "Resident memory of the nginx processes, in bytes.",
                    p.resident_bytes as f64,
                )?;
                gauge(
                    &mut encoder,
                    "nginx_process_virtual_memory_bytes",
                    "Virtual memory of the nginx processes, in bytes.",
                    p.virtual_bytes as f64,
                )?;
            }
            gauge(
                &mut encoder,
                "nginx_process_oldest_start_time_seconds",
                "Start of the oldest nginx process, in seconds since 1970.",
                p.oldest_start,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stub_status_page() {
        let page = "Active connections: 3 \nserver accepts handled requests\n 10 9 42 \n\
                    Reading: 0 Writing: 1 Waiting: 2 \n";
        assert_eq!(
            parse_stub_status(page),
            Some(StubStatus {
                active: 3,
                accepted: 10,
                handled: 9,
                requests: 42,
                reading: 0,
                writing: 1,
                waiting: 2,
            })
        );
        assert_eq!(parse_stub_status("not found\n"), None);
    }

    #[test]
    fn proc_stat_with_a_name_holding_spaces_and_parentheses() {
        let line = "1234 (nginx: worker (x)) S 1200 1200 1200 0 -1 4194624 100 0 0 0 \
                    250 50 0 0 20 0 1 0 98765 123456789 2000 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                parent: 1200,
                user: 250,
                system: 50,
                start: 98765,
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_reads_from_proc() {
        let me = std::process::id();
        let p = read_processes(Path::new("/proc"), me).unwrap();
        assert!(p.count >= 1);
        assert!(p.resident_bytes > 0 && p.virtual_bytes >= p.resident_bytes);
        assert!(p.oldest_start > 1.6e9);
    }
}
