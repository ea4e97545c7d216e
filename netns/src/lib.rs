//! Throwaway network namespaces for the workspace's tests and benchmarks that apply rules to
//! a real kernel (`iptables-restore`, `nft`): a [`Namespace`] is added with `ip netns add`,
//! runs programs through `ip netns exec`, and is deleted when dropped, whatever happens in
//! the test. Needs root and `ip` (Debian package `iproute2`); [`available`] tells a test
//! whether a program it needs is installed, so that it can say why it skips.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // test support uses std

use std::io::Write as _;
use std::process::{Command, Stdio};

/// A network namespace, added on creation and deleted on drop.
#[derive(Debug)]
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// Adds the namespace `name` (`ip netns add`).
    ///
    /// # Errors
    ///
    /// `ip` could not run or refused (not root, or the name is taken), with its message.
    pub fn add(name: impl Into<String>) -> Result<Self, String> {
        let name = name.into();
        let out = Command::new("ip")
            .args(["netns", "add", &name])
            .output()
            .map_err(|e| format!("ip netns add {name}: {e}"))?;
        if out.status.success() {
            Ok(Self { name })
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `program`, to be run inside the namespace (`ip netns exec NAME program`); arguments,
    /// input and output are the caller's to set.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name, program]);
        command
    }

    /// Runs `program args` inside the namespace with `input` on its standard input.
    ///
    /// # Errors
    ///
    /// The program could not start or failed: its standard error.
    pub fn run(&self, program: &str, args: &[&str], input: &str) -> Result<String, String> {
        let mut child = self
            .command(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{program}: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(input.as_bytes())
                .map_err(|e| format!("writing to {program}: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Whether `program --version` runs here.
pub fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
