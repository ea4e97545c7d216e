//! What the rule-applying benchmarks (`iptables_restore_timing`, `nftables_timing`) share: a
//! program fed on stdin inside a throwaway network namespace (the `netns` crate's) and timed
//! (wall clock, and the CPU of the finished child), and the best of several runs. Needs root
//! and `ip`.

use std::io::Write as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use netns::Namespace;

/// CPU seconds of this process's finished children (user + sys), from `/proc/self/stat`.
pub fn children_cpu() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // After the command name: state is field 3, so cutime (16) and cstime (17) are the 14th
    // and 15th fields after the closing parenthesis.
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(13) + ticks(14)) / 100.0
}

/// Runs `program args` in `ns` with `input` on its stdin; returns (wall, CPU).
///
/// # Panics
///
/// When the program cannot be started or fails: the benchmark's input is wrong.
#[allow(clippy::panic, clippy::expect_used)]
pub fn run_with_input(
    ns: &Namespace,
    program: &str,
    args: &[&str],
    input: &str,
) -> (Duration, f64) {
    let cpu = children_cpu();
    let start = Instant::now();
    let mut child = ns
        .command(program)
        .args(args)
        .stdin(Stdio::piped())
        .spawn()
        .expect("ip netns exec");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writing to the program");
    if !child.wait().is_ok_and(|s| s.success()) {
        panic!("{program} failed");
    }
    (start.elapsed(), children_cpu() - cpu)
}

/// The best time of `runs` calls of `f`, and the last result.
///
/// # Panics
///
/// When `runs` is 0.
#[allow(clippy::expect_used)]
pub fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = f();
        best = best.min(start.elapsed());
        last = Some(out);
    }
    (best, last.expect("at least one run"))
}
