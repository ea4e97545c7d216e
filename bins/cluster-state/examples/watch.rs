//! Prints what a binary would see: one line per snapshot, then one per changed object.
//!
//! ```text
//! cargo run -p cluster-state --example watch -- --manifests examples/cluster
//! cargo run -p cluster-state --example watch -- --kubeconfig ~/.kube/config
//! ```

use std::process::ExitCode;

use clap::Parser;
use cluster_state::{Kind, SourceArgs};

/// Watches the objects the binaries use and prints every change.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    source: SourceArgs,
}

#[tokio::main]
async fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let source = match args.source.start(Kind::ALL).await {
        Ok(source) => source,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut snapshots = source.snapshots();
    loop {
        let snapshot = snapshots.borrow_and_update().clone();
        if snapshot.revision > 0 {
            println!("revision {}: {} objects", snapshot.revision, snapshot.len());
            for (kind, key) in snapshot.changes.iter() {
                let state = if snapshot.get(kind, key).is_some() {
                    "present"
                } else {
                    "gone"
                };
                println!("  {kind} {key} ({state})");
            }
        }
        if snapshots.changed().await.is_err() {
            return ExitCode::SUCCESS;
        }
    }
}
