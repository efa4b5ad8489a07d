//! Whose the host's CPU was during a run. /proc/stat charges every clock
//! tick of every core to the task it interrupted; what the campaign's own
//! tasks used is the campaign's, the rest is the kernel's or another
//! process's:
//! - the campaign's: storlab, the programs it runs (and what those that
//!   ended between two samples used, from storlab's reaped ticks), the
//!   processes serving this target and every other target of the campaign
//!   (their daemons' children with them) and the kernel threads working
//!   for the campaign's devices ([`super::kernel`]), each by its label;
//! - the kernel's: interrupts (irq and softirq, ksoftirqd among them) and
//!   the kernel threads working for no device of the campaign (kblockd,
//!   events, RCU, reclaim);
//! - others': the busy ticks left, other processes'.
//!
//! The tick that lands on a task is a sample of what the cores did, so a
//! short run's shares are estimates with few samples: [`Accounts::ticks`]
//! says how many, for the checks to judge them with.

use std::collections::BTreeMap;

use super::kernel::runs_interrupts;
use super::procs::{EXITED, KERNEL};
use super::sample::{HostCpu, Sample};
use super::sampler::Recording;

/// A run's CPU, in clock ticks over all cores.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accounts {
    /// Per label, the campaign's ticks over the run.
    pub ours: BTreeMap<String, u64>,
    /// Per label, its ticks in each interval between two samples.
    pub per_interval: BTreeMap<String, Vec<u64>>,
    /// Kernel threads working for no device of the campaign.
    pub kernel: u64,
    /// The host's counters at the first sample and the last.
    pub host: Option<(HostCpu, HostCpu)>,
}

impl Accounts {
    pub fn of(rec: &Recording) -> Accounts {
        let mut a = Accounts {
            ours: processes(rec),
            ..Accounts::default()
        };
        let windows = rec.samples.len().saturating_sub(1);
        // Kernel threads' and ended children's ticks, which no process's
        // span holds.
        let mut extra: BTreeMap<String, u64> = BTreeMap::new();
        for (i, w) in rec.samples.windows(2).enumerate() {
            let mut add = |label: &str, ticks: u64, apart: bool| {
                let v =
                    (a.per_interval.entry(label.to_string())).or_insert_with(|| vec![0; windows]);
                v[i] += ticks;
                if apart {
                    *extra.entry(label.to_string()).or_insert(0) += ticks;
                }
            };
            for (label, ticks) in interval_processes(rec, &w[0], &w[1]) {
                add(&label, ticks, false);
            }
            let (for_us, other) = kernel_threads(rec, &w[0], &w[1]);
            add(KERNEL, for_us, true);
            a.kernel += other;
            let (label, ticks) = exited(&w[0], &w[1]);
            add(&label, ticks, true);
        }
        for (label, ticks) in extra.into_iter().filter(|(_, t)| *t > 0) {
            *a.ours.entry(label).or_insert(0) += ticks;
        }
        a.per_interval.retain(|l, _| a.ours.contains_key(l));
        let cpus: Vec<HostCpu> = rec.samples.iter().filter_map(|s| s.cpu).collect();
        a.host = cpus.first().copied().zip(cpus.last().copied());
        a
    }

    /// Every tick of every core over the run.
    pub fn ticks(&self) -> u64 {
        self.host
            .map_or(0, |(a, b)| b.total.saturating_sub(a.total))
    }

    /// Interrupts' ticks over the run.
    pub fn interrupts(&self) -> u64 {
        self.host.map_or(0, |(a, b)| b.irq.saturating_sub(a.irq))
    }

    /// Other processes' ticks: the busy ones neither the campaign's nor
    /// the kernel's.
    pub fn others(&self) -> u64 {
        let Some((a, b)) = self.host else {
            return 0;
        };
        let ours: u64 = self.ours.values().sum();
        (b.busy.saturating_sub(a.busy))
            .saturating_sub(self.interrupts())
            .saturating_sub(self.kernel)
            .saturating_sub(ours)
    }
}

/// Each label's CPU ticks over the run: per pid, its last figure less its
/// first (or all of it, for a process born during the run).
fn processes(rec: &Recording) -> BTreeMap<String, u64> {
    let mut span: BTreeMap<(String, u32), (u64, u64, u64)> = BTreeMap::new();
    for s in &rec.samples {
        for p in &s.procs {
            let e =
                span.entry((p.label.clone(), p.pid))
                    .or_insert((p.ticks, p.ticks, p.start_ticks));
            e.1 = p.ticks.max(e.1);
        }
    }
    let mut out = BTreeMap::new();
    for ((label, _), (first, last, start)) in span {
        let base = if start >= rec.start_ticks { 0 } else { first };
        *out.entry(label).or_insert(0) += last.saturating_sub(base);
    }
    out
}

/// Each label's ticks between two samples (a pid new in `b` counted whole
/// if it was born during the run).
fn interval_processes(rec: &Recording, a: &Sample, b: &Sample) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for p in &b.procs {
        let before = a
            .procs
            .iter()
            .find(|q| q.pid == p.pid && q.label == p.label);
        let d = match before {
            Some(q) => p.ticks.saturating_sub(q.ticks),
            None if p.start_ticks >= rec.start_ticks => p.ticks,
            None => 0,
        };
        *out.entry(p.label.clone()).or_insert(0) += d;
    }
    out
}

/// The kernel threads' ticks between two samples: those working for the
/// campaign's devices (named for one at either end), and the others.
/// ksoftirqd is left out: its ticks are interrupts'.
fn kernel_threads(rec: &Recording, a: &Sample, b: &Sample) -> (u64, u64) {
    let (mut ours, mut other) = (0, 0);
    for k in b.kernel.iter().filter(|k| !runs_interrupts(&k.name)) {
        let before = a.kernel.iter().find(|x| x.pid == k.pid);
        let d = match before {
            Some(x) => k.ticks.saturating_sub(x.ticks),
            None if k.start_ticks >= rec.start_ticks => k.ticks,
            None => 0,
        };
        if rec.kernel.does(&k.name) || before.is_some_and(|x| rec.kernel.does(&x.name)) {
            ours += d;
        } else {
            other += d;
        }
    }
    (ours, other)
}

/// What storlab's children that ended between two samples used after the
/// first (all of it for one born after it): storlab's reaped ticks grew by
/// their whole CPU, of which what they had used at `a` is counted already.
/// Labelled as the children that ended when they share one label (a
/// `command`'s shell, pgbench), [`EXITED`] otherwise.
fn exited(a: &Sample, b: &Sample) -> (String, u64) {
    let gone: Vec<_> = (a.procs.iter())
        .filter(|p| p.child && !b.procs.iter().any(|q| q.child && q.pid == p.pid))
        .collect();
    let seen: u64 = gone.iter().map(|p| p.ticks).sum();
    let ticks = b.reaped.saturating_sub(a.reaped).saturating_sub(seen);
    let label = match gone.split_first() {
        Some((first, rest)) if rest.iter().all(|p| p.label == first.label) => first.label.clone(),
        _ => EXITED.to_string(),
    };
    (label, ticks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::telemetry::kernel::{KernelThread, KernelWork};
    use crate::measure::telemetry::sample::ProcCpu;

    fn kt(pid: u32, name: &str, ticks: u64) -> KernelThread {
        KernelThread {
            pid,
            name: name.into(),
            ticks,
            start_ticks: 0,
        }
    }

    fn p(label: &str, pid: u32, ticks: u64, child: bool) -> ProcCpu {
        ProcCpu {
            label: label.into(),
            pid,
            ticks,
            start_ticks: 2000,
            child,
        }
    }

    /// Two seconds on two cores at 100 Hz: the host busy 150 ticks a
    /// second, 10 of them interrupts; storlab 20 a second; a shell it
    /// runs used 30 by the middle sample and ended before the last with
    /// 50 (storlab's reaped ticks); a loop0 worker 10 then 15 ticks, a
    /// kblockd worker 5 a second, ksoftirqd 8 a second.
    fn recording() -> Recording {
        let sample = |k: u64, procs: Vec<ProcCpu>, reaped: u64, names: [&str; 2]| Sample {
            t: k as f64,
            cpu: Some(HostCpu {
                busy: 150 * k,
                irq: 10 * k,
                iowait: 0,
                steal: 0,
                total: 200 * k,
            }),
            procs: [vec![p("storlab", 1, 20 * k, false)], procs].concat(),
            reaped,
            kernel: vec![
                kt(100, names[0], [0, 10, 25][k as usize]),
                kt(101, names[1], 5 * k),
                kt(102, "ksoftirqd/0", 8 * k),
            ],
            ..Default::default()
        };
        Recording {
            samples: vec![
                sample(
                    0,
                    vec![p("sh", 10, 0, true)],
                    0,
                    ["kworker/u8:1-loop0", "kworker/1:2H-kblockd"],
                ),
                sample(
                    1,
                    vec![p("sh", 10, 30, true)],
                    0,
                    ["kworker/u8:1+loop0", "kworker/1:2H-kblockd"],
                ),
                // The loop worker did other work last, but loop0's before.
                sample(
                    2,
                    vec![],
                    50,
                    ["kworker/u8:1-events", "kworker/1:2H-kblockd"],
                ),
            ],
            start_ticks: 1000,
            ticks_per_s: 100,
            cores: 2,
            kernel: KernelWork::of_names(["loop0", "flush-7:0"]),
            ..Default::default()
        }
    }

    #[test]
    fn the_campaigns_kernel_threads_and_ended_children_are_its_own() {
        let a = Accounts::of(&recording());
        let ours: Vec<(&str, u64)> = a.ours.iter().map(|(l, t)| (l.as_str(), *t)).collect();
        // The shell whole (30 seen, 20 more reaped), the loop0 worker's 25.
        assert_eq!(ours, [(KERNEL, 25), ("sh", 50), ("storlab", 40)]);
        assert_eq!(a.per_interval["sh"], [30, 20]);
        assert_eq!(a.per_interval[KERNEL], [10, 15]);
        assert_eq!(a.kernel, 10, "kblockd; ksoftirqd is the interrupts'");
        assert_eq!((a.ticks(), a.interrupts()), (400, 20));
        // 300 busy, less 20 interrupts, 10 kernel, 115 ours.
        assert_eq!(a.others(), 155);
    }

    #[test]
    fn children_that_ended_unseen_are_counted_apart() {
        let mut r = recording();
        r.samples[1].reaped = 12;
        r.samples[2].reaped = 62;
        r.samples[2].procs.push(p("fio", 11, 5, true));
        r.samples[1].procs.push(p("fio", 11, 0, true));
        r.samples[2].procs.retain(|x| x.label != "fio");
        let a = Accounts::of(&r);
        // 12 reaped before the middle sample from children never seen;
        // then the shell and fio ended together: their 20 + 0 more.
        assert_eq!(a.per_interval[EXITED], [12, 20]);
        assert_eq!(a.ours[EXITED], 32);
        assert_eq!(a.ours["sh"], 30);
    }
}
