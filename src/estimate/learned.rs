//! Estimates learned from the store's past campaigns on this host. A pair
//! that ran before (the same workload parameters on a target of the same
//! kind and parameters) takes what its recorded runs took on average, the
//! time between runs included; a pair of kinds that ran before takes the model
//! scaled by how those runs compared with it; anything else, the model.
//! Past runs carry the host's load when they ran: an estimate learned on
//! a busy host is a busy host's.

use std::time::Duration;

use super::{model, Basis};
use crate::experiment::sweep::family_of as family;
use crate::experiment::{parse_experiment, Experiment, Remount};
use crate::store::{PastCampaign, PastRun};

/// How many of the newest matching runs a recorded estimate takes.
const RECENT_RUNS: usize = 30;

/// The past campaigns, each with its experiment read again (for the model
/// of its runs), newest first.
pub struct History<'a> {
    past: &'a [PastCampaign],
    parsed: Vec<Option<Experiment>>,
}

/// A target–workload pair's identity across campaigns: kinds and stored
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PairKey {
    target_kind: String,
    target_params: String,
    workload_kind: String,
    workload_params: String,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn secs(s: f64) -> Duration {
    crate::params::units::saturating_secs(s.max(0.0))
}

/// `d × ratio`, saturating: zero for a ratio that is negative or NaN,
/// [`Duration::MAX`] beyond it ([`Duration::mul_f64`] panics on both).
pub fn scaled(d: Duration, ratio: f64) -> Duration {
    secs(d.as_secs_f64() * ratio)
}

impl<'a> History<'a> {
    pub fn new(past: &'a [PastCampaign]) -> History<'a> {
        let parsed = past
            .iter()
            .map(|c| parse_experiment(&c.origin, &c.source).ok())
            .collect();
        History { past, parsed }
    }

    /// The time between one run's end and the next one's start in a
    /// campaign (recording, remounts, cache drops, the block tracer, the
    /// next run's order): its median.
    fn gap(c: &PastCampaign) -> f64 {
        median(c.runs.iter().filter_map(|r| r.gap_s).collect()).unwrap_or(0.0)
    }

    /// One run's own gap, unless it is far beyond the campaign's usual one
    /// (a pause, a suspended host): then the usual one. A fixed cap would
    /// drop what a slow remount or a loaded host really costs each run.
    fn gap_of(r: &PastRun, usual: f64) -> f64 {
        match r.gap_s {
            Some(g) if g <= (3.0 * usual).max(5.0) => g,
            _ => usual,
        }
    }

    fn key_of(exp: &Experiment, t: usize, w: usize) -> PairKey {
        let (tg, wl) = (&exp.targets[t], &exp.workloads[w]);
        PairKey {
            target_kind: tg.kind.name().to_string(),
            target_params: tg.params.to_json().to_string(),
            workload_kind: wl.kind.name().to_string(),
            workload_params: wl.params.to_json().to_string(),
        }
    }

    /// One run of pair (`t`, `w`) of `exp` and where the number comes from;
    /// `pace`: the host's load against the model's reference, for what
    /// only the model gives (a ratio learned from past runs carries the
    /// load they ran at).
    pub fn run(
        &self,
        exp: &Experiment,
        t: usize,
        w: usize,
        root: bool,
        pace: f64,
    ) -> (Duration, Basis) {
        if let Some((took, runs)) = self.recorded(exp, t, w, root) {
            return (took, Basis::Recorded { runs });
        }
        match self.ratio(exp, t, w) {
            Some((ratio, runs)) => (
                scaled(model::run(exp, t, w, root, 1.0), ratio),
                Basis::Scaled { runs, ratio },
            ),
            None => (model::run(exp, t, w, root, pace), Basis::Modelled),
        }
    }

    /// What past runs of the very same pair took on average, adjusted where they
    /// remounted or dropped caches and this plan does not (or the other
    /// way round).
    fn recorded(
        &self,
        exp: &Experiment,
        t: usize,
        w: usize,
        root: bool,
    ) -> Option<(Duration, usize)> {
        let key = Self::key_of(exp, t, w);
        let remounts = exp.plan.remount == Remount::BetweenRuns;
        let drops = exp.plan.drop_caches && root;
        let (remount, drop) = (
            model::remount(exp, t).as_secs_f64(),
            model::drop_caches().as_secs_f64(),
        );
        let mut took = Vec::new();
        for c in self.past {
            let gap = Self::gap(c);
            for r in c.runs.iter().filter(|r| r.ok) {
                let (pt, pw) = (&c.targets[r.target], &c.workloads[r.workload]);
                let same = pt.kind == key.target_kind
                    && pt.params == key.target_params
                    && pw.kind == key.workload_kind
                    && pw.params == key.workload_params;
                if !same {
                    continue;
                }
                let mut s = r.duration_s + Self::gap_of(r, gap);
                s += match (r.remounted, remounts) {
                    (true, false) => -remount,
                    (false, true) => remount,
                    _ => 0.0,
                };
                s += match (r.caches_dropped, drops) {
                    (true, false) => -drop,
                    (false, true) => drop,
                    _ => 0.0,
                };
                took.push(s);
            }
            if took.len() >= RECENT_RUNS {
                break;
            }
        }
        // The mean, not the median: a cluster kept from run to run is made
        // in the first run of a pair, whose time the others do not repeat.
        let n = took.len();
        (n > 0).then(|| (secs(took.iter().sum::<f64>() / n as f64), n))
    }

    /// How past runs of pairs like this one compared with the model:
    /// first those of the same workload and target tables of the same
    /// experiment (other values of a sweep, other sizes), then any of the
    /// same workload kind on the same target kind.
    fn ratio(&self, exp: &Experiment, t: usize, w: usize) -> Option<(f64, usize)> {
        let (tg, wl) = (&exp.targets[t], &exp.workloads[w]);
        let mut close = Vec::new();
        let mut kin = Vec::new();
        for (c, parsed) in self.past.iter().zip(&self.parsed) {
            let Some(past) = parsed else { continue };
            let gap = Self::gap(c);
            let tix = |name: &str| past.targets.iter().position(|x| x.name == name);
            let wix = |name: &str| past.workloads.iter().position(|x| x.name == name);
            for r in c.runs.iter().filter(|r| r.ok) {
                let (pt, pw) = (&c.targets[r.target], &c.workloads[r.workload]);
                if pt.kind != tg.kind.name() || pw.kind != wl.kind.name() {
                    continue;
                }
                let (Some(i), Some(j)) = (tix(&pt.name), wix(&pw.name)) else {
                    continue;
                };
                let m = model::run(past, i, j, r.caches_dropped, 1.0).as_secs_f64();
                if m <= 0.0 {
                    continue;
                }
                let ratio = (r.duration_s + Self::gap_of(r, gap)) / m;
                let same_tables = past.name == exp.name
                    && family(&pw.name) == wl.family
                    && family(&pt.name) == tg.family;
                if same_tables {
                    close.push(ratio);
                } else {
                    kin.push(ratio);
                }
            }
        }
        let pick = if close.is_empty() { kin } else { close };
        let n = pick.len();
        median(pick).map(|r| (r, n))
    }

    /// Provisioning: as recorded for the same targets, else the model
    /// scaled as past campaigns of the same target kinds compared with it.
    pub fn setup(&self, exp: &Experiment, pace: f64) -> (Duration, Basis) {
        self.around(exp, pace, model::setup, |c| c.setup_s)
    }

    pub fn teardown(&self, exp: &Experiment, pace: f64) -> Duration {
        self.around(exp, pace, model::teardown, |c| c.teardown_s).0
    }

    fn around(
        &self,
        exp: &Experiment,
        pace: f64,
        model: fn(&Experiment, f64) -> Duration,
        took: fn(&PastCampaign) -> Option<f64>,
    ) -> (Duration, Basis) {
        let ours = target_set(
            exp.targets
                .iter()
                .map(|t| (t.kind.name().to_string(), t.params.to_json().to_string())),
        );
        let our_kinds: Vec<String> = ours.iter().map(|(k, _)| k.clone()).collect();
        let mut same = Vec::new();
        let mut ratios = Vec::new();
        for (c, parsed) in self.past.iter().zip(&self.parsed) {
            let Some(s) = took(c) else { continue };
            let theirs = target_set(c.targets.iter().map(|t| (t.kind.clone(), t.params.clone())));
            if theirs == ours {
                same.push(s);
                continue;
            }
            let kinds: Vec<String> = theirs.iter().map(|(k, _)| k.clone()).collect();
            if let (true, Some(past)) = (kinds == our_kinds, parsed) {
                let m = model(past, 1.0).as_secs_f64();
                if m > 0.0 {
                    ratios.push(s / m);
                }
            }
        }
        let n = same.len();
        if let Some(m) = median(same) {
            return (secs(m), Basis::Recorded { runs: n });
        }
        let n = ratios.len();
        match median(ratios) {
            Some(r) => (
                scaled(model(exp, 1.0), r),
                Basis::Scaled { runs: n, ratio: r },
            ),
            None => (model(exp, pace), Basis::Modelled),
        }
    }
}

/// A campaign's targets as a sorted list of (kind, parameters).
fn target_set(items: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut v: Vec<_> = items.collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::{Estimate, Load};
    use crate::store::{PastRun, PastTarget, PastWorkload};

    const SRC: &str = "name = \"e\"\n[plan]\nrepetitions = 2\n\
        [[target]]\nname = \"gl\"\nkind = \"gluster\"\nbricks = 2\n\
        [[workload]]\nname = \"tiny\"\nkind = \"tinywrites\"\ntotal_size = \"10M\"\nwrite_size = 64\n";

    /// A past campaign of `src` whose every run took `each` seconds.
    fn past(src: &str, each: &[f64]) -> PastCampaign {
        let exp = parse_experiment("e.toml", src).unwrap();
        PastCampaign {
            id: 1,
            source: src.into(),
            origin: "e.toml".into(),
            targets: exp
                .targets
                .iter()
                .map(|t| PastTarget {
                    name: t.name.clone(),
                    kind: t.kind.name().into(),
                    params: t.params.to_json().to_string(),
                })
                .collect(),
            workloads: exp
                .workloads
                .iter()
                .map(|w| PastWorkload {
                    name: w.name.clone(),
                    kind: w.kind.name().into(),
                    params: w.params.to_json().to_string(),
                })
                .collect(),
            runs: each
                .iter()
                .map(|&s| PastRun {
                    target: 0,
                    workload: 0,
                    ok: true,
                    duration_s: s,
                    gap_s: Some(0.0),
                    remounted: false,
                    caches_dropped: false,
                })
                .collect(),
            setup_s: Some(20.0),
            teardown_s: Some(10.0),
            left_out: Vec::new(),
        }
    }

    #[test]
    fn a_pair_that_ran_before_takes_what_its_runs_took() {
        let exp = parse_experiment("e.toml", SRC).unwrap();
        let modelled = Estimate::of(&exp, &[], false, Load::REFERENCE);
        assert_eq!(modelled.bases(), (0, 0, 1));
        // Through FUSE, 64-byte writes took far longer than any model; the
        // first run also made what the others reused.
        let history = [past(SRC, &[300.0, 100.0, 110.0])];
        let e = Estimate::of(&exp, &history, false, Load::REFERENCE);
        assert_eq!(e.bases(), (1, 0, 0));
        assert_eq!(e.per_run(0, 0), Duration::from_secs(170));
        assert_eq!(e.setup, Duration::from_secs(20));
        assert_eq!(e.teardown, Duration::from_secs(10));
        assert_eq!(e.total(), Duration::from_secs(20 + 2 * 170 + 10));
    }

    #[test]
    fn other_sizes_of_the_same_tables_scale_the_model() {
        // The past campaign wrote 10M; this one writes 40M: the model's
        // ratio of the recorded runs carries over.
        let exp = parse_experiment("e.toml", &SRC.replace("10M", "40M")).unwrap();
        let past_exp = parse_experiment("e.toml", SRC).unwrap();
        let m = model::run(&past_exp, 0, 0, false, 1.0).as_secs_f64();
        let history = [past(SRC, &[10.0 * m])];
        let e = Estimate::of(&exp, &history, false, Load::REFERENCE);
        match e.pairs[&(0, 0)].basis {
            Basis::Scaled { runs: 1, ratio } => assert!((ratio - 10.0).abs() < 1e-6, "{ratio}"),
            other => panic!("{other:?}"),
        }
        let fresh = model::run(&exp, 0, 0, false, 1.0).as_secs_f64();
        assert!((e.per_run(0, 0).as_secs_f64() - 10.0 * fresh).abs() < 1e-3);
    }
}
