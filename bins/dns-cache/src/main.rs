//! `dns-cache`: a CoreDNS-compatible caching DNS server.

use std::process::ExitCode;

use dns_cache::cli::{Cli, plugins_text, version_text};

fn main() -> ExitCode {
    let cli = Cli::parse_coredns(std::env::args_os());
    if cli.plugins {
        print!("{}", plugins_text());
        return ExitCode::SUCCESS;
    }
    if cli.version {
        print!("{}", version_text());
        return ExitCode::SUCCESS;
    }
    dns_cache::logging::init();
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
    match runtime.block_on(dns_cache::run::run(cli, workers)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("[FATAL] {e:#}");
            ExitCode::FAILURE
        }
    }
}
