//! The command line, as CoreDNS spells it: single-dash long flags (`-conf FILE`,
//! `-dns.port 53`, `-plugins`, `-version`, `-pidfile FILE`) are rewritten to clap's `--`
//! form before parsing, so both spellings work.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

/// The DNS port of the built-in default Corefile when neither a Corefile nor `-dns.port` is
/// given: unprivileged, so the quick start runs without root. (CoreDNS uses 53.)
pub const QUICK_START_PORT: u16 = 1053;

/// The port of zone keys that name none when `-dns.port` is not given (CoreDNS's default).
pub const DEFAULT_DNS_PORT: u16 = 53;

/// Command-line arguments.
#[derive(Clone, Debug, Parser, PartialEq, Eq)]
#[command(
    name = "dns-cache",
    about = "A CoreDNS-compatible caching DNS server",
    disable_version_flag = true
)]
pub struct Cli {
    /// Corefile to load (default: ./Corefile if it exists, else `.:PORT { whoami log }`).
    #[arg(long = "conf", value_name = "FILE")]
    pub conf: Option<PathBuf>,
    /// Default port for zone keys without one (CoreDNS: 53; the built-in default Corefile
    /// uses 1053 when this is not given).
    #[arg(long = "dns.port", value_name = "PORT")]
    pub dns_port: Option<u16>,
    /// List the installed plugins and exit.
    #[arg(long)]
    pub plugins: bool,
    /// Show the version and exit.
    #[arg(long)]
    pub version: bool,
    /// Write the process ID to FILE (removed at exit).
    #[arg(long, value_name = "FILE")]
    pub pidfile: Option<PathBuf>,
    /// The `kubernetes` plugin reads its objects from the manifests under DIR (watched)
    /// instead of an API server: for local runs and tests.
    #[arg(long, value_name = "DIR")]
    pub manifests: Option<PathBuf>,
}

/// The long flags CoreDNS writes with one dash (and `-manifests`, written as the others).
const LONG_FLAGS: [&str; 6] = [
    "conf",
    "dns.port",
    "plugins",
    "version",
    "pidfile",
    "manifests",
];

impl Cli {
    /// Parses `args` (program name first), accepting CoreDNS's single-dash flags.
    pub fn parse_coredns<I, T>(args: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Self::try_parse_coredns(args).unwrap_or_else(|e| e.exit())
    }

    /// As [`Cli::parse_coredns`], but returns clap's error instead of exiting.
    ///
    /// # Errors
    ///
    /// An unknown flag or a bad value, as clap reports it.
    pub fn try_parse_coredns<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Self::try_parse_from(rewrite_long_flags(
            args.into_iter().map(Into::into),
            &LONG_FLAGS,
        ))
    }
}

/// Which program the command line asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// CoreDNS's command line.
    CoreDns,
    /// node-cache's (`node-local` mode), its arguments starting at this index (the program
    /// or subcommand name, which the parser skips).
    NodeCache(usize),
}

/// Chooses between CoreDNS's command line and node-cache's, so that the argument lists of
/// both programs' manifests work as they are: node-cache's when the program is invoked as
/// `node-cache` (as upstream's `nodelocaldns.yaml` runs `/node-cache -localip ...`), when the
/// first argument is `node-local`, or when it is a flag only node-cache has (`-localip`,
/// `-upstreamsvc`, ...; `-conf` and `-dns.port` belong to both and mean CoreDNS).
pub fn mode(args: &[OsString]) -> Mode {
    let program = args
        .first()
        .and_then(|p| std::path::Path::new(p).file_name())
        .and_then(|p| p.to_str());
    if program == Some("node-cache") {
        return Mode::NodeCache(0);
    }
    let Some(first) = args.get(1).and_then(|a| a.to_str()) else {
        return Mode::CoreDns;
    };
    if first == "node-local" {
        return Mode::NodeCache(1);
    }
    let name = first.trim_start_matches('-');
    let name = name.split_once('=').map_or(name, |(name, _)| name);
    let node_cache_only = first.starts_with('-')
        && crate::nodelocal::args::LONG_FLAGS.contains(&name)
        && !LONG_FLAGS.contains(&name);
    if node_cache_only {
        Mode::NodeCache(0)
    } else {
        Mode::CoreDns
    }
}

/// Rewrites `-conf`, `-conf=FILE` and the other flags of `long_flags` to their `--` forms,
/// as Go's flag package lets them be written.
pub fn rewrite_long_flags(
    args: impl Iterator<Item = OsString>,
    long_flags: &[&str],
) -> Vec<OsString> {
    args.map(|arg| {
        let Some(text) = arg.to_str() else {
            return arg;
        };
        let Some(flag) = text.strip_prefix('-').filter(|f| !f.starts_with('-')) else {
            return arg;
        };
        let name = flag.split_once('=').map_or(flag, |(name, _)| name);
        if long_flags.contains(&name) {
            OsString::from(format!("-{text}"))
        } else {
            arg
        }
    })
    .collect()
}

/// What `-version` prints: `dns-cache-VERSION` and the platform.
pub fn version_text() -> String {
    format!(
        "dns-cache-{}\n{}/{}\n",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(args: &[&str]) -> Mode {
        mode(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn node_cache_by_name_subcommand_or_first_flag() {
        // Upstream nodelocaldns.yaml: `/node-cache -localip ... -conf /etc/Corefile ...`.
        let upstream = [
            "-localip",
            "169.254.20.10,10.96.0.10",
            "-conf",
            "/etc/Corefile",
        ];
        let as_node_cache: Vec<&str> = std::iter::once("/node-cache").chain(upstream).collect();
        assert_eq!(of(&as_node_cache), Mode::NodeCache(0));
        let flags_first: Vec<&str> = std::iter::once("/usr/bin/dns-cache")
            .chain(upstream)
            .collect();
        assert_eq!(of(&flags_first), Mode::NodeCache(0));
        assert_eq!(
            of(&["dns-cache", "node-local", "-localip", "x"]),
            Mode::NodeCache(1)
        );
        assert_eq!(
            of(&["dns-cache", "--upstreamsvc=kube-dns-upstream"]),
            Mode::NodeCache(0)
        );
        // CoreDNS's flags, and flags both have, mean CoreDNS.
        assert_eq!(
            of(&["coredns", "-conf", "/etc/coredns/Corefile"]),
            Mode::CoreDns
        );
        assert_eq!(of(&["dns-cache", "-dns.port", "53"]), Mode::CoreDns);
        assert_eq!(of(&["dns-cache"]), Mode::CoreDns);
        assert_eq!(of(&["dns-cache", "localip"]), Mode::CoreDns);
    }

    #[test]
    fn single_dash_long_flags_are_accepted() {
        let cli = Cli::parse_coredns([
            "dns-cache",
            "-conf",
            "/etc/Corefile",
            "-dns.port=5353",
            "-pidfile",
            "/run/x.pid",
        ]);
        assert_eq!(cli.conf, Some(PathBuf::from("/etc/Corefile")));
        assert_eq!(cli.dns_port, Some(5353));
        assert_eq!(cli.pidfile, Some(PathBuf::from("/run/x.pid")));
        assert!(!cli.plugins && !cli.version);
        let cli = Cli::parse_coredns(["dns-cache", "--conf", "C", "-version", "-plugins"]);
        assert_eq!(cli.conf, Some(PathBuf::from("C")));
        assert!(cli.plugins && cli.version);
        let cli = Cli::parse_coredns(["dns-cache", "-manifests", "/m", "-conf=C"]);
        assert_eq!(cli.manifests, Some(PathBuf::from("/m")));
    }

    #[test]
    fn other_arguments_are_left_alone() {
        let args = ["x", "-c", "--conf", "-confx"].map(OsString::from);
        assert_eq!(
            rewrite_long_flags(args.clone().into_iter(), &LONG_FLAGS),
            args.to_vec()
        );
    }
}
