//! The `kubernetes` directive's settings, read with the argument rules and error texts of
//! CoreDNS v1.14.7's `plugin/kubernetes/setup.go` (`ParseStanza`): every option of its
//! README, `zonal` included, is parsed; anything else is refused as CoreDNS refuses it.

use corefile::dispenser::{Dispenser, ERR_ONCE, PluginError};
use corefile::go::Duration;
use corefile::plugins::PluginConfig;
use corefile::syntax::Line;

use cluster_state::LabelSelector;

/// What `pods` asks for `a-b-c-d.NAMESPACE.pod.ZONE` names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PodMode {
    /// No pod names (the default): NXDOMAIN.
    #[default]
    Disabled,
    /// The address in the name, without looking at the cluster.
    Insecure,
    /// Only the address of a pod of that namespace.
    Verified,
}

/// The settings of one `kubernetes` directive.
#[derive(Clone, Debug, Default)]
pub struct KubernetesConfig {
    /// The zones given as arguments (empty: the block's zones).
    pub zones: Vec<String>,
    /// `endpoint URL...` (only the first is used, as CoreDNS).
    pub endpoint: Option<String>,
    /// `tls CERT KEY CACERT`.
    pub tls: Option<[String; 3]>,
    /// `kubeconfig FILE [CONTEXT]`.
    pub kubeconfig: Option<(String, Option<String>)>,
    /// `namespaces NS...`: only these are served (empty: every namespace).
    pub namespaces: Vec<String>,
    /// `labels EXPRESSION`: only Services and EndpointSlices it selects.
    pub labels: Option<LabelSelector>,
    /// `namespace_labels EXPRESSION`: only the namespaces it selects.
    pub namespace_labels: Option<LabelSelector>,
    /// `pods MODE`.
    pub pods: PodMode,
    /// `endpoint_pod_names`.
    pub endpoint_pod_names: bool,
    /// `ttl SECONDS` (0..=3600; default 5).
    pub ttl: Option<u32>,
    /// `noendpoints`: EndpointSlices are not read.
    pub noendpoints: bool,
    /// `fallthrough [ZONES...]`.
    pub fallthrough: Option<Vec<String>>,
    /// `ignore empty_service`.
    pub ignore_empty_service: bool,
    /// `startup_timeout DURATION` (default 5 s).
    pub startup_timeout: Option<Duration>,
    /// Options parsed but not served by dns-cache (`multicluster`, `zonal`,
    /// `apiserver_*`), named at start-up.
    pub not_implemented: Vec<&'static str>,
}

impl KubernetesConfig {
    fn option(&mut self, d: &mut Dispenser<'_>) -> Result<(), PluginError> {
        let name = d.val();
        let args = d.remaining_args();
        let at_least_one = |d: &Dispenser<'_>| {
            if args.is_empty() {
                Err(d.arg_err())
            } else {
                Ok(())
            }
        };
        match name {
            "endpoint_pod_names" => {
                if !args.is_empty() {
                    return Err(d.arg_err());
                }
                self.endpoint_pod_names = true;
            }
            "pods" => {
                let [mode] = args.as_slice() else {
                    return Err(d.arg_err());
                };
                self.pods = match *mode {
                    "disabled" => PodMode::Disabled,
                    "insecure" => PodMode::Insecure,
                    "verified" => PodMode::Verified,
                    other => {
                        return Err(d.plain(format!(
                            "wrong value for pods: {other},  must be one of: disabled, verified, insecure"
                        )));
                    }
                };
            }
            "namespaces" => {
                at_least_one(d)?;
                self.namespaces.extend(args.iter().map(|a| (*a).to_owned()));
            }
            "endpoint" => {
                at_least_one(d)?;
                if args.len() > 1 {
                    tracing::warn!(
                        plugin = "kubernetes",
                        "Multiple endpoints have been deprecated, only the first specified endpoint '{}' is used",
                        args.first().copied().unwrap_or_default()
                    );
                }
                self.endpoint = args.first().map(|a| (*a).to_owned());
            }
            "tls" => {
                let [cert, key, ca] = args.as_slice() else {
                    return Err(d.arg_err());
                };
                self.tls = Some([(*cert).to_owned(), (*key).to_owned(), (*ca).to_owned()]);
            }
            "labels" | "namespace_labels" => {
                at_least_one(d)?;
                let text = args.join(" ");
                let selector = LabelSelector::parse(&text).map_err(|e| {
                    let what = if name == "labels" {
                        "label"
                    } else {
                        "namespace_label"
                    };
                    d.plain(format!(
                        "unable to parse {what} selector value: '{text}': {e}"
                    ))
                })?;
                if name == "labels" {
                    self.labels = Some(selector);
                } else {
                    self.namespace_labels = Some(selector);
                }
            }
            "fallthrough" => {
                self.fallthrough = Some(args.iter().map(|a| (*a).to_owned()).collect());
            }
            "ttl" => {
                let Some(value) = args.first() else {
                    return Err(d.arg_err());
                };
                // Go's strconv.Atoi error text.
                let ttl: i64 = value.parse().map_err(|_| {
                    d.plain(format!("strconv.Atoi: parsing {value:?}: invalid syntax"))
                })?;
                if !(0..=3600).contains(&ttl) {
                    return Err(d.err(format!("ttl must be in range [0, 3600]: {ttl}")));
                }
                self.ttl = u32::try_from(ttl).ok();
            }
            "noendpoints" => {
                if !args.is_empty() {
                    return Err(d.arg_err());
                }
                self.noendpoints = true;
            }
            "zonal" => {
                if !args.is_empty() {
                    return Err(d.arg_err());
                }
                self.not_implemented.push("zonal");
            }
            "ignore" => match args.first() {
                Some(&"empty_service") => self.ignore_empty_service = true,
                Some(other) => {
                    return Err(d.plain(format!("unable to parse ignore value: '{other}'")));
                }
                // CoreDNS's switch falls out of an argument-less `ignore` silently.
                None => {}
            },
            "kubeconfig" => {
                let (file, context) = match args.as_slice() {
                    [file] => (file, None),
                    [file, context] => (file, Some((*context).to_owned())),
                    _ => return Err(d.arg_err()),
                };
                self.kubeconfig = Some(((*file).to_owned(), context));
            }
            "multicluster" => self.not_implemented.push("multicluster"),
            "startup_timeout" => {
                let Some(value) = args.first() else {
                    return Err(d.arg_err());
                };
                let timeout = Duration::parse(value).map_err(|e| {
                    d.plain(format!("failed to parse startup_timeout: {value}, {e}"))
                })?;
                self.startup_timeout = Some(timeout);
            }
            "apiserver_qps" => {
                let [value] = args.as_slice() else {
                    return Err(d.arg_err());
                };
                let qps: f32 = value.parse().map_err(|_| {
                    d.err(format!(
                        "invalid apiserver_qps {value:?}: strconv.ParseFloat: parsing {value:?}: invalid syntax"
                    ))
                })?;
                if qps < 0.0 {
                    return Err(d.err("apiserver_qps must be >= 0"));
                }
                self.not_implemented.push("apiserver_qps");
            }
            "apiserver_burst" | "apiserver_max_inflight" => {
                let [value] = args.as_slice() else {
                    return Err(d.arg_err());
                };
                let number: i64 = value.parse().map_err(|_| {
                    d.err(format!(
                        "invalid {name} {value:?}: strconv.Atoi: parsing {value:?}: invalid syntax"
                    ))
                })?;
                if number < 0 {
                    return Err(d.err(format!("{name} must be >= 0")));
                }
                self.not_implemented.push(if name == "apiserver_burst" {
                    "apiserver_burst"
                } else {
                    "apiserver_max_inflight"
                });
            }
            other => return Err(d.err(format!("unknown property '{other}'"))),
        }
        Ok(())
    }
}

impl PluginConfig for KubernetesConfig {
    const NAME: &'static str = "kubernetes";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut config = KubernetesConfig::default();
        let mut seen = false;
        while d.next_token() {
            if std::mem::replace(&mut seen, true) {
                return Err(d.plain(ERR_ONCE));
            }
            config.zones = d.remaining_args().iter().map(|z| (*z).to_owned()).collect();
            while d.next_block() {
                config.option(d)?;
            }
        }
        if !config.namespaces.is_empty() && config.namespace_labels.is_some() {
            return Err(d.err("namespaces and namespace_labels cannot both be set"));
        }
        Ok(config)
    }

    /// Written back as the directive alone: nothing prints a `kubernetes` configuration.
    fn to_lines(&self) -> Vec<Line> {
        let mut head = vec!["kubernetes".to_owned()];
        head.extend(self.zones.iter().cloned());
        vec![Line::words(head)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corefile::view::load;

    fn parsed(text: &str) -> Result<KubernetesConfig, String> {
        let view = load(text.as_bytes()).map_err(|e| e.to_string())?;
        let block = view.blocks.first().ok_or("no block")?;
        corefile::plugins::config::<KubernetesConfig>(block, "Corefile")
            .ok_or("no kubernetes")?
            .map_err(|e| e.to_string())
    }

    #[test]
    fn kubeadm_stanza_and_every_option() {
        let c = parsed(
            "cluster.local:53 {\n kubernetes cluster.local in-addr.arpa ip6.arpa {\n  pods insecure\n  fallthrough in-addr.arpa ip6.arpa\n  ttl 30\n }\n}\n",
        )
        .unwrap();
        assert_eq!(c.zones, ["cluster.local", "in-addr.arpa", "ip6.arpa"]);
        assert_eq!(c.pods, PodMode::Insecure);
        assert_eq!(c.fallthrough.unwrap(), ["in-addr.arpa", "ip6.arpa"]);
        assert_eq!(c.ttl, Some(30));
        let c = parsed(
            ". {\n kubernetes {\n  endpoint https://a:6443 https://b:6443\n  tls c k ca\n  kubeconfig /k ctx\n  namespaces a b\n  labels environment in (staging, qa),application=nginx\n  endpoint_pod_names\n  noendpoints\n  ignore empty_service\n  startup_timeout 7s\n  multicluster clusterset.local\n  apiserver_qps 5\n  apiserver_burst 10\n  apiserver_max_inflight 2\n  pods verified\n }\n}\n",
        )
        .unwrap();
        assert_eq!(c.endpoint.as_deref(), Some("https://a:6443"));
        assert_eq!(c.tls.unwrap()[2], "ca");
        assert_eq!(c.kubeconfig.unwrap().1.as_deref(), Some("ctx"));
        assert_eq!(c.namespaces, ["a", "b"]);
        assert!(c.labels.is_some() && c.endpoint_pod_names && c.noendpoints);
        assert!(c.ignore_empty_service);
        assert_eq!(c.startup_timeout, Some(Duration(7_000_000_000)));
        assert_eq!(
            c.not_implemented,
            [
                "multicluster",
                "apiserver_qps",
                "apiserver_burst",
                "apiserver_max_inflight"
            ]
        );
    }

    /// The texts of CoreDNS's `setup.go` for each refused input.
    #[test]
    fn refusals_read_as_coredns() {
        let cases = [
            (
                ". {\n kubernetes {\n  bogus\n }\n}\n",
                "plugin/kubernetes: Corefile:3 - Error during parsing: unknown property 'bogus'",
            ),
            (
                ". {\n kubernetes {\n  pods fast\n }\n}\n",
                "plugin/kubernetes: wrong value for pods: fast,  must be one of: disabled, verified, insecure",
            ),
            (
                ". {\n kubernetes {\n  ttl 3601\n }\n}\n",
                "plugin/kubernetes: Corefile:3 - Error during parsing: ttl must be in range [0, 3600]: 3601",
            ),
            (
                ". {\n kubernetes {\n  ttl x\n }\n}\n",
                "plugin/kubernetes: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                ". {\n kubernetes {\n  ignore everything\n }\n}\n",
                "plugin/kubernetes: unable to parse ignore value: 'everything'",
            ),
            (
                ". {\n kubernetes {\n  namespaces\n }\n}\n",
                "plugin/kubernetes: Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'namespaces'",
            ),
            (
                ". {\n kubernetes {\n  tls a b\n }\n}\n",
                "plugin/kubernetes: Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'b'",
            ),
            (
                ". {\n kubernetes {\n  namespaces a\n  namespace_labels x=y\n }\n}\n",
                "plugin/kubernetes: Corefile:5 - Error during parsing: namespaces and namespace_labels cannot both be set",
            ),
            (
                ". {\n kubernetes\n kubernetes\n}\n",
                "plugin/kubernetes: this plugin can only be used once per Server Block",
            ),
            (
                ". {\n kubernetes {\n  apiserver_burst -1\n }\n}\n",
                "plugin/kubernetes: Corefile:3 - Error during parsing: apiserver_burst must be >= 0",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parsed(text).unwrap_err(), want, "{text}");
        }
        assert!(
            parsed(". {\n kubernetes {\n  labels a in (\n }\n}\n")
                .unwrap_err()
                .starts_with("plugin/kubernetes: unable to parse label selector value: 'a in (': ")
        );
    }
}
