//! The interface that carries the local IPs, over netlink (rtnetlink): a `dummy` link named
//! by `-interfacename` as node-cache creates, so the kernel accepts packets for those IPs
//! locally. Where the kernel has no dummy link type, the fallback puts the addresses on the
//! loopback interface `lo` instead (local delivery works the same; teardown then removes the
//! addresses alone).

use std::io;
use std::net::IpAddr;

use futures::TryStreamExt as _;
use rtnetlink::packet_route::address::AddressMessage;
use rtnetlink::{Handle, LinkDummy, LinkUnspec};

/// The loopback interface, used when dummy links are not available.
pub const FALLBACK: &str = "lo";

/// A netlink failure, with what was being done.
#[derive(Debug, thiserror::Error)]
#[error("{action}: {source}")]
pub struct InterfaceError {
    /// What failed (`adding 169.254.20.10 to nodelocaldns`).
    pub action: String,
    /// The netlink error.
    pub source: rtnetlink::Error,
}

impl InterfaceError {
    /// The `map_err` adapter of a netlink request doing `action`.
    fn doing(action: impl Into<String>) -> impl FnOnce(rtnetlink::Error) -> Self {
        let action = action.into();
        move |source| Self { action, source }
    }
}

/// Where the local IPs live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// On the dummy link of that name (deleted at teardown).
    Dummy(String),
    /// On [`FALLBACK`] (only the addresses are removed at teardown).
    Loopback,
}

/// Sets up and removes the local IPs.
pub struct Interface {
    handle: Handle,
    name: String,
    ips: Vec<IpAddr>,
    placement: Option<Placement>,
}

impl Interface {
    /// Opens a netlink connection (its task runs on the current runtime).
    pub fn connect(name: &str, ips: &[IpAddr]) -> io::Result<Self> {
        let (connection, handle, _) = rtnetlink::new_connection()?;
        tokio::spawn(connection);
        Ok(Self {
            handle,
            name: name.to_owned(),
            ips: ips.to_vec(),
            placement: None,
        })
    }

    /// Where the IPs were put by the last [`Interface::ensure`].
    pub fn placement(&self) -> Option<&Placement> {
        self.placement.as_ref()
    }

    /// Makes sure the link exists, is up and carries every local IP; returns whether
    /// anything had to be (re)created. The first call chooses the dummy link or, when the
    /// kernel refuses to create one, the loopback fallback.
    pub async fn ensure(&mut self) -> Result<bool, InterfaceError> {
        let mut changed = false;
        let index = match self.placement.clone() {
            Some(Placement::Loopback) => self.index(FALLBACK).await?,
            Some(Placement::Dummy(name)) => match self.find(&name).await? {
                Some(index) => index,
                None => {
                    changed = true;
                    self.create_dummy().await?
                }
            },
            None => {
                let (placement, index) = match self.find(&self.name).await? {
                    Some(index) => (Placement::Dummy(self.name.clone()), index),
                    None => match self.create_dummy().await {
                        Ok(index) => {
                            changed = true;
                            (Placement::Dummy(self.name.clone()), index)
                        }
                        Err(e) => {
                            tracing::warn!(
                                "no dummy link {} ({e}); putting the local IPs on {FALLBACK}",
                                self.name
                            );
                            (Placement::Loopback, self.index(FALLBACK).await?)
                        }
                    },
                };
                self.placement = Some(placement);
                index
            }
        };
        for &ip in &self.ips {
            if self.address(index, ip).await?.is_none() {
                let prefix = full_prefix(ip);
                self.handle
                    .address()
                    .add(index, ip, prefix)
                    .execute()
                    .await
                    .map_err(InterfaceError::doing(format!(
                        "adding {ip}/{prefix} to {}",
                        self.link_name()
                    )))?;
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Deletes the dummy link, or the local IPs from the loopback interface.
    pub async fn teardown(&mut self) -> Result<(), InterfaceError> {
        match self.placement.take() {
            None => Ok(()),
            Some(Placement::Dummy(name)) => {
                let Some(index) = self.find(&name).await? else {
                    return Ok(());
                };
                self.handle
                    .link()
                    .del(index)
                    .execute()
                    .await
                    .map_err(InterfaceError::doing(format!("deleting link {name}")))
            }
            Some(Placement::Loopback) => {
                let index = self.index(FALLBACK).await?;
                for &ip in &self.ips {
                    if let Some(message) = self.address(index, ip).await? {
                        self.handle.address().del(message).execute().await.map_err(
                            InterfaceError::doing(format!("deleting {ip} from {FALLBACK}")),
                        )?;
                    }
                }
                Ok(())
            }
        }
    }

    fn link_name(&self) -> &str {
        match &self.placement {
            Some(Placement::Loopback) => FALLBACK,
            _ => &self.name,
        }
    }

    /// Creates the dummy link, up, and returns its index.
    async fn create_dummy(&self) -> Result<u32, InterfaceError> {
        let action = || format!("creating dummy link {}", self.name);
        self.handle
            .link()
            .add(LinkDummy::new(&self.name).up().build())
            .execute()
            .await
            .map_err(InterfaceError::doing(action()))?;
        let index = self.index(&self.name).await?;
        self.handle
            .link()
            .set(LinkUnspec::new_with_index(index).up().build())
            .execute()
            .await
            .map_err(InterfaceError::doing(action()))?;
        Ok(index)
    }

    /// The index of link `name`, which must exist.
    async fn index(&self, name: &str) -> Result<u32, InterfaceError> {
        self.find(name).await?.ok_or_else(|| InterfaceError {
            action: format!("finding link {name}"),
            source: rtnetlink::Error::RequestFailed,
        })
    }

    /// The index of link `name`, `None` if there is none.
    async fn find(&self, name: &str) -> Result<Option<u32>, InterfaceError> {
        let request = self.handle.link().get().match_name(name.to_owned());
        match request.execute().try_next().await {
            Ok(link) => Ok(link.map(|l| l.header.index)),
            Err(rtnetlink::Error::NetlinkError(e)) if e.raw_code() == -ENODEV => Ok(None),
            Err(source) => Err(InterfaceError {
                action: format!("looking up link {name}"),
                source,
            }),
        }
    }

    /// The address message of `ip` on link `index`, if present.
    async fn address(
        &self,
        index: u32,
        ip: IpAddr,
    ) -> Result<Option<AddressMessage>, InterfaceError> {
        self.handle
            .address()
            .get()
            .set_link_index_filter(index)
            .set_address_filter(ip)
            .execute()
            .try_next()
            .await
            .map_err(InterfaceError::doing(format!(
                "listing the addresses of link {index}"
            )))
    }
}

/// `ENODEV`: the kernel's answer for a link name it does not know.
const ENODEV: i32 = 19;

/// A host prefix: 32 for IPv4, 128 for IPv6.
fn full_prefix(ip: IpAddr) -> u8 {
    match ip {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}
