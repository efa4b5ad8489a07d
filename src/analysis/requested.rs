//! Requested differences that are not differences, found by comparing what
//! each target asked for with what was read back once it was provisioned:
//! an option or property that reads back otherwise than asked, a mount
//! option the kernel does not show, and a setting a target asks for that
//! the baseline already has without asking (an option set to `off` that is
//! already `off` there). Each is a warning naming both values: a study of
//! five translators that switched off two already off compared three.

use super::about::Target;
use crate::fact::readback::{same_value, shows, MountEntry};
use crate::warning::{Warning, WarningKind};

/// Every such warning, targets in the experiment's order.
pub fn warnings(targets: &[Target], baseline: &str) -> Vec<Warning> {
    let base = targets.iter().find(|t| t.name == baseline);
    let mut out = Vec::new();
    for t in targets {
        out.extend(settings(t, base));
        out.extend(mount_options(t, base));
    }
    out.into_iter()
        .map(|s| Warning::new(WarningKind::Setting, s))
        .collect()
}

/// A target's requested settings (`options`, `properties`) and what each
/// reads back as there and on the baseline.
fn settings(t: &Target, base: Option<&Target>) -> Vec<String> {
    let mut out = Vec::new();
    for (key, want) in &t.requested.settings {
        let Some(got) = read_back(t, key) else {
            continue;
        };
        if !same_value(want, &got) {
            out.push(format!(
                "{}: {key} = {want} was asked for, but it reads back as {got}: the setting did not take",
                t.name
            ));
            continue;
        }
        let Some(b) = base.filter(|b| b.name != t.name) else {
            continue;
        };
        let asked_there = b.requested.asks_for(key);
        match read_back(b, key) {
            Some(there) if !asked_there && same_value(want, &there) => out.push(format!(
                "{}: {key} = {want} was asked for, but the baseline {} already has {key} = {there}{}: no difference between them",
                t.name,
                b.name,
                served_by(b)
            )),
            _ => {}
        }
    }
    out
}

/// What a setting reads back as on `t`: Gluster's effective option, the
/// ZFS property's value.
fn read_back(t: &Target, key: &str) -> Option<String> {
    t.facts.setting(key).map(String::from)
}

/// ` (glusterfs 10.3)`: the version that set the default, when recorded.
fn served_by(t: &Target) -> String {
    let versions = &t.facts.versions;
    ["gluster", "zfs"]
        .iter()
        .find_map(|k| versions.get(*k))
        .map(|v| format!(" ({v})"))
        .unwrap_or_default()
}

/// The kernel's view of a target's mount, from its facts; `None` for a
/// FUSE mount, whose client options the kernel does not list.
fn mount_entry(t: &Target) -> Option<(String, MountEntry)> {
    let f = &t.facts;
    let fs = f.fs_type.clone()?;
    if fs.starts_with("fuse") {
        return None;
    }
    let entry = MountEntry {
        mount_id: 0,
        major: 0,
        minor: 0,
        mount_point: f.mount_point.clone().unwrap_or_default(),
        mount_options: f.mount_options.clone()?,
        fs_type: fs.clone(),
        source: f.mount_source.clone().unwrap_or_default(),
        super_options: f.super_options.clone().unwrap_or_default(),
    };
    Some((fs, entry))
}

/// Mount options the kernel does not show on `t`, and those the baseline
/// shows without having asked for them.
fn mount_options(t: &Target, base: Option<&Target>) -> Vec<String> {
    let Some((fs, entry)) = mount_entry(t) else {
        return Vec::new();
    };
    let shown = format!("{} / {}", entry.mount_options, entry.super_options);
    let base = base
        .filter(|b| b.name != t.name)
        .and_then(|b| Some((b, mount_entry(b)?)));
    let mut out = Vec::new();
    for o in &t.requested.mount_options {
        if shows(&fs, o, &entry) == Some(false) {
            out.push(format!(
                "{}: mount option {o} was asked for, but the kernel does not show it (mountinfo: {shown}): it was dropped or renamed",
                t.name
            ));
            continue;
        }
        let Some((b, (bfs, bentry))) = &base else {
            continue;
        };
        if !b.requested.mount_options.contains(o) && shows(bfs, o, bentry) == Some(true) {
            out.push(format!(
                "{}: mount option {o} was asked for, but the baseline {} already has it (mountinfo: {} / {}): no difference between them",
                t.name, b.name, bentry.mount_options, bentry.super_options
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::store::TargetRow;

    fn target(name: &str, kind: &str, params: Value, facts: Value) -> Target {
        Target::of(&TargetRow {
            id: 1,
            name: name.into(),
            kind: kind.into(),
            baseline: false,
            params,
            facts,
            ..Default::default()
        })
    }

    fn gluster(name: &str, options: Value, effective: Value) -> Target {
        let facts = json!({
            "fs_type": "fuse.glusterfs",
            "mount_options": "rw,relatime",
            "effective_options": effective,
            "gluster_version": "glusterfs 10.3",
        });
        target(name, "gluster", json!({ "options": options }), facts)
    }

    // The translators study: io-cache and read-ahead are off by default on
    // Gluster 10.3, so switching them off compares nothing.
    #[test]
    fn a_setting_the_baseline_already_has_is_no_difference() {
        let base = gluster(
            "default",
            json!({}),
            json!({"performance.io-cache": "off", "performance.read-ahead": "off (DEFAULT)", "performance.write-behind": "on"}),
        );
        let t = gluster(
            "no-perf",
            json!({"performance.io-cache": "off", "performance.read-ahead": "off", "performance.write-behind": "off"}),
            json!({"performance.io-cache": "off", "performance.read-ahead": "off", "performance.write-behind": "off"}),
        );
        let w = settings(&t, Some(&base));
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(w[0], "no-perf: performance.io-cache = off was asked for, but the baseline default already has performance.io-cache = off (glusterfs 10.3): no difference between them");
        assert!(
            w[1].contains("performance.read-ahead = off (DEFAULT)"),
            "{}",
            w[1]
        );
        assert!(settings(&base, Some(&base)).is_empty());
    }

    #[test]
    fn a_setting_that_reads_back_otherwise_did_not_take() {
        let facts =
            json!({"zfs_properties": {"recordsize": {"value": "128K", "source": "default"}}});
        let t = target(
            "z",
            "zfs",
            json!({"properties": {"recordsize": "8k"}}),
            facts,
        );
        assert_eq!(
            settings(&t, None),
            ["z: recordsize = 8k was asked for, but it reads back as 128K: the setting did not take"]
        );
    }

    #[test]
    fn mount_options_dropped_or_already_there_are_named() {
        let facts = |opts: &str| json!({"fs_type": "ext4", "mount_options": opts, "super_options": "rw,data=ordered"});
        let base = target(
            "a",
            "loop",
            json!({"mount_options": []}),
            facts("rw,relatime"),
        );
        let t = target(
            "b",
            "loop",
            json!({"mount_options": ["relatime", "nobh", "noatime", "rw"]}),
            facts("rw,noatime"),
        );
        let w = mount_options(&t, Some(&base));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with(
                "b: mount option relatime was asked for, but the kernel does not show it"
            ),
            "{}",
            w[0]
        );
        assert!(
            w[1].starts_with("b: mount option nobh was asked for"),
            "{}",
            w[1]
        );
        let t = target(
            "c",
            "loop",
            json!({"mount_options": ["relatime"]}),
            facts("rw,relatime"),
        );
        let w = mount_options(&t, Some(&base));
        assert_eq!(w, ["c: mount option relatime was asked for, but the baseline a already has it (mountinfo: rw,relatime / rw,data=ordered): no difference between them"]);
        let fuse = gluster("g", json!({}), json!({}));
        assert!(
            mount_options(&fuse, Some(&base)).is_empty(),
            "FUSE client options are not in mountinfo"
        );
    }
}
