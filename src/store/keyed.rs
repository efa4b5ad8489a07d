//! A run's figures keyed by metric: its values in key order beside a
//! sorted list of keys, the keys shared among the runs of a campaign (one
//! [`Arc`] per distinct key, made once when the campaign is read) and the
//! list shared among the runs read with the very same keys. A run read
//! back costs its values instead of a tree of owned names and labels;
//! 10^5 runs of a few dozen figures each fit in memory. It reads as the
//! `BTreeMap` it replaces: `get`, `keys`, iteration in key order, indexing.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::metric::MetricKey;

/// Values of one run keyed by metric, in key order.
#[derive(Clone, PartialEq)]
pub struct Keyed<V> {
    /// The keys, in key order: one list shared by the runs read with the
    /// very same keys (a variant's runs), so a run read costs its values
    /// alone (a key's address per figure was a third of a campaign's
    /// figures in memory).
    keys: Arc<[Arc<MetricKey>]>,
    values: Vec<V>,
}

impl<V> Default for Keyed<V> {
    fn default() -> Self {
        Keyed {
            keys: Arc::default(),
            values: Vec::new(),
        }
    }
}

/// As the `(key, value)` list it reads as.
impl<V: std::fmt::Debug> std::fmt::Debug for Keyed<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries: Vec<_> = self.keys.iter().zip(&self.values).collect();
        f.debug_struct("Keyed").field("entries", &entries).finish()
    }
}

impl<V> Keyed<V> {
    pub fn new() -> Self {
        Keyed::default()
    }

    fn find(&self, key: &MetricKey) -> Result<usize, usize> {
        self.keys.binary_search_by(|k| (**k).cmp(key))
    }

    pub fn get(&self, key: &MetricKey) -> Option<&V> {
        self.find(key).ok().map(|i| &self.values[i])
    }

    /// The value of the key named `name` without labels (a run's overall
    /// figure), found by name alone: no key is made to look it up, and
    /// only names are compared (a key without labels sorts first among
    /// those of its name). Asked of every run by several sections.
    pub fn plain(&self, name: &str) -> Option<&V> {
        let i = self.keys.partition_point(|k| k.name.as_str() < name);
        let k = self.keys.get(i)?;
        (k.name == name && k.labels.is_empty()).then(|| &self.values[i])
    }

    pub fn contains_key(&self, key: &MetricKey) -> bool {
        self.find(key).is_ok()
    }

    /// Sets the value of `key` (a key shared with other runs, or a new one).
    pub fn insert(&mut self, key: impl Into<Arc<MetricKey>>, value: V) -> Option<V> {
        let key = key.into();
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.values[i], value)),
            Err(i) => {
                // This run's own list of keys from now on.
                let mut keys = self.keys.to_vec();
                keys.insert(i, key);
                self.keys = keys.into();
                self.values.insert(i, value);
                None
            }
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &MetricKey> + '_ {
        self.keys.iter().map(|k| &**k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.values.iter()
    }

    /// `(key, value)` in key order, each key as the `Arc` the runs of a
    /// campaign share (told apart by its address).
    pub fn shared(&self) -> impl Iterator<Item = (&Arc<MetricKey>, &V)> + '_ {
        self.keys.iter().zip(&self.values)
    }

    /// The value at place `i` in key order (as [`Keyed::shared`] lists
    /// them).
    pub fn value_at(&self, i: usize) -> Option<&V> {
        self.values.get(i)
    }

    pub fn iter(&self) -> Iter<'_, V> {
        Iter(self.keys.iter().zip(self.values.iter()))
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Adds `later`'s entries, which win over equal keys of this one's.
    pub(super) fn absorb(&mut self, later: Keyed<V>) {
        if self.is_empty() {
            *self = later;
        } else {
            let mut all = std::mem::take(self).into_entries();
            all.extend(later.into_entries());
            *self = Keyed::from_entries(all);
        }
    }

    fn into_entries(self) -> Vec<(Arc<MetricKey>, V)> {
        self.keys.iter().cloned().zip(self.values).collect()
    }

    /// Builds from entries in any order (the last of equal keys wins),
    /// keeping no spare capacity.
    pub(super) fn from_entries(mut entries: Vec<(Arc<MetricKey>, V)>) -> Self {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.reverse();
        entries.dedup_by(|a, b| a.0 == b.0);
        entries.reverse();
        let (keys, values): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
        Keyed {
            keys: keys.into(),
            values,
        }
    }
}

/// How the last entries of a variant's run were put in key order: runs of
/// a variant list the same shared keys in the same order, so each but the
/// first is ordered by comparing addresses, not names.
#[derive(Default)]
struct Order {
    keys: Vec<Arc<MetricKey>>,
    /// Which entries to keep, in key order (the last of equal keys).
    keep: Vec<usize>,
    /// Their keys, in that order: the list the runs share.
    shared: Arc<[Arc<MetricKey>]>,
}

/// One run's entries gathered as they are read, then made into its
/// [`Keyed`] ordered as [`Keyed::from_entries`] orders them: by the order
/// the last entries of the run's variant took when they are the same keys
/// in the same order (each variant has its own keys, and the runs of a
/// campaign take turns among its variants); such runs share that order's
/// list of keys. The buffers are the gatherer's, kept from run to run: a
/// run read costs one allocation, its own values'.
pub(super) struct Gather<V> {
    orders: Vec<Order>,
    entries: Vec<(Arc<MetricKey>, V)>,
    slots: Vec<Option<V>>,
}

impl<V> Default for Gather<V> {
    fn default() -> Self {
        Gather {
            orders: Vec::new(),
            entries: Vec::new(),
            slots: Vec::new(),
        }
    }
}

impl<V> Gather<V> {
    pub(super) fn push(&mut self, key: Arc<MetricKey>, value: V) {
        self.entries.push((key, value));
    }

    /// The entries pushed since the last `take`, of a run of `variant`,
    /// in key order.
    pub(super) fn take(&mut self, variant: usize) -> Keyed<V> {
        if self.orders.len() <= variant {
            self.orders.resize_with(variant + 1, Order::default);
        }
        let entries = &self.entries;
        let order = &mut self.orders[variant];
        if !same_keys(&order.keys, entries.iter().map(|e| &e.0)) {
            order.keys.clear();
            order.keys.extend(entries.iter().map(|e| e.0.clone()));
            let mut idx: Vec<usize> = (0..entries.len()).collect();
            idx.sort_by(|&a, &b| entries[a].0.cmp(&entries[b].0));
            order.keep = (0..idx.len())
                .filter(|&n| {
                    idx.get(n + 1)
                        .map_or(true, |&j| entries[j].0 != entries[idx[n]].0)
                })
                .map(|n| idx[n])
                .collect();
            order.shared = order.keep.iter().map(|&i| entries[i].0.clone()).collect();
        }
        self.slots.clear();
        self.slots
            .extend(self.entries.drain(..).map(|(_, v)| Some(v)));
        let mut values = Vec::with_capacity(order.keep.len());
        values.extend(order.keep.iter().filter_map(|&i| self.slots[i].take()));
        Keyed {
            keys: order.shared.clone(),
            values,
        }
    }
}

/// The distinct keys of many runs' figures, in key order. Keys the runs
/// share (as a campaign read from the store shares them) are told apart
/// by address first, and a run listing the very keys of the run before
/// (as runs read from the store do) adds none: 10^5 runs of 34 figures
/// cost 34 comparisons of names and 3.4 million of addresses, no hashing.
pub fn distinct_keys<'a, V: 'a>(
    all: impl IntoIterator<Item = &'a Keyed<V>>,
) -> std::collections::BTreeSet<&'a MetricKey> {
    let mut seen: std::collections::HashSet<*const MetricKey> = Default::default();
    let mut out = std::collections::BTreeSet::new();
    let mut known = SameKeys::default();
    for keyed in all {
        if !known.slot(keyed).1 {
            continue;
        }
        for key in keyed.keys.iter() {
            if seen.insert(Arc::as_ptr(key)) {
                out.insert(&**key);
            }
        }
    }
    out
}

/// How many lists of keys [`SameKeys`] remembers: the variants a campaign's
/// runs take turns among (targets × workload variants), for most.
const REMEMBERED: usize = 16;

/// The lists of keys (the same shared `Arc`s, in the same order) of the
/// last runs asked about: a run with the very keys of one of them has what
/// was worked out for that run's keys. Runs read from the store share the
/// list itself, told by its address; others are compared key by key.
#[derive(Default)]
pub struct SameKeys {
    lists: Vec<Arc<[Arc<MetricKey>]>>,
    next: usize,
}

impl SameKeys {
    /// The slot (below [`REMEMBERED`]) of `keyed`'s keys, and whether they
    /// are new: not among the lists remembered, now remembered in that
    /// slot in place of the oldest.
    pub fn slot<V>(&mut self, keyed: &Keyed<V>) -> (usize, bool) {
        let same = |l: &Arc<[Arc<MetricKey>]>| {
            Arc::ptr_eq(l, &keyed.keys) || same_keys(l, keyed.keys.iter())
        };
        if let Some(i) = self.lists.iter().position(same) {
            return (i, false);
        }
        let i = if self.lists.len() < REMEMBERED {
            self.lists.push(keyed.keys.clone());
            self.lists.len() - 1
        } else {
            let i = self.next;
            self.next = (i + 1) % REMEMBERED;
            self.lists[i] = keyed.keys.clone();
            i
        };
        (i, true)
    }
}

/// One key sought in many runs' figures: found where it was in the run
/// before when the key there is the very key found then (runs read from
/// the store share their keys, told apart by address), else searched for.
/// The runs asked about must outlive it: it remembers an address.
pub struct Seek<'k> {
    key: &'k MetricKey,
    last: Option<(*const MetricKey, usize)>,
}

impl<'k> Seek<'k> {
    pub fn new(key: &'k MetricKey) -> Seek<'k> {
        Seek { key, last: None }
    }

    /// The value of the key in `keyed`.
    pub fn get<'v, V>(&mut self, keyed: &'v Keyed<V>) -> Option<&'v V> {
        if let Some((address, i)) = self.last {
            if let Some(k) = keyed.keys.get(i) {
                if std::ptr::eq(Arc::as_ptr(k), address) {
                    return keyed.values.get(i);
                }
            }
        }
        let i = keyed.find(self.key).ok()?;
        self.last = Some((Arc::as_ptr(&keyed.keys[i]), i));
        keyed.values.get(i)
    }
}

/// What was worked out for a run's list of keys, found again for a run
/// with the very same list ([`SameKeys`]): the runs of a pair read from
/// the store share theirs, so a section that places each run's figures
/// (10^5 runs, dozens of figures each) places them a few times, not once
/// per run and figure.
pub struct PerKeys<T> {
    known: SameKeys,
    made: Vec<Option<T>>,
}

impl<T> Default for PerKeys<T> {
    fn default() -> Self {
        PerKeys {
            known: SameKeys::default(),
            made: Vec::new(),
        }
    }
}

impl<T> PerKeys<T> {
    /// What `make` works out for `keyed`'s keys, made now if no run with
    /// its very keys was asked about lately.
    pub fn of<V>(&mut self, keyed: &Keyed<V>, make: impl FnOnce() -> T) -> &T {
        let (slot, new) = self.known.slot(keyed);
        if self.made.len() <= slot {
            self.made.resize_with(slot + 1, || None);
        }
        if new {
            self.made[slot] = None;
        }
        self.made[slot].get_or_insert_with(make)
    }
}

/// Whether `keys` are the very keys of `list` (by address), in its order.
fn same_keys<'a>(
    list: &[Arc<MetricKey>],
    keys: impl ExactSizeIterator<Item = &'a Arc<MetricKey>>,
) -> bool {
    keys.len() == list.len() && keys.zip(list).all(|(k, l)| Arc::ptr_eq(k, l))
}

/// Iterates `(&key, &value)` in key order, as a `BTreeMap` does.
pub struct Iter<'a, V>(
    std::iter::Zip<std::slice::Iter<'a, Arc<MetricKey>>, std::slice::Iter<'a, V>>,
);

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a MetricKey, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&**k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&**k, v))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}

impl<'a, V> IntoIterator for &'a Keyed<V> {
    type Item = (&'a MetricKey, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

impl<V> IntoIterator for Keyed<V> {
    type Item = (MetricKey, V);
    type IntoIter = std::iter::Zip<std::vec::IntoIter<MetricKey>, std::vec::IntoIter<V>>;

    fn into_iter(self) -> Self::IntoIter {
        let keys: Vec<MetricKey> = self.keys.iter().map(|k| (**k).clone()).collect();
        keys.into_iter().zip(self.values)
    }
}

impl<V> std::ops::Index<&MetricKey> for Keyed<V> {
    type Output = V;

    fn index(&self, key: &MetricKey) -> &V {
        self.get(key)
            .unwrap_or_else(|| panic!("no figure {key} in this run"))
    }
}

impl<V> FromIterator<(MetricKey, V)> for Keyed<V> {
    fn from_iter<I: IntoIterator<Item = (MetricKey, V)>>(iter: I) -> Self {
        Keyed::from_entries(iter.into_iter().map(|(k, v)| (Arc::new(k), v)).collect())
    }
}

impl<V> From<BTreeMap<MetricKey, V>> for Keyed<V> {
    fn from(map: BTreeMap<MetricKey, V>) -> Self {
        map.into_iter().collect()
    }
}

impl<V, const N: usize> From<[(MetricKey, V); N]> for Keyed<V> {
    fn from(entries: [(MetricKey, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

/// What a run was measured with (`pg_server_version`, …): name → text,
/// in name order, the texts shared among the runs of a campaign, and the
/// whole list shared among the runs that recorded the same facts (10^5
/// runs, a few facts each: a list per run was most of reading them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFacts {
    entries: Arc<Vec<(Arc<str>, Arc<str>)>>,
}

impl RunFacts {
    pub fn new() -> RunFacts {
        RunFacts::default()
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries
            .binary_search_by(|(k, _)| (**k).cmp(name))
            .ok()
            .map(|i| &*self.entries[i].1)
    }

    pub fn insert(&mut self, name: impl Into<Arc<str>>, value: impl Into<Arc<str>>) {
        let (name, value) = (name.into(), value.into());
        let entries = Arc::make_mut(&mut self.entries);
        match entries.binary_search_by(|(k, _)| k.cmp(&name)) {
            Ok(i) => entries[i].1 = value,
            Err(i) => entries.insert(i, (name, value)),
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries.iter().map(|(k, _)| &**k)
    }

    /// The address of the list of facts, shared by the runs read with
    /// the very same facts: runs of one address hold the same facts (one
    /// of each address is enough to see them all). An address may be
    /// reused once the runs holding it are dropped.
    pub fn shared_address(&self) -> usize {
        Arc::as_ptr(&self.entries) as usize
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.entries.iter().map(|(k, v)| (&**k, &**v))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A JSON object of name → text, as the map it replaces.
impl serde::Serialize for RunFacts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl std::ops::Index<&str> for RunFacts {
    type Output = str;

    fn index(&self, name: &str) -> &str {
        self.get(name)
            .unwrap_or_else(|| panic!("no fact {name} in this run"))
    }
}

impl<K: Into<Arc<str>>, V: Into<Arc<str>>> FromIterator<(K, V)> for RunFacts {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut facts = RunFacts::new();
        for (k, v) in iter {
            facts.insert(k, v);
        }
        facts
    }
}

impl From<BTreeMap<String, String>> for RunFacts {
    fn from(map: BTreeMap<String, String>) -> Self {
        map.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Labels;

    #[test]
    fn reads_as_the_map_it_replaces() {
        let k = |n: &str| MetricKey::plain(n);
        let mut m: Keyed<f64> = [(k("b"), 2.0), (k("a"), 1.0)].into();
        assert_eq!(m.insert(k("c"), 3.0), None);
        assert_eq!(m.insert(k("a"), 4.0), Some(1.0));
        let tree = BTreeMap::from([(k("a"), 4.0), (k("b"), 2.0), (k("c"), 3.0)]);
        assert!(m.iter().eq(tree.iter()), "the same pairs in the same order");
        assert_eq!(m[&k("b")], 2.0);
        assert!(!m.contains_key(&MetricKey::new(
            "b",
            Labels::new().with(&crate::metric::labels::OP, "x")
        )));
        let shared = Arc::new(k("z"));
        let other: Keyed<f64> =
            Keyed::from_entries(vec![(shared.clone(), 1.0), (shared.clone(), 2.0)]);
        assert_eq!(other.len(), 1);
        assert_eq!(other[&k("z")], 2.0, "the last of equal keys wins");
        assert_eq!(
            Arc::strong_count(&shared),
            2,
            "the key is shared, not copied"
        );
    }

    // Runs ordered by the order the last run's keys took are ordered as
    // each alone would be: the same keys, others, fewer, repeated.
    #[test]
    fn entries_ordered_like_the_last_runs_are_ordered_as_alone() {
        let keys: Vec<Arc<MetricKey>> = ["c", "a", "b", "a2"]
            .iter()
            .map(|n| Arc::new(MetricKey::plain(n)))
            .collect();
        let equal = Arc::new(MetricKey::plain("a"));
        let runs: Vec<Vec<(Arc<MetricKey>, f64)>> = vec![
            keys.iter().cloned().zip([1.0, 2.0, 3.0, 4.0]).collect(),
            keys.iter().cloned().zip([5.0, 6.0, 7.0, 8.0]).collect(),
            keys[1..].iter().cloned().zip([9.0, 10.0, 11.0]).collect(),
            vec![
                (keys[1].clone(), 12.0),
                (equal, 13.0),
                (keys[0].clone(), 14.0),
            ],
            keys.iter()
                .rev()
                .cloned()
                .zip([15.0, 16.0, 17.0, 18.0])
                .collect(),
        ];
        // Once as the runs of one variant, once taking turns between two.
        for variants in [1, 2] {
            let mut gather = Gather::default();
            for (n, run) in runs.iter().enumerate() {
                let alone = Keyed::from_entries(run.clone());
                for (k, v) in run.clone() {
                    gather.push(k, v);
                }
                assert_eq!(gather.take(n % variants), alone);
            }
        }
    }

    // Runs of a variant read with the very same keys share one list of
    // them; a figure set on one run later is that run's alone.
    #[test]
    fn runs_with_the_same_keys_share_their_list_and_an_insert_is_one_runs() {
        let k = |n: &str| Arc::new(MetricKey::plain(n));
        let (a, b) = (k("a"), k("b"));
        let mut gather = Gather::default();
        let mut runs = Vec::new();
        for v in [1.0, 2.0] {
            gather.push(b.clone(), v);
            gather.push(a.clone(), v + 10.0);
            runs.push(gather.take(0));
        }
        assert!(Arc::ptr_eq(&runs[0].keys, &runs[1].keys));
        let mut known = SameKeys::default();
        assert_eq!(known.slot(&runs[0]), (0, true));
        assert_eq!(known.slot(&runs[1]), (0, false));
        runs[1].insert(MetricKey::plain("c"), 3.0);
        assert_eq!(
            runs[0].keys().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(
            runs[1].keys().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(
            (runs[0].plain("b"), runs[1].plain("b")),
            (Some(&1.0), Some(&2.0))
        );
        assert_eq!(known.slot(&runs[1]), (1, true), "its own list now");
    }

    // A run whose rows came apart reads as one whose rows came together:
    // the later of equal keys wins.
    #[test]
    fn absorbed_entries_read_as_one_run() {
        let k = |n: &str| Arc::new(MetricKey::plain(n));
        let (a, b, c) = (k("a"), k("b"), k("c"));
        let first = vec![(c.clone(), 1.0), (a.clone(), 2.0)];
        let later = vec![(a.clone(), 3.0), (b.clone(), 4.0)];
        let mut gather = Gather::default();
        let mut run = Keyed::new();
        for part in [first.clone(), later.clone()] {
            for (key, v) in part {
                gather.push(key, v);
            }
            run.absorb(gather.take(0));
        }
        let whole: Vec<_> = first.into_iter().chain(later).collect();
        assert_eq!(run, Keyed::from_entries(whole));
        assert_eq!(run.get(&MetricKey::plain("a")), Some(&3.0));
    }

    // A figure without labels is found by name as `get` finds it, beside
    // labelled figures of the same name and of names around it.
    #[test]
    fn a_plain_figure_is_found_by_name_among_labelled_ones() {
        use crate::metric::labels::DEVICE;
        let labelled = |n: &str, d: &str| MetricKey::new(n, Labels::new().with(&DEVICE, d));
        let run: Keyed<f64> = [
            (labelled("a", "vda"), 1.0),
            (MetricKey::plain("b"), 2.0),
            (labelled("b", "loop0"), 3.0),
            (labelled("c", "vda"), 4.0),
            (MetricKey::plain("ca"), 5.0),
        ]
        .into();
        for name in ["a", "b", "c", "ca", "bb", "", "z"] {
            assert_eq!(
                run.plain(name),
                run.get(&MetricKey::plain(name)),
                "figure {name:?}"
            );
        }
        assert_eq!(run.plain("b"), Some(&2.0));
        assert_eq!(run.plain("c"), None);
    }

    #[test]
    fn facts_read_by_name() {
        let mut f = RunFacts::new();
        f.insert("pg_server_version", "15.18");
        f.insert("fio_version", "fio-3.33");
        f.insert("pg_server_version", "16.1");
        assert_eq!(
            f.keys().collect::<Vec<_>>(),
            ["fio_version", "pg_server_version"]
        );
        assert_eq!(&f["pg_server_version"], "16.1");
        assert_eq!(f.get("nope"), None);
    }
}
