//! Plugins that listen on an HTTP address: `health`, `ready`, `prometheus`.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::{PluginConfig, line, once};
use crate::dispenser::{Dispenser, PluginError};
use crate::go::{Duration, split_host_port};
use crate::syntax::Line;

/// Reads the optional single address argument, checked by Go's `net.SplitHostPort`.
fn address(d: &mut Dispenser<'_>) -> Result<Option<String>, PluginError> {
    match d.remaining_args().as_slice() {
        [] => Ok(None),
        [addr] => {
            split_host_port(addr).map_err(|e| d.plain(e))?;
            Ok(Some(addr.to_string()))
        }
        _ => Err(d.arg_err()),
    }
}

/// `health [ADDRESS] { lameduck DURATION }`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Health {
    /// The listen address; CoreDNS's default is `:8080`.
    pub address: Option<String>,
    /// How long to keep serving after shutdown starts.
    pub lameduck: Option<Duration>,
}

impl PluginConfig for Health {
    const NAME: &'static str = "health";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut health = Health::default();
        while d.next_token() {
            if let Some(addr) = address(d)? {
                health.address = Some(addr);
            }
            while d.next_block() {
                if d.val() != "lameduck" {
                    return Err(d.arg_err());
                }
                let args = d.remaining_args();
                let [value] = args.as_slice() else {
                    return Err(d.arg_err());
                };
                let duration = Duration::parse(value).map_err(|e| {
                    d.plain(alloc::format!(
                        "unable to parse lameduck duration value: {value:?}: {e}"
                    ))
                })?;
                health.lameduck = Some(duration);
            }
        }
        Ok(health)
    }

    fn to_lines(&self) -> Vec<Line> {
        let block = self
            .lameduck
            .map(|l| vec![Line::words(["lameduck".to_string(), l.to_string()])])
            .unwrap_or_default();
        vec![line(
            core::iter::once("health").chain(self.address.as_deref()),
            block,
        )]
    }
}

/// `ready [ADDRESS] { monitor until-ready|continuously }`, once per block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// The listen address; CoreDNS's default is `:8181`.
    pub address: Option<String>,
    /// How readiness is watched; CoreDNS's default is [`Monitor::UntilReady`].
    pub monitor: Option<Monitor>,
}

/// `ready`'s `monitor` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Monitor {
    /// Report ready once every plugin has been ready (`until-ready`).
    UntilReady,
    /// Keep asking the plugins (`continuously`).
    Continuously,
}

impl Monitor {
    /// The Corefile word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UntilReady => "until-ready",
            Self::Continuously => "continuously",
        }
    }
}

impl PluginConfig for Ready {
    const NAME: &'static str = "ready";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut ready = Ready::default();
        let mut seen = false;
        while d.next_token() {
            once(d, &mut seen)?;
            ready.address = address(d)?;
            while d.next_block() {
                if d.val() != "monitor" {
                    return Err(d.err(alloc::format!("unknown property '{}'", d.val())));
                }
                let args = d.remaining_args();
                let [kind] = args.as_slice() else {
                    return Err(d.arg_err());
                };
                ready.monitor = Some(match *kind {
                    "until-ready" => Monitor::UntilReady,
                    "continuously" => Monitor::Continuously,
                    other => {
                        return Err(d.err(alloc::format!("monitor type '{other}' not supported")));
                    }
                });
            }
        }
        Ok(ready)
    }

    fn to_lines(&self) -> Vec<Line> {
        let block = self
            .monitor
            .map(|m| vec![Line::words(["monitor", m.as_str()])])
            .unwrap_or_default();
        vec![line(
            core::iter::once("ready").chain(self.address.as_deref()),
            block,
        )]
    }
}

/// `prometheus [ADDRESS]`, once per block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prometheus {
    /// The listen address; CoreDNS's default is `localhost:9153`.
    pub address: Option<String>,
}

impl PluginConfig for Prometheus {
    const NAME: &'static str = "prometheus";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        let mut prometheus = Prometheus::default();
        let mut seen = false;
        while d.next_token() {
            once(d, &mut seen)?;
            prometheus.address = address(d)?;
        }
        Ok(prometheus)
    }

    fn to_lines(&self) -> Vec<Line> {
        vec![Line::words(
            core::iter::once("prometheus").chain(self.address.as_deref()),
        )]
    }
}
