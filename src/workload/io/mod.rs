//! Workload `io`: storlab's native engine, with fio's parameter names.
//!
//! `numjobs` threads, each with its own file `job<N>.dat`, run the access
//! pattern `rw` in blocks of `bs`, size-based (`size` per job) or time-based
//! (`runtime`, after `ramp_time`, wrapping over the file). Latency per
//! operation goes into HDR histograms merged over threads; throughput is
//! sampled every second into a series.
//!
//! A time-based run may end early at steady state (`steadystate`, `ss_dur`,
//! `ss_ramp`, as fio's; see `steady/`): the sampler judges each second's
//! window and raises a run-local stop, so the run is complete, not
//! interrupted. The primary metric stays `bw_bytes_per_s` over the whole
//! measured run, as fio reports it: the steady window's own mean
//! (`ss_bw_bytes_per_s`) covers only the seconds that happened to meet the
//! criterion, and comparing targets on it would compare different stretches
//! of each run.

pub(crate) mod buffer;
mod driver;
mod engine;
mod engine_mmap;
mod engine_psync;
mod engine_uring;
mod job;
pub(crate) mod layout;
pub(crate) mod rng;
mod schedule;
mod steady;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use self::driver::run_job;
use self::engine::EngineKind;
use self::job::{JobResult, JobSpec, Progress, Rw, Shared};
use self::schedule::{period_ps, Lag};
pub use self::steady::DEFAULT_CRITERION as DEFAULT_STEADY_CRITERION;
use self::steady::{Detector, SteadyParams, SteadySpec};
use super::{Configure, RunContext, Workload, WorkloadConfig};
use crate::measure::cpu::CpuTimes;
use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT, READ_LAT, SERVICE_LAT, SYNC_LAT, WRITE_LAT};
use crate::metric::Labels;
use crate::params::units::saturating_secs;
use crate::params::{declare, Fault, Params};

declare! {
    /// The parameters of an `io` workload, with fio's names.
    pub struct IoParams {
        rw: choice(Rw) = "read" => "access pattern, as fio's rw",
        bs: size = "4k" => "block size of each operation",
        size: size = "256M" => "file size per job",
        numjobs: int(usize, 1, 1024) = "1" => "threads, each with its own file",
        ioengine: choice(EngineKind) = "psync" => "how I/O is issued: psync (pread/pwrite), io_uring (iodepth in flight), mmap (memcpy to/from the mapped file)",
        iodepth: int(usize, 1, 4096) = "1" => "operations in flight per job (io_uring)",
        rate: size = "0" => "open loop: bytes per second per job (0: as fast as possible)",
        rate_iops: int(u64, 0, 1_000_000_000) = "0" => "open loop: operations per second per job (0: as fast as possible)",
        direct: bool = "false" => "O_DIRECT: bypass the page cache",
        fsync: int(u64, 0, i64::MAX) = "0" => "fsync every N writes (0: never)",
        end_fsync: bool = "false" => "fsync at the end of the job, inside the timing",
        runtime: duration => "time-based run length (wraps over the file); size-based when absent",
        ramp_time: duration = "0s" => "unmeasured time before measuring (time-based runs)",
        rwmixread: int(u32, 0, 100) = "50" => "percentage of reads in randrw",
        steady: flatten(SteadyParams),
    }
}

impl IoParams {
    /// Cross-parameter checks: the key at fault and why.
    fn validate(&self) -> Result<(), Fault> {
        let (bs, size) = (self.bs, self.size);
        if bs == 0 {
            return Err(("bs", "bs must be larger than 0".into()));
        }
        if bs > size {
            return Err((
                "bs",
                format!("bs ({bs} bytes) is larger than size ({size} bytes)"),
            ));
        }
        if size % bs != 0 {
            return Err((
                "size",
                format!("size ({size} bytes) must be a multiple of bs ({bs} bytes)"),
            ));
        }
        if self.direct && bs % 512 != 0 {
            return Err((
                "bs",
                "with direct = true, bs must be a multiple of 512 bytes (4k is safe)".into(),
            ));
        }
        if self.iodepth > 1 && !self.ioengine.caps().queued {
            return Err((
                "iodepth",
                "iodepth > 1 needs ioengine = \"io_uring\" (psync and mmap issue one operation at a time)".into(),
            ));
        }
        if !self.ramp_time.is_zero() && self.runtime.is_none() {
            return Err((
                "ramp_time",
                "ramp_time needs runtime (a time-based run)".into(),
            ));
        }
        if self.runtime == Some(Duration::ZERO) {
            return Err(("runtime", "runtime must be longer than 0".into()));
        }
        self.steady.validate(self.runtime)
    }

    fn period_ps(&self) -> Option<u64> {
        period_ps(self.bs as usize, self.rate, self.rate_iops)
    }
}

impl Configure for IoParams {
    type Config = IoParams;

    fn configure(self, _: &Path, _: &mut Params) -> Result<IoParams, Fault> {
        self.validate()?;
        Ok(self)
    }
}

impl WorkloadConfig for IoParams {
    /// Rough run length for estimates: time-based exactly (the full runtime
    /// even with steady state, which may end it sooner), size-based at
    /// 500 MB/s or at the open-loop rate when one is set.
    fn estimate(&self) -> Duration {
        let layout = saturating_secs(self.bytes_needed() as f64 / 1e9);
        let ops = (self.size / self.bs.max(1)) as f64;
        let run = match (self.runtime, self.period_ps()) {
            (Some(r), _) => r.saturating_add(self.ramp_time),
            (None, Some(ps)) => saturating_secs(ops * ps as f64 / 1e12),
            (None, None) => saturating_secs(self.bytes_needed() as f64 / 500e6),
        };
        run.saturating_add(layout)
    }

    fn bytes_needed(&self) -> u64 {
        self.size.saturating_mul(self.numjobs as u64)
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Io::new(self))
    }
}

pub struct Io {
    spec: JobSpec,
    numjobs: usize,
    steady: Option<SteadySpec>,
}

impl Io {
    pub fn new(p: &IoParams) -> Io {
        let spec = JobSpec {
            rw: p.rw,
            bs: p.bs as usize,
            size: p.size,
            engine: p.ioengine,
            iodepth: p.iodepth,
            direct: p.direct,
            fsync_every: p.fsync,
            end_fsync: p.end_fsync,
            runtime: p.runtime,
            ramp: p.ramp_time,
            rwmixread: p.rwmixread,
            period_ps: p.period_ps(),
            seed: 0x0570_41ab,
        };
        Io {
            spec,
            numjobs: p.numjobs,
            steady: p.steady.spec(),
        }
    }

    fn job_path(dir: &Path, i: usize) -> PathBuf {
        dir.join(format!("job{i}.dat"))
    }
}

impl Workload for Io {
    fn prepare(&mut self, dir: &Path, _cx: &RunContext) -> Result<()> {
        if !self.spec.rw.needs_layout() {
            return Ok(());
        }
        for i in 0..self.numjobs {
            layout::ensure_laid_out(
                &Self::job_path(dir, i),
                self.spec.size,
                self.spec.seed + i as u64,
            )?;
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let progress: Vec<Progress> = (0..self.numjobs).map(|_| Progress::default()).collect();
        let barrier = Barrier::new(self.numjobs + 1);
        let stop = cx.stop.as_atomic();
        // Raised at steady state: ends the jobs without marking the run
        // interrupted, which only the campaign's stop flag does.
        let halt = AtomicBool::new(false);
        let mut detector = self.steady.map(|s| Detector::new(s, self.spec.bs));
        let (results, series) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.numjobs)
                .map(|i| {
                    let mut spec = self.spec.clone();
                    spec.seed = spec
                        .seed
                        .wrapping_add(cx.run_seed)
                        .wrapping_add(i as u64 * 7919);
                    let path = Self::job_path(dir, i);
                    let shared = Shared {
                        barrier: &barrier,
                        stop,
                        halt: &halt,
                        progress: &progress[i],
                    };
                    scope.spawn(move || run_job(&spec, &path, shared))
                })
                .collect();
            barrier.wait();
            let sampler = Sampler {
                progress: &progress,
                handles: &handles,
                detector: detector.as_mut(),
                halt: &halt,
            };
            let series = sampler.run(self.spec.ramp);
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
        let mut out = aggregate(&self.spec, &results, series);
        if let Some(d) = &detector {
            out.metrics.extend(d.metrics());
            // An interrupted run is flagged as such; it did not run to runtime.
            if !cx.stop.is_raised() {
                out.warnings.extend(d.warning(self.spec.runtime));
            }
        }
        Ok(out)
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        for i in 0..self.numjobs {
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

    fn run(mut self, ramp: Duration) -> Vec<f64> {
        let start = Instant::now() + ramp;
        while Instant::now() < start && !self.done() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut values = Vec::new();
        let mut last = self.total();
        let mut tick = start + Duration::from_secs(1);
        loop {
            while Instant::now() < tick {
                if self.done() {
                    return values;
                }
                std::thread::sleep(
                    Duration::from_millis(5).min(tick.saturating_duration_since(Instant::now())),
                );
            }
            let now_total = self.total();
            let bytes = now_total.saturating_sub(last) as f64;
            values.push(bytes);
            if self.detector.as_mut().is_some_and(|d| d.push(bytes)) {
                self.halt.store(true, Ordering::Relaxed);
            }
            last = now_total;
            tick += Duration::from_secs(1);
        }
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
    out.series
        .push(Series::new(&m::BW_BYTES_PER_S, 1.0, series));
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
