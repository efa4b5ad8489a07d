//! fio's io_uring engine: one ring per job keeps `iodepth` operations in
//! flight. The job's file and its `iodepth` buffers (slices of one aligned
//! allocation) are registered with the ring, so each operation skips the
//! file-table lookup and the page pinning; the ring falls back to plain
//! reads and writes where registration is refused. Latency runs from the
//! submission batch an operation joined to the reaping of its completion.
//!
//! Refilling the queue submits every `iodepth_batch_submit` operations
//! (4 by default) rather than all at once: the kernel holds the requests of
//! one submission in a plug until the last is prepared, so a submission of
//! 30 keeps the device idle while it prepares all 30. On the virtio disk
//! here, submitting 30 at once gave 10–17 % fewer IOPS than submitting by 4
//! (interleaved in one process, QD32 4 KiB O_DIRECT reads), and one at a
//! time (fio's default) gave about 5 % fewer than by 4 at 25 % more CPU per
//! operation.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use io_uring::{opcode, squeue, types, IoUring};

use super::buffer::AlignedBuf;
use super::data::Data;
use super::job::{JobResult, JobSpec, Phase, Shared, State};
use super::pattern::{Op, Pattern};
use super::schedule::{wait_until, Schedule};
use crate::measure::clock::{Clock, Stamp};

/// One operation in flight.
#[derive(Debug, Clone, Copy)]
struct Slot {
    op: Op,
    issued: Stamp,
    due: Option<Stamp>,
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
        let bs = spec.max_bs();
        let mut bufs = AlignedBuf::zeroed(bs * spec.iodepth);
        let fd = file.as_raw_fd();
        let fixed_file = ring.submitter().register_files(&[fd]).is_ok();
        let iovecs: Vec<libc::iovec> = bufs
            .as_mut_slice()
            .chunks_mut(bs)
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
            bs,
            fixed_file,
            fixed_bufs,
            fd,
        })
    }

    /// The buffer of slot `idx`.
    #[inline]
    fn buf(&mut self, idx: usize) -> &mut [u8] {
        &mut self.bufs.as_mut_slice()[idx * self.bs..(idx + 1) * self.bs]
    }

    /// Queues `op` in slot `idx` (the slot's index is its buffer index).
    #[inline]
    fn push(&mut self, idx: usize, op: Op) -> Result<()> {
        let Op { read, off, len } = op;
        let ptr = self.buf(idx).as_mut_ptr();
        let len = len as u32;
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

    /// Submits what is queued without waiting, so that the device starts on
    /// it while the next operations are prepared.
    #[inline]
    fn submit(&mut self) -> Result<()> {
        match self.ring.submit() {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => Ok(()),
            Err(e) => Err(e).context("io_uring_enter"),
        }
    }

    /// Submits what is queued and waits for one completion, or until `until`.
    fn submit_and_wait(&mut self, clock: &Clock, until: Option<Stamp>) -> Result<()> {
        let r = match until {
            None => self.ring.submit_and_wait(1),
            Some(t) => {
                let left =
                    Duration::from_nanos(clock.ns(clock.now(), t)).max(Duration::from_micros(1));
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

/// An io_uring job set up: its ring and its file.
pub struct Uring {
    ring: Ring,
    file: File,
}

impl Uring {
    pub fn new(spec: &JobSpec, file: File, path: &Path) -> Result<Uring> {
        let ring = Ring::new(spec, &file, path)?;
        Ok(Uring { ring, file })
    }

    /// Runs the job to completion.
    pub fn run(self, spec: &JobSpec, path: &Path, shared: &Shared<'_>) -> Result<JobResult> {
        run(self.ring, spec, self.file, path, shared)
    }
}

fn run(
    mut ring: Ring,
    spec: &JobSpec,
    file: File,
    path: &Path,
    shared: &Shared<'_>,
) -> Result<JobResult> {
    let mut data = Data::new(spec, path);
    for idx in 0..spec.iodepth {
        data.initial(ring.buf(idx));
    }
    let mut q = Queue::new(spec);
    let mut pattern = Pattern::new(spec);
    let mut phase = Phase::new(spec, shared.start());
    let clock = phase.clock;
    let mut s = phase.state();
    let mut sched = spec.period_ps.map(|p| Schedule::new(clock, phase.t0, p));
    let mut issued = 0u64;
    let mut draining = false;
    let mut now = phase.t0_stamp;
    let wrap_invalidates = spec.invalidates_on_wrap();
    loop {
        phase.maybe_start(now, &mut s);
        // Queue as many operations as there are free slots (and, in open
        // loop, as are due); all share the batch's issue time `now`.
        while !draining && !q.sync_now {
            let Some(idx) = q.next_free() else { break };
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
            if wrap_invalidates && pattern.take_wrap() {
                super::cache::drop_cached(&file, spec.offset, spec.size, path)?;
            }
            let op = pattern.next();
            if !op.read {
                data.before_write(&mut ring.buf(idx)[..op.len], op.off);
            }
            ring.push(idx, op)?;
            q.take(
                idx,
                Slot {
                    op,
                    issued: now,
                    due,
                },
            );
            issued += op.len as u64;
            if ring.ring.submission().len() >= spec.batch_submit {
                ring.submit()?;
            }
        }
        if q.inflight() == 0 {
            if q.sync_now {
                let ts = clock.now();
                file.sync_all()
                    .with_context(|| format!("fsync of {}", path.display()))?;
                now = clock.now();
                s.record_sync(phase.measuring, ts, now);
                q.sync_now = false;
                continue;
            }
            if draining {
                break;
            }
            if let Some(sc) = sched.as_ref() {
                wait_until(&clock, sc.due());
            }
            now = clock.now();
            continue;
        }
        let next_due = match (&sched, q.is_full() || draining || q.sync_now) {
            (Some(sc), false) => Some(sc.due()),
            _ => None,
        };
        ring.submit_and_wait(&clock, next_due)?;
        now = clock.now();
        q.reap(&mut ring, &mut data, &mut s, &phase, now, spec, path)?;
        if phase.measuring {
            shared.progress.0.store(s.bytes(), Ordering::Relaxed);
        }
    }
    if spec.end_fsync && spec.rw.writes() {
        file.sync_all()
            .with_context(|| format!("final fsync of {}", path.display()))?;
        s.count_sync();
    }
    let result = phase.finish(s);
    let mut buf = AlignedBuf::zeroed(spec.max_bs());
    data.verify_written(buf.as_mut_slice(), |b, off| read_at(&file, b, off, path))?;
    data.finish()?;
    Ok(result)
}

/// The verify phase's reads, one at a time.
fn read_at(file: &File, buf: &mut [u8], off: u64, path: &Path) -> Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, off)
        .with_context(|| format!("reading {} at offset {off} to verify it", path.display()))
}

/// The slots of a ring: what each one holds in flight, and which are free.
struct Queue {
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// `fsync = N` asks for a sync once what is in flight has completed.
    sync_now: bool,
    /// The completions of one reaping (user data, result), kept to reuse.
    done: Vec<(u64, i32)>,
}

impl Queue {
    fn new(spec: &JobSpec) -> Queue {
        Queue {
            slots: vec![None; spec.iodepth],
            free: (0..spec.iodepth).rev().collect(),
            sync_now: false,
            done: Vec::with_capacity(spec.iodepth),
        }
    }

    fn next_free(&self) -> Option<usize> {
        self.free.last().copied()
    }

    fn take(&mut self, idx: usize, slot: Slot) {
        self.free.pop();
        self.slots[idx] = Some(slot);
    }

    fn inflight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// Records every completion waiting in the ring, checks what reads
    /// brought back, and frees the slots.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn reap(
        &mut self,
        ring: &mut Ring,
        data: &mut Data<'_>,
        s: &mut State,
        phase: &Phase,
        now: Stamp,
        spec: &JobSpec,
        path: &Path,
    ) -> Result<()> {
        let mut done = std::mem::take(&mut self.done);
        done.clear();
        done.extend(ring.ring.completion().map(|c| (c.user_data(), c.result())));
        for &(user_data, res) in &done {
            let idx = user_data as usize;
            let Some(slot) = self.slots.get_mut(idx).and_then(Option::take) else {
                bail!("io_uring returned an unknown completion ({idx})");
            };
            check_result(res, &slot, spec, path)?;
            self.free.push(idx);
            let Op { read, off, len } = slot.op;
            if read {
                data.after_read(&ring.buf(idx)[..len], off)?;
            }
            if phase.measuring {
                s.record(read, slot.issued, slot.due, now, len as u64);
            }
            if !read && s.sync_due(spec) {
                self.sync_now = true;
            }
        }
        self.done = done;
        Ok(())
    }
}

/// A completion must have moved the whole operation.
#[inline]
fn check_result(res: i32, slot: &Slot, spec: &JobSpec, path: &Path) -> Result<()> {
    let Op { read, off, len } = slot.op;
    if res == len as i32 {
        return Ok(());
    }
    let what = if read { "read" } else { "write" };
    if res < 0 {
        let e = std::io::Error::from_raw_os_error(-res);
        if spec.direct && -res == libc::EINVAL {
            bail!("io_uring {what} of {} at offset {off} with O_DIRECT: {e}; the filesystem or device may need a larger or aligned bs, or set direct = false", path.display());
        }
        return Err(e)
            .with_context(|| format!("io_uring {what} of {} at offset {off}", path.display()));
    }
    if read {
        bail!(
            "short read of {res} bytes at offset {off} in {}: the file is shorter than `size`",
            path.display()
        );
    }
    // A short write: the filesystem filling up, as a plain write would say.
    let free = crate::provision::facts::space(path).map(|(_, free)| free);
    match free {
        Some(free) if free < len as u64 => Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
            .with_context(|| {
                format!(
                    "io_uring write of {} at offset {off}: only {res} of {len} bytes written, {free} bytes free",
                    path.display(),
                )
            }),
        _ => bail!(
            "short write of {res} bytes at offset {off} in {}",
            path.display()
        ),
    }
}
