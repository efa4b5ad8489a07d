//! One I/O job: a thread with its own file and engine. The pieces every
//! engine shares live here (the job's description, ramp and stops,
//! counters); the access pattern is `pattern.rs`, the data path `data.rs`,
//! and `driver.rs` runs a job on its engine. Hot loops allocate nothing and
//! take no lock: they record into the job's own histograms and publish
//! progress with one relaxed store to the job's own cache line.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Result;
use hdrhistogram::Histogram;

use super::bssplit::BsSplit;
use super::dist::Dist;
use super::engine::EngineKind;
use super::fill::FillSpec;
use super::schedule::Lag;
use crate::measure::clock::{Clock, Stamp};
use crate::measure::cpu::CpuTimes;
use crate::measure::intervals::{Intervals, Sparse};
use crate::measure::latency::{new_histogram, Counts, MAX_NS};
use crate::params::choices;

choices! {
    /// The access pattern, with fio's names.
    pub enum Rw {
        Read = "read",
        Write = "write",
        RandRead = "randread",
        RandWrite = "randwrite",
        /// randrw: random reads and writes in the `rwmixread` proportion.
        Mixed = "randrw",
    }
}

impl Rw {
    pub fn is_random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::Mixed)
    }

    pub fn writes(self) -> bool {
        matches!(self, Rw::Write | Rw::RandWrite | Rw::Mixed)
    }

    /// Whether the file must hold data before the run.
    pub fn needs_layout(self) -> bool {
        self != Rw::Write
    }
}

/// `verify`: written units carry a checksummed header, reads check them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifySpec {
    /// `verify_fatal`: stop at the first mismatch instead of checking on.
    pub fatal: bool,
}

/// The access pattern a job tells the kernel (fio's `fadvise_hint`):
/// `posix_fadvise` on the file, `madvise` on a mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// `fadvise_hint = "0"`: nothing said; the kernel's read-ahead
    /// heuristics apply.
    None,
    Random,
    Sequential,
}

impl Advice {
    /// fio's `fadvise_hint` value for pattern `rw`: `1` (fio's default)
    /// advises by the pattern, random for randread/randwrite/randrw.
    pub fn of_hint(hint: &str, rw: Rw) -> Advice {
        match hint {
            "0" => Advice::None,
            "random" => Advice::Random,
            "sequential" => Advice::Sequential,
            _ if rw.is_random() => Advice::Random,
            _ => Advice::Sequential,
        }
    }
}

/// What one job does.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub rw: Rw,
    /// Block sizes per direction (`bs`, or `bssplit`).
    pub split: BsSplit,
    /// Where the job's region starts in its file (`offset`).
    pub offset: u64,
    /// The region's length (`size`): I/O stays within offset..offset+size.
    pub size: u64,
    pub engine: EngineKind,
    pub iodepth: usize,
    /// io_uring: operations queued before each submission (fio's
    /// `iodepth_batch_submit`).
    pub batch_submit: usize,
    pub direct: bool,
    pub fsync_every: u64,
    pub end_fsync: bool,
    pub runtime: Option<Duration>,
    /// With `runtime`: run that long, wrapping (false: runtime caps a
    /// size-based job).
    pub time_based: bool,
    /// fio's `invalidate` (never with `direct`, as fio's wrap does not).
    pub invalidate: bool,
    /// fio's `fadvise_hint`: the access pattern told to the kernel when
    /// the file is opened (random turns read-ahead off).
    pub advice: Advice,
    pub ramp: Duration,
    pub rwmixread: u32,
    /// Open loop: picoseconds between due times (`rate`, `rate_iops`).
    pub period_ps: Option<u64>,
    pub seed: u64,
    pub dist: Dist,
    /// fio's random map: uniform random I/O covers every block once per
    /// pass (`norandommap = false`, the default).
    pub randommap: bool,
    pub fill: FillSpec,
    pub verify: Option<VerifySpec>,
    /// On a raw device (a `block` target): the file is the device, never
    /// created, truncated or removed.
    pub raw: bool,
}

impl JobSpec {
    /// The smallest block size: alignment of random offsets, verify unit.
    pub fn unit(&self) -> usize {
        self.split.min()
    }

    /// The largest block size: the size of each I/O buffer.
    pub fn max_bs(&self) -> usize {
        self.split.max()
    }

    /// The length the job's file must have.
    pub fn file_len(&self) -> u64 {
        self.offset + self.size
    }

    /// Mean bytes per operation, for rates and operation counts.
    /// Drops the file's cached pages each time the pattern wraps: a
    /// time-based run with `invalidate`, as fio.
    pub fn invalidates_on_wrap(&self) -> bool {
        self.invalidate && self.time_based && self.runtime.is_some()
    }

    pub fn mean_bs(&self) -> f64 {
        let mean = |s: &super::bssplit::Split| s.mean();
        match self.rw {
            Rw::Read | Rw::RandRead => mean(&self.split.read),
            Rw::Write | Rw::RandWrite => mean(&self.split.write),
            Rw::Mixed => {
                let r = self.rwmixread as f64 / 100.0;
                r * mean(&self.split.read) + (1.0 - r) * mean(&self.split.write)
            }
        }
    }
}

/// Significant digits of the whole run's latency histograms
/// ([`new_histogram`]'s).
const LATENCY_SIGFIG: u8 = 3;

/// Progress published by a job: measured bytes so far, on its own cache line.
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct Progress(pub AtomicU64);

/// What one job measured (after ramp). Latency histograms hold response
/// latency: from the due time in open-loop runs, from issue otherwise;
/// `service_lat` (from issue) is kept only in open-loop runs.
#[derive(Debug)]
pub struct JobResult {
    pub read_lat: Histogram<u64>,
    pub write_lat: Histogram<u64>,
    pub service_lat: Histogram<u64>,
    pub sync_lat: Histogram<u64>,
    pub lag: Lag,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// fsync/msync calls, the ramp's and end_fsync's included.
    pub syncs: u64,
    pub cpu: CpuTimes,
    pub start: Instant,
    pub end: Instant,
    /// Per-second latency histograms from the start of measurement.
    pub intervals: Vec<Sparse>,
}

/// Shared coordination between the jobs and the sampler.
pub struct Shared<'a> {
    pub barrier: &'a Barrier,
    /// The run's start, the same instant for every job and the sampler, so
    /// that their seconds (throughput, latency, the runtime's end) align.
    pub epoch: &'a OnceLock<Instant>,
    /// The campaign's stop flag (SIGINT/SIGTERM/SIGHUP): the run is interrupted.
    pub stop: &'a AtomicBool,
    /// The run's own end, raised at steady state: the run is complete.
    pub halt: &'a AtomicBool,
    pub progress: &'a Progress,
}

/// Opens the job's file for the run.
pub fn open(spec: &JobSpec, path: &Path) -> Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(spec.rw.writes());
    if spec.rw == Rw::Write && !spec.raw {
        opts.create(true).truncate(true);
    }
    if spec.direct && !spec.engine.caps().direct_needs_dax {
        opts.custom_flags(libc::O_DIRECT);
    }
    opts.open(path).map_err(|e| {
        if spec.direct && e.raw_os_error() == Some(libc::EINVAL) {
            anyhow::anyhow!(
                "the filesystem refuses O_DIRECT on {} ({e}); set direct = false for this target or use a block-backed target",
                path.display()
            )
        } else {
            anyhow::Error::new(e).context(format!("opening {}", path.display()))
        }
    })
}

impl Shared<'_> {
    /// The run's start: the first job or sampler to ask fixes it.
    pub fn start(&self) -> Instant {
        *self.epoch.get_or_init(Instant::now)
    }
}

/// When a job measures and when it stops: ramp, runtime or size, stop
/// flag. Its moments are [`Stamp`]s of the job's [`Clock`], which times
/// each operation.
pub struct Phase {
    pub clock: Clock,
    /// The run's start (the same instant for every job and the sampler).
    pub t0: Instant,
    pub t0_stamp: Stamp,
    ramp_end: Instant,
    ramp_end_stamp: Stamp,
    deadline: Option<Stamp>,
    deadline_at: Option<Instant>,
    /// The job ends after `target_bytes` even before its deadline.
    size_based: bool,
    target_bytes: u64,
    pub measuring: bool,
    cpu0: CpuTimes,
    start: Stamp,
    /// The run ended at its runtime: its last second is whole.
    deadline_hit: Cell<bool>,
}

impl Phase {
    pub fn new(spec: &JobSpec, t0: Instant) -> Phase {
        let clock = Clock::new();
        let ramp_end = t0 + spec.ramp;
        let t0_stamp = clock.stamp(t0);
        Phase {
            clock,
            t0,
            t0_stamp,
            ramp_end,
            ramp_end_stamp: clock.stamp(ramp_end),
            deadline: spec.runtime.map(|r| clock.stamp(ramp_end + r)),
            deadline_at: spec.runtime.map(|r| ramp_end + r),
            size_based: spec.runtime.is_none() || !spec.time_based,
            target_bytes: spec.size,
            measuring: spec.ramp.is_zero(),
            cpu0: CpuTimes::thread_now(),
            start: t0_stamp,
            deadline_hit: Cell::new(false),
        }
    }

    /// A job's counters and histograms, on this phase's clock.
    pub fn state(&self) -> State {
        State::new(self.clock, self.ramp_end)
    }

    /// Whether no further operation should be issued: `at` is the time the
    /// next one would start (its due time in open-loop runs), `issued` the
    /// bytes issued so far.
    #[inline]
    pub fn finished(&self, shared: &Shared<'_>, at: Stamp, issued: u64) -> bool {
        if shared.stop.load(Ordering::Relaxed) || shared.halt.load(Ordering::Relaxed) {
            return true;
        }
        if let Some(d) = self.deadline {
            let over = at >= d;
            self.deadline_hit.set(over);
            if over {
                return true;
            }
        }
        self.size_based && issued >= self.target_bytes
    }

    /// Starts measuring at the end of the ramp, discarding what came before.
    #[inline]
    pub fn maybe_start(&mut self, now: Stamp, s: &mut State) {
        if !self.measuring && now >= self.ramp_end_stamp {
            self.measuring = true;
            s.reset(self.ramp_end);
            self.cpu0 = CpuTimes::thread_now();
            self.start = now;
        }
    }

    pub fn finish(self, mut s: State) -> JobResult {
        s.count_held();
        let end = Instant::now();
        // Operations of the last second are all in even if the job ends a
        // moment before it does (open loop: the last due time).
        let last_second = match (self.deadline_at, self.deadline_hit.get()) {
            (Some(d), true) => end.max(d),
            _ => end,
        };
        JobResult {
            read_lat: s.read_lat.histogram(),
            write_lat: s.write_lat.histogram(),
            service_lat: s.service_lat,
            sync_lat: s.sync_lat,
            lag: s.lag,
            bytes_read: s.bytes_read,
            bytes_written: s.bytes_written,
            syncs: s.syncs,
            cpu: CpuTimes::thread_now().since(self.cpu0),
            start: self.clock.instant(self.start),
            end,
            intervals: s.intervals.finish(last_second),
        }
    }
}

/// Operations whose latencies [`State`] holds before counting them.
const BATCH: usize = 32;

/// Marks a write's latency among [`State`]'s held latencies (bit 63; a
/// latency is at most [`MAX_NS`], far below).
const WRITE: u64 = 1 << 63;

/// Counters and histograms of one job. Reads and writes are counted in
/// [`Counts`], the hot loops' histograms, in batches: each operation's
/// latency is kept in `held` (one store to a line in cache) and every
/// [`BATCH`] operations, or when a second ends, counted in the run's and
/// the second's buckets. Counted one at a time, between system calls whose
/// kernel work evicts the buckets from the cache, each count waited for
/// its bucket's line; counted together, the loads overlap.
pub struct State {
    clock: Clock,
    held: [u64; BATCH],
    n_held: usize,
    read_lat: Counts,
    write_lat: Counts,
    service_lat: Histogram<u64>,
    sync_lat: Histogram<u64>,
    intervals: Intervals,
    lag: Lag,
    bytes_read: u64,
    bytes_written: u64,
    writes_since_sync: u64,
    /// Every sync made, measured or not (not reset after the ramp: the
    /// telemetry's flush counts cover the ramp too).
    syncs: u64,
}

impl State {
    fn new(clock: Clock, epoch: Instant) -> State {
        State {
            clock,
            held: [0; BATCH],
            n_held: 0,
            read_lat: Counts::new(LATENCY_SIGFIG),
            write_lat: Counts::new(LATENCY_SIGFIG),
            service_lat: new_histogram(),
            sync_lat: new_histogram(),
            intervals: Intervals::new(clock, epoch),
            lag: Lag::default(),
            bytes_read: 0,
            bytes_written: 0,
            writes_since_sync: 0,
            syncs: 0,
        }
    }

    fn reset(&mut self, epoch: Instant) {
        self.n_held = 0;
        self.read_lat.clear();
        self.write_lat.clear();
        self.service_lat.reset();
        self.sync_lat.reset();
        self.intervals = Intervals::new(self.clock, epoch);
        self.lag = Lag::default();
        self.bytes_read = 0;
        self.bytes_written = 0;
    }

    /// Records one operation issued at `issued`, due at `due` (open loop)
    /// and completed at `done`.
    #[inline(always)]
    pub fn record(
        &mut self,
        read: bool,
        issued: Stamp,
        due: Option<Stamp>,
        done: Stamp,
        bytes: u64,
    ) {
        let service = self.clock.ns(issued, done).max(1);
        let response = match due {
            Some(d) => {
                self.service_lat.saturating_record(service);
                self.lag.record(self.clock.ns(d, issued));
                self.clock.ns(d, done).max(1)
            }
            None => service,
        };
        if self.intervals.crosses(done) {
            // The held operations completed in the second that ended.
            self.count_held();
            self.intervals.roll(done);
        }
        let response = response.min(MAX_NS);
        if read {
            self.held[self.n_held] = response;
            self.bytes_read += bytes;
        } else {
            self.held[self.n_held] = response | WRITE;
            self.bytes_written += bytes;
        }
        self.n_held += 1;
        if self.n_held == BATCH {
            self.count_held();
        }
    }

    /// Counts the held latencies in the second's and the run's buckets.
    #[inline(never)]
    fn count_held(&mut self) {
        for &v in &self.held[..self.n_held] {
            let ns = v & !WRITE;
            self.intervals.count(ns);
            if v & WRITE == 0 {
                self.read_lat.record(ns);
            } else {
                self.write_lat.record(ns);
            }
        }
        self.n_held = 0;
    }

    /// Counts a write; true when `fsync = N` asks for a sync now.
    #[inline]
    pub fn sync_due(&mut self, spec: &JobSpec) -> bool {
        if spec.fsync_every == 0 {
            return false;
        }
        self.writes_since_sync += 1;
        if self.writes_since_sync >= spec.fsync_every {
            self.writes_since_sync = 0;
            return true;
        }
        false
    }

    pub fn record_sync(&mut self, measuring: bool, from: Stamp, to: Stamp) {
        self.syncs += 1;
        if measuring {
            self.sync_lat
                .saturating_record(self.clock.ns(from, to).max(1));
        }
    }

    /// Counts a sync whose latency is not recorded (end_fsync, as fio).
    pub fn count_sync(&mut self) {
        self.syncs += 1;
    }

    pub fn bytes(&self) -> u64 {
        self.bytes_read + self.bytes_written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Latencies held in batches are counted as if each were counted when
    /// its operation completed: the run's histograms per direction, and
    /// each in the second it completed in, across second boundaries that
    /// fall inside a batch, with the held remainder counted at the end.
    #[test]
    fn batched_latencies_land_in_their_direction_and_second() {
        let clock = Clock::monotonic();
        let epoch = Instant::now();
        let mut s = State::new(clock, epoch);
        let mut reads = Counts::new(LATENCY_SIGFIG);
        let mut writes = Counts::new(LATENCY_SIGFIG);
        let mut seconds = Intervals::new(clock, epoch);
        // 250 operations over 2.5 s: seconds end inside batches.
        for i in 0..250u64 {
            let done_at = epoch + Duration::from_millis(i * 10 + 5);
            let ns = 1 + (i * 7919) % 100_000;
            let read = i % 3 != 0;
            let done = clock.stamp(done_at);
            let issued = clock.stamp(done_at - Duration::from_nanos(ns));
            assert_eq!(clock.ns(issued, done), ns);
            s.record(read, issued, None, done, 4096);
            seconds.record(done, ns);
            if read {
                reads.record(ns)
            } else {
                writes.record(ns)
            }
        }
        s.count_held();
        assert_eq!(s.read_lat.histogram(), reads.histogram());
        assert_eq!(s.write_lat.histogram(), writes.histogram());
        assert_eq!(s.bytes(), 250 * 4096);
        let end = epoch + Duration::from_millis(2500);
        assert_eq!(s.intervals.finish(end), seconds.finish(end));
    }
}
