//! The local-traffic detector as nftables matches (`IfLocalNFT`, `IfNotLocalNFT`). By CIDR:
//! `ip saddr 10.0.0.0/8`; by bridge or interface prefix: `iifname cni0`, `iifname veth*`,
//! unquoted, as kube-proxy writes them since 1.34 (kubernetes PR 134024, which replaced the
//! `iif NAME` of earlier releases: nft refuses `iif` for an interface that does not exist yet
//! and for a wildcard). A name with `@` is written quoted: unquoted, nft reads `@` as the start
//! of a payload expression and refuses the whole transaction.

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
        let quote = name.contains('@');
        let mut text = String::with_capacity(name.len() + 3);
        if quote {
            text.push('"');
        }
        text.push_str(name);
        if wildcard {
            text.push('*');
        }
        if quote {
            text.push('"');
        }
        Ok((
            RuleText::new().word("iifname").checked(&text),
            RuleText::new().word("iifname").word("!=").checked(&text),
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

#[cfg(test)]
mod tests {
    use iptables_model::kube::InterfaceName;

    use super::*;

    fn texts(detector: &LocalDetector) -> (String, String) {
        let (local, other) = matches(detector, Family::Ip).unwrap().unwrap();
        (local.as_str().into(), other.as_str().into())
    }

    /// kubernetes PR 134024: `iifname`, the name bare, `*` for a prefix (its example:
    /// `iif != azv*` became `iifname != azv*`).
    #[test]
    fn interfaces_are_matched_by_name_as_kube_proxy_writes_them() {
        let prefix = LocalDetector::InterfaceNamePrefix(InterfaceName::prefix("azv").unwrap());
        assert_eq!(
            texts(&prefix),
            ("iifname azv*".into(), "iifname != azv*".into())
        );
        let bridge = LocalDetector::BridgeInterface(InterfaceName::new("cbr0").unwrap());
        assert_eq!(
            texts(&bridge),
            ("iifname cbr0".into(), "iifname != cbr0".into())
        );
        // nft cannot read `@` unquoted.
        let at = LocalDetector::BridgeInterface(InterfaceName::new("br@0").unwrap());
        assert_eq!(texts(&at).0, "iifname \"br@0\"");
        // Bytes nft syntax gives a meaning to are refused.
        let bad = LocalDetector::BridgeInterface(InterfaceName::new("br;0").unwrap());
        assert!(matches(&bad, Family::Ip).is_err());
    }
}
