//! The kernel settings kube-proxy's iptables mode owns, applied at start-up.
//!
//! - `net.ipv4.conf.all.route_localnet` is set to 1 when IPv4 NodePorts answer on localhost
//!   (`--iptables-localhost-nodeports`, and `--nodeport-addresses` unset or covering
//!   127.0.0.0): without it the kernel drops a packet from or to 127.0.0.0/8 once it has been
//!   DNATed to a pod. kube-proxy does the same in its iptables backend's privileged set-up
//!   (`pkg/proxy/iptables`, `NodePortAddresses.ContainsIPv4Loopback`, then `EnsureSysctl`:
//!   written only when it differs, the change logged with the value before). kube-proxy does
//!   not start when it cannot set it; service-proxy logs an error and serves the rest (only
//!   NodePorts on 127.0.0.1 are lost, and a container without a writable `/proc/sys` would
//!   otherwise never program a node).
//! - `net.bridge.bridge-nf-call-iptables` is read: when the `br_netfilter` module is loaded and
//!   it is 0, traffic between pods on a Linux bridge bypasses iptables, Services included. A
//!   warning says so, as kube-proxy logs it; nothing is changed (the network plugin owns it).
//!
//! The iptables build (legacy or nft) is chosen by `iptables_exec::detect` (the flag
//! `--iptables-variant auto`), as kube-proxy's iptables-wrapper does.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use iptables_model::kube::ProxyOptions;

/// `net.ipv4.conf.all.route_localnet`, under `/proc/sys`.
pub const ROUTE_LOCALNET: &str = "net/ipv4/conf/all/route_localnet";

/// `net.bridge.bridge-nf-call-iptables`, under `/proc/sys` (present once `br_netfilter` is
/// loaded).
pub const BRIDGE_NF_CALL_IPTABLES: &str = "net/bridge/bridge-nf-call-iptables";

/// Whether the proxier with `options` accepts NodePorts on 127.0.0.1, which needs
/// `route_localnet`: IPv4, localhost NodePorts on, and NodePort addresses that are every
/// address or include a CIDR holding 127.0.0.0 or written with a loopback address.
pub fn needs_route_localnet(options: &ProxyOptions) -> bool {
    let loopback = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0));
    !options.ipv6
        && options.localhost_node_ports
        && options.node_port_addresses.as_ref().is_none_or(|cidrs| {
            cidrs
                .iter()
                .any(|c| c.addr.is_loopback() || c.contains(loopback))
        })
}

/// Why a setting could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("sysctl {name}: {source}")]
pub struct SysctlError {
    /// The setting (`net/ipv4/conf/all/route_localnet`).
    pub name: &'static str,
    /// What failed.
    pub source: std::io::Error,
}

/// The kernel settings, as files under a `/proc/sys` directory.
#[derive(Clone, Debug)]
pub struct Sysctls {
    root: PathBuf,
}

impl Sysctls {
    /// The settings of this network namespace (`/proc/sys`).
    pub fn system() -> Self {
        Self::at("/proc/sys")
    }

    /// The settings under `root` (a test's directory).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The integer value of `name`.
    ///
    /// # Errors
    ///
    /// [`SysctlError`] when it cannot be read or is not an integer.
    pub fn get(&self, name: &'static str) -> Result<i64, SysctlError> {
        let text = std::fs::read_to_string(self.root.join(name))
            .map_err(|source| SysctlError { name, source })?;
        text.trim().parse().map_err(|_| SysctlError {
            name,
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{:?} is not an integer", text.trim()),
            ),
        })
    }

    /// Sets `name` to `value` unless it already holds it; returns the value it had when it
    /// was changed.
    ///
    /// # Errors
    ///
    /// [`SysctlError`] when it cannot be read or written.
    pub fn ensure(&self, name: &'static str, value: i64) -> Result<Option<i64>, SysctlError> {
        let before = self.get(name)?;
        if before == value {
            return Ok(None);
        }
        std::fs::write(self.root.join(name), format!("{value}\n"))
            .map_err(|source| SysctlError { name, source })?;
        Ok(Some(before))
    }

    /// Applies the settings the proxiers with `options` need, and warns about the bridge
    /// setting. Logs what it changes.
    ///
    /// # Errors
    ///
    /// [`SysctlError`] when `route_localnet` is needed and cannot be set: NodePorts on
    /// localhost do not work.
    pub fn prepare<'a>(
        &self,
        options: impl IntoIterator<Item = &'a ProxyOptions>,
    ) -> Result<(), SysctlError> {
        if options.into_iter().any(needs_route_localnet) {
            tracing::info!(
                "NodePorts answer on 127.0.0.1: route_localnet must be 1 (turn localhost NodePorts off with --iptables-localhost-nodeports=false, or keep 127.0.0.0/8 out of --nodeport-addresses)"
            );
            if let Some(before) = self.ensure(ROUTE_LOCALNET, 1)? {
                tracing::info!(name = ROUTE_LOCALNET, before, after = 1, "sysctl changed");
            }
        }
        if let Some(warning) = self.bridge_warning() {
            tracing::warn!("{warning}");
        }
        Ok(())
    }

    /// The warning due when `br_netfilter` is loaded and `bridge-nf-call-iptables` is not 1.
    pub fn bridge_warning(&self) -> Option<String> {
        let value = self.get(BRIDGE_NF_CALL_IPTABLES).ok()?;
        (value != 1).then(|| {
            format!(
                "{BRIDGE_NF_CALL_IPTABLES} is {value} although br_netfilter is loaded: traffic bridged between pods bypasses iptables, and Services may not work for it"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables_model::Cidr;

    fn options(ipv6: bool, localhost: bool, cidrs: Option<&[&str]>) -> ProxyOptions {
        let ip = if ipv6 { "fd00::2" } else { "192.168.0.2" };
        let mut options = ProxyOptions::new("node-a", ip.parse().unwrap());
        options.localhost_node_ports = localhost;
        options.node_port_addresses =
            cidrs.map(|c| c.iter().map(|c| c.parse::<Cidr>().unwrap()).collect());
        options
    }

    #[test]
    fn route_localnet_is_needed_as_kube_proxy_decides() {
        assert!(needs_route_localnet(&options(false, true, None)));
        assert!(needs_route_localnet(&options(
            false,
            true,
            Some(&["127.0.0.0/8"])
        )));
        assert!(needs_route_localnet(&options(
            false,
            true,
            Some(&["127.0.0.1/32"])
        )));
        assert!(needs_route_localnet(&options(
            false,
            true,
            Some(&["10.0.0.0/8", "0.0.0.0/1"])
        )));
        assert!(!needs_route_localnet(&options(
            false,
            true,
            Some(&["10.0.0.0/8"])
        )));
        assert!(!needs_route_localnet(&options(false, false, None)));
        assert!(!needs_route_localnet(&options(true, true, None)));
    }

    fn in_dir(values: &[(&str, &str)]) -> (tempfile::TempDir, Sysctls) {
        let dir = tempfile::tempdir().unwrap();
        for (name, value) in values {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, value).unwrap();
        }
        let sysctls = Sysctls::at(dir.path());
        (dir, sysctls)
    }

    #[test]
    fn route_localnet_is_written_only_when_it_differs() {
        let (_dir, sysctls) = in_dir(&[(ROUTE_LOCALNET, "0\n")]);
        assert_eq!(sysctls.ensure(ROUTE_LOCALNET, 1).unwrap(), Some(0));
        assert_eq!(sysctls.get(ROUTE_LOCALNET).unwrap(), 1);
        assert_eq!(sysctls.ensure(ROUTE_LOCALNET, 1).unwrap(), None);
        sysctls.prepare([&options(false, true, None)]).unwrap();
        // Needed but absent (no IPv4 in the kernel): an error naming the setting.
        let (_dir, missing) = in_dir(&[]);
        let error = missing
            .prepare([&options(false, true, None)])
            .unwrap_err()
            .to_string();
        assert!(error.contains(ROUTE_LOCALNET), "{error}");
        // Not needed: not touched.
        missing.prepare([&options(false, false, None)]).unwrap();
    }

    #[test]
    fn the_bridge_setting_is_warned_about_only_when_loaded_and_off() {
        let (_dir, off) = in_dir(&[(BRIDGE_NF_CALL_IPTABLES, "0\n")]);
        let warning = off.bridge_warning().unwrap();
        assert!(
            warning.contains("bridge-nf-call-iptables is 0"),
            "{warning}"
        );
        let (_dir, on) = in_dir(&[(BRIDGE_NF_CALL_IPTABLES, "1\n")]);
        assert_eq!(on.bridge_warning(), None);
        let (_dir, unloaded) = in_dir(&[]);
        assert_eq!(unloaded.bridge_warning(), None);
    }
}
