//! The `process_*` metrics kube-proxy exposes through the Prometheus Go client's process
//! collector, read from `/proc` at each scrape: CPU time, resident and virtual memory, open
//! and maximum file descriptors, and the start time.
//!
//! prometheus-client has no process collector, and no crate of the dependency tree offers
//! one, so it is written here from the `proc(5)` formats. As the Go client (through its
//! `procfs` package), CPU and start times are counted in ticks of 1/100 s (`USER_HZ`, 100 on
//! every Linux architecture the Go client supports). A value that cannot be read (another
//! operating system, a missing file) is left out, and the others are still exposed.

use std::fs;
use std::path::PathBuf;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of the times in `/proc/PID/stat` and `/proc/stat`.
const USER_HZ: f64 = 100.0;

/// The collector of the process whose `/proc` directory is `dir` (`/proc/self`).
#[derive(Debug, Clone)]
pub struct ProcessCollector {
    dir: PathBuf,
    /// `/proc/stat`, for the boot time.
    system_stat: PathBuf,
}

impl Default for ProcessCollector {
    fn default() -> Self {
        Self::new("/proc/self", "/proc/stat")
    }
}

/// One reading of the process's figures; `None` where a file could not be read.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Sample {
    /// User and system CPU time, in seconds.
    pub cpu_seconds: Option<f64>,
    /// Resident set size, in bytes.
    pub resident_bytes: Option<f64>,
    /// Virtual memory size, in bytes.
    pub virtual_bytes: Option<f64>,
    /// Open file descriptors.
    pub open_fds: Option<f64>,
    /// The soft limit on open file descriptors.
    pub max_fds: Option<f64>,
    /// When the process started, in seconds since the Unix epoch.
    pub start_time: Option<f64>,
}

/// The fields of `/proc/PID/stat` read here: `(utime, stime, starttime, vsize)`.
///
/// The command name (field 2) is in parentheses and may itself hold spaces and parentheses,
/// so the fields are counted from the last `)`.
fn stat_fields(text: &str) -> Option<(f64, f64, f64, f64)> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, so field N is at index N - 3.
    let number = |field: usize| fields.get(field - 3)?.parse::<f64>().ok();
    Some((number(14)?, number(15)?, number(22)?, number(23)?))
}

/// `VmRSS` of `/proc/PID/status`, in bytes (the file counts kB).
fn resident_bytes(status: &str) -> Option<f64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let kilobytes: f64 = line.split_whitespace().next()?.parse().ok()?;
    Some(kilobytes * 1024.0)
}

/// The soft limit of `Max open files` in `/proc/PID/limits`.
fn max_open_files(limits: &str) -> Option<f64> {
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// `btime` of `/proc/stat`: the boot time, in seconds since the Unix epoch.
fn boot_time(stat: &str) -> Option<f64> {
    let line = stat.lines().find_map(|l| l.strip_prefix("btime "))?;
    line.trim().parse().ok()
}

impl ProcessCollector {
    /// A collector reading the process directory `dir` and the system's `stat` file.
    pub fn new(dir: impl Into<PathBuf>, system_stat: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            system_stat: system_stat.into(),
        }
    }

    fn read(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.dir.join(name)).ok()
    }

    /// Reads the figures now.
    pub fn sample(&self) -> Sample {
        let stat = self.read("stat").and_then(|text| stat_fields(&text));
        let boot = fs::read_to_string(&self.system_stat)
            .ok()
            .and_then(|text| boot_time(&text));
        let open_fds = fs::read_dir(self.dir.join("fd"))
            .ok()
            .map(|entries| entries.count() as f64);
        Sample {
            cpu_seconds: stat.map(|(user, system, _, _)| (user + system) / USER_HZ),
            resident_bytes: self.read("status").and_then(|text| resident_bytes(&text)),
            virtual_bytes: stat.map(|(_, _, _, size)| size),
            open_fds,
            max_fds: self.read("limits").and_then(|text| max_open_files(&text)),
            start_time: stat
                .zip(boot)
                .map(|((_, _, start, _), boot)| start / USER_HZ + boot),
        }
    }
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let sample = self.sample();
        if let Some(seconds) = sample.cpu_seconds {
            let counter = ConstCounter::new(seconds);
            let help = "Total user and system CPU time spent in seconds.";
            let metric = encoder.encode_descriptor(
                "process_cpu_seconds",
                help,
                None,
                counter.metric_type(),
            )?;
            counter.encode(metric)?;
        }
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                sample.resident_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                sample.virtual_bytes,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                sample.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                sample.max_fds,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                sample.start_time,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                let gauge = ConstGauge::new(value);
                let metric = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
                gauge.encode(metric)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_of_a_made_up_process() {
        let dir = tempfile::tempdir().unwrap();
        // A command name with a space and parentheses; utime 250, stime 50 ticks; start
        // 1000 ticks after boot; 8 MiB of virtual memory.
        let stat = "42 (a (b) c) S 1 42 42 0 -1 4194560 10 0 0 0 250 50 0 0 20 0 1 0 1000 \
                    8388608 300 18446744073709551615\n";
        fs::write(dir.path().join("stat"), stat).unwrap();
        fs::write(dir.path().join("status"), "Name:\tx\nVmRSS:\t    1200 kB\n").unwrap();
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n";
        fs::write(dir.path().join("limits"), limits).unwrap();
        fs::create_dir(dir.path().join("fd")).unwrap();
        for fd in ["0", "1", "2"] {
            fs::write(dir.path().join("fd").join(fd), "").unwrap();
        }
        let system = dir.path().join("system-stat");
        fs::write(&system, "cpu 1 2 3\nbtime 1764900000\nprocesses 9\n").unwrap();

        let sample = ProcessCollector::new(dir.path(), &system).sample();
        assert_eq!(
            sample,
            Sample {
                cpu_seconds: Some(3.0),
                resident_bytes: Some(1_228_800.0),
                virtual_bytes: Some(8_388_608.0),
                open_fds: Some(3.0),
                max_fds: Some(1024.0),
                start_time: Some(1_764_900_010.0),
            }
        );
    }

    #[test]
    fn missing_files_leave_their_metrics_out() {
        let dir = tempfile::tempdir().unwrap();
        let collector = ProcessCollector::new(dir.path().join("gone"), dir.path().join("gone"));
        assert_eq!(collector.sample(), Sample::default());
    }
}
