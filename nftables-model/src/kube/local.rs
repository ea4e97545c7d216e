//! The local-traffic detector as nftables matches (`IfLocalNFT`, `IfNotLocalNFT`). By CIDR:
//! `ip saddr 10.0.0.0/8`; by bridge or interface prefix: `iifname "cni0"`, `iifname
//! "veth*"`. kube-proxy writes `iif NAME` there; `iifname` with a quoted name is what nft
//! accepts for an interface that does not exist yet and for a wildcard.

use alloc::string::String;

use iptables_model::kube::LocalDetector;

use crate::error::Error;
use crate::object::Family;
use crate::rule::RuleText;

/// The detector's matches: (traffic from a local pod, traffic from elsewhere), or `None`
/// when it detects nothing.
pub(crate) fn matches(
    detector: &LocalDetector,
    family: Family,
) -> Result<Option<(RuleText, RuleText)>, Error> {
    let fam = family.keyword();
    let interface = |name: &str, wildcard: bool| -> Result<(RuleText, RuleText), Error> {
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@'))
        {
            return Err(Error::Interface(name.into()));
        }
        let mut quoted = String::with_capacity(name.len() + 3);
        quoted.push('"');
        quoted.push_str(name);
        if wildcard {
            quoted.push('*');
        }
        quoted.push('"');
        Ok((
            RuleText::new().word("iifname").checked(&quoted),
            RuleText::new().word("iifname").word("!=").checked(&quoted),
        ))
    };
    Ok(match detector {
        LocalDetector::None => None,
        LocalDetector::Cidr(cidr) => Some((
            RuleText::new().word(fam).word("saddr").cidr(*cidr),
            RuleText::new()
                .word(fam)
                .word("saddr")
                .word("!=")
                .cidr(*cidr),
        )),
        LocalDetector::BridgeInterface(name) => Some(interface(name.as_str(), false)?),
        LocalDetector::InterfaceNamePrefix(name) => Some(interface(name.as_str(), true)?),
    })
}
