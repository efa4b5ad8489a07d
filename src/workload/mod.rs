//! Workloads: what runs against a target and yields metrics.
//!
//! Each kind lives in its own module behind the [`Workload`] trait; the
//! closed registry [`WorkloadKind`] maps names to parameter tables,
//! validation, estimates and constructors, and drives `storlab workloads`.

pub mod io;
pub mod matrix;
pub mod smallfiles;
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
    Matrix,
    Smallfiles,
    Tinywrites,
}

impl WorkloadKind {
    pub const ALL: &'static [WorkloadKind] = &[
        WorkloadKind::Io,
        WorkloadKind::Matrix,
        WorkloadKind::Smallfiles,
        WorkloadKind::Tinywrites,
    ];

    pub fn names() -> &'static [&'static str] {
        &["io", "matrix", "smallfiles", "tinywrites"]
    }

    pub fn parse(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Io => "io",
            WorkloadKind::Matrix => "matrix",
            WorkloadKind::Smallfiles => "smallfiles",
            WorkloadKind::Tinywrites => "tinywrites",
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            WorkloadKind::Io => "storlab's native I/O engine, with fio's parameter names",
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
            WorkloadKind::Matrix => matrix::PARAMS,
            WorkloadKind::Smallfiles => smallfiles::PARAMS,
            WorkloadKind::Tinywrites => tinywrites::PARAMS,
        }
    }

    pub fn validate(self, p: &Params) -> Result<(), (&'static str, String)> {
        match self {
            WorkloadKind::Io => io::validate(p),
            WorkloadKind::Matrix => matrix::validate(p),
            WorkloadKind::Smallfiles => smallfiles::validate(p),
            WorkloadKind::Tinywrites => tinywrites::validate(p),
        }
    }

    /// Whether this workload can run on a target of that kind.
    pub fn supports(self, _p: &Params, _target: TargetKind, _tp: &Params) -> Result<(), String> {
        Ok(())
    }

    pub fn primary(self) -> Primary {
        match self {
            WorkloadKind::Io => Primary {
                name: "bw_bytes_per_s",
                unit: "bytes/s",
                direction: Direction::HigherIsBetter,
            },
            WorkloadKind::Matrix => Primary {
                name: matrix::PRIMARY,
                unit: "bytes/s",
                direction: Direction::HigherIsBetter,
            },
            WorkloadKind::Smallfiles => Primary {
                name: "ops_per_s",
                unit: "ops/s",
                direction: Direction::HigherIsBetter,
            },
            WorkloadKind::Tinywrites => Primary {
                name: "total_s",
                unit: "s",
                direction: Direction::LowerIsBetter,
            },
        }
    }

    pub fn estimate(self, p: &Params) -> Duration {
        match self {
            WorkloadKind::Io => io::estimate(p),
            WorkloadKind::Matrix => matrix::estimate(p),
            WorkloadKind::Smallfiles => smallfiles::estimate(p),
            WorkloadKind::Tinywrites => tinywrites::estimate(p),
        }
    }

    /// Bytes the workload writes into the target at most.
    pub fn bytes_needed(self, p: &Params) -> u64 {
        match self {
            WorkloadKind::Io => io::bytes_needed(p),
            WorkloadKind::Matrix => matrix::bytes_needed(p),
            WorkloadKind::Smallfiles => smallfiles::bytes_needed(p),
            WorkloadKind::Tinywrites => tinywrites::bytes_needed(p),
        }
    }

    pub fn build(self, p: &Params) -> Box<dyn Workload> {
        match self {
            WorkloadKind::Io => Box::new(io::Io::new(p)),
            WorkloadKind::Matrix => Box::new(matrix::Matrix::new(p)),
            WorkloadKind::Smallfiles => Box::new(smallfiles::Smallfiles::new(p)),
            WorkloadKind::Tinywrites => Box::new(tinywrites::Tinywrites::new(p)),
        }
    }
}
