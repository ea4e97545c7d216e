//! Routing a query to a server block: the block whose zone is the longest suffix of the
//! lower-cased query name wins; DS queries go to the parent side (the shortest matching
//! zone, as CoreDNS's server does); nothing matching means REFUSED.

use dns_wire::Type;

use crate::query::names::{LowerName, Zone};

/// Zones in lower-case wire form, each with its target.
#[derive(Debug)]
pub struct Routes<T> {
    zones: Vec<(Zone, T)>,
}

impl<T> Default for Routes<T> {
    fn default() -> Self {
        Self { zones: Vec::new() }
    }
}

impl<T> Routes<T> {
    /// Adds `zone` (presentation form, e.g. `example.org.`) unless it is already routed;
    /// returns whether it was added.
    pub fn insert(&mut self, zone: &str, target: T) -> Result<bool, dns_wire::Error> {
        let wire = Zone::parse(zone)?;
        if self.zones.iter().any(|(z, _)| *z == wire) {
            return Ok(false);
        }
        self.zones.push((wire, target));
        Ok(true)
    }

    /// The targets in insertion order.
    pub fn targets(&self) -> impl Iterator<Item = &T> {
        self.zones.iter().map(|(_, t)| t)
    }

    /// The target for a query name and type.
    pub fn find(&self, name: &LowerName, qtype: Type) -> Option<&T> {
        let mut found = None;
        for suffix in name.suffixes() {
            if let Some((_, target)) = self.zones.iter().find(|(z, _)| z.as_wire() == suffix) {
                if qtype != Type::DS {
                    return Some(target);
                }
                found = Some(target);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dns_wire::Name;

    fn routes() -> Routes<&'static str> {
        let mut r = Routes::default();
        for (z, t) in [
            (".", "root"),
            ("example.org.", "org"),
            ("a.example.org.", "a"),
        ] {
            r.insert(z, t).unwrap();
        }
        r
    }

    fn lower(name: &str) -> LowerName {
        LowerName::new(&name.parse::<Name>().unwrap().as_ref())
    }

    fn find<'r>(r: &'r Routes<&'static str>, name: &str, qtype: Type) -> Option<&'r &'static str> {
        r.find(&lower(name), qtype)
    }

    #[test]
    fn longest_suffix_wins_case_insensitively() {
        let r = routes();
        assert_eq!(find(&r, "X.A.Example.ORG.", Type::A), Some(&"a"));
        assert_eq!(find(&r, "b.example.org.", Type::A), Some(&"org"));
        assert_eq!(find(&r, "example.com.", Type::A), Some(&"root"));
        assert_eq!(find(&r, "xexample.org.", Type::A), Some(&"root"));
    }

    #[test]
    fn ds_goes_to_the_parent_side() {
        let r = routes();
        assert_eq!(find(&r, "a.example.org.", Type::DS), Some(&"root"));
    }

    #[test]
    fn nothing_matches_without_a_root_zone() {
        let mut r = Routes::default();
        r.insert("example.org", 1).unwrap();
        assert!(!r.insert("EXAMPLE.org.", 2).unwrap());
        assert_eq!(r.find(&lower("example.com."), Type::A), None);
        assert_eq!(r.find(&lower("example.org."), Type::A), Some(&1));
    }
}
