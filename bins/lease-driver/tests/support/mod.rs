//! Runs `lease-demo` processes and reads their notices; every child is killed on drop, so a
//! failing test leaves nothing behind.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Lease 3 s, renew deadline 1.5 s, retry 0.5 s: a leader that stops hearing from the store
/// steps down after its renew round, 0.7 s before its validity ends.
pub(crate) const TIMINGS: [&str; 6] = [
    "--lease-secs",
    "3",
    "--renew-ms",
    "1500",
    "--retry-ms",
    "500",
];

/// Generous bound for "someone leads": a takeover needs a lease duration plus jitter.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// One line a candidate printed.
#[derive(Debug)]
pub(crate) struct Line {
    /// The candidate's identity.
    pub(crate) id: String,
    /// The line's words.
    pub(crate) words: Vec<String>,
}

impl Line {
    /// The value of `name=value` on this line.
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.words
            .iter()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
    }

    /// A millisecond field.
    pub(crate) fn millis(&self, name: &str) -> u64 {
        self.field(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {self:?}"))
    }

    /// The first word: `started`, `stopped`, `leader`, `failed`, `released`.
    pub(crate) fn kind(&self) -> &str {
        self.words.first().map_or("", String::as_str)
    }
}

/// `lease-demo` processes sharing one store.
pub(crate) struct Candidates {
    backend: Vec<String>,
    children: Vec<(String, Child)>,
    sender: mpsc::Sender<Line>,
    lines: mpsc::Receiver<Line>,
}

impl Candidates {
    /// Candidates campaigning with `backend` arguments (`--file PATH` or `--etcd URL --key K`).
    pub(crate) fn new(backend: &[&str]) -> Self {
        let (sender, lines) = mpsc::channel();
        Self {
            backend: backend.iter().map(|s| s.to_string()).collect(),
            children: Vec::new(),
            sender,
            lines,
        }
    }

    /// Starts candidate `id`.
    pub(crate) fn spawn(&mut self, id: &str) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lease-demo"))
            .args(["--id", id])
            .args(&self.backend)
            .args(TIMINGS)
            .stdout(Stdio::piped())
            .spawn()
            .expect("lease-demo starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (who, sender) = (id.to_owned(), self.sender.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                eprintln!("[{who}] {line}");
                let words = line.split_whitespace().map(String::from).collect();
                if sender
                    .send(Line {
                        id: who.clone(),
                        words,
                    })
                    .is_err()
                {
                    break;
                }
            }
        });
        self.children.push((id.to_owned(), child));
    }

    /// Kills candidate `id` with SIGKILL (a crash: nothing is released).
    pub(crate) fn kill(&mut self, id: &str) {
        if let Some(index) = self.children.iter().position(|(who, _)| who == id) {
            let (_, mut child) = self.children.remove(index);
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The next line of the given kind within `patience`, or `None`.
    pub(crate) fn next(&self, kind: &str, patience: Duration) -> Option<Line> {
        let deadline = Instant::now() + patience;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left) {
                Ok(line) if line.kind() == kind => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// Waits for the first leader, then checks that for `window` nobody else starts leading and
    /// the leader does not stop. Returns the leader's identity.
    pub(crate) fn one_leader(&self, window: Duration) -> String {
        let first = self.next("started", PATIENCE).expect("someone leads");
        let deadline = Instant::now() + window;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => assert!(
                    !matches!(line.kind(), "started" | "stopped"),
                    "{} leads; then {line:?}",
                    first.id
                ),
                Err(_) => break,
            }
        }
        first.id
    }
}

impl Drop for Candidates {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
