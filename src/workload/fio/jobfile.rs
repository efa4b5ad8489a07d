//! fio job files as storlab reads them: `include` lines expanded (only
//! files below the experiment's directory), every option checked against
//! storlab's allow-list ([`super::policy`]), `directory` lines replaced
//! (storlab points fio at its own directory on each target), and the jobs'
//! sizes and run times read for space checks and estimates.
//!
//! The syntax is fio's INI dialect (`fio(1)`, "Job file format"): `[name]`
//! sections, `[global]` defaults for the jobs after it, `key=value` or a
//! bare `key`, `;` and `#` comment lines, `include FILE` relative to the
//! including file. Everything else is fio's to interpret.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::params::units::{parse_duration, parse_size};

/// How deep `include` may nest (fio itself has no limit; loops must end).
const MAX_INCLUDE_DEPTH: usize = 16;

/// One line of a job file.
#[derive(Debug, Clone, PartialEq)]
enum Line<'a> {
    Blank,
    Section(&'a str),
    Include(&'a str),
    Option(String, Option<&'a str>),
}

fn classify(raw: &str) -> Line<'_> {
    let t = raw.trim();
    if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
        return Line::Blank;
    }
    if let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return Line::Section(name.trim());
    }
    if let Some(rest) = t.strip_prefix("include") {
        if rest.starts_with([' ', '\t']) {
            return Line::Include(rest.trim());
        }
    }
    match t.split_once('=') {
        Some((k, v)) => Line::Option(normalize(k), Some(v.trim())),
        None => Line::Option(normalize(t), None),
    }
}

/// Option names compared case-insensitively, `-` as `_`.
fn normalize(key: &str) -> String {
    key.trim().to_ascii_lowercase().replace('-', "_")
}

/// Reads a job file with its includes expanded in place, checking every
/// line; errors name the file and line. An included file must lie below
/// `base`, the experiment file's directory: its text is stored with the
/// campaign and exported.
pub fn load(path: &Path, base: &Path) -> Result<String, String> {
    let base = base
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", base.display()))?;
    let mut out = String::new();
    expand(path, &base, 0, &mut out)?;
    Ok(out)
}

fn expand(path: &Path, base: &Path, depth: usize, out: &mut String) -> Result<(), String> {
    if depth > MAX_INCLUDE_DEPTH {
        return Err(format!(
            "{}: includes nest deeper than {MAX_INCLUDE_DEPTH} levels (a loop?)",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read fio job file {}: {e}", path.display()))?;
    let here = path.parent().unwrap_or(Path::new("."));
    for (i, raw) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        match classify(raw) {
            Line::Include(name) => {
                let inc = below(&here.join(name), base).map_err(|e| format!("{}: {e}", at()))?;
                out.push_str(&format!("; storlab: include {name}\n"));
                expand(&inc, base, depth + 1, out)
                    .map_err(|e| format!("{} (included at {})", e, at()))?;
            }
            line => {
                check_line(&line).map_err(|e| format!("{}: {e}", at()))?;
                out.push_str(raw);
                out.push('\n');
            }
        }
    }
    Ok(())
}

/// `path` resolved, if it lies below `base`.
fn below(path: &Path, base: &Path) -> Result<PathBuf, String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("cannot read the included file {}: {e}", path.display()))?;
    if !real.starts_with(base) {
        return Err(format!(
            "`include {}` reaches outside the experiment's directory {}; the included text is stored with the campaign, so storlab includes only files below that directory",
            path.display(),
            base.display()
        ));
    }
    Ok(real)
}

/// Refuses an option that is not on storlab's allow-list, and a job name
/// fio would make a file name outside the working directory.
fn check_line(line: &Line<'_>) -> Result<(), String> {
    match line {
        Line::Option(key, value) => super::policy::check(key, *value),
        Line::Section(name) => super::policy::check_job_name(name)
            .map_err(|why| format!("the job name `[{}]` {why}", name.escape_debug())),
        _ => Ok(()),
    }
}

/// The job text of inline options: one job named `inline`. Booleans
/// (`true`, written `on` by the experiment parser) become fio's 1 and 0.
pub fn inline(options: &BTreeMap<String, String>) -> Result<String, String> {
    let mut text = String::from("[inline]\n");
    for (key, value) in options {
        if key.is_empty() || key.contains(['=', '[', ']', '\n', '\r']) || key == "include" {
            return Err(format!("`{key}` is not a fio option name"));
        }
        if value.contains(['\n', '\r']) {
            return Err(format!("the value of `{key}` must be on one line"));
        }
        if normalize(key) == "directory" {
            return Err("`directory` is storlab's to set: fio runs in storlab's working directory on each target; remove it".into());
        }
        let value = match value.as_str() {
            "on" | "true" => "1",
            "off" | "false" => "0",
            v => v,
        };
        let line = if value.is_empty() {
            key.clone()
        } else {
            format!("{key}={value}")
        };
        check_line(&classify(&line))?;
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

/// The text handed to fio: `directory` lines commented out, with one
/// warning each.
pub fn render(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut warnings = Vec::new();
    for raw in text.lines() {
        if let Line::Option(key, value) = classify(raw) {
            if key == "directory" {
                out.push_str("; storlab replaced: ");
                out.push_str(raw.trim());
                out.push('\n');
                warnings.push(format!(
                    "the job file's `directory={}` is replaced by storlab's working directory on the target",
                    value.unwrap_or("")
                ));
                continue;
            }
        }
        out.push_str(raw);
        out.push('\n');
    }
    (out, warnings)
}

/// What storlab needs to know of one job: enough for estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct JobInfo {
    pub name: String,
    pub numjobs: u64,
    pub size: Option<u64>,
    pub io_bytes: Option<u64>,
    pub filename: Option<String>,
    pub runtime: Option<Duration>,
    pub ramp: Duration,
    pub time_based: bool,
    /// `stonewall` (`wait_for_previous`) or `wait_for`: starts after the
    /// jobs before it.
    pub waits: bool,
    /// `rate_iops` as written (`100`, or `100,50` for reads and writes).
    pub rate_iops: Option<String>,
}

/// The jobs of a job text in order, each with the `[global]` options in
/// force where it appears.
pub fn jobs(text: &str) -> Vec<JobInfo> {
    let mut globals: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut sections: Vec<(String, BTreeMap<String, Option<String>>)> = Vec::new();
    let mut in_global = false;
    for raw in text.lines() {
        match classify(raw) {
            Line::Section(name) => {
                in_global = name == "global";
                if !in_global {
                    sections.push((name.to_string(), globals.clone()));
                }
            }
            Line::Option(key, value) => {
                let value = value.map(String::from);
                match sections.last_mut() {
                    Some((_, opts)) if !in_global => {
                        opts.insert(key, value);
                    }
                    _ => {
                        globals.insert(key, value);
                    }
                }
            }
            Line::Blank | Line::Include(_) => {}
        }
    }
    sections
        .into_iter()
        .map(|(name, o)| job_info(name, &o))
        .collect()
}

fn job_info(name: String, o: &BTreeMap<String, Option<String>>) -> JobInfo {
    let get = |k: &str| o.get(k).map(|v| v.as_deref().unwrap_or(""));
    let flag = |k: &str| get(k).is_some_and(|v| v != "0");
    let size = |k: &str| get(k).and_then(|v| parse_size(v).ok());
    let loops = get("loops")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(1);
    JobInfo {
        name,
        numjobs: get("numjobs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1u64)
            .max(1),
        size: size("size"),
        io_bytes: size("io_size")
            .or_else(|| size("io_limit"))
            .or_else(|| size("size"))
            .map(|b| b.saturating_mul(loops)),
        filename: get("filename").map(String::from),
        runtime: get("runtime").and_then(|v| parse_duration(v).ok()),
        ramp: get("ramp_time")
            .and_then(|v| parse_duration(v).ok())
            .unwrap_or_default(),
        time_based: flag("time_based"),
        waits: flag("stonewall") || flag("wait_for_previous") || get("wait_for").is_some(),
        rate_iops: get("rate_iops").map(String::from),
    }
}

/// The job text with every `rate_iops` option set to `value` (each job's
/// operations per second, as fio reads it), the lines it replaced kept as
/// comments.
pub fn with_rate_iops(text: &str, value: u64) -> String {
    let mut out = String::with_capacity(text.len());
    for raw in text.lines() {
        if let Line::Option(key, _) = classify(raw) {
            if key == "rate_iops" {
                out.push_str(&format!(
                    "; storlab's capacity search replaced: {}\nrate_iops={value}\n",
                    raw.trim()
                ));
                continue;
            }
        }
        out.push_str(raw);
        out.push('\n');
    }
    out
}

/// Bytes the jobs' files take at most: a file named by `filename` counts
/// once however many jobs share it.
pub fn bytes_needed(jobs: &[JobInfo]) -> u64 {
    let mut files: BTreeMap<String, u64> = BTreeMap::new();
    for (i, j) in jobs.iter().enumerate() {
        let size = j.size.unwrap_or(0);
        match &j.filename {
            Some(f) => {
                let e = files.entry(format!("named:{f}")).or_default();
                *e = (*e).max(size);
            }
            None => {
                files.insert(format!("job:{i}"), size.saturating_mul(j.numjobs));
            }
        }
    }
    files.values().fold(0, |a, b| a.saturating_add(*b))
}

/// Rough run time: jobs between stonewalls run together, the longest of
/// them decides; size-based jobs are counted at 500 MB/s.
pub fn estimate(jobs: &[JobInfo]) -> Duration {
    let mut total = Duration::ZERO;
    let mut phase = Duration::ZERO;
    for j in jobs {
        let by_size = Duration::from_secs_f64(j.io_bytes.unwrap_or(0) as f64 / 500e6);
        let run = match (j.runtime, j.time_based) {
            (Some(r), true) => r,
            (Some(r), false) => r.min(by_size),
            (None, _) => by_size,
        };
        if j.waits {
            total += phase;
            phase = Duration::ZERO;
        }
        phase = phase.max(run + j.ramp);
    }
    total + phase
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: &str = "; a comment\n[global]\nioengine=psync\nsize=64M\ndirectory=/mnt/test\n\n[write]\nrw=write\nbs=1M\n\n[read]\nstonewall\nrw=randread\nnumjobs=2\nruntime=10s\ntime_based\n";

    #[test]
    fn a_capacity_search_sets_every_rate_iops() {
        let text = "[global]\nrate_iops=100\n[a]\nrw=randread\n[b]\nRate-IOPS = 50\nnumjobs=2\n";
        let set = with_rate_iops(text, 400);
        let jobs = jobs(&set);
        assert_eq!(jobs.len(), 2);
        assert!(
            jobs.iter().all(|j| j.rate_iops.as_deref() == Some("400")),
            "{set}"
        );
        assert!(
            set.contains("; storlab's capacity search replaced: Rate-IOPS = 50"),
            "{set}"
        );
        assert_eq!(jobs[1].numjobs, 2);
    }

    #[test]
    fn jobs_inherit_globals_in_order() {
        let j = jobs(JOB);
        assert_eq!(j.len(), 2);
        assert_eq!(j[0].name, "write");
        assert_eq!(j[0].size, Some(64 << 20));
        assert!(!j[0].waits && j[1].waits && j[1].time_based);
        assert_eq!(j[1].numjobs, 2);
        assert_eq!(bytes_needed(&j), 3 * (64 << 20));
        let e = estimate(&j).as_secs_f64();
        assert!((10.1..10.2).contains(&e), "{e}");
    }

    #[test]
    fn shared_files_count_once() {
        let j = jobs("[a]\nsize=1M\nfilename=f\nnumjobs=4\n[b]\nsize=2M\nfilename=f\n");
        assert_eq!(bytes_needed(&j), 2 << 20);
    }

    #[test]
    fn directory_lines_are_replaced_with_a_warning() {
        let (text, warnings) = render(JOB);
        assert!(!text.lines().any(|l| l.starts_with("directory")));
        assert!(text.contains("; storlab replaced: directory=/mnt/test"));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("/mnt/test"), "{warnings:?}");
    }

    #[test]
    fn paths_outside_the_working_directory_are_refused() {
        for bad in [
            "filename=/dev/sdb",
            "filename=a:/etc/passwd",
            "FileName=../x",
            "write_bw_log=/tmp/bw",
            "opendir=${HOME}",
            "exec_prerun=touch /tmp/pwned",
            "Exec-PostRun=id",
            "ioscheduler=none",
            "mem=mmapshared:/abs",
            "[../../x]",
            "[/tmp/x]",
            "name=../y",
            "filename_format=../$jobname.$jobnum",
        ] {
            assert!(check_line(&classify(bad)).is_err(), "{bad}");
        }
        for good in [
            "filename=data",
            "filename=a\\:b:c",
            "directory=/mnt",
            "rw=read",
            "[global]",
            "[rand-read.4k]",
            "filename_format=$jobname.$jobnum.$filenum",
        ] {
            assert!(check_line(&classify(good)).is_ok(), "{good}");
        }
    }

    #[test]
    fn includes_are_expanded_and_checked_with_their_location() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/common.fio"), "[global]\nbs=4k\n").unwrap();
        std::fs::write(
            d.path().join("main.fio"),
            "include sub/common.fio\n[j]\nrw=read\n",
        )
        .unwrap();
        let text = load(&d.path().join("main.fio"), d.path()).unwrap();
        assert!(text.contains("bs=4k") && text.contains("[j]"), "{text}");
        std::fs::write(
            d.path().join("sub/common.fio"),
            "[global]\n\nfilename=/dev/sda\n",
        )
        .unwrap();
        let err = load(&d.path().join("main.fio"), d.path()).unwrap_err();
        assert!(
            err.contains("common.fio:3:") && err.contains("main.fio:1"),
            "{err}"
        );
    }

    #[test]
    fn an_include_outside_the_experiments_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let exp = d.path().join("exp");
        std::fs::create_dir(&exp).unwrap();
        std::fs::write(d.path().join("secret"), "[global]\nbs=4k\n").unwrap();
        for inc in [
            "include ../secret",
            "include /etc/shadow",
            "include /etc/passwd",
        ] {
            std::fs::write(exp.join("main.fio"), format!("{inc}\n[j]\nrw=read\n")).unwrap();
            let err = load(&exp.join("main.fio"), &exp).unwrap_err();
            assert!(
                err.contains("outside the experiment's directory") || err.contains("cannot read"),
                "{inc}: {err}"
            );
        }
    }

    #[test]
    fn inline_options_make_one_job() {
        let mut o = BTreeMap::new();
        o.insert("rw".to_string(), "randread".to_string());
        o.insert("time_based".to_string(), "on".to_string());
        o.insert("group_reporting".to_string(), String::new());
        let text = inline(&o).unwrap();
        assert_eq!(
            text,
            "[inline]\ngroup_reporting\nrw=randread\ntime_based=1\n"
        );
        o.insert("directory".to_string(), "/x".to_string());
        assert!(inline(&o).unwrap_err().contains("storlab's to set"));
        o.remove("directory");
        o.insert("rw".to_string(), "read\n[evil]".to_string());
        assert!(inline(&o).is_err());
    }
}
