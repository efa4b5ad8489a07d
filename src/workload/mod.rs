//! Workloads: what runs against a target and yields metrics.
//!
//! Each kind lives in its own module behind the [`Workload`] trait; the
//! closed registry [`WorkloadKind`] maps names to parameter tables,
//! validation, estimates and constructors, and drives `storlab workloads`.

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
use crate::metric::Direction;
use crate::target::TargetKind;

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

/// The primary metric of a workload kind: the one verdicts are about.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Primary {
    pub name: &'static str,
    pub unit: &'static str,
    pub direction: Direction,
}

/// The closed registry of workload kinds.
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

impl WorkloadKind {
    pub const ALL: &'static [WorkloadKind] = &[
        WorkloadKind::Io,
        WorkloadKind::Fio,
        WorkloadKind::Command,
        WorkloadKind::Mock,
        WorkloadKind::Pgbench,
        WorkloadKind::SqliteOltp,
        WorkloadKind::Matrix,
        WorkloadKind::Smallfiles,
        WorkloadKind::Tinywrites,
    ];

    pub fn names() -> &'static [&'static str] {
        &[
            "io",
            "fio",
            "command",
            "mock",
            "pgbench",
            "sqlite-oltp",
            "matrix",
            "smallfiles",
            "tinywrites",
        ]
    }

    pub fn parse(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Io => "io",
            WorkloadKind::Fio => "fio",
            WorkloadKind::Command => "command",
            WorkloadKind::Mock => "mock",
            WorkloadKind::Pgbench => "pgbench",
            WorkloadKind::SqliteOltp => "sqlite-oltp",
            WorkloadKind::Matrix => "matrix",
            WorkloadKind::Smallfiles => "smallfiles",
            WorkloadKind::Tinywrites => "tinywrites",
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            WorkloadKind::Io => "storlab's native I/O engine, with fio's parameter names",
            WorkloadKind::Fio => {
                "a fio job file (or inline options) run by fio, its JSON+ output as storlab metrics"
            }
            WorkloadKind::Command => "any program run in the target's working directory, timed",
            WorkloadKind::Mock => {
                "synthetic seeded metrics that touch no storage, for testing storlab itself"
            }
            WorkloadKind::Pgbench => {
                "PostgreSQL's pgbench on a cluster storlab creates in the target (or a server by dsn)"
            }
            WorkloadKind::SqliteOltp => {
                "pgbench's TPC-B-like transaction on an embedded SQLite database in the target"
            }
            WorkloadKind::Matrix => "iozone's automatic mode: file sizes x record sizes x tests",
            WorkloadKind::Smallfiles => {
                "small-file metadata storms: create, stat, read, append, rename, readdir, delete"
            }
            WorkloadKind::Tinywrites => {
                "tiny writes up to a total size, then sync, optionally compressed on the way"
            }
        }
    }

    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            WorkloadKind::Io => io::PARAMS,
            WorkloadKind::Fio => fio::PARAMS,
            WorkloadKind::Command => command::PARAMS,
            WorkloadKind::Mock => mock::PARAMS,
            WorkloadKind::Pgbench => pgbench::PARAMS,
            WorkloadKind::SqliteOltp => sqlite_oltp::PARAMS,
            WorkloadKind::Matrix => matrix::PARAMS,
            WorkloadKind::Smallfiles => smallfiles::PARAMS,
            WorkloadKind::Tinywrites => tinywrites::PARAMS,
        }
    }

    pub fn validate(self, p: &Params) -> Result<(), (&'static str, String)> {
        match self {
            WorkloadKind::Io => io::validate(p),
            WorkloadKind::Fio => fio::validate(p),
            WorkloadKind::Command => command::validate(p),
            WorkloadKind::Mock => Ok(()),
            WorkloadKind::Pgbench => pgbench::validate(p),
            WorkloadKind::SqliteOltp => sqlite_oltp::validate(p),
            WorkloadKind::Matrix => matrix::validate(p),
            WorkloadKind::Smallfiles => smallfiles::validate(p),
            WorkloadKind::Tinywrites => tinywrites::validate(p),
        }
    }

    /// Resolves what the parameters point at once the file is read: relative
    /// paths against `base`, the experiment file's directory.
    pub fn resolve(self, p: &mut Params, base: &Path) -> Result<(), (&'static str, String)> {
        match self {
            WorkloadKind::Fio => fio::resolve(p, base),
            WorkloadKind::Command => command::resolve(p, base),
            WorkloadKind::Pgbench => pgbench::resolve(p, base),
            _ => Ok(()),
        }
    }

    /// Checks made before a campaign provisions anything (a program is there).
    pub fn preflight(self, _p: &Params) -> Result<()> {
        match self {
            WorkloadKind::Fio => fio::preflight(),
            _ => Ok(()),
        }
    }

    /// Whether this workload can run on a target of that kind.
    pub fn supports(self, _p: &Params, _target: TargetKind, _tp: &Params) -> Result<(), String> {
        Ok(())
    }

    pub fn primary(self) -> Primary {
        use Direction::{HigherIsBetter, LowerIsBetter};
        let (name, unit, direction) = match self {
            WorkloadKind::Io | WorkloadKind::Fio => ("bw_bytes_per_s", "bytes/s", HigherIsBetter),
            WorkloadKind::Command => ("wall_s", "s", LowerIsBetter),
            WorkloadKind::Mock | WorkloadKind::Smallfiles => ("ops_per_s", "ops/s", HigherIsBetter),
            WorkloadKind::Pgbench | WorkloadKind::SqliteOltp => ("tps", "tx/s", HigherIsBetter),
            WorkloadKind::Matrix => (matrix::PRIMARY, "bytes/s", HigherIsBetter),
            WorkloadKind::Tinywrites => ("total_s", "s", LowerIsBetter),
        };
        Primary {
            name,
            unit,
            direction,
        }
    }

    pub fn estimate(self, p: &Params) -> Duration {
        match self {
            WorkloadKind::Io => io::estimate(p),
            WorkloadKind::Fio => fio::estimate(p),
            WorkloadKind::Command => command::estimate(p),
            WorkloadKind::Mock => p.duration("duration").unwrap_or_default(),
            WorkloadKind::Pgbench => pgbench::estimate(p),
            WorkloadKind::SqliteOltp => sqlite_oltp::estimate(p),
            WorkloadKind::Matrix => matrix::estimate(p),
            WorkloadKind::Smallfiles => smallfiles::estimate(p),
            WorkloadKind::Tinywrites => tinywrites::estimate(p),
        }
    }

    /// Bytes the workload writes into the target at most.
    pub fn bytes_needed(self, p: &Params) -> u64 {
        match self {
            WorkloadKind::Io => io::bytes_needed(p),
            WorkloadKind::Fio => fio::bytes_needed(p),
            // Unknown beforehand: the command's own errors tell.
            WorkloadKind::Command => 0,
            WorkloadKind::Mock => 0,
            WorkloadKind::Pgbench => pgbench::bytes_needed(p),
            WorkloadKind::SqliteOltp => sqlite_oltp::bytes_needed(p),
            WorkloadKind::Matrix => matrix::bytes_needed(p),
            WorkloadKind::Smallfiles => smallfiles::bytes_needed(p),
            WorkloadKind::Tinywrites => tinywrites::bytes_needed(p),
        }
    }

    pub fn build(self, p: &Params) -> Box<dyn Workload> {
        match self {
            WorkloadKind::Io => Box::new(io::Io::new(p)),
            WorkloadKind::Fio => Box::new(fio::Fio::new(p)),
            WorkloadKind::Command => Box::new(command::CommandWorkload::new(p)),
            WorkloadKind::Mock => Box::new(mock::Mock::new(p)),
            WorkloadKind::Pgbench => Box::new(pgbench::Pgbench::new(p)),
            WorkloadKind::SqliteOltp => Box::new(sqlite_oltp::SqliteOltp::new(p)),
            WorkloadKind::Matrix => Box::new(matrix::Matrix::new(p)),
            WorkloadKind::Smallfiles => Box::new(smallfiles::Smallfiles::new(p)),
            WorkloadKind::Tinywrites => Box::new(tinywrites::Tinywrites::new(p)),
        }
    }
}
