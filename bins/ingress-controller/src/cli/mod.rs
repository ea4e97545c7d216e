//! The command line. Running is the default, with ingress-nginx's flags, so that the args of
//! ingress-nginx's own manifests work as they are (`/nginx-ingress-controller
//! --publish-service=... --election-id=...`); `render` and `dbg` are subcommands, and `run`
//! is kept as an explicit name for the default.
//!
//! - [`run`]: the flags of a running controller;
//! - [`status`]: status publication and leader election;
//! - [`unimplemented`](mod@unimplemented): ingress-nginx's flags that are accepted and named at start-up.

pub mod run;
pub mod status;
pub mod unimplemented;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use cluster_state::SourceArgs;

pub use run::{NginxArgs, RunArgs, SelectionArgs};
pub use status::StatusArgs;

/// Ingress objects to a real nginx, rendered through nginx-conf's builder. Without a
/// subcommand it runs, as ingress-nginx's `/nginx-ingress-controller`.
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do (default: run).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The flags of the default action, running.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Cli {
    /// The command to carry out: the subcommand, or running with the top-level flags.
    pub fn command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Run(Box::new(self.run)))
    }
}

/// ingress-nginx's program name, which its manifests put first in the container's `args`.
pub const INGRESS_NGINX_PROGRAM: &str = "nginx-ingress-controller";

/// `args` (the process's, program name first) without a first argument naming
/// ingress-nginx's program (`/nginx-ingress-controller`): ingress-nginx's image runs `args`
/// through its entrypoint (dumb-init), which executes that program; where this binary is the
/// image's entrypoint, it receives the name as its first argument, and the rest are the flags.
pub fn without_program_name<I>(args: I) -> Vec<std::ffi::OsString>
where
    I: IntoIterator<Item = std::ffi::OsString>,
{
    let mut args: Vec<_> = args.into_iter().collect();
    let names_program = args.get(1).is_some_and(|first| {
        std::path::Path::new(first)
            .file_name()
            .is_some_and(|name| name == INGRESS_NGINX_PROGRAM)
    });
    if names_program {
        args.remove(1);
    }
    args
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the nginx.conf that would be written for the objects, and the problems found;
    /// runs nothing.
    Render(Box<RenderArgs>),
    /// Run nginx and keep it configured from the objects (the default).
    Run(Box<RunArgs>),
    /// Print what a running controller's nginx runs: its configuration, the balancer's
    /// backends, and the certificate files (never their content).
    Dbg {
        /// nginx's prefix directory.
        #[arg(long, default_value = "/var/lib/ingress-controller")]
        prefix: PathBuf,
        /// What to print.
        #[arg(value_enum, default_value = "all")]
        what: DbgWhat,
    },
}

/// `render`'s options.
#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// Where the objects come from.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Which Ingresses are ours.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Where and how nginx runs.
    #[command(flatten)]
    pub nginx: NginxArgs,
    /// The ConfigMap (`NAMESPACE/NAME`) of global settings.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub configmap: Option<NamespacedName>,
    /// Print the backend table the balancer would receive instead of nginx.conf.
    #[arg(long)]
    pub backends: bool,
}

/// Parts of `dbg`'s report.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbgWhat {
    /// Everything.
    All,
    /// The running nginx.conf.
    Conf,
    /// The balancer's backend table.
    Backends,
    /// The certificate files.
    Certs,
}

/// A `NAMESPACE/NAME` flag value (`--publish-service`, `--configmap`,
/// `--default-ssl-certificate`), as ingress-nginx's `ParseNameNS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespacedName {
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl std::str::FromStr for NamespacedName {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once('/') {
            Some((namespace, name))
                if !namespace.is_empty() && !name.is_empty() && !name.contains('/') =>
            {
                Ok(Self {
                    namespace: namespace.to_owned(),
                    name: name.to_owned(),
                })
            }
            _ => Err(format!("invalid format (namespace/name) found in {text:?}")),
        }
    }
}

impl std::fmt::Display for NamespacedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A Go duration flag value (`30s`, `1m30s`), as pflag's `Duration`.
///
/// # Errors
///
/// Go's message for text that is not a duration, or that the duration is negative.
pub fn go_duration(text: &str) -> Result<std::time::Duration, String> {
    corefile::go::Duration::parse(text)?
        .to_std()
        .ok_or_else(|| format!("{text:?}: a duration here must not be negative"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_names() {
        let parsed: NamespacedName = "ingress-nginx/ingress-nginx-controller".parse().unwrap();
        assert_eq!(parsed.namespace, "ingress-nginx");
        assert_eq!(parsed.name, "ingress-nginx-controller");
        assert_eq!(parsed.to_string(), "ingress-nginx/ingress-nginx-controller");
        for bad in ["", "name", "/name", "ns/", "a/b/c"] {
            assert!(bad.parse::<NamespacedName>().is_err(), "{bad}");
        }
    }

    #[test]
    fn running_is_the_default() {
        let cli = Cli::try_parse_from(["ingress-controller", "--http-port=8080"]).unwrap();
        match cli.command() {
            Command::Run(args) => assert_eq!(args.nginx.http_port, 8080),
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["ingress-controller", "run", "--http-port=81"]).unwrap();
        assert!(matches!(cli.command(), Command::Run(args) if args.nginx.http_port == 81));
        let cli = Cli::try_parse_from(["ingress-controller", "dbg", "conf"]).unwrap();
        assert!(matches!(
            cli.command(),
            Command::Dbg {
                what: DbgWhat::Conf,
                ..
            }
        ));
    }

    #[test]
    fn ingress_nginx_program_name_first_is_skipped() {
        let line = |args: &[&str]| -> Vec<std::ffi::OsString> {
            without_program_name(args.iter().map(std::ffi::OsString::from))
        };
        let theirs = line(&[
            "/usr/local/bin/ingress-controller",
            "/nginx-ingress-controller",
            "--http-port=81",
        ]);
        assert_eq!(
            theirs,
            line(&["/usr/local/bin/ingress-controller", "--http-port=81"])
        );
        let cli = Cli::try_parse_from(theirs).unwrap();
        assert!(matches!(cli.command(), Command::Run(args) if args.nginx.http_port == 81));
        // Only first, and only that name.
        for kept in [
            &["ingress-controller", "--http-port=81"][..],
            &["ingress-controller", "run", "/nginx-ingress-controller"],
            &["ingress-controller", "/usr/bin/other"],
            &["ingress-controller"],
        ] {
            assert_eq!(line(kept).len(), kept.len(), "{kept:?}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(go_duration("30s"), Ok(std::time::Duration::from_secs(30)));
        assert!(go_duration("-1s").is_err());
        assert!(go_duration("30").is_err());
    }
}
