//! The block layer's own view of a run: per device of the target's chain
//! and per operation (read, write, flush, discard), each request's time
//! from issue to completion as an HDR histogram, its time in the I/O
//! scheduler's queue (insert to issue) where it passed one, the requests
//! and their bytes, flushes and FUA writes, and the mean number in flight
//! — from the kernel's block tracepoints (`block_rq_insert`,
//! `block_rq_issue`, `block_rq_complete`).
//!
//! The mechanism is bpftrace, run as an external program found on PATH at
//! run time, as fio and pgbench are: storlab builds and installs without
//! clang, libbpf or kernel headers, and a host with bpftrace gets the
//! trace. Requests are counted in kernel maps (log-linear buckets,
//! [`buckets`]) and never streamed one by one; the maps are printed each
//! time the sampler takes a sample ([`storlab_block_trace_mark`], a uprobe
//! on storlab's own binary), so the trace's seconds are the sampler's.
//! Where it cannot run (not root, no bpftrace, no tracepoints, a failed
//! attach) the run's `block_trace` fact says why, and device latency is
//! /proc/diskstats' average (`dev_await_ns`) alone.

pub mod buckets;
pub mod dump;
pub mod figures;
pub mod script;
pub mod trace;
pub mod tracer;

use super::chain::Chain;
pub use trace::Trace;
pub use tracer::Tracer;

/// Called by the sampler at every sample (`seq` its number): bpftrace's
/// uprobe on this function prints the maps. Without a tracer attached it
/// costs a call.
#[no_mangle]
#[inline(never)]
pub extern "C" fn storlab_block_trace_mark(seq: u64) {
    std::hint::black_box(seq);
}

/// Block tracing at the start of a run: running, or why not.
pub enum Tracing {
    /// Not asked for, or nothing to trace (no block device under the target).
    Off(Option<String>),
    Running(Tracer, Vec<Cache>),
    Failed(String),
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

impl Tracing {
    /// Starts tracing `chain`'s devices when `on`.
    pub fn begin(chain: &Chain, on: bool) -> Tracing {
        if !on {
            return Tracing::Off(Some("[plan] block_trace = false".into()));
        }
        if chain.is_empty() {
            return Tracing::Off(None);
        }
        let numbers = chain.numbers();
        match Tracer::start(&numbers) {
            Ok(t) => Tracing::Running(t, caches(&numbers)),
            Err(why) => Tracing::Failed(why),
        }
    }

    /// Stops tracing after the sampler's mark `last`.
    pub fn end(self, last: u64) -> Outcome {
        match self {
            Tracing::Off(why) => Outcome::Off(why),
            Tracing::Failed(why) => Outcome::Failed(why),
            Tracing::Running(t, caches) => match t.finish(last) {
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
