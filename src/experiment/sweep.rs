//! Sweeps: a `sweep` table in a workload or a target lists values of its
//! parameters, and each combination of them (the product of the lists, or
//! with `sweep_mode = "zip"` the lists side by side) is a variant named
//! `NAME[k=v,…]`. A variant's swept values are its [`Factor`]s: they label
//! every metric its runs record, and reports pivot on them.
//!
//! This module holds the model — factors, what a swept value sets, the
//! combinations and the names — as pure functions; [`super::variants`]
//! reads sweep tables from the file and expands targets and workloads.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::metric::Labels;
use crate::params::{choices, ParamType, Params, Value};
use crate::provision::root::Software;

choices! {
    /// How the lists of a sweep combine.
    pub enum SweepMode { Product = "product", Zip = "zip" }
}

/// How a factor's values read on an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Bytes: numeric, on a log axis.
    Size,
    /// Seconds: numeric.
    Duration,
    /// A whole number (clients, transactions): numeric, on a log axis.
    Count,
    /// A real number.
    Number,
    /// Words, booleans, lists, table entries: in the order written.
    Category,
}

impl Scale {
    pub fn of(ty: ParamType) -> Scale {
        match ty {
            ParamType::Size => Scale::Size,
            ParamType::Duration => Scale::Duration,
            ParamType::Int { .. } => Scale::Count,
            ParamType::Float { .. } => Scale::Number,
            _ => Scale::Category,
        }
    }

    /// Whether the values are numbers (label values parse as `f64`).
    pub fn is_numeric(self) -> bool {
        !matches!(self, Scale::Category)
    }

    /// Sizes and counts span orders of magnitude (10M … 30G, 1 … 100
    /// clients): their axis is logarithmic when every value is positive.
    pub fn is_logarithmic(self) -> bool {
        matches!(self, Scale::Size | Scale::Count)
    }
}

/// One swept value of a variant: a level of one factor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Factor {
    /// The label key: the parameter's name, or the entry's key for an
    /// entry of a table parameter (`performance.write-behind`).
    pub key: String,
    /// The label value, in base units (bytes, seconds) as text.
    pub value: String,
    /// The value as the file wrote it, for the variant's name.
    pub text: String,
    pub scale: Scale,
}

/// A variant's factors as metric labels.
pub fn labels(factors: &[Factor]) -> Labels {
    factors
        .iter()
        .fold(Labels::new(), |l, f| l.with_key(&f.key, &f.value))
}

/// `NAME[k=v,…]` in the order the factors were swept; the bare name when
/// nothing was.
pub fn variant_name(family: &str, factors: &[Factor]) -> String {
    if factors.is_empty() {
        return family.to_string();
    }
    let pairs: Vec<String> = factors
        .iter()
        .map(|f| match reads_alone(f) {
            true => f.text.clone(),
            false => format!("{}={}", f.key, f.text),
        })
        .collect();
    format!("{family}[{}]", pairs.join(","))
}

/// The table a variant's name belongs to: `pgbench[transactions=12]` is of
/// `pgbench` (what [`variant_name`] put before the brackets).
pub fn family_of(name: &str) -> &str {
    name.split('[').next().unwrap_or(name)
}

/// `factors` as `key=value, …`, each key without a dotted prefix
/// (`gluster.`, `performance.`) where no other key among them ends the
/// same: `mount_options=[], preallocation=off`.
pub fn short_text(factors: &[&Factor]) -> String {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let unique = |k: &str| factors.iter().filter(|f| last(&f.key) == last(k)).count() == 1;
    let key = |k: &str| if unique(k) { last(k) } else { k.to_string() };
    factors
        .iter()
        .map(|f| match reads_alone(f) {
            true => f.text.clone(),
            false => format!("{}={}", key(&f.key), f.text),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A factor key that sweeps a root: `root`, or `F.root` carried from
/// target table `F`.
pub fn is_root_key(key: &str) -> bool {
    key == "root" || key.ends_with(".root")
}

/// Whether a factor reads alone in a variant's name and a row's label:
/// a root factor named by its release (`Gluster 11.1`), where every other
/// factor, and a root not yet named (`root=debian:trixie`), reads
/// `key=value`.
pub fn reads_alone(f: &Factor) -> bool {
    is_root_key(&f.key)
        && Software::ALL
            .iter()
            .any(|s| f.text.starts_with(&format!("{} ", s.display())))
}

/// Two releases of one system as a comparison names them: `Gluster 11.1`
/// against `10.3` (the second's name dropped where it repeats the
/// first's); `None` unless both are releases of one system.
pub fn release_pair(candidate: &str, baseline: &str) -> Option<(String, String)> {
    let system = Software::ALL.iter().find_map(|s| {
        let prefix = format!("{} ", s.display());
        (candidate.starts_with(&prefix) && baseline.starts_with(&prefix)).then_some(prefix)
    })?;
    let version = baseline.strip_prefix(&system)?;
    Some((candidate.to_string(), version.to_string()))
}

/// A factor of words (its value and text alike), for tests.
#[cfg(test)]
pub fn factor(key: &str, text: &str) -> Factor {
    Factor {
        key: key.into(),
        value: text.into(),
        text: text.into(),
        scale: Scale::Category,
    }
}

/// The label text of a parsed value, in base units.
pub fn label_value(v: &Value) -> String {
    match v {
        Value::Size(b) => b.to_string(),
        Value::Duration(d) => d.as_secs_f64().to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.clone(),
        other => other.to_json().to_string(),
    }
}

/// What one swept value sets in a variant's parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    /// A whole parameter.
    Whole { param: &'static str, value: Value },
    /// One entry of a table parameter (`options`, `settings`, `properties`).
    Entry {
        param: &'static str,
        entry: String,
        text: String,
    },
}

impl Setting {
    pub fn param(&self) -> &'static str {
        match self {
            Setting::Whole { param, .. } | Setting::Entry { param, .. } => param,
        }
    }

    pub fn apply(&self, p: &mut Params) -> Result<(), String> {
        match self {
            Setting::Whole { param, value } => {
                p.set(param, value.clone());
                Ok(())
            }
            Setting::Entry { param, entry, text } => p.set_entry(param, entry, text),
        }
    }
}

/// One value of a swept parameter.
#[derive(Debug, Clone)]
pub struct Level {
    pub setting: Setting,
    pub factor: Factor,
    /// Where the value is written, for errors about the variants it makes.
    pub span: Option<Range<usize>>,
}

/// One swept parameter (or table entry) and its values, as written.
#[derive(Debug, Clone)]
pub struct Axis {
    pub key: String,
    pub levels: Vec<Level>,
}

/// A sweep as read: its axes in the order written and how they combine.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub axes: Vec<Axis>,
    pub mode: SweepMode,
}

impl Sweep {
    /// No sweep: one variant, the table itself.
    pub fn none() -> Sweep {
        Sweep {
            axes: Vec::new(),
            mode: SweepMode::Product,
        }
    }

    /// How many variants the sweep makes, counted without making them
    /// (saturating: a product of many long lists is a refusal, not an
    /// overflow).
    pub fn count(&self) -> u64 {
        let lens = self.axes.iter().map(|a| a.levels.len() as u64);
        match self.mode {
            SweepMode::Zip => lens.min().unwrap_or(1),
            SweepMode::Product => lens.fold(1, u64::saturating_mul),
        }
    }

    /// Each variant's levels, one per axis, in variant order.
    pub fn variants(&self) -> Vec<Vec<&Level>> {
        let lens: Vec<usize> = self.axes.iter().map(|a| a.levels.len()).collect();
        combinations(&lens, self.mode)
            .into_iter()
            .map(|combo| {
                combo
                    .iter()
                    .zip(&self.axes)
                    .map(|(&i, axis)| &axis.levels[i])
                    .collect()
            })
            .collect()
    }
}

/// For each variant, the index of its value on each axis: the product with
/// the first axis varying slowest (as nested loops in the order written),
/// or for zip the i-th value of every axis together (the lists have one
/// length, checked when they are read). No axis: one empty combination.
pub fn combinations(lens: &[usize], mode: SweepMode) -> Vec<Vec<usize>> {
    match mode {
        SweepMode::Zip => {
            let n = lens.iter().copied().min().unwrap_or(1);
            (0..n).map(|i| vec![i; lens.len()]).collect()
        }
        SweepMode::Product => {
            let mut out: Vec<Vec<usize>> = vec![Vec::new()];
            for &len in lens {
                out = out
                    .into_iter()
                    .flat_map(|prefix| {
                        (0..len).map(move |i| {
                            let mut next = prefix.clone();
                            next.push(i);
                            next
                        })
                    })
                    .collect();
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_known_without_making_the_variants() {
        let axis = |n: usize| Axis {
            key: format!("k{n}"),
            levels: (0..n)
                .map(|i| Level {
                    setting: Setting::Entry {
                        param: "p",
                        entry: "e".into(),
                        text: i.to_string(),
                    },
                    factor: factor("k", &i.to_string()),
                    span: None,
                })
                .collect(),
        };
        let mut s = Sweep {
            axes: vec![axis(10), axis(10), axis(3)],
            mode: SweepMode::Product,
        };
        assert_eq!(s.count(), 300);
        assert_eq!(s.count(), s.variants().len() as u64);
        s.mode = SweepMode::Zip;
        assert_eq!(s.count(), 3);
        assert_eq!(Sweep::none().count(), 1);
        let huge = Sweep {
            axes: (0..40).map(|_| axis(10)).collect(),
            mode: SweepMode::Product,
        };
        assert_eq!(huge.count(), u64::MAX, "saturates");
    }

    #[test]
    fn the_product_varies_the_last_axis_fastest() {
        assert_eq!(
            combinations(&[2, 3], SweepMode::Product),
            vec![
                vec![0, 0],
                vec![0, 1],
                vec![0, 2],
                vec![1, 0],
                vec![1, 1],
                vec![1, 2]
            ]
        );
        assert_eq!(
            combinations(&[], SweepMode::Product),
            vec![Vec::<usize>::new()]
        );
        assert!(combinations(&[2, 0], SweepMode::Product).is_empty());
    }

    #[test]
    fn zip_pairs_the_lists() {
        assert_eq!(
            combinations(&[3, 3], SweepMode::Zip),
            vec![vec![0, 0], vec![1, 1], vec![2, 2]]
        );
    }

    #[test]
    fn names_and_labels() {
        let f = [factor("transactions", "500"), factor("compress", "gzip:6")];
        assert_eq!(
            variant_name("tpcb", &f),
            "tpcb[transactions=500,compress=gzip:6]"
        );
        assert_eq!(variant_name("tpcb", &[]), "tpcb");
        let l = labels(&f);
        assert_eq!(l.value("transactions"), Some("500"));
        assert_eq!(l.value("compress"), Some("gzip:6"));
    }

    #[test]
    fn label_values_are_base_units() {
        assert_eq!(label_value(&Value::Size(10 << 20)), "10485760");
        assert_eq!(
            label_value(&Value::Duration(std::time::Duration::from_millis(500))),
            "0.5"
        );
        assert_eq!(label_value(&Value::Bool(true)), "true");
        assert_eq!(
            label_value(&Value::List(vec!["noatime".into(), "discard".into()])),
            "[\"noatime\",\"discard\"]"
        );
    }

    #[test]
    fn a_setting_overrides_a_value_or_an_entry() {
        let mut p = Params::default();
        Setting::Whole {
            param: "clients",
            value: Value::Int(8),
        }
        .apply(&mut p)
        .unwrap();
        Setting::Entry {
            param: "options",
            entry: "performance.write-behind".into(),
            text: "off".into(),
        }
        .apply(&mut p)
        .unwrap();
        assert_eq!(p.get("clients"), Some(&Value::Int(8)));
        match p.get("options") {
            Some(Value::Map(m)) => assert_eq!(m["performance.write-behind"], "off"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn two_releases_read_as_one_against_the_other() {
        assert_eq!(
            release_pair("Gluster 11.1", "Gluster 10.3"),
            Some(("Gluster 11.1".into(), "10.3".into()))
        );
        assert_eq!(release_pair("Gluster 11.1", "PostgreSQL 15.1"), None);
        assert_eq!(release_pair("gzip", "none"), None);
        let r = Factor {
            key: "gluster.root".into(),
            value: "Gluster 11.1".into(),
            text: "Gluster 11.1".into(),
            scale: Scale::Category,
        };
        assert!(reads_alone(&r));
        assert_eq!(
            variant_name("vm", &[r.clone(), factor("size", "1G")]),
            "vm[Gluster 11.1,size=1G]"
        );
        let unnamed = Factor {
            text: "debian:trixie".into(),
            ..r
        };
        assert!(!reads_alone(&unnamed));
    }
}
