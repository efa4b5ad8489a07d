//! A recording turned into a run's figures: per device (labelled
//! `device`), the host's CPU, each process's CPU (labelled `process`),
//! memory, pressure and the ARC over the whole run, and per-second series
//! of the same. Device figures without a label are the sum over the
//! chain's bottom devices, the physical ones. Then the figures derived
//! from the workload's own: device read ratio, write amplification,
//! device bytes per transaction. Pure functions of their inputs.

use std::collections::BTreeMap;

use super::blocktrace;
use super::chain::Device;
use super::cpu::Accounts;
use super::sample::{Disk, Sample};
use super::sampler::Recording;
use crate::fact::catalogue as facts;
use crate::measure::{Hist, Metric, RunOutput, Series};
use crate::metric::catalogue as m;
use crate::metric::labels::{DEVICE, PROCESS};
use crate::metric::{Labels, MetricDef};

const SECTOR: f64 = 512.0;

/// A run's telemetry as metrics, series, histograms and facts.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub metrics: Vec<Metric>,
    pub series: Vec<Series>,
    pub histograms: Vec<Hist>,
    pub facts: Vec<(String, String)>,
}

impl Figures {
    /// Adds these figures to a run's output.
    pub fn add_to(self, out: &mut RunOutput) {
        out.metrics.extend(self.metrics);
        out.series.extend(self.series);
        out.histograms.extend(self.histograms);
        out.facts.extend(self.facts);
    }
}

/// The figures of a recording.
pub fn figures(rec: &Recording) -> Figures {
    let mut f = Figures::default();
    let (Some(first), Some(last)) = (rec.samples.first(), rec.samples.last()) else {
        return f;
    };
    let elapsed = last.t - first.t;
    if rec.samples.len() < 2 || elapsed <= 0.0 {
        return f;
    }
    devices(rec, elapsed, &mut f);
    let cpu = Accounts::of(rec);
    host(rec, &cpu, &mut f);
    processes(rec, &cpu, elapsed, &mut f);
    memory(rec, &mut f);
    pressure(first, last, elapsed, &mut f);
    if let Some((a, b)) = rec.arc {
        f.metrics
            .push(m::ARC_HITS.value(b.hits.saturating_sub(a.hits) as f64));
        f.metrics
            .push(m::ARC_MISSES.value(b.misses.saturating_sub(a.misses) as f64));
        f.metrics.push(m::ARC_MAX_BYTES.value(b.c_max as f64));
    }
    f.metrics
        .push(m::TELEMETRY_CPU_PCT.value(100.0 * rec.sampler_cpu_s / elapsed));
    if !rec.chain.is_empty() {
        f.facts
            .push((facts::TELEMETRY_DEVICES.name.into(), rec.chain.describe()));
    }
    for (label, why) in &rec.serving {
        f.facts.push((
            format!("{}{label}", facts::TELEMETRY_PROCESS.name),
            why.clone(),
        ));
    }
    let counts = run_counts(rec);
    let block = match missed_by_trace(rec) {
        Some(why) => blocktrace::figures::figures(
            &blocktrace::Outcome::Failed(why),
            &rec.chain,
            &counts,
            interval(rec),
        ),
        None => blocktrace::figures::figures(&rec.block, &rec.chain, &counts, interval(rec)),
    };
    f.metrics.extend(block.metrics);
    f.series.extend(block.series);
    f.histograms.extend(block.histograms);
    f.facts.extend(block.facts);
    f
}

/// Data a device may move between the run's marks before a trace that
/// counted none of its requests is called wrong (a few metadata blocks are
/// not evidence).
const MISSED: f64 = (1u64 << 20) as f64;

/// Each device's diskstats counts over the run (first sample to last).
fn run_counts(rec: &Recording) -> BTreeMap<(u32, u32), Disk> {
    let (Some(first), Some(last)) = (rec.samples.first(), rec.samples.last()) else {
        return BTreeMap::new();
    };
    (rec.chain.devices.iter())
        .filter_map(|d| Some(((d.major, d.minor), disk_delta(first, last, d)?)))
        .collect()
}

/// Why the run's block trace cannot be believed: it timed no request on
/// any device of the chain while /proc/diskstats saw one move data over
/// the same samples (the tracer's marks are taken at them). Either the
/// tracer missed the run's requests (probes that fired for the wrong hook,
/// maps read at the wrong moment) or the device is bio-based (md, zram,
/// brd), whose I/O never passes the request layer the tracer watches. Its
/// figures would read "no device requests: the page cache"; refused, the
/// run's device figures are diskstats' alone and its `block_trace` fact
/// says why, so checks and attribution never see a trace that diskstats
/// contradicts. A chain where some device was traced keeps its trace (a
/// bio-based device above traced members).
fn missed_by_trace(rec: &Recording) -> Option<String> {
    let blocktrace::Outcome::Traced(trace, _) = &rec.block else {
        return None;
    };
    let (first, last) = (rec.samples.first()?, rec.samples.last()?);
    let ours: Vec<u64> = (rec.chain.devices.iter())
        .map(|d| blocktrace::script::kernel_dev(d.major, d.minor))
        .collect();
    let traced: u64 = (trace.total.timed().iter())
        .filter(|((dev, _), _)| ours.contains(dev))
        .map(|(_, n)| n)
        .sum();
    if traced > 0 {
        return None;
    }
    rec.chain.devices.iter().find_map(|d| {
        let delta = disk_delta(first, last, d)?;
        let moved = (delta.read_sectors + delta.write_sectors) as f64 * SECTOR;
        // Requests enough that the device's sample should hold some.
        let shift = blocktrace::sampling::current(d.major, d.minor);
        let expected = (delta.reads + delta.writes) >> shift;
        (moved >= MISSED && expected >= 4).then(|| {
            format!(
                "the trace timed no request on {} while /proc/diskstats counted it moving {:.1} MiB in {} requests over the same samples: the trace missed the run's requests, or the device is not request-based (md, zram, brd)",
                d.name,
                moved / MISSED,
                delta.reads + delta.writes
            )
        })
    })
}

/// The difference of a device's counters between two samples.
pub fn disk_delta(a: &Sample, b: &Sample, d: &Device) -> Option<Disk> {
    let (x, y) = (
        a.disks.get(&(d.major, d.minor))?,
        b.disks.get(&(d.major, d.minor))?,
    );
    Some(Disk {
        reads: y.reads.saturating_sub(x.reads),
        writes: y.writes.saturating_sub(x.writes),
        read_sectors: y.read_sectors.saturating_sub(x.read_sectors),
        write_sectors: y.write_sectors.saturating_sub(x.write_sectors),
        read_ms: y.read_ms.saturating_sub(x.read_ms),
        write_ms: y.write_ms.saturating_sub(x.write_ms),
        io_ticks_ms: y.io_ticks_ms.saturating_sub(x.io_ticks_ms),
        queue_ms: y.queue_ms.saturating_sub(x.queue_ms),
        flushes: y.flushes.zip(x.flushes).map(|(b, a)| b.saturating_sub(a)),
        discards: y.discards.zip(x.discards).map(|(b, a)| b.saturating_sub(a)),
        discard_sectors: (y.discard_sectors)
            .zip(x.discard_sectors)
            .map(|(b, a)| b.saturating_sub(a)),
    })
}

fn devices(rec: &Recording, elapsed: f64, f: &mut Figures) {
    let (first, last) = (&rec.samples[0], &rec.samples[rec.samples.len() - 1]);
    let (mut bottom_read, mut bottom_write, mut bottom_reads, mut bottom_writes) =
        (0.0, 0.0, 0.0, 0.0);
    let mut any_bottom = false;
    for d in &rec.chain.devices {
        let Some(delta) = disk_delta(first, last, d) else {
            continue;
        };
        let l = Labels::new().with(&DEVICE, &d.name);
        let (read, write) = (
            delta.read_sectors as f64 * SECTOR,
            delta.write_sectors as f64 * SECTOR,
        );
        let ops = delta.reads + delta.writes;
        f.metrics.extend([
            m::DEV_READ_BYTES.labelled(l.clone(), read),
            m::DEV_WRITE_BYTES.labelled(l.clone(), write),
            m::DEV_READS.labelled(l.clone(), delta.reads as f64),
            m::DEV_WRITES.labelled(l.clone(), delta.writes as f64),
            m::DEV_READ_BW_BYTES_PER_S.labelled(l.clone(), read / elapsed),
            m::DEV_WRITE_BW_BYTES_PER_S.labelled(l.clone(), write / elapsed),
            m::DEV_UTIL_PCT.labelled(
                l.clone(),
                (delta.io_ticks_ms as f64 / 10.0 / elapsed).min(100.0),
            ),
            m::DEV_QUEUE_DEPTH.labelled(l.clone(), delta.queue_ms as f64 / 1000.0 / elapsed),
        ]);
        if let Some(flushes) = delta.flushes {
            f.metrics
                .push(m::DEV_FLUSHES.labelled(l.clone(), flushes as f64));
        }
        if ops > 0 {
            let await_ns = (delta.read_ms + delta.write_ms) as f64 * 1e6 / ops as f64;
            f.metrics
                .push(m::DEV_AWAIT_NS.labelled(l.clone(), await_ns));
        }
        if d.bottom {
            any_bottom = true;
            bottom_read += read;
            bottom_write += write;
            bottom_reads += delta.reads as f64;
            bottom_writes += delta.writes as f64;
        }
        let per_second = |g: fn(&Disk) -> u64| -> Vec<f64> {
            rec.samples
                .windows(2)
                .map(|w| {
                    let dt = (w[1].t - w[0].t).max(1e-9);
                    disk_delta(&w[0], &w[1], d).map_or(0.0, |x| g(&x) as f64 / dt)
                })
                .collect()
        };
        let interval = interval(rec);
        let read_s: Vec<f64> = per_second(|x| x.read_sectors)
            .iter()
            .map(|v| v * SECTOR)
            .collect();
        let write_s: Vec<f64> = per_second(|x| x.write_sectors)
            .iter()
            .map(|v| v * SECTOR)
            .collect();
        let util_s: Vec<f64> = per_second(|x| x.io_ticks_ms)
            .iter()
            .map(|v| (v / 10.0).min(100.0))
            .collect();
        f.series.push(series(
            &m::DEV_READ_BW_BYTES_PER_S,
            l.clone(),
            interval,
            read_s,
        ));
        f.series.push(series(
            &m::DEV_WRITE_BW_BYTES_PER_S,
            l.clone(),
            interval,
            write_s,
        ));
        f.series.push(series(&m::DEV_UTIL_PCT, l, interval, util_s));
    }
    if any_bottom {
        f.metrics.extend([
            m::DEV_READ_BYTES.value(bottom_read),
            m::DEV_WRITE_BYTES.value(bottom_write),
            m::DEV_READS.value(bottom_reads),
            m::DEV_WRITES.value(bottom_writes),
            m::DEV_READ_BW_BYTES_PER_S.value(bottom_read / elapsed),
            m::DEV_WRITE_BW_BYTES_PER_S.value(bottom_write / elapsed),
        ]);
    }
}

/// The sampling interval: the first whole interval's length.
fn interval(rec: &Recording) -> f64 {
    match rec.samples.len() {
        0 | 1 => 1.0,
        2 => rec.samples[1].t.max(1e-3),
        _ => (rec.samples[1].t - rec.samples[0].t).max(1e-3),
    }
}

fn series(def: &'static MetricDef, labels: Labels, interval_s: f64, values: Vec<f64>) -> Series {
    Series {
        def,
        labels,
        interval_s,
        values,
    }
}

fn host(rec: &Recording, cpu: &Accounts, f: &mut Figures) {
    let cpus: Vec<_> = rec.samples.iter().map(|s| s.cpu).collect();
    let Some((a, b)) = cpu.host else {
        return;
    };
    let total = cpu.ticks().max(1) as f64;
    let pct = |x: u64, y: u64| 100.0 * y.saturating_sub(x) as f64 / total;
    f.metrics.extend([
        m::CPU_BUSY_PCT.value(pct(a.busy, b.busy)),
        m::CPU_IOWAIT_PCT.value(pct(a.iowait, b.iowait)),
        m::CPU_STEAL_PCT.value(pct(a.steal, b.steal)),
        m::CPU_OTHERS_PCT.value(100.0 * cpu.others() as f64 / total),
        m::CPU_KERNEL_PCT.value(100.0 * (cpu.kernel + cpu.interrupts()) as f64 / total),
    ]);
    let per = |g: fn(&super::sample::HostCpu) -> u64| -> Vec<f64> {
        cpus.windows(2)
            .map(|w| match (w[0], w[1]) {
                (Some(x), Some(y)) => {
                    100.0 * g(&y).saturating_sub(g(&x)) as f64
                        / y.total.saturating_sub(x.total).max(1) as f64
                }
                _ => 0.0,
            })
            .collect()
    };
    let iv = interval(rec);
    f.series
        .push(series(&m::CPU_BUSY_PCT, Labels::new(), iv, per(|c| c.busy)));
    f.series.push(series(
        &m::CPU_IOWAIT_PCT,
        Labels::new(),
        iv,
        per(|c| c.iowait),
    ));
}

fn processes(rec: &Recording, cpu: &Accounts, elapsed: f64, f: &mut Figures) {
    let hz = rec.ticks_per_s.max(1) as f64;
    let iv = interval(rec);
    for (label, ticks) in &cpu.ours {
        let l = Labels::new().with(&PROCESS, label);
        let s = *ticks as f64 / hz;
        f.metrics.push(m::PROC_CPU_S.labelled(l.clone(), s));
        f.metrics
            .push(m::PROC_CPU_PCT.labelled(l.clone(), 100.0 * s / elapsed));
        let values = (cpu.per_interval.get(label).into_iter().flatten())
            .zip(rec.samples.windows(2))
            .map(|(t, w)| 100.0 * *t as f64 / hz / (w[1].t - w[0].t).max(1e-9))
            .collect();
        f.series.push(series(&m::PROC_CPU_PCT, l, iv, values));
    }
    for (label, (pct, wanted)) in busiest_threads(rec) {
        let l = Labels::new().with(&PROCESS, &label);
        f.metrics
            .push(m::PROC_BUSIEST_THREAD_PCT.labelled(l.clone(), pct));
        if let Some(w) = wanted {
            f.metrics
                .push(m::PROC_BUSIEST_THREAD_WANTED_PCT.labelled(l, w));
        }
    }
}

/// Per label, its busiest thread's CPU in % of a core over the stretch
/// each thread was seen (at least 0.9 s of it); and the largest share of
/// that stretch a thread ran or waited on a run queue for a CPU, where
/// the kernel says how long it waited.
fn busiest_threads(rec: &Recording) -> BTreeMap<String, (f64, Option<f64>)> {
    let hz = rec.ticks_per_s.max(1) as f64;
    type Seen = (f64, u64, Option<u64>, f64, u64, Option<u64>);
    let mut seen: BTreeMap<(String, u32), Seen> = BTreeMap::new();
    for s in &rec.samples {
        for t in &s.threads {
            let e = seen.entry((t.label.clone(), t.tid)).or_insert((
                s.t,
                t.ticks,
                t.waited_ns,
                s.t,
                t.ticks,
                t.waited_ns,
            ));
            e.3 = s.t;
            e.4 = t.ticks;
            e.5 = t.waited_ns;
        }
    }
    let mut out: BTreeMap<String, (f64, Option<f64>)> = BTreeMap::new();
    for ((label, _), (t0, c0, w0, t1, c1, w1)) in seen {
        if t1 - t0 < 0.9 {
            continue;
        }
        let ran = c1.saturating_sub(c0) as f64 / hz;
        let pct = (100.0 * ran / (t1 - t0)).min(100.0);
        let wanted = w0.zip(w1).map(|(a, b)| {
            let waited = b.saturating_sub(a) as f64 / 1e9;
            (100.0 * (ran + waited) / (t1 - t0)).min(100.0)
        });
        let e = out.entry(label).or_insert((0.0, None));
        e.0 = e.0.max(pct);
        if let Some(w) = wanted {
            e.1 = Some(e.1.map_or(w, |x: f64| x.max(w)));
        }
    }
    out
}

fn memory(rec: &Recording, f: &mut Figures) {
    let mem: Vec<_> = rec.samples.iter().filter_map(|s| s.mem).collect();
    let (Some(a), Some(b)) = (mem.first(), mem.last()) else {
        return;
    };
    let max = |g: fn(&super::sample::Mem) -> u64| mem.iter().map(g).max().unwrap_or(0) as f64;
    f.metrics.extend([
        m::MEM_PAGE_CACHE_MAX_BYTES.value(max(|x| x.cached)),
        m::MEM_DIRTY_MAX_BYTES.value(max(|x| x.dirty)),
        m::MEM_WRITEBACK_MAX_BYTES.value(max(|x| x.writeback)),
        m::MEM_DIRTY_START_BYTES.value((a.dirty + a.writeback) as f64),
        m::MEM_DIRTY_END_BYTES.value((b.dirty + b.writeback) as f64),
        m::MEM_AVAILABLE_BYTES.value(a.available as f64),
    ]);
    let iv = interval(rec);
    let at_ends: Vec<_> = mem.iter().skip(1).collect();
    f.series.push(series(
        &m::MEM_DIRTY_BYTES,
        Labels::new(),
        iv,
        at_ends.iter().map(|x| x.dirty as f64).collect(),
    ));
    f.series.push(series(
        &m::MEM_WRITEBACK_BYTES,
        Labels::new(),
        iv,
        at_ends.iter().map(|x| x.writeback as f64).collect(),
    ));
}

fn pressure(first: &Sample, last: &Sample, elapsed: f64, f: &mut Figures) {
    let (Some(a), Some(b)) = (first.psi, last.psi) else {
        return;
    };
    let pct = |x: u64, y: u64| (100.0 * y.saturating_sub(x) as f64 / 1e6 / elapsed).min(100.0);
    f.metrics.extend([
        m::PSI_IO_SOME_AVG_PCT.value(pct(a.io_some_us, b.io_some_us)),
        m::PSI_IO_FULL_AVG_PCT.value(pct(a.io_full_us, b.io_full_us)),
        m::PSI_MEMORY_SOME_AVG_PCT.value(pct(a.memory_some_us, b.memory_some_us)),
        m::PSI_MEMORY_FULL_AVG_PCT.value(pct(a.memory_full_us, b.memory_full_us)),
        m::PSI_CPU_SOME_AVG_PCT.value(pct(a.cpu_some_us, b.cpu_some_us)),
    ]);
}

/// The figures that set the device's against the workload's: device read
/// ratio, write amplification and device bytes written per transaction
/// (overall from the bottom devices, and per device).
pub fn derived(out: &RunOutput) -> Vec<Metric> {
    let mut d = Vec::new();
    let read = out.metric(&m::READ_BYTES).filter(|v| *v > 0.0);
    let written = out.metric(&m::WRITE_BYTES).filter(|v| *v > 0.0);
    let tx = out.metric(&m::TRANSACTIONS).filter(|v| *v > 0.0);
    for x in &out.metrics {
        let is_dev = |def: &MetricDef| {
            std::ptr::eq(x.def, def)
                && (x.labels.is_empty()
                    || (x.labels.get(&DEVICE).is_some() && x.labels.iter().count() == 1))
        };
        if let (true, Some(r)) = (is_dev(&m::DEV_READ_BYTES), read) {
            d.push(m::DEV_READ_RATIO.labelled(x.labels.clone(), x.value / r));
        }
        if let (true, Some(w)) = (is_dev(&m::DEV_WRITE_BYTES), written) {
            d.push(m::WRITE_AMPLIFICATION.labelled(x.labels.clone(), x.value / w));
        }
        // Per device too: the device a target's filesystem sits on (a loop
        // device) says what the configuration wrote per transaction, while
        // the disk under it may hold those writes in the page cache of the
        // image's filesystem until after the run (0 B/tx during it).
        if let (true, Some(t)) = (is_dev(&m::DEV_WRITE_BYTES), tx) {
            d.push(m::DEV_WRITE_BYTES_PER_TX.labelled(x.labels.clone(), x.value / t));
        }
    }
    d
}

#[cfg(test)]
mod tests;
