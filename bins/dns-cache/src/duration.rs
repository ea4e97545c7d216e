//! Go's `time.Duration` and Rust's: the Corefile's durations as [`Duration`]s, and
//! durations as Go prints them (`5s`, `1.5s`, `1m0s`), for log lines that quote them.

use std::time::Duration;

/// A Corefile duration as a [`Duration`]; a negative one is zero.
pub fn from_go(d: corefile::go::Duration) -> Duration {
    Duration::from_nanos(u64::try_from(d.0).unwrap_or(0))
}

/// `d` as Go prints it.
pub fn go(d: Duration) -> String {
    corefile::go::Duration(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corefile_durations() {
        let go = corefile::go::Duration;
        assert_eq!(from_go(go(1_500_000_000)), Duration::from_millis(1500));
        assert_eq!(from_go(go(-1)), Duration::ZERO);
    }

    #[test]
    fn go_text() {
        assert_eq!(go(Duration::from_secs(5)), "5s");
        assert_eq!(go(Duration::from_secs(90)), "1m30s");
    }
}
