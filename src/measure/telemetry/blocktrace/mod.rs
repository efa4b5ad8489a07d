//! The block layer's own view of a run: per device of the target's chain
//! and per operation (read, write, flush, discard), each request's time
//! from issue to completion as an HDR histogram, the requests and their
//! bytes, flushes and FUA writes, and the mean number in flight — from
//! the kernel's block tracepoints (`block_rq_issue`, `block_rq_complete`,
//! `block_rq_requeue`), for a sample of the requests as large as the
//! device's rate allows at little cost ([`sampling`]); the requests and
//! their bytes from /proc/diskstats. Queue time (insert to issue) is not
//! traced: it cost a fast disk a third of its IOPS ([`script`]).
//!
//! The mechanism is bpftrace, run as an external program found on PATH at
//! run time, as fio and pgbench are: storlab builds and installs without
//! clang, libbpf or kernel headers, and a host with bpftrace gets the
//! trace. Requests are counted in kernel maps (log-linear buckets,
//! [`buckets`]) and never streamed one by one; the maps are printed each
//! time the sampler takes a sample ([`storlab_block_trace_mark`], a uprobe
//! on storlab's own binary), so the trace's seconds are the sampler's.
//! One bpftrace serves a whole campaign ([`tracer`]): attached once after
//! provisioning to every device of the targets' chains, each run cuts its
//! own figures from it between its first mark and its last.
//! Where it cannot run (not root, no bpftrace, no tracepoints, a failed
//! attach) the run's `block_trace` fact says why, and device latency is
//! /proc/diskstats' average (`dev_await_ns`) alone.

pub mod buckets;
pub mod dump;
pub mod figures;
pub mod sampling;
pub mod script;
pub mod trace;
pub mod tracer;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::chain::Chain;
pub use trace::Trace;
pub use tracer::Tracer;

/// Called by the sampler at every sample (`seq` the mark's number, from
/// [`mark`]): bpftrace's uprobe on this function prints the maps. Without
/// a tracer attached it costs a call and a store.
///
/// Its body differs from [`storlab_block_trace_reset`]'s: each writes its
/// own static, volatile so that the optimiser keeps the write (plain
/// stores to statics nobody reads were dropped, and the two bodies folded
/// again). Two functions of the same machine code share one address in a
/// release build (identical code folding), and a uprobe on either then
/// fires for both: every mark cleared the counts, and a run's trace was
/// its last second less its first, most often nothing. [`probes_apart`]
/// checks it before a tracer attaches.
#[no_mangle]
#[inline(never)]
pub extern "C" fn storlab_block_trace_mark(seq: u64) {
    // SAFETY: the static's own pointer, written as a whole u64; volatile,
    // so that the store (what makes this body differ) is never dropped.
    unsafe { std::ptr::write_volatile(LAST_MARK.as_ptr(), seq) };
}

/// Called when a run begins (`seq` the reset's number, from [`reset`]):
/// bpftrace's uprobe on this function clears its counts and says so.
#[no_mangle]
#[inline(never)]
pub extern "C" fn storlab_block_trace_reset(seq: u64) {
    // SAFETY: as in storlab_block_trace_mark.
    unsafe { std::ptr::write_volatile(LAST_RESET.as_ptr(), seq) };
}

/// Called when a device's sampling shift changes (`dev` its kernel
/// number, [`script::kernel_dev`]): bpftrace's uprobe on this function
/// sets the device's shift ([`sampling`]).
#[no_mangle]
#[inline(never)]
pub extern "C" fn storlab_block_trace_rate(dev: u64, shift: u64) {
    // SAFETY: as in storlab_block_trace_mark.
    unsafe { std::ptr::write_volatile(LAST_RATE.as_ptr(), dev ^ shift) };
}

static LAST_MARK: AtomicU64 = AtomicU64::new(0);
static LAST_RESET: AtomicU64 = AtomicU64::new(0);
static LAST_RATE: AtomicU64 = AtomicU64::new(0);

/// Whether the probed functions have addresses of their own (why not
/// when two share one: a uprobe on one would fire for both).
pub fn probes_apart() -> Result<(), String> {
    let probes = [
        (
            "storlab_block_trace_mark",
            storlab_block_trace_mark as extern "C" fn(u64) as usize,
        ),
        (
            "storlab_block_trace_reset",
            storlab_block_trace_reset as extern "C" fn(u64) as usize,
        ),
        (
            "storlab_block_trace_rate",
            storlab_block_trace_rate as extern "C" fn(u64, u64) as usize,
        ),
    ];
    for (i, a) in probes.iter().enumerate() {
        for b in &probes[i + 1..] {
            apart(*a, *b)?;
        }
    }
    Ok(())
}

fn apart(a: (&str, usize), b: (&str, usize)) -> Result<(), String> {
    if a.1 == b.1 {
        return Err(format!(
            "{} and {} share the address {:#x} in this build (identical code folded): a uprobe on one would fire for both and the counts would be wrong; this is a bug in storlab, please report it",
            a.0, b.0, a.1
        ));
    }
    Ok(())
}

static RESETS: AtomicU64 = AtomicU64::new(0);

/// Asks the tracer to clear its counts; returns the reset's number.
pub fn reset() -> u64 {
    let n = RESETS.fetch_add(1, Ordering::SeqCst);
    storlab_block_trace_reset(n);
    n
}

/// Marks made so far in this process: each mark's number is unique, so
/// that a run's collection takes its own dumps and no other run's.
static MARKS: AtomicU64 = AtomicU64::new(0);

/// Marks this instant for the tracer; returns the mark's number.
pub fn mark() -> u64 {
    let n = MARKS.fetch_add(1, Ordering::SeqCst);
    storlab_block_trace_mark(n);
    n
}

/// The number the next mark will have.
pub fn next_mark() -> u64 {
    MARKS.load(Ordering::SeqCst)
}

/// Where a run's block trace comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// `[plan] block_trace = false`.
    Off,
    /// A tracer of the run's own, attached when it begins (a lone
    /// recording; a campaign shares one).
    Own,
    /// The campaign's tracer.
    Shared(Arc<Tracer>),
    /// The campaign's tracer could not be started: why.
    Failed(String),
}

/// Block tracing at the start of a run: collecting, or why not.
pub enum Tracing {
    /// Not asked for, or nothing to trace (no block device under the target).
    Off(Option<String>),
    Running(Collecting, Vec<Cache>),
    Failed(String),
}

/// A run's collection from a tracer; dropped unfinished, it is closed.
pub struct Collecting {
    tracer: Arc<Tracer>,
    from: u64,
}

impl Drop for Collecting {
    fn drop(&mut self) {
        self.tracer.close(self.from);
    }
}

/// What block tracing came to for one run.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Off(Option<String>),
    Traced(Box<Trace>, Vec<Cache>),
    Failed(String),
}

impl Default for Outcome {
    fn default() -> Self {
        Outcome::Off(None)
    }
}

/// Whether a device has a volatile write cache (the kernel sends it
/// flushes only then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    pub major: u32,
    pub minor: u32,
    pub write_back: bool,
}

impl Source {
    /// The source for `[plan] block_trace`.
    pub fn of_plan(on: bool) -> Source {
        if on {
            Source::Own
        } else {
            Source::Off
        }
    }

    /// Whether it asks for a tracer not yet started.
    pub fn wants_tracer(&self) -> bool {
        matches!(self, Source::Own)
    }
}

/// Starts one tracer on every device of `chains` (none when they have
/// none); the sources to give the runs of each chain.
pub fn share(chains: &[&Chain]) -> (Option<Arc<Tracer>>, Source) {
    let mut numbers: Vec<(u32, u32)> = chains.iter().flat_map(|c| c.numbers()).collect();
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.is_empty() {
        return (None, Source::Own);
    }
    match Tracer::start(&numbers) {
        Ok(t) => {
            let t = Arc::new(t);
            (Some(Arc::clone(&t)), Source::Shared(t))
        }
        Err(why) => (None, Source::Failed(why)),
    }
}

impl Tracing {
    /// Starts collecting `chain`'s devices' requests from `source`.
    pub fn begin(chain: &Chain, source: &Source) -> Tracing {
        if chain.is_empty() && !matches!(source, Source::Off) {
            return Tracing::Off(None);
        }
        let numbers = chain.numbers();
        let tracer = match source {
            Source::Off => return Tracing::Off(Some("[plan] block_trace = false".into())),
            Source::Failed(why) => return Tracing::Failed(why.clone()),
            Source::Own => match Tracer::start(&numbers) {
                Ok(t) => Arc::new(t),
                Err(why) => return Tracing::Failed(why),
            },
            Source::Shared(t) => Arc::clone(t),
        };
        if let Some(d) = numbers.iter().find(|d| !tracer.devices().contains(d)) {
            return Tracing::Failed(format!(
                "device {}:{} was not in the chain when the tracer attached",
                d.0, d.1
            ));
        }
        match tracer.open(&numbers) {
            Ok(from) => Tracing::Running(Collecting { tracer, from }, caches(&numbers)),
            Err(why) => Tracing::Failed(why),
        }
    }

    /// The tracer collecting, if one is.
    pub fn tracer(&self) -> Option<Arc<Tracer>> {
        match self {
            Tracing::Running(c, _) => Some(Arc::clone(&c.tracer)),
            _ => None,
        }
    }

    /// Waits until the tracer has read its maps at the run's first mark
    /// (taken by the sampler as it starts), so that the run's requests
    /// all fall after it.
    pub fn settle(&self) {
        if let Tracing::Running(c, _) = self {
            c.tracer.settle(c.from);
        }
    }

    /// Stops collecting after mark `last`.
    pub fn end(self, last: u64) -> Outcome {
        match self {
            Tracing::Off(why) => Outcome::Off(why),
            Tracing::Failed(why) => Outcome::Failed(why),
            Tracing::Running(c, caches) => match c.tracer.collect(c.from, last) {
                Ok(trace) => Outcome::Traced(Box::new(trace), caches),
                Err(why) => Outcome::Failed(why),
            },
        }
    }
}

/// The write cache of each device (a partition's is its disk's).
fn caches(numbers: &[(u32, u32)]) -> Vec<Cache> {
    numbers
        .iter()
        .filter_map(|&(major, minor)| {
            let dev = std::path::PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
            let text = std::fs::read_to_string(dev.join("queue/write_cache"))
                .or_else(|_| std::fs::read_to_string(dev.join("../queue/write_cache")))
                .ok()?;
            Some(Cache {
                major,
                minor,
                write_back: text.trim() == "write back",
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_and_the_reset_are_probed_apart_or_tracing_is_refused() {
        assert_eq!(probes_apart(), Ok(()));
        let why = apart(("m", 0x779a60), ("r", 0x779a60)).expect_err("one address");
        assert!(why.contains("m and r share the address 0x779a60"), "{why}");
    }
}
