//! Go standard-library behaviours that plugin arguments follow: `time.ParseDuration` and
//! `Duration.String`, and `net.SplitHostPort`'s checks.

use alloc::format;
use alloc::string::String;

/// A Go `time.Duration`: signed nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub i64);

impl Duration {
    /// One second.
    pub const SECOND: Duration = Duration(1_000_000_000);

    /// Whole seconds.
    pub const fn from_secs(secs: i64) -> Duration {
        Duration(secs.saturating_mul(1_000_000_000))
    }

    /// As a `core::time::Duration`, or `None` when negative.
    pub fn to_std(self) -> Option<core::time::Duration> {
        u64::try_from(self.0)
            .ok()
            .map(core::time::Duration::from_nanos)
    }

    /// Parses Go's duration syntax (`300ms`, `1.5h`, `2h45m`), with Go's error text.
    pub fn parse(s: &str) -> Result<Duration, String> {
        let invalid = || format!("time: invalid duration \"{s}\"");
        let (negative, mut rest) = match s.as_bytes().first() {
            Some(b'-') => (true, s.get(1..).unwrap_or_default()),
            Some(b'+') => (false, s.get(1..).unwrap_or_default()),
            _ => (false, s),
        };
        if rest == "0" {
            return Ok(Duration(0));
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut total: i128 = 0;
        while !rest.is_empty() {
            let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let (int_part, after) = rest.split_at(int_len);
            let (frac_part, after) = match after.strip_prefix('.') {
                Some(f) => {
                    let n = f.bytes().take_while(u8::is_ascii_digit).count();
                    f.split_at(n)
                }
                None => ("", after),
            };
            if int_part.is_empty() && frac_part.is_empty() {
                return Err(invalid());
            }
            let unit_len = after
                .bytes()
                .take_while(|b| !b.is_ascii_digit() && *b != b'.')
                .count();
            let (unit, after) = after.split_at(unit_len);
            let scale: i128 = match unit {
                "ns" => 1,
                "us" | "µs" | "μs" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                "" => return Err(format!("time: missing unit in duration \"{s}\"")),
                other => {
                    return Err(format!(
                        "time: unknown unit \"{other}\" in duration \"{s}\""
                    ));
                }
            };
            let whole: i128 = if int_part.is_empty() {
                0
            } else {
                int_part.parse().map_err(|_| invalid())?
            };
            let mut value = whole.checked_mul(scale).ok_or_else(invalid)?;
            let mut divisor: i128 = 1;
            for digit in frac_part.bytes().take(18) {
                divisor *= 10;
                value += i128::from(digit - b'0') * scale / divisor;
            }
            total = total.checked_add(value).ok_or_else(invalid)?;
            if total > i128::from(i64::MAX) {
                return Err(invalid());
            }
            rest = after;
        }
        let total = i64::try_from(total).map_err(|_| invalid())?;
        Ok(Duration(if negative { -total } else { total }))
    }
}

impl core::fmt::Display for Duration {
    /// Go's `Duration.String`: `1h2m3.5s`, `1.5ms`, `0s`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let ns = self.0.unsigned_abs();
        if self.0 < 0 {
            f.write_str("-")?;
        }
        if ns == 0 {
            return f.write_str("0s");
        }
        let fraction = |f: &mut core::fmt::Formatter<'_>, value: u64, unit: u64| {
            let whole = value / unit;
            let mut frac = value % unit;
            write!(f, "{whole}")?;
            if frac > 0 {
                let mut digits = String::new();
                let mut scale = unit / 10;
                while frac > 0 && scale > 0 {
                    digits.push(char::from(b'0' + (frac / scale) as u8));
                    frac %= scale;
                    scale /= 10;
                }
                write!(f, ".{digits}")?;
            }
            Ok(())
        };
        if ns < 1_000 {
            return write!(f, "{ns}ns");
        }
        if ns < 1_000_000 {
            fraction(f, ns, 1_000)?;
            return f.write_str("µs");
        }
        if ns < 1_000_000_000 {
            fraction(f, ns, 1_000_000)?;
            return f.write_str("ms");
        }
        let hours = ns / 3_600_000_000_000;
        let minutes = ns / 60_000_000_000 % 60;
        let seconds = ns % 60_000_000_000;
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if hours > 0 || minutes > 0 {
            write!(f, "{minutes}m")?;
        }
        fraction(f, seconds, 1_000_000_000)?;
        f.write_str("s")
    }
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits in 64-bit range, with Go's error
/// text (`strconv.Atoi: parsing "x": invalid syntax` or `...: value out of range`).
pub fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

/// Go's `net.SplitHostPort` validation, with its error text (`address X: missing port in
/// address`). Returns host and port.
pub fn split_host_port(addr: &str) -> Result<(&str, &str), String> {
    let err = |why: &str| format!("address {addr}: {why}");
    let Some(colon) = addr.rfind(':') else {
        return Err(err("missing port in address"));
    };
    let (host, port) = (
        addr.get(..colon).unwrap_or_default(),
        addr.get(colon + 1..).unwrap_or_default(),
    );
    if let Some(inner) = host.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return Err(err("missing ']' in address"));
        };
        if inner.contains(['[', ']']) {
            return Err(err("unexpected '[' in address"));
        }
        return Ok((inner, port));
    }
    if host.contains(':') {
        return Err(err("too many colons in address"));
    }
    if host.contains('[') {
        return Err(err("unexpected '[' in address"));
    }
    if host.contains(']') || port.contains(']') {
        return Err(err("unexpected ']' in address"));
    }
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn durations_parse_and_print_like_go() {
        for (text, printed) in [
            ("30s", "30s"),
            ("0.01s", "10ms"),
            ("1m30s", "1m30s"),
            ("2h", "2h0m0s"),
            ("1.5ms", "1.5ms"),
            ("0", "0s"),
        ] {
            assert_eq!(
                Duration::parse(text).unwrap().to_string(),
                printed,
                "{text}"
            );
        }
        assert_eq!(
            Duration::parse("5").unwrap_err(),
            "time: missing unit in duration \"5\""
        );
        assert_eq!(
            Duration::parse("x").unwrap_err(),
            "time: invalid duration \"x\""
        );
        assert_eq!(
            Duration::parse("5y").unwrap_err(),
            "time: unknown unit \"y\" in duration \"5y\""
        );
    }

    #[test]
    fn split_host_port_errors_like_go() {
        assert_eq!(split_host_port(":8080").unwrap(), ("", "8080"));
        assert_eq!(split_host_port("[::1]:53").unwrap(), ("::1", "53"));
        assert_eq!(
            split_host_port("localhost").unwrap_err(),
            "address localhost: missing port in address"
        );
        assert_eq!(
            split_host_port("::1:53").unwrap_err(),
            "address ::1:53: too many colons in address"
        );
    }
}
