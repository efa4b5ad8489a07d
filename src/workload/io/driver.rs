//! Runs one I/O job on its engine: the engine is set up before the start
//! barrier, then the io_uring loop or, for the synchronous engines (psync,
//! mmap), the one loop below, monomorphised per engine, runs it. The
//! engines stand on `job.rs`'s shared pieces; only this module knows them
//! all.

use std::path::Path;
use std::sync::atomic::Ordering;

use anyhow::Result;

use super::buffer::AlignedBuf;
use super::cache::{advise, drop_cached};
use super::data::Data;
use super::engine::{EngineKind, SyncEngine};
use super::engine_mmap::Mmap;
use super::engine_psync::{own_fd_table, Psync};
use super::engine_uring::Uring;
use super::job::{open, JobResult, JobSpec, Phase, Shared};
use super::pattern::{Op, Pattern};
use super::schedule::{fine_timer_slack, wait_until, Schedule};

/// A job's engine, set up before the start.
enum Ready<'a> {
    Psync(Psync<'a>),
    Mmap(Mmap<'a>),
    IoUring(Box<Uring>),
}

fn set_up<'a>(spec: &JobSpec, path: &'a Path) -> Result<Ready<'a>> {
    let file = open(spec, path)?;
    if spec.engine != EngineKind::Mmap {
        advise(&file, spec.offset, spec.size, spec.advice, path)?;
    }
    if spec.invalidate {
        drop_cached(&file, spec.offset, spec.size, path)?;
    }
    Ok(match spec.engine {
        EngineKind::Psync => Ready::Psync(Psync::new(file, path)),
        EngineKind::Mmap => Ready::Mmap(Mmap::new(file, spec, path)?),
        EngineKind::IoUring => Ready::IoUring(Box::new(Uring::new(spec, file, path)?)),
    })
}

/// Runs one job to completion. Sets its engine up, then waits on the
/// barrier so that all jobs start together (a job that failed to set up
/// waits too, so that no one waits for it forever).
pub fn run_job(spec: &JobSpec, path: &Path, shared: Shared<'_>) -> Result<JobResult> {
    if spec.engine == EngineKind::Psync {
        own_fd_table();
    }
    let ready = set_up(spec, path);
    shared.barrier.wait();
    if spec.period_ps.is_some() {
        fine_timer_slack();
    }
    match ready? {
        Ready::Psync(e) => sync_loop(spec, e, path, &shared),
        Ready::Mmap(e) => sync_loop(spec, e, path, &shared),
        Ready::IoUring(u) => u.run(spec, path, &shared),
    }
}

/// The loop of the synchronous engines: one operation at a time, paced by
/// the schedule in open-loop runs. Monomorphised per engine.
fn sync_loop<E: SyncEngine>(
    spec: &JobSpec,
    mut engine: E,
    path: &Path,
    shared: &Shared<'_>,
) -> Result<JobResult> {
    let mut buf = AlignedBuf::zeroed(spec.max_bs());
    let mut data = Data::new(spec, path);
    data.initial(buf.as_mut_slice());
    let mut pattern = Pattern::new(spec);
    let mut phase = Phase::new(spec, shared.start());
    let clock = phase.clock;
    let mut s = phase.state();
    let mut sched = spec.period_ps.map(|p| Schedule::new(clock, phase.t0, p));
    let mut now = phase.t0_stamp;
    let mut issued = 0u64;
    let wrap_invalidates = spec.invalidates_on_wrap();
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
        if wrap_invalidates && pattern.take_wrap() {
            engine.invalidate(spec.offset, spec.size)?;
        }
        let Op { read, off, len } = pattern.next();
        let b = &mut buf.as_mut_slice()[..len];
        if !read {
            data.before_write(b, off);
        }
        let t = match due {
            Some(d) => {
                wait_until(&clock, d);
                clock.now()
            }
            None => clock.now(),
        };
        if read {
            engine.read(b, off)?;
        } else {
            engine.write(b, off)?;
        }
        now = clock.now();
        issued += len as u64;
        if read {
            data.after_read(b, off)?;
        }
        if phase.measuring {
            s.record(read, t, due, now, len as u64);
            shared.progress.0.store(s.bytes(), Ordering::Relaxed);
        }
        if !read && s.sync_due(spec) {
            let ts = clock.now();
            engine.sync()?;
            now = clock.now();
            s.record_sync(phase.measuring, ts, now);
        }
    }
    if spec.end_fsync && spec.rw.writes() {
        engine.sync()?;
        s.count_sync();
    }
    let result = phase.finish(s);
    data.verify_written(buf.as_mut_slice(), |b, off| engine.read(b, off))?;
    data.finish()?;
    Ok(result)
}
