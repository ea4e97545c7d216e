//! Running one program with an optional standard input and a time limit, and turning what
//! happened into its output or an [`ExecError`].

use core::time::Duration;
use std::process::Stdio;

use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

use crate::error::ExecError;

/// Runs `program` with `args`, writing `input` to its stdin (else stdin is empty), and
/// returns its stdout (decoded lossily). The program is killed when `timeout` passes first.
///
/// The input is written while the output is read, so neither side can block the other on a
/// full pipe. A program that fails is reported by its exit status and stderr even when the
/// input could not be written whole (it usually stopped reading because it failed).
pub(crate) async fn run(
    program: &str,
    args: &[&str],
    input: Option<&str>,
    timeout: Duration,
) -> Result<String, ExecError> {
    let command = command_line(program, args);
    let mut child = Command::new(program)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| ExecError::Spawn {
            command: command.clone(),
            source,
        })?;
    let stdin = child.stdin.take();
    let feed = async move {
        match (input, stdin) {
            // The pipe is dropped (closed) when this block ends: end of input.
            (Some(text), Some(mut pipe)) => pipe.write_all(text.as_bytes()).await,
            _ => Ok(()),
        }
    };
    // On timeout the child's future is dropped, and `kill_on_drop` kills it.
    let Ok((fed, output)) = tokio::time::timeout(timeout, async {
        tokio::join!(feed, child.wait_with_output())
    })
    .await
    else {
        return Err(ExecError::Timeout { command, timeout });
    };
    let output = output.map_err(|source| ExecError::Io {
        command: command.clone(),
        source,
    })?;
    if !output.status.success() {
        return Err(ExecError::Failed {
            command,
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    fed.map_err(|source| ExecError::Io { command, source })?;
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `program arg1 arg2 …`, for messages.
fn command_line(program: &str, args: &[&str]) -> String {
    let mut line = program.to_owned();
    for arg in args {
        line.push(' ');
        line.push_str(arg);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATIENT: Duration = Duration::from_secs(30);

    #[tokio::test]
    async fn the_input_goes_in_and_the_output_comes_back() {
        let text = "*filter\n-A INPUT -j ACCEPT\nCOMMIT\n".repeat(20_000);
        let out = run("cat", &[], Some(&text), PATIENT).await.unwrap();
        assert_eq!(out, text);
        let out = run("sh", &["-c", "echo saved"], None, PATIENT)
            .await
            .unwrap();
        assert_eq!(out, "saved\n");
    }

    #[tokio::test]
    async fn a_failure_carries_the_command_and_its_stderr() {
        let error = run("sh", &["-c", "echo ' nope ' >&2; exit 3"], None, PATIENT)
            .await
            .unwrap_err();
        let ExecError::Failed {
            command,
            status,
            stderr,
        } = &error
        else {
            panic!("{error:?}");
        };
        assert_eq!(command, "sh -c echo ' nope ' >&2; exit 3");
        assert_eq!(status.code(), Some(3));
        assert_eq!(stderr, "nope");
        assert!(!error.is_lock());
        assert!(error.to_string().starts_with("sh -c echo"), "{error}");
    }

    #[tokio::test]
    async fn a_failure_that_stopped_reading_is_reported_as_the_failure() {
        let text = "x".repeat(1 << 20);
        let error = run("sh", &["-c", "echo bad >&2; exit 1"], Some(&text), PATIENT)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ExecError::Failed { stderr, .. } if stderr == "bad"),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn input_left_unread_by_a_successful_program_is_an_error() {
        let text = "x".repeat(1 << 20);
        let error = run("true", &[], Some(&text), PATIENT).await.unwrap_err();
        assert!(matches!(error, ExecError::Io { .. }), "{error:?}");
    }

    #[tokio::test]
    async fn a_hung_program_is_killed_at_the_timeout() {
        let limit = Duration::from_millis(200);
        let started = std::time::Instant::now();
        let error = run("sleep", &["30"], None, limit).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            matches!(&error, ExecError::Timeout { command, timeout } if command == "sleep 30" && *timeout == limit),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error() {
        let error = run(
            "iptables-exec-no-such-program",
            &["-t", "nat"],
            None,
            PATIENT,
        )
        .await
        .unwrap_err();
        assert!(matches!(error, ExecError::Spawn { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("cannot run iptables-exec-no-such-program -t nat: ")
        );
    }

    #[test]
    fn a_held_lock_is_recognised() {
        let error = ExecError::Failed {
            command: "iptables-restore -w 5".into(),
            status: std::os::unix::process::ExitStatusExt::from_raw(4 << 8),
            stderr: "Another app is currently holding the xtables lock. Stopped waiting after 5s."
                .into(),
        };
        assert!(error.is_lock());
    }
}
