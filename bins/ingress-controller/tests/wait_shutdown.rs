//! `/wait-shutdown`, ingress-nginx's preStop hook: the controller binary invoked under that
//! name (a symbolic link, as in the image) stops the controller with SIGTERM and returns only
//! once it, and then the nginx of the prefix's pid file, are gone. Dummy processes stand in
//! for both; the controller's own stop is covered by the end-to-end tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// A link named `wait-shutdown` to the controller binary, in `dir`.
fn link(dir: &Path) -> PathBuf {
    let link = dir.join("wait-shutdown");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ingress-controller"), &link).unwrap();
    link
}

/// `sleep SECONDS` under the program name `name`.
fn dummy(name: &str, seconds: &str) -> Child {
    Command::new("sleep")
        .arg0(name)
        .arg(seconds)
        .spawn()
        .unwrap()
}

fn wait_shutdown(link: &Path, prefix: &Path, pid: Option<u32>) -> Output {
    let mut command = Command::new(link);
    command.arg("--prefix").arg(prefix);
    if let Some(pid) = pid {
        command.arg(pid.to_string());
    }
    command.output().unwrap()
}

#[test]
fn invoked_as_wait_shutdown_it_stops_the_controller_and_waits_for_nginx() {
    let dir = tempfile::tempdir().unwrap();
    let link = link(dir.path());
    let prefix = dir.path().join("prefix");
    std::fs::create_dir(&prefix).unwrap();

    // The controller: ends on SIGTERM (sleep's default action).
    let mut controller = dummy("/nginx-ingress-controller", "60");
    // Its nginx, which outlives it by about a second, as one finishing its requests.
    let mut nginx = dummy("nginx: master process /usr/sbin/nginx", "1");
    std::fs::write(prefix.join("nginx.pid"), format!("{}\n", nginx.id())).unwrap();
    // Reap both as they end, as their parent would (a zombie counts as gone anyway).
    let started = Instant::now();
    let out = wait_shutdown(&link, &prefix, Some(controller.id()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let status = controller.wait().unwrap();
    assert_eq!(status.signal(), Some(15), "{status:?}");
    // It returned after nginx had exited, not before.
    assert!(
        nginx.try_wait().unwrap().is_some() || started.elapsed() >= Duration::from_millis(900),
        "returned while nginx still ran"
    );
    let _ = nginx.wait();
}

#[test]
fn a_pid_file_naming_another_program_is_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let link = link(dir.path());
    let mut controller = dummy("/nginx-ingress-controller", "60");
    let mut other = dummy("sleep", "60");
    std::fs::write(dir.path().join("nginx.pid"), other.id().to_string()).unwrap();
    let started = Instant::now();
    let out = wait_shutdown(&link, dir.path(), Some(controller.id()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(controller.wait().unwrap().signal(), Some(15));
    other.kill().unwrap();
    other.wait().unwrap();
}

#[test]
fn no_controller_to_stop_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let link = link(dir.path());
    let mut gone = dummy("gone", "0");
    let pid = gone.id();
    gone.wait().unwrap();
    let out = wait_shutdown(&link, dir.path(), Some(pid));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("no process {pid} to stop")),
        "{stderr}"
    );
}
