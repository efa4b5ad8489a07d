//! Workload `smallfiles`: metadata storms over many small files, as the
//! smallfile and mdtest tools run them. `threads` threads each own a tree of
//! `dirs` directories holding `files` files of `file_size` bytes, and run
//! the selected operations in a fixed order (create, stat, read, append,
//! rename, readdir, delete), all threads starting each operation together.
//! Per operation, labelled `op`: `ops`, `ops_per_s`, `elapsed_s` and the
//! latency histogram with its percentiles; over all of them the same
//! without labels. The primary metric is the total operations per second
//! over every selected operation.

mod ops;
mod tree;

use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use self::ops::{Op, Pass, ThreadState};
use self::tree::Tree;
use super::{Configure, RunContext, Workload, WorkloadConfig};
use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, RunOutput};
use crate::metric::catalogue::{self as m, LAT};
use crate::metric::labels::OP;
use crate::metric::Labels;
use crate::params::units::saturating_secs;
use crate::params::{declare, Fault, Params};

declare! {
    /// The parameters of a `smallfiles` workload.
    pub struct SmallfilesParams {
        threads: int(usize, 1, 1024) = "1" => "threads, each with its own tree",
        files: int(usize, 1, 100_000_000) = "1000" => "files per thread",
        dirs: int(usize, 1, 1_000_000) = "10" => "directories per thread; files are spread over them round-robin",
        file_size: size = "4k" => "bytes written by create and again by append",
        operations: list = "create,stat,read,append,rename,readdir,delete" => "operations to run, always in the order create, stat, read, append, rename, readdir, delete",
        fsync: bool = "false" => "fsync each file after create, inside the create's timing",
    }
}

impl SmallfilesParams {
    /// Cross-parameter checks: the key at fault and why.
    fn validate(&self) -> Result<(), Fault> {
        let ops = &self.operations;
        if ops.is_empty() {
            return Err(("operations", "name at least one operation".into()));
        }
        for o in ops {
            if Op::parse(o).is_none() {
                return Err((
                    "operations",
                    format!(
                        "unknown operation `{o}`; operations are {}",
                        Op::NAMES.join(", ")
                    ),
                ));
            }
        }
        if self.file_size > 1 << 30 {
            return Err(("file_size", "file_size above 1G is not a small file".into()));
        }
        Ok(())
    }

    fn settings(&self) -> Settings {
        Settings {
            threads: self.threads,
            files: self.files,
            dirs: self.dirs,
            file_size: self.file_size as usize,
            ops: Op::ALL
                .iter()
                .copied()
                .filter(|o| self.operations.iter().any(|c| c == o.name()))
                .collect(),
            fsync: self.fsync,
        }
    }
}

struct Settings {
    threads: usize,
    files: usize,
    dirs: usize,
    file_size: usize,
    ops: Vec<Op>,
    fsync: bool,
}

impl Configure for SmallfilesParams {
    type Config = SmallfilesParams;

    fn configure(self, _: &Path, _: &mut Params) -> Result<SmallfilesParams, Fault> {
        self.validate()?;
        Ok(self)
    }
}

impl WorkloadConfig for SmallfilesParams {
    /// Rough run length: 20 µs per operation, 2 ms per fsync.
    fn estimate(&self) -> Duration {
        let s = self.settings();
        let files = (s.threads * s.files) as f64;
        let fsyncs = if s.fsync && s.ops.contains(&Op::Create) {
            files * 2e-3
        } else {
            0.0
        };
        saturating_secs(files * s.ops.len() as f64 * 20e-6 + fsyncs)
    }

    /// Data plus one 4 KiB block of metadata per file.
    fn bytes_needed(&self) -> u64 {
        let s = self.settings();
        ((s.threads * s.files) as u64).saturating_mul(2 * s.file_size as u64 + 4096)
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(Smallfiles::new(self))
    }
}

pub struct Smallfiles {
    s: Settings,
}

/// One thread's results: operations done and the histogram, per operation.
struct ThreadResult {
    done: Vec<u64>,
    hists: Vec<Histogram<u64>>,
    entries: u64,
}

impl Smallfiles {
    pub fn new(p: &SmallfilesParams) -> Smallfiles {
        Smallfiles { s: p.settings() }
    }

    pub fn base(dir: &Path) -> PathBuf {
        dir.join("smallfiles")
    }

    fn trees(&self, dir: &Path) -> Vec<Tree> {
        (0..self.s.threads)
            .map(|t| Tree::new(&Self::base(dir), t, self.s.dirs, self.s.files))
            .collect()
    }

    /// One thread: every selected operation, in step with the other threads.
    fn thread(
        &self,
        pass: &Pass<'_>,
        barrier: &Barrier,
        starts: &[std::sync::OnceLock<Instant>],
    ) -> Result<ThreadResult> {
        let mut st = ThreadState::default();
        let mut buf = vec![0u8; self.s.file_size.max(4096)];
        let mut r = ThreadResult {
            done: vec![0; self.s.ops.len()],
            hists: self.s.ops.iter().map(|_| new_histogram()).collect(),
            entries: 0,
        };
        let mut err = None;
        for (i, &op) in self.s.ops.iter().enumerate() {
            barrier.wait();
            starts[i].get_or_init(Instant::now);
            if err.is_none() {
                match pass.run(op, &mut st, &mut buf, &mut r.hists[i]) {
                    Ok(n) => r.done[i] = n,
                    Err(e) => err = Some(e),
                }
            }
            barrier.wait();
            starts[self.s.ops.len() + i].get_or_init(Instant::now);
        }
        r.entries = st.entries;
        err.map_or(Ok(r), Err)
    }
}

impl Workload for Smallfiles {
    /// Lays out a fresh tree: directories always, files when `create` is
    /// not among the operations.
    fn prepare(&mut self, dir: &Path, _cx: &RunContext) -> Result<()> {
        self.cleanup(dir)?;
        let data = vec![0x5au8; self.s.file_size];
        let stop = std::sync::atomic::AtomicBool::new(false);
        for tree in self.trees(dir) {
            tree.make_dirs()?;
            if !self.s.ops.contains(&Op::Create) {
                let pass = Pass {
                    tree: &tree,
                    data: &data,
                    fsync: false,
                    stop: &stop,
                };
                for f in &tree.files {
                    pass.create(f)
                        .with_context(|| format!("laying out {}", f.display()))?;
                }
            }
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let trees = self.trees(dir);
        let mut data = vec![0u8; self.s.file_size];
        super::io::buffer::fill_random(&mut data, cx.run_seed);
        let barrier = Barrier::new(self.s.threads);
        let marks: Vec<std::sync::OnceLock<Instant>> = (0..2 * self.s.ops.len())
            .map(|_| Default::default())
            .collect();
        let this: &Smallfiles = self;
        let results: Vec<Result<ThreadResult>> = std::thread::scope(|scope| {
            let handles: Vec<_> = trees
                .iter()
                .map(|tree| {
                    let pass = Pass {
                        tree,
                        data: &data,
                        fsync: this.s.fsync,
                        stop: cx.stop.as_atomic(),
                    };
                    let (barrier, marks) = (&barrier, &marks);
                    scope.spawn(move || this.thread(&pass, barrier, marks))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a smallfiles thread panicked")))
                })
                .collect()
        });
        let results: Vec<ThreadResult> = results.into_iter().collect::<Result<_>>()?;
        let n = self.s.ops.len();
        let walls: Vec<f64> = (0..n)
            .map(|i| match (marks[i].get(), marks[n + i].get()) {
                (Some(s), Some(e)) => e.saturating_duration_since(*s).as_secs_f64().max(1e-9),
                _ => 1e-9,
            })
            .collect();
        let mut out = metrics(&self.s.ops, &results, &walls);
        let create = self.s.ops.iter().position(|o| *o == Op::Create);
        if let (true, Some(i)) = (self.s.fsync, create) {
            let synced: u64 = results.iter().map(|r| r.done[i]).sum();
            out.metrics.push(m::SYNCS.value(synced as f64));
        }
        Ok(out)
    }

    fn cleanup(&mut self, dir: &Path) -> Result<()> {
        let base = Self::base(dir);
        if base.exists() {
            std::fs::remove_dir_all(&base)
                .with_context(|| format!("removing {}", base.display()))?;
        }
        Ok(())
    }
}

/// Per-operation and total metrics.
fn metrics(ops: &[Op], results: &[ThreadResult], walls: &[f64]) -> RunOutput {
    let mut out = RunOutput::default();
    let (mut total_ops, mut total_s) = (0u64, 0.0);
    let mut all = new_histogram();
    for (i, op) in ops.iter().enumerate() {
        let mut h = new_histogram();
        let mut done = 0;
        for r in results {
            let _ = h.add(&r.hists[i]);
            done += r.done[i];
        }
        let labels = Labels::new().with(&OP, op.name());
        out.metrics.extend([
            m::OPS.labelled(labels.clone(), done as f64),
            m::OPS_PER_S.labelled(labels.clone(), done as f64 / walls[i]),
            m::ELAPSED_S.labelled(labels.clone(), walls[i]),
        ]);
        out.metrics.extend(latency_metrics(&LAT, &labels, &h));
        let _ = all.add(&h);
        out.histograms.push(Hist {
            def: &LAT,
            labels,
            hist: h,
        });
        total_ops += done;
        total_s += walls[i];
    }
    let entries: u64 = results.iter().map(|r| r.entries).sum();
    if ops.contains(&Op::Readdir) {
        out.metrics.push(m::READDIR_ENTRIES.value(entries as f64));
    }
    out.metrics.extend([
        m::OPS_PER_S.value(total_ops as f64 / total_s.max(1e-9)),
        m::OPS.value(total_ops as f64),
        m::ELAPSED_S.value(total_s),
    ]);
    out.metrics
        .extend(latency_metrics(&LAT, &Labels::new(), &all));
    out
}

#[cfg(test)]
mod tests;
