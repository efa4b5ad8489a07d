//! A run's trace as catalogue figures: per device (`device`) and
//! operation (`op`) the request-time histogram (`dev_lat`, of the timed
//! sample, each weighed as the requests it stands for) with its metrics,
//! the requests and their mean size (/proc/diskstats' exact counts over
//! the same samples);
//! per device flushes, FUA writes, requests in flight and whether it has a
//! write cache; per-second series of the request-time percentiles and of
//! requests in flight; and the `block_trace` fact saying how it was
//! measured. Pure functions of the trace and the chain.

use std::collections::BTreeMap;

use super::buckets::MAX_RELATIVE_ERROR;
use super::sampling::rank_interval;
use super::script::{kernel_dev, OPS};
use super::trace::{busy, histograms, shifts, Trace, WINDOW_PERCENTILES};
use super::{Cache, Outcome};
use crate::measure::latency::latency_metrics;
use crate::measure::telemetry::chain::Chain;
use crate::measure::telemetry::sample::Disk;
use crate::measure::{Hist, RunOutput, Series};
use crate::metric::catalogue as m;
use crate::metric::labels::{DEVICE, OP};
use crate::metric::Labels;

/// The fact saying how device latency was measured.
pub const FACT: &str = crate::fact::catalogue::BLOCK_TRACE.name;

/// Operations every traced device gets a request count of, 0 included:
/// "no read requests" is a figure, not a gap.
const ALWAYS: [u8; 3] = [0, 1, 2];

/// The figures of `outcome` for `chain`, whose devices counted `counts`
/// over the run (/proc/diskstats, by (major, minor)), with series at
/// `interval_s`.
pub fn figures(
    outcome: &Outcome,
    chain: &Chain,
    counts: &BTreeMap<(u32, u32), Disk>,
    interval_s: f64,
) -> RunOutput {
    let mut out = RunOutput::default();
    match outcome {
        Outcome::Off(None) => {}
        Outcome::Off(Some(why)) => out.facts.push((FACT.into(), format!("off ({why}): device latency is /proc/diskstats' average per request (dev_await_ns)"))),
        Outcome::Failed(why) => out.facts.push((FACT.into(), format!("not traced: {why}; device latency is /proc/diskstats' average per request (dev_await_ns)"))),
        Outcome::Traced(t, caches) => traced(t, caches, chain, counts, interval_s, &mut out),
    }
    out
}

fn name_of(chain: &Chain, dev: u64) -> Option<&str> {
    chain
        .devices
        .iter()
        .find(|d| kernel_dev(d.major, d.minor) == dev)
        .map(|d| d.name.as_str())
}

fn labels(device: &str, op: u8) -> Labels {
    Labels::new()
        .with(&DEVICE, device)
        .with(&OP, OPS[usize::from(op).min(OPS.len() - 1)])
}

/// Per operation (its number in [`OPS`]), a device's requests and bytes
/// over the run from its diskstats counts: reads, writes, flushes and
/// discards, each where the kernel counts it.
fn requests(d: &Disk) -> Vec<(u8, u64, u64)> {
    let mut out = vec![
        (0, d.reads, d.read_sectors * 512),
        (1, d.writes, d.write_sectors * 512),
    ];
    if let Some(n) = d.flushes {
        out.push((2, n, 0));
    }
    if let Some(n) = d.discards {
        out.push((3, n, d.discard_sectors.unwrap_or(0) * 512));
    }
    out
}

fn traced(
    t: &Trace,
    caches: &[Cache],
    chain: &Chain,
    counts: &BTreeMap<(u32, u32), Disk>,
    interval_s: f64,
    out: &mut RunOutput,
) {
    let total = &t.total;
    for (def, buckets) in [(&m::DEV_LAT, &total.latency)] {
        for ((dev, op), h) in histograms(buckets) {
            let Some(name) = name_of(chain, dev) else {
                continue;
            };
            let l = labels(name, op);
            out.metrics.extend(latency_metrics(def, &l, &h));
            out.histograms.push(Hist {
                def,
                labels: l,
                hist: h,
            });
        }
    }
    let busy = busy(&total.latency);
    let timed = total.timed();
    let mut sampled = Vec::new();
    for d in &chain.devices {
        let dev = kernel_dev(d.major, d.minor);
        let name = d.name.as_str();
        let device = Labels::new().with(&DEVICE, name);
        let disk = counts.get(&(d.major, d.minor));
        let mut all = disk.map(requests).unwrap_or_default();
        for op in ALWAYS {
            if !all.iter().any(|r| r.0 == op) {
                all.push((op, 0, 0));
            }
        }
        all.sort_unstable();
        for (op, n, bytes) in all {
            out.metrics
                .push(m::DEV_REQUESTS.labelled(labels(name, op), n as f64));
            if n > 0 && bytes > 0 {
                out.metrics
                    .push(m::DEV_REQUEST_BYTES.labelled(labels(name, op), bytes as f64 / n as f64));
            }
        }
        let count =
            |map: &std::collections::BTreeMap<u64, u64>| map.get(&dev).copied().unwrap_or(0) as f64;
        out.metrics.extend([
            m::DEV_FLUSH_REQUESTS.labelled(device.clone(), count(&total.flushes)),
            m::DEV_FUA_REQUESTS.labelled(device.clone(), count(&total.fua)),
        ]);
        if t.seconds > 0.0 {
            let inflight = busy.get(&dev).copied().unwrap_or(0.0) / 1e9 / t.seconds;
            out.metrics
                .push(m::DEV_INFLIGHT.labelled(device.clone(), inflight));
        }
        if let Some(c) = caches
            .iter()
            .find(|c| (c.major, c.minor) == (d.major, d.minor))
        {
            let flag = if c.write_back { 1.0 } else { 0.0 };
            out.metrics
                .push(m::DEV_WRITE_CACHE.labelled(device.clone(), flag));
        }
        let n: u64 = timed
            .iter()
            .filter(|(k, _)| k.0 == dev)
            .map(|(_, v)| v)
            .sum();
        let at = shifts(&total.latency).remove(&dev).unwrap_or_default();
        if at.iter().any(|&w| w > 0) {
            sampled.push(sample_text(name, n, &at));
        }
        series(t, dev, name, interval_s, out);
    }
    let names: Vec<&str> = chain.devices.iter().map(|d| d.name.as_str()).collect();
    let mut fact = format!(
        "{} on the block tracepoints of {}: request times in log-linear buckets (within {:.1}%)",
        t.version,
        names.join(", "),
        100.0 * MAX_RELATIVE_ERROR
    );
    if sampled.is_empty() {
        fact.push_str(", every request timed");
    } else {
        fact.push_str(&format!(
            "; a sample of the requests timed, each weighed as the requests it stands for, chosen by sector (requests and bytes counted whole by /proc/diskstats): {}",
            sampled.join("; ")
        ));
    }
    out.facts.push((FACT.into(), fact));
}

/// What a device's sample was: its rates, its size and what it leaves of
/// p99 and p99.9 (their ranks' 95% intervals).
fn sample_text(name: &str, n: u64, shifts: &std::collections::BTreeSet<u32>) -> String {
    let rates: Vec<String> = (shifts.iter().rev())
        .map(|&w| match w {
            0 => "every request".to_string(),
            w => format!("1 in {}", 1u64 << w),
        })
        .collect();
    let rank = |q: f64| {
        let (lo, hi) = rank_interval(q, n);
        format!(
            "p{} within p{}–p{}",
            q * 100.0,
            trim(lo * 100.0),
            trim(hi * 100.0)
        )
    };
    format!(
        "{name} {} ({n} timed: {}, {})",
        rates.join(" or "),
        rank(0.99),
        rank(0.999)
    )
}

/// A percentile's rank with the decimals that tell it apart.
fn trim(p: f64) -> String {
    let s = format!("{p:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn series(t: &Trace, dev: u64, name: &str, interval_s: f64, out: &mut RunOutput) {
    let mut ops: Vec<u8> = t
        .windows
        .iter()
        .flat_map(|w| w.latency.keys().filter(|k| k.0 == dev).map(|k| k.1))
        .collect();
    ops.sort_unstable();
    ops.dedup();
    let defs = [&m::DEV_LAT_P50_NS, &m::DEV_LAT_P99_NS, &m::DEV_LAT_P999_NS];
    for op in ops {
        for (i, def) in defs.into_iter().enumerate() {
            debug_assert_eq!(WINDOW_PERCENTILES.len(), defs.len());
            let values = t
                .windows
                .iter()
                .map(|w| w.latency.get(&(dev, op)).map_or(f64::NAN, |(_, p)| p[i]))
                .collect();
            out.series.push(Series {
                def,
                labels: labels(name, op),
                interval_s,
                values,
            });
        }
    }
    let inflight = t
        .windows
        .iter()
        .map(|w| w.busy.get(&dev).copied().unwrap_or(0.0) / 1e9 / w.seconds.max(1e-9))
        .collect();
    out.series.push(Series {
        def: &m::DEV_INFLIGHT,
        labels: Labels::new().with(&DEVICE, name),
        interval_s,
        values: inflight,
    });
}

#[cfg(test)]
mod tests;
