//! Zone membership on lower-case wire names, without allocating.

use dns_wire::NameRef;

/// A name in lower-case uncompressed wire form, on the stack.
#[derive(Clone, Copy)]
pub struct LowerName {
    wire: [u8; 256],
    len: usize,
}

impl std::fmt::Debug for LowerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LowerName").field(&self.as_wire()).finish()
    }
}

impl LowerName {
    /// `name` lower-cased.
    pub fn new(name: &NameRef<'_>) -> Self {
        let mut wire = [0u8; 256];
        // A question's name is almost always stored without compression: one copy.
        if let Some(uncompressed) = name.uncompressed()
            && let Some(dst) = wire.get_mut(..uncompressed.len())
        {
            dst.copy_from_slice(uncompressed);
            dst.make_ascii_lowercase();
            return Self {
                wire,
                len: uncompressed.len(),
            };
        }
        let mut len = 0;
        for label in name.labels() {
            let Some(dst) = wire.get_mut(len..len + 1 + label.len()) else {
                break;
            };
            if let Some((first, rest)) = dst.split_first_mut() {
                *first = label.len() as u8;
                rest.copy_from_slice(label);
            }
            len += 1 + label.len();
        }
        len += 1;
        if let Some(bytes) = wire.get_mut(..len) {
            bytes.make_ascii_lowercase();
        }
        Self { wire, len }
    }

    /// The wire bytes, root label included.
    pub fn as_wire(&self) -> &[u8] {
        self.wire.get(..self.len).unwrap_or_default()
    }

    /// The suffixes at each label boundary, longest first, ending with the root.
    pub fn suffixes(&self) -> impl Iterator<Item = &[u8]> {
        let wire = self.as_wire();
        let mut at = Some(0usize);
        std::iter::from_fn(move || {
            let start = at?;
            let suffix = wire.get(start..)?;
            at = match suffix.first() {
                Some(&0) | None => None,
                Some(&len) => Some(start + 1 + usize::from(len)),
            };
            Some(suffix)
        })
    }

    /// Whether this name is `zone` or below it.
    pub fn is_in(&self, zone: &Zone) -> bool {
        self.suffixes().any(|s| s == zone.as_wire())
    }
}

/// A zone in lower-case wire form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Zone(Vec<u8>);

impl Zone {
    /// Parses a presentation-form zone (`example.org` or `example.org.`).
    pub fn parse(text: &str) -> Result<Self, dns_wire::Error> {
        let name: dns_wire::Name = text.parse()?;
        Ok(Self(name.to_lowercase().as_wire().to_vec()))
    }

    /// The wire bytes.
    pub fn as_wire(&self) -> &[u8] {
        &self.0
    }
}

/// Whether `name` is in any of `zones`.
pub fn in_any(name: &LowerName, zones: &[Zone]) -> bool {
    zones.iter().any(|z| name.is_in(z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dns_wire::Name;

    #[test]
    fn membership_is_on_label_boundaries_and_ignores_case() {
        let name: Name = "WWW.Example.ORG.".parse().unwrap();
        let lower = LowerName::new(&name.as_ref());
        assert!(lower.is_in(&Zone::parse("example.org").unwrap()));
        assert!(lower.is_in(&Zone::parse(".").unwrap()));
        assert!(!lower.is_in(&Zone::parse("ample.org").unwrap()));
        assert_eq!(lower.suffixes().count(), 4);
    }
}
