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
    let max = ratios.iter().map(Ratio::speedup).fold(1.0f64, f64::max) * 1.15;
    let labels: Vec<String> = ratios
        .iter()
        .map(|r| format!("{}/{} vs {}", r.group, r.input, r.peer))
        .collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "speed-up over the peer (peer time / our time; > 1 is faster)",
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(330)
        .build_cartesian_2d(0f64..max, (0..ratios.len().max(1)).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(ratios.len().max(1))
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc("x faster")
        .draw()?;
    chart.draw_series(ratios.iter().enumerate().map(|(i, r)| {
        let color = if r.speedup() >= 1.0 {
            GREEN.mix(0.7)
        } else {
            RED.mix(0.7)
        };
        Rectangle::new(
            [
                (0.0, SegmentValue::Exact(i)),
                (r.speedup(), SegmentValue::Exact(i + 1)),
            ],
            color.filled(),
        )
    }))?;
    chart.draw_series(ratios.iter().enumerate().map(|(i, r)| {
        Text::new(
            format!("{:.1}x", r.speedup()),
            (r.speedup(), SegmentValue::CenterOf(i)),
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
