//! One I/O job: a thread with its own file, issuing synchronous pread/pwrite
//! (fio's psync engine). The hot loop allocates nothing and takes no lock:
//! it records into its own histograms and publishes progress with one
//! relaxed store to its own cache line.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;

use super::buffer::AlignedBuf;
use super::rng::Rng;
use crate::measure::cpu::CpuTimes;
use crate::measure::latency::new_histogram;

/// The access pattern, with fio's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// randrw: random reads and writes in the `rwmixread` proportion.
    Mixed,
}

impl Rw {
    pub fn parse(s: &str) -> Option<Rw> {
        Some(match s {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randrw" => Rw::Mixed,
            _ => return None,
        })
    }

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

/// What one job does.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub rw: Rw,
    pub bs: usize,
    pub size: u64,
    pub direct: bool,
    pub fsync_every: u64,
    pub end_fsync: bool,
    pub runtime: Option<Duration>,
    pub ramp: Duration,
    pub rwmixread: u32,
    pub seed: u64,
}

/// Progress published by a job: measured bytes so far, on its own cache line.
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct Progress(pub AtomicU64);

/// What one job measured (after ramp).
#[derive(Debug)]
pub struct JobResult {
    pub read_lat: Histogram<u64>,
    pub write_lat: Histogram<u64>,
    pub sync_lat: Histogram<u64>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub cpu: CpuTimes,
    pub start: Instant,
    pub end: Instant,
}

/// Shared coordination between the jobs and the sampler.
pub struct Shared<'a> {
    pub barrier: &'a Barrier,
    pub stop: &'a AtomicBool,
    pub progress: &'a Progress,
}

/// Opens the job's file for the run.
fn open(spec: &JobSpec, path: &Path) -> Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(spec.rw.writes());
    if spec.rw == Rw::Write {
        opts.create(true).truncate(true);
    }
    if spec.direct {
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

/// Runs one job to completion. Waits on the barrier so that all jobs start together.
pub fn run_job(spec: &JobSpec, path: &Path, shared: Shared<'_>) -> Result<JobResult> {
    let opened = open(spec, path);
    shared.barrier.wait();
    let file = opened?;
    let mut buf = AlignedBuf::new(spec.bs, spec.seed);
    let mut rng = Rng::new(spec.seed);
    let mut s = State::new(spec);
    let t0 = Instant::now();
    let ramp_end = t0 + spec.ramp;
    let deadline = spec.runtime.map(|r| ramp_end + r);
    let target_ops = spec.size / spec.bs as u64;
    let mut measuring = spec.ramp.is_zero();
    let mut cpu0 = CpuTimes::thread_now();
    let mut start = t0;
    let mut now = t0;
    let mut ops = 0u64;
    let mut pos = 0u64;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        match deadline {
            Some(d) if now >= d => break,
            None if ops >= target_ops => break,
            _ => {}
        }
        if !measuring && now >= ramp_end {
            measuring = true;
            s.reset();
            cpu0 = CpuTimes::thread_now();
            start = now;
        }
        let read = match spec.rw {
            Rw::Read | Rw::RandRead => true,
            Rw::Write | Rw::RandWrite => false,
            Rw::Mixed => rng.below(100) < spec.rwmixread as u64,
        };
        let off = if spec.rw.is_random() {
            rng.below(s.blocks) * spec.bs as u64
        } else {
            let o = pos;
            pos = if pos + 2 * spec.bs as u64 > spec.size {
                0
            } else {
                pos + spec.bs as u64
            };
            o
        };
        let t = Instant::now();
        if read {
            read_block(&file, buf.as_mut_slice(), off, path)?;
        } else {
            write_block(&file, buf.as_slice(), off, path)?;
        }
        now = Instant::now();
        let lat = now.saturating_duration_since(t).as_nanos() as u64;
        if measuring {
            s.record(read, lat, spec.bs as u64);
            shared.progress.0.store(s.bytes(), Ordering::Relaxed);
            ops += 1;
        }
        if !read && spec.fsync_every > 0 {
            s.writes_since_sync += 1;
            if s.writes_since_sync >= spec.fsync_every {
                s.writes_since_sync = 0;
                let ts = Instant::now();
                file.sync_all()
                    .with_context(|| format!("fsync of {}", path.display()))?;
                now = Instant::now();
                if measuring {
                    s.sync_lat
                        .saturating_record(now.saturating_duration_since(ts).as_nanos() as u64);
                }
            }
        }
    }
    if spec.end_fsync && spec.rw.writes() {
        file.sync_all()
            .with_context(|| format!("final fsync of {}", path.display()))?;
    }
    let end = Instant::now();
    Ok(JobResult {
        read_lat: s.read_lat,
        write_lat: s.write_lat,
        sync_lat: s.sync_lat,
        bytes_read: s.bytes_read,
        bytes_written: s.bytes_written,
        cpu: CpuTimes::thread_now().since(cpu0),
        start,
        end,
    })
}

#[inline]
fn read_block(file: &File, buf: &mut [u8], off: u64, path: &Path) -> Result<()> {
    match file.read_at(buf, off) {
        Ok(n) if n == buf.len() => Ok(()),
        Ok(n) => bail!(
            "short read of {n} bytes at offset {off} in {}: the file is shorter than `size`",
            path.display()
        ),
        Err(e) => Err(e).with_context(|| format!("reading {} at offset {off}", path.display())),
    }
}

#[inline]
fn write_block(file: &File, buf: &[u8], off: u64, path: &Path) -> Result<()> {
    match file.write_at(buf, off) {
        Ok(n) if n == buf.len() => Ok(()),
        Ok(n) => bail!(
            "short write of {n} bytes at offset {off} in {}",
            path.display()
        ),
        Err(e) => Err(e).with_context(|| format!("writing {} at offset {off}", path.display())),
    }
}

/// Counters and histograms of one job.
struct State {
    blocks: u64,
    read_lat: Histogram<u64>,
    write_lat: Histogram<u64>,
    sync_lat: Histogram<u64>,
    bytes_read: u64,
    bytes_written: u64,
    writes_since_sync: u64,
}

impl State {
    fn new(spec: &JobSpec) -> State {
        State {
            blocks: (spec.size / spec.bs as u64).max(1),
            read_lat: new_histogram(),
            write_lat: new_histogram(),
            sync_lat: new_histogram(),
            bytes_read: 0,
            bytes_written: 0,
            writes_since_sync: 0,
        }
    }

    fn reset(&mut self) {
        self.read_lat.reset();
        self.write_lat.reset();
        self.sync_lat.reset();
        self.bytes_read = 0;
        self.bytes_written = 0;
    }

    #[inline]
    fn record(&mut self, read: bool, lat_ns: u64, bytes: u64) {
        if read {
            self.read_lat.saturating_record(lat_ns.max(1));
            self.bytes_read += bytes;
        } else {
            self.write_lat.saturating_record(lat_ns.max(1));
            self.bytes_written += bytes;
        }
    }

    fn bytes(&self) -> u64 {
        self.bytes_read + self.bytes_written
    }
}
