//! The local-traffic detector: how the rules tell traffic from this node's pods from other
//! traffic (kube-proxy's `--detect-local-mode`; `docs/iptables.md` §3). Two rules use it: the
//! masquerade rule of a Service's internal chain (traffic from outside the pods is
//! masqueraded) and, with `externalTrafficPolicy: Local`, the rule that sends pods' traffic to
//! an external address through the cluster-wide chain.

use alloc::string::String;
use core::fmt;

use crate::addr::Cidr;

/// How traffic from this node's pods is recognised.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum LocalDetector {
    /// Not at all: no rule depends on where traffic comes from (kube-proxy's no-op detector,
    /// when neither a cluster CIDR nor another mode is configured).
    #[default]
    None,
    /// By source address in this CIDR (`ClusterCIDR`, and `NodeCIDR` with the Node's pod CIDR
    /// of the family): `-s CIDR`.
    Cidr(Cidr),
    /// By the bridge the pods' traffic arrives on (`BridgeInterface`): `-i NAME`.
    BridgeInterface(InterfaceName),
    /// By the name prefix of the interfaces the pods' traffic arrives on
    /// (`InterfaceNamePrefix`): `-i PREFIX+`.
    InterfaceNamePrefix(InterfaceName),
}

impl LocalDetector {
    /// Whether the detector tells anything apart (kube-proxy's `IsImplemented`).
    pub fn is_implemented(&self) -> bool {
        !matches!(self, LocalDetector::None)
    }
}

/// A network interface name as `iptables -i` takes it: 1 to 15 bytes (the kernel's `IFNAMSIZ`
/// less its NUL), none of them a space, a control character, `/`, `:` or `+`. So a name can
/// never change the shape of the rule it is written into, and the kernel can hold it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InterfaceName(String);

/// Why a string is not an [`InterfaceName`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InterfaceNameError {
    /// The name is empty.
    Empty,
    /// The name is longer than 15 bytes.
    TooLong(usize),
    /// The name holds a character interface names cannot have.
    Character(char),
}

impl fmt::Display for InterfaceNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("an interface name cannot be empty"),
            Self::TooLong(len) => write!(
                f,
                "an interface name (with the `+` of a prefix) has at most \
                 {MAX_INTERFACE_NAME} bytes, not {len}"
            ),
            Self::Character(c) => write!(f, "an interface name cannot hold {c:?}"),
        }
    }
}

impl core::error::Error for InterfaceNameError {}

/// The longest interface name the kernel holds (`IFNAMSIZ` - 1).
pub const MAX_INTERFACE_NAME: usize = 15;

impl InterfaceName {
    /// `name`, if it is a valid interface name.
    pub fn new(name: &str) -> Result<Self, InterfaceNameError> {
        if name.is_empty() {
            return Err(InterfaceNameError::Empty);
        }
        if let Some(c) = name
            .chars()
            .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | ':' | '+' | '!'))
        {
            return Err(InterfaceNameError::Character(c));
        }
        if name.len() > MAX_INTERFACE_NAME {
            return Err(InterfaceNameError::TooLong(name.len()));
        }
        Ok(Self(name.into()))
    }

    /// `prefix`, if `prefix+` is a valid interface pattern for `iptables -i` (so at most 14
    /// bytes: the `+` is the 15th).
    pub fn prefix(prefix: &str) -> Result<Self, InterfaceNameError> {
        let name = Self::new(prefix)?;
        if prefix.len() >= MAX_INTERFACE_NAME {
            return Err(InterfaceNameError::TooLong(prefix.len() + 1));
        }
        Ok(name)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InterfaceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_are_what_the_kernel_and_iptables_accept() {
        for good in [
            "cbr0",
            "cni0",
            "veth",
            "eth0.100",
            "a-b_c",
            "x23456789012345",
        ] {
            assert_eq!(InterfaceName::new(good).unwrap().as_str(), good);
        }
        assert_eq!(InterfaceName::new(""), Err(InterfaceNameError::Empty));
        assert_eq!(
            InterfaceName::new("x234567890123456"),
            Err(InterfaceNameError::TooLong(16))
        );
        for (bad, c) in [
            ("cni0\n-A X", '\n'),
            ("a b", ' '),
            ("a/b", '/'),
            ("veth+", '+'),
            ("!x", '!'),
            ("a:1", ':'),
        ] {
            assert_eq!(
                InterfaceName::new(bad),
                Err(InterfaceNameError::Character(c))
            );
        }
        assert!(InterfaceName::prefix("x2345678901234").is_ok());
        assert_eq!(
            InterfaceName::prefix("x23456789012345"),
            Err(InterfaceNameError::TooLong(16))
        );
        assert!(!LocalDetector::None.is_implemented());
        let bridge = LocalDetector::BridgeInterface(InterfaceName::new("cbr0").unwrap());
        assert!(bridge.is_implemented());
    }
}
