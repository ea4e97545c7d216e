//! Election timing and identity, validated with client-go's rules plus our own.
//!
//! client-go (`NewLeaderElector`) rejects a configuration unless `LeaseDuration >
//! RenewDeadline > JitterFactor × RetryPeriod` (factor 1.2) and all three are positive. We add:
//! the lease duration is a whole number of seconds (the record stores whole seconds, and client-go
//! silently truncates), the drift bound is below 100 %, and the shrunk validity window of
//! [`Config::safe_lease`] still outlasts one retry period.

use core::fmt;

use crate::text::{Text, TextTooLong};
use crate::time::Duration;

/// client-go's `JitterFactor`: acquire-loop waits are uniform in `[RP, (1 + 1.2)·RP)`.
pub const JITTER_FACTOR_TENTHS: u64 = 12;

/// One million: drift bounds are given in parts per million.
const PPM: u64 = 1_000_000;

/// Validated election settings of one candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    identity: Text,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    drift_ppm: u32,
    margin: Duration,
    honor_preferred_holder: bool,
    #[cfg(test)]
    pub(crate) client_go_timing: bool,
}

/// Builds a [`Config`]; every setting starts at its default.
#[derive(Clone, Debug)]
#[must_use]
pub struct ConfigBuilder {
    identity: Result<Text, TextTooLong>,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    drift_ppm: u32,
    margin: Duration,
    honor_preferred_holder: bool,
}

impl Config {
    /// client-go's default lease duration for core components: 15 s.
    pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
    /// client-go's default renew deadline: 10 s.
    pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
    /// client-go's default retry period: 2 s.
    pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);
    /// Default bound on the clock-rate difference between any two nodes: 1 % (10 000 ppm),
    /// generous next to crystal error plus NTP slewing (≤ 500 ppm) to cover virtual machines.
    pub const DEFAULT_DRIFT_PPM: u32 = 10_000;
    /// Default safety margin subtracted from the leader's validity: 250 ms.
    pub const DEFAULT_MARGIN: Duration = Duration::from_millis(250);

    /// A configuration with the given identity and timings and default drift and margin.
    pub fn new(
        identity: impl AsRef<str>,
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Result<Self, ConfigError> {
        Self::builder(identity)
            .lease_duration(lease_duration)
            .renew_deadline(renew_deadline)
            .retry_period(retry_period)
            .build()
    }

    /// A builder with client-go's default timings (15 s / 10 s / 2 s).
    pub fn builder(identity: impl AsRef<str>) -> ConfigBuilder {
        ConfigBuilder {
            identity: Text::try_from(identity.as_ref()),
            lease_duration: Self::DEFAULT_LEASE_DURATION,
            renew_deadline: Self::DEFAULT_RENEW_DEADLINE,
            retry_period: Self::DEFAULT_RETRY_PERIOD,
            drift_ppm: Self::DEFAULT_DRIFT_PPM,
            margin: Self::DEFAULT_MARGIN,
            honor_preferred_holder: false,
        }
    }

    /// This candidate's identity, written as `holderIdentity`.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The identity as stored in records.
    pub(crate) fn identity_text(&self) -> &Text {
        &self.identity
    }

    /// How long others wait, after they last saw the record change, before taking over.
    pub fn lease_duration(&self) -> Duration {
        self.lease_duration
    }

    /// How long one renew round may keep failing before the leader gives up.
    pub fn renew_deadline(&self) -> Duration {
        self.renew_deadline
    }

    /// The pause between attempts.
    pub fn retry_period(&self) -> Duration {
        self.retry_period
    }

    /// The clock-rate drift bound ρ, in parts per million.
    pub fn drift_ppm(&self) -> u32 {
        self.drift_ppm
    }

    /// The safety margin ε.
    pub fn margin(&self) -> Duration {
        self.margin
    }

    /// Whether the holder stops renewing when the record's `preferredHolder` names another
    /// candidate (coordinated election hand-over, KEP-4355).
    pub fn honor_preferred_holder(&self) -> bool {
        self.honor_preferred_holder
    }

    /// `leaseDurationSeconds` as written in our records.
    pub fn lease_duration_seconds(&self) -> i32 {
        // `build` checked that the duration is a whole number of seconds that fits an i32.
        self.lease_duration
            .whole_secs()
            .and_then(|s| i32::try_from(s).ok())
            .unwrap_or(i32::MAX)
    }

    /// How long the leader may act after **sending** its last successful write:
    /// `LD · (1 − ρ)/(1 + ρ) − ε`.
    ///
    /// A follower takes over no earlier than `LD` of *its* time after it saw that write commit,
    /// which is at least `LD/(1 + ρ)` real time after the send; `X` of the leader's time lasts
    /// at most `X/(1 − ρ)` real time. Keeping `X/(1 − ρ) < LD/(1 + ρ)` gives the formula.
    pub fn safe_lease(&self) -> Duration {
        let drift = u64::from(self.drift_ppm);
        self.lease_duration
            .mul_div(PPM - drift.min(PPM), PPM + drift)
            .saturating_sub(self.margin)
    }

    /// The longest a driver may let one store request run before reporting it failed:
    /// `max(1 s, RD / 2)`, as client-go's lock client does (kubernetes/kubernetes PR #65094), so
    /// one hung request cannot eat a whole renew round.
    pub fn request_timeout(&self) -> Duration {
        self.renew_deadline
            .mul_div(1, 2)
            .max(Duration::from_secs(1))
    }
}

impl ConfigBuilder {
    /// Sets the lease duration (whole seconds; default 15 s).
    pub fn lease_duration(mut self, value: Duration) -> Self {
        self.lease_duration = value;
        self
    }

    /// Sets the renew deadline (default 10 s).
    pub fn renew_deadline(mut self, value: Duration) -> Self {
        self.renew_deadline = value;
        self
    }

    /// Sets the retry period (default 2 s).
    pub fn retry_period(mut self, value: Duration) -> Self {
        self.retry_period = value;
        self
    }

    /// Sets the clock-rate drift bound ρ in parts per million (default 10 000 = 1 %).
    pub fn drift_ppm(mut self, value: u32) -> Self {
        self.drift_ppm = value;
        self
    }

    /// Sets the safety margin ε (default 250 ms).
    pub fn margin(mut self, value: Duration) -> Self {
        self.margin = value;
        self
    }

    /// Stop renewing when `preferredHolder` names someone else (default off, as in client-go's
    /// uncoordinated mode). Renewals then always read the record first, to see the request.
    pub fn honor_preferred_holder(mut self, value: bool) -> Self {
        self.honor_preferred_holder = value;
        self
    }

    /// Checks every rule and returns the configuration.
    pub fn build(self) -> Result<Config, ConfigError> {
        let identity = self.identity.map_err(ConfigError::IdentityTooLong)?;
        if identity.is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        for (name, value) in [
            ("lease duration", self.lease_duration),
            ("renew deadline", self.renew_deadline),
            ("retry period", self.retry_period),
        ] {
            if value == Duration::ZERO {
                return Err(ConfigError::NotPositive { name });
            }
        }
        let secs = self.lease_duration.whole_secs();
        if secs.is_none_or(|s| i32::try_from(s).is_err()) {
            return Err(ConfigError::LeaseNotWholeSeconds(self.lease_duration));
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(ConfigError::LeaseNotLongerThanRenewDeadline {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
            });
        }
        if self.renew_deadline <= self.retry_period.mul_div(JITTER_FACTOR_TENTHS, 10) {
            return Err(ConfigError::RenewDeadlineTooShort {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
            });
        }
        if u64::from(self.drift_ppm) >= PPM {
            return Err(ConfigError::DriftTooLarge(self.drift_ppm));
        }
        let config = Config {
            identity,
            lease_duration: self.lease_duration,
            renew_deadline: self.renew_deadline,
            retry_period: self.retry_period,
            drift_ppm: self.drift_ppm,
            margin: self.margin,
            honor_preferred_holder: self.honor_preferred_holder,
            #[cfg(test)]
            client_go_timing: false,
        };
        if config.safe_lease() <= config.retry_period {
            return Err(ConfigError::NoSafeWindow {
                safe_lease: config.safe_lease(),
                retry_period: config.retry_period,
            });
        }
        Ok(config)
    }
}

/// Why a configuration was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The identity is empty; an empty `holderIdentity` means "released".
    EmptyIdentity,
    /// The identity does not fit a record's holder field.
    IdentityTooLong(TextTooLong),
    /// A timing is zero.
    NotPositive {
        /// Which timing.
        name: &'static str,
    },
    /// The lease duration is not a whole number of seconds that fits `leaseDurationSeconds`.
    LeaseNotWholeSeconds(Duration),
    /// client-go's rule `LeaseDuration > RenewDeadline` is broken.
    LeaseNotLongerThanRenewDeadline {
        /// The configured lease duration.
        lease_duration: Duration,
        /// The configured renew deadline.
        renew_deadline: Duration,
    },
    /// client-go's rule `RenewDeadline > 1.2 × RetryPeriod` is broken.
    RenewDeadlineTooShort {
        /// The configured renew deadline.
        renew_deadline: Duration,
        /// The configured retry period.
        retry_period: Duration,
    },
    /// The drift bound is 100 % or more (in parts per million).
    DriftTooLarge(u32),
    /// Drift and margin leave the leader no more than one retry period of validity per write.
    NoSafeWindow {
        /// `LD · (1 − ρ)/(1 + ρ) − ε`.
        safe_lease: Duration,
        /// The configured retry period.
        retry_period: Duration,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyIdentity => f.write_str(
                "identity must not be empty (an empty holder means the lease is released)",
            ),
            Self::IdentityTooLong(too_long) => write!(f, "identity: {too_long}"),
            Self::NotPositive { name } => write!(f, "{name} must be positive"),
            Self::LeaseNotWholeSeconds(d) => write!(
                f,
                "lease duration {d} must be a whole number of seconds below 2^31 (the record stores leaseDurationSeconds)"
            ),
            Self::LeaseNotLongerThanRenewDeadline {
                lease_duration,
                renew_deadline,
            } => write!(
                f,
                "lease duration {lease_duration} must be greater than renew deadline {renew_deadline}"
            ),
            Self::RenewDeadlineTooShort {
                renew_deadline,
                retry_period,
            } => write!(
                f,
                "renew deadline {renew_deadline} must be greater than 1.2 × retry period {retry_period}"
            ),
            Self::DriftTooLarge(ppm) => {
                write!(f, "drift bound {ppm} ppm must be below 1000000 ppm (100 %)")
            }
            Self::NoSafeWindow {
                safe_lease,
                retry_period,
            } => write!(
                f,
                "drift and margin shrink the leader's validity to {safe_lease}, not more than the retry period \
                 {retry_period}: lengthen the lease or lower the drift bound or margin"
            ),
        }
    }
}

impl core::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn client_go_defaults_are_valid() {
        let c = Config::builder("a").build().unwrap();
        assert_eq!(c.lease_duration_seconds(), 15);
        // 15 s × 0.99 / 1.01 − 0.25 s.
        assert_eq!(c.safe_lease(), Duration::from_nanos(14_452_970_297));
        assert_eq!(c.request_timeout(), secs(5));
    }

    /// `docs/leader-lease.md` §2: `LeaseDuration > RenewDeadline`.
    #[test]
    fn lease_must_exceed_renew_deadline() {
        let e = Config::new("a", secs(10), secs(10), secs(2)).unwrap_err();
        assert!(matches!(
            e,
            ConfigError::LeaseNotLongerThanRenewDeadline { .. }
        ));
        assert_eq!(
            e.to_string(),
            "lease duration 10s must be greater than renew deadline 10s"
        );
    }

    /// `docs/leader-lease.md` §2: `RenewDeadline > JitterFactor × RetryPeriod`, JitterFactor = 1.2.
    #[test]
    fn renew_deadline_must_exceed_jittered_retry() {
        let e = Config::new("a", secs(15), Duration::from_millis(2400), secs(2)).unwrap_err();
        assert!(matches!(e, ConfigError::RenewDeadlineTooShort { .. }));
        assert!(Config::new("a", secs(15), Duration::from_millis(2401), secs(2)).is_ok());
    }

    /// `docs/leader-lease.md` §2: all three ≥ 1 ns; identity non-empty.
    #[test]
    fn zero_timings_and_empty_identity_are_rejected() {
        assert_eq!(
            Config::new("a", secs(15), secs(10), Duration::ZERO),
            Err(ConfigError::NotPositive {
                name: "retry period"
            })
        );
        assert_eq!(
            Config::new("", secs(15), secs(10), secs(2)),
            Err(ConfigError::EmptyIdentity)
        );
    }

    /// `docs/leader-lease.md` §2: sub-second lease durations would be truncated to 0 by client-go.
    #[test]
    fn lease_duration_is_whole_seconds() {
        let e = Config::new("a", Duration::from_millis(15_500), secs(10), secs(2)).unwrap_err();
        assert_eq!(
            e,
            ConfigError::LeaseNotWholeSeconds(Duration::from_millis(15_500))
        );
        let e = Config::new("a", secs(1 << 31), secs(10), secs(2)).unwrap_err();
        assert!(matches!(e, ConfigError::LeaseNotWholeSeconds(_)));
    }

    #[test]
    fn drift_and_margin_must_leave_a_window() {
        let e = Config::builder("a")
            .drift_ppm(1_000_000)
            .build()
            .unwrap_err();
        assert_eq!(e, ConfigError::DriftTooLarge(1_000_000));
        let e = Config::builder("a").margin(secs(13)).build().unwrap_err();
        assert!(matches!(e, ConfigError::NoSafeWindow { .. }));
    }

    /// ingress-nginx: `--election-ttl` 30 s, RD = TTL/2, RP = TTL/4.
    #[test]
    fn ingress_nginx_timings_are_valid() {
        let c = Config::new("a", secs(30), secs(15), Duration::from_millis(7500)).unwrap();
        assert_eq!(c.request_timeout(), Duration::from_millis(7500));
    }
}
