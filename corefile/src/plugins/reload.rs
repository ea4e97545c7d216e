//! `reload [INTERVAL] [JITTER]`.

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use super::PluginConfig;
use crate::dispenser::{Dispenser, PluginError};
use crate::go::Duration;
use crate::syntax::Line;

/// `reload`: how often CoreDNS checks the Corefile for changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reload {
    /// The check interval (default 30s, at least 2s).
    pub interval: Duration,
    /// The random jitter added (default 15s, at least 1s, at most half the interval).
    pub jitter: Duration,
}

impl Default for Reload {
    fn default() -> Self {
        Reload {
            interval: Duration::from_secs(30),
            jitter: Duration::from_secs(15),
        }
    }
}

impl PluginConfig for Reload {
    const NAME: &'static str = "reload";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut reload = Reload::default();
        while d.next_token() {
            let args = d.remaining_args();
            if args.len() > 2 {
                return Err(d.arg_err());
            }
            let duration = |i: usize, default| match args.get(i) {
                Some(text) => Duration::parse(text).map_err(|e| d.plain(e)),
                None => Ok(default),
            };
            let interval = duration(0, Duration::from_secs(30))?;
            if interval < Duration::from_secs(2) {
                return Err(d.plain("interval value must be greater or equal to 2s"));
            }
            let mut jitter = duration(1, Duration::from_secs(15))?;
            if jitter < Duration::SECOND {
                return Err(d.plain(format!(
                    "jitter value must be greater or equal to {}",
                    Duration::SECOND
                )));
            }
            if jitter.0 > interval.0 / 2 {
                jitter = Duration(interval.0 / 2);
            }
            reload = Reload { interval, jitter };
        }
        Ok(reload)
    }

    fn to_lines(&self) -> Vec<Line> {
        vec![Line::words([
            "reload".to_string(),
            self.interval.to_string(),
            self.jitter.to_string(),
        ])]
    }
}
