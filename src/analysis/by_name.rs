//! A list's items looked up by a name: the analysis' lists (verdicts,
//! pairs, studies by workload; a report's workloads; the reads'
//! waterfalls) are searched by name for each of thousands of variants.

use std::collections::HashMap;

/// The positions of a list's items by a name (a workload's, a table's),
/// each name's in the list's order: a lookup by name takes one hash and
/// that name's few items, not a pass over every item of every name.
#[derive(Debug, Clone, Default)]
pub(crate) struct ByName(HashMap<String, Vec<usize>>);

impl ByName {
    pub(crate) fn of_list<T>(items: &[T], name: impl Fn(&T) -> &str) -> ByName {
        let mut at: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, x) in items.iter().enumerate() {
            match at.get_mut(name(x)) {
                Some(is) => is.push(i),
                None => {
                    at.insert(name(x).to_string(), vec![i]);
                }
            }
        }
        ByName(at)
    }

    /// The items of `items` (the list this was built of) named `name`.
    pub(crate) fn of<'a, T>(
        &'a self,
        name: &str,
        items: &'a [T],
    ) -> impl Iterator<Item = &'a T> + 'a {
        (self.0.get(name).map_or(&[][..], Vec::as_slice).iter()).filter_map(|&i| items.get(i))
    }
}
