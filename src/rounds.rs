//! Which pairs take the next round, decided from the results so far.
//!
//! A campaign's measured runs come in rounds (`crate::plan`); after each,
//! a [`Sequencer`] reads every value measured so far and says which
//! target–workload pairs run in the next round, and why the others
//! stopped. The runner knows nothing of why: it runs what the sequencer
//! asks for until it asks for nothing, or time or a signal stops it. The
//! decisions are pure functions of the measured values, so that a resumed
//! campaign, which feeds the recorded values back round by round, replays
//! them exactly.
//!
//! The plans' sequencers ([`for_plan`]):
//! * a fixed count: every pair until it has that many runs;
//! * `until_ci`: each pair on its own, until the 95% CI half-width of its
//!   primary metric is within the asked share of its mean (after `min`
//!   runs, at most `max`);
//! * `until = "decided"` ([`UntilDecided`]): each workload until every
//!   comparison of its primary metric with the baseline is different or
//!   equivalent, judged as the report judges it
//!   ([`crate::stats::sequential`], the campaign's comparisons as one
//!   family), at most `max` rounds — and not beyond the round at which
//!   its undecided comparisons are all out of reach: where their spread
//!   and estimates so far say that even `max` rounds would not decide
//!   them ([`crate::stats::runs_to_decide`]), the rounds left go to the
//!   workloads they could decide. Stopping early never makes a verdict
//!   say more than it may (the looks' error is spent whenever a plan
//!   stops: [`crate::stats::sequential`]). A workload's targets stop
//!   together, so that its rounds stay paired and balanced.

use std::collections::{BTreeMap, HashMap};

use crate::analysis::model::{family, target_stats, TargetStats, LEVEL, MIN_RUNS};
use crate::analysis::verdict::Outcome;
use crate::experiment::{Experiment, Order, Repetitions};
use crate::metric::Direction;
use crate::stats::{
    judge, mean_ci, runs_to_decide, summarize, Analysis, Design, Looks, RoundValue,
};

/// A target–workload pair: indices into the experiment's targets and
/// workloads.
pub type Pair = (usize, usize);

/// What is known when a round ends.
pub struct Seen<'a> {
    /// Measured rounds run so far.
    pub rounds: u32,
    /// Each pair's primary values of its successful measured runs, with
    /// their rounds.
    pub values: &'a HashMap<Pair, Vec<RoundValue>>,
}

impl Seen<'_> {
    /// The values of `pair`, none when it has none.
    pub fn of(&self, pair: Pair) -> &[RoundValue] {
        self.values.get(&pair).map_or(&[], Vec::as_slice)
    }
}

/// Why a pair took no more runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// A fixed number of repetitions was planned and done.
    Fixed,
    /// The interval became narrow enough.
    Width(f64),
    /// `max` runs without reaching the width, or without a decision.
    Max(Option<f64>),
    /// Every comparison of its workload was decided.
    Decided,
    /// Its workload has no comparison with the baseline to decide: it
    /// took the plan's `min` runs.
    Alone,
    /// Its workload's undecided comparisons would not be decided by the
    /// plan's `max` rounds, from their spread and estimates so far.
    OutOfReach,
}

impl Stop {
    pub fn reason(self) -> &'static str {
        match self {
            Stop::Fixed => "fixed",
            Stop::Width(_) => "width",
            Stop::Max(_) => "max",
            Stop::Decided => "decided",
            Stop::Alone => "alone",
            Stop::OutOfReach => "out_of_reach",
        }
    }

    pub fn ci_pct(self) -> Option<f64> {
        match self {
            Stop::Fixed | Stop::Decided | Stop::Alone | Stop::OutOfReach => None,
            Stop::Width(w) => Some(w),
            Stop::Max(w) => w,
        }
    }
}

/// What the next round holds, and which pairs stopped since the last.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Next {
    /// Pairs of the next round, in the group's order; none: the group is
    /// done.
    pub run: Vec<Pair>,
    pub stopped: Vec<(Pair, Stop)>,
}

/// Decides each round of a group of pairs from the results so far.
pub trait Sequencer {
    /// The next round after `seen.rounds` measured rounds (the first
    /// round when none has run).
    fn next(&mut self, seen: &Seen) -> Next;
}

/// The sequencer of `exp`'s plan for `group`, the pairs that take their
/// rounds together.
pub fn for_plan<'e>(exp: &'e Experiment, group: &[Pair]) -> Box<dyn Sequencer + 'e> {
    match exp.plan.repetitions {
        Repetitions::Decided { min, max } => Box::new(UntilDecided::new(exp, group, min, max)),
        reps => Box::new(ByPair {
            reps,
            active: group.to_vec(),
        }),
    }
}

/// The 95% CI half-width as a percentage of the mean, when defined.
pub fn ci_pct(values: &[f64]) -> Option<f64> {
    let s = summarize(values)?;
    let ci = mean_ci(values, 0.95)?;
    if s.mean == 0.0 {
        return None;
    }
    Some(100.0 * ci.half_width() / s.mean.abs())
}

/// Decides after a pair's `runs`-th measured run (`values`: its primary
/// metric over the successful ones) whether it needs another, for plans
/// that judge each pair on its own (a count, or `until_ci`).
pub fn decide(reps: Repetitions, runs: u32, values: &[f64]) -> Option<Stop> {
    match reps {
        Repetitions::Fixed(n) => (runs >= n).then_some(Stop::Fixed),
        Repetitions::Adaptive {
            min,
            max,
            until_ci_pct,
        } => {
            if runs < min {
                return None;
            }
            let width = ci_pct(values);
            match width {
                Some(w) if w <= until_ci_pct => Some(Stop::Width(w)),
                _ if runs >= max => Some(Stop::Max(width)),
                _ => None,
            }
        }
        Repetitions::Decided { max, .. } => (runs >= max).then_some(Stop::Max(None)),
    }
}

/// Each pair judged on its own ([`decide`]).
struct ByPair {
    reps: Repetitions,
    active: Vec<Pair>,
}

impl Sequencer for ByPair {
    fn next(&mut self, seen: &Seen) -> Next {
        let mut stopped = Vec::new();
        if seen.rounds > 0 {
            self.active.retain(|&pair| {
                let values: Vec<f64> = seen.of(pair).iter().map(|r| r.value).collect();
                match decide(self.reps, seen.rounds, &values) {
                    Some(stop) => {
                        stopped.push((pair, stop));
                        false
                    }
                    None => true,
                }
            });
        }
        Next {
            run: self.active.clone(),
            stopped,
        }
    }
}

/// One comparison of a workload's primary metric: a target against the
/// baseline.
#[derive(Debug, Clone, Copy)]
struct Compared {
    workload: usize,
    baseline: Pair,
    candidate: Pair,
}

/// Rounds until every comparison is decided (module doc).
pub struct UntilDecided {
    min: u32,
    max: u32,
    /// The pairs still running, in the group's order.
    active: Vec<Pair>,
    /// Every comparison of the group, the family judged as one.
    comparisons: Vec<Compared>,
    /// Each workload's pairs.
    workloads: BTreeMap<usize, Vec<Pair>>,
    margins: Vec<f64>,
    analysis: Analysis,
    design: Design,
    looks: Looks,
}

impl UntilDecided {
    pub fn new(exp: &Experiment, group: &[Pair], min: u32, max: u32) -> UntilDecided {
        let baseline = exp.baseline();
        let mut workloads: BTreeMap<usize, Vec<Pair>> = BTreeMap::new();
        for &(t, w) in group {
            workloads.entry(w).or_default().push((t, w));
        }
        let comparisons = workloads
            .iter()
            .filter(|(_, pairs)| pairs.iter().any(|p| p.0 == baseline))
            .flat_map(|(&w, pairs)| {
                pairs
                    .iter()
                    .filter(|p| p.0 != baseline)
                    .map(move |&candidate| Compared {
                        workload: w,
                        baseline: (baseline, w),
                        candidate,
                    })
            })
            .collect();
        let design = match exp.plan.order {
            Order::Sequential => Design::Unpaired,
            _ => Design::Rounds,
        };
        UntilDecided {
            min,
            max,
            active: group.to_vec(),
            comparisons,
            workloads,
            margins: exp.workloads.iter().map(|w| w.margin_pct).collect(),
            analysis: exp.plan.analysis,
            design,
            looks: Looks::rounds(min, max, MIN_RUNS as u32),
        }
    }

    /// The outcome of each comparison so far, the family judged as one,
    /// exactly as the report will judge it (`crate::analysis`: the
    /// comparison's figures, its family's correction, its outcome); `None`
    /// for one without a verdict yet (fewer than [`MIN_RUNS`]).
    pub fn outcomes(&self, seen: &Seen) -> Vec<Option<Outcome>> {
        self.judged(seen)
            .into_iter()
            .map(|j| j.map(|(o, _)| o))
            .collect()
    }

    /// Each comparison's outcome so far ([`UntilDecided::outcomes`]), with
    /// the runs that would decide it ([`runs_to_decide`] at its look's
    /// level; `None` when no count would).
    fn judged(&self, seen: &Seen) -> Vec<Option<(Outcome, Option<usize>)>> {
        let mut judged: Vec<Option<(TargetStats, Option<usize>)>> = self
            .comparisons
            .iter()
            .map(|c| self.judge(c, seen))
            .collect();
        let family = judged
            .iter_mut()
            .flatten()
            .map(|(t, _)| (t, Direction::HigherIsBetter))
            .collect();
        family::judge(family);
        judged
            .iter()
            .map(|j| {
                let (t, reach) = j.as_ref()?;
                let o = Outcome::of(t).filter(|o| *o != Outcome::TooFew)?;
                Some((o, *reach))
            })
            .collect()
    }

    /// One comparison's figures as the report computes them (its
    /// direction does not change whether it is decided), with the runs
    /// that would decide it.
    fn judge(&self, c: &Compared, seen: &Seen) -> Option<(TargetStats, Option<usize>)> {
        let all = self.workloads[&c.workload]
            .iter()
            .flat_map(|&p| seen.of(p))
            .map(|r| &r.value);
        let analysis = self.analysis.for_values(all);
        let (base, cand) = (seen.of(c.baseline), seen.of(c.candidate));
        let j = judge(
            base,
            cand,
            self.design,
            analysis,
            LEVEL,
            self.looks,
            self.margins[c.workload],
        )?;
        let values = cand.iter().map(|r| r.value).collect();
        let mut t = target_stats("", values, Some(j.comparison), Direction::HigherIsBetter);
        t.judge_margin(j.margin);
        let reach = runs_to_decide(&j.comparison, self.margins[c.workload]);
        (!t.too_few).then_some((t, reach))
    }

    /// Why `workload`'s pairs stop after `rounds` rounds, if they do.
    fn stop(
        &self,
        workload: usize,
        rounds: u32,
        judged: &[Option<(Outcome, Option<usize>)>],
    ) -> Option<Stop> {
        if rounds < self.min {
            return None;
        }
        let mine: Vec<Option<(Outcome, Option<usize>)>> = self
            .comparisons
            .iter()
            .zip(judged)
            .filter(|(c, _)| c.workload == workload)
            .map(|(_, j)| *j)
            .collect();
        if mine.is_empty() {
            return Some(Stop::Alone);
        }
        if mine.iter().all(|j| j.is_some_and(|(o, _)| o.decided())) {
            return Some(Stop::Decided);
        }
        if rounds >= self.max {
            return Some(Stop::Max(None));
        }
        let beyond = |reach: Option<usize>| !reach.is_some_and(|n| n <= self.max as usize);
        let out_of_reach = mine
            .iter()
            .all(|j| j.is_some_and(|(o, reach)| o.decided() || beyond(reach)));
        out_of_reach.then_some(Stop::OutOfReach)
    }
}

impl Sequencer for UntilDecided {
    fn next(&mut self, seen: &Seen) -> Next {
        let mut stopped = Vec::new();
        if seen.rounds > 0 {
            let judged = self.judged(seen);
            let stops: BTreeMap<usize, Stop> = self
                .workloads
                .keys()
                .filter_map(|&w| Some((w, self.stop(w, seen.rounds, &judged)?)))
                .collect();
            self.active.retain(|pair| match stops.get(&pair.1) {
                Some(&stop) => {
                    stopped.push((*pair, stop));
                    false
                }
                None => true,
            });
        }
        Next {
            run: self.active.clone(),
            stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::parse_experiment;

    const ADAPTIVE: Repetitions = Repetitions::Adaptive {
        min: 3,
        max: 5,
        until_ci_pct: 2.0,
    };

    #[test]
    fn fixed_plans_stop_at_their_count() {
        assert_eq!(decide(Repetitions::Fixed(3), 2, &[1.0, 1.0]), None);
        assert_eq!(
            decide(Repetitions::Fixed(3), 3, &[1.0, 1.0, 1.0]),
            Some(Stop::Fixed)
        );
    }

    #[test]
    fn adaptive_plans_stop_on_width_or_max() {
        let quiet = [100.0, 100.1, 99.9];
        assert_eq!(decide(ADAPTIVE, 2, &quiet[..2]), None, "never before min");
        assert!(matches!(decide(ADAPTIVE, 3, &quiet), Some(Stop::Width(w)) if w < 2.0));
        let noisy = [100.0, 130.0, 80.0, 120.0];
        assert_eq!(decide(ADAPTIVE, 4, &noisy), None);
        assert!(
            matches!(decide(ADAPTIVE, 5, &[100.0, 130.0, 80.0, 120.0, 90.0]), Some(Stop::Max(Some(w))) if w > 2.0)
        );
        // Failed runs leave too few values for an interval: go on until max.
        assert_eq!(decide(ADAPTIVE, 3, &[100.0]), None);
        assert!(matches!(
            decide(ADAPTIVE, 5, &[100.0]),
            Some(Stop::Max(None))
        ));
    }

    /// Targets a (baseline), b and c; workload `both` on all, `alone` on c.
    fn three(plan: &str) -> Experiment {
        let src = format!(
            "[plan]\n{plan}\n\
             [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n\
             [[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"/tmp\"\n\
             [[target]]\nname = \"c\"\nkind = \"dir\"\npath = \"/tmp\"\n\
             [[workload]]\nname = \"both\"\nkind = \"mock\"\n\
             [[workload]]\nname = \"alone\"\nkind = \"mock\"\ntargets = [\"c\"]\n"
        );
        parse_experiment("t.toml", &src).unwrap()
    }

    /// Runs the sequencer with values drawn by `value(pair, round)`, and
    /// returns each pair's stop and rounds.
    fn drive(
        seq: &mut dyn Sequencer,
        value: impl Fn(Pair, u32) -> f64,
    ) -> BTreeMap<Pair, (Stop, u32)> {
        let mut values: HashMap<Pair, Vec<RoundValue>> = HashMap::new();
        let mut out = BTreeMap::new();
        let mut rounds = 0;
        loop {
            let next = seq.next(&Seen {
                rounds,
                values: &values,
            });
            for (pair, stop) in next.stopped {
                out.insert(pair, (stop, rounds));
            }
            if next.run.is_empty() {
                return out;
            }
            rounds += 1;
            for pair in next.run {
                values.entry(pair).or_default().push(RoundValue {
                    round: rounds,
                    value: value(pair, rounds),
                });
            }
        }
    }

    /// A deterministic wobble of ±`size` around 1.
    fn wobble(pair: Pair, round: u32, size: f64) -> f64 {
        let x = ((pair.0 * 7 + pair.1 * 13) as f64 + f64::from(round) * 2.7).sin();
        1.0 + size * x
    }

    // A clear difference (b 30% faster) and a clear equivalence (c the
    // same within 0.1%) are decided at the plan's min; the workload
    // without a comparison stops there too.
    #[test]
    fn clear_comparisons_stop_their_workload_at_min() {
        let exp = three("repetitions = { min = 3, max = 10, until = \"decided\" }");
        let group = crate::plan::pairs(&exp);
        let mut seq = for_plan(&exp, &group);
        let stops = drive(seq.as_mut(), |p, r| {
            let factor = if p == (1, 0) { 1.3 } else { 1.0 };
            100.0 * factor * wobble(p, r, 0.001)
        });
        for pair in [(0, 0), (1, 0), (2, 0)] {
            assert_eq!(stops[&pair], (Stop::Decided, 3), "{pair:?}");
        }
        assert_eq!(stops[&(2, 1)], (Stop::Alone, 3));
    }

    // A noisy comparison 3% apart (±30% per run) is neither different nor
    // equivalent, and its spread says 10 rounds would not decide it: its
    // whole workload stops once that is seen, the decided target with it.
    // Less noisy (±1%), the same difference is within reach: it goes on
    // until it is decided.
    #[test]
    fn an_undecided_comparison_stops_its_whole_workload_once_out_of_reach() {
        let exp = three("repetitions = { min = 3, max = 10, until = \"decided\" }");
        let group = crate::plan::pairs(&exp);
        for (noise, stop) in [(0.3, Stop::OutOfReach), (0.01, Stop::Decided)] {
            let mut seq = UntilDecided::new(&exp, &group, 3, 10);
            let value = |p: Pair, r: u32| {
                let factor = if p == (1, 0) { 1.03 } else { 1.0 };
                100.0 * factor * wobble(p, r, if p.0 == 1 { noise } else { 0.0001 })
            };
            let stops = drive(&mut seq, value);
            let rounds = stops[&(0, 0)].1;
            for pair in [(0, 0), (1, 0), (2, 0)] {
                assert_eq!(stops[&pair], (stop, rounds), "{noise} {pair:?}");
            }
            assert!(rounds < 10, "{noise}: {stops:?}");
            assert_eq!(stops[&(2, 1)], (Stop::Alone, 3));
        }
    }

    // The default plan is sequential, and fixed where it cannot be.
    #[test]
    fn the_default_plan_rounds_until_decided() {
        let exp = three("");
        assert_eq!(
            exp.plan.repetitions,
            Repetitions::Decided { min: 3, max: 10 }
        );
        let exp = three("order = \"sequential\"");
        assert_eq!(exp.plan.repetitions, Repetitions::Fixed(3));
    }

    // A plan until decided needs rounds.
    #[test]
    fn until_decided_needs_rounds() {
        let exp = three("repetitions = { until = \"decided\" }");
        assert_eq!(
            exp.plan.repetitions,
            Repetitions::Decided { min: 3, max: 10 }
        );
        let src = "[plan]\nrepetitions = { until = \"decided\" }\norder = \"sequential\"\n[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n";
        let e = parse_experiment("t.toml", src).unwrap_err().to_string();
        assert!(
            e.contains(
                "t.toml:3:9: order = \"sequential\" runs each pair's repetitions back to back"
            ),
            "{e}"
        );
        let e = parse_experiment("t.toml", &src.replace("\"decided\"", "\"sure\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`until` takes \"decided\""), "{e}");
    }
}
