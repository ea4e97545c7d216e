//! The node-local Corefile: node-cache's `__PILLAR__` placeholders filled through the
//! corefile crate's templates, and the result checked as CoreDNS would parse it before it is
//! written.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// What the placeholders are filled with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Values {
    /// `-localip`: the first fills `__PILLAR__LOCAL__DNS__`, the others
    /// `__PILLAR__DNS__SERVER__` (so `bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__`
    /// binds them all and `health __PILLAR__LOCAL__DNS__:8080` names one).
    pub local_ips: Vec<IpAddr>,
    /// The upstream Service's ClusterIP (`__PILLAR__CLUSTER__DNS__`), when known.
    pub cluster_dns: Option<IpAddr>,
    /// `__PILLAR__UPSTREAM__SERVERS__`: what `forward .` sends other names to.
    pub upstream_servers: String,
}

/// Why the base Corefile could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A placeholder had no value (the upstream Service has no ClusterIP yet, for example).
    #[error("{0}")]
    Unfilled(#[from] corefile::template::TemplateError),
    /// The filled Corefile does not parse.
    #[error("the rendered Corefile is invalid: {0}")]
    Invalid(String),
}

/// Fills `base` with `values` and checks that the result parses.
pub fn render(base: &str, values: &Values) -> Result<String, RenderError> {
    let mut ips = values.local_ips.iter().map(ToString::to_string);
    let mut map = BTreeMap::new();
    map.insert("LOCAL__DNS".to_owned(), ips.next().unwrap_or_default());
    map.insert("DNS__SERVER".to_owned(), ips.collect::<Vec<_>>().join(" "));
    map.insert(
        "UPSTREAM__SERVERS".to_owned(),
        values.upstream_servers.clone(),
    );
    if let Some(ip) = values.cluster_dns {
        map.insert("CLUSTER__DNS".to_owned(), ip.to_string());
    }
    let text = corefile::template::fill(base, &map)?;
    corefile::load(text.as_bytes()).map_err(|e| RenderError::Invalid(e.to_string()))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kubernetes' `cluster/addons/dns/nodelocaldns/nodelocaldns.yaml`, its Corefile, with
    /// the cluster domain put in as the deployment instructions do.
    fn reference() -> String {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/corefile/k8s-kubernetes-cluster-addons-dns-nodelocaldns-nodelocaldns-yaml-L55.Corefile"
        ))
            .replace("__PILLAR__DNS__DOMAIN__", "cluster.local")
    }

    fn values(cluster_dns: Option<&str>) -> Values {
        Values {
            local_ips: vec![
                "169.254.20.10".parse().unwrap(),
                "10.96.0.10".parse().unwrap(),
            ],
            cluster_dns: cluster_dns.map(|ip| ip.parse().unwrap()),
            upstream_servers: "/etc/resolv.conf".to_owned(),
        }
    }

    #[test]
    fn reference_corefile_renders_as_the_corpus_rendering() {
        let text = render(&reference(), &values(Some("10.96.0.11"))).unwrap();
        let expected = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/corefile/k8s-kubernetes-cluster-addons-dns-nodelocaldns-nodelocaldns-yaml-L55-rendered.Corefile"
        ));
        assert_eq!(text, expected);
        assert!(text.contains("bind 169.254.20.10 10.96.0.10\n"), "{text}");
        assert!(text.contains("forward . 10.96.0.11 {\n"), "{text}");
        assert!(text.contains("forward . /etc/resolv.conf\n"), "{text}");
        assert!(text.contains("health 169.254.20.10:8080\n"), "{text}");
        assert!(!text.contains("__PILLAR__"));
        let view = corefile::load(text.as_bytes()).unwrap();
        assert_eq!(view.blocks.len(), 4);
    }

    #[test]
    fn a_missing_cluster_ip_is_reported() {
        let err = render(&reference(), &values(None)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no value for template placeholder(s): __PILLAR__CLUSTER__DNS__, __PILLAR__CLUSTER__DNS__, __PILLAR__CLUSTER__DNS__"
        );
    }

    #[test]
    fn an_unparsable_result_is_refused() {
        let err = render(".:53 {\n  bind __PILLAR__LOCAL__DNS__\n", &values(None)).unwrap_err();
        assert!(matches!(err, RenderError::Invalid(_)), "{err}");
    }
}
