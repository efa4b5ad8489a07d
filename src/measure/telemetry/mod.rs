//! Telemetry: what the system did during each run, beside what the
//! workload measured. A sampling thread ([`sampler`]) reads, once a second
//! from the start of the measured run to its end, the counters of the
//! target's device chain ([`chain`]), the host's CPU, the CPU of storlab,
//! the programs it runs and the processes serving the target ([`procs`]),
//! memory, pressure stall information and the ZFS ARC ([`arc`]), all
//! through the `procfs` crate ([`sample`]). [`figures`] turns a recording
//! into catalogue metrics (labelled `device` and `process`), per-second
//! series and facts; [`checks`] turns those into warnings when a run
//! measured the wrong thing. `[plan] telemetry = false` turns it off.
//!
//! The runner asks each target what backs it ([`Backing`]: images, brick
//! directories, daemons) once after provisioning and each workload which
//! processes serve it (a PostgreSQL server), then wraps the measured run
//! in [`Recorder::start`] … [`Recorder::stop`] and hands the recording to
//! [`conclude`].

pub mod arc;
pub mod blocktrace;
pub mod chain;
pub mod checks;
pub mod cpu;
pub mod figures;
pub mod kernel;
pub mod procs;
pub mod sample;
pub mod sampler;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use self::chain::Chain;
pub use self::kernel::KernelWork;
pub use self::procs::Served;
pub use self::sampler::{Recorder, Recording, Watch};
use crate::measure::RunOutput;
use crate::warning::{Warning, WarningKind};

/// The sampling interval.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// What lies behind a target besides its mount point: files and
/// directories on other filesystems that hold its data (an image, brick
/// directories) and processes that serve it (daemons).
#[derive(Debug, Clone, Default)]
pub struct Backing {
    pub paths: Vec<PathBuf>,
    pub serving: Vec<Served>,
    /// The target is ZFS: read the ARC's counters.
    pub zfs: bool,
    /// The target's root holds none of its data (a `block` target's
    /// scratch directory beside its raw device): leave it out.
    pub skip_root: bool,
}

impl Watch {
    /// What to watch for a target mounted at `root` with `backing`,
    /// tracing its block requests when `block_trace`.
    pub fn of_target(root: &Path, backing: Backing, block_trace: bool) -> Watch {
        let mut paths = Vec::new();
        if !backing.skip_root {
            paths.push(root.to_path_buf());
        }
        paths.extend(backing.paths);
        let chain = Chain::of_paths(&paths);
        Watch {
            kernel: KernelWork::of(&chain, &paths),
            chain,
            serving: backing.serving,
            campaign: Vec::new(),
            arc: backing.zfs,
            block: blocktrace::Source::of_plan(block_trace),
            trace_max_rate: 0,
            interval: INTERVAL,
        }
    }

    /// This watch, its block tracing stopped above `per_s` requests a
    /// second of a device (`[plan] block_trace_max_rate`; 0: any rate).
    pub fn with_trace_max_rate(mut self, per_s: u64) -> Watch {
        self.trace_max_rate = per_s;
        self
    }

    /// This watch, with the processes serving a workload too.
    pub fn with_serving(mut self, serving: Vec<Served>) -> Watch {
        self.serving.extend(serving);
        self
    }
}

/// Makes each watch count, as the campaign's own, the kernel's work for
/// every target's devices and the processes serving every other target
/// (a VM disk's daemon writing back during a run on the tmpfs beside it
/// is the campaign's, not another process's).
pub fn share_campaign(watches: &mut [Option<Watch>]) {
    let mut kernel = KernelWork::default();
    for w in watches.iter().flatten() {
        kernel.merge(&w.kernel);
    }
    let all: Vec<Served> = watches
        .iter()
        .flatten()
        .flat_map(|w| w.serving.iter().cloned())
        .collect();
    for w in watches.iter_mut().flatten() {
        w.kernel = kernel.clone();
        w.campaign = Vec::new();
        for s in &all {
            let known = |x: &Served| x.locate == s.locate;
            if !w.serving.iter().any(known) && !w.campaign.iter().any(known) {
                w.campaign.push(s.clone());
            }
        }
    }
}

/// Starts one block tracer for every watch that asks for one: attached
/// once, to all their devices, and shared by their runs (attaching takes
/// seconds). Returns it, for teardown to stop; none when no watch asked
/// or it could not start (then their runs say why).
pub fn share_block_tracer(watches: &mut [Option<Watch>]) -> Option<Arc<blocktrace::Tracer>> {
    let wanting: Vec<&Chain> = watches
        .iter()
        .flatten()
        .filter(|w| w.block.wants_tracer())
        .map(|w| &w.chain)
        .collect();
    if wanting.is_empty() {
        return None;
    }
    let (tracer, source) = blocktrace::share(&wanting);
    for w in watches.iter_mut().flatten() {
        if w.block.wants_tracer() {
            w.block = source.clone();
        }
    }
    tracer
}

/// The counters of a chain's bottom devices, read on demand: the bytes
/// they have read and written since boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProbe {
    devices: Vec<(u32, u32)>,
}

impl DeviceProbe {
    /// A probe of `chain`'s bottom devices; none when it has none.
    pub fn of_chain(chain: &Chain) -> Option<DeviceProbe> {
        let devices: Vec<(u32, u32)> = chain.bottom().map(|d| (d.major, d.minor)).collect();
        (!devices.is_empty()).then_some(DeviceProbe { devices })
    }

    /// Bytes read and written by the devices so far.
    pub fn bytes(&self) -> (u64, u64) {
        sample::disks(&self.devices)
            .values()
            .fold((0, 0), |(r, w), d| {
                (r + d.read_sectors * 512, w + d.write_sectors * 512)
            })
    }
}

/// Adds a recording's figures to a run's output, then the figures derived
/// from both and the warnings of the validity checks.
pub fn conclude(rec: &Recording, out: &mut RunOutput) {
    figures::figures(rec).add_to(out);
    let derived = figures::derived(out);
    out.metrics.extend(derived);
    let ticks = cpu::Accounts::of(rec).ticks();
    let warnings = checks::checks(out, &rec.chain, ticks);
    out.warnings.extend(warnings);
    // `block_trace = true` that did not take: the device was too fast to
    // trace within noise.
    if let Some(why) = &rec.trace_given_up {
        out.warnings
            .push(Warning::new(WarningKind::Setting, why.clone()));
    }
}
