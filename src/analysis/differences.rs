//! What differs between two campaigns, said before any number of a
//! comparison across campaigns: the versions of the programs and the tags
//! (the point of the comparison, its headline: "glusterfs 10.3 →
//! glusterfs 11.1"), the host, the workloads' parameters (which make a
//! comparison of the storage meaningless, so `compare` refuses them unless
//! told otherwise), the targets' parameters and effective facts, and the
//! targets and workloads found on one side only.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::experiment::kinds::volatile_target_fact;
use crate::store::CampaignData;

/// One named fact with its value on each side (`None`: absent there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The workload or target it belongs to (empty for the campaign's own).
    pub of: String,
    pub name: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// Everything that differs between campaigns `a` and `b`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Differences {
    pub versions: Vec<Change>,
    pub tags: Vec<Change>,
    pub host: Vec<Change>,
    pub workload_params: Vec<Change>,
    pub target_params: Vec<Change>,
    pub target_facts: Vec<Change>,
    /// Target facts that differ because they take a new value with every
    /// campaign ([`volatile_target_fact`]): not differences of the
    /// configuration, set apart so that they do not drown those.
    pub varies: Vec<Change>,
    /// Workloads and targets (`workload NAME`, `target NAME`) on one side only.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
}

pub fn differences(a: &CampaignData, b: &CampaignData) -> Differences {
    let (fa, fb) = (&a.facts.provenance, &b.facts.provenance);
    let mut va = fa.versions.clone();
    let mut vb = fb.versions.clone();
    va.insert("storlab".into(), a.campaign.storlab_version.clone());
    vb.insert("storlab".into(), b.campaign.storlab_version.clone());
    let mut d = Differences {
        versions: changed("", &va, &vb),
        tags: changed("", &fa.tags, &fb.tags),
        host: changed("", &fa.host, &fb.host),
        ..Differences::default()
    };
    for w in &a.workloads {
        let Some(x) = b.workloads.iter().find(|x| x.name == w.name) else {
            continue;
        };
        if w.kind != x.kind {
            d.workload_params.push(Change {
                of: w.name.clone(),
                name: "kind".into(),
                a: Some(w.kind.clone()),
                b: Some(x.kind.clone()),
            });
        }
        d.workload_params
            .extend(changed(&w.name, &flat(&w.params), &flat(&x.params)));
    }
    for t in &a.targets {
        let Some(x) = b.targets.iter().find(|x| x.name == t.name) else {
            continue;
        };
        let mut params = changed(&t.name, &flat(&t.params), &flat(&x.params));
        if t.kind != x.kind {
            params.insert(
                0,
                Change {
                    of: t.name.clone(),
                    name: "kind".into(),
                    a: Some(t.kind.clone()),
                    b: Some(x.kind.clone()),
                },
            );
        }
        let same_kind = t.kind == x.kind;
        for c in changed(&t.name, &flat(&t.facts), &flat(&x.facts)) {
            // A fact that repeats a parameter (a directory's path) is said once.
            if params.contains(&c) {
                continue;
            }
            let volatile = (same_kind && volatile_target_fact(&t.kind, &c.name))
                || only_storlab_names_differ(c.a.as_deref(), c.b.as_deref());
            match volatile {
                true => d.varies.push(c),
                false => d.target_facts.push(c),
            }
        }
        d.target_params.extend(params);
    }
    d.only_in_a = only_in(a, b);
    d.only_in_b = only_in(b, a);
    d
}

/// Whether `a` and `b` differ only in the names storlab gives what it
/// creates after its process id (`/var/tmp/storlab-23869-gluster/mnt`
/// against `…/storlab-3893-gluster/mnt`): wherever such a path shows up in
/// a fact — a VM disk's image directory on a volume storlab mounted — it
/// changes with every campaign.
fn only_storlab_names_differ(a: Option<&str>, b: Option<&str>) -> bool {
    fn masked(s: &str) -> String {
        s.split_inclusive(['/', ':', ' ', ','])
            .map(|part| match part.starts_with("storlab-") {
                true => part
                    .split(|c: char| c.is_ascii_digit())
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join("#"),
                false => part.to_string(),
            })
            .collect()
    }
    match (a, b) {
        (Some(a), Some(b)) if a != b && (a.contains("storlab-") || b.contains("storlab-")) => {
            masked(a) == masked(b)
        }
        _ => false,
    }
}

/// The workloads and targets of `c` that `other` lacks (matched by name).
fn only_in(c: &CampaignData, other: &CampaignData) -> Vec<String> {
    let w = c
        .workloads
        .iter()
        .filter(|w| !other.workloads.iter().any(|x| x.name == w.name))
        .map(|w| format!("workload {}", w.name));
    let t = c
        .targets
        .iter()
        .filter(|t| !other.targets.iter().any(|x| x.name == t.name))
        .map(|t| format!("target {}", t.name));
    w.chain(t).collect()
}

impl Differences {
    /// The headline: what changed in versions and tags, `a → b`.
    pub fn headline(&self) -> String {
        let mut parts: Vec<String> = self
            .versions
            .iter()
            .map(|c| {
                let side = |v: &Option<String>| match v {
                    Some(v) => version_text(&c.name, v),
                    None => format!("no {}", c.name),
                };
                format!("{} → {}", side(&c.a), side(&c.b))
            })
            .collect();
        parts.extend(self.tags.iter().map(|c| {
            format!(
                "{}: {} → {}",
                c.name,
                c.a.as_deref().unwrap_or("(none)"),
                c.b.as_deref().unwrap_or("(none)")
            )
        }));
        if parts.is_empty() {
            "same versions and tags".into()
        } else {
            parts.join("; ")
        }
    }

    /// The workloads' parameters that differ, each with both values, as a
    /// sentence (empty when none differ).
    pub fn workload_text(&self, a: i64, b: i64) -> String {
        self.workload_params
            .iter()
            .map(|c| {
                format!(
                    "workload `{}` {}: {} in campaign {a}, {} in campaign {b}",
                    c.of,
                    c.name,
                    c.a.as_deref().unwrap_or("(unset)"),
                    c.b.as_deref().unwrap_or("(unset)")
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The facts that changed only because they change with every
    /// campaign, in a line that fits a terminal of 100 columns beside
    /// `left out: `: how many, and as many of their names as fit
    /// (`None` when there are none).
    pub fn varies_text(&self) -> Option<String> {
        const WIDTH: usize = 88;
        if self.varies.is_empty() {
            return None;
        }
        // The names most targets share first (free_bytes, mount_point…).
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &self.varies {
            *count
                .entry(c.name.rsplit('.').next().unwrap_or(&c.name))
                .or_default() += 1;
        }
        let mut names: Vec<&str> = count.keys().copied().collect();
        names.sort_by_key(|n| (std::cmp::Reverse(count[n]), n.to_lowercase()));
        let head = format!(
            "{} target fact(s) that change with every campaign",
            self.varies.len()
        );
        let mut shown = String::new();
        for (i, n) in names.iter().enumerate() {
            let sep = if shown.is_empty() { "" } else { ", " };
            let more = i + 1 < names.len();
            // Room for this name, and for ", …" if others follow.
            let need =
                head.len() + 3 + shown.len() + sep.len() + n.len() + if more { 3 } else { 0 };
            if need > WIDTH {
                shown.push_str(&format!("{sep}…"));
                break;
            }
            shown.push_str(&format!("{sep}{n}"));
        }
        Some(format!("{head} ({shown})"))
    }

    /// Every difference as lines, the headline first.
    pub fn text(&self, a: i64, b: i64) -> String {
        let mut out = format!("campaign {a} → campaign {b}: {}\n", self.headline());
        let groups = [
            ("host", &self.host),
            ("workload parameters", &self.workload_params),
            ("target parameters", &self.target_params),
            ("target facts", &self.target_facts),
        ];
        for (title, changes) in groups {
            if changes.is_empty() {
                continue;
            }
            out.push_str(&format!("differs in {title}:\n"));
            for c in changes {
                let of = if c.of.is_empty() {
                    String::new()
                } else {
                    format!("{} ", c.of)
                };
                out.push_str(&format!(
                    "  {of}{}: {} → {}\n",
                    c.name,
                    c.a.as_deref().unwrap_or("(unset)"),
                    c.b.as_deref().unwrap_or("(unset)")
                ));
            }
        }
        if let Some(names) = self.varies_text() {
            out.push_str(&format!("left out: {names}\n"));
        }
        if !self.only_in_a.is_empty() {
            out.push_str(&format!(
                "only in campaign {a}: {}\n",
                self.only_in_a.join(", ")
            ));
        }
        if !self.only_in_b.is_empty() {
            out.push_str(&format!(
                "only in campaign {b}: {}\n",
                self.only_in_b.join(", ")
            ));
        }
        out
    }
}

/// The names whose values differ between `a` and `b`, in name order.
fn changed(of: &str, a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<Change> {
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| a.get(*n) != b.get(*n))
        .map(|n| Change {
            of: of.to_string(),
            name: n.clone(),
            a: a.get(n).cloned(),
            b: b.get(n).cloned(),
        })
        .collect()
}

/// A JSON object flattened to `dotted.names` → its values as text
/// (arrays as JSON text); nulls are left out.
/// `fio: fio-3.33` reads better as `fio-3.33`; a line naming its program
/// is shown as it is, another one after the program's name.
pub fn version_text(program: &str, line: &str) -> String {
    if line.to_lowercase().contains(&program.to_lowercase()) {
        line.to_string()
    } else {
        format!("{program}: {line}")
    }
}

fn flat(v: &Value) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let name = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&name, x, out);
                }
            }
            Value::Null => {}
            Value::String(s) => {
                out.insert(prefix.to_string(), s.clone());
            }
            Value::Number(n) if n.is_f64() => {
                // 1000.0 is written as the user wrote it: 1000.
                let f = n.as_f64().unwrap_or(f64::NAN);
                let text = if f.fract() == 0.0 && f.abs() < 1e15 {
                    format!("{}", f as i64)
                } else {
                    f.to_string()
                };
                out.insert(prefix.to_string(), text);
            }
            other => {
                out.insert(prefix.to_string(), other.to_string());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", v, &mut out);
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn paths_through_what_storlab_named_after_its_pid_change_with_every_campaign() {
        let same = |a: &str, b: &str| only_storlab_names_differ(Some(a), Some(b));
        assert!(same(
            "/var/tmp/storlab-23869-gluster/mnt/storlab-work-gluster",
            "/var/tmp/storlab-3893-gluster/mnt/storlab-work-gluster"
        ));
        assert!(same(
            "vm:/storlab-23869-gluster",
            "vm:/storlab-3893-gluster"
        ));
        // Other differences stay differences.
        assert!(!same(
            "/var/tmp/storlab-1-gluster/a",
            "/var/tmp/storlab-2-gluster/b"
        ));
        assert!(!same("/srv/data1", "/srv/data2"));
        assert!(!same("storlab-1-x", "storlab-1-x"));
    }

    use super::*;
    use serde_json::json;

    fn m(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_values_that_differ_are_changes_and_absence_counts() {
        let c = changed(
            "",
            &m(&[("x", "1"), ("y", "2")]),
            &m(&[("x", "1"), ("z", "3")]),
        );
        let names: Vec<_> = c
            .iter()
            .map(|c| (c.name.as_str(), c.a.as_deref(), c.b.as_deref()))
            .collect();
        assert_eq!(names, [("y", Some("2"), None), ("z", None, Some("3"))]);
    }

    #[test]
    fn nested_parameters_are_compared_by_dotted_name() {
        let a =
            flat(&json!({ "settings": { "shared_buffers": "128MB" }, "clients": 8, "dsn": null }));
        assert_eq!(
            a,
            m(&[("clients", "8"), ("settings.shared_buffers", "128MB")])
        );
    }

    /// A campaign of one loop target with `facts` and `params`.
    fn campaign(params: Value, facts: Value) -> CampaignData {
        use crate::store::{CampaignRow, TargetRow};
        CampaignData {
            campaign: CampaignRow::finished("c", 0),
            environment: json!({}),
            experiment: json!({}),
            targets: vec![TargetRow {
                id: 1,
                name: "ext4".into(),
                kind: "loop".into(),
                params,
                facts,
                ..Default::default()
            }],
            workloads: Vec::new(),
            runs: Vec::new(),
            stops: Vec::new(),
            facts: Default::default(),
            pair_cache: Default::default(),
            columns: Default::default(),
            replicas: Vec::new(),
        }
    }

    #[test]
    fn facts_that_change_every_campaign_and_repeated_parameters_are_set_apart() {
        let a = campaign(
            json!({ "size": "400M", "dir": "/a" }),
            json!({ "fs_type": "ext4", "mount_point": "/a/storlab-1-ext4/mnt", "dir": "/a",
                    "image_dir_facts": { "free_bytes": 10 }, "block_device": { "name": "loop0", "model": "m" } }),
        );
        let b = campaign(
            json!({ "size": "400M", "dir": "/b" }),
            json!({ "fs_type": "xfs", "mount_point": "/b/storlab-2-ext4/mnt", "dir": "/b",
                    "image_dir_facts": { "free_bytes": 20 }, "block_device": { "name": "loop1", "model": "m" } }),
        );
        let d = differences(&a, &b);
        let names = |v: &[Change]| v.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&d.target_params), ["dir"]);
        assert_eq!(
            names(&d.target_facts),
            ["fs_type"],
            "the real difference alone"
        );
        assert_eq!(
            names(&d.varies),
            [
                "block_device.name",
                "image_dir_facts.free_bytes",
                "mount_point"
            ]
        );
    }

    #[test]
    fn facts_that_vary_fit_one_line_the_most_shared_first() {
        let change = |of: &str, name: &str| Change {
            of: of.into(),
            name: name.into(),
            a: Some("1".into()),
            b: Some("2".into()),
        };
        let mut d = Differences::default();
        assert_eq!(d.varies_text(), None);
        for t in ["a", "b", "c"] {
            d.varies.push(change(t, "image_dir_facts.free_bytes"));
            d.varies.push(change(t, "mount_point"));
        }
        for i in 0..20 {
            d.varies
                .push(change("gl", &format!("volume_info.Brick{i}")));
        }
        let text = d.varies_text().unwrap();
        assert!(
            text.starts_with(
                "26 target fact(s) that change with every campaign (free_bytes, mount_point, Brick0, "
            ),
            "{text}"
        );
        assert!(
            text.ends_with(", …)") && text.chars().count() <= 88,
            "{text}"
        );
    }

    #[test]
    fn the_headline_names_versions_and_tags_on_both_sides() {
        let d = Differences {
            versions: vec![Change {
                of: String::new(),
                name: "glusterfs".into(),
                a: Some("glusterfs 10.3".into()),
                b: Some("glusterfs 11.1".into()),
            }],
            tags: vec![Change {
                of: String::new(),
                name: "gluster".into(),
                a: Some("10.3".into()),
                b: None,
            }],
            ..Differences::default()
        };
        assert_eq!(
            d.headline(),
            "glusterfs 10.3 → glusterfs 11.1; gluster: 10.3 → (none)"
        );
        assert_eq!(Differences::default().headline(), "same versions and tags");
    }
}
