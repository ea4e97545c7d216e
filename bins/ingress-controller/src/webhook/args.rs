//! The webhook's command-line flags, spelled as ingress-nginx's (`--validating-webhook`,
//! `--validating-webhook-certificate`, `--validating-webhook-key`).

use std::net::{Ipv6Addr, SocketAddr};
use std::path::PathBuf;

use clap::Args;

use super::Config;

/// The validating admission webhook's flags.
#[derive(Args, Clone, Debug, Default)]
pub struct WebhookArgs {
    /// Serve the validating admission webhook (HTTPS) on this address: `HOST:PORT`, or `:PORT`
    /// for every address, as ingress-nginx's `--validating-webhook=:8443`. Off when unset.
    #[arg(long, value_name = "ADDR", value_parser = parse_address, requires_all = ["validating_webhook_certificate", "validating_webhook_key"])]
    pub validating_webhook: Option<SocketAddr>,
    /// The webhook's certificate chain (PEM); re-read when the file changes.
    #[arg(long, value_name = "FILE")]
    pub validating_webhook_certificate: Option<PathBuf>,
    /// The webhook's private key (PEM); re-read when the file changes.
    #[arg(long, value_name = "FILE")]
    pub validating_webhook_key: Option<PathBuf>,
}

impl WebhookArgs {
    /// The webhook these flags ask for, if any.
    pub fn config(&self) -> Option<Config> {
        Some(Config {
            address: self.validating_webhook?,
            certificate: self.validating_webhook_certificate.clone()?,
            key: self.validating_webhook_key.clone()?,
        })
    }
}

/// `HOST:PORT`, `[V6]:PORT`, or Go's `:PORT` (every address: `[::]`, which also takes IPv4
/// connections unless the host turned that off, where the server falls back to `0.0.0.0`).
fn parse_address(text: &str) -> Result<SocketAddr, String> {
    if let Some(port) = text.strip_prefix(':') {
        let port: u16 = port
            .parse()
            .map_err(|_| format!("{text:?}: the port is not a number up to 65535"))?;
        return Ok(SocketAddr::from((Ipv6Addr::UNSPECIFIED, port)));
    }
    text.parse()
        .map_err(|_| format!("{text:?} is not HOST:PORT with an IP address, nor :PORT"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        webhook: WebhookArgs,
    }

    #[test]
    fn ingress_nginx_spelling() {
        let cli = Cli::try_parse_from([
            "x",
            "--validating-webhook=:8443",
            "--validating-webhook-certificate=/usr/local/certificates/cert",
            "--validating-webhook-key=/usr/local/certificates/key",
        ])
        .unwrap();
        let config = cli.webhook.config().unwrap();
        assert_eq!(config.address, "[::]:8443".parse().unwrap());
        assert_eq!(config.key, PathBuf::from("/usr/local/certificates/key"));
        let cli = Cli::try_parse_from(["x"]).unwrap();
        assert!(cli.webhook.config().is_none());
    }

    #[test]
    fn bad_addresses_and_missing_files_are_refused() {
        for address in [":x", ":70000", "localhost:8443", "8443"] {
            let args = [
                "x",
                "--validating-webhook",
                address,
                "--validating-webhook-certificate=c",
                "--validating-webhook-key=k",
            ];
            assert!(Cli::try_parse_from(args).is_err(), "{address}");
        }
        let no_key = [
            "x",
            "--validating-webhook=127.0.0.1:1",
            "--validating-webhook-certificate=c",
        ];
        assert!(Cli::try_parse_from(no_key).is_err());
    }
}
