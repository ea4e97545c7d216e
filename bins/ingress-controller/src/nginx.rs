//! The nginx child process: configuration files in its prefix, `nginx -t` on a candidate in a
//! private prefix before it replaces the running one, start, reload (`-s reload`), stop, and
//! exit detection.
//!
//! `nginx -t` reads the whole configuration as a start would: it opens (creates) the pid file
//! and the log files, creates the temp directories, binds the listening sockets (a TCP address
//! in use is ignored in test mode; a Unix socket it binds is removed afterwards) and runs
//! `init_by_lua`. So the candidate is checked as the same model rendered for the private
//! prefix `PREFIX/validate/` (its own pid file, logs, temp directories and control socket;
//! `certs` there links to the running certificates, which it only reads): a validation never
//! touches a file the running nginx uses.
//!
//! nginx runs in a process group of its own, so a controller that crashes (or is killed) leaves
//! its nginx running, listening on the ports. The next controller on the same prefix stops that
//! nginx before it starts its own ([`Nginx::start`]): the pid file in the prefix names it, and
//! `/proc/PID/cmdline` must show an nginx master of this prefix (a stale pid file may name a
//! reused pid). It asks for a graceful stop (SIGQUIT: requests in flight finish, within
//! `worker_shutdown_timeout`), then a fast one (SIGTERM), then kills the process group. It does
//! not take that nginx over: it is not our child, so its exit could not be waited for (the
//! restart on exit needs that), its access and error logs still go to the dead controller's
//! stdout and stderr, and its configuration and backend table are the predecessor's.
//!
//! A start succeeds only once nginx answers `GET /healthz` on the control socket: a worker
//! answers only after the master has bound every listening socket (a connection alone is
//! accepted as soon as the control socket listens, before a TCP port in use makes nginx give up).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};
use tracing::{error, info, warn};

/// How long the nginx a previous controller left gets to stop after SIGQUIT (requests in
/// flight finish; the rendered `worker_shutdown_timeout` is 10 s), then after SIGTERM, before
/// its process group is killed.
const LEFTOVER_QUIT: Duration = Duration::from_secs(15);
const LEFTOVER_TERM: Duration = Duration::from_secs(3);
/// How long a start may take until nginx answers (a configuration of thousands of servers
/// takes seconds).
const START: Duration = Duration::from_secs(60);

/// The pid file of the nginx running in `prefix` (the configuration's `pid`).
pub fn pid_file(prefix: &Path) -> PathBuf {
    prefix.join("nginx.pid")
}

/// Whether the nginx whose control socket is `control_socket` answers (`GET /healthz`, which
/// nginx answers itself: see [`crate::render`]).
pub async fn answers(control_socket: &Path) -> bool {
    crate::control::request(control_socket, "GET", "/healthz", "", 200)
        .await
        .is_ok()
}

/// Why an nginx operation failed.
#[derive(Debug, thiserror::Error)]
pub enum NginxError {
    /// nginx could not be run, or a file in its prefix could not be written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The candidate could not be rendered for the validation prefix.
    #[error("cannot render the configuration to validate: {0}")]
    Render(#[from] crate::render::RenderError),
    /// `nginx -t` refused the configuration; the running one is kept.
    #[error("nginx -t refused the new configuration (the last good one keeps running): {0}")]
    Invalid(String),
    /// A command failed.
    #[error("{what} failed: {output}")]
    Failed {
        /// The command.
        what: String,
        /// Its error output.
        output: String,
    },
}

/// An nginx binary and its prefix directory, and the master process once started.
#[derive(Debug)]
pub struct Nginx {
    binary: PathBuf,
    prefix: PathBuf,
    child: Option<Child>,
    /// The process group of the master and its workers.
    group: Option<u32>,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> NginxError {
    let what = what.into();
    move |source| NginxError::Io { what, source }
}

impl Nginx {
    /// nginx `binary` working in `prefix` (created with `logs/`, `tmp/` and `certs/`, and the
    /// private prefix of `nginx -t`, [`Nginx::validation_prefix`]).
    ///
    /// # Errors
    ///
    /// [`NginxError::Io`] if the directories cannot be created.
    pub fn new(binary: PathBuf, prefix: PathBuf) -> Result<Self, NginxError> {
        let private = validation_prefix(&prefix);
        for dir in [&prefix, &private] {
            for sub in ["logs", "tmp"] {
                let path = dir.join(sub);
                std::fs::create_dir_all(&path).map_err(io(format!("create {}", path.display())))?;
            }
        }
        let certs = prefix.join("certs");
        std::fs::create_dir_all(&certs).map_err(io(format!("create {}", certs.display())))?;
        let link = private.join("certs");
        if std::fs::read_link(&link).ok().as_deref() != Some(certs.as_path()) {
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&certs, &link)
                .map_err(io(format!("link {}", link.display())))?;
        }
        Ok(Self {
            binary,
            prefix,
            child: None,
            group: None,
        })
    }

    /// The configuration file nginx runs.
    pub fn config_path(&self) -> PathBuf {
        self.prefix.join("nginx.conf")
    }

    /// The private prefix `nginx -t` runs in: render the candidate for it (see the module
    /// documentation).
    pub fn validation_prefix(&self) -> PathBuf {
        validation_prefix(&self.prefix)
    }

    /// A command of nginx in `prefix`, on `prefix/nginx.conf`, logging errors to stderr (also
    /// those before the configuration's `error_log` applies).
    fn command(&self, prefix: &Path) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .arg("-p")
            .arg(prefix)
            .arg("-c")
            .arg(prefix.join("nginx.conf"))
            .args(["-e", "stderr"])
            .stdin(Stdio::null());
        command
    }

    async fn run(&self, mut command: Command, what: &str) -> Result<(), NginxError> {
        let output = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(io(format!("run {}", self.binary.display())))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(NginxError::Failed {
                what: what.to_owned(),
                output: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            })
        }
    }

    /// Checks `private_text`, a candidate rendered for the [validation
    /// prefix](Nginx::validation_prefix), with `nginx -t` in that prefix.
    ///
    /// # Errors
    ///
    /// [`NginxError::Invalid`] with nginx's message, or [`NginxError::Io`].
    pub async fn validate(&self, private_text: &str) -> Result<(), NginxError> {
        let private = self.validation_prefix();
        let candidate = private.join("nginx.conf");
        tokio::fs::write(&candidate, private_text)
            .await
            .map_err(io(format!("write {}", candidate.display())))?;
        let mut command = self.command(&private);
        command.args(["-t", "-q"]);
        match self.run(command, "nginx -t").await {
            Err(NginxError::Failed { output, .. }) => Err(NginxError::Invalid(output)),
            other => other,
        }
    }

    /// Makes `text` (the validated model, rendered for the real prefix) the running
    /// configuration file: written beside it, then renamed over it.
    ///
    /// # Errors
    ///
    /// [`NginxError::Io`].
    pub async fn install(&self, text: &str) -> Result<(), NginxError> {
        let candidate = self.prefix.join("nginx.conf.candidate");
        tokio::fs::write(&candidate, text)
            .await
            .map_err(io(format!("write {}", candidate.display())))?;
        tokio::fs::rename(&candidate, self.config_path())
            .await
            .map_err(io("install the new nginx.conf"))
    }

    /// Whether the master process is running.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// Starts the master process on the installed configuration and waits until it answers on
    /// its control socket (at most a minute); first stops the nginx a previous controller left
    /// in the prefix, if any (see the module documentation).
    ///
    /// # Errors
    ///
    /// [`NginxError`] if nginx cannot start, exits, or does not answer in time (it is then
    /// killed): [`Nginx::exited`] resolves, and the caller may start it again.
    pub async fn start(&mut self, control_socket: &Path) -> Result<(), NginxError> {
        self.stop_leftover().await;
        let _ = std::fs::remove_file(control_socket);
        let mut command = self.command(&self.prefix);
        let child = command
            // The access log goes to stdout, the error log to stderr: the controller's.
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(io(format!("start {}", self.binary.display())))?;
        self.group = child.id();
        self.child = Some(child);
        let deadline = tokio::time::Instant::now() + START;
        while tokio::time::Instant::now() < deadline {
            if !self.is_running() {
                return Err(NginxError::Failed {
                    what: "nginx start".into(),
                    output: "exited; its messages are on stderr above".into(),
                });
            }
            if answers(control_socket).await {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        // Not serving, perhaps not exiting either: end it, so that the restart on exit retries.
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill().await;
        }
        self.kill_group().await;
        Err(NginxError::Failed {
            what: "nginx start".into(),
            output: format!(
                "nginx did not answer on its control socket within {} s",
                START.as_secs()
            ),
        })
    }

    /// Stops the nginx master a previous controller left running in the prefix, if the pid
    /// file names one (see the module documentation). Should it survive, the start that follows
    /// fails to bind and is retried.
    async fn stop_leftover(&self) {
        let Ok(text) = tokio::fs::read_to_string(pid_file(&self.prefix)).await else {
            return;
        };
        let Ok(pid) = text.trim().parse::<u32>() else {
            return;
        };
        if self.child.as_ref().and_then(Child::id) == Some(pid) {
            return;
        }
        let ours =
            |pid| process(pid).filter(|p| is_master_of(&p.cmdline, &self.binary, &self.prefix));
        let Some(leftover) = ours(pid) else {
            return;
        };
        warn!(
            pid,
            prefix = %self.prefix.display(),
            "an nginx left by a previous controller runs in the prefix; stopping it"
        );
        for (signal, wait) in [("QUIT", LEFTOVER_QUIT), ("TERM", LEFTOVER_TERM)] {
            send(signal, &pid.to_string()).await;
            if exited(|| ours(pid).is_none(), wait).await {
                info!(pid, signal, "the nginx left in the prefix stopped");
                return;
            }
        }
        // Its workers too: they keep the listening sockets when the master alone is killed.
        let target = if leftover.group == pid {
            format!("-{pid}")
        } else {
            pid.to_string()
        };
        send("KILL", &target).await;
        if exited(|| ours(pid).is_none(), LEFTOVER_TERM).await {
            warn!(pid, "the nginx left in the prefix was killed");
        } else {
            error!(pid, "the nginx left in the prefix still runs after SIGKILL");
        }
    }

    /// Asks the master to reload the installed configuration: SIGHUP to the master this
    /// controller started, else through `nginx -s reload`. `-s reload` reads the whole
    /// configuration once more only to find the pid file: with 10,000 servers that is a third
    /// of the time from a change to nginx serving it (BENCHMARKS.md), and the configuration was
    /// validated by `nginx -t` already.
    ///
    /// # Errors
    ///
    /// [`NginxError`] if the signal cannot be sent.
    pub async fn reload(&self) -> Result<(), NginxError> {
        let master = self.child.as_ref().and_then(tokio::process::Child::id);
        if let Some(pid) = master
            && send("HUP", &pid.to_string()).await
        {
            return Ok(());
        }
        let mut command = self.command(&self.prefix);
        command.args(["-s", "reload"]);
        self.run(command, "nginx -s reload").await
    }

    /// Resolves when the master process exits (never when none is running); [`Nginx::reap`]
    /// comes next. Cancel-safe, as `select!` needs: it changes nothing, so a call dropped
    /// before it resolves loses no exit, and the next call sees it.
    pub async fn exited(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self.child.as_mut() {
            Some(child) => child.wait().await,
            None => std::future::pending().await,
        }
    }

    /// Forgets a master that [exited](Nginx::exited) and ends its workers, which keep the
    /// listening sockets.
    pub async fn reap(&mut self) {
        self.child = None;
        self.kill_group().await;
    }

    /// Stops nginx gracefully (`-s quit`), killing it after 10 s.
    pub async fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let mut command = self.command(&self.prefix);
        command.args(["-s", "quit"]);
        let quit = self.run(command, "nginx -s quit").await.is_ok()
            && tokio::time::timeout(Duration::from_secs(10), child.wait())
                .await
                .is_ok();
        if !quit {
            let _ = child.kill().await;
        }
        self.kill_group().await;
    }

    /// Kills what is left of the master's process group.
    async fn kill_group(&mut self) {
        if let Some(group) = self.group.take() {
            send("KILL", &format!("-{group}")).await;
        }
    }
}

/// Sends `signal` to `target` (a pid, or `-GROUP`) with kill(1): no unsafe code here.
/// Whether kill(1) succeeded.
pub(crate) async fn send(signal: &str, target: &str) -> bool {
    Command::new("kill")
        .args(["-s", signal, "--", target])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|status| status.success())
}

/// Whether process `pid` runs (exists and is not a zombie).
pub(crate) fn runs(pid: u32) -> bool {
    process(pid).is_some()
}

/// Whether process `pid` runs and is an nginx (its process title `nginx: ...`).
pub(crate) fn runs_nginx(pid: u32) -> bool {
    process(pid).is_some_and(|p| p.cmdline.starts_with("nginx: "))
}

/// Polls `gone` every 50 ms for `wait`: whether it came true.
async fn exited(gone: impl Fn() -> bool, wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        if gone() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What `/proc` says of a live process (not a zombie).
#[derive(Debug, PartialEq, Eq)]
struct Process {
    /// Its command line, the arguments joined by spaces.
    cmdline: String,
    /// Its process group.
    group: u32,
}

/// Process `pid`, if it runs.
fn process(pid: u32) -> Option<Process> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    parse_process(&stat, &cmdline)
}

/// A process from the texts of `/proc/PID/stat` and `/proc/PID/cmdline`; `None` for a zombie.
fn parse_process(stat: &str, cmdline: &[u8]) -> Option<Process> {
    // `PID (COMM) STATE PPID PGRP …`: COMM may hold spaces and parentheses.
    let mut fields = stat.rsplit_once(')')?.1.split_ascii_whitespace();
    let state = fields.next()?;
    if matches!(state, "Z" | "X" | "x") {
        return None;
    }
    let group = fields.nth(1)?.parse().ok()?;
    let cmdline = String::from_utf8_lossy(cmdline)
        .split('\0')
        .filter(|a| !a.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Some(Process { cmdline, group })
}

/// Whether `cmdline` is that of an nginx master that [`Nginx::command`] started on `prefix`:
/// `BINARY -p PREFIX -c …`, which nginx rewrites as `nginx: master process BINARY -p PREFIX …`.
fn is_master_of(cmdline: &str, binary: &Path, prefix: &Path) -> bool {
    let started = format!("{} ", binary.display());
    let command = cmdline
        .strip_prefix("nginx: master process ")
        .or_else(|| cmdline.starts_with(&started).then_some(cmdline));
    command.is_some_and(|c| c.contains(&format!(" -p {} -c ", prefix.display())))
}

/// `PREFIX/validate`: see [`Nginx::validation_prefix`].
fn validation_prefix(prefix: &Path) -> PathBuf {
    prefix.join("validate")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn master(cmdline: &str) -> bool {
        is_master_of(
            cmdline,
            Path::new("/usr/sbin/nginx"),
            Path::new("/run/ingress"),
        )
    }

    #[test]
    fn only_an_nginx_master_of_this_prefix_is_a_leftover() {
        assert!(master(
            "nginx: master process /usr/sbin/nginx -p /run/ingress -c /run/ingress/nginx.conf \
             -e stderr"
        ));
        // Before nginx sets its process title.
        assert!(master(
            "/usr/sbin/nginx -p /run/ingress -c /run/ingress/nginx.conf -e stderr"
        ));
        for other in [
            "nginx: worker process",
            "nginx: master process /usr/sbin/nginx -p /run/other -c /run/other/nginx.conf",
            "nginx: master process /usr/sbin/nginx -p /run/ingress/validate -c /x -t",
            "nginx: master process /usr/sbin/nginx -c /etc/nginx/nginx.conf",
            "/bin/sleep -p /run/ingress -c x",
            "",
        ] {
            assert!(!master(other), "{other:?}");
        }
    }

    #[test]
    fn proc_texts() {
        let cmdline = b"/usr/sbin/nginx\0-p\0/run/ingress\0-c\0/run/ingress/nginx.conf\0";
        assert_eq!(
            parse_process("42 (nginx) S 1 42 42 0 -1 4194560 100", cmdline),
            Some(Process {
                cmdline: "/usr/sbin/nginx -p /run/ingress -c /run/ingress/nginx.conf".into(),
                group: 42
            })
        );
        assert_eq!(
            parse_process("7 (a) b) (c) R 1 5 5", b"x").map(|p| p.group),
            Some(5)
        );
        assert_eq!(parse_process("42 (nginx) Z 1 42 42", b""), None);
        assert_eq!(parse_process("garbage", b""), None);
    }
}
