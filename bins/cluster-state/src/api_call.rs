//! The requests a binary makes to the API server, named as RBAC rules name them, so that its
//! permissions can be derived from the code that makes the requests.

use std::fmt;

/// One kind of request to the API server: a verb on a resource of an API group, as a
/// `ClusterRole` or `Role` rule grants it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiCall {
    /// The RBAC verb: `get`, `list`, `watch`, `create`, `update`, `patch`.
    pub verb: &'static str,
    /// The API group (`""` for the core group).
    pub group: &'static str,
    /// The resource (`services`, `leases`, …).
    pub resource: &'static str,
    /// The subresource (`status`), if any.
    pub subresource: Option<&'static str>,
}

impl ApiCall {
    /// The resource as an RBAC rule writes it: `ingresses` or `ingresses/status`.
    pub fn rbac_resource(&self) -> String {
        match self.subresource {
            Some(sub) => format!("{}/{sub}", self.resource),
            None => self.resource.to_owned(),
        }
    }
}

/// `verb group/resource[/subresource]`, with `core` for the core group.
impl fmt::Display for ApiCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() {
            "core"
        } else {
            self.group
        };
        write!(f, "{} {group}/{}", self.verb, self.rbac_resource())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_print_as_rbac_rules_name_them() {
        let status = ApiCall {
            verb: "patch",
            group: "networking.k8s.io",
            resource: "ingresses",
            subresource: Some("status"),
        };
        assert_eq!(
            status.to_string(),
            "patch networking.k8s.io/ingresses/status"
        );
        let list = ApiCall {
            verb: "list",
            group: "",
            resource: "services",
            subresource: None,
        };
        assert_eq!(list.to_string(), "list core/services");
    }
}
