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
mod data;
mod dist;
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
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use self::engine::EngineKind;
use self::job::{run_job, JobResult, JobSpec, Progress, Rw, Shared};
use self::options::Options;
use self::schedule::{period_ps, Lag};
use self::steady::Detector;
pub use self::steady::DEFAULT_CRITERION as DEFAULT_STEADY_CRITERION;
use super::{RunContext, Workload};
use crate::experiment::params::{ParamSpec, ParamType, Params};
use crate::measure::cpu::CpuTimes;
use crate::measure::intervals::{self, percentile_series};
use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT, READ_LAT, SERVICE_LAT, SYNC_LAT, WRITE_LAT};
use crate::metric::Labels;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "rw",
        ty: ParamType::Choice(&["read", "write", "randread", "randwrite", "randrw"]),
        default: Some("read"),
        help: "access pattern, as fio's rw",
    },
    ParamSpec {
        name: "bs",
        ty: ParamType::Size,
        default: Some("4k"),
        help: "block size of each operation",
    },
    ParamSpec {
        name: "size",
        ty: ParamType::Size,
        default: Some("256M"),
        help: "file size per job",
    },
    ParamSpec {
        name: "numjobs",
        ty: ParamType::Int { min: 1, max: 1024 },
        default: Some("1"),
        help: "threads, each with its own file",
    },
    ParamSpec {
        name: "ioengine",
        ty: ParamType::Choice(EngineKind::NAMES),
        default: Some("psync"),
        help: "how I/O is issued: psync (pread/pwrite), io_uring (iodepth in flight), mmap (memcpy to/from the mapped file)",
    },
    ParamSpec {
        name: "iodepth",
        ty: ParamType::Int { min: 1, max: 4096 },
        default: Some("1"),
        help: "operations in flight per job (io_uring)",
    },
    ParamSpec {
        name: "rate",
        ty: ParamType::Size,
        default: Some("0"),
        help: "open loop: bytes per second per job (0: as fast as possible)",
    },
    ParamSpec {
        name: "rate_iops",
        ty: ParamType::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: Some("0"),
        help: "open loop: operations per second per job (0: as fast as possible)",
    },
    ParamSpec {
        name: "direct",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "O_DIRECT: bypass the page cache",
    },
    ParamSpec {
        name: "fsync",
        ty: ParamType::Int {
            min: 0,
            max: i64::MAX,
        },
        default: Some("0"),
        help: "fsync every N writes (0: never)",
    },
    ParamSpec {
        name: "end_fsync",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "fsync at the end of the job, inside the timing",
    },
    ParamSpec {
        name: "runtime",
        ty: ParamType::Duration,
        default: None,
        help: "time-based run length (wraps over the file); size-based when absent",
    },
    ParamSpec {
        name: "ramp_time",
        ty: ParamType::Duration,
        default: Some("0s"),
        help: "unmeasured time before measuring (time-based runs)",
    },
    ParamSpec {
        name: "rwmixread",
        ty: ParamType::Int { min: 0, max: 100 },
        default: Some("50"),
        help: "percentage of reads in randrw",
    },
    ParamSpec {
        name: "steadystate",
        ty: ParamType::Str,
        default: None,
        help: "end a time-based run at steady state, as fio: iops|iops_slope|bw|bw_slope:LIMIT, LIMIT a percentage of the window mean (\"20%\") or absolute (IOPS; bytes/s as a size); needs runtime and ss_dur",
    },
    ParamSpec {
        name: "ss",
        ty: ParamType::Str,
        default: None,
        help: "alias of steadystate, as in fio",
    },
    ParamSpec {
        name: "ss_dur",
        ty: ParamType::Duration,
        default: None,
        help: "steady-state window, whole seconds (one sample a second); alone it judges fio's default iops_slope:0.01%",
    },
    ParamSpec {
        name: "ss_ramp",
        ty: ParamType::Duration,
        default: None,
        help: "measured time before steady-state samples are judged (counted after ramp_time)",
    },
    ParamSpec {
        name: "bssplit",
        ty: ParamType::Str,
        default: None,
        help: "a mix of block sizes with weights, as fio: 4k/10:64k/50:32k/40 (a size without a weight shares the rest); reads,writes: 2k/50:4k/50,4k/90:8k/10; overrides bs",
    },
    ParamSpec {
        name: "offset",
        ty: ParamType::Size,
        default: Some("0"),
        help: "where each job's region starts in its file (or device): I/O stays within offset..offset+size",
    },
    ParamSpec {
        name: "random_distribution",
        ty: ParamType::Str,
        default: Some("random"),
        help: "where random I/O goes, as fio: random (uniform), zipf:θ, pareto:h, normal:σ (σ % of the region); an optional :BASE (0-1) places the hot spot",
    },
    ParamSpec {
        name: "norandommap",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "uniform random I/O draws blocks with replacement (false: every block once per pass, as fio's random map)",
    },
    ParamSpec {
        name: "verify",
        ty: ParamType::Choice(&["none", "crc32c"]),
        default: Some("none"),
        help: "crc32c: written blocks carry a checksummed header naming their offset; reads check it, and write-only jobs read back what they wrote; a mismatch fails the run naming the offset",
    },
    ParamSpec {
        name: "verify_fatal",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "stop at the first verify mismatch (false: check on and fail at the end with the count)",
    },
    ParamSpec {
        name: "buffer_compress_percentage",
        ty: ParamType::Int { min: 0, max: 100 },
        default: Some("0"),
        help: "written data compresses by about this percentage (50: to half), as fio: random bytes then zeros in each buffer_compress_chunk; 0: incompressible",
    },
    ParamSpec {
        name: "buffer_compress_chunk",
        ty: ParamType::Size,
        default: Some("512"),
        help: "the random-then-zeros segment of buffer_compress_percentage (0: the block size)",
    },
    ParamSpec {
        name: "dedupe_percentage",
        ty: ParamType::Int { min: 0, max: 100 },
        default: Some("0"),
        help: "this percentage of writes repeat the previous unique buffer byte for byte, as fio's dedupe_mode = repeat",
    },
    ParamSpec {
        name: "zero_buffers",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "write zeros",
    },
    ParamSpec {
        name: "refill_buffers",
        ty: ParamType::Bool,
        default: Some("false"),
        help: "fresh random data for every write (buffer_compress_percentage, dedupe_percentage and verify imply it)",
    },
    ParamSpec {
        name: "scramble_buffers",
        ty: ParamType::Bool,
        default: Some("true"),
        help: "stamp each 512-byte sector of a write with its offset and the write, so no two written sectors are alike (cheap; defeats naive deduplication, not compression)",
    },
    ParamSpec {
        name: "iodepth_batch_submit",
        ty: ParamType::Int { min: 0, max: 4096 },
        default: Some("4"),
        help: "io_uring: submit every N queued operations (0: the whole iodepth at once); fio's default is 1, 4 keeps a virtio disk busier at less CPU",
    },
];

/// Cross-parameter checks: the key at fault and why.
pub fn validate(p: &Params) -> Result<(), (&'static str, String)> {
    options::read(p).map(|_| ())
}

/// Rough run length for estimates: time-based exactly (the full runtime even
/// with steady state, which may end it sooner), size-based at 500 MB/s or at
/// the open-loop rate when one is set.
pub fn estimate(p: &Params) -> Duration {
    let layout = Duration::from_secs_f64(bytes_needed(p) as f64 / 1e9);
    let size = p.size("size").unwrap_or(0);
    let bs = options::read(p)
        .map_or(4096.0, |o| o.spec.mean_bs())
        .max(1.0);
    let paced = period_ps(
        bs as usize,
        p.size("rate").unwrap_or(0),
        p.int("rate_iops").unwrap_or(0).max(0) as u64,
    );
    match (p.duration("runtime"), paced) {
        (Some(r), _) => r + p.duration("ramp_time").unwrap_or_default() + layout,
        (None, Some(ps)) => Duration::from_secs_f64(size as f64 / bs * ps as f64 / 1e12) + layout,
        (None, None) => Duration::from_secs_f64(bytes_needed(p) as f64 / 500e6) + layout,
    }
}

pub fn bytes_needed(p: &Params) -> u64 {
    (p.size("offset").unwrap_or(0) + p.size("size").unwrap_or(0))
        * p.int("numjobs").unwrap_or(1) as u64
}

pub struct Io {
    /// The parameters read, or why they cannot run (validation refuses
    /// such a workload before it is built).
    opts: Result<Options, String>,
}

impl Io {
    pub fn new(p: &Params) -> Io {
        Io {
            opts: options::read(p).map_err(|(key, why)| format!("{key}: {why}")),
        }
    }

    fn opts(&self) -> Result<&Options> {
        self.opts
            .as_ref()
            .map_err(|e| anyhow::anyhow!("invalid io parameters: {e}"))
    }

    fn job_path(dir: &Path, i: usize) -> PathBuf {
        dir.join(format!("job{i}.dat"))
    }
}

impl Workload for Io {
    fn prepare(&mut self, dir: &Path) -> Result<()> {
        let o = self.opts()?;
        if !o.spec.rw.needs_layout() {
            return Ok(());
        }
        for i in 0..o.numjobs {
            layout::lay_out_job(&Self::job_path(dir, i), &o.spec, o.spec.seed + i as u64)?;
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let o = self.opts()?;
        let progress: Vec<Progress> = (0..o.numjobs).map(|_| Progress::default()).collect();
        let barrier = Barrier::new(o.numjobs + 1);
        let epoch = OnceLock::new();
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
                    let mut spec = o.spec.clone();
                    spec.seed = spec
                        .seed
                        .wrapping_add(cx.run_seed)
                        .wrapping_add(i as u64 * 7919);
                    let path = Self::job_path(dir, i);
                    let shared = Shared {
                        barrier: &barrier,
                        epoch: &epoch,
                        stop,
                        halt: &halt,
                        progress: &progress[i],
                    };
                    scope.spawn(move || run_job(&spec, &path, shared))
                })
                .collect();
            barrier.wait();
            let start = *epoch.get_or_init(Instant::now);
            let sampler = Sampler {
                progress: &progress,
                handles: &handles,
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
        if let Some(d) = &detector {
            out.metrics.extend(d.metrics());
            // An interrupted run is flagged as such; it did not run to runtime.
            if !cx.stop.is_raised() {
                out.warnings.extend(d.warning(o.spec.runtime));
            }
        }
        Ok(out)
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        let Ok(o) = self.opts() else {
            return Ok(());
        };
        for i in 0..o.numjobs {
            let path = Self::job_path(dir, i);
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
struct Sampler<'a, 'scope, T> {
    progress: &'a [Progress],
    handles: &'a [std::thread::ScopedJoinHandle<'scope, T>],
    detector: Option<&'a mut Detector>,
    halt: &'a AtomicBool,
    stop: &'a AtomicBool,
    /// A time-based run's end (after the ramp): its last second is whole
    /// even when the jobs finish a moment before its tick.
    end: Option<Instant>,
}

impl<T> Sampler<'_, '_, T> {
    fn total(&self) -> u64 {
        self.progress
            .iter()
            .map(|p| p.0.load(Ordering::Relaxed))
            .sum()
    }

    fn done(&self) -> bool {
        self.handles.iter().all(|h| h.is_finished())
    }

    /// Samples from `start`, the end of the ramp.
    fn run(mut self, start: Instant) -> Vec<f64> {
        while Instant::now() < start && !self.done() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut values = Vec::new();
        let mut last = self.total();
        let mut tick = start + Duration::from_secs(1);
        loop {
            while Instant::now() < tick {
                if self.done() {
                    if self.ran_to_end(tick) {
                        self.sample(&mut values, &mut last);
                    }
                    return values;
                }
                std::thread::sleep(
                    Duration::from_millis(5).min(tick.saturating_duration_since(Instant::now())),
                );
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
        m::OPS.value(ops as f64),
        m::ELAPSED_S.value(g.elapsed_s),
        m::CPU_USER_S.value(g.cpu.user_s),
        m::CPU_SYS_S.value(g.cpu.sys_s),
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
