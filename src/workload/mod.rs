//! Workloads: what runs against a target and yields metrics.
//!
//! Each kind lives in its own module behind the [`Workload`] trait. The
//! closed registry is one table, [`KINDS`]: an entry per kind with its name,
//! help, parameter table, primary metric and how its parameters become a
//! [`WorkloadConfig`] (checked, paths resolved), as fio's ioengine ops
//! struct. The configuration, built once per workload (and again per
//! variant when a value is overridden), answers preflight, estimates and
//! the constructor. [`WorkloadKind`] names a row.

pub mod command;
pub mod fio;
pub mod io;
pub mod matrix;
pub mod mock;
pub mod pgbench;
pub mod smallfiles;
pub mod sqlite_oltp;
pub mod tinywrites;

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::measure::layers::Stack;
use crate::measure::telemetry::{DeviceProbe, Served};
use crate::measure::RunOutput;
use crate::metric::catalogue as m;
use crate::metric::MetricDef;
use crate::params::{Declared, Fault, ParamSpec, Params};
use crate::process::StopFlag;
use crate::provision::journal::Journal;
use crate::targets::TargetKind;

/// What the runner tells a workload about the run at hand.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// Raised by SIGINT/SIGTERM/SIGHUP, in preparation as in the run.
    pub stop: StopFlag,
    /// Differs per run, so that random patterns are not replayed exactly.
    pub run_seed: u64,
    /// The run's 0-based position in the campaign's order (for the mock
    /// workload's simulated drift).
    pub position: u32,
    /// The name of the target the run is on.
    pub target: String,
    /// The target's physical devices, when telemetry watches them: a
    /// workload that times phases of its own (the matrix's cells) reads
    /// their counters around each.
    pub devices: Option<DeviceProbe>,
    /// The layers of the target's stack, when their counters are read
    /// (a run on one process with `caches` on): a workload that times
    /// phases of its own (the matrix's cells) reads them around each.
    pub layers: Option<std::sync::Arc<Stack>>,
    /// The campaign's journal: a workload records here, before creating
    /// it, anything it makes outside its directory (a socket directory in
    /// /tmp), so that teardown and `storlab cleanup` remove it.
    pub journal: Journal,
}

impl RunContext {
    /// A context for running a workload outside a campaign (tests, tools):
    /// never stopped, the first run of target `t`, journaling into the
    /// state directory.
    pub fn standalone(run_seed: u64) -> RunContext {
        RunContext {
            stop: StopFlag::new(),
            run_seed,
            position: 0,
            target: "t".into(),
            journal: Journal::for_campaign(crate::provision::resource::Kinds::NONE),
            devices: None,
            layers: None,
        }
    }
}

/// A workload's lifecycle on one target directory.
pub trait Workload: Send {
    /// Untimed setup before each run (laying out files); may reuse earlier
    /// work. It ends early, with an error, once `cx.stop` is raised.
    fn prepare(&mut self, dir: &Path, cx: &RunContext) -> Result<()>;
    /// The measured run.
    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput>;
    /// Untimed cleanup after each run.
    fn cleanup(&mut self, dir: &Path) -> Result<()>;
    /// Processes serving the run that storlab starts for it (a database
    /// server), for the telemetry; asked after prepare.
    fn serving(&self, _dir: &Path) -> Vec<Served> {
        Vec::new()
    }
    /// Runs on the raw device `dev` (a `block` target) instead of files in
    /// the directory; only a kind that can do so accepts it (experiment
    /// validation keeps the others off block targets).
    fn use_device(&mut self, dev: &Path) -> Result<()> {
        anyhow::bail!(
            "this workload needs a filesystem and cannot run on the raw device {}",
            dev.display()
        )
    }
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

/// A workload kind's checked parameters: what the rest of storlab asks of
/// one workload.
pub trait WorkloadConfig: Debug + Send + Sync {
    /// The labels of the kind's primary metric that the workload's verdict
    /// concerns (a matrix's `primary_test`: that test's geometric mean);
    /// none for the metric over the whole run. The store reads the same
    /// key back from the stored parameters
    /// (`crate::store::WorkloadRow::verdict_metric`).
    fn verdict_labels(&self) -> crate::metric::Labels {
        crate::metric::Labels::new()
    }
    /// Checks made before a campaign provisions anything (a program is there).
    fn preflight(&self) -> Result<()> {
        Ok(())
    }
    /// Rough length of one run, saturating rather than overflowing.
    fn estimate(&self) -> Duration;
    /// The part of [`WorkloadConfig::estimate`] that moves with the
    /// storage (data written and read, operations issued), as opposed to
    /// a length the workload sets itself (`runtime`, `duration`): what a
    /// slower target stretches. All of it unless a kind says otherwise.
    fn estimate_io(&self) -> Duration {
        self.estimate()
    }
    /// How many calls one run makes to the storage (a `read` or `write` of
    /// a record), for targets that charge each beyond its bytes (a round
    /// trip through a FUSE client and its servers); 0 where a kind does
    /// not count them, or where its bytes dominate.
    fn estimate_calls(&self) -> u64 {
        0
    }
    /// What a first run on fresh files does before its measurement
    /// (creating and initialising a PostgreSQL cluster): the model counts
    /// it once per set of [`WorkloadConfig::kept_files`].
    fn estimate_once(&self) -> Duration {
        Duration::ZERO
    }
    /// The part of [`WorkloadConfig::estimate_once`] that moves with the
    /// storage.
    fn estimate_once_io(&self) -> Duration {
        self.estimate_once()
    }
    /// Bytes the workload writes into the target at most (0: unknown),
    /// saturating rather than overflowing.
    fn bytes_needed(&self) -> u64;
    /// Memory one run holds on this host beyond the page cache, per
    /// client (MPI rank): the engine's buffers, a server's shared
    /// buffers. Saturating; 0 where it is small or unknown.
    fn memory_needed(&self) -> u64 {
        0
    }
    /// Whether what it writes stays on the target from one run to the
    /// next, until the campaign ends (a PostgreSQL cluster initialised
    /// once): such workloads need their room all at once.
    fn keeps_its_files(&self) -> bool {
        self.kept_files().is_some()
    }
    /// What the files it keeps until the campaign ends are made of (None:
    /// it keeps none). Variants of one workload table with the same key
    /// share one copy: a PostgreSQL cluster of the same scale and settings
    /// serves every transaction count of a sweep, as one database served
    /// every run of the seed's.
    fn kept_files(&self) -> Option<String> {
        None
    }
    /// The offered rate of an open-loop run, which a capacity search
    /// turns; why not, for a kind (or parameters) that offer none.
    fn open_loop(&self) -> Result<OpenLoop, String> {
        Err("it runs closed-loop only (as fast as it can), with no rate to set".into())
    }
    fn build(&self) -> Box<dyn Workload>;
    /// The root its server comes from (pgbench's PostgreSQL, `root`);
    /// none for a kind that runs no server.
    fn root(&self) -> Option<crate::provision::root::RootNeed> {
        None
    }
}

/// How a kind offers load at a set rate (an open-loop run: operations
/// due on a schedule, latency counted from when each was due), so that a
/// capacity search can set it: the parameter, for how many issuers each,
/// and the metric that says what was achieved.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoop {
    /// The parameter that sets the rate (`rate_iops`, `rate`).
    pub param: &'static str,
    /// Issuers that each offer the parameter's rate (an io workload's
    /// jobs): the offered total is the value times this.
    pub issuers: u64,
    /// The parameter's value as written (per issuer), 0 when none is.
    pub value: f64,
    /// Whether the parameter takes whole numbers (an `int`, a `size`).
    pub whole: bool,
    /// The metric of what a run achieved, in the offered rate's unit.
    pub achieved: &'static MetricDef,
    /// Where arrivals follow a Poisson schedule (pgbench -R) rather than a
    /// fixed one: the metric counting those served, by which a run's
    /// achieved rate is judged with the schedule's own spread.
    pub served: Option<&'static MetricDef>,
}

impl OpenLoop {
    /// The parameter's value that offers `total` (rounded to a whole
    /// number where the parameter takes one, at least 1).
    pub fn value_for(&self, total: f64) -> f64 {
        let per = total / self.issuers.max(1) as f64;
        if self.whole {
            per.round().max(1.0)
        } else {
            per
        }
    }

    /// The total offered when the parameter is `value`.
    pub fn total(&self, value: f64) -> f64 {
        value * self.issuers.max(1) as f64
    }
}

/// A kind's declared parameters ([`crate::params::declare!`]) turned into
/// its configuration.
pub trait Configure: Declared {
    type Config: WorkloadConfig + 'static;
    /// Cross-checks (the key at fault and why), then what the parameters
    /// point at: relative paths against `base`, the experiment file's
    /// directory. What resolution changes is recorded in `stored`, the
    /// parameter rows kept with each run; resolving them again changes
    /// nothing.
    fn configure(self, base: &Path, stored: &mut Params) -> Result<Self::Config, Fault>;
}

type Configurer = fn(&mut Params, &Path) -> Result<Arc<dyn WorkloadConfig>, Fault>;

/// Reads a kind's typed parameters once and configures it.
fn configure<K: Configure>(p: &mut Params, base: &Path) -> Result<Arc<dyn WorkloadConfig>, Fault> {
    let declared = K::from_params(p)?;
    Ok(Arc::new(declared.configure(base, p)?))
}

/// Everything storlab asks of one workload kind.
pub struct KindEntry {
    pub kind: WorkloadKind,
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [ParamSpec],
    /// The metric verdicts are about (its value without labels).
    pub primary: &'static MetricDef,
    /// Checks and resolves parameters into the kind's configuration.
    pub configure: Configurer,
    /// Under MPI: the metric holding a rank's measured duration, for IOR's
    /// aggregate throughput.
    pub span_metric: Option<&'static MetricDef>,
    /// Whether it may run once per MPI rank (a database per rank measures
    /// neither a shared server nor the storage's scaling).
    pub per_rank: bool,
    /// Whether `shared = true` may put every rank on one set of files.
    pub shareable: bool,
    /// Other names people write for its parameters (fio's aliases), each
    /// with the name storlab knows it by: refused with that name.
    pub aliases: &'static [(&'static str, &'static str)],
}

/// The registry, in the order `storlab workloads` lists it.
pub static KINDS: &[KindEntry] = &[
    KindEntry {
        kind: WorkloadKind::Io,
        name: "io",
        about: "storlab's native I/O engine, with fio's parameter names",
        params: io::IoParams::PARAMS,
        primary: &m::BW_BYTES_PER_S,
        configure: configure::<io::IoParams>,
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: true,
        aliases: io::FIO_ALIASES,
    },
    KindEntry {
        kind: WorkloadKind::Fio,
        name: "fio",
        about: "a fio job file (or inline options) run by fio, its JSON+ output as storlab metrics",
        params: fio::FioParams::PARAMS,
        primary: &m::BW_BYTES_PER_S,
        configure: configure::<fio::FioParams>,
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: false,
        aliases: &[],
    },
    KindEntry {
        kind: WorkloadKind::Command,
        name: "command",
        about: "any program run in the target's working directory, timed",
        params: command::CommandParams::PARAMS,
        primary: &m::WALL_S,
        configure: configure::<command::CommandParams>,
        span_metric: Some(&m::WALL_S),
        per_rank: true,
        shareable: true,
        aliases: &[],
    },
    KindEntry {
        kind: WorkloadKind::Mock,
        name: "mock",
        about: "synthetic seeded metrics that touch no storage, for testing storlab itself",
        params: mock::MockParams::PARAMS,
        primary: &m::OPS_PER_S,
        configure: configure::<mock::MockParams>,
        span_metric: None,
        per_rank: true,
        shareable: false,
        aliases: &[],
    },
    KindEntry {
        kind: WorkloadKind::Pgbench,
        name: "pgbench",
        about:
            "PostgreSQL's pgbench on a cluster storlab creates in the target (or a server by dsn)",
        params: pgbench::PgbenchParams::PARAMS,
        primary: &m::TPS,
        configure: configure::<pgbench::PgbenchParams>,
        span_metric: Some(&m::ELAPSED_S),
        per_rank: false,
        shareable: false,
        aliases: &[],
    },
    KindEntry {
        kind: WorkloadKind::SqliteOltp,
        name: "sqlite-oltp",
        about: "pgbench's TPC-B-like transaction on an embedded SQLite database in the target",
        params: sqlite_oltp::SqliteOltpParams::PARAMS,
        primary: &m::TPS,
        configure: configure::<sqlite_oltp::SqliteOltpParams>,
        span_metric: Some(&m::ELAPSED_S),
        per_rank: false,
        shareable: false,
        aliases: &[],
    },
    KindEntry {
        kind: WorkloadKind::Matrix,
        name: "matrix",
        about: "iozone's automatic mode: file sizes x record sizes x tests",
        params: matrix::MatrixParams::PARAMS,
        primary: &m::GEOMEAN_BW_BYTES_PER_S,
        configure: configure::<matrix::MatrixParams>,
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: false,
        aliases: &[],
    },
    KindEntry {
        kind: WorkloadKind::Smallfiles,
        name: "smallfiles",
        about: "small-file metadata storms: create, stat, read, append, rename, readdir, delete",
        params: smallfiles::SmallfilesParams::PARAMS,
        primary: &m::OPS_PER_S,
        configure: configure::<smallfiles::SmallfilesParams>,
        span_metric: Some(&m::ELAPSED_S),
        per_rank: true,
        shareable: false,
        aliases: &[],
    },
    KindEntry {
        kind: WorkloadKind::Tinywrites,
        name: "tinywrites",
        about: "tiny writes up to a total size, then sync, optionally compressed on the way",
        params: tinywrites::TinywritesParams::PARAMS,
        primary: &m::TOTAL_S,
        configure: configure::<tinywrites::TinywritesParams>,
        span_metric: Some(&m::TOTAL_S),
        per_rank: true,
        shareable: false,
        aliases: &[],
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

    /// Checks `p` and resolves what it points at (relative paths against
    /// `base`, recorded in `p`) into the kind's configuration. A sweep
    /// overrides values in `p` and configures each variant anew.
    pub fn configure(self, p: &mut Params, base: &Path) -> Result<Arc<dyn WorkloadConfig>, Fault> {
        (self.entry().configure)(p, base)
    }

    /// Whether this workload can run on a target of that kind: a `block`
    /// target has no filesystem, only the io engine runs on a raw device.
    pub fn supports(self, _p: &Params, target: TargetKind, _tp: &Params) -> Result<(), String> {
        if target == TargetKind::Block && self != WorkloadKind::Io {
            return Err(format!(
                "a block target is a raw device without a filesystem: only io workloads run on it, not {}",
                self.name()
            ));
        }
        Ok(())
    }

    pub fn primary(self) -> &'static MetricDef {
        self.entry().primary
    }

    /// Other names for its parameters: (written, storlab's name).
    pub fn aliases(self) -> &'static [(&'static str, &'static str)] {
        self.entry().aliases
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

    #[test]
    fn every_declared_default_is_read_into_its_typed_field() {
        fn reads<K: Declared>() {
            let p = Params::defaults(K::PARAMS);
            let declared = K::PARAMS.iter().filter(|s| s.default.is_some()).count();
            assert_eq!(p.to_json().as_object().unwrap().len(), declared);
            if let Err(e) = K::from_params(&p) {
                panic!("{}: {e:?}", std::any::type_name::<K>());
            }
        }
        reads::<io::IoParams>();
        reads::<fio::FioParams>();
        reads::<command::CommandParams>();
        reads::<mock::MockParams>();
        reads::<pgbench::PgbenchParams>();
        reads::<sqlite_oltp::SqliteOltpParams>();
        reads::<matrix::MatrixParams>();
        reads::<smallfiles::SmallfilesParams>();
        reads::<tinywrites::TinywritesParams>();
    }

    #[test]
    fn an_overridden_value_is_checked_and_estimated_anew() {
        use crate::params::Value;
        let base = Path::new(".");
        let mut p = Params::defaults(WorkloadKind::Pgbench.params());
        p.set("transactions", Value::Int(1000));
        let short = WorkloadKind::Pgbench.configure(&mut p, base).unwrap();
        p.set("transactions", Value::Int(4000));
        let long = WorkloadKind::Pgbench.configure(&mut p, base).unwrap();
        assert!(long.estimate() > short.estimate());

        let mut p = Params::defaults(WorkloadKind::Io.params());
        assert!(WorkloadKind::Io.configure(&mut p, base).is_ok());
        p.set("bs", Value::Size(1 << 30));
        let (key, msg) = WorkloadKind::Io.configure(&mut p, base).unwrap_err();
        assert_eq!(key, "bs");
        assert!(msg.contains("larger than size"), "{msg}");
    }
}
