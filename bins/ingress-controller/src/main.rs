//! `ingress-controller`: Ingress objects to a real nginx.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser as _;
use cluster_state::SourceArgs;
use ingress_controller::cli::{Cli, Command, DbgWhat, RenderArgs, RunArgs};
use ingress_controller::objects::Objects;
use ingress_controller::status::Publish;
use ingress_controller::{control, controller, model, render, wait_shutdown};

fn main() -> ExitCode {
    // Invoked as `/wait-shutdown` (ingress-nginx's preStop hook, a link to this binary).
    if std::env::args_os()
        .next()
        .is_some_and(|argv0| wait_shutdown::invoked_as(&argv0))
    {
        return wait_shutdown(std::env::args_os());
    }
    let cli = Cli::parse_from(ingress_controller::cli::without_program_name(
        std::env::args_os(),
    ));
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `wait-shutdown`: see [`wait_shutdown`].
fn wait_shutdown(args: std::env::ArgsOs) -> ExitCode {
    let result = runtime()
        .map_err(|e| format!("{e:#}"))
        .and_then(|runtime| runtime.block_on(wait_shutdown::main(args)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("wait-shutdown: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command() {
        Command::Render(args) => {
            let RenderArgs {
                source,
                selection,
                nginx,
                configmap,
                backends,
            } = *args;
            let mut selection = selection.selection();
            selection.gateway.address_pool = nginx.gateway_addresses.is_some();
            let extra = ingress_controller::objects::Extra::of(configmap);
            let objects = runtime()?.block_on(snapshot(&source, &extra))?;
            let model = model::build(&objects, &selection);
            for problem in &model.problems {
                eprintln!("warning: {problem}");
            }
            for line in model.global_notes.lines() {
                eprintln!("warning: {line}");
            }
            if backends {
                print!("{}", ingress_controller::backends::table(&model));
            } else {
                let text =
                    render::render(&model, &nginx.options()).context("cannot render nginx.conf")?;
                print!("{text}");
            }
            Ok(())
        }
        Command::Run(args) => {
            let settings = settings(*args)?;
            runtime()?.block_on(controller::run(settings, shutdown()))?;
            Ok(())
        }
        Command::Dbg { prefix, what } => runtime()?.block_on(dbg(&prefix, what)),
    }
}

/// The controller's settings from its flags; what is accepted but not implemented is named.
fn settings(args: RunArgs) -> anyhow::Result<controller::Settings> {
    for warning in args.unimplemented.warnings() {
        tracing::warn!("{warning}");
    }
    let healthz_addresses = args.healthz_addresses();
    let RunArgs {
        source,
        selection,
        nginx,
        nginx_binary,
        configmap,
        poll_ms,
        debounce_ms,
        status,
        webhook,
        metrics,
        ..
    } = args;
    let api = source.manifests.is_none();
    let status = status
        .settings(source.kubeconfig.as_deref(), api)
        .map_err(anyhow::Error::msg)?;
    if let Some(status) = &status
        && status.publish == Publish::Nothing
    {
        tracing::warn!(
            "no status address: set --publish-service or --publish-status-address (publishing \
             the addresses of the nodes the controller runs on is not implemented)"
        );
    }
    let mut selection = selection.selection();
    selection.gateway.address_pool = nginx.gateway_addresses.is_some();
    let extra = ingress_controller::objects::Extra::of(configmap);
    Ok(controller::Settings {
        status,
        instance: ingress_controller::cli::status::identity(),
        nginx: nginx_binary,
        options: nginx.options(),
        selection,
        source,
        poll: Duration::from_millis(poll_ms.max(10)),
        debounce: Duration::from_millis(debounce_ms),
        healthz_addresses,
        extra,
        webhook: webhook.config(),
        metrics,
    })
}

/// The objects once the source has read everything (the first complete snapshot).
async fn snapshot(
    source: &SourceArgs,
    extra: &ingress_controller::objects::Extra,
) -> anyhow::Result<Objects> {
    let source = ingress_controller::objects::start(source, extra, None).await?;
    let mut snapshots = source.snapshots();
    let snapshot = snapshots
        .wait_for(|s| s.revision > 0)
        .await
        .context("the object source stopped before reading everything")?;
    Ok(Objects::from_snapshot(&snapshot))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

async fn dbg(prefix: &std::path::Path, what: DbgWhat) -> anyhow::Result<()> {
    let all = what == DbgWhat::All;
    if all || what == DbgWhat::Conf {
        let path = prefix.join("nginx.conf");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        println!("# {}", path.display());
        print!("{text}");
    }
    if all || what == DbgWhat::Backends {
        let socket = prefix.join("control.sock");
        let table = control::backends(&socket).await?;
        println!("# backends (from {})", socket.display());
        print!("{table}");
    }
    if all || what == DbgWhat::Certs {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = prefix.join("certs");
        println!("# certificates (in {})", dir.display());
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let meta = entry.metadata()?;
            println!(
                "{} {:o} {} bytes",
                entry.file_name().to_string_lossy(),
                meta.permissions().mode() & 0o777,
                meta.len()
            );
        }
    }
    Ok(())
}
