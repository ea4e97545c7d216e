//! Which build of the iptables programs to run, and the program names that follow from it.

/// A build of the iptables programs. Debian and its derivatives install both backends as
/// `iptables-legacy` and `iptables-nft` (with `-save` and `-restore`, and `ip6tables-…` for
/// IPv6) and point `iptables` at one of them through the alternatives system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// `iptables`: whichever build the system's alternatives link points at.
    System,
    /// `iptables-legacy`: the kernel's x_tables.
    Legacy,
    /// `iptables-nft`: the iptables rules kept in nf_tables.
    Nft,
}

/// One of the three programs of a build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tool {
    /// `iptables`: one command per run.
    Iptables,
    /// `iptables-save`.
    Save,
    /// `iptables-restore`.
    Restore,
}

impl Backend {
    /// The program name of `tool` in this build, for IPv6 when `ipv6`: `iptables`,
    /// `ip6tables-legacy-restore`, `iptables-nft-save`, …
    pub(crate) fn program(self, ipv6: bool, tool: Tool) -> String {
        let family = if ipv6 { "ip6tables" } else { "iptables" };
        let build = match self {
            Self::System => "",
            Self::Legacy => "-legacy",
            Self::Nft => "-nft",
        };
        let tool = match tool {
            Tool::Iptables => "",
            Tool::Save => "-save",
            Tool::Restore => "-restore",
        };
        format!("{family}{build}{tool}")
    }
}

#[cfg(test)]
mod tests {
    use super::{Backend, Tool};

    #[test]
    fn program_names_follow_debians_alternatives() {
        assert_eq!(
            Backend::System.program(false, Tool::Restore),
            "iptables-restore"
        );
        assert_eq!(
            Backend::Legacy.program(true, Tool::Save),
            "ip6tables-legacy-save"
        );
        assert_eq!(Backend::Nft.program(false, Tool::Iptables), "iptables-nft");
        assert_eq!(Backend::System.program(true, Tool::Iptables), "ip6tables");
    }
}
