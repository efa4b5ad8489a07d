//! Workload `io`: storlab's native engine, with fio's parameter names.
//!
//! `numjobs` threads, each with its own file `job<N>.dat`, run the access
//! pattern `rw` in blocks of `bs`, size-based (`size` per job) or time-based
//! (`runtime`, after `ramp_time`, wrapping over the file). Latency per
//! operation goes into HDR histograms merged over threads; throughput is
//! sampled every second into a series.
//!
//! Access patterns, write data and checks follow fio's options of the same
//! names: `bssplit`, `random_distribution` with fio's random map
//! (`norandommap`), `offset`/`size` regions, the buffer options
//! (`buffer_compress_percentage`, `dedupe_percentage`, …) and `verify`.
//! Latency is also kept per second (`lat_p50_ns`, `lat_p99_ns`,
//! `lat_p999_ns` series), so that a stall shows in the second it happened.
//!
//! A time-based run may end early at steady state (`steadystate`, `ss_dur`,
//! `ss_ramp`, as fio's; see `steady/`): the sampler judges each second's
//! window and raises a run-local stop, so the run is complete, not
//! interrupted. The primary metric stays `bw_bytes_per_s` over the whole
//! measured run, as fio reports it: the steady window's own mean
//! (`ss_bw_bytes_per_s`) covers only the seconds that happened to meet the
//! criterion, and comparing targets on it would compare different stretches
//! of each run.

mod bssplit;
pub(crate) mod buffer;
mod cache;
mod data;
mod dist;
mod driver;
mod engine;
mod engine_mmap;
mod engine_psync;
mod engine_uring;
pub(crate) mod fill;
mod job;
pub(crate) mod layout;
mod options;
mod pattern;
mod randmap;
pub(crate) mod rng;
mod schedule;
mod steady;
mod verify;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;

use self::driver::run_job;
use self::engine::EngineKind;
use self::job::{JobResult, JobSpec, Progress, Rw, Shared};
use self::options::Options;
use self::schedule::Lag;
pub use self::steady::DEFAULT_CRITERION as DEFAULT_STEADY_CRITERION;
use self::steady::{Detector, SteadyParams};
use super::{Configure, OpenLoop, RunContext, Workload, WorkloadConfig};
use crate::measure::cpu::CpuTimes;
use crate::measure::intervals::{self, percentile_series};
use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT, READ_LAT, SERVICE_LAT, SYNC_LAT, WRITE_LAT};
use crate::metric::Labels;
use crate::params::units::saturating_secs;
use crate::params::{declare, Fault, Params};
use crate::warning::{Warning, WarningKind};

/// The run fact that says where this job, read as fio would read it,
/// means something else (docs/workloads.md, "storlab and fio").
pub const FIO_DIFFERENCES: &str = "fio_differences";

declare! {
    /// The parameters of an `io` workload, with fio's names. They are read
    /// into a job in one place, `options.rs`.
    pub struct IoParams {
        rw: choice(Rw) = "read" => "access pattern, as fio's rw",
        bs: size = "4k" => "block size of each operation",
        size: size = "256M" => "the region each job works in: its file's size after offset",
        numjobs: int(usize, 1, 1024) = "1" => "threads, each with its own file",
        ioengine: choice(EngineKind) = "psync" => "how I/O is issued: psync (pread/pwrite), io_uring (iodepth in flight), mmap (memcpy to/from the mapped file)",
        iodepth: int(usize, 1, 4096) = "1" => "operations in flight per job (io_uring)",
        rate: size = "0" => "open loop: bytes per second per job (0: as fast as possible)",
        rate_iops: int(u64, 0, 1_000_000_000) = "0" => "open loop: operations per second per job (0: as fast as possible)",
        direct: bool = "false" => "O_DIRECT: bypass the page cache",
        fsync: int(u64, 0, i64::MAX) = "0" => "fsync every N writes (0: never)",
        end_fsync: bool = "false" => "fsync at the end of the job, inside the timing",
        runtime: duration => "run length; with time_based (storlab's default) the job runs this long, wrapping over the file; size-based when absent",
        time_based: bool = "true" => "with runtime: run for runtime, wrapping over the file (false: runtime only caps a size-based job, fio's default)",
        invalidate: bool = "true" => "drop the job's file from the page cache when the job starts and each time a time-based run wraps over it, as fio (buffered reads then meet the device on every pass)",
        fadvise_hint: one_of(&["1", "0", "random", "sequential"]) = "1" => "the access pattern told to the kernel when the file is opened, as fio: 1 advises by rw (POSIX_FADV_RANDOM for random patterns, which turns read-ahead off; POSIX_FADV_SEQUENTIAL otherwise; madvise with mmap), 0 nothing (the kernel's read-ahead heuristics), random or sequential for every pattern",
        ramp_time: duration = "0s" => "unmeasured time before measuring (time-based runs)",
        rwmixread: int(u32, 0, 100) = "50" => "percentage of reads in randrw",
        steady: flatten(SteadyParams),
        bssplit: string => "a mix of block sizes with weights, as fio: 4k/10:64k/50:32k/40 (a size without a weight shares the rest); reads,writes: 2k/50:4k/50,4k/90:8k/10; overrides bs",
        offset: size = "0" => "where each job's region starts in its file: I/O stays within offset..offset+size",
        random_distribution: string = "random" => "where random I/O goes, as fio: random (uniform), zipf:θ, pareto:h, normal:σ (σ % of the region); an optional :BASE (0-1) places the hot spot",
        norandommap: bool = "false" => "uniform random I/O draws blocks with replacement (false: every block once per pass, as fio's random map)",
        verify: one_of(&["none", "crc32c"]) = "none" => "crc32c: written blocks carry a checksummed header naming their offset; reads check it, and write-only jobs read back what they wrote; a mismatch fails the run naming the offset",
        verify_fatal: bool = "false" => "stop at the first verify mismatch (false: check on and fail at the end with the count)",
        buffer_compress_percentage: int(u32, 0, 100) = "0" => "written data compresses by about this percentage (50: to half), as fio: random bytes then zeros in each buffer_compress_chunk; 0: incompressible",
        buffer_compress_chunk: size = "512" => "the random-then-zeros segment of buffer_compress_percentage (0: the block size)",
        dedupe_percentage: int(u32, 0, 100) = "0" => "this percentage of writes repeat the previous unique buffer byte for byte, as fio's dedupe_mode = repeat",
        zero_buffers: bool = "false" => "write zeros",
        refill_buffers: bool = "false" => "fresh random data for every write (buffer_compress_percentage, dedupe_percentage and verify imply it)",
        scramble_buffers: bool = "true" => "stamp each 512-byte sector of a write with its offset and the write, so no two written sectors are alike (cheap; defeats naive deduplication, not compression)",
        iodepth_batch_submit: int(usize, 0, 4096) = "4" => "io_uring: submit every N queued operations (0: the whole iodepth at once); fio's default is 1, 4 keeps a virtio disk busier at less CPU",
    }
}

/// fio's other names for the parameters above (`fio --cmdhelp=NAME` lists
/// them as `alias`; fio 3.33), and `bsize`, which people write for `bs`.
/// Where fio's own name differs from storlab's (`steadystate_duration`),
/// it is listed too. An experiment that uses one is refused with the name
/// to write, so that one parameter has one name in stored runs and
/// exports.
pub const FIO_ALIASES: &[(&str, &str)] = &[
    ("blocksize", "bs"),
    ("bsize", "bs"),
    ("readwrite", "rw"),
    ("timeout", "runtime"),
    ("fileoffset", "offset"),
    ("iodepth_batch", "iodepth_batch_submit"),
    ("steadystate_duration", "ss_dur"),
    ("steadystate_ramp_time", "ss_ramp"),
];

impl Configure for IoParams {
    type Config = IoConfig;

    fn configure(self, _: &Path, _: &mut Params) -> Result<IoConfig, Fault> {
        Ok(IoConfig {
            opts: options::read(&self)?,
            open_loop: open_loop(&self),
        })
    }
}

/// The rate a capacity search turns: `rate` (bytes per second) when the
/// file sets it, else `rate_iops`; per job.
fn open_loop(p: &IoParams) -> OpenLoop {
    let (param, value, achieved) = match (p.rate, p.rate_iops) {
        (bytes, 0) if bytes > 0 => ("rate", bytes as f64, &m::BW_BYTES_PER_S),
        (_, ops) => ("rate_iops", ops as f64, &m::IOPS),
    };
    OpenLoop {
        param,
        issuers: p.numjobs as u64,
        value,
        whole: true,
        achieved,
        served: None,
    }
}

/// An `io` workload's checked job description.
#[derive(Debug, Clone)]
pub struct IoConfig {
    opts: Options,
    open_loop: OpenLoop,
}

impl WorkloadConfig for IoConfig {
    /// Rough run length for estimates: time-based exactly (the full runtime
    /// even with steady state, which may end it sooner), size-based at
    /// 500 MB/s or at the open-loop rate when one is set.
    fn estimate(&self) -> Duration {
        let spec = &self.opts.spec;
        let layout = saturating_secs(self.bytes_needed() as f64 / 1e9);
        let ops = spec.size as f64 / spec.mean_bs().max(1.0);
        let run = match (spec.runtime, spec.period_ps) {
            (Some(r), _) => r.saturating_add(spec.ramp),
            (None, Some(ps)) => saturating_secs(ops * ps as f64 / 1e12),
            (None, None) => saturating_secs(self.bytes_needed() as f64 / 500e6),
        };
        run.saturating_add(layout)
    }

    /// Laying the files out, and the whole run unless `runtime` bounds it.
    fn estimate_io(&self) -> Duration {
        match self.opts.spec.runtime {
            Some(_) => saturating_secs(self.bytes_needed() as f64 / 1e9),
            None => self.estimate(),
        }
    }

    fn bytes_needed(&self) -> u64 {
        self.opts
            .spec
            .file_len()
            .saturating_mul(self.opts.numjobs as u64)
    }

    fn open_loop(&self) -> Result<OpenLoop, String> {
        Ok(self.open_loop.clone())
    }

    /// Each job's buffers: io_uring keeps `iodepth` of the largest block
    /// in flight, psync and mmap one.
    fn memory_needed(&self) -> u64 {
        let spec = &self.opts.spec;
        let depth = match spec.engine {
            engine::EngineKind::IoUring => spec.iodepth,
            _ => 1,
        };
        (spec.max_bs() as u64)
            .saturating_mul(depth as u64)
            .saturating_mul(self.opts.numjobs as u64)
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Io::new(self.opts.clone()))
    }
}

pub struct Io {
    opts: Options,
    /// The raw device every job runs on (a `block` target), each in its
    /// own region; files in the run's directory otherwise.
    device: Option<PathBuf>,
}

impl Io {
    pub fn new(opts: Options) -> Io {
        Io { opts, device: None }
    }

    fn job_path(&self, dir: &Path, i: usize) -> PathBuf {
        match &self.device {
            Some(dev) => dev.clone(),
            None => dir.join(format!("job{i}.dat")),
        }
    }

    /// Job `i`'s spec: on a raw device, its region follows job i−1's.
    fn job_spec(&self, i: usize) -> JobSpec {
        let mut spec = self.opts.spec.clone();
        if self.device.is_some() {
            spec.offset += i as u64 * spec.size;
        }
        spec
    }
}

impl Workload for Io {
    fn prepare(&mut self, dir: &Path, _cx: &RunContext) -> Result<()> {
        let o = &self.opts;
        if !o.spec.rw.needs_layout() {
            return Ok(());
        }
        for i in 0..o.numjobs {
            layout::lay_out_job(
                &self.job_path(dir, i),
                &self.job_spec(i),
                o.spec.seed + i as u64,
            )?;
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let o = &self.opts;
        let progress: Vec<Progress> = (0..o.numjobs).map(|_| Progress::default()).collect();
        let barrier = Barrier::new(o.numjobs + 1);
        let epoch = OnceLock::new();
        let (ended_tx, ended_rx) = mpsc::channel::<()>();
        let stop = cx.stop.as_atomic();
        // Raised at steady state: ends the jobs without marking the run
        // interrupted, which only the campaign's stop flag does.
        let halt = AtomicBool::new(false);
        let mut detector = o
            .steady
            .map(|s| Detector::new(s, o.spec.mean_bs().round() as usize));
        let (results, series) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..o.numjobs)
                .map(|i| {
                    let mut spec = self.job_spec(i);
                    spec.seed = spec
                        .seed
                        .wrapping_add(cx.run_seed)
                        .wrapping_add(i as u64 * 7919);
                    let path = self.job_path(dir, i);
                    let shared = Shared {
                        barrier: &barrier,
                        epoch: &epoch,
                        stop,
                        halt: &halt,
                        progress: &progress[i],
                    };
                    let ended = ended_tx.clone();
                    scope.spawn(move || {
                        let _ended = ended;
                        run_job(&spec, &path, shared)
                    })
                })
                .collect();
            drop(ended_tx);
            barrier.wait();
            let start = *epoch.get_or_init(Instant::now);
            let sampler = Sampler {
                progress: &progress,
                ended: ended_rx,
                detector: detector.as_mut(),
                halt: &halt,
                stop,
                end: o.spec.runtime.map(|r| start + o.spec.ramp + r),
            };
            let series = sampler.run(start + o.spec.ramp);
            let results: Vec<Result<JobResult>> = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("an I/O thread panicked")))
                })
                .collect();
            (results, series)
        });
        let results: Vec<JobResult> = results.into_iter().collect::<Result<_>>()?;
        let mut out = aggregate(&o.spec, &results, series);
        out.metrics
            .push(m::WORKING_SET_BYTES.value(o.spec.size.saturating_mul(o.numjobs as u64) as f64));
        if !o.fio_differences.is_empty() {
            out.facts
                .push((FIO_DIFFERENCES.to_string(), o.fio_differences.join("; ")));
        }
        if let Some(d) = &detector {
            out.metrics.extend(d.metrics());
            // An interrupted run is flagged as such; it did not run to runtime.
            if !cx.stop.is_raised() {
                out.warnings.extend(
                    d.warning(o.spec.runtime)
                        .map(|t| Warning::new(WarningKind::SteadyStateNotReached, t)),
                );
            }
        }
        Ok(out)
    }

    fn use_device(&mut self, dev: &Path) -> Result<()> {
        let spec = &mut self.opts.spec;
        if spec.engine == EngineKind::Mmap {
            bail!(
                "ioengine = \"mmap\" does not run on the raw device {}; use psync or io_uring",
                dev.display()
            );
        }
        let need = spec.offset + spec.size * self.opts.numjobs as u64;
        let have = crate::provision::blockdev::size(dev)?;
        if need > have {
            bail!(
                "{} has {have} bytes, fewer than offset + numjobs × size = {need}; lower size or numjobs",
                dev.display()
            );
        }
        spec.raw = true;
        self.device = Some(dev.to_path_buf());
        Ok(())
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        let o = &self.opts;
        if self.device.is_some() {
            return Ok(());
        }
        for i in 0..o.numjobs {
            let path = self.job_path(dir, i);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
            }
        }
        Ok(())
    }
}

/// Samples the summed progress counters once a second, from the end of the
/// ramp until every job has finished, feeding each second to the
/// steady-state detector, if any.
struct Sampler<'a> {
    progress: &'a [Progress],
    /// Disconnected once every job thread has ended (each holds a sender
    /// until it returns or unwinds): the sampler sleeps until its next tick
    /// or that, whichever comes first, rather than polling.
    ended: mpsc::Receiver<()>,
    detector: Option<&'a mut Detector>,
    halt: &'a AtomicBool,
    stop: &'a AtomicBool,
    /// A time-based run's end (after the ramp): its last second is whole
    /// even when the jobs finish a moment before its tick.
    end: Option<Instant>,
}

impl Sampler<'_> {
    fn total(&self) -> u64 {
        self.progress
            .iter()
            .map(|p| p.0.load(Ordering::Relaxed))
            .sum()
    }

    /// Sleeps until `t`; true if every job ended first.
    fn jobs_end_before(&self, t: Instant) -> bool {
        loop {
            let left = t.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match self.ended.recv_timeout(left) {
                Err(mpsc::RecvTimeoutError::Disconnected) => return true,
                Err(mpsc::RecvTimeoutError::Timeout) => return false,
                Ok(()) => {}
            }
        }
    }

    /// Samples from `start`, the end of the ramp.
    fn run(mut self, start: Instant) -> Vec<f64> {
        let mut values = Vec::new();
        if self.jobs_end_before(start) {
            return values;
        }
        let mut last = self.total();
        let mut tick = start + Duration::from_secs(1);
        loop {
            if self.jobs_end_before(tick) {
                if self.ran_to_end(tick) {
                    self.sample(&mut values, &mut last);
                }
                return values;
            }
            self.sample(&mut values, &mut last);
            tick += Duration::from_secs(1);
        }
    }

    /// Records the bytes moved since the last sample.
    fn sample(&mut self, values: &mut Vec<f64>, last: &mut u64) {
        let now_total = self.total();
        let bytes = now_total.saturating_sub(*last) as f64;
        values.push(bytes);
        if self.detector.as_mut().is_some_and(|d| d.push(bytes)) {
            self.halt.store(true, Ordering::Relaxed);
        }
        *last = now_total;
    }

    /// Whether the second ending at `tick` is the last of a time-based run
    /// that was neither stopped nor ended at steady state.
    fn ran_to_end(&self, tick: Instant) -> bool {
        self.end.is_some_and(|e| tick <= e)
            && !self.halt.load(Ordering::Relaxed)
            && !self.stop.load(Ordering::Relaxed)
    }
}

/// The jobs' results merged: histograms exactly, counters summed.
struct Merged {
    read: Histogram<u64>,
    write: Histogram<u64>,
    all: Histogram<u64>,
    service: Histogram<u64>,
    sync: Histogram<u64>,
    lag: Lag,
    cpu: CpuTimes,
    bytes_read: u64,
    bytes_written: u64,
    syncs: u64,
    elapsed_s: f64,
}

fn merge(results: &[JobResult]) -> Merged {
    let mut m = Merged {
        read: new_histogram(),
        write: new_histogram(),
        all: new_histogram(),
        service: new_histogram(),
        sync: new_histogram(),
        lag: Lag::default(),
        cpu: CpuTimes::default(),
        bytes_read: 0,
        bytes_written: 0,
        syncs: 0,
        elapsed_s: 1e-9,
    };
    for r in results {
        let _ = m.read.add(&r.read_lat);
        let _ = m.write.add(&r.write_lat);
        let _ = m.service.add(&r.service_lat);
        let _ = m.sync.add(&r.sync_lat);
        m.lag = m.lag.plus(r.lag);
        m.cpu = m.cpu.plus(r.cpu);
        m.bytes_read += r.bytes_read;
        m.bytes_written += r.bytes_written;
        m.syncs += r.syncs;
    }
    let _ = m.all.add(&m.read);
    let _ = m.all.add(&m.write);
    let start = results.iter().map(|r| r.start).min();
    let end = results.iter().map(|r| r.end).max();
    if let (Some(s), Some(e)) = (start, end) {
        m.elapsed_s = e.saturating_duration_since(s).as_secs_f64().max(1e-9);
    }
    m
}

/// Merges the jobs' results into the run's metrics, histograms and series.
/// `lat_*` is the latency a user of the storage sees: from the due time in
/// open-loop runs (`rate`, `rate_iops`), from issue otherwise; open-loop
/// runs add `service_lat_*` (from issue) and the schedule lag.
fn aggregate(spec: &JobSpec, results: &[JobResult], series: Vec<f64>) -> RunOutput {
    let g = merge(results);
    let none = Labels::new();
    let mut metrics = throughput_metrics(&g);
    metrics.extend(latency_metrics(&LAT, &none, &g.all));
    if spec.rw == Rw::Mixed {
        metrics.push(m::READ_BW_BYTES_PER_S.value(g.bytes_read as f64 / g.elapsed_s));
        metrics.push(m::WRITE_BW_BYTES_PER_S.value(g.bytes_written as f64 / g.elapsed_s));
        metrics.extend(latency_metrics(&READ_LAT, &none, &g.read));
        metrics.extend(latency_metrics(&WRITE_LAT, &none, &g.write));
    }
    metrics.extend(latency_metrics(&SYNC_LAT, &none, &g.sync));
    if spec.period_ps.is_some() {
        metrics.extend(latency_metrics(&SERVICE_LAT, &none, &g.service));
        metrics.extend(lag_metrics(g.lag));
    }
    let mut out = RunOutput {
        metrics,
        ..Default::default()
    };
    let seconds = series.len();
    out.series
        .push(Series::new(&m::BW_BYTES_PER_S, 1.0, series));
    out.series.extend(latency_series(results, seconds));
    for (def, hist) in [
        (&LAT, g.all),
        (&SERVICE_LAT, g.service),
        (&SYNC_LAT, g.sync),
    ] {
        if std::ptr::eq(def, &LAT) || !hist.is_empty() {
            out.histograms.push(Hist::new(def, hist));
        }
    }
    out
}

/// The per-second latency percentiles, merged over the jobs, for the
/// seconds of the throughput series; nothing for a run shorter than one.
fn latency_series(results: &[JobResult], seconds: usize) -> Vec<Series> {
    let per_job: Vec<&[_]> = results.iter().map(|r| r.intervals.as_slice()).collect();
    let merged = intervals::merge(&per_job, seconds);
    if merged.iter().all(|h| h.is_empty()) {
        return Vec::new();
    }
    [
        (&m::LAT_P50_NS, 50.0),
        (&m::LAT_P99_NS, 99.0),
        (&m::LAT_P999_NS, 99.9),
    ]
    .into_iter()
    .map(|(def, q)| Series::new(def, 1.0, percentile_series(&merged, q)))
    .collect()
}

fn throughput_metrics(g: &Merged) -> Vec<Metric> {
    let bytes = g.bytes_read + g.bytes_written;
    let ops = g.all.len();
    let cpu_s = g.cpu.total_s;
    let mut out = vec![
        m::BW_BYTES_PER_S.value(bytes as f64 / g.elapsed_s),
        m::IOPS.value(ops as f64 / g.elapsed_s),
        m::BYTES.value(bytes as f64),
        m::READ_BYTES.value(g.bytes_read as f64),
        m::WRITE_BYTES.value(g.bytes_written as f64),
        m::OPS.value(ops as f64),
        m::ELAPSED_S.value(g.elapsed_s),
        m::CPU_USER_S.value(g.cpu.user_s),
        m::CPU_SYS_S.value(g.cpu.sys_s),
        m::SYNCS.value(g.syncs as f64),
    ];
    if ops > 0 {
        out.push(m::CPU_NS_PER_OP.value(cpu_s * 1e9 / ops as f64));
    }
    out
}

fn lag_metrics(lag: Lag) -> Vec<Metric> {
    if lag.count == 0 {
        return Vec::new();
    }
    vec![
        m::SCHED_LAG_MEAN_NS.value(lag.sum_ns as f64 / lag.count as f64),
        m::SCHED_LAG_MAX_NS.value(lag.max_ns as f64),
    ]
}
