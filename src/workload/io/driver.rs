//! Runs one I/O job on its engine: the dispatch from a job's spec to the
//! io_uring loop or, for the synchronous engines (psync, mmap), the one
//! loop below, monomorphised per engine. The engines stand on `job.rs`'s
//! shared pieces; only this module knows them all.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Result;

use super::buffer::AlignedBuf;
use super::engine::{EngineKind, SyncEngine};
use super::engine_mmap::Mmap;
use super::engine_psync::Psync;
use super::job::{open, JobResult, JobSpec, Pattern, Phase, Shared, State};
use super::schedule::{fine_timer_slack, wait_until, Schedule};

/// Runs one job to completion. Waits on the barrier so that all jobs start together.
pub fn run_job(spec: &JobSpec, path: &Path, shared: Shared<'_>) -> Result<JobResult> {
    let opened = open(spec, path);
    shared.barrier.wait();
    let file = opened?;
    if spec.period_ps.is_some() {
        fine_timer_slack();
    }
    match spec.engine {
        EngineKind::Psync => sync_loop(spec, Psync::new(file, path), &shared),
        EngineKind::Mmap => sync_loop(spec, Mmap::new(file, spec, path)?, &shared),
        EngineKind::IoUring => super::engine_uring::run(spec, file, path, &shared),
    }
}

/// The loop of the synchronous engines: one operation at a time, paced by
/// the schedule in open-loop runs. Monomorphised per engine.
fn sync_loop<E: SyncEngine>(
    spec: &JobSpec,
    mut engine: E,
    shared: &Shared<'_>,
) -> Result<JobResult> {
    let mut buf = AlignedBuf::new(spec.bs, spec.seed);
    let mut pattern = Pattern::new(spec);
    let mut s = State::new();
    let mut phase = Phase::new(spec, Instant::now());
    let mut sched = spec.period_ps.map(|p| Schedule::new(phase.t0, p));
    let mut now = phase.t0;
    let mut issued = 0u64;
    loop {
        let due = sched.as_mut().map(|s| {
            let d = s.due();
            s.advance();
            d
        });
        if phase.finished(shared, due.unwrap_or(now), issued) {
            break;
        }
        phase.maybe_start(now, &mut s);
        let (read, off) = pattern.next();
        let t = match due {
            Some(d) => {
                wait_until(d);
                Instant::now()
            }
            None => Instant::now(),
        };
        if read {
            engine.read(buf.as_mut_slice(), off)?;
        } else {
            engine.write(buf.as_slice(), off)?;
        }
        now = Instant::now();
        issued += 1;
        if phase.measuring {
            s.record(read, t, due, now, spec.bs as u64);
            shared.progress.0.store(s.bytes(), Ordering::Relaxed);
        }
        if !read && s.sync_due(spec) {
            let ts = Instant::now();
            engine.sync()?;
            now = Instant::now();
            s.record_sync(phase.measuring, ts, now);
        }
    }
    if spec.end_fsync && spec.rw.writes() {
        engine.sync()?;
    }
    Ok(phase.finish(s))
}
