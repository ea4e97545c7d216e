//! `example`: CoreDNS's example plugin (github.com/coredns/example), the pattern of a
//! plugin that wraps the rest of the chain. On the way down it logs
//! `[DEBUG] plugin/example: Received response` (shown only with the `debug` plugin) and
//! passes the query on; on the way back, when the reply is written, it logs
//! `[INFO] plugin/example: example`. It takes no arguments (`example`); an argument is
//! refused with Caddy's argument-count error. Its README asks for it early in
//! `plugin.cfg`, so it is first in the list (`config/registry.rs`). Its
//! `coredns_example_request_count_total` counter is not exported here.

use std::sync::Arc;

use corefile::dispenser::{Dispenser, PluginError};
use corefile::plugins::PluginConfig;
use corefile::syntax::Line;

use super::handler::{Plugin, Query, Reply, Serve};
use crate::config::{ConfigError, Setup};

/// The `example` directive (no arguments).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExampleConfig;

impl PluginConfig for ExampleConfig {
    const NAME: &'static str = "example";

    fn parse(d: &mut Dispenser<'_>) -> Result<Self, PluginError> {
        while d.next_token() {
            if d.next_arg() {
                return Err(d.arg_err());
            }
        }
        Ok(Self)
    }

    fn to_lines(&self) -> Vec<Line> {
        vec![Line::words([Self::NAME])]
    }
}

/// Sets up `example` for a block (the registry's entry).
pub(crate) fn setup(setup: &mut Setup<'_>) -> Result<(), ConfigError> {
    if setup.config::<ExampleConfig>()?.is_some() {
        setup.add(Arc::new(Example));
    }
    Ok(())
}

/// The `example` plugin.
pub struct Example;

impl Plugin for Example {
    fn name(&self) -> &'static str {
        "example"
    }

    fn serve(&self, _query: &mut Query<'_, '_>, _out: &mut Vec<u8>) -> Serve {
        tracing::debug!(plugin = "example", "Received response");
        Serve::Next
    }

    fn reply(&self, _query: &mut Query<'_, '_>, _out: &mut Vec<u8>, _reply: &mut Reply) {
        tracing::info!(plugin = "example", "example");
    }
}
