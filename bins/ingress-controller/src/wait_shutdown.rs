//! `/wait-shutdown`: the preStop hook of ingress-nginx's manifests (`lifecycle.preStop.exec`),
//! which is this binary invoked under that name (a link in the image).
//!
//! As ingress-nginx's `cmd/waitshutdown`: it asks the controller to stop (SIGTERM), then
//! returns only once the controller and its nginx are gone, so that the kubelet sends its own
//! SIGTERM after the requests in flight have finished. The controller is the container's
//! pid 1 (the image's entrypoint execs it), or the pid given; nginx is the process of the pid
//! file in `--prefix`, when that process is an nginx master.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;

use crate::nginx;

/// The name this binary answers to as the preStop hook.
pub const NAME: &str = "wait-shutdown";

/// How often the processes are looked at while waiting.
const POLL: Duration = Duration::from_millis(100);

/// `wait-shutdown [--prefix DIR] [PID]`.
#[derive(Parser, Debug)]
#[command(
    name = NAME,
    about = "Stop the ingress controller (SIGTERM) and wait until it and its nginx are gone."
)]
pub struct Args {
    /// nginx's prefix directory, whose pid file names the nginx to wait for.
    #[arg(long, default_value = "/var/lib/ingress-controller")]
    pub prefix: PathBuf,
    /// The controller's process id (pid 1: the container's main process).
    #[arg(default_value_t = 1)]
    pub pid: u32,
}

/// Whether `argv0` (the program name the binary was started under) asks for this command:
/// its file name is [`NAME`].
pub fn invoked_as(argv0: &std::ffi::OsStr) -> bool {
    Path::new(argv0)
        .file_name()
        .is_some_and(|name| name == NAME)
}

/// Parses `args` (the program name first; `--help` and usage errors end the process, as
/// clap does) and runs the command.
///
/// # Errors
///
/// That the controller could not be signalled.
pub async fn main(args: impl IntoIterator<Item = OsString>) -> Result<(), String> {
    run(&Args::parse_from(args)).await
}

/// Sends SIGTERM to the controller and waits until it has exited, then until the nginx of
/// the prefix's pid file has (the controller stops it on its way out).
///
/// # Errors
///
/// When the controller does not run or cannot be signalled.
pub async fn run(args: &Args) -> Result<(), String> {
    if !nginx::runs(args.pid) {
        return Err(format!("no process {} to stop", args.pid));
    }
    if !nginx::send("TERM", &args.pid.to_string()).await {
        return Err(format!("cannot send SIGTERM to process {}", args.pid));
    }
    while nginx::runs(args.pid) {
        tokio::time::sleep(POLL).await;
    }
    let running_nginx = std::fs::read_to_string(nginx::pid_file(&args.prefix))
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok());
    if let Some(pid) = running_nginx {
        while nginx::runs_nginx(pid) {
            tokio::time::sleep(POLL).await;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_it_is_invoked_under() {
        for yes in [
            "wait-shutdown",
            "/wait-shutdown",
            "/usr/local/bin/wait-shutdown",
        ] {
            assert!(invoked_as(yes.as_ref()), "{yes}");
        }
        for no in [
            "/nginx-ingress-controller",
            "ingress-controller",
            "/wait-shutdown/x",
            "wait-shutdown.sh",
        ] {
            assert!(!invoked_as(no.as_ref()), "{no}");
        }
    }

    #[test]
    fn arguments() {
        let args = Args::try_parse_from(["wait-shutdown"]).unwrap();
        assert_eq!(args.pid, 1);
        assert_eq!(args.prefix, Path::new("/var/lib/ingress-controller"));
        let args = Args::try_parse_from(["wait-shutdown", "--prefix=/p", "42"]).unwrap();
        assert_eq!((args.pid, args.prefix.as_path()), (42, Path::new("/p")));
        assert!(Args::try_parse_from(["wait-shutdown", "x"]).is_err());
    }
}
