//! The node's interface addresses, over netlink (rtnetlink): what `--nodeport-addresses` is
//! matched against (kube-proxy reads them with `net.InterfaceAddrs` at every sync).

use std::io;
use std::net::IpAddr;

use futures::TryStreamExt as _;
use rtnetlink::packet_route::address::{AddressAttribute, AddressMessage};

/// Every address of every interface of this network namespace, sorted, without duplicates.
///
/// # Errors
///
/// The netlink socket could not be opened or the dump failed.
pub async fn interface_addresses() -> io::Result<Vec<IpAddr>> {
    let (connection, handle, _) = rtnetlink::new_connection()?;
    let task = tokio::spawn(connection);
    let dump = handle
        .address()
        .get()
        .execute()
        .try_collect::<Vec<_>>()
        .await;
    task.abort();
    let mut addresses: Vec<IpAddr> = dump
        .map_err(io::Error::other)?
        .iter()
        .filter_map(local_address)
        .collect();
    addresses.sort_unstable();
    addresses.dedup();
    Ok(addresses)
}

/// The message's local address: `IFA_LOCAL` where present (IPv4; `IFA_ADDRESS` is then the
/// peer of a point-to-point link), else `IFA_ADDRESS`.
fn local_address(message: &AddressMessage) -> Option<IpAddr> {
    let find = |local: bool| {
        message.attributes.iter().find_map(|a| match a {
            AddressAttribute::Local(ip) if local => Some(*ip),
            AddressAttribute::Address(ip) if !local => Some(*ip),
            _ => None,
        })
    };
    find(true).or_else(|| find(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Listing addresses needs no privilege; every namespace has a loopback interface, up
    /// wherever this test runs (the kernel adds 127.0.0.1 and ::1 when `lo` comes up).
    #[tokio::test]
    async fn the_loopback_address_is_listed() {
        let addresses = interface_addresses().await.unwrap();
        assert!(
            addresses.contains(&IpAddr::from([127, 0, 0, 1])),
            "{addresses:?}"
        );
        assert!(addresses.windows(2).all(|w| w[0] < w[1]), "{addresses:?}");
    }

    /// A point-to-point IPv4 address: `IFA_ADDRESS` is the peer, `IFA_LOCAL` ours.
    #[test]
    fn the_local_attribute_wins_over_the_peer() {
        let mut message = AddressMessage::default();
        message.attributes = vec![
            AddressAttribute::Address(IpAddr::from([10, 0, 0, 2])),
            AddressAttribute::Local(IpAddr::from([10, 0, 0, 1])),
        ];
        assert_eq!(local_address(&message), Some(IpAddr::from([10, 0, 0, 1])));
        message.attributes.remove(1);
        assert_eq!(local_address(&message), Some(IpAddr::from([10, 0, 0, 2])));
    }
}
