//! Workload `tinywrites`: the "zillions of tiny writes" program of the
//! tiny-writes seed. It writes `total_size` bytes in writes of `write_size`
//! bytes — one write(2) each, or through a user-space buffer (`buffered`) —
//! optionally through a pipe to a real compressor (`compress`), as
//! `program | gzip > file`, then makes the file
//! durable with fsync or sync(2). Metrics: write, sync and total time
//! (primary, lower is better), throughput, bytes on disk and the
//! compression ratio.

pub mod data;
pub mod stream;

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use self::data::{generate, Data};
use self::stream::{write_stream, Compress};
use super::{Configure, RunContext, Workload, WorkloadConfig};
use crate::measure::cpu::CpuTimes;
use crate::measure::RunOutput;
use crate::metric::catalogue as m;
use crate::params::units::saturating_secs;
use crate::params::{choices, declare, Fault, Params};

declare! {
    /// The parameters of a `tinywrites` workload.
    pub struct TinywritesParams {
        write_size: size = "64" => "bytes per write",
        total_size: size = "10M" => "bytes written in all",
        buffered: bool = "false" => "collect writes in a user-space buffer (false: one write(2) per write, to the file or to the compressor's pipe)",
        buffer_size: size = "64k" => "size of that buffer, with buffered = true",
        sync: choice(Durability) = "fsync" => "how the data is made durable after writing: fsync of the file, or sync(2) of every filesystem",
        compress: string = "none" => "compress on the way, as `program | gzip > file`: none, gzip:LEVEL (0-9) or zstd:LEVEL (1-19)",
        data: string = "text" => "what is written: zeros, text, random, or ratio:F (compressible about F:1)",
    }
}

choices! {
    /// How the written data is made durable.
    pub enum Durability { Fsync = "fsync", Sync = "sync" }
}

/// Data is generated once into a pool of at most this size and cycled: far
/// beyond any gzip window (32 KiB) or zstd window up to level 19 (8 MiB).
pub const POOL_MAX: u64 = 64 << 20;

/// Seed of the generated data: the same data for every run.
pub const SEED: u64 = 0x7157;

#[derive(Debug, Clone)]
pub struct Settings {
    pub write_size: usize,
    pub total: u64,
    pub buffer: Option<usize>,
    pub fsync: bool,
    pub compress: Compress,
    pub data: Data,
}

impl Configure for TinywritesParams {
    type Config = Settings;

    /// Cross-parameter checks (the key at fault and why), then the
    /// settings a run follows.
    fn configure(self, _: &Path, _: &mut Params) -> Result<Settings, Fault> {
        let ws = self.write_size;
        if ws == 0 || ws > 64 << 20 {
            return Err(("write_size", "write_size must be from 1 byte to 64M".into()));
        }
        if self.total_size < ws {
            return Err((
                "total_size",
                "total_size must be at least write_size".into(),
            ));
        }
        if self.buffer_size == 0 {
            return Err(("buffer_size", "buffer_size must be larger than 0".into()));
        }
        Ok(Settings {
            write_size: ws as usize,
            total: self.total_size,
            buffer: self.buffered.then_some(self.buffer_size as usize),
            fsync: self.sync == Durability::Fsync,
            compress: Compress::parse(&self.compress).map_err(|e| ("compress", e))?,
            data: Data::parse(&self.data).map_err(|e| ("data", e))?,
        })
    }
}

impl WorkloadConfig for Settings {
    /// Rough run length: 1 µs per unbuffered write, 1 GB/s otherwise, 20 MB/s compressed.
    fn estimate(&self) -> Duration {
        let writes = self.total / self.write_size as u64;
        let mut secs = self.total as f64 / 1e9 + self.pool_len() as f64 / 500e6;
        if self.buffer.is_none() {
            secs += writes as f64 * 1e-6;
        }
        if self.compress != Compress::None {
            secs += self.total as f64 / 20e6;
        }
        saturating_secs(secs)
    }

    /// All but the compression stage, which runs at the CPU's pace.
    fn estimate_io(&self) -> Duration {
        let mut secs = self.total as f64 / 1e9 + self.pool_len() as f64 / 500e6;
        if self.buffer.is_none() {
            secs += (self.total / self.write_size as u64) as f64 * 1e-6;
        }
        saturating_secs(secs)
    }

    fn bytes_needed(&self) -> u64 {
        self.total
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Tinywrites::new(self))
    }
}

impl Settings {
    /// The pool's length: a whole number of writes, at most [`POOL_MAX`].
    pub fn pool_len(&self) -> usize {
        let ws = self.write_size as u64;
        (self.total.min(POOL_MAX) / ws).max(1) as usize * self.write_size
    }

    /// The exact bytes a run writes (before compression).
    pub fn expected(&self) -> Vec<u8> {
        let pool = generate(self.data, self.pool_len(), SEED);
        pool.iter()
            .copied()
            .cycle()
            .take(self.total as usize)
            .collect()
    }
}

pub struct Tinywrites {
    s: Settings,
    pool: Vec<u8>,
}

impl Tinywrites {
    pub fn new(s: &Settings) -> Tinywrites {
        Tinywrites {
            s: s.clone(),
            pool: Vec::new(),
        }
    }

    pub fn file(&self, dir: &Path) -> PathBuf {
        dir.join(self.s.compress.file_name())
    }
}

impl Workload for Tinywrites {
    fn prepare(&mut self, dir: &Path, _cx: &RunContext) -> Result<()> {
        self.pool = generate(self.s.data, self.s.pool_len(), SEED);
        self.cleanup(dir)
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let path = self.file(dir);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        let cpu0 = CpuTimes::thread_now();
        let t0 = Instant::now();
        let (file, done, compressor_cpu) = write_stream(
            file,
            self.s.buffer,
            self.s.compress,
            &self.pool,
            self.s.write_size,
            self.s.total,
            cx.stop.as_atomic(),
        )
        .with_context(|| format!("writing {}", path.display()))?;
        let t1 = Instant::now();
        if self.s.fsync {
            file.sync_all()
                .with_context(|| format!("fsync of {}", path.display()))?;
        } else {
            // SAFETY: sync(2) has no preconditions.
            unsafe { libc::sync() };
        }
        let t2 = Instant::now();
        let cpu = CpuTimes::thread_now().since(cpu0).plus(compressor_cpu);
        let on_disk = file.metadata().map(|m| m.len()).unwrap_or(0);
        drop(file);
        let write_s = (t1 - t0).as_secs_f64();
        let sync_s = (t2 - t1).as_secs_f64();
        let total_s = (t2 - t0).as_secs_f64().max(1e-9);
        let metrics = vec![
            m::TOTAL_S.value(total_s),
            m::WRITE_S.value(write_s),
            m::SYNC_S.value(sync_s),
            m::BW_BYTES_PER_S.value(done.bytes as f64 / total_s),
            m::BYTES.value(done.bytes as f64),
            m::WRITES.value(done.writes as f64),
            m::BYTES_ON_DISK.value(on_disk as f64),
            // What went through write(2): the compressed stream when compressing.
            m::WRITE_BYTES.value(on_disk as f64),
            m::COMPRESSION_RATIO.value(done.bytes as f64 / (on_disk.max(1)) as f64),
            m::CPU_USER_S.value(cpu.user_s),
            m::CPU_SYS_S.value(cpu.sys_s),
            m::SYNCS.value(1.0),
        ];
        let sync = if self.s.fsync { "fsync" } else { "sync" };
        Ok(RunOutput {
            metrics,
            facts: vec![("sync".into(), sync.into())],
            ..Default::default()
        })
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        let path = self.file(dir);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("removing {}", path.display()))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
