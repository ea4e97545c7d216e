//! `cargo run -p benches --bin bench-report [CRITERION_DIR] [SVG_OUT]`
//!
//! Reads criterion's results (default `target/criterion`), prints the Markdown tables that go
//! into `BENCHMARKS.md`, and draws the speed-up of ours over each peer as a bar chart (default
//! `benches/ratios.svg`).

use std::path::PathBuf;
use std::process::ExitCode;

use benches::report::{self, Ratio};
use plotters::prelude::*;

fn draw(ratios: &[Ratio], out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let row_height = 26u32;
    let height = 80 + row_height * ratios.len().max(1) as u32;
    let root = SVGBackend::new(out, (900, height)).into_drawing_area();
    root.fill(&WHITE)?;
    // The x axis is log10 of the speed-up, so a 2x win and a 200x win both stay readable. Bars
    // grow from parity (0 = 1x): rightwards where we are faster, leftwards where the peer is.
    let log = |r: &Ratio| r.speedup().log10();
    let max = ratios.iter().map(log).fold(0.5f64, f64::max) + 0.25;
    let min = ratios.iter().map(log).fold(-0.5f64, f64::min) - 0.1;
    let rows = ratios.len().max(1);
    let labels: Vec<String> = ratios
        .iter()
        .map(|r| format!("{}/{} vs {}", r.group, r.input, r.peer))
        .collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "speed-up over the peer: peer time / our time",
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(330)
        .build_cartesian_2d(min..max, 0f64..rows as f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows * 2 + 1)
        .y_label_formatter(&|v| {
            // Labels sit at row centres (i + 0.5); other tick positions stay blank.
            let row = v - 0.5;
            if (row - row.round()).abs() < 1e-6 && row >= 0.0 {
                labels
                    .get(row.round() as usize)
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_formatter(&|v| format!("{:.3}x", 10f64.powf(*v)))
        .x_desc("times faster (log scale; 1x = parity)")
        .draw()?;
    chart.draw_series(ratios.iter().enumerate().map(|(i, r)| {
        let color = if r.speedup() >= 1.0 {
            GREEN.mix(0.7)
        } else {
            RED.mix(0.7)
        };
        Rectangle::new(
            [(0.0, i as f64 + 0.15), (log(r), i as f64 + 0.85)],
            color.filled(),
        )
    }))?;
    chart.draw_series(ratios.iter().enumerate().map(|(i, r)| {
        Text::new(
            format!("{:.1}x", r.speedup()),
            (log(r).max(0.0), i as f64 + 0.7),
            ("sans-serif", 13),
        )
    }))?;
    root.present()?;
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let dir = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| "target/criterion".into());
    let svg = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| "benches/ratios.svg".into());
    let measurements = match report::read_measurements(&dir) {
        Ok(m) => m,
        Err(e) => {
            eprintln!(
                "bench-report: reading {}: {e} (run `cargo bench -p benches` first)",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
    };
    let ratios = report::ratios(&measurements);
    print!("{}", report::markdown(&measurements, &ratios));
    if let Err(e) = draw(&ratios, &svg) {
        eprintln!("bench-report: drawing {}: {e}", svg.display());
        return ExitCode::FAILURE;
    }
    eprintln!("bench-report: wrote {}", svg.display());
    ExitCode::SUCCESS
}
