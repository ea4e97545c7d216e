//! `dns-cache`: a CoreDNS-compatible caching DNS server.

use std::ffi::OsString;
use std::process::ExitCode;

use dns_cache::cli::{Cli, Mode, version_text};
use dns_cache::config::plugins_text;
use dns_cache::nodelocal::args::NodeLocalArgs;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Mode::NodeCache(skip) = dns_cache::cli::mode(&args) {
        let args = NodeLocalArgs::try_parse_node_cache(args.iter().skip(skip))
            .unwrap_or_else(|e| e.exit());
        dns_cache::logging::init();
        raise_nofile_limit();
        return block_on(|workers| dns_cache::nodelocal::run(args, workers));
    }
    let cli = Cli::parse_coredns(args);
    if cli.plugins {
        print!("{}", plugins_text());
        return ExitCode::SUCCESS;
    }
    if cli.version {
        print!("{}", version_text());
        return ExitCode::SUCCESS;
    }
    dns_cache::logging::init();
    raise_nofile_limit();
    block_on(|workers| dns_cache::run::run(cli, workers))
}

/// Raises the soft limit on open files to the hard limit, as Go programs such as CoreDNS
/// do at start (the Go runtime does it since Go 1.19): every TCP connection and upstream
/// socket is a descriptor, and the usual soft limit of 1024 is lower than one listener's
/// connection slots plus the upstream pool.
fn raise_nofile_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return;
    };
    if soft >= hard {
        return;
    }
    match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
        Ok(()) => {
            tracing::info!("raised the open-file limit (RLIMIT_NOFILE) from {soft} to {hard}")
        }
        Err(e) => tracing::warn!("raising the open-file limit from {soft} to {hard}: {e}"),
    }
}

/// Runs `main` (given the worker count) on a runtime sized to the machine.
fn block_on<F>(main: impl FnOnce(usize) -> F) -> ExitCode
where
    F: Future<Output = anyhow::Result<()>>,
{
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    // On one core a single-threaded scheduler has no cross-thread bookkeeping.
    let mut builder = if workers == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(workers);
        builder
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            println!("[FATAL] starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(main(workers)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("[FATAL] {e:#}");
            ExitCode::FAILURE
        }
    }
}
