//! Removing the rules of a proxy mode: all of them on `--cleanup`, and the other mode's at
//! start, so that a node switched from one mode to the other keeps no stale rules (kube-proxy's
//! `cleanupLeftovers` in `cmd/kube-proxy/app/server_linux.go`: the nftables mode removes the
//! iptables mode's chains, the iptables mode deletes the nftables tables).

use iptables_exec::{Backend, ExecError, Iptables, Nft};

use crate::chains;
use crate::nftables::{FAMILIES, TABLE};

/// Removes the iptables mode's jumps and chains of each family in `ipv6` (`true`: IPv6).
///
/// # Errors
///
/// The first family whose rules could not be removed.
pub async fn remove_iptables(ipv6: &[bool], backend: Backend) -> Result<(), ExecError> {
    for &family in ipv6 {
        chains::cleanup(&Iptables::new(family, backend)).await?;
    }
    Ok(())
}

/// Deletes the nftables mode's `kube-proxy` table of both families; returns the families
/// that had one.
///
/// # Errors
///
/// `nft` failed other than for a missing table.
pub async fn remove_nftables() -> Result<Vec<&'static str>, ExecError> {
    let nft = Nft::new();
    let mut deleted = Vec::new();
    for family in FAMILIES {
        if nft.delete_table(family, TABLE).await? {
            deleted.push(family);
        }
    }
    Ok(deleted)
}

/// Removes what the iptables mode left in both families; a failure (no `ip6tables`, say) is
/// logged.
pub async fn remove_iptables_leftovers(backend: Backend) {
    for ipv6 in [false, true] {
        if let Err(error) = remove_iptables(&[ipv6], backend).await {
            tracing::warn!(ipv6, %error, "cannot remove the iptables mode's chains");
        }
    }
}

/// Deletes what the nftables mode left; a failure (no `nft`, say) is logged.
pub async fn remove_nftables_leftovers() {
    match remove_nftables().await {
        Ok(deleted) if !deleted.is_empty() => {
            tracing::info!(?deleted, "the nftables mode's tables deleted");
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "cannot delete the nftables mode's tables"),
    }
}
