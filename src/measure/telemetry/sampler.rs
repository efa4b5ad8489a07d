//! The sampling thread: one sample when a run starts, one a second while
//! it runs, and a last one when it ends, so that a run's figures cover it
//! exactly and its per-second figures are whole seconds (the last one
//! shorter). It measures its own CPU time, so that what telemetry costs is
//! a figure of every run. Each sample is also a mark for the block tracer
//! ([`super::blocktrace`]), which counts between the same instants.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::arc;
use super::blocktrace::{self, sampling, Outcome, Source, Tracing};
use super::chain::Chain;
use super::kernel::{self, KernelWork};
use super::procs::{Located, Served, OTHER_TARGETS};
use super::sample::{self, Sample};
use crate::measure::cpu::CpuTimes;

/// What to watch during a run.
#[derive(Debug, Clone)]
pub struct Watch {
    pub chain: Chain,
    pub serving: Vec<Served>,
    /// The processes serving the campaign's other targets, counted as
    /// the campaign's ([`OTHER_TARGETS`]).
    pub campaign: Vec<Served>,
    /// The kernel's work for the campaign's devices.
    pub kernel: KernelWork,
    /// Whether to read the ZFS ARC's counters (a zfs target).
    pub arc: bool,
    /// Where the chain's block requests are traced (`[plan] block_trace`).
    pub block: Source,
    /// Requests a second of one device above which block tracing stops
    /// (`[plan] block_trace_max_rate`); 0: any rate.
    pub trace_max_rate: u64,
    pub interval: Duration,
}

/// Everything recorded during one run.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub chain: Chain,
    pub samples: Vec<Sample>,
    /// The ARC's counters at the start and the end.
    pub arc: Option<(arc::Arc, arc::Arc)>,
    /// Clock ticks after boot when the recording started.
    pub start_ticks: u64,
    pub ticks_per_s: u64,
    pub cores: usize,
    /// CPU seconds the sampling thread used.
    pub sampler_cpu_s: f64,
    /// The serving processes' labels and how each was identified.
    pub serving: Vec<(String, String)>,
    /// The block trace between the first sample and the last, or why none.
    pub block: Outcome,
    /// The block tracer's mark at the last sample.
    pub last_mark: u64,
    /// The kernel's work for the campaign's devices.
    pub kernel: KernelWork,
    /// Why block tracing was stopped for a device's rate, in this run or
    /// an earlier one of the campaign.
    pub trace_given_up: Option<String>,
}

impl Recording {
    pub fn elapsed_s(&self) -> f64 {
        self.samples.last().map_or(0.0, |s| s.t)
    }
}

/// A sampling thread at work.
pub struct Recorder {
    stop: Sender<()>,
    handle: JoinHandle<Recording>,
    tracing: Tracing,
}

impl Watch {
    /// Starts collecting this watch's block trace (attaching a tracer of
    /// its own takes seconds: start it before a run's start barrier).
    pub fn start_tracing(&self) -> Tracing {
        Tracing::begin(&self.chain, &self.block)
    }
}

impl Recorder {
    /// Starts block tracing, then takes the first sample and one every
    /// `watch.interval`.
    pub fn start(watch: Watch) -> Recorder {
        let tracing = watch.start_tracing();
        Recorder::start_traced(watch, tracing)
    }

    /// Takes the first sample now and one every `watch.interval`, each a
    /// mark for `tracing`; returns once the tracer has read its counts at
    /// the first.
    pub fn start_traced(watch: Watch, tracing: Tracing) -> Recorder {
        let (stop, stopped) = mpsc::channel::<()>();
        let tracer = tracing.tracer();
        let handle = std::thread::Builder::new()
            .name("telemetry".into())
            .spawn(move || record(watch, stopped, tracer))
            .expect("spawning the telemetry thread");
        tracing.settle();
        Recorder {
            stop,
            handle,
            tracing,
        }
    }

    /// Takes the last sample, stops the tracer and returns the recording.
    pub fn stop(self) -> Recording {
        let _ = self.stop.send(());
        let mut rec = self.handle.join().unwrap_or_default();
        rec.block = self.tracing.end(rec.last_mark);
        rec
    }
}

fn record(
    watch: Watch,
    stopped: mpsc::Receiver<()>,
    tracer: Option<Arc<blocktrace::Tracer>>,
) -> Recording {
    let cpu0 = CpuTimes::thread_now();
    let t0 = Instant::now();
    let mut rec = Recording {
        chain: watch.chain.clone(),
        start_ticks: sample::uptime_ticks(),
        ticks_per_s: procfs::ticks_per_second(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        serving: watch
            .serving
            .iter()
            .map(|s| (s.label.clone(), s.why.clone()))
            .collect(),
        ..Default::default()
    };
    rec.kernel = watch.kernel.clone();
    let serving: Vec<Served> = (watch.serving.iter())
        .cloned()
        .chain(watch.campaign.iter().map(|s| Served {
            label: OTHER_TARGETS.into(),
            ..s.clone()
        }))
        .map(|s| s.resolved())
        .collect();
    let arc0 = watch.arc.then(arc::read).flatten();
    let numbers = watch.chain.numbers();
    // The campaign's tracer, also when this run could not use it.
    let campaign_tracer = match &watch.block {
        Source::Shared(t) => Some(Arc::clone(t)),
        _ => tracer.clone(),
    };
    // Above the rate, tracing stops (once; the tracer says why to every
    // run from then on).
    let too_fast = |fastest: Option<sampling::Fastest>| {
        if let (Some(t), Some(f)) = (&tracer, fastest) {
            if f.too_fast(watch.trace_max_rate) {
                t.give_up(f.why(watch.trace_max_rate, t0.elapsed()));
            }
        }
    };
    let mut next = t0;
    loop {
        blocktrace::mark();
        rec.samples.push(take(&numbers, &serving, t0));
        match rec.samples.as_slice() {
            [first] => match first_rates(first, &numbers, t0, &stopped) {
                Some(fastest) => too_fast(fastest),
                None => break,
            },
            [.., a, b] => too_fast(sampling::follow(a, b)),
            [] => {}
        }
        next += watch.interval;
        let wait = next.saturating_duration_since(Instant::now());
        match stopped.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => continue,
            _ => break,
        }
    }
    rec.last_mark = blocktrace::mark();
    rec.samples.push(take(&numbers, &serving, t0));
    rec.arc = arc0.zip(watch.arc.then(arc::read).flatten());
    rec.sampler_cpu_s = CpuTimes::thread_now().since(cpu0).total_s;
    rec.trace_given_up = campaign_tracer.and_then(|t| t.given_up());
    rec
}

/// The devices' request rates a moment into the run, for the block
/// tracer's sampling (a fast device then pays for timing every request
/// for that moment, not a whole second): the fastest device, if any;
/// `None` if the run stopped first.
fn first_rates(
    first: &Sample,
    devices: &[(u32, u32)],
    t0: Instant,
    stopped: &mpsc::Receiver<()>,
) -> Option<Option<sampling::Fastest>> {
    if devices.is_empty() {
        return Some(None);
    }
    let wait = (t0 + sampling::FIRST_RATE).saturating_duration_since(Instant::now());
    if !matches!(stopped.recv_timeout(wait), Err(RecvTimeoutError::Timeout)) {
        return None;
    }
    let probe = Sample {
        t: t0.elapsed().as_secs_f64(),
        disks: sample::disks(devices),
        ..Default::default()
    };
    Some(sampling::follow(first, &probe))
}

fn take(devices: &[(u32, u32)], serving: &[Served], t0: Instant) -> Sample {
    let located: Vec<Located> = serving.iter().filter_map(Served::locate).collect();
    let mut s = Sample {
        disks: sample::disks(devices),
        cpu: sample::host_cpu(),
        mem: sample::mem(),
        psi: sample::psi(),
        ..Default::default()
    };
    s.reaped = sample::processes(&located, &mut s.procs, &mut s.threads);
    s.kernel = kernel::threads();
    s.t = t0.elapsed().as_secs_f64();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_a_short_run_at_both_ends_and_every_interval() {
        let r = Recorder::start(Watch {
            chain: Chain::default(),
            serving: Vec::new(),
            campaign: Vec::new(),
            kernel: KernelWork::default(),
            arc: false,
            block: Source::Off,
            trace_max_rate: 0,
            interval: Duration::from_millis(100),
        });
        std::thread::sleep(Duration::from_millis(350));
        let rec = r.stop();
        assert!(
            (4..=7).contains(&rec.samples.len()),
            "{}",
            rec.samples.len()
        );
        // From the first sample, which a loaded host may start late, to
        // the last, at stop.
        assert!((0.2..1.0).contains(&rec.elapsed_s()), "{}", rec.elapsed_s());
        assert!(rec.samples.windows(2).all(|w| w[0].t <= w[1].t));
        // CPU time comes in clock ticks (10 ms): a sampler that took less
        // over this short run may show none.
        assert!(rec.sampler_cpu_s >= 0.0 && rec.sampler_cpu_s < 0.35);
        assert!(rec.cores >= 1);
    }
}
