//! Reading the Corefile: which file (`-conf`, `./Corefile` or the built-in default), its
//! bytes and their hash (what `reload` compares), the parsed server blocks, and the typed
//! settings of each plugin a block names.

use std::path::PathBuf;

use corefile::plugins::{self, PluginConfig};
use corefile::view::{BlockView, CorefileView, Options};
use sha2::{Digest, Sha512};

use super::error::ConfigError;
use super::plan::Empty;
use crate::cli::{Cli, DEFAULT_DNS_PORT, QUICK_START_PORT};

/// Where the configuration comes from.
#[derive(Clone, Debug)]
pub struct Source {
    /// The Corefile, or `None` for the built-in default.
    pub path: Option<PathBuf>,
    /// The default port of zone keys.
    pub dns_port: u16,
}

impl Source {
    /// `-conf FILE`, else `./Corefile` if it exists, else the built-in default (on 1053
    /// unless `-dns.port` says otherwise).
    pub fn from_cli(cli: &Cli) -> Self {
        let path = cli.conf.clone().or_else(|| {
            let local = PathBuf::from("Corefile");
            local.exists().then_some(local)
        });
        let dns_port = match (&path, cli.dns_port) {
            (_, Some(port)) => port,
            (Some(_), None) => DEFAULT_DNS_PORT,
            (None, None) => QUICK_START_PORT,
        };
        Self { path, dns_port }
    }

    /// What a reload makes of a Corefile without server blocks: a file in that state is
    /// being truncated or rewritten (or was emptied by mistake) and is refused, so the
    /// running configuration keeps serving; without a file, the built-in default stays.
    pub fn empty_at_reload(&self) -> Empty {
        match self.path {
            Some(_) => Empty::Refuse,
            None => Empty::Default,
        }
    }

    /// The Corefile's bytes (empty for the built-in default) and its name for errors.
    pub fn read(&self) -> Result<(Vec<u8>, String), ConfigError> {
        match &self.path {
            None => Ok((Vec::new(), "Corefile".to_owned())),
            Some(path) => std::fs::read(path)
                .map(|bytes| (bytes, path.display().to_string()))
                .map_err(|error| ConfigError::Read {
                    path: path.display().to_string(),
                    error,
                }),
        }
    }
}

/// Parses the Corefile `input` (named `filename` in errors) as CoreDNS does: `{$NAME}`
/// from the environment, `import` from the file system, `dns_port` for zone keys without
/// a port.
pub(super) fn parse<'i>(
    input: &'i [u8],
    filename: &str,
    dns_port: u16,
) -> Result<CorefileView<'i>, ConfigError> {
    let port_text = dns_port.to_string();
    let env = |name: &str| std::env::var(name).ok();
    Ok(corefile::load_with(
        input,
        Options {
            filename,
            order: super::registry::directive_order(),
            dns_port: &port_text,
            env: &env,
            resolver: &mut corefile::fs::FsResolver,
        },
    )?)
}

/// The typed config of plugin `P`, if the block uses it.
pub(super) fn plugin_config<P: PluginConfig>(
    block: &BlockView<'_>,
    file: &str,
) -> Result<Option<P>, ConfigError> {
    plugins::config::<P>(block, file)
        .transpose()
        .map_err(ConfigError::from)
}

/// The SHA-512 of a Corefile, hex (the `reload` plugin's comparison).
pub fn build_hash(input: &[u8]) -> String {
    hex(&Sha512::digest(input))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
