//! Campaigns for a lease on a file or an etcd key and prints what happens, one line per notice:
//!
//! ```text
//! lease-demo --id NAME (--file PATH | --etcd ENDPOINT --key KEY)
//!            [--lease-secs 15] [--renew-ms 10000] [--retry-ms 2000]
//! ```
//!
//! Lines: `leader NAME` (or `leader -`), `started token=V at_ms=T valid_until_ms=U`,
//! `stopped reason=R at_ms=T valid_until_ms=U`, `failed request=R error=E`, and `released` on
//! exit; times are milliseconds on this process's monotonic clock since it started. SIGINT or
//! SIGTERM releases the lease and exits; SIGKILL is a crash. The integration tests run three
//! of these against one file, and against a real etcd.

use std::process::ExitCode;

use leader_lease::{Config, Event};
use lease_driver::{Driver, FileStore, Notice, Store, Term};
use tokio::time::Instant;

const USAGE: &str = "usage: lease-demo --id NAME (--file PATH | --etcd ENDPOINT --key KEY) \
                     [--lease-secs N] [--renew-ms N] [--retry-ms N]";

/// Where the lease lives.
enum Backend {
    File(String),
    Etcd { endpoint: String, key: String },
}

struct Options {
    backend: Backend,
    config: Config,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let (mut id, mut file, mut etcd, mut key) = (None, None, None, None);
    let (mut lease, mut renew, mut retry) = (15_u64, 10_000_u64, 2_000_u64);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--id" => id = Some(value),
            "--file" => file = Some(value),
            "--etcd" => etcd = Some(value),
            "--key" => key = Some(value),
            "--lease-secs" => lease = number()?,
            "--renew-ms" => renew = number()?,
            "--retry-ms" => retry = number()?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    let id = id.ok_or("--id is required")?;
    let backend = match (file, etcd, key) {
        (Some(path), None, None) => Backend::File(path),
        (None, Some(endpoint), Some(key)) => Backend::Etcd { endpoint, key },
        _ => return Err("give either --file, or --etcd with --key".into()),
    };
    let config = Config::new(
        id.as_str(),
        leader_lease::Duration::from_secs(lease),
        leader_lease::Duration::from_millis(renew),
        leader_lease::Duration::from_millis(retry),
    )
    .map_err(|e| e.to_string())?;
    Ok(Options { backend, config })
}

/// Runs until SIGINT or SIGTERM, then releases.
async fn campaign(config: Config, store: impl Store) -> Result<(), String> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot watch SIGTERM: {e}"))?;
    let shutdown = async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    };
    let origin = Instant::now();
    let ms = move |at: Instant| at.saturating_duration_since(origin).as_millis();
    let term_line = move |term: Option<Term>| {
        term.map_or_else(String::new, |t| {
            format!(" valid_until_ms={}", ms(t.valid_until))
        })
    };
    Driver::new(config, store)
        .run(shutdown, |notice| match notice {
            Notice::Event { event, at, term } => match event {
                Event::NewLeader(who) => println!("leader {}", who.as_deref().unwrap_or("-")),
                Event::StartedLeading { token } => println!(
                    "started token={} at_ms={}{}",
                    token.version,
                    ms(at),
                    term_line(term)
                ),
                Event::StoppedLeading { reason } => {
                    println!(
                        "stopped reason={reason:?} at_ms={}{}",
                        ms(at),
                        term_line(term)
                    );
                }
            },
            Notice::RequestFailed { request, error, .. } => {
                println!("failed request={request} error={error}");
            }
            other => println!("{other:?}"),
        })
        .await;
    println!("released");
    Ok(())
}

#[cfg(feature = "etcd")]
async fn etcd_store(endpoint: &str, key: String) -> Result<lease_driver::EtcdStore, String> {
    let options = etcd_client::ConnectOptions::new()
        .with_connect_timeout(std::time::Duration::from_secs(1))
        .with_timeout(std::time::Duration::from_secs(1));
    let client = etcd_client::Client::connect([endpoint], Some(options))
        .await
        .map_err(|e| format!("cannot connect to etcd at {endpoint}: {e}"))?;
    Ok(lease_driver::EtcdStore::new(&client, key))
}

#[cfg(not(feature = "etcd"))]
async fn etcd_store(_: &str, _: String) -> Result<FileStore, String> {
    Err("this build has no etcd support (cargo feature `etcd`)".into())
}

async fn main_result() -> Result<(), String> {
    let options = parse(std::env::args().skip(1)).map_err(|e| format!("{e}\n{USAGE}"))?;
    match options.backend {
        Backend::File(path) => campaign(options.config, FileStore::new(path)).await,
        Backend::Etcd { endpoint, key } => {
            campaign(options.config, etcd_store(&endpoint, key).await?).await
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match main_result().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("lease-demo: {message}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> impl Iterator<Item = String> {
        line.split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn options_choose_the_store_and_timings() {
        let options = parse(args(
            "--id a --file /tmp/l --lease-secs 3 --renew-ms 1500 --retry-ms 500",
        ))
        .unwrap();
        assert!(matches!(options.backend, Backend::File(ref p) if p == "/tmp/l"));
        assert_eq!(options.config.identity(), "a");
        assert_eq!(
            options.config.renew_deadline(),
            leader_lease::Duration::from_millis(1500)
        );
        let options = parse(args("--id b --etcd http://127.0.0.1:2379 --key /k")).unwrap();
        assert!(matches!(options.backend, Backend::Etcd { ref key, .. } if key == "/k"));
        assert_eq!(
            options.config.lease_duration(),
            leader_lease::Duration::from_secs(15)
        );
    }

    #[test]
    fn bad_options_say_what_is_wrong() {
        let error = |line| parse(args(line)).err().unwrap();
        assert_eq!(error("--file /tmp/l"), "--id is required");
        assert_eq!(error("--id a"), "give either --file, or --etcd with --key");
        assert_eq!(
            error("--id a --file x --etcd y --key z"),
            "give either --file, or --etcd with --key"
        );
        assert_eq!(
            error("--id a --file x --lease-secs"),
            "--lease-secs needs a value"
        );
        assert_eq!(error("--id a --file x --port 1"), "unknown option --port");
        assert!(
            error("--id a --file x --renew-ms soon").starts_with("--renew-ms soon: invalid digit")
        );
        assert!(
            error("--id a --file x --lease-secs 2 --renew-ms 2000")
                .contains("must be greater than renew deadline")
        );
    }
}
