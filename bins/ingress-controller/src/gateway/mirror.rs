//! RequestMirror (S-F.6): the filter as a typed value, its backend resolved as a backendRef is
//! (S-BR.1, with ReferenceGrants, S-RG.1), and the share of the requests that are copied.
//!
//! A mirror whose backend does not resolve is dropped: the rule still serves, without the copy,
//! and the route's `ResolvedRefs` says why ([`super::backend_refs::route_refs`]), as
//! `HTTPRequestMirrorFilter.BackendRef` asks. A share outside the CRD's bounds (the CEL rules
//! manifests skip) makes the rule invalid, as any refused filter does (S-IR.1).

use cluster_state::gateway::{BackendObjectReference, BackendRef, HttpRouteRule, RequestMirror};

use super::Fault;
use super::backend_refs::{self, Backend, Context};

/// A RequestMirror filter of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirror {
    /// Where the copies go, as written.
    pub backend: BackendObjectReference,
    /// How many of the requests are copied.
    pub sample: Sample,
    /// The backend's name in the backend table once the planner has resolved it; `None`
    /// before, or when it does not resolve (then nothing is copied).
    pub upstream: Option<String>,
}

/// The share of requests copied: `numerator` out of every `denominator`, drawn per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// At most `denominator`.
    pub numerator: u32,
    /// At least 1.
    pub denominator: u32,
}

impl Sample {
    /// Whether every request is copied (no draw needed).
    pub fn always(self) -> bool {
        self.numerator >= self.denominator
    }

    /// Whether no request is copied (the mirror is left out).
    pub fn never(self) -> bool {
        self.numerator == 0
    }
}

/// The typed mirror of `filter` (its backend not yet resolved), or why its rule is invalid:
/// a `percent` outside 0 to 100, a fraction whose denominator is not positive or below its
/// numerator, or both set.
pub fn mirror(filter: &RequestMirror) -> Result<Mirror, Fault> {
    let refused = |why: String| Fault::new("UnsupportedValue", format!("RequestMirror: {why}"));
    let sample = match (filter.percent, &filter.fraction) {
        (Some(_), Some(_)) => return Err(refused("both percent and fraction are set".into())),
        (None, None) => Sample {
            numerator: 1,
            denominator: 1,
        },
        (Some(percent), None) => Sample {
            numerator: u32::try_from(percent)
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| refused(format!("percent {percent} is not 0 to 100")))?,
            denominator: 100,
        },
        (None, Some(fraction)) => {
            let (numerator, denominator) = (fraction.numerator, fraction.denominator());
            let numbers = u32::try_from(numerator)
                .ok()
                .zip(u32::try_from(denominator).ok());
            match numbers {
                Some((n, d)) if d > 0 && n <= d => Sample {
                    numerator: n,
                    denominator: d,
                },
                _ => {
                    return Err(refused(format!(
                        "fraction {numerator}/{denominator} is not a share of requests"
                    )));
                }
            }
        }
    };
    Ok(Mirror {
        backend: filter.backend_ref.clone(),
        sample,
        upstream: None,
    })
}

/// Resolves the backend of a mirror written in a route of kind `route_kind` in
/// `route_namespace`, as [`backend_refs::resolve`] does a backendRef.
///
/// # Errors
///
/// As [`backend_refs::resolve`], the message naming the mirror.
pub fn resolve(
    backend: &BackendObjectReference,
    route_kind: &str,
    route_namespace: &str,
    context: Context<'_>,
) -> Result<Backend, Fault> {
    let as_ref: BackendRef<()> = BackendRef {
        group: backend.group.clone(),
        kind: backend.kind.clone(),
        name: backend.name.clone(),
        namespace: backend.namespace.clone(),
        port: backend.port,
        weight: None,
        filters: None,
    };
    backend_refs::resolve(&as_ref, route_kind, route_namespace, context)
        .map_err(|fault| Fault::new(fault.reason, format!("RequestMirror {}", fault.message)))
}

/// The backends the RequestMirror filters of `rule` name, in the order written.
pub fn mirror_refs(rule: &HttpRouteRule) -> impl Iterator<Item = &BackendObjectReference> {
    let filters = rule.filters().iter();
    filters.filter_map(|f| f.request_mirror.as_ref().map(|m| &m.backend_ref))
}

#[cfg(test)]
mod tests {
    use cluster_state::gateway::Fraction;

    use super::*;

    fn filter(percent: Option<i32>, fraction: Option<(i32, Option<i32>)>) -> RequestMirror {
        RequestMirror {
            backend_ref: BackendObjectReference {
                name: "copy".into(),
                port: Some(8080),
                ..Default::default()
            },
            percent,
            fraction: fraction.map(|(numerator, denominator)| Fraction {
                numerator,
                denominator,
            }),
        }
    }

    /// The shares of HTTPRouteRequestPercentageMirror (20 %, 25/50, 35 %), all by default,
    /// and what the CRD's bounds refuse.
    #[test]
    fn s_f_6_samples() {
        let sample = |percent, fraction| mirror(&filter(percent, fraction)).map(|m| m.sample);
        let share = |numerator, denominator| {
            Ok(Sample {
                numerator,
                denominator,
            })
        };
        assert_eq!(sample(None, None), share(1, 1));
        assert_eq!(sample(Some(20), None), share(20, 100));
        assert_eq!(sample(None, Some((25, Some(50)))), share(25, 50));
        assert_eq!(sample(None, Some((35, None))), share(35, 100));
        assert!(sample(None, None).unwrap().always());
        assert!(sample(Some(0), None).unwrap().never());
        for (percent, fraction) in [
            (Some(101), None),
            (Some(-1), None),
            (None, Some((3, Some(2)))),
            (None, Some((1, Some(0)))),
            (None, Some((-1, Some(5)))),
            (Some(10), Some((1, Some(2)))),
        ] {
            let fault = sample(percent, fraction).unwrap_err();
            assert_eq!(fault.reason, "UnsupportedValue", "{percent:?} {fraction:?}");
        }
    }
}
