//! `cargo run -p benches --bin bench-report [-- OPTIONS]`
//!
//! Reads criterion's results, prints the Markdown tables that go into `BENCHMARKS.md`, keeps
//! the speed-ups over the peers in `benches/ratios.tsv` and draws them as a bar chart,
//! `benches/ratios.svg`. With `--from benches/ratios.tsv` it draws the chart again from that
//! file alone, without running or reading criterion.
//!
//! Options:
//! - `--criterion DIR`: criterion's output (default `target/criterion`);
//! - `--from FILE`: draw from a ratios file instead (nothing is printed or written but the chart);
//! - `--tsv FILE`, `--svg FILE`: where the ratios and the chart go (defaults above);
//! - `--date YYYY-MM-DD`, `--commit HASH`: the run's day and commit, written into the ratios
//!   file and the chart's caption (defaults: today, UTC, and `git rev-parse --short HEAD`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use benches::report::{self, Provenance, Ratio};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Bars for ratios at or above parity.
const FASTER: RGBColor = RGBColor(46, 139, 87);
/// Bars for ratios below parity.
const SLOWER: RGBColor = RGBColor(205, 92, 92);

/// What the command line asks for.
struct Options {
    criterion: PathBuf,
    from: Option<PathBuf>,
    tsv: PathBuf,
    svg: PathBuf,
    date: Option<String>,
    commit: Option<String>,
}

impl Options {
    fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, String> {
        let mut options = Options {
            criterion: "target/criterion".into(),
            from: None,
            tsv: "benches/ratios.tsv".into(),
            svg: "benches/ratios.svg".into(),
            date: None,
            commit: None,
        };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            let mut value = || {
                args.next()
                    .ok_or_else(|| format!("{} needs a value", flag.to_string_lossy()))
            };
            match flag.to_str() {
                Some("--criterion") => options.criterion = value()?.into(),
                Some("--from") => options.from = Some(value()?.into()),
                Some("--tsv") => options.tsv = value()?.into(),
                Some("--svg") => options.svg = value()?.into(),
                Some("--date") => options.date = Some(value()?.to_string_lossy().into_owned()),
                Some("--commit") => options.commit = Some(value()?.to_string_lossy().into_owned()),
                _ => return Err(format!("unknown option {}", flag.to_string_lossy())),
            }
        }
        Ok(options)
    }
}

/// Today's date in UTC, `YYYY-MM-DD`.
fn today() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
}

/// The checked-out commit, short, or `unknown` outside a git checkout.
fn head_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map_or_else(|| "unknown".to_owned(), |hash| hash.trim().to_owned())
}

/// A speed-up as the chart prints it: `180x`, `4.7x`, `0.44x`.
fn times(speedup: f64) -> String {
    if speedup >= 10.0 {
        format!("{speedup:.0}x")
    } else if speedup >= 1.0 {
        format!("{speedup:.1}x")
    } else {
        format!("{speedup:.2}x")
    }
}

/// One horizontal bar per ratio, in the order given from the top, on a log scale centred on
/// parity: rightwards (green) where ours is faster, leftwards (red) where the peer is. Each
/// bar carries its value; the caption says which run the data come from.
fn draw(
    provenance: &Provenance,
    ratios: &[Ratio],
    out: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let rows = ratios.len().max(1);
    let row_height = 26u32;
    let height = 110 + row_height * rows as u32;
    let root = SVGBackend::new(out, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let log = |r: &Ratio| r.speedup().log10();
    // Room on both sides for the value labels.
    let max = ratios.iter().map(log).fold(0.5f64, f64::max) + 0.3;
    let min = ratios.iter().map(log).fold(-0.3f64, f64::min) - 0.3;
    // Grid lines at round speed-ups, which plotters' evenly spaced ticks would not give.
    let grid: Vec<f64> = [
        0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0,
    ]
    .into_iter()
    .filter(|speedup: &f64| (min..=max).contains(&speedup.log10()))
    .collect();
    // Row i (from the top) spans [rows - 1 - i, rows - i].
    let top = |i: usize| (rows - i) as f64;
    let names: Vec<String> = ratios
        .iter()
        .map(|r| format!("{}/{} vs {}", r.group, r.input, r.peer))
        .collect();
    let caption = format!(
        "Speed-up of ours over each peer (peer time / our time): criterion, {}, commit {}",
        provenance.date, provenance.commit
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 17))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(330)
        .build_cartesian_2d(min..max, 0f64..rows as f64)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(rows * 2 + 1)
        .y_label_formatter(&|v| {
            // Names sit at row centres; other tick positions stay blank.
            let from_top = rows as f64 - v - 0.5;
            if (from_top - from_top.round()).abs() < 1e-6 && from_top >= 0.0 {
                names
                    .get(from_top.round() as usize)
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("times faster than the peer (log scale; 1x = parity)")
        .label_style(("sans-serif", 13))
        .draw()?;
    for (colour, faster, legend) in [
        (FASTER, true, "ours faster than the peer"),
        (SLOWER, false, "ours slower than the peer"),
    ] {
        chart
            .draw_series(
                ratios
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| (r.speedup() >= 1.0) == faster)
                    .map(|(i, r)| {
                        Rectangle::new(
                            [(0.0, top(i) - 0.82), (log(r), top(i) - 0.18)],
                            colour.filled(),
                        )
                    }),
            )?
            .label(legend)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], colour.filled()));
    }
    let tick_style = ("sans-serif", 13)
        .into_font()
        .into_text_style(&root)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for speedup in grid {
        let x = speedup.log10();
        let line = if speedup == 1.0 {
            BLACK.mix(1.0)
        } else {
            BLACK.mix(0.15)
        };
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, rows as f64)],
            line,
        )))?;
        let (px, py) = chart.backend_coord(&(x, 0.0));
        root.draw(&Text::new(format!("{speedup}x"), (px, py + 6), &tick_style))?;
    }
    let pad = (max - min) * 0.008;
    chart.draw_series(ratios.iter().enumerate().map(|(i, r)| {
        let (x, anchor) = if r.speedup() >= 1.0 {
            (log(r) + pad, HPos::Left)
        } else {
            (log(r) - pad, HPos::Right)
        };
        Text::new(
            times(r.speedup()),
            (x, top(i) - 0.5),
            ("sans-serif", 13)
                .into_font()
                .into_text_style(&root)
                .pos(Pos::new(anchor, VPos::Center)),
        )
    }))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 13))
        .draw()?;
    root.present()?;
    Ok(())
}

/// Reads criterion's results: prints the tables, writes the ratios file, returns the ratios.
fn from_criterion(options: &Options) -> Result<(Provenance, Vec<Ratio>), String> {
    let measurements = report::read_measurements(&options.criterion).map_err(|e| {
        format!(
            "reading {}: {e} (run `cargo bench -p benches` first, or draw with --from benches/ratios.tsv)",
            options.criterion.display()
        )
    })?;
    let ratios = report::ratios(&measurements);
    print!("{}", report::markdown(&measurements, &ratios));
    let provenance = Provenance {
        date: options.date.clone().unwrap_or_else(today),
        commit: options.commit.clone().unwrap_or_else(head_commit),
    };
    std::fs::write(&options.tsv, report::write_ratios(&provenance, &ratios))
        .map_err(|e| format!("writing {}: {e}", options.tsv.display()))?;
    eprintln!("bench-report: wrote {}", options.tsv.display());
    Ok((provenance, ratios))
}

/// Reads a ratios file; `--date` and `--commit` override what it says.
fn from_file(options: &Options, file: &Path) -> Result<(Provenance, Vec<Ratio>), String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    let (mut provenance, ratios) =
        report::read_ratios(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    if let Some(date) = &options.date {
        provenance.date.clone_from(date);
    }
    if let Some(commit) = &options.commit {
        provenance.commit.clone_from(commit);
    }
    Ok((provenance, ratios))
}

fn run() -> Result<(), String> {
    let options = Options::parse(std::env::args_os().skip(1))?;
    let (provenance, ratios) = match &options.from {
        Some(file) => from_file(&options, file)?,
        None => from_criterion(&options)?,
    };
    draw(&provenance, &ratios, &options.svg)
        .map_err(|e| format!("drawing {}: {e}", options.svg.display()))?;
    eprintln!("bench-report: wrote {}", options.svg.display());
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-report: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_ups_keep_two_or_three_digits() {
        assert_eq!(times(179.72), "180x");
        assert_eq!(times(4.66), "4.7x");
        assert_eq!(times(0.33), "0.33x");
    }
}
