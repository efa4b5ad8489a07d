//! Labels: what distinguishes values of one metric within a run (the
//! matrix cell, the smallfiles operation, the pgbench statement, the fio
//! job; later the device, the process, a swept parameter). A metric's
//! identity in a run is its name plus its labels, a [`MetricKey`].
//!
//! The label keys storlab's workloads use are declared here; any other key
//! (a swept parameter) is allowed too. Values are text; a size is its
//! number of bytes.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A label key the workloads use.
#[derive(Debug, PartialEq, Eq)]
pub struct LabelDef {
    pub key: &'static str,
    pub help: &'static str,
    /// How the label reads in a compact name (see [`compact_name`]).
    compact: Compact,
}

#[derive(Debug, PartialEq, Eq)]
enum Compact {
    /// The value itself: `write_geomean_bw_bytes_per_s`.
    Value,
    /// A size in bytes as `64k`, `1m`: `write_64k_4k_bw_bytes_per_s`.
    Size,
    /// The value after a fixed prefix: `stmt_05_begin_…`, `job0_…`.
    Prefixed(&'static str),
}

pub static TEST: LabelDef = LabelDef {
    key: "test",
    help: "the matrix test (iozone's write, rewrite, read, …)",
    compact: Compact::Value,
};
pub static FILE_SIZE: LabelDef = LabelDef {
    key: "file_size",
    help: "the matrix cell's file size, in bytes",
    compact: Compact::Size,
};
pub static RECORD_SIZE: LabelDef = LabelDef {
    key: "record_size",
    help: "the matrix cell's record size, in bytes",
    compact: Compact::Size,
};
pub static OP: LabelDef = LabelDef {
    key: "op",
    help: "the smallfiles operation (create, stat, read, append, rename, delete, readdir), or a device request's (read, write, flush, discard)",
    compact: Compact::Value,
};
pub static STATEMENT: LabelDef = LabelDef {
    key: "statement",
    help: "a pgbench script statement: its number in the script and first words",
    compact: Compact::Prefixed("stmt_"),
};
pub static JOB: LabelDef = LabelDef {
    key: "job",
    help: "a fio job: its place in fio's jobs array (one per numjobs clone, or one per group under group_reporting)",
    compact: Compact::Prefixed("job"),
};

pub static DEVICE: LabelDef = LabelDef {
    key: "device",
    help: "a block device, by its kernel name (fio's disk_util: vda, loop3)",
    compact: Compact::Value,
};

pub static PROCESS: LabelDef = LabelDef {
    key: "process",
    help: "a process the telemetry watched: storlab, a program it ran (fio, pgbench), one serving the target (glusterd, glusterfsd, glusterfs, zfs-fuse, qemu-storage-daemon, postgres); `other targets` (the processes serving the campaign's other targets), `kernel threads` (those working for the campaign's devices: loop workers, writeback, journals) or `exited children` (programs storlab ran that ended between two samples)",
    compact: Compact::Value,
};

pub static LAYER: LabelDef = LabelDef {
    key: "layer",
    help: "a layer of the target's stack that reads pass through (workload, shared_buffers, page_cache, gluster_client, brick_page_cache, zfs_arc, export_page_cache, qemu, image_page_cache, device; `a+b` for two layers whose boundary was not measured)",
    compact: Compact::Value,
};

pub static BRICK: LabelDef = LabelDef {
    key: "brick",
    help: "a Gluster brick, as `gluster volume info` names it (host:/path)",
    compact: Compact::Value,
};

/// The label keys of storlab's workloads, in the order a compact name
/// puts them.
pub static LABELS: &[&LabelDef] = &[
    &TEST,
    &FILE_SIZE,
    &RECORD_SIZE,
    &OP,
    &STATEMENT,
    &JOB,
    &DEVICE,
    &PROCESS,
    &LAYER,
    &BRICK,
];

/// A metric value's labels: key → value, ordered by key.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Labels(BTreeMap<String, String>);

impl Labels {
    pub fn new() -> Labels {
        Labels::default()
    }

    /// These labels and `key = value`.
    pub fn with(mut self, key: &LabelDef, value: impl ToString) -> Labels {
        self.0.insert(key.key.to_string(), value.to_string());
        self
    }

    /// These labels and `key = value`, for a key not declared here (a swept
    /// parameter).
    pub fn with_key(mut self, key: &str, value: impl ToString) -> Labels {
        self.0.insert(key.to_string(), value.to_string());
        self
    }

    /// These labels and every one of `other` (which wins on a shared key).
    pub fn with_all(mut self, other: &Labels) -> Labels {
        for (k, v) in other.iter() {
            self.0.insert(k.to_string(), v.to_string());
        }
        self
    }

    /// These labels without the pairs of `other` (a key with another value
    /// stays).
    pub fn without(mut self, other: &Labels) -> Labels {
        self.0.retain(|k, v| other.value(k) != Some(v.as_str()));
        self
    }

    pub fn get(&self, key: &LabelDef) -> Option<&str> {
        self.value(key.key)
    }

    /// The value of any key, declared here or not.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A size label's value in bytes.
    pub fn bytes(&self, key: &LabelDef) -> Option<u64> {
        self.get(key)?.parse().ok()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The labels as a JSON object in key order: how the store keeps them
    /// (`{}` for none), one text per set of labels.
    pub fn to_json_text(&self) -> String {
        serde_json::to_string(&self.0).expect("a map of strings serializes")
    }

    /// Labels from their stored JSON text.
    pub fn from_json_text(text: &str) -> Result<Labels, String> {
        serde_json::from_str(text)
            .map(Labels)
            .map_err(|e| format!("labels `{text}` are not a JSON object of strings: {e}"))
    }
}

/// One metric of a run: its catalogue name and its labels.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct MetricKey {
    pub name: String,
    pub labels: Labels,
}

impl MetricKey {
    /// The metric without labels: a run's overall figure.
    pub fn plain(name: &str) -> MetricKey {
        MetricKey {
            name: name.to_string(),
            labels: Labels::new(),
        }
    }

    pub fn new(name: &str, labels: Labels) -> MetricKey {
        MetricKey {
            name: name.to_string(),
            labels,
        }
    }

    /// [`compact_name`] of this key.
    pub fn compact(&self) -> String {
        compact_name(&self.name, &self.labels)
    }
}

/// `bw_bytes_per_s{file_size=65536,record_size=4096,test=write}`.
impl fmt::Display for MetricKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if self.labels.is_empty() {
            return Ok(());
        }
        let pairs: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        write!(f, "{{{}}}", pairs.join(","))
    }
}

/// A labelled metric as one snake_case token, the way people have read it
/// since before labels: the values of storlab's label keys before the name
/// (`write_64k_4k_bw_bytes_per_s`, `create_ops_per_s`,
/// `stmt_05_begin_lat_mean_ns`, `job0_iops`); other keys follow in braces.
/// Schema-v3 stores used exactly these as names, and
/// [`super::legacy::decode`] is this function's inverse.
pub fn compact_name(name: &str, labels: &Labels) -> String {
    let mut parts: Vec<String> = Vec::new();
    for def in LABELS {
        if let Some(v) = labels.get(def) {
            parts.push(match def.compact {
                Compact::Value => v.to_string(),
                Compact::Size => v.parse().map_or(v.to_string(), size_token),
                Compact::Prefixed(p) => format!("{p}{v}"),
            });
        }
    }
    parts.push(name.to_string());
    let mut text = parts.join("_");
    let other: Vec<String> = labels
        .iter()
        .filter(|(k, _)| !LABELS.iter().any(|d| d.key == *k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !other.is_empty() {
        text.push_str(&format!("{{{}}}", other.join(",")));
    }
    text
}

/// `64k`, `1m`, `2g`, `512b`: a size as a short token (powers of 1024).
pub fn size_token(bytes: u64) -> String {
    const K: u64 = 1024;
    if bytes >= K * K * K && bytes % (K * K * K) == 0 {
        format!("{}g", bytes / (K * K * K))
    } else if bytes >= K * K && bytes % (K * K) == 0 {
        format!("{}m", bytes / (K * K))
    } else if bytes % K == 0 && bytes > 0 {
        format!("{}k", bytes / K)
    } else {
        format!("{bytes}b")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_names_put_label_values_first() {
        let cell = Labels::new()
            .with(&TEST, "write")
            .with(&FILE_SIZE, 65536)
            .with(&RECORD_SIZE, 4096);
        assert_eq!(
            compact_name("bw_bytes_per_s", &cell),
            "write_64k_4k_bw_bytes_per_s"
        );
        let key = MetricKey::new("bw_bytes_per_s", cell);
        assert_eq!(
            key.to_string(),
            "bw_bytes_per_s{file_size=65536,record_size=4096,test=write}"
        );
        let stmt = Labels::new().with(&STATEMENT, "05_begin");
        assert_eq!(
            compact_name("lat_mean_ns", &stmt),
            "stmt_05_begin_lat_mean_ns"
        );
        assert_eq!(
            compact_name("iops", &Labels::new().with(&JOB, 0)),
            "job0_iops"
        );
        let swept = Labels::new().with(&OP, "create").with_key("clients", 8);
        assert_eq!(
            compact_name("ops_per_s", &swept),
            "create_ops_per_s{clients=8}"
        );
        assert_eq!(MetricKey::plain("tps").compact(), "tps");
    }

    #[test]
    fn labels_merge_and_part() {
        let own = Labels::new().with(&OP, "create");
        let swept = Labels::new().with_key("clients", 8);
        let all = own.clone().with_all(&swept);
        assert_eq!(all.value("clients"), Some("8"));
        assert_eq!(all.clone().without(&swept), own);
        let other = Labels::new().with_key("clients", 16);
        assert_eq!(all.clone().without(&other), all, "another value stays");
    }

    #[test]
    fn labels_survive_their_stored_text() {
        let l = Labels::new().with(&OP, "stat").with_key("a\"b", "é");
        assert_eq!(Labels::from_json_text(&l.to_json_text()), Ok(l));
        assert_eq!(Labels::new().to_json_text(), "{}");
        assert!(Labels::from_json_text("[1]").is_err());
    }

    #[test]
    fn sizes_are_short_and_stable() {
        assert_eq!(size_token(64 << 10), "64k");
        assert_eq!(size_token(1 << 20), "1m");
        assert_eq!(size_token(512 << 20), "512m");
        assert_eq!(size_token(2 << 30), "2g");
        assert_eq!(size_token(512), "512b");
    }
}
