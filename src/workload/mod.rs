//! Workloads: what runs against a target and yields metrics.
//!
//! Each kind lives in its own module behind the [`Workload`] trait. The
//! closed registry is one table, [`KINDS`]: an entry per kind with its name,
//! help, parameter table, primary metric and the functions the rest of
//! storlab calls (validation, path resolution, preflight, estimates,
//! constructor), as fio's ioengine ops struct. [`WorkloadKind`] names a row.

pub mod command;
pub mod fio;
pub mod io;
pub mod matrix;
pub mod mock;
pub mod pgbench;
pub mod smallfiles;
pub mod sqlite_oltp;
pub mod tinywrites;

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::experiment::params::{ParamSpec, Params};
use crate::measure::{RunOutput, StopFlag};
use crate::metric::catalogue as m;
use crate::metric::MetricDef;
use crate::targets::TargetKind;

/// What the runner tells a workload about the run at hand.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub stop: StopFlag,
    /// Differs per run, so that random patterns are not replayed exactly.
    pub run_seed: u64,
}

/// A workload's lifecycle on one target directory.
pub trait Workload: Send {
    /// Untimed setup before each run (laying out files); may reuse earlier work.
    fn prepare(&mut self, dir: &Path) -> Result<()>;
    /// The measured run.
    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput>;
    /// Untimed cleanup after each run.
    fn cleanup(&mut self, dir: &Path) -> Result<()>;
}

/// The closed registry of workload kinds; each names one row of [`KINDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    Io,
    Fio,
    Command,
    Mock,
    Pgbench,
    SqliteOltp,
    Matrix,
    Smallfiles,
    Tinywrites,
}

type Check = fn(&Params) -> Result<(), (&'static str, String)>;
type Resolve = fn(&mut Params, &Path) -> Result<(), (&'static str, String)>;

/// Everything storlab asks of one workload kind.
pub struct KindEntry {
    pub kind: WorkloadKind,
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    /// The metric verdicts are about (its value without labels).
    pub primary: &'static MetricDef,
    /// Cross-checks of the parameters, once the file is parsed.
    pub validate: Check,
    /// Resolves what the parameters point at: relative paths against the
    /// experiment file's directory.
    pub resolve: Resolve,
    /// Checks made before a campaign provisions anything (a program is there).
    pub preflight: fn(&Params) -> Result<()>,
    pub estimate: fn(&Params) -> Duration,
    /// Bytes the workload writes into the target at most (0: unknown).
    pub bytes_needed: fn(&Params) -> u64,
    pub build: fn(&Params) -> Box<dyn Workload>,
    /// Under MPI: the metric holding a rank's measured duration, for IOR's
    /// aggregate throughput.
    pub span_metric: Option<&'static MetricDef>,
    /// Whether it may run once per MPI rank (a database per rank measures
    /// neither a shared server nor the storage's scaling).
    pub per_rank: bool,
    /// Whether `shared = true` may put every rank on one set of files.
    pub shareable: bool,
}

fn nothing_to_resolve(_: &mut Params, _: &Path) -> Result<(), (&'static str, String)> {
    Ok(())
}

fn nothing_to_check(_: &Params) -> Result<()> {
    Ok(())
}

fn unknown_size(_: &Params) -> u64 {
    0
}

/// The registry, in the order `storlab workloads` lists it.
pub static KINDS: &[KindEntry] = &[
    KindEntry {
        kind: WorkloadKind::Io,
        name: "io",
        about: "storlab's native I/O engine, with fio's parameter names",
        params: io::PARAMS,
        primary: &m::BW_BYTES_PER_S,
        validate: io::validate,
        resolve: nothing_to_resolve,
        preflight: nothing_to_check,
        estimate: io::estimate,
        bytes_needed: io::bytes_needed,
        build: |p| Box::new(io::Io::new(p)),
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: true,
    },
    KindEntry {
        kind: WorkloadKind::Fio,
        name: "fio",
        about: "a fio job file (or inline options) run by fio, its JSON+ output as storlab metrics",
        params: fio::PARAMS,
        primary: &m::BW_BYTES_PER_S,
        validate: fio::validate,
        resolve: fio::resolve,
        preflight: |_| fio::preflight(),
        estimate: fio::estimate,
        bytes_needed: fio::bytes_needed,
        build: |p| Box::new(fio::Fio::new(p)),
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: false,
    },
    KindEntry {
        kind: WorkloadKind::Command,
        name: "command",
        about: "any program run in the target's working directory, timed",
        params: command::PARAMS,
        primary: &m::WALL_S,
        validate: command::validate,
        resolve: command::resolve,
        preflight: nothing_to_check,
        estimate: command::estimate,
        // Unknown beforehand: the command's own errors tell.
        bytes_needed: unknown_size,
        build: |p| Box::new(command::CommandWorkload::new(p)),
        span_metric: Some(&m::WALL_S),
        per_rank: true,
        shareable: true,
    },
    KindEntry {
        kind: WorkloadKind::Mock,
        name: "mock",
        about: "synthetic seeded metrics that touch no storage, for testing storlab itself",
        params: mock::PARAMS,
        primary: &m::OPS_PER_S,
        validate: |_| Ok(()),
        resolve: nothing_to_resolve,
        preflight: nothing_to_check,
        estimate: |p| p.duration("duration").unwrap_or_default(),
        bytes_needed: unknown_size,
        build: |p| Box::new(mock::Mock::new(p)),
        span_metric: None,
        per_rank: true,
        shareable: false,
    },
    KindEntry {
        kind: WorkloadKind::Pgbench,
        name: "pgbench",
        about:
            "PostgreSQL's pgbench on a cluster storlab creates in the target (or a server by dsn)",
        params: pgbench::PARAMS,
        primary: &m::TPS,
        validate: pgbench::validate,
        resolve: pgbench::resolve,
        preflight: nothing_to_check,
        estimate: pgbench::estimate,
        bytes_needed: pgbench::bytes_needed,
        build: |p| Box::new(pgbench::Pgbench::new(p)),
        span_metric: Some(&m::ELAPSED_S),
        per_rank: false,
        shareable: false,
    },
    KindEntry {
        kind: WorkloadKind::SqliteOltp,
        name: "sqlite-oltp",
        about: "pgbench's TPC-B-like transaction on an embedded SQLite database in the target",
        params: sqlite_oltp::PARAMS,
        primary: &m::TPS,
        validate: sqlite_oltp::validate,
        resolve: nothing_to_resolve,
        preflight: nothing_to_check,
        estimate: sqlite_oltp::estimate,
        bytes_needed: sqlite_oltp::bytes_needed,
        build: |p| Box::new(sqlite_oltp::SqliteOltp::new(p)),
        span_metric: Some(&m::ELAPSED_S),
        per_rank: false,
        shareable: false,
    },
    KindEntry {
        kind: WorkloadKind::Matrix,
        name: "matrix",
        about: "iozone's automatic mode: file sizes x record sizes x tests",
        params: matrix::PARAMS,
        primary: &m::GEOMEAN_BW_BYTES_PER_S,
        validate: matrix::validate,
        resolve: nothing_to_resolve,
        preflight: nothing_to_check,
        estimate: matrix::estimate,
        bytes_needed: matrix::bytes_needed,
        build: |p| Box::new(matrix::Matrix::new(p)),
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: false,
    },
    KindEntry {
        kind: WorkloadKind::Smallfiles,
        name: "smallfiles",
        about: "small-file metadata storms: create, stat, read, append, rename, readdir, delete",
        params: smallfiles::PARAMS,
        primary: &m::OPS_PER_S,
        validate: smallfiles::validate,
        resolve: nothing_to_resolve,
        preflight: nothing_to_check,
        estimate: smallfiles::estimate,
        bytes_needed: smallfiles::bytes_needed,
        build: |p| Box::new(smallfiles::Smallfiles::new(p)),
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: false,
    },
    KindEntry {
        kind: WorkloadKind::Tinywrites,
        name: "tinywrites",
        about: "tiny writes up to a total size, then sync, optionally compressed on the way",
        params: tinywrites::PARAMS,
        primary: &m::TOTAL_S,
        validate: tinywrites::validate,
        resolve: nothing_to_resolve,
        preflight: nothing_to_check,
        estimate: tinywrites::estimate,
        bytes_needed: tinywrites::bytes_needed,
        build: |p| Box::new(tinywrites::Tinywrites::new(p)),
        span_metric: Some(&m::TOTAL_S),
        per_rank: true,
        shareable: false,
    },
];

impl WorkloadKind {
    /// This kind's row of the registry.
    pub fn entry(self) -> &'static KindEntry {
        KINDS
            .iter()
            .find(|e| e.kind == self)
            .expect("every workload kind has a row in KINDS (tested)")
    }

    pub fn all() -> impl Iterator<Item = WorkloadKind> {
        KINDS.iter().map(|e| e.kind)
    }

    pub fn names() -> Vec<&'static str> {
        KINDS.iter().map(|e| e.name).collect()
    }

    pub fn parse(name: &str) -> Option<WorkloadKind> {
        KINDS.iter().find(|e| e.name == name).map(|e| e.kind)
    }

    pub fn name(self) -> &'static str {
        self.entry().name
    }

    pub fn about(self) -> &'static str {
        self.entry().about
    }

    pub fn params(self) -> &'static [ParamSpec] {
        self.entry().params
    }

    pub fn validate(self, p: &Params) -> Result<(), (&'static str, String)> {
        (self.entry().validate)(p)
    }

    pub fn resolve(self, p: &mut Params, base: &Path) -> Result<(), (&'static str, String)> {
        (self.entry().resolve)(p, base)
    }

    pub fn preflight(self, p: &Params) -> Result<()> {
        (self.entry().preflight)(p)
    }

    /// Whether this workload can run on a target of that kind.
    pub fn supports(self, _p: &Params, _target: TargetKind, _tp: &Params) -> Result<(), String> {
        Ok(())
    }

    pub fn primary(self) -> &'static MetricDef {
        self.entry().primary
    }

    pub fn estimate(self, p: &Params) -> Duration {
        (self.entry().estimate)(p)
    }

    pub fn bytes_needed(self, p: &Params) -> u64 {
        (self.entry().bytes_needed)(p)
    }

    pub fn build(self, p: &Params) -> Box<dyn Workload> {
        (self.entry().build)(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_exactly_one_row_and_names_are_unique() {
        use WorkloadKind::*;
        let kinds = [
            Io, Fio, Command, Mock, Pgbench, SqliteOltp, Matrix, Smallfiles, Tinywrites,
        ];
        for k in kinds {
            assert_eq!(KINDS.iter().filter(|e| e.kind == k).count(), 1, "{k:?}");
            assert_eq!(WorkloadKind::parse(k.name()), Some(k));
        }
        assert_eq!(KINDS.len(), kinds.len());
        let mut names = WorkloadKind::names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KINDS.len());
    }
}
