//! What a campaign ran with, collected before its first run without the
//! user typing it: the versions of the programs its targets and workloads
//! use (only those: a campaign on tmpfs records no Gluster), and the host
//! facts that move numbers between hosts and releases — kernel,
//! distribution, CPU frequency governor, transparent huge pages, the kernel
//! command line. The user's `--tag KEY=VALUE` join them. Stored by
//! [`crate::store::Provenance`]; storlab's own version and build are the
//! campaign's `storlab_version`.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde_json::Value;

use crate::experiment::Experiment;
use crate::provision::cmd;
use crate::store::Provenance;

/// Said for a host fact this host does not expose (no cpufreq in a VM).
pub const NOT_EXPOSED: &str = "not exposed";

/// The provenance of a campaign of `exp`, with the user's `tags`.
pub fn collect(exp: &Experiment, tags: &[(String, String)]) -> Provenance {
    Provenance {
        versions: versions(exp),
        host: host(),
        tags: tags.iter().cloned().collect(),
    }
}

/// Parses `KEY=VALUE` (for `--tag` and the filters).
pub fn parse_tag(text: &str) -> Result<(String, String)> {
    if let Some(c) = crate::foreign::unprintable(text) {
        bail!(
            "`{}` holds {c}, which would reach terminals and reports; use printable text",
            crate::foreign::visible(text)
        );
    }
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.is_empty() => {
            Ok((k.trim().to_string(), v.to_string()))
        }
        _ => bail!("`{text}` is not KEY=VALUE; write it as e.g. gluster=10.3 or host=node3"),
    }
}

/// Parses every `KEY=VALUE`; a key given twice is an error.
pub fn parse_tags(texts: &[String]) -> Result<Vec<(String, String)>> {
    let mut seen = BTreeMap::new();
    for t in texts {
        let (k, v) = parse_tag(t)?;
        if let Some(old) = seen.insert(k.clone(), v.clone()) {
            bail!("tag `{k}` is given twice ({old} and {v}); give each key once");
        }
    }
    Ok(seen.into_iter().collect())
}

fn host() -> BTreeMap<String, String> {
    let env = crate::host::environment();
    let text = |k: &str| env[k].as_str().unwrap_or_default().to_string();
    let file = |path: &str| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| NOT_EXPOSED.to_string())
    };
    BTreeMap::from([
        ("hostname".to_string(), text("hostname")),
        ("kernel".to_string(), text("kernel")),
        ("distribution".to_string(), text("distribution")),
        (
            "cpu_governor".to_string(),
            file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        ),
        (
            "transparent_hugepage".to_string(),
            selected(&file("/sys/kernel/mm/transparent_hugepage/enabled")),
        ),
        ("kernel_cmdline".to_string(), file("/proc/cmdline")),
    ])
}

/// `always [madvise] never` → `madvise`: the bracketed choice is the one in force.
fn selected(choices: &str) -> String {
    choices
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or(choices)
        .to_string()
}

/// The programs the campaign's targets and workloads run, by name, with
/// the first line each prints for its version ("not found" when missing:
/// the campaign will say so itself when it needs it).
fn versions(exp: &Experiment) -> BTreeMap<String, String> {
    let mut v = BTreeMap::new();
    for t in &exp.targets {
        let params = t.params.to_json();
        for (name, probe) in target_programs(t.kind.name(), &params) {
            v.entry(name).or_insert_with(probe);
        }
    }
    for w in &exp.workloads {
        let params = w.params.to_json();
        for (name, probe) in workload_programs(w.kind.name(), &params) {
            v.entry(name).or_insert_with(probe);
        }
    }
    v
}

type Probe = Box<dyn FnOnce() -> String>;

fn program(name: &str, args: &'static [&'static str]) -> (String, Probe) {
    let n = name.to_string();
    (
        name.to_string(),
        Box::new(move || cmd::version(&n, args).unwrap_or_else(|| "not found".into())),
    )
}

fn target_programs(kind: &str, params: &Value) -> Vec<(String, Probe)> {
    match kind {
        "loop" => {
            let fs = params["fs"].as_str().unwrap_or("ext4");
            let args: &'static [&'static str] = if fs == "btrfs" {
                &["--version"]
            } else {
                &["-V"]
            };
            vec![program(&format!("mkfs.{fs}"), args)]
        }
        "zfs" => vec![("zfs".to_string(), Box::new(zfs_version) as Probe)],
        "gluster" => vec![program("glusterfs", &["--version"])],
        "nfs" => vec![(
            "nfs-common".to_string(),
            Box::new(|| package_version("nfs-common")) as Probe,
        )],
        _ => Vec::new(),
    }
}

fn workload_programs(kind: &str, params: &Value) -> Vec<(String, Probe)> {
    match kind {
        "fio" => vec![program("fio", &["--version"])],
        "pgbench" => {
            let bindir = params["bindir"].as_str().map(String::from);
            let server = params["dsn"].is_null();
            let mut v = vec![pg_program("pgbench", bindir.clone())];
            if server {
                v.push(pg_program("postgres", bindir));
            }
            v
        }
        "sqlite-oltp" => vec![(
            "sqlite".to_string(),
            Box::new(|| rusqlite::version().to_string()) as Probe,
        )],
        _ => Vec::new(),
    }
}

fn pg_program(name: &'static str, bindir: Option<String>) -> (String, Probe) {
    let probe = move || {
        let Ok(b) = crate::workload::pgbench::binaries::Binaries::find(bindir.as_deref(), false)
        else {
            return "not found".to_string();
        };
        let path = if name == "pgbench" {
            b.pgbench
        } else {
            b.postgres
        };
        cmd::version(&path.to_string_lossy(), &["--version"]).unwrap_or_else(|| "not found".into())
    };
    (name.to_string(), Box::new(probe))
}

/// Kernel OpenZFS's module version, else zfs-fuse's package version (it
/// has no version option, and `zpool` needs its daemon running).
fn zfs_version() -> String {
    if let Ok(v) = std::fs::read_to_string("/sys/module/zfs/version") {
        return format!("OpenZFS {}", v.trim());
    }
    match package_version("zfs-fuse") {
        v if v != "not found" => format!("zfs-fuse {v}"),
        _ => "not found".into(),
    }
}

/// A Debian package's installed version (dpkg-query), or "not found".
fn package_version(package: &str) -> String {
    cmd::run("dpkg-query", &["-W", "-f", "${Version}", package])
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "not found".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_key_value_and_each_key_once() {
        assert_eq!(
            parse_tag("gluster=10.3").unwrap(),
            ("gluster".into(), "10.3".into())
        );
        assert_eq!(parse_tag("a=b=c").unwrap(), ("a".into(), "b=c".into()));
        for bad in ["gluster", "=1", "k=", ""] {
            let e = parse_tag(bad).unwrap_err().to_string();
            assert!(e.contains("KEY=VALUE"), "{e}");
        }
        let e = parse_tags(&["a=1".into(), "a=2".into()]).unwrap_err();
        assert!(e.to_string().contains("given twice (1 and 2)"), "{e}");
    }

    /// The programs a campaign with loop, zfs, gluster, pgbench and fio
    /// would use, each probed for real (nothing is provisioned: versions
    /// are collected from the experiment before anything runs).
    #[test]
    fn every_program_the_campaign_uses_has_its_version() {
        let job = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fio/randread.fio");
        let text = format!(
            "name = \"all\"\n\
             [[target]]\nname = \"ext4\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"64M\"\n\
             [[target]]\nname = \"xfs\"\nkind = \"loop\"\nfs = \"xfs\"\nsize = \"300M\"\n\
             [[target]]\nname = \"z\"\nkind = \"zfs\"\nsize = \"128M\"\n\
             [[target]]\nname = \"g\"\nkind = \"gluster\"\nbricks = 1\n\
             [[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsize = \"64M\"\n\
             [[workload]]\nname = \"pg\"\nkind = \"pgbench\"\n\
             [[workload]]\nname = \"f\"\nkind = \"fio\"\njob = \"{job}\"\n"
        );
        let exp = crate::experiment::parse_experiment("all.toml", &text).unwrap();
        let p = collect(&exp, &[("gluster".into(), "10.3".into())]);
        let v = |k: &str| {
            p.versions
                .get(k)
                .cloned()
                .unwrap_or_else(|| panic!("no {k}: {:?}", p.versions))
        };
        assert!(
            v("mkfs.ext4").starts_with("mke2fs 1."),
            "{}",
            v("mkfs.ext4")
        );
        assert!(
            v("mkfs.xfs").starts_with("mkfs.xfs version"),
            "{}",
            v("mkfs.xfs")
        );
        assert!(
            v("zfs").starts_with("zfs-fuse ") || v("zfs").starts_with("OpenZFS "),
            "{}",
            v("zfs")
        );
        assert!(
            v("glusterfs").starts_with("glusterfs "),
            "{}",
            v("glusterfs")
        );
        assert!(v("pgbench").contains("(PostgreSQL) "), "{}", v("pgbench"));
        assert!(v("postgres").contains("(PostgreSQL) "), "{}", v("postgres"));
        assert!(v("fio").starts_with("fio-"), "{}", v("fio"));
        // Only what the campaign uses: tmpfs runs no program, nothing else asked.
        assert_eq!(p.versions.len(), 7, "{:?}", p.versions);
        assert_eq!(p.tags.get("gluster").map(String::as_str), Some("10.3"));
        assert!(!p.host["kernel"].is_empty() && !p.host["kernel_cmdline"].is_empty());
    }

    #[test]
    fn the_bracketed_choice_is_the_one_in_force() {
        assert_eq!(selected("always [madvise] never"), "madvise");
        assert_eq!(selected(NOT_EXPOSED), NOT_EXPOSED);
    }
}
