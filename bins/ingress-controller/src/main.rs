//! `ingress-controller`: Ingress objects to a real nginx.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use ingress_controller::class::Selection;
use ingress_controller::{manifests, model, render};

/// Ingress objects to a real nginx, rendered through nginx-conf's builder.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the nginx.conf that would be written for the objects, and the problems found;
    /// runs nothing.
    Render {
        /// Directory of YAML manifests (IngressClass, Ingress, Service, EndpointSlice, Secret).
        #[arg(long)]
        manifests: PathBuf,
        #[command(flatten)]
        selection: SelectionArgs,
        #[command(flatten)]
        nginx: NginxArgs,
        /// Print the backend table the balancer would receive instead of nginx.conf.
        #[arg(long)]
        backends: bool,
    },
}

/// Which Ingresses are ours.
#[derive(Args, Debug)]
struct SelectionArgs {
    /// The `spec.controller` of the IngressClasses this controller serves.
    #[arg(long, default_value = "k8s.io/ingress-nginx")]
    controller_class: String,
    /// Serve only Ingresses of this namespace.
    #[arg(long)]
    watch_namespace: Option<String>,
}

impl SelectionArgs {
    fn selection(&self) -> Selection {
        Selection {
            controller: self.controller_class.clone(),
            namespace: self.watch_namespace.clone(),
        }
    }
}

/// Where and how nginx runs.
#[derive(Args, Debug)]
struct NginxArgs {
    /// nginx's prefix directory (config, pid, logs, certificates, control socket).
    #[arg(long, default_value = "/var/lib/ingress-controller")]
    prefix: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    listen_address: String,
    /// HTTP port.
    #[arg(long, default_value_t = 80)]
    http_port: u16,
    /// HTTPS port.
    #[arg(long, default_value_t = 443)]
    https_port: u16,
    /// nginx `worker_processes`.
    #[arg(long, default_value = "auto")]
    workers: String,
    /// Directory holding ndk_http_module.so and ngx_http_lua_module.so (Debian's default).
    #[arg(long, default_value = "/usr/lib/nginx/modules")]
    modules_dir: PathBuf,
}

impl NginxArgs {
    fn options(&self) -> render::Options {
        render::Options {
            prefix: self.prefix.clone(),
            listen_address: self.listen_address.clone(),
            http_port: self.http_port,
            https_port: self.https_port,
            workers: self.workers.clone(),
            modules_dir: Some(self.modules_dir.clone()),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Render {
            manifests,
            selection,
            nginx,
            backends,
        } => {
            let objects = manifests::load_dir(&manifests)?;
            let model = model::build(&objects, &selection.selection());
            for problem in &model.problems {
                eprintln!("warning: {problem}");
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
    }
}
