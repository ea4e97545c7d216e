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

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

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

    /// Starts the master process on the installed configuration and waits until its control
    /// socket answers (at most 60 s: a configuration of thousands of servers takes seconds).
    ///
    /// # Errors
    ///
    /// [`NginxError`] if it cannot start or exits at once.
    pub async fn start(&mut self, control_socket: &Path) -> Result<(), NginxError> {
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
        for _ in 0..2400 {
            if !self.is_running() {
                return Err(NginxError::Failed {
                    what: "nginx start".into(),
                    output: "exited; its messages are on stderr above".into(),
                });
            }
            if tokio::net::UnixStream::connect(control_socket)
                .await
                .is_ok()
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        Err(NginxError::Failed {
            what: "nginx start".into(),
            output: "the control socket did not answer within 60 s".into(),
        })
    }

    /// Asks the master to reload the installed configuration (SIGHUP through `-s reload`).
    ///
    /// # Errors
    ///
    /// [`NginxError`] if the signal cannot be sent.
    pub async fn reload(&self) -> Result<(), NginxError> {
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

    /// Kills what is left of the master's process group (with kill(1): no unsafe code here).
    async fn kill_group(&mut self) {
        if let Some(group) = self.group.take() {
            let _ = Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{group}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .await;
        }
    }
}

/// `PREFIX/validate`: see [`Nginx::validation_prefix`].
fn validation_prefix(prefix: &Path) -> PathBuf {
    prefix.join("validate")
}
