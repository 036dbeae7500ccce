//! Values by printed name, where a name met with two different values keeps
//! none. rustc prints some different types alike (a closure's type without
//! its generic arguments, so a generic function's closure inlined at two
//! types is two types under one `{closure@..}`): what is known by such a
//! name (its layout, its captures, its body) is known only if every
//! listing agrees.

use std::collections::{BTreeMap, BTreeSet};

/// Values by name, and the names seen with two different values.
#[derive(Debug)]
pub(crate) struct Unambiguous<V> {
    values: BTreeMap<String, V>,
    ambiguous: BTreeSet<String>,
}

impl<V> Default for Unambiguous<V> {
    fn default() -> Self {
        Unambiguous {
            values: BTreeMap::new(),
            ambiguous: BTreeSet::new(),
        }
    }
}

impl<V: PartialEq> Unambiguous<V> {
    /// Records `value` under `name`: kept if it is the first, ignored if it
    /// equals the one kept, and the name made ambiguous otherwise.
    pub(crate) fn insert(&mut self, name: String, value: V) {
        match self.values.get(&name) {
            Some(first) if *first != value => {
                self.ambiguous.insert(name);
            }
            Some(_) => {}
            None => {
                self.values.insert(name, value);
            }
        }
    }

    /// The names recorded so far, ambiguous ones included.
    pub(crate) fn names(&self) -> impl Iterator<Item = &String> {
        self.values.keys()
    }

    /// The values of the names no two values share, and the names that
    /// two did.
    pub(crate) fn into_parts(self) -> (BTreeMap<String, V>, BTreeSet<String>) {
        let Unambiguous {
            mut values,
            ambiguous,
        } = self;
        values.retain(|name, _| !ambiguous.contains(name));
        (values, ambiguous)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_two_values_keeps_none() {
        let mut m = Unambiguous::default();
        m.insert("a".to_string(), 1);
        m.insert("a".to_string(), 1);
        m.insert("b".to_string(), 1);
        m.insert("b".to_string(), 2);
        m.insert("b".to_string(), 1);
        assert_eq!(m.names().collect::<Vec<_>>(), ["a", "b"]);
        let (values, ambiguous) = m.into_parts();
        assert_eq!(
            values.into_iter().collect::<Vec<_>>(),
            [("a".to_string(), 1)]
        );
        assert_eq!(ambiguous.into_iter().collect::<Vec<_>>(), ["b"]);
    }
}
