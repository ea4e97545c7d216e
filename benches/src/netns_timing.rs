//! What the rule-applying benchmarks (`iptables_restore_timing`, `nftables_timing`) share: a
//! throwaway network namespace, a program fed on stdin inside it and timed (wall clock, and the
//! CPU of the finished child), and the best of several runs. Needs root and `ip`.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A network namespace, added on creation and deleted on drop.
#[derive(Debug)]
pub struct Namespace(pub String);

impl Namespace {
    /// Adds the namespace `name`.
    ///
    /// # Panics
    ///
    /// When `ip netns add` fails (not root, or no `ip`): a benchmark cannot go on without it.
    #[allow(clippy::panic)]
    pub fn add(name: String) -> Self {
        let added = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .is_ok_and(|s| s.success());
        if !added {
            panic!("ip netns add {name} failed (root is needed)");
        }
        Self(name)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

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
pub fn run_with_input(ns: &str, program: &str, args: &[&str], input: &str) -> (Duration, f64) {
    let cpu = children_cpu();
    let start = Instant::now();
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, program])
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
