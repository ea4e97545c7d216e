//! A rule's criteria: inline up to a typical rule's count, on the heap beyond.
//!
//! kube-proxy's rules carry at most six criteria (`-m comment --comment C -m tcp -p tcp -d IP
//! --dport P`), so a parsed ruleset allocates nothing for its rules' criteria; a longer rule
//! moves them to a vector.

use alloc::vec::Vec;
use core::hash::{Hash, Hasher};
use core::ops::{Deref, DerefMut};

use super::Spec;

/// How many criteria a rule keeps without an allocation.
pub const INLINE_SPECS: usize = 6;

/// The criteria of a rule, in written order: a slice of [`Spec`]s, stored inline up to
/// [`INLINE_SPECS`] and on the heap beyond. It compares and hashes as its slice.
#[derive(Clone, Debug)]
pub struct Specs<'a>(Storage<'a>);

#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // inline is the point: no allocation per rule
enum Storage<'a> {
    Inline(heapless::Vec<Spec<'a>, INLINE_SPECS, u8>),
    Heap(Vec<Spec<'a>>),
}

impl<'a> Specs<'a> {
    /// No criteria.
    pub const fn new() -> Self {
        Self(Storage::Inline(heapless::Vec::new()))
    }

    /// Adds `spec` after the others (moving them to the heap past [`INLINE_SPECS`]).
    pub fn push(&mut self, spec: Spec<'a>) {
        match &mut self.0 {
            Storage::Heap(specs) => specs.push(spec),
            Storage::Inline(inline) => {
                if let Err(spec) = inline.push(spec) {
                    let mut specs = Vec::with_capacity(2 * INLINE_SPECS);
                    specs.extend(core::mem::take(inline));
                    specs.push(spec);
                    self.0 = Storage::Heap(specs);
                }
            }
        }
    }
}

impl Default for Specs<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Deref for Specs<'a> {
    type Target = [Spec<'a>];

    fn deref(&self) -> &[Spec<'a>] {
        match &self.0 {
            Storage::Inline(specs) => specs,
            Storage::Heap(specs) => specs,
        }
    }
}

impl DerefMut for Specs<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match &mut self.0 {
            Storage::Inline(specs) => specs,
            Storage::Heap(specs) => specs,
        }
    }
}

impl PartialEq for Specs<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Specs<'_> {}

impl Hash for Specs<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl<'a> Extend<Spec<'a>> for Specs<'a> {
    fn extend<I: IntoIterator<Item = Spec<'a>>>(&mut self, specs: I) {
        for spec in specs {
            self.push(spec);
        }
    }
}

impl<'a> FromIterator<Spec<'a>> for Specs<'a> {
    fn from_iter<I: IntoIterator<Item = Spec<'a>>>(specs: I) -> Self {
        let mut all = Self::new();
        all.extend(specs);
        all
    }
}

impl<'a> From<Vec<Spec<'a>>> for Specs<'a> {
    fn from(specs: Vec<Spec<'a>>) -> Self {
        specs.into_iter().collect()
    }
}

impl<'s, 'a> IntoIterator for &'s Specs<'a> {
    type Item = &'s Spec<'a>;
    type IntoIter = core::slice::Iter<'s, Spec<'a>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for Specs<'a> {
    type Item = Spec<'a>;
    type IntoIter = SpecsIntoIter<'a>;

    fn into_iter(self) -> SpecsIntoIter<'a> {
        SpecsIntoIter(match self.0 {
            Storage::Inline(specs) => Iter::Inline(specs.into_iter()),
            Storage::Heap(specs) => Iter::Heap(specs.into_iter()),
        })
    }
}

/// The criteria of a [`Specs`], by value.
pub struct SpecsIntoIter<'a>(Iter<'a>);

#[allow(clippy::large_enum_variant)] // consumed in place, as `Storage` is stored
enum Iter<'a> {
    Inline(heapless::vec::IntoIter<Spec<'a>, INLINE_SPECS, u8>),
    Heap(alloc::vec::IntoIter<Spec<'a>>),
}

impl<'a> Iterator for SpecsIntoIter<'a> {
    type Item = Spec<'a>;

    fn next(&mut self) -> Option<Spec<'a>> {
        match &mut self.0 {
            Iter::Inline(specs) => specs.next(),
            Iter::Heap(specs) => specs.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;
    use crate::model::Module;

    #[test]
    fn criteria_past_the_inline_ones_move_to_the_heap_in_order() {
        let specs: Vec<Spec<'_>> = (0..=INLINE_SPECS as u8)
            .map(|n| Spec::Fragment {
                negated: n % 2 == 0,
            })
            .chain([Spec::Module(Module::Tcp)])
            .collect();
        let mut stored = Specs::new();
        for (n, spec) in specs.iter().enumerate() {
            stored.push(spec.clone());
            assert_eq!(matches!(stored.0, Storage::Inline(_)), n < INLINE_SPECS);
            assert_eq!(*stored, specs[..=n]);
        }
        assert_eq!(stored.clone().into_iter().collect::<Vec<_>>(), specs);
        assert_eq!(Specs::from(specs.clone()), stored);
        assert_eq!(Specs::from(vec![]), Specs::new());
    }
}
