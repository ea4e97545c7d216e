//! HTTPRoute rule timeouts (S-TO): GEP-2257 durations, and what they bound.

use cluster_state::gateway::HttpRouteTimeouts;

use super::Fault;

/// A timeout as nginx will enforce it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A zero duration: no limit (S-TO.1), enforced as the longest one nginx takes.
    Disabled,
    /// This many milliseconds (never zero).
    Millis(u64),
}

/// The timeouts of a rule (S-TO.2); `None` where the rule sets none and the global proxy
/// timeouts apply (S-TO.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timeouts {
    /// The whole exchange, retries included.
    pub request: Option<Limit>,
    /// One attempt to a backend.
    pub backend_request: Option<Limit>,
}

/// The duration `text` in milliseconds, as GEP-2257 writes durations: one to four
/// components, each one to five digits followed by `h`, `m`, `s` or `ms`; their sum.
pub fn duration_ms(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let (mut total, mut components, mut at) = (0u64, 0, 0);
    while at < bytes.len() {
        let digits = bytes
            .get(at..)?
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if !(1..=5).contains(&digits) {
            return None;
        }
        let number: u64 = text.get(at..at + digits)?.parse().ok()?;
        at += digits;
        let rest = text.get(at..)?;
        let (unit, length) = if rest.starts_with("ms") {
            (1, 2)
        } else if rest.starts_with('s') {
            (1_000, 1)
        } else if rest.starts_with('m') {
            (60_000, 1)
        } else if rest.starts_with('h') {
            (3_600_000, 1)
        } else {
            return None;
        };
        at += length;
        total += number * unit;
        components += 1;
    }
    (1..=4).contains(&components).then_some(total)
}

/// The limit `text` sets (`field` names it in the fault).
fn limit(text: &str, field: &str) -> Result<Limit, Fault> {
    match duration_ms(text) {
        Some(0) => Ok(Limit::Disabled),
        Some(ms) => Ok(Limit::Millis(ms)),
        None => Err(Fault::new(
            "UnsupportedValue",
            format!("timeouts.{field} {text:?} is not a GEP-2257 duration"),
        )),
    }
}

/// The timeouts of `timeouts`, or why the rule is invalid: a duration that does not parse,
/// or a `backendRequest` longer than a `request` (the CRD's CEL rule, checked again here
/// because manifests skip the API server).
pub fn timeouts(timeouts: Option<&HttpRouteTimeouts>) -> Result<Timeouts, Fault> {
    let Some(t) = timeouts else {
        return Ok(Timeouts::default());
    };
    let request = t
        .request
        .as_deref()
        .map(|v| limit(v, "request"))
        .transpose()?;
    let backend_request = t.backend_request.as_deref();
    let backend_request = backend_request
        .map(|v| limit(v, "backendRequest"))
        .transpose()?;
    if let (Some(Limit::Millis(whole)), Some(Limit::Millis(one))) = (request, backend_request)
        && one > whole
    {
        let message = "timeouts.backendRequest is longer than timeouts.request";
        return Err(Fault::new("UnsupportedValue", message));
    }
    Ok(Timeouts {
        request,
        backend_request,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// S-TO.1: GEP-2257's examples and limits.
    #[test]
    fn s_to_1_gep_2257_durations() {
        let good = [
            ("0s", 0),
            ("0h", 0),
            ("500ms", 500),
            ("1s", 1_000),
            ("1h", 3_600_000),
            ("1h30m", 5_400_000),
            ("1h30m10s500ms", 5_410_500),
            ("99999ms", 99_999),
            ("10s10s", 20_000),
        ];
        for (text, ms) in good {
            assert_eq!(duration_ms(text), Some(ms), "{text}");
        }
        let bad = [
            "",
            "1",
            "s",
            "1d",
            "1.5s",
            "-1s",
            "100000s",
            "1h1m1s1ms1h",
            "1 s",
            "1S",
            "1µs",
        ];
        for text in bad {
            assert_eq!(duration_ms(text), None, "{text}");
        }
    }

    /// S-TO.1, S-TO.2: zero disables; a per-attempt limit over the whole one is refused.
    #[test]
    fn s_to_2_limits() {
        let set = |request: &str, backend: Option<&str>| HttpRouteTimeouts {
            request: Some(request.into()),
            backend_request: backend.map(str::to_owned),
        };
        assert_eq!(timeouts(None), Ok(Timeouts::default()));
        assert_eq!(
            timeouts(Some(&set("500ms", None))),
            Ok(Timeouts {
                request: Some(Limit::Millis(500)),
                backend_request: None,
            })
        );
        assert_eq!(
            timeouts(Some(&set("0s", Some("1s")))).map(|t| t.request),
            Ok(Some(Limit::Disabled))
        );
        assert!(timeouts(Some(&set("1s", Some("2s")))).is_err());
        assert!(timeouts(Some(&set("soon", None))).is_err());
    }
}
