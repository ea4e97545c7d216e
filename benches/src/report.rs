//! Reads criterion's results and turns them into speed ratios against the peers, and keeps
//! those ratios in a small tab-separated file (`benches/ratios.tsv`) from which the chart can
//! be drawn again without running the suite.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One measured benchmark: `group/implementation/input` and its mean time.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Criterion group, e.g. `dns_parse_owned`.
    pub group: String,
    /// Implementation: [`crate::OURS`] or a peer's name.
    pub implementation: String,
    /// Input name, e.g. `response`.
    pub input: String,
    /// Mean time per iteration in nanoseconds.
    pub mean_ns: f64,
    /// Bytes per iteration when the benchmark declared a byte throughput.
    pub bytes: Option<u64>,
}

/// How much faster our implementation is than one peer on one input.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    /// Criterion group.
    pub group: String,
    /// Input name.
    pub input: String,
    /// The peer's name.
    pub peer: String,
    /// Our mean time in nanoseconds.
    pub ours_ns: f64,
    /// The peer's mean time in nanoseconds.
    pub peer_ns: f64,
}

impl Ratio {
    /// Peer time divided by our time: above 1 means we are faster.
    pub fn speedup(&self) -> f64 {
        self.peer_ns / self.ours_ns
    }
}

/// Every `new/benchmark.json` + `new/estimates.json` pair under a criterion output folder
/// (`target/criterion`), sorted by group, input and implementation.
pub fn read_measurements(criterion_dir: &Path) -> std::io::Result<Vec<Measurement>> {
    let mut found = Vec::new();
    let mut stack = vec![criterion_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "benchmark.json")
                && path.parent().is_some_and(|p| p.ends_with("new"))
                && let Some(m) = read_one(&path)?
            {
                found.push(m);
            }
        }
    }
    found.sort_by(|a, b| {
        (&a.group, &a.input, &a.implementation).cmp(&(&b.group, &b.input, &b.implementation))
    });
    Ok(found)
}

fn read_json(path: &Path) -> std::io::Result<Value> {
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).map_err(std::io::Error::other)
}

fn read_one(benchmark_json: &Path) -> std::io::Result<Option<Measurement>> {
    let bench = read_json(benchmark_json)?;
    let estimates_path: PathBuf = benchmark_json.with_file_name("estimates.json");
    let estimates = read_json(&estimates_path)?;
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let (Some(group), Some(implementation)) =
        (text(&bench["group_id"]), text(&bench["function_id"]))
    else {
        return Ok(None);
    };
    let Some(mean_ns) = estimates["mean"]["point_estimate"].as_f64() else {
        return Ok(None);
    };
    Ok(Some(Measurement {
        group,
        implementation,
        input: text(&bench["value_str"]).unwrap_or_default(),
        mean_ns,
        bytes: bench["throughput"]["Bytes"].as_u64(),
    }))
}

/// Pairs our measurement with each peer's on the same group and input.
pub fn ratios(measurements: &[Measurement]) -> Vec<Ratio> {
    let mut out = Vec::new();
    for ours in measurements
        .iter()
        .filter(|m| m.implementation == crate::OURS)
    {
        for peer in measurements.iter().filter(|m| {
            m.implementation != crate::OURS && m.group == ours.group && m.input == ours.input
        }) {
            out.push(Ratio {
                group: ours.group.clone(),
                input: ours.input.clone(),
                peer: peer.implementation.clone(),
                ours_ns: ours.mean_ns,
                peer_ns: peer.mean_ns,
            });
        }
    }
    out
}

/// Where a set of ratios comes from: the day criterion measured them and the commit measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// Day of the run, `YYYY-MM-DD`.
    pub date: String,
    /// The commit whose code was measured (a short hash).
    pub commit: String,
}

/// The column names of the ratios file, in order.
const RATIO_COLUMNS: [&str; 5] = ["group", "input", "peer", "ours_ns", "peer_ns"];

/// The ratios file: `# date` and `# commit` lines, a header, then one line per ratio with both
/// mean times in nanoseconds, so that [`read_ratios`] gives the same ratios back.
pub fn write_ratios(provenance: &Provenance, ratios: &[Ratio]) -> String {
    let mut out = format!(
        "# speed-up of ours over each peer = peer_ns / ours_ns (criterion means); read by bench-report --from\n\
         # date\t{}\n# commit\t{}\n{}\n",
        provenance.date,
        provenance.commit,
        RATIO_COLUMNS.join("\t")
    );
    for r in ratios {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\n",
            r.group, r.input, r.peer, r.ours_ns, r.peer_ns
        ));
    }
    out
}

/// Reads a ratios file written by [`write_ratios`] (or by hand in its format). Other `#` lines
/// are comments; an error names the line it found wrong.
pub fn read_ratios(text: &str) -> Result<(Provenance, Vec<Ratio>), String> {
    let mut provenance = Provenance {
        date: String::new(),
        commit: String::new(),
    };
    let mut ratios = Vec::new();
    let mut header_seen = false;
    for (index, line) in text.lines().enumerate() {
        let at = |what: &str| format!("line {}: {what}", index + 1);
        if let Some(comment) = line.strip_prefix('#') {
            match comment.trim_start().split_once('\t') {
                Some(("date", date)) => provenance.date = date.trim().to_owned(),
                Some(("commit", commit)) => provenance.commit = commit.trim().to_owned(),
                _ => {}
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if !header_seen {
            if fields != RATIO_COLUMNS {
                return Err(at(&format!(
                    "the header must be `{}`",
                    RATIO_COLUMNS.join(" ")
                )));
            }
            header_seen = true;
            continue;
        }
        let [group, input, peer, ours_ns, peer_ns] = fields[..] else {
            return Err(at("a ratio has five tab-separated fields"));
        };
        let time = |text: &str| match text.parse::<f64>() {
            Ok(ns) if ns > 0.0 && ns.is_finite() => Ok(ns),
            _ => Err(at(&format!("`{text}` is not a time in nanoseconds"))),
        };
        ratios.push(Ratio {
            group: group.to_owned(),
            input: input.to_owned(),
            peer: peer.to_owned(),
            ours_ns: time(ours_ns)?,
            peer_ns: time(peer_ns)?,
        });
    }
    if !header_seen {
        return Err("no header line".to_owned());
    }
    Ok((provenance, ratios))
}

/// A human-readable duration: `812 ns`, `3.41 µs`, `12.0 ms`.
pub fn format_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A throughput in MB/s with the precision its size deserves: `321 MB/s`, `4.2 MB/s`.
pub fn format_rate(mb_per_s: f64) -> String {
    if mb_per_s >= 10.0 {
        format!("{mb_per_s:.0} MB/s")
    } else {
        format!("{mb_per_s:.2} MB/s")
    }
}

/// Markdown tables: every ratio against a peer, then every measurement of ours with its
/// throughput where one was declared.
pub fn markdown(measurements: &[Measurement], ratios: &[Ratio]) -> String {
    let mut md = String::from(
        "| benchmark | input | ours | peer | peer time | speed-up |\n|---|---|---|---|---|---|\n",
    );
    for r in ratios {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2}x |\n",
            r.group,
            r.input,
            format_ns(r.ours_ns),
            r.peer,
            format_ns(r.peer_ns),
            r.speedup()
        ));
    }
    md.push_str("\n| benchmark | input | ours | throughput |\n|---|---|---|---|\n");
    for m in measurements
        .iter()
        .filter(|m| m.implementation == crate::OURS)
    {
        let throughput = m
            .bytes
            .map(|b| format_rate(b as f64 / m.mean_ns * 1e3))
            .unwrap_or_else(|| "-".to_owned());
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            m.group,
            m.input,
            format_ns(m.mean_ns),
            throughput
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(group: &str, implementation: &str, input: &str, mean_ns: f64) -> Measurement {
        Measurement {
            group: group.into(),
            implementation: implementation.into(),
            input: input.into(),
            mean_ns,
            bytes: Some(1000),
        }
    }

    #[test]
    fn ratios_pair_ours_with_each_peer_on_the_same_input() {
        let ms = [
            m("parse", "ours", "a", 10.0),
            m("parse", "peer1", "a", 30.0),
            m("parse", "peer2", "a", 5.0),
            m("parse", "peer1", "b", 99.0),
            m("emit", "ours", "a", 1.0),
        ];
        let rs = ratios(&ms);
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[0].peer, "peer1");
        assert!((rs[0].speedup() - 3.0).abs() < 1e-9);
        assert!((rs[1].speedup() - 0.5).abs() < 1e-9);
        let md = markdown(&ms, &rs);
        assert!(md.contains("| parse | a | 10 ns | peer1 | 30 ns | 3.00x |"));
        assert!(md.contains("| parse | a | 10 ns | 100000 MB/s |"));
    }

    #[test]
    fn the_ratios_file_gives_the_same_ratios_back() {
        let ms = [
            m("parse", "ours", "a", 10.5),
            m("parse", "peer1", "a", 31.25),
            m("parse", "peer2", "a", 5.0),
        ];
        let rs = ratios(&ms);
        let provenance = Provenance {
            date: "2026-11-30".into(),
            commit: "b298ba9".into(),
        };
        let text = write_ratios(&provenance, &rs);
        assert_eq!(read_ratios(&text), Ok((provenance, rs)));
    }

    #[test]
    fn a_wrong_ratios_file_names_its_line() {
        let header = "group\tinput\tpeer\tours_ns\tpeer_ns\n";
        assert_eq!(
            read_ratios(&format!("{header}parse\ta\tpeer\t10\n")),
            Err("line 2: a ratio has five tab-separated fields".to_owned())
        );
        assert_eq!(
            read_ratios(&format!("# date\tx\n{header}parse\ta\tpeer\t10\t-3\n")),
            Err("line 3: `-3` is not a time in nanoseconds".to_owned())
        );
        assert!(read_ratios("parse\ta\tpeer\t10\t30\n").is_err());
        assert_eq!(read_ratios(""), Err("no header line".to_owned()));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_ns(812.0), "812 ns");
        assert_eq!(format_ns(3_410.0), "3.41 µs");
        assert_eq!(format_ns(12_000_000.0), "12.00 ms");
    }
}
