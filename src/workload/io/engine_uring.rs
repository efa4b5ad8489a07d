//! fio's io_uring engine: one ring per job keeps `iodepth` operations in
//! flight. The job's file and its `iodepth` buffers (slices of one aligned
//! allocation) are registered with the ring, so each operation skips the
//! file-table lookup and the page pinning; the ring falls back to plain
//! reads and writes where registration is refused. Latency runs from the
//! submission batch an operation joined to the reaping of its completion.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use io_uring::{opcode, squeue, types, IoUring};

use super::buffer::AlignedBuf;
use super::job::{JobResult, JobSpec, Pattern, Phase, Shared, State};
use super::schedule::{wait_until, Schedule};

/// One operation in flight.
#[derive(Debug, Clone, Copy)]
struct Slot {
    read: bool,
    off: u64,
    issued: Instant,
    due: Option<Instant>,
}

/// The ring with what was registered into it.
struct Ring {
    ring: IoUring,
    bufs: AlignedBuf,
    bs: usize,
    fixed_file: bool,
    fixed_bufs: bool,
    fd: i32,
}

impl Ring {
    fn new(spec: &JobSpec, file: &File, path: &Path) -> Result<Ring> {
        let depth = spec.iodepth as u32;
        let entries = depth.next_power_of_two();
        // No interrupting wake-ups for completion work. DEFER_TASKRUN was
        // measured too: 11% fewer IOPS at QD32 on virtio and 40% more CPU per
        // I/O. Older kernels lack these flags, so fall back to a plain ring.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))
            .with_context(|| {
                format!("creating an io_uring of {depth} entries for {}; is io_uring disabled (sysctl kernel.io_uring_disabled)?", path.display())
            })?;
        let mut bufs = AlignedBuf::new(spec.bs * spec.iodepth, spec.seed);
        let fd = file.as_raw_fd();
        let fixed_file = ring.submitter().register_files(&[fd]).is_ok();
        let iovecs: Vec<libc::iovec> = bufs
            .as_mut_slice()
            .chunks_mut(spec.bs)
            .map(|c| libc::iovec {
                iov_base: c.as_mut_ptr().cast(),
                iov_len: c.len(),
            })
            .collect();
        // SAFETY: the iovecs point into `bufs`, which lives in this struct as
        // long as the ring and is never reallocated.
        let fixed_bufs = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Ok(Ring {
            ring,
            bufs,
            bs: spec.bs,
            fixed_file,
            fixed_bufs,
            fd,
        })
    }

    /// Queues the operation of `slot` (the slot's index is its buffer index).
    #[inline]
    fn push(&mut self, idx: usize, read: bool, off: u64) -> Result<()> {
        let ptr = self.bufs.as_mut_slice()[idx * self.bs..].as_mut_ptr();
        let len = self.bs as u32;
        let entry = match (self.fixed_file, self.fixed_bufs, read) {
            (true, true, true) => opcode::ReadFixed::new(types::Fixed(0), ptr, len, idx as u16)
                .offset(off)
                .build(),
            (true, true, false) => opcode::WriteFixed::new(types::Fixed(0), ptr, len, idx as u16)
                .offset(off)
                .build(),
            (true, false, true) => opcode::Read::new(types::Fixed(0), ptr, len)
                .offset(off)
                .build(),
            (true, false, false) => opcode::Write::new(types::Fixed(0), ptr, len)
                .offset(off)
                .build(),
            (false, _, true) => opcode::Read::new(types::Fd(self.fd), ptr, len)
                .offset(off)
                .build(),
            (false, _, false) => opcode::Write::new(types::Fd(self.fd), ptr, len)
                .offset(off)
                .build(),
        };
        let entry: squeue::Entry = entry.user_data(idx as u64);
        // SAFETY: the buffer slice of `idx` stays valid and untouched until its
        // completion is reaped, because the slot is not reused before then.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| {
            anyhow::anyhow!("the submission queue is full (more than iodepth in flight)")
        })
    }

    /// Submits what is queued and waits for one completion, or until `until`.
    fn submit_and_wait(&mut self, until: Option<Instant>) -> Result<()> {
        let r = match until {
            None => self.ring.submit_and_wait(1),
            Some(t) => {
                let left = t
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_micros(1));
                let ts = types::Timespec::from(left);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(1, &args)
            }
        };
        match r {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e).context("io_uring_enter"),
        }
    }
}

/// Runs one io_uring job to completion.
pub fn run(spec: &JobSpec, file: File, path: &Path, shared: &Shared<'_>) -> Result<JobResult> {
    let mut ring = Ring::new(spec, &file, path)?;
    let depth = spec.iodepth;
    let mut pattern = Pattern::new(spec);
    let mut s = State::new();
    let mut phase = Phase::new(spec, Instant::now());
    let mut sched = spec.period_ps.map(|p| Schedule::new(phase.t0, p));
    let mut slots = vec![None::<Slot>; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut issued = 0u64;
    let mut draining = false;
    let mut sync_now = false;
    let mut now = phase.t0;
    loop {
        phase.maybe_start(now, &mut s);
        // Queue as many operations as there are free slots (and, in open
        // loop, as are due); all share the batch's issue time `now`.
        while !draining && !sync_now {
            let Some(&idx) = free.last() else { break };
            let due = sched.as_ref().map(|s| s.due());
            if phase.finished(shared, due.unwrap_or(now), issued) {
                draining = true;
                break;
            }
            if due.is_some_and(|d| d > now) {
                break;
            }
            if let Some(s) = sched.as_mut() {
                s.advance();
            }
            let (read, off) = pattern.next();
            ring.push(idx, read, off)?;
            free.pop();
            slots[idx] = Some(Slot {
                read,
                off,
                issued: now,
                due,
            });
            issued += 1;
        }
        let inflight = depth - free.len();
        if inflight == 0 {
            if sync_now {
                let ts = Instant::now();
                file.sync_all()
                    .with_context(|| format!("fsync of {}", path.display()))?;
                now = Instant::now();
                s.record_sync(phase.measuring, ts, now);
                sync_now = false;
                continue;
            }
            if draining {
                break;
            }
            if let Some(sc) = sched.as_ref() {
                wait_until(sc.due());
            }
            now = Instant::now();
            continue;
        }
        let next_due = match (&sched, free.is_empty() || draining || sync_now) {
            (Some(sc), false) => Some(sc.due()),
            _ => None,
        };
        ring.submit_and_wait(next_due)?;
        now = Instant::now();
        reap(
            &mut ring,
            &mut slots,
            &mut free,
            &mut s,
            &phase,
            now,
            spec,
            path,
            &mut sync_now,
        )?;
        if phase.measuring {
            shared.progress.0.store(s.bytes(), Ordering::Relaxed);
        }
    }
    if spec.end_fsync && spec.rw.writes() {
        file.sync_all()
            .with_context(|| format!("final fsync of {}", path.display()))?;
    }
    Ok(phase.finish(s))
}

/// Records every completion waiting in the ring and frees its slot.
#[allow(clippy::too_many_arguments)]
#[inline]
fn reap(
    ring: &mut Ring,
    slots: &mut [Option<Slot>],
    free: &mut Vec<usize>,
    s: &mut State,
    phase: &Phase,
    now: Instant,
    spec: &JobSpec,
    path: &Path,
    sync_now: &mut bool,
) -> Result<()> {
    for cqe in ring.ring.completion() {
        let idx = cqe.user_data() as usize;
        let Some(slot) = slots.get_mut(idx).and_then(Option::take) else {
            bail!("io_uring returned an unknown completion ({idx})");
        };
        check_result(cqe.result(), &slot, spec, path)?;
        free.push(idx);
        if phase.measuring {
            s.record(slot.read, slot.issued, slot.due, now, spec.bs as u64);
        }
        if !slot.read && s.sync_due(spec) {
            *sync_now = true;
        }
    }
    Ok(())
}

/// A completion must have moved exactly one block.
#[inline]
fn check_result(res: i32, slot: &Slot, spec: &JobSpec, path: &Path) -> Result<()> {
    if res == spec.bs as i32 {
        return Ok(());
    }
    let what = if slot.read { "read" } else { "write" };
    let off = slot.off;
    if res < 0 {
        let e = std::io::Error::from_raw_os_error(-res);
        if spec.direct && -res == libc::EINVAL {
            bail!("io_uring {what} of {} at offset {off} with O_DIRECT: {e}; the filesystem or device may need a larger or aligned bs, or set direct = false", path.display());
        }
        return Err(e)
            .with_context(|| format!("io_uring {what} of {} at offset {off}", path.display()));
    }
    if slot.read {
        bail!(
            "short read of {res} bytes at offset {off} in {}: the file is shorter than `size`",
            path.display()
        );
    }
    // A short write: the filesystem filling up, as a plain write would say.
    let free = crate::provision::facts::space(path).map(|(_, free)| free);
    match free {
        Some(free) if free < spec.bs as u64 => Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
            .with_context(|| {
                format!(
                    "io_uring write of {} at offset {off}: only {res} of {} bytes written, {free} bytes free",
                    path.display(),
                    spec.bs
                )
            }),
        _ => bail!(
            "short write of {res} bytes at offset {off} in {}",
            path.display()
        ),
    }
}
