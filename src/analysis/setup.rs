//! What was compared, side by side: the targets as columns — their kind,
//! the parameters they asked for, what storlab read back once they were
//! provisioned (mount options the kernel reports, ZFS properties, Gluster's
//! effective options, allocation and sizes), the versions of what served
//! them, the device beneath; then, per workload kind, its workloads'
//! parameters. Only the rows worth reading are kept: a parameter some
//! column sets to other than its default or that differs between columns.
//! The report lays the tables out and marks what differs
//! (`crate::report::sections::compared`); a requested difference that is
//! not one is [`super::requested`]'s to say.

use std::collections::BTreeMap;

use serde_json::Value;

use super::about::{Target, Workload};
use crate::experiment::kinds::{target_params, workload_params};
use crate::fact::catalogue::VERSION;
use crate::fact::{BlockDevice, TargetFacts, ZfsProperty};
use crate::params::units::{format_bytes, format_seconds};
use crate::params::{ParamSpec, ParamType, Params};
use crate::store::CampaignData;

/// Longest value shown in a cell; a longer one (a job file) is cut.
const MAX_CELL: usize = 60;

/// One row: its label and each column's value (`None`: not applicable).
pub type Row = (String, Vec<Option<String>>);

/// What was compared: the targets, then each workload kind's workloads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compared {
    pub targets: SideBySide,
    pub workloads: Vec<SideBySide>,
}

/// Columns side by side, a row per parameter or fact worth reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideBySide {
    /// Above the row labels.
    pub corner: String,
    /// The columns' names.
    pub header: Vec<String>,
    pub rows: Vec<Row>,
    /// A cell differs when it is unlike the first column's (the
    /// baseline's); otherwise a row differs when its values are not all
    /// alike.
    pub against_first: bool,
}

/// What campaign `c` (described by `targets` and `workloads`) compared
/// against `baseline`.
pub fn compared(
    c: &CampaignData,
    targets: &[Target],
    workloads: &[Workload],
    baseline: &str,
) -> Compared {
    Compared {
        targets: targets_table(c, targets, baseline),
        workloads: workload_tables(workloads),
    }
}

/// `rows` without those no column has a value in.
fn shown(rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter()
        .filter(|(_, v)| v.iter().any(Option::is_some))
        .collect()
}

/// Targets as columns, baseline first.
fn targets_table(c: &CampaignData, about: &[Target], baseline: &str) -> SideBySide {
    let mut targets: Vec<&Target> = about.iter().collect();
    targets.sort_by_key(|t| t.name != baseline);
    let mut rows: Vec<Row> = vec![(
        "kind".into(),
        targets.iter().map(|t| Some(t.kind.clone())).collect(),
    )];
    let requested: Vec<(&Value, &[ParamSpec])> = targets
        .iter()
        .map(|t| (&t.params, target_params(&t.kind)))
        .collect();
    rows.extend(param_rows("requested: ", &requested));
    rows.extend(read_back_rows(&targets));
    rows.extend(version_rows(c, &targets));
    rows.push((
        "device".into(),
        targets.iter().map(|t| device_text(&t.facts)).collect(),
    ));
    let header: Vec<String> = targets
        .iter()
        .map(|t| match t.name == baseline {
            true => format!("{} (baseline)", t.name),
            false => t.name.clone(),
        })
        .collect();
    SideBySide {
        corner: String::new(),
        header,
        rows: shown(rows),
        against_first: true,
    }
}

/// One table per workload kind, its workloads as columns.
fn workload_tables(workloads: &[Workload]) -> Vec<SideBySide> {
    let mut kinds: Vec<&str> = workloads.iter().map(|w| w.kind.as_str()).collect();
    let mut seen = Vec::new();
    kinds.retain(|k| {
        let new = !seen.contains(k);
        seen.push(k);
        new
    });
    kinds
        .into_iter()
        .map(|kind| {
            let mine: Vec<_> = workloads.iter().filter(|w| w.kind == kind).collect();
            let specs = workload_params(kind);
            let params: Vec<(&Value, &[ParamSpec])> =
                mine.iter().map(|w| (&w.params, specs)).collect();
            let rows = param_rows("", &params);
            let header = mine.iter().map(|w| w.name.clone()).collect();
            SideBySide {
                corner: format!("{kind} workload"),
                header,
                rows: shown(rows),
                against_first: false,
            }
        })
        .collect()
}

/// One parameter of one column: where its parameter is declared (for the
/// order of rows), its name, its value as text, and whether it is set to
/// other than its default.
struct Setting {
    order: usize,
    name: String,
    text: String,
    set: bool,
}

/// One row per parameter that some column sets to other than its default
/// or that differs between columns, in declaration order; a table
/// parameter (`options`, `properties`) one row per key.
fn param_rows(prefix: &str, columns: &[(&Value, &[ParamSpec])]) -> Vec<Row> {
    let flat: Vec<Vec<Setting>> = columns
        .iter()
        .map(|(params, specs)| flatten(params, specs))
        .collect();
    let mut names: Vec<(usize, &String)> =
        flat.iter().flatten().map(|s| (s.order, &s.name)).collect();
    names.sort();
    // Kinds declare a name at different places: its first place counts.
    let mut seen: std::collections::HashSet<&String> = Default::default();
    names.retain(|(_, n)| seen.insert(n));
    names
        .into_iter()
        .filter_map(|(_, name)| {
            let cells: Vec<Option<&Setting>> = flat
                .iter()
                .map(|col| col.iter().find(|s| &s.name == name))
                .collect();
            let values: Vec<Option<String>> =
                cells.iter().map(|c| c.map(|s| s.text.clone())).collect();
            let set = cells.iter().flatten().any(|s| s.set);
            let varies = values.iter().any(|v| v != &values[0]);
            (set || varies).then(|| (format!("{prefix}{name}"), values))
        })
        .collect()
}

/// A column's parameters; a table parameter's keys (Gluster options, ZFS
/// properties) one each, named by the key alone.
fn flatten(params: &Value, specs: &[ParamSpec]) -> Vec<Setting> {
    let defaults = Params::defaults(specs).to_json();
    let Some(map) = params.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in map {
        let at = specs.iter().position(|s| s.name == key);
        let order = at.unwrap_or(specs.len());
        match value {
            Value::Object(entries) => out.extend(entries.iter().map(|(k, v)| Setting {
                order,
                name: k.clone(),
                text: plain(v),
                set: true,
            })),
            Value::Null => {}
            v => out.push(Setting {
                order,
                name: key.clone(),
                text: param_text(v, at.map(|i| &specs[i])),
                set: defaults.get(key.as_str()) != Some(v),
            }),
        }
    }
    out
}

/// A parameter's value as people write it: sizes in binary units,
/// durations in seconds, lists comma-separated.
fn param_text(v: &Value, spec: Option<&ParamSpec>) -> String {
    match (spec.map(|s| s.ty), v) {
        (Some(ParamType::Size), Value::Number(n)) => n.as_f64().map_or(n.to_string(), format_bytes),
        (Some(ParamType::Duration), Value::Number(n)) => {
            n.as_f64().map_or(n.to_string(), format_seconds)
        }
        // An argument vector reads as the command line it is.
        (_, Value::Array(args)) if spec.is_some_and(|s| s.name == "command") => {
            cut(args.iter().map(plain).collect::<Vec<_>>().join(" "))
        }
        _ => plain(v),
    }
}

/// A JSON value as text, a long one cut.
fn plain(v: &Value) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    };
    cut(text)
}

/// `text` on one line, cut at [`MAX_CELL`] characters.
fn cut(text: String) -> String {
    let text = text.trim().replace('\n', " ");
    match text.char_indices().nth(MAX_CELL) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// What was read back from each target once it was provisioned.
fn read_back_rows(targets: &[&Target]) -> Vec<Row> {
    let facts: Vec<&TargetFacts> = targets.iter().map(|t| &t.facts).collect();
    let fact = |label: &str, read: &dyn Fn(&TargetFacts) -> Option<String>| -> Row {
        (
            format!("read back: {label}"),
            facts.iter().map(|f| read(f)).collect(),
        )
    };
    let bytes = |v: Option<f64>| v.map(format_bytes);
    let mut rows = vec![
        fact("filesystem", &|f| f.fs_type.clone()),
        fact("mount options", &|f| f.mount_options.clone()),
        fact("super options", &|f| f.super_options.clone()),
        fact("allocation", &|f| f.allocation.clone()),
        fact("image size", &|f| bytes(f.image_size_bytes)),
        fact("image allocated", &|f| bytes(f.image_allocated_bytes)),
        fact("volume type", &|f| f.volume_type.clone()),
    ];
    let zfs: Vec<BTreeMap<String, String>> = facts
        .iter()
        .map(|f| {
            f.zfs_properties
                .iter()
                .filter_map(|(k, p)| Some((k.clone(), property_text(p)?)))
                .collect()
        })
        .collect();
    rows.extend(keyed_rows(targets, "ZFS", &zfs));
    let gluster: Vec<BTreeMap<String, String>> =
        facts.iter().map(|f| f.effective_options.clone()).collect();
    rows.extend(keyed_rows(targets, "Gluster", &gluster));
    rows.push(fact("filesystem size", &|f| bytes(f.size_bytes)));
    rows.push(fact("free space", &|f| bytes(f.free_bytes)));
    rows
}

/// `8K (local)`: a ZFS property's value and where it came from.
fn property_text(p: &ZfsProperty) -> Option<String> {
    let value = p.value.as_deref()?;
    Some(match p.source.as_deref() {
        Some(s) if s != "-" => format!("{value} ({s})"),
        _ => value.to_string(),
    })
}

/// Rows of a table fact of every target (ZFS properties, Gluster
/// options): those that some target asked for or whose values differ.
fn keyed_rows(targets: &[&Target], what: &str, maps: &[BTreeMap<String, String>]) -> Vec<Row> {
    let mut names: Vec<&String> = maps.iter().flat_map(|m| m.keys()).collect();
    names.sort();
    names.dedup();
    let requested = |name: &str| targets.iter().any(|t| t.requested.asks_for(name));
    names
        .into_iter()
        .filter_map(|name| {
            let values: Vec<Option<String>> = maps.iter().map(|m| m.get(name).cloned()).collect();
            let shown: Vec<&Option<String>> = values.iter().filter(|v| v.is_some()).collect();
            let varies = shown.iter().any(|v| *v != shown[0]);
            (requested(name) || varies).then(|| (format!("read back: {what} {name}"), values))
        })
        .collect()
}

/// Versions of what served each target: its facts named `*_version`, and
/// those its runs recorded (PostgreSQL's, fio's).
fn version_rows(c: &CampaignData, targets: &[&Target]) -> Vec<Row> {
    let facts: Vec<&TargetFacts> = targets.iter().map(|t| &t.facts).collect();
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    };
    facts
        .iter()
        .flat_map(|f| f.versions.keys())
        .for_each(|k| add(k));
    for r in &c.runs {
        r.facts
            .keys()
            .filter_map(|k| k.strip_suffix(VERSION.name))
            .for_each(&mut add);
    }
    names
        .into_iter()
        .map(|name| {
            let values = targets
                .iter()
                .zip(&facts)
                .map(|(t, f)| version_of(c, t, f, &name))
                .collect();
            (format!("version: {name}"), values)
        })
        .collect()
}

/// The version `name` of target `t`: its fact, else the distinct values
/// its runs recorded.
fn version_of(c: &CampaignData, t: &Target, f: &TargetFacts, name: &str) -> Option<String> {
    if let Some(v) = f.versions.get(name) {
        return Some(match &f.zfs_flavour {
            Some(flavour) if name == "zfs" => format!("{flavour} {v}"),
            _ => v.to_string(),
        });
    }
    let key = format!("{name}{}", VERSION.name);
    let mut seen: Vec<&str> = Vec::new();
    for r in c.runs.iter().filter(|r| r.target == t.name) {
        if let Some(v) = r.facts.get(&key) {
            if !seen.contains(&v) {
                seen.push(v);
            }
        }
    }
    (!seen.is_empty()).then(|| seen.join(" / "))
}

/// The block device beneath a target — its own, and the device of the
/// directory holding its image or bricks (`loop0 on vda …`) — else its
/// mount source.
fn device_text(f: &TargetFacts) -> Option<String> {
    match (&f.block_device, &f.device_beneath) {
        (Some(o), Some(u)) => Some(format!(
            "{} on {}",
            o.name.as_deref().unwrap_or("?"),
            disk_text(u)
        )),
        (Some(d), None) | (None, Some(d)) => Some(disk_text(d)),
        (None, None) => f.mount_source.clone(),
    }
}

/// `vda QEMU HARDDISK (non-rotational, scheduler mq-deadline)`.
fn disk_text(dev: &BlockDevice) -> String {
    let rot = match dev.rotational {
        Some(true) => "rotational",
        Some(false) => "non-rotational",
        None => "?",
    };
    format!(
        "{} {} ({rot}, scheduler {})",
        dev.name.as_deref().unwrap_or("?"),
        dev.model.as_deref().unwrap_or("?"),
        dev.scheduler.as_deref().unwrap_or("?")
    )
}
