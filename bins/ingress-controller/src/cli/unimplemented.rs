//! ingress-nginx's flags (`pkg/flags/flags.go` of controller v1.15) that this controller
//! accepts but does not implement: a manifest that passes them still starts, and each one
//! given is named at start-up with what happens instead, never silently accepted.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

/// How a flag takes its value: pflag's booleans take `--flag` or `--flag=VALUE`, the others
/// `--flag VALUE` or `--flag=VALUE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Bool,
    Text,
}

/// Each flag, how it takes a value, and what this controller does instead.
const FLAGS: &[(&str, Value, &str)] = &[
    (
        "apiserver-host",
        Value::Text,
        "the API server is the kubeconfig's or the pod's (in-cluster)",
    ),
    (
        "certificate-authority",
        Value::Text,
        "the API server's CA is the kubeconfig's or the pod's",
    ),
    (
        "default-backend-service",
        Value::Text,
        "unmatched requests are answered 404 by nginx",
    ),
    (
        "tcp-services-configmap",
        Value::Text,
        "TCP services are not proxied",
    ),
    (
        "udp-services-configmap",
        Value::Text,
        "UDP services are not proxied",
    ),
    (
        "sync-period",
        Value::Text,
        "objects are watched; there is no forced resync",
    ),
    ("profiling", Value::Bool, "there is no profiler"),
    (
        "health-check-path",
        Value::Text,
        "the health check is /healthz",
    ),
    (
        "health-check-timeout",
        Value::Text,
        "the health check has no timeout setting",
    ),
    (
        "report-node-internal-ip-address",
        Value::Bool,
        "status comes from --publish-service or --publish-status-address only",
    ),
    (
        "enable-ssl-passthrough",
        Value::Bool,
        "TLS is terminated by nginx; no passthrough",
    ),
    (
        "disable-svc-external-name",
        Value::Bool,
        "ExternalName Services are not backends here",
    ),
    (
        "annotations-prefix",
        Value::Text,
        "annotations use the prefix nginx.ingress.kubernetes.io",
    ),
    (
        "enable-annotation-validation",
        Value::Bool,
        "annotations are always validated",
    ),
    (
        "enable-ssl-chain-completion",
        Value::Bool,
        "certificate chains are served as the Secret holds them",
    ),
    (
        "sync-rate-limit",
        Value::Text,
        "changes are debounced (--debounce-ms)",
    ),
    (
        "metrics-per-undefined-host",
        Value::Bool,
        "hosts not in the configuration are not labelled",
    ),
    (
        "report-status-classes",
        Value::Bool,
        "metrics carry status codes",
    ),
    (
        "time-buckets",
        Value::Text,
        "histograms use ingress-nginx's default buckets",
    ),
    (
        "length-buckets",
        Value::Text,
        "histograms use ingress-nginx's default buckets",
    ),
    (
        "size-buckets",
        Value::Text,
        "histograms use ingress-nginx's default buckets",
    ),
    (
        "bucket-factor",
        Value::Text,
        "there are no native histograms",
    ),
    ("max-buckets", Value::Text, "there are no native histograms"),
    (
        "exclude-socket-metrics",
        Value::Text,
        "every request metric is exported",
    ),
    (
        "monitor-max-batch-size",
        Value::Text,
        "request metrics are read at scrape time",
    ),
    (
        "ssl-passthrough-proxy-port",
        Value::Text,
        "there is no TLS passthrough",
    ),
    (
        "default-server-port",
        Value::Text,
        "there is no separate default-server port",
    ),
    (
        "disable-catch-all",
        Value::Bool,
        "catch-all Ingresses are served",
    ),
    (
        "disable-full-test",
        Value::Bool,
        "the webhook always tests the whole configuration",
    ),
    (
        "status-port",
        Value::Text,
        "nginx is configured over a unix socket",
    ),
    (
        "stream-port",
        Value::Text,
        "nginx is configured over a unix socket",
    ),
    (
        "internal-logger-address",
        Value::Text,
        "nginx logs to stdout and stderr",
    ),
    ("profiler-port", Value::Text, "there is no profiler"),
    ("profiler-address", Value::Text, "there is no profiler"),
    (
        "shutdown-grace-period",
        Value::Text,
        "nginx stops gracefully at once on SIGTERM",
    ),
    (
        "post-shutdown-grace-period",
        Value::Text,
        "the controller exits once nginx has stopped",
    ),
    (
        "deep-inspect",
        Value::Bool,
        "objects are validated by type; no value can become configuration",
    ),
    (
        "dynamic-configuration-retries",
        Value::Text,
        "the backend table is resent until nginx takes it",
    ),
    (
        "disable-sync-events",
        Value::Bool,
        "events are recorded for problems only",
    ),
    (
        "enable-topology-aware-routing",
        Value::Bool,
        "every ready endpoint is a peer",
    ),
    ("maxmind-mirror", Value::Text, "there is no GeoIP support"),
    (
        "maxmind-license-key",
        Value::Text,
        "there is no GeoIP support",
    ),
    (
        "maxmind-edition-ids",
        Value::Text,
        "there is no GeoIP support",
    ),
    (
        "maxmind-retries-count",
        Value::Text,
        "there is no GeoIP support",
    ),
    (
        "maxmind-retries-timeout",
        Value::Text,
        "there is no GeoIP support",
    ),
    // klog's flags, added to ingress-nginx's command line by `flags.AddGoFlagSet`.
    ("v", Value::Text, "log verbosity is RUST_LOG's"),
    ("logtostderr", Value::Bool, "logs go to stderr"),
    ("alsologtostderr", Value::Bool, "logs go to stderr"),
    ("stderrthreshold", Value::Text, "logs go to stderr"),
    ("log_dir", Value::Text, "logs go to stderr"),
    ("log_file", Value::Text, "logs go to stderr"),
    ("vmodule", Value::Text, "log verbosity is RUST_LOG's"),
];

/// The unimplemented flags given, `(name, value)`, in command-line order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unimplemented(pub Vec<(&'static str, String)>);

impl Unimplemented {
    /// One warning line per flag given: its value and what happens instead.
    pub fn warnings(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(name, value)| {
                let instead = FLAGS
                    .iter()
                    .find(|(n, _, _)| n == name)
                    .map_or("", |(_, _, instead)| instead);
                format!("--{name}={value} is not implemented and has no effect: {instead}")
            })
            .collect()
    }
}

impl FromArgMatches for Unimplemented {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given: Vec<(usize, &'static str, String)> = Vec::new();
        for (name, _, _) in FLAGS {
            let (Ok(Some(values)), Some(indices)) =
                (matches.try_get_raw(name), matches.indices_of(name))
            else {
                continue;
            };
            for (value, index) in values.zip(indices) {
                given.push((index, name, value.to_string_lossy().into_owned()));
            }
        }
        given.sort_by_key(|(index, _, _)| *index);
        Ok(Self(
            given
                .into_iter()
                .map(|(_, name, value)| (name, value))
                .collect(),
        ))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for Unimplemented {
    fn augment_args(command: Command) -> Command {
        command.args(FLAGS.iter().map(|(name, value, _)| {
            let arg = Arg::new(*name)
                .long(*name)
                .hide(true)
                .action(ArgAction::Append);
            match value {
                Value::Bool => arg
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("true"),
                Value::Text => arg.num_args(1),
            }
        }))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::cli::Cli;

    #[test]
    fn given_flags_are_named_in_order() {
        let cli = Cli::try_parse_from([
            "ingress-controller",
            "--enable-ssl-passthrough",
            "--v=2",
            "--tcp-services-configmap",
            "ns/tcp",
            "--profiling=false",
        ])
        .unwrap();
        let warnings = cli.run.unimplemented.warnings();
        assert_eq!(warnings.len(), 4, "{warnings:#?}");
        assert!(warnings[0].starts_with("--enable-ssl-passthrough=true is not implemented"));
        assert!(warnings[1].starts_with("--v=2 "));
        assert!(warnings[2].starts_with("--tcp-services-configmap=ns/tcp "));
        assert!(warnings[3].starts_with("--profiling=false "));
    }

    #[test]
    fn unknown_flags_are_still_refused() {
        assert!(Cli::try_parse_from(["ingress-controller", "--no-such-flag"]).is_err());
    }
}
