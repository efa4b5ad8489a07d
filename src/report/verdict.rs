//! A verdict in words: [`words`] is the one function that says what a
//! comparison found, in every output — the headline sentences, the
//! summary table's cell, the overview figure, the tables of differences,
//! the comparison of two campaigns, the release gate's line and the JSON
//! summaries' `sentence` — each a [`Form`] of the same wording, with the
//! caveats the verdict carries. The verdict itself, its outcome and its
//! caveats are data of the analysis ([`crate::analysis::verdict`]).
//!
//! A new outcome (#46's equivalent and inconclusive) gets its word in
//! [`outcome_word`] and its sentence in [`sentence`]; a new kind of
//! caveat (#42's cache layers) is marked by [`marks`] as every other; a
//! new kind of verdict (#43's capacity) is a branch of [`sentence`];
//! sides named by their release (#44) are the verdict's labels, which
//! every form already names the sides by. Where a workload's latency
//! went ([`crate::analysis::attribution`]) is said here too: its
//! sentence as a headline, its conclusion bare.

mod attribution;

use std::collections::BTreeSet;

use super::format::{effect, human_name, pct_text, Notation};
use super::text::{
    bare_value, diff_text, diff_text_in, interval_text, notation, p_text, values_text,
};
use crate::analysis::attribution::Attribution;
use crate::analysis::model::{
    family::METHOD, runs_text, Caveat, TargetStats, MIN_RUNS, RESOLUTION_PCT,
};
use crate::analysis::replicas::{Agreement, Replicated};
use crate::analysis::verdict::{Alike, Judged, Kind, Outcome, Parts, Statement, Verdict};
use crate::metric::format::format_value;
use crate::metric::{Direction, Family, Unit};

/// Where a verdict is said, each with the words that fit the place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A headline line: `w: ram is faster than disk: +68.3% tps [+35.7%,
    /// +108.6%] (p 0.009) ⚠ noisy host`, with what would settle an
    /// inconclusive one and the parts that disagree.
    Headline,
    /// The summary table's cell: `×12 faster ⚠ noisy host`, `×1.6 (n.s.;
    /// ±5% needs about 203 runs)`.
    Summary,
    /// The overview figure's words beside a row: `×12 faster`, `×1.6
    /// (n.s.)`.
    Figure,
    /// The overview figure's caveat marks: the kinds its own runs carry
    /// bare, the baseline's with its name (the row names the candidate).
    FigureMarks,
    /// The caveat marks alone: `⚠ page cache (tmpfs), noisy host`.
    Marks,
    /// The verdict column of a comparison table: `slower ⚠ page cache
    /// (ram)`.
    Word,
    /// The verdict word alone, as a history's table has it: `faster`.
    Bare,
    /// The verdict column of a workload's differences: `faster
    /// (exploratory) ⚠ noisy host on cwd (2 of 3 runs); ±5% needs about 9
    /// runs per target`.
    Detail,
    /// A verdict of two campaigns' headline: `m on d: operations/s
    /// faster, +10.0% [+7.4%, +12.6%] (p <0.001)`.
    Across,
    /// The release gate's line: `oltp tps on zfs: -35.9% against ext4 (p
    /// 0.0130) ⚠ durability not measured on ext4 (3 of 3 runs)`.
    Gate,
    /// A matrix's table of geometric means: `+3.2% faster`, `-0.4%
    /// (inconclusive)`.
    Percent,
    /// One replica's cell beside the others': the effect with its
    /// interval and the word, `+3.6% [+0.3%, +7.1%] faster`, in the
    /// notation of the whole table of replicas (`×1.04 [×1.003, ×1.07]`
    /// where another cell is ×2 or more), so that a row and a column read
    /// in one notation.
    Replica(Notation),
}

/// What is said: one verdict, a family's alike verdicts said once, one
/// comparison as each replica of a campaign judged it, or the release
/// gate's judgement of a comparison's verdicts.
#[derive(Debug, Clone, Copy)]
pub enum Said<'a> {
    One(&'a Verdict),
    Alike(&'a Alike),
    Replicated(&'a Replicated),
    Gate(&'a Judged<'a>),
    /// Where a workload's latency went: [`Form::Headline`] the sentence,
    /// [`Form::Bare`] its conclusion alone.
    Attribution(&'a Attribution),
}

impl<'a> From<&'a Attribution> for Said<'a> {
    fn from(a: &'a Attribution) -> Self {
        Said::Attribution(a)
    }
}

impl<'a> From<&'a Replicated> for Said<'a> {
    fn from(r: &'a Replicated) -> Self {
        Said::Replicated(r)
    }
}

impl<'a> From<&'a Judged<'a>> for Said<'a> {
    fn from(j: &'a Judged<'a>) -> Self {
        Said::Gate(j)
    }
}

impl<'a> From<&'a Verdict> for Said<'a> {
    fn from(v: &'a Verdict) -> Self {
        Said::One(v)
    }
}

impl<'a> From<&'a Alike> for Said<'a> {
    fn from(a: &'a Alike) -> Self {
        Said::Alike(a)
    }
}

impl<'a> From<&'a Statement> for Said<'a> {
    fn from(s: &'a Statement) -> Self {
        match s {
            Statement::One(v) => Said::One(v),
            Statement::Alike(a) => Said::Alike(a),
        }
    }
}

/// The verdict `said` in `form`: the one place a verdict is put into
/// words.
pub fn words<'a>(said: impl Into<Said<'a>>, form: Form) -> String {
    let v = match said.into() {
        Said::One(v) => v,
        Said::Alike(a) => return alike(a),
        Said::Replicated(r) => return replicated(r, form),
        Said::Gate(j) => return gate_passed(j),
        Said::Attribution(a) => {
            return match form {
                Form::Bare => attribution::conclusion(a),
                _ => attribution::sentence(a),
            }
        }
    };
    let t = &v.candidate;
    match form {
        Form::Headline => headline(v),
        Form::Summary => summary(v),
        Form::Figure => figure(v),
        Form::FigureMarks => caveat_marks_of(&t.caveats, &t.target),
        Form::Marks => caveat_marks(&t.caveats),
        Form::Word => {
            let marks = caveat_marks(&t.caveats);
            match (t.verdict, marks.is_empty()) {
                (Some(_), false) => format!("{} {marks}", bare(v)),
                _ => bare(v).to_string(),
            }
        }
        Form::Bare => bare(v).to_string(),
        Form::Detail => detail(v),
        Form::Across => {
            let line = format!(
                "{} on {}: {} {}, {} (p {})",
                v.workload,
                v.baseline.target,
                human_name(&v.metric),
                bare(v),
                diff_text(t),
                p_text(t)
            );
            with_marks(line, &caveat_marks(&t.caveats))
        }
        Form::Gate => gate(v),
        Form::Replica(n) => format!("{} {}", diff_text_in(t, Some(n)), bare(v)),
        Form::Percent => match (&t.comparison, v.outcome()) {
            (Some(c), Some(o)) if o.significant() => {
                format!("{} {}", pct_text(c.diff_pct), word(v, o))
            }
            (Some(c), Some(o)) => format!("{} ({})", pct_text(c.diff_pct), word(v, o)),
            (Some(c), None) => pct_text(c.diff_pct),
            (None, _) => "—".into(),
        },
    }
}

/// The word of an outcome: "faster" for better and "slower" for worse,
/// whatever the direction (a lower latency and a higher throughput are
/// both "faster"); "equivalent" within the margin; "inconclusive" when
/// neither (never "no significant difference", which an underpowered
/// comparison is not evidence of).
fn outcome_word(o: Outcome, _direction: Direction) -> &'static str {
    match o {
        Outcome::Better => "faster",
        Outcome::Worse => "slower",
        Outcome::Equivalent => "equivalent",
        Outcome::Inconclusive => "inconclusive",
        Outcome::TooFew => "—",
    }
}

/// `±5%`: the margin a comparison's equivalence was judged at.
fn margin_text(t: &TargetStats) -> String {
    let pct = t.margin.map_or(RESOLUTION_PCT, |m| m.pct);
    format!("±{pct}%")
}

/// `0.003; 0.010 adjusted over 7`: the p-value of equivalence (that the
/// difference is the margin or more), adjusted in its family.
fn p_equivalent_text(t: &TargetStats) -> String {
    let own = t.margin.map_or(f64::NAN, |m| m.p_value());
    match t
        .correction
        .and_then(|f| Some((f.p_equivalent_adjusted?, f.comparisons)))
    {
        Some((q, n)) => format!("{}; {} adjusted over {n}", p_value(own), p_value(q)),
        None => p_value(own),
    }
}

/// The verdict's plain word, or a dash without one.
/// The word of `v`'s outcome: a capacity is an amount of load, not a
/// speed, so it is higher or lower.
fn word(v: &Verdict, o: Outcome) -> &'static str {
    match (&v.kind, o) {
        (Kind::Capacity { .. }, Outcome::Better) => "higher",
        (Kind::Capacity { .. }, Outcome::Worse) => "lower",
        _ => outcome_word(o, v.direction),
    }
}

/// A significant difference in a cell ([`versus_text`]); a capacity's
/// as its sentence says a ratio, naming the quantity: `×2.4 capacity`
/// (`×2.4 faster` would say the way twice, and a capacity is no speed).
fn versus(v: &Verdict, diff_pct: f64, o: Outcome) -> String {
    let n = notation(&v.candidate);
    match v.kind {
        Kind::Capacity { .. } => change_text(diff_pct, n, &human_name(&v.metric), v.unit).0,
        _ => versus_text(diff_pct, n, v.unit, word(v, o)),
    }
}

fn bare(v: &Verdict) -> &'static str {
    match (v.candidate.verdict, v.outcome()) {
        (Some(_), Some(o)) => word(v, o),
        _ => "—",
    }
}

/// `w: ` and the verdict sentence, its caveat marks (on the first screen;
/// the tables say in how many runs), what would settle it and the parts
/// that disagree.
fn headline(v: &Verdict) -> String {
    let t = &v.candidate;
    let mut line = with_marks(
        format!("{}: {}", v.workload, sentence(v)),
        &caveat_marks(&t.caveats),
    );
    if let Some(more) = settle_text(t) {
        line.push_str(&format!("; {more}"));
    }
    if let Some(parts) = &v.parts {
        line.push_str(&format!("; {}", parts_text(parts)));
    }
    line
}

/// `ram is faster than disk: +68.3% tps [+35.7%, +108.6%] (p 0.009)`, or
/// `… is equivalent to … within ±5%` or `inconclusive between …` with the
/// difference and p.
fn sentence(v: &Verdict) -> String {
    if let Kind::Capacity { latency, max_ns } = &v.kind {
        return capacity_sentence(v, latency, *max_ns);
    }
    let (t, baseline) = (&v.candidate, &v.baseline_label);
    let candidate = &v.candidate_label;
    let Some(outcome) = v.outcome() else {
        return String::new();
    };
    let Some(c) = &t.comparison else {
        let of = |x: &TargetStats| match x.values.is_empty() {
            true => "—".to_string(),
            false => values_text(&x.values, v.unit),
        };
        return format!(
            "{}: no interval and no verdict of {candidate} against {baseline} — {candidate} {}; {baseline} {}",
            too_few_text(),
            of(t),
            of(&v.baseline)
        );
    };
    if outcome == Outcome::Equivalent {
        return format!(
            "{candidate} is equivalent to {baseline} within {}: {} {} (equivalence p {})",
            margin_text(t),
            human_name(&v.metric),
            diff_text(t),
            p_equivalent_text(t)
        );
    }
    if outcome.significant() {
        let name = human_name(&v.metric);
        let (change, named) = change_text(c.diff_pct, notation(t), &name, v.unit);
        let which = match named {
            true => String::new(),
            false => format!("{name}, "),
        };
        return format!(
            "{candidate} is {} than {baseline}: {change} {} ({which}p {})",
            word(v, outcome),
            interval_text(t),
            p_text(t)
        );
    }
    let chance = chance_text(t).map_or(String::new(), |c| format!(": {c}"));
    format!(
        "inconclusive between {candidate} and {baseline}, neither different nor within {} ({} {}, p {}){chance}",
        margin_text(t),
        human_name(&v.metric),
        diff_text(t),
        p_text(t)
    )
}

/// `zfs sustains 2.30k tx/s within p99 ≤ 50.00 ms [2.15k, 2.45k]; ext4
/// 4.10k tx/s [3.90k, 4.30k]: -43.9% [-49.0%, -38.3%] (p <0.001)`, or
/// `inconclusive between the capacities of …` with the same (a capacity
/// search has no equivalence margin: its interval is the knee's).
fn capacity_sentence(v: &Verdict, latency: &str, max_ns: f64) -> String {
    let value = |t: &TargetStats| format_value(t.summary.map_or(f64::NAN, |s| s.mean), v.unit);
    let interval = |t: &TargetStats| {
        t.ci.map_or(String::new(), |i| {
            format!(
                " [{}, {}]",
                bare_value(i.low, v.unit),
                bare_value(i.high, v.unit)
            )
        })
    };
    let figures = format!(
        "{} sustains {} within {latency} ≤ {}{}; {} {}{}",
        v.candidate_label,
        value(&v.candidate),
        format_value(max_ns, Unit::Nanoseconds),
        interval(&v.candidate),
        v.baseline_label,
        value(&v.baseline),
        interval(&v.baseline),
    );
    let t = &v.candidate;
    match v.outcome() {
        Some(o) if o.significant() => {
            format!("{figures}: {} (p {})", diff_text(t), p_text(t))
        }
        _ => format!(
            "inconclusive between the capacities of {} and {}: {figures} ({}, p {})",
            v.candidate_label,
            v.baseline_label,
            diff_text(t),
            p_text(t)
        ),
    }
}

/// `by test, which disagree: write -20.0% slower, reread +20.0% faster`.
fn parts_text(p: &Parts) -> String {
    let each: Vec<String> = p
        .each
        .iter()
        .map(|part| {
            let word = outcome_word(part.outcome, Direction::HigherIsBetter);
            let n = Notation::of(&[part.diff_pct]);
            format!("{} {} {word}", part.label, effect(part.diff_pct, n))
        })
        .collect();
    format!("by {}, which disagree: {}", p.by, each.join(", "))
}

/// The summary table's cell, with the kinds of the caveats the verdict
/// carries.
fn summary(v: &Verdict) -> String {
    let t = &v.candidate;
    let word = match (&t.comparison, v.outcome()) {
        (None, _) => too_few_text(),
        (Some(c), Some(o)) if o.significant() => versus(v, c.diff_pct, o),
        (Some(c), Some(Outcome::Equivalent)) => format!(
            "{} equivalent ({})",
            effect(c.diff_pct, notation(t)),
            margin_text(t)
        ),
        (Some(c), _) => {
            let e = effect(c.diff_pct, notation(t));
            match &t.settle {
                Some(s) => format!(
                    "{e} (inconclusive; ±{}% needs {} runs)",
                    s.pct,
                    runs_text(s.runs)
                ),
                None => format!("{e} (inconclusive)"),
            }
        }
    };
    let mut kinds: Vec<&str> = Vec::new();
    for c in t.caveats.iter().filter(|_| t.comparison.is_some()) {
        if !kinds.contains(&c.kind.label()) {
            kinds.push(c.kind.label());
        }
    }
    match kinds.is_empty() {
        true => word,
        false => format!("{word} ⚠ {}", kinds.join(", ")),
    }
}

/// The overview figure's words beside a compared row.
fn figure(v: &Verdict) -> String {
    let t = &v.candidate;
    let Some(c) = &t.comparison else {
        return String::new();
    };
    match v.outcome() {
        Some(o) if o.significant() => versus(v, c.diff_pct, o),
        Some(Outcome::Equivalent) => format!("{} equivalent", effect(c.diff_pct, notation(t))),
        _ => format!("{} (inconclusive)", effect(c.diff_pct, notation(t))),
    }
}

/// The verdict's word, marked exploratory for a secondary metric, with a
/// chance call and the caveats in full; what would settle a primary one.
fn detail(v: &Verdict) -> String {
    let t = &v.candidate;
    let word = match (t.too_few, v.outcome()) {
        (true, _) => too_few_text(),
        (false, Some(o)) if v.exploratory => {
            format!("{} (exploratory)", word(v, o))
        }
        (false, Some(o)) => word(v, o).to_string(),
        (false, None) => return "—".into(),
    };
    let word = match (t.too_few, chance_text(t)) {
        (false, Some(chance)) => format!("{word} ({chance})"),
        _ => word,
    };
    let word = match (t.too_few, caveats_text(t)) {
        (false, Some(caveats)) => format!("{word} {caveats}"),
        _ => word,
    };
    match settle_text(t).filter(|_| !v.exploratory) {
        Some(more) => format!("{word}; {more}"),
        None => word,
    }
}

/// The release gate's line for a regression.
fn gate(v: &Verdict) -> String {
    let c = v.candidate.comparison.as_ref();
    let text = format!(
        "{} {} on {}: {} against {} (p {:.4})",
        v.workload,
        v.metric,
        v.candidate_label,
        c.map_or("n/a".into(), |c| effect(
            c.diff_pct,
            Notation::of(&[c.diff_pct])
        )),
        v.baseline_label,
        c.map(|c| c.p_value).unwrap_or(f64::NAN)
    );
    match caveats_text(&v.candidate) {
        Some(caveats) => format!("{text} {caveats}"),
        None => text,
    }
}

/// The line of a gate that passed: what it judged, and what it let pass.
fn gate_passed(j: &Judged) -> String {
    let pct = j.pct;
    let mut line = format!("no primary metric is significantly worse by more than {pct}%");
    if !j.waived.is_empty() {
        line = format!("the gate passes: caveated regressions let pass (--caveated-regressions warn): {}; no other primary metric is significantly worse by more than {pct}%", j.waived.len());
    } else if j.caveated > 0 {
        line.push_str(&format!(
            "; comparisons carrying a validity caveat: {} (`storlab compare` shows them with their verdicts)",
            j.caveated
        ));
    }
    if !j.unsure.is_empty() {
        line.push_str(&format!(
            "; inconclusive comparisons that may hide a regression beyond {pct}%, let pass (--inconclusive {}): {}",
            j.inconclusive.word(),
            j.unsure.len()
        ));
    }
    line
}

/// `pgbench: inconclusive against d in all 12 comparisons (3 targets × 4
/// variants), neither different nor within ±5%: tps from -15.4% to
/// +12.0%, p 0.231–0.774 (0.731–0.774 adjusted over 12) ⚠ noisy host; ±5%
/// needs about 20–175 runs per target` (or `equivalent to d within ±5%
/// in …`); `in 4 of its 6 comparisons (on 3 targets, 2
/// variants)` when others of the family's comparisons were significant.
fn alike(a: &Alike) -> String {
    let metric_name = a
        .members
        .first()
        .map_or(String::new(), |v| human_name(&v.metric));
    let workloads: BTreeSet<&str> = a.members.iter().map(|v| v.workload.as_str()).collect();
    let targets: BTreeSet<&str> = a
        .members
        .iter()
        .map(|v| v.candidate.target.as_str())
        .collect();
    let equivalent = a.outcome == Outcome::Equivalent;
    let compared = || a.members.iter().filter_map(|v| v.candidate.comparison);
    let diffs: Vec<f64> = compared().map(|c| c.diff_pct).collect();
    let ps: Vec<f64> = match equivalent {
        true => a
            .members
            .iter()
            .filter_map(|v| v.candidate.margin)
            .map(|m| m.p_value())
            .collect(),
        false => compared().map(|c| c.p_value).collect(),
    };
    let corrections = || a.members.iter().filter_map(|v| v.candidate.correction);
    let adjusted: Vec<f64> = match equivalent {
        true => corrections()
            .filter_map(|f| f.p_equivalent_adjusted)
            .collect(),
        false => corrections().map(|f| f.p_adjusted).collect(),
    };
    let family_size = corrections().map(|f| f.comparisons).max().unwrap_or(0);
    let caveats: Vec<Caveat> = a
        .members
        .iter()
        .flat_map(|v| v.candidate.caveats.iter().cloned())
        .collect();
    let settle: Vec<(f64, Option<usize>)> = a
        .members
        .iter()
        .filter_map(|v| v.candidate.settle)
        .map(|s| (s.pct, s.runs))
        .collect();
    let span = |v: &[f64], one: &dyn Fn(f64) -> String| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match (lo == hi, v.is_empty()) {
            (_, true) => "—".to_string(),
            (true, false) => one(lo),
            (false, false) => format!("{}–{}", one(lo), one(hi)),
        }
    };
    let (on, all) = match a.members.len() == a.of {
        true => ("", format!("all {}", a.of)),
        false => ("on ", format!("{} of its {}", a.members.len(), a.of)),
    };
    let shape = match (targets.len(), workloads.len()) {
        (t, 1) => format!("{on}{t} targets"),
        (1, w) => format!("{on}{w} variants"),
        (t, w) if on.is_empty() => format!("{t} targets × {w} variants"),
        (t, w) => format!("on {t} targets, {w} variants"),
    };
    let n = Notation::of(&diffs);
    let lo = diffs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = diffs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let diff = match lo == hi {
        true => format!("{metric_name} {} in each", effect(lo, n)),
        false => format!("{metric_name} from {} to {}", effect(lo, n), effect(hi, n)),
    };
    let margin = a
        .members
        .first()
        .map_or(String::new(), |v| margin_text(&v.candidate));
    let mut line = match equivalent {
        true => format!(
            "{}: equivalent to {} within {margin} in {all} comparisons ({shape}): {diff}, equivalence p {}",
            a.family,
            a.baseline,
            span(&ps, &p_value),
        ),
        false => format!(
            "{}: inconclusive against {} in {all} comparisons ({shape}), neither different nor within {margin}: {diff}, p {}",
            a.family,
            a.baseline,
            span(&ps, &p_value),
        ),
    };
    if !adjusted.is_empty() {
        line.push_str(&format!(
            " ({} adjusted over {family_size})",
            span(&adjusted, &p_value)
        ));
    }
    line = with_marks(line, &caveat_marks(&caveats));
    if let Some(&(pct, _)) = settle.first() {
        let runs: Vec<Option<usize>> = settle
            .iter()
            .filter(|(x, _)| *x == pct)
            .map(|(_, r)| *r)
            .collect();
        let known: Vec<usize> = runs.iter().flatten().copied().collect();
        let lo = known.iter().min();
        let hi = known.iter().max();
        let text = match (lo, hi, runs.len() == known.len()) {
            (Some(lo), Some(hi), true) if lo == hi => format!("about {lo}"),
            (Some(lo), Some(hi), true) => format!("about {lo}–{hi}"),
            (Some(lo), _, false) => format!(
                "about {lo} to more than {}",
                crate::stats::resolve::MAX_RUNS
            ),
            _ => runs_text(None),
        };
        line.push_str(&format!("; ±{pct}% needs {text} runs per target"));
    }
    line
}

/// Replicas' agreement on a comparison: in a table's column (`Word`),
/// `agree: faster in all 3`, `conflict: faster in 1, equivalent in 1`; as
/// a headline line, the workload and target first and each replica's
/// effect with its interval after, oldest first.
fn replicated(r: &Replicated, form: Form) -> String {
    let outcomes: Vec<Option<Outcome>> = r
        .each
        .iter()
        .map(|v| v.as_ref().and_then(|v| v.outcome()))
        .collect();
    let word = |o: Option<Outcome>| {
        o.map_or("not compared", |o| {
            outcome_word(o, Direction::HigherIsBetter)
        })
    };
    let mut kinds: Vec<Option<Outcome>> = Vec::new();
    for o in &outcomes {
        if !kinds.contains(o) {
            kinds.push(*o);
        }
    }
    let tally = match kinds.as_slice() {
        [one] if outcomes.len() == 2 => format!("{} in both", word(*one)),
        [one] => format!("{} in all {}", word(*one), outcomes.len()),
        kinds => kinds
            .iter()
            .map(|k| {
                let n = outcomes.iter().filter(|o| *o == k).count();
                format!("{} in {n}", word(*k))
            })
            .collect::<Vec<_>>()
            .join(", "),
    };
    let agreement = match r.agreement {
        Agreement::Agree => "agree",
        Agreement::Consistent => "consistent",
        Agreement::Apart => "apart: effects outside each other's intervals",
        Agreement::Conflict => "conflict",
    };
    let line = match r.agreement {
        Agreement::Apart => format!("{agreement}; {tally}"),
        _ => format!("{agreement}: {tally}"),
    };
    match form {
        Form::Headline => {
            let effects: Vec<String> = r
                .each
                .iter()
                .map(|v| {
                    v.as_ref()
                        .map_or("—".to_string(), |v| diff_text(&v.candidate))
                })
                .collect();
            format!(
                "{} on {}: replicas {line} ({})",
                r.workload,
                r.target,
                effects.join("; ")
            )
        }
        _ => line,
    }
}

/// `0.036`, `<0.001`.
fn p_value(p: f64) -> String {
    match p {
        p if p < 0.001 => "<0.001".to_string(),
        p => format!("{p:.3}"),
    }
}

/// `line` and the marks after a space, when there are any.
fn with_marks(line: String, marks: &str) -> String {
    match marks.is_empty() {
        true => line,
        false => format!("{line} {marks}"),
    }
}

/// The caveats a verdict carries: `⚠ durability not measured on ext4 (3
/// of 3 runs); ⚠ page cache on disk (1 of 3 runs)`.
fn caveats_text(t: &TargetStats) -> Option<String> {
    let each: Vec<String> = t
        .caveats
        .iter()
        .map(|c| match &c.served {
            Some(a) => format!(
                "⚠ {}: {} read {}% from {}, {} {}% from {}",
                c.kind.label(),
                a.candidate,
                a.candidate_pct,
                a.candidate_from,
                a.baseline,
                a.baseline_pct,
                a.baseline_from
            ),
            None => format!(
                "⚠ {} on {} ({} of {} runs)",
                c.kind.label(),
                c.target,
                c.runs,
                c.of
            ),
        })
        .collect();
    (!each.is_empty()).then(|| each.join("; "))
}

/// What stands in for a verdict below the minimum n.
fn too_few_text() -> String {
    format!("too few runs (at least {MIN_RUNS} for a verdict)")
}

/// How a difference of metric `name` (its human name) reads, the sign
/// with the quantity rather than with the verdict: `takes 20.2% less
/// time` (a time), `38.4% lower p99 latency` (a latency), `-64.0% TPS` (a
/// rate, an amount); in ratio notation the candidate's quantity as a
/// multiple of the baseline's, `÷3.3 total time`, `×597 throughput`. And
/// whether that names the metric.
fn change_text(diff_pct: f64, n: Notation, name: &str, unit: Unit) -> (String, bool) {
    let size = diff_pct.abs();
    let less = diff_pct < 0.0;
    match (n, unit.family()) {
        (Notation::Ratio, _) => (format!("{} {name}", effect(diff_pct, n)), true),
        (_, Family::Seconds) => {
            let how = if less { "less" } else { "more" };
            (format!("takes {size:.1}% {how} time"), false)
        }
        (_, Family::Nanoseconds) => {
            let how = if less { "lower" } else { "higher" };
            (format!("{size:.1}% {how} {name}"), true)
        }
        _ => (format!("{} {name}", effect(diff_pct, n)), true),
    }
}

/// A significant difference in a table cell beside its verdict word:
/// `+60.3% faster` for a rate, `24.6% less time, faster` for a time,
/// `38.4% lower, faster` for a latency; `×597 faster`, `÷3.3 time,
/// faster` from ×2.
fn versus_text(diff_pct: f64, n: Notation, unit: Unit, word: &str) -> String {
    let size = diff_pct.abs();
    let less = diff_pct < 0.0;
    match (n, unit.family()) {
        (Notation::Ratio, Family::Seconds) => format!("{} time, {word}", effect(diff_pct, n)),
        (Notation::Ratio, Family::Nanoseconds) => format!("{}, {word}", effect(diff_pct, n)),
        (_, Family::Seconds) => {
            let how = if less { "less" } else { "more" };
            format!("{size:.1}% {how} time, {word}")
        }
        (_, Family::Nanoseconds) => {
            let how = if less { "lower" } else { "higher" };
            format!("{size:.1}% {how}, {word}")
        }
        _ => format!("{} {word}", effect(diff_pct, n)),
    }
}

/// The marks of one target's verdict in a figure whose row names it:
/// a kind its own runs carry reads bare, one only others' runs carry
/// (the baseline's) names them — `⚠ working set in the ARC, durability
/// not measured (ext4-tuned)`.
fn caveat_marks_of(caveats: &[Caveat], own: &str) -> String {
    marks(caveats, |on, _| on.contains(&own))
}

/// `⚠ page cache (tmpfs), noisy host`: the caveats of a verdict, each kind
/// once with the target whose runs carry it (none named when every
/// target's do); empty without caveats.
fn caveat_marks(caveats: &[Caveat]) -> String {
    marks(caveats, |on, all| on.len() == all && all > 1)
}

/// Each kind of `caveats` once, bare where `bare(targets carrying it,
/// how many targets carry any)` says so, else with those targets named.
fn marks(caveats: &[Caveat], bare: impl Fn(&[&str], usize) -> bool) -> String {
    if caveats.is_empty() {
        return String::new();
    }
    let mut kinds: Vec<_> = caveats.iter().map(|c| c.kind).collect();
    kinds.sort();
    kinds.dedup();
    let all: BTreeSet<&str> = caveats.iter().map(|c| c.target.as_str()).collect();
    let each: Vec<String> = kinds
        .iter()
        .map(|k| {
            let mut on: Vec<&str> = caveats
                .iter()
                .filter(|c| c.kind == *k)
                .map(|c| c.target.as_str())
                .collect();
            on.sort();
            on.dedup();
            match bare(&on, all.len()) {
                true => k.label().to_string(),
                false => format!("{} ({})", k.label(), on.join(", ")),
            }
        })
        .collect();
    format!("⚠ {}", each.join(", "))
}

/// `±5% needs about 9 runs per target`, for an inconclusive comparison.
fn settle_text(t: &TargetStats) -> Option<String> {
    let s = t.settle?;
    Some(format!(
        "±{}% needs {} runs per target",
        s.pct,
        runs_text(s.runs)
    ))
}

/// For a comparison its own p would have called and its family does not:
/// `significant alone, not among 100 comparisons (Benjamini–Hochberg):
/// chance could explain it`.
fn chance_text(t: &TargetStats) -> Option<String> {
    let f = t.correction.filter(|f| f.chance)?;
    Some(format!(
        "significant alone, not among {} comparisons ({METHOD}): chance could explain it",
        f.comparisons
    ))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{
        target_stats, Caveat, MetricReport, Report, WorkloadReport, LEVEL,
    };
    use crate::analysis::verdict::tests::halved;
    use crate::analysis::verdict::tests::unsure;
    use crate::analysis::verdict::{headline, judge};
    use crate::cli::InconclusiveComparisons::{Pass, Warn};
    use crate::metric::matrix::{test_labels, Test};
    use crate::metric::{MetricKey, Unit};
    use crate::stats::{welch_log, Analysis};
    use crate::warning::WarningKind;

    /// The headline's lines of `r`.
    fn said(r: &Report) -> Vec<String> {
        headline(r)
            .iter()
            .map(|s| words(s, Form::Headline))
            .collect()
    }

    /// A matrix summary metric (all tests, or one test's) of targets `a`
    /// (baseline) and `b`.
    fn part(test: Option<Test>, b: &[f64]) -> MetricReport {
        let name = "geomean_bw_bytes_per_s";
        let key = test.map_or(MetricKey::plain(name), |t| {
            MetricKey::new(name, test_labels(t))
        });
        let a = [100.0, 101.0, 99.0];
        let higher = Direction::HigherIsBetter;
        MetricReport {
            name: key.compact(),
            exploratory: test.is_some(),
            key,
            unit: Unit::BytesPerSec,
            direction: higher,
            analysis: Analysis::Ratio,
            targets: vec![
                target_stats("a", a.to_vec(), None, higher),
                target_stats("b", b.to_vec(), welch_log(&a, b, LEVEL), higher),
            ],
        }
    }

    fn matrix(metrics: Vec<MetricReport>) -> Report {
        let w = WorkloadReport {
            name: "iozone".into(),
            kind: "matrix".into(),
            primary: metrics[0].name.clone(),
            metrics,
        };
        Report {
            baseline: "a".into(),
            targets: vec!["a".into(), "b".into()],
            workloads: vec![w],
            warnings: Vec::new(),
        }
    }

    // The translators study: slower over all tests, its re-reads faster.
    #[test]
    fn the_headline_lists_the_tests_when_they_disagree_in_direction() {
        let slower = [80.0, 81.0, 79.0];
        let faster = [120.0, 121.0, 119.0];
        let r = matrix(vec![
            part(None, &slower),
            part(Some(Test::Write), &slower),
            part(Some(Test::Reread), &faster),
        ]);
        let line = &said(&r)[0];
        assert!(
            line.starts_with("iozone: b is slower than a: -20.0% throughput (geometric mean) ["),
            "{line}"
        );
        assert!(
            line.ends_with("; by test, which disagree: write -20.0% slower, reread +20.0% faster"),
            "{line}"
        );
        let agree = matrix(vec![part(None, &slower), part(Some(Test::Write), &slower)]);
        assert!(!said(&agree)[0].contains("disagree"));
        // A named primary test: its verdict leads, all tests become a part.
        let named = matrix(vec![part(Some(Test::Reread), &faster), part(None, &slower)]);
        let line = &said(&named)[0];
        assert!(
            line.starts_with(
                "iozone: b is faster than a: +20.0% reread throughput (geometric mean)"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("by test, which disagree: all -20.0% slower"),
            "{line}"
        );
    }

    /// A workload of one metric on baseline `a` and target `b`.
    fn plain(name: &str, b: &[f64]) -> WorkloadReport {
        let a = [100.0, 104.0, 97.0];
        let higher = Direction::HigherIsBetter;
        let metric = MetricReport {
            name: "tps".into(),
            exploratory: false,
            key: MetricKey::plain("tps"),
            unit: Unit::TransactionsPerSec,
            direction: higher,
            analysis: Analysis::Ratio,
            targets: vec![
                target_stats("a", a.to_vec(), None, higher),
                target_stats("b", b.to_vec(), welch_log(&a, b, LEVEL), higher),
            ],
        };
        WorkloadReport {
            name: name.into(),
            kind: "pgbench".into(),
            primary: "tps".into(),
            metrics: vec![metric],
        }
    }

    // Seed 000: 4 transaction counts, none decided: one line, at the first
    // one's place; a significant one keeps its own.
    #[test]
    fn a_sweep_without_a_significant_difference_is_said_once() {
        let same = [101.0, 99.0, 103.0];
        let mut workloads: Vec<WorkloadReport> = (1..=4)
            .map(|n| plain(&format!("pg[transactions={n}]"), &same))
            .collect();
        workloads.insert(1, plain("seq", &[200.0, 201.0, 199.0]));
        let r = Report {
            baseline: "a".into(),
            targets: vec!["a".into(), "b".into()],
            workloads,
            warnings: Vec::new(),
        };
        let lines = said(&r);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].eq(
                "pg: inconclusive against a in all 4 comparisons (4 variants), neither different nor within ±5%: TPS +0.7% in each, p 0.784; ±5% needs about 5 runs per target"
            ),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("seq: b is faster than a"),
            "{}",
            lines[1]
        );
        // Two are said one by one.
        let mut r = r;
        r.workloads.truncate(3);
        let lines = said(&r);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(
            lines[0].starts_with("pg[transactions=1]: inconclusive between b and a, neither different nor within ±5% (TPS +0.7% [")
        );
        // Where others of the family were significant, it says how many of
        // them were not; what contributors add are notes, apart.
        r.workloads = (1..=4)
            .map(|n| plain(&format!("pg[transactions={n}]"), &same))
            .chain([plain("pg[transactions=5]", &[200.0, 201.0, 199.0])])
            .collect();
        let lines = said(&r);
        assert!(
            lines[0].starts_with(
                "pg: inconclusive against a in 4 of its 5 comparisons (on 4 variants), neither different nor within ±5%: "
            ),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("pg[transactions=5]: b is faster than a"));
        // Equivalent ones are said together too, apart from inconclusive
        // ones: within ±5% over 8 runs, not within ±1%.
        let close = [100.5, 104.2, 96.8, 100.1, 103.7, 97.4, 100.0, 104.1];
        let eight = [100.0, 104.0, 97.0, 100.2, 103.9, 97.1, 100.3, 103.8];
        r.workloads = (1..=3)
            .map(|n| equivalent(&format!("pg[transactions={n}]"), &eight, &close, 5.0))
            .chain([equivalent("pg[transactions=4]", &eight, &close, 1.0)])
            .collect();
        let lines = said(&r);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].starts_with(
                "pg: equivalent to a within ±5% in 3 of its 4 comparisons (on 3 variants): TPS +0.1% in each, equivalence p 0.005"
            ),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("pg[transactions=4]: inconclusive between b and a, neither different nor within ±1%"),
            "{}",
            lines[1]
        );
        // One on its own.
        r.workloads.truncate(1);
        let lines = said(&r);
        assert!(
            lines[0]
                .starts_with("pg[transactions=1]: b is equivalent to a within ±5%: TPS +0.1% ["),
            "{}",
            lines[0]
        );
        assert!(lines[0].ends_with("(equivalence p 0.005)"), "{}", lines[0]);
    }

    /// A workload whose `b` is judged against `a` with its equivalence
    /// tests at ±`pct`%.
    fn equivalent(name: &str, a: &[f64], b: &[f64], pct: f64) -> WorkloadReport {
        let mut w = plain(name, b);
        let higher = Direction::HigherIsBetter;
        w.metrics[0].targets[0] = target_stats("a", a.to_vec(), None, higher);
        let mut t = target_stats("b", b.to_vec(), welch_log(a, b, LEVEL), higher);
        let ra = crate::stats::RoundValue::in_rounds;
        t.judge_margin(crate::stats::equivalence_runs(
            &ra(a),
            &ra(b),
            crate::stats::Design::Unpaired,
            Analysis::Ratio,
            pct,
        ));
        w.metrics[0].targets[1] = t;
        w
    }

    #[test]
    fn caveats_are_marked_once_per_kind_with_the_side_that_carries_them() {
        let c = |kind, target: &str| Caveat {
            kind,
            target: target.into(),
            runs: 1,
            of: 3,
            served: None,
        };
        assert_eq!(caveat_marks(&[]), "");
        let marks = caveat_marks(&[
            c(WarningKind::NoisyHost, "cwd"),
            c(WarningKind::PageCache, "tmpfs"),
            c(WarningKind::NoisyHost, "tmpfs"),
        ]);
        assert_eq!(marks, "⚠ page cache (tmpfs), noisy host");
        // In a row that names tmpfs, its own caveats need no name; the
        // baseline's do.
        let row = [
            c(WarningKind::DurabilityNotMeasured, "ext4"),
            c(WarningKind::PageCache, "tmpfs"),
            c(WarningKind::NoisyHost, "ext4"),
            c(WarningKind::NoisyHost, "tmpfs"),
        ];
        assert_eq!(
            caveat_marks_of(&row, "tmpfs"),
            "⚠ page cache, durability not measured (ext4), noisy host"
        );
    }

    // The examples: a time that drops reads as less time, a rate
    // keeps its sign beside its name; from ×2 both read as ratios.
    #[test]
    fn changes_read_in_the_metric_s_direction() {
        let p = Notation::Percent;
        assert_eq!(
            change_text(-20.2, p, "total time", Unit::Seconds),
            ("takes 20.2% less time".to_string(), false)
        );
        assert_eq!(
            change_text(-64.0, Notation::Ratio, "TPS", Unit::TransactionsPerSec),
            ("÷2.8 TPS".to_string(), true)
        );
        assert_eq!(
            change_text(12.5, p, "p99 latency", Unit::Nanoseconds).0,
            "12.5% higher p99 latency"
        );
        assert_eq!(
            versus_text(-24.6, p, Unit::Seconds, "faster"),
            "24.6% less time, faster"
        );
        assert_eq!(
            versus_text(60.3, p, Unit::BytesPerSec, "faster"),
            "+60.3% faster"
        );
        assert_eq!(
            versus_text(59600.0, Notation::Ratio, Unit::BytesPerSec, "faster"),
            "×597 faster"
        );
    }

    #[test]
    fn a_regression_is_printed_with_its_caveats() {
        let r = halved("zfs", &[WarningKind::DurabilityNotMeasured]);
        let text = words(&r, Form::Gate);
        assert!(
            text.starts_with("w tps on zfs: ÷2.0 against base (p 0.0"),
            "{text}"
        );
        assert!(
            text.ends_with("⚠ durability not measured on zfs (3 of 3 runs)"),
            "{text}"
        );
        assert_eq!(
            words(&judge(std::slice::from_ref(&r), 60.0, false, Warn), Form::Gate),
            "no primary metric is significantly worse by more than 60%; comparisons carrying a validity caveat: 1 (`storlab compare` shows them with their verdicts)"
        );
        assert!(
            words(&judge(&[r], 5.0, true, Warn), Form::Gate).starts_with(
                "the gate passes: caveated regressions let pass (--caveated-regressions warn): 1;"
            )
        );
    }

    // The gate's line names the inconclusive comparisons it let pass, and
    // under which policy.
    #[test]
    fn a_passed_gate_says_the_inconclusive_comparisons_it_let_pass() {
        let v = unsure();
        let rows = std::slice::from_ref(&v);
        assert!(words(&judge(rows, 5.0, false, Pass), Form::Gate).ends_with(
            "; inconclusive comparisons that may hide a regression beyond 5%, let pass (--inconclusive pass): 1"
        ));
        assert_eq!(
            words(&judge(rows, 20.0, false, Warn), Form::Gate),
            "no primary metric is significantly worse by more than 20%"
        );
    }

    /// A knee at `estimate` with the interval `[low, high]` from 4 degrees
    /// of freedom.
    fn knee(estimate: f64, low: f64, high: f64) -> crate::stats::capacity::Knee {
        use crate::stats::capacity::{Found, Knee};
        Knee {
            found: Found::Between,
            estimate,
            interval: Some(crate::stats::Interval {
                low,
                high,
                level: 0.95,
            }),
            lo: Some(low),
            hi: Some(high),
            df: 4.0,
            spread: 0.05,
        }
    }

    /// A capacity verdict of `b` against `a`.
    fn capacities(a: (f64, f64, f64), b: (f64, f64, f64)) -> Verdict {
        use crate::analysis::capacity::knee_stats;
        use crate::stats::capacity::compare;
        let (ka, kb) = (knee(a.0, a.1, a.2), knee(b.0, b.1, b.2));
        Verdict {
            workload: "q".into(),
            primary: true,
            metric: "capacity".into(),
            unit: Unit::OpsPerSec,
            direction: Direction::HigherIsBetter,
            baseline_label: "a".into(),
            baseline: knee_stats("a", &ka, None, Vec::new()),
            candidate_label: "b".into(),
            candidate: knee_stats("b", &kb, compare(&ka, &kb, 0.95), Vec::new()),
            family: "q".into(),
            exploratory: false,
            parts: None,
            kind: Kind::Capacity {
                latency: "p99".into(),
                max_ns: 10e6,
            },
        }
    }

    // A capacity is an amount of load: its cells name it beside the ratio
    // as its sentence does (`×2.4 capacity`), its word is higher or lower,
    // never faster (a ratio and "faster" said the way twice).
    #[test]
    fn a_capacity_reads_as_a_ratio_of_capacities_higher_or_lower() {
        let v = capacities((266.0, 200.0, 429.0), (649.0, 225.0, 710.0));
        assert_eq!(words(&v, Form::Summary), "×2.4 capacity");
        assert_eq!(words(&v, Form::Figure), "×2.4 capacity");
        assert_eq!(words(&v, Form::Bare), "higher");
        assert!(
            words(&v, Form::Across).starts_with("q on a: capacity higher, ×2.4 ["),
            "{}",
            words(&v, Form::Across)
        );
        let v = capacities((649.0, 225.0, 710.0), (266.0, 200.0, 429.0));
        assert_eq!(words(&v, Form::Summary), "÷2.4 capacity");
        assert_eq!(words(&v, Form::Word), "lower");
        for f in [
            Form::Summary,
            Form::Figure,
            Form::Word,
            Form::Detail,
            Form::Across,
        ] {
            assert!(!words(&v, f).contains("slower"), "{f:?}");
        }
    }

    // The history's capacity column: a knee's interval is on the log
    // scale, not symmetric; `649 ops/s ± 243 ops/s` said [406, 892].
    #[test]
    fn a_capacity_is_written_with_its_interval_not_as_a_mean_plus_minus() {
        use crate::report::text::{estimate_ci_text, mean_ci_text};
        let k = crate::analysis::capacity::knee_stats(
            "b",
            &knee(649.0, 225.0, 710.0),
            None,
            Vec::new(),
        );
        assert_eq!(
            estimate_ci_text(&k, Unit::OpsPerSec),
            "649 ops/s [225, 710]"
        );
        assert!(mean_ci_text(&k, Unit::OpsPerSec).contains(" ± "));
    }

    // #46: a comparison is different, equivalent or inconclusive, never
    // "no significant difference"; two capacities are only tested for a
    // difference.
    #[test]
    fn two_capacities_are_different_or_inconclusive() {
        let apart = sentence(&capacities(
            (1000.0, 950.0, 1050.0),
            (2000.0, 1900.0, 2100.0),
        ));
        assert!(apart.starts_with("b sustains 2.00k"), "{apart}");
        let close = sentence(&capacities(
            (1000.0, 800.0, 1200.0),
            (1020.0, 820.0, 1220.0),
        ));
        assert!(
            close.starts_with("inconclusive between the capacities of b and a: b sustains"),
            "{close}"
        );
        assert!(!close.contains("no significant"), "{close}");
    }
}
