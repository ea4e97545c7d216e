//! What a name below the zone asks for, read as CoreDNS v1.14.7's `parseRequest`
//! (`plugin/kubernetes/parse.go`) reads it, from the right:
//! `[_port._proto. | endpoint.]service.namespace.(svc|pod)`. Labels are compared lower-case.

/// `svc`: the Service subtree.
pub(super) const SVC: &str = "svc";
/// `pod`: the pod subtree.
pub(super) const POD: &str = "pod";

/// Which subtree a name is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Subtree {
    /// `…svc.ZONE`.
    Service,
    /// `…pod.ZONE`.
    Pod,
}

/// The parts of a name below the zone (every part lower-case; empty when absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Parsed {
    /// `svc` or `pod`; `None` for the apex, `svc.ZONE` and `pod.ZONE` (NODATA).
    pub subtree: Option<Subtree>,
    /// The namespace label.
    pub namespace: String,
    /// The Service label (the dashed address for pods).
    pub service: String,
    /// The endpoint label of `endpoint.service.namespace.svc`.
    pub endpoint: String,
    /// The port name of an SRV name, without its underscore.
    pub port: String,
    /// The protocol of an SRV name, without its underscore.
    pub protocol: String,
}

/// A name CoreDNS calls an invalid request: neither `svc` nor `pod` below the zone, or
/// more labels than any record has. It is a name error (NXDOMAIN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Invalid;

/// Parses the labels below the zone, leftmost first (`base` of `_http._tcp.web.shop.svc`
/// is `["_http", "_tcp", "web", "shop", "svc"]`).
pub(super) fn parse(base: &[String]) -> Result<Parsed, Invalid> {
    let mut parsed = Parsed::default();
    let mut rest = base.iter().rev();
    let Some(subtree) = rest.next() else {
        return Ok(parsed);
    };
    // `svc.ZONE` and `pod.ZONE` alone are NODATA, as the apex.
    if base.len() == 1 && (subtree == SVC || subtree == POD) {
        return Ok(parsed);
    }
    parsed.subtree = Some(match subtree.as_str() {
        SVC => Subtree::Service,
        POD => Subtree::Pod,
        _ => return Err(Invalid),
    });
    let Some(namespace) = rest.next() else {
        return Ok(parsed);
    };
    namespace.clone_into(&mut parsed.namespace);
    let Some(service) = rest.next() else {
        return Ok(parsed);
    };
    service.clone_into(&mut parsed.service);
    let left: Vec<&String> = rest.collect();
    match left.as_slice() {
        [] => {}
        [endpoint] => endpoint.as_str().clone_into(&mut parsed.endpoint),
        // Right to left: the protocol, then the port.
        [protocol, port] => {
            strip_underscore(port).clone_into(&mut parsed.port);
            strip_underscore(protocol).clone_into(&mut parsed.protocol);
        }
        // Too long for any record (and not a `zonal` name, which is not served).
        _ => return Err(Invalid),
    }
    Ok(parsed)
}

/// Whether a zone (its labels, any case) is a reverse zone: under `in-addr.arpa` or
/// `ip6.arpa` (CoreDNS's `dnsutil.IsReverse`).
pub(super) fn is_reverse(zone: &[Vec<u8>]) -> bool {
    match zone {
        [.., kind, arpa] => {
            arpa.eq_ignore_ascii_case(b"arpa")
                && (kind.eq_ignore_ascii_case(b"in-addr") || kind.eq_ignore_ascii_case(b"ip6"))
        }
        _ => false,
    }
}

fn strip_underscore(label: &str) -> &str {
    label.strip_prefix('_').unwrap_or(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<String> {
        text.split('.')
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The vectors of CoreDNS v1.14.7's `parse_test.go` (`TestParseRequest`,
    /// `TestParseInvalidRequest`) without `multicluster` and `zonal` (not served here), with
    /// the zone `inter.webs.tests.` removed; the expectation is its `String()` layout,
    /// `port.protocol.endpoint.cluster.service.namespace.subtree`.
    #[test]
    fn coredns_parse_vectors() {
        let ok = [
            (
                "_http._tcp.webs.mynamespace.svc",
                "http.tcp...webs.mynamespace.svc",
            ),
            (
                "1-2-3-4.webs.mynamespace.svc",
                "..1-2-3-4..webs.mynamespace.svc",
            ),
            ("", "......"),
            ("svc", "......"),
            ("pod", "......"),
        ];
        for (name, want) in ok {
            let p = parse(&labels(name)).unwrap();
            let subtree = match p.subtree {
                Some(Subtree::Service) => SVC,
                Some(Subtree::Pod) => POD,
                None => "",
            };
            let got = format!(
                "{}.{}.{}..{}.{}.{}",
                p.port, p.protocol, p.endpoint, p.service, p.namespace, subtree
            );
            assert_eq!(got, want, "{name}");
        }
        for name in [
            "webs.mynamespace.pood",
            "too.long.for.what.I.am.trying.to.pod",
            "us-west-2a.pin._zone.webs.mynamespace.svc",
        ] {
            assert_eq!(parse(&labels(name)), Err(Invalid), "{name}");
        }
    }
}
