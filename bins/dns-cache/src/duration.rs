//! Go's `time.Duration` text (`5s`, `1.5s`, `1m0s`), for log lines that quote durations.

use std::time::Duration;

/// `d` as Go prints it.
pub fn go(d: Duration) -> String {
    corefile::go::Duration(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_text() {
        assert_eq!(go(Duration::from_secs(5)), "5s");
        assert_eq!(go(Duration::from_secs(90)), "1m30s");
    }
}
