//! storlab's figures against fio's own, on output of the installed fio
//! (tests/fixtures/fio: each NAME.fio run by `make.sh` with
//! `--output-format=json+,normal`, its stdout kept whole in NAME.out). fio's
//! "Run status group" summary is its own aggregate: a group's bytes over its
//! longest job's run time, per direction.

use super::super::jobfile;
use super::*;

/// One direction of one group in fio's summary.
#[derive(Debug)]
struct Summary {
    group: usize,
    dir: &'static str,
    /// fio's `(NNNMB/s)`, in bytes per second.
    bytes_per_s: f64,
    /// The longest job's run time, `run=MIN-MAXmsec`, in seconds.
    max_run_s: f64,
}

/// `1613MB/s`, `748kB/s`, `1.2GB/s` in bytes per second.
fn decimal_rate(text: &str) -> f64 {
    let units = [("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3), ("B/s", 1.0)];
    let (num, mult) = units
        .iter()
        .find_map(|(u, m)| text.strip_suffix(u).map(|n| (n, *m)))
        .unwrap_or_else(|| panic!("no rate in {text}"));
    num.parse::<f64>().unwrap() * mult
}

/// fio's "Run status group" lines in `out`.
fn summary(out: &str) -> Vec<Summary> {
    let mut group = None;
    let mut rows = Vec::new();
    for line in out.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("Run status group ") {
            group = rest.split_whitespace().next().and_then(|g| g.parse().ok());
            continue;
        }
        let dir = match line.split(':').next() {
            Some("READ") => "read",
            Some("WRITE") => "write",
            Some("TRIM") => "trim",
            _ => continue,
        };
        let rate = &line[line.find('(').unwrap() + 1..line.find(')').unwrap()];
        let run = line.split("run=").nth(1).unwrap();
        let max_ms: f64 = run
            .trim_end_matches("msec")
            .split('-')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        rows.push(Summary {
            group: group.expect("a direction line before any group"),
            dir,
            bytes_per_s: decimal_rate(rate),
            max_run_s: max_ms / 1e3,
        });
    }
    rows
}

struct Fixture {
    summary: Vec<Summary>,
    out: RunOutput,
    report: FioReport,
}

fn fixture(name: &str) -> Fixture {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio");
    let text = std::fs::read_to_string(dir.join(format!("{name}.fio"))).unwrap();
    let stdout = std::fs::read_to_string(dir.join(format!("{name}.out"))).unwrap();
    let report = parse(&stdout).unwrap().unwrap();
    let out = to_run_output(&report, &jobfile::jobs(&text)).unwrap();
    assert!(out.warnings.is_empty(), "{name}: {:?}", out.warnings);
    Fixture {
        summary: summary(&stdout),
        out,
        report,
    }
}

use std::path::Path;

impl Fixture {
    fn fio(&self, group: usize, dir: &str) -> &Summary {
        self.summary
            .iter()
            .find(|s| s.group == group && s.dir == dir)
            .unwrap_or_else(|| panic!("no {dir} of group {group} in {:?}", self.summary))
    }

    fn get(&self, def: &MetricDef) -> f64 {
        self.out
            .metric(def)
            .unwrap_or_else(|| panic!("no metric {}", def.name))
    }
}

/// `ours` is fio's `theirs` to its printed precision (3-4 digits).
fn assert_fios(what: &str, ours: f64, theirs: f64) {
    let ratio = ours / theirs;
    assert!(
        (ratio - 1.0).abs() < 0.003,
        "{what}: storlab {ours:.0} B/s, fio {theirs:.0} B/s (ratio {ratio:.4})"
    );
}

#[test]
fn numjobs_4_is_rated_as_fios_group() {
    for name in ["numjobs4", "numjobs4-group"] {
        let f = fixture(name);
        let fio = f.fio(0, "read");
        assert_fios(name, f.get(&m::BW_BYTES_PER_S), fio.bytes_per_s);
        assert_eq!(f.get(&m::ELAPSED_S), fio.max_run_s, "{name}");
    }
}

#[test]
fn group_reporting_keeps_fios_figure_for_the_group() {
    let f = fixture("numjobs4-group");
    assert_eq!(f.report.jobs.len(), 1);
    let fio_bw = f.report.jobs[0].read.io_bytes as f64 * 1e3 / f.report.jobs[0].read.runtime;
    let job0 = Labels::new().with(&JOB, 0);
    assert_eq!(f.out.labelled(&m::BW_BYTES_PER_S, &job0).unwrap(), fio_bw);
    // fio's job_runtime is the sum over the group's 4 jobs; ours is not.
    assert!(f.report.jobs[0].job_runtime > 3.5 * f.get(&m::ELAPSED_S));
}

#[test]
fn concurrent_groups_are_summed_over_the_time_they_ran_together() {
    let f = fixture("concurrent-groups");
    let (writers, readers) = (f.fio(0, "write"), f.fio(1, "read"));
    assert_fios(
        "writers",
        f.get(&m::WRITE_BW_BYTES_PER_S),
        writers.bytes_per_s,
    );
    assert_fios(
        "readers",
        f.get(&m::READ_BW_BYTES_PER_S),
        readers.bytes_per_s,
    );
    let together = writers.max_run_s.max(readers.max_run_s);
    assert_eq!(f.get(&m::ELAPSED_S), together);
    // Both ran the same second: the run's rate is the two groups' together
    // (to the few ms by which their longest jobs differ).
    let sum = writers.bytes_per_s + readers.bytes_per_s;
    let ratio = f.get(&m::BW_BYTES_PER_S) / sum;
    assert!((0.99..1.003).contains(&ratio), "{ratio}");
}

#[test]
fn stonewalled_phases_follow_each_other_and_each_direction_has_its_own_time() {
    let f = fixture("write-then-read");
    let (write, read) = (f.fio(0, "write"), f.fio(1, "read"));
    assert_fios("write", f.get(&m::WRITE_BW_BYTES_PER_S), write.bytes_per_s);
    assert_fios("read", f.get(&m::READ_BW_BYTES_PER_S), read.bytes_per_s);
    let elapsed = f.get(&m::ELAPSED_S);
    assert!((elapsed - (write.max_run_s + read.max_run_s)).abs() < 1e-9);
    assert_eq!(f.get(&m::BYTES) / elapsed, f.get(&m::BW_BYTES_PER_S));
}

#[test]
fn a_mixed_job_has_both_directions_over_the_same_time() {
    let f = fixture("randrw");
    let (read, write) = (f.fio(0, "read"), f.fio(0, "write"));
    assert_fios("read", f.get(&m::READ_BW_BYTES_PER_S), read.bytes_per_s);
    assert_fios("write", f.get(&m::WRITE_BW_BYTES_PER_S), write.bytes_per_s);
    assert_fios(
        "both",
        f.get(&m::BW_BYTES_PER_S),
        read.bytes_per_s + write.bytes_per_s,
    );
}
