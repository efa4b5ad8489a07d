//! A stored campaign analysed once: [`analyse`] turns the campaign's data
//! into a [`CampaignAnalysis`], which the report, `storlab show`, the JSON
//! summary and `storlab compare` lay out without reading the store or
//! computing a figure of their own.
//!
//! To add what a new feature finds (where the reads came from, a
//! capacity, replicas that agree), add a field here computed in
//! [`analyse`] by a module of its own beside the others; a finding that
//! judges one side against another is a [`Verdict`] (or a field of one),
//! worded where every verdict is (`crate::report::verdict::words`).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use anyhow::Result;

use super::about::{self, About};
use super::attribution::{attribution, Attribution};
use super::by_name::ByName;
use super::capacity;
use super::chosen;
use super::course::{timelines, Timeline};
use super::laid_out::{self, LaidOut};
use super::latency::{curves, Curve};
use super::matrix::{self, MatrixReport};
use super::methodology::{methods, Methods};
use super::model::{self, Report, WorkloadReport};
use super::ranks::{ranks, Ranks};
use super::reads::{self, Reads, Waterfall};
use super::releases;
use super::replicas::{self, Replicas};
use super::setup::{compared, Compared};
use super::study::{self, Study};
use super::telemetry::{telemetry, Telemetry};
use super::verdict::{self, Statement, Verdict};
use super::warnings::{self as by_kind, KindCount};
use crate::metric::catalogue::LAT_P99_NS;
use crate::metric::{MetricDef, MetricKey};
use crate::stats::summarize;
use crate::store::{CampaignData, WorkloadRow};
use crate::warning::Warning;

/// What a reader asked of the analysis beyond the campaign.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A target to compare against in place of the campaign's baseline.
    pub baseline: Option<String>,
    /// Series to follow over time beside each workload's primary metric's.
    pub series: Vec<String>,
    /// Swept parameters whose levels to compare on each target, beside
    /// those the experiment names.
    pub compare_levels: Vec<String>,
    /// Only what the terminal's summary shows (`show`, `run`'s closing
    /// summary): the report body's telemetry panels are left out (a
    /// pass over every run's figures, and each panel's statistics).
    pub summary_only: bool,
    /// The workloads (by name, or every variant of a table) whose
    /// sections the report lays out; none: at most
    /// [`laid_out::MAX_VARIANTS`] of each table.
    pub workloads: Vec<String>,
}

/// Everything the campaign's runs say, computed once.
#[derive(Debug, Clone, Default)]
pub struct CampaignAnalysis {
    /// What the campaign was: identity, provenance, host, plan, targets
    /// and workloads as stored.
    pub about: About,
    /// Each workload's statistics per metric and target, against the
    /// baseline, and the campaign's warnings.
    pub model: Report,
    /// Every verdict: each target against the baseline on every metric
    /// compared, with its caveats.
    pub verdicts: Vec<Verdict>,
    /// What the headline says of the primary metrics' verdicts.
    pub headline: Vec<Statement>,
    /// Each swept workload table's study (factors, pivots, curves, level
    /// comparisons).
    pub studies: Vec<Study>,
    /// The campaign's replicas side by side, when it was loaded with them
    /// (`crate::store::Store::with_replicas`) and has some.
    pub replicas: Option<Replicas>,
    /// Each capacity search: what every target sustains within the
    /// latency target, from its probes.
    pub capacities: Vec<capacity::Search>,
    /// Requested differences that are none ([`super::requested`]).
    pub setup: Vec<Warning>,
    /// Every warning: the setup's, then the model's.
    pub warnings: Vec<Warning>,
    /// The warnings counted by kind, in the catalogue's order.
    pub by_kind: Vec<KindCount>,
    /// Per workload and target, what the summary shows beside the
    /// primary metric.
    pub pairs: Vec<PairFigures>,
    /// The pairs whose every measured run failed, per workload in the
    /// campaign's target order.
    pub failed_pairs: Vec<FailedPair>,
    /// What was compared, side by side.
    pub compared: Compared,
    /// How the comparisons were made.
    pub methods: Methods,
    /// Each workload's series over its measured runs (primary metric and
    /// those asked for).
    pub timelines: Vec<Timeline>,
    /// Latency percentiles per workload and target, histograms merged.
    pub curves: Vec<Curve>,
    /// What each workload's runs were measured with.
    pub measured_with: Vec<RunFact>,
    /// How multi-client runs shared the work; `None` without MPI ranks.
    pub ranks: Option<Ranks>,
    /// Each matrix workload, cell by cell.
    pub matrices: Vec<MatrixReport>,
    /// What the system did during each workload's runs.
    pub telemetry: Vec<Telemetry>,
    /// Where each workload's latency went, per target.
    pub attributions: Vec<Attribution>,
    /// Where each pair's reads came from, layer by layer (and each matrix
    /// cell's).
    pub reads: Reads,
    /// The workloads the report gives sections of their own (and the
    /// telemetry of).
    pub laid_out: LaidOut,
    /// Where the lookups by name below find what they look for: built on
    /// the first lookup, from the fields above as they are then.
    pub(crate) lookups: OnceLock<Lookups>,
}

/// What a workload's runs on a target show beside its primary metric.
#[derive(Debug, Clone, PartialEq)]
pub struct PairFigures {
    pub workload: String,
    pub target: String,
    /// Measured runs that failed.
    pub failed: usize,
    /// The mean over its measured runs of each run's p99 latency.
    pub p99_ns: Option<f64>,
}

/// A pair without a figure: every measured run of `workload` on `target`
/// failed.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedPair {
    pub workload: String,
    pub target: String,
    /// The workload's primary metric, as stored.
    pub primary: String,
    pub failed: usize,
}

/// One fact a workload's runs were measured with (the PostgreSQL server's
/// version), with each target's distinct values in the order seen.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFact {
    pub workload: String,
    pub name: String,
    pub per_target: Vec<(String, Vec<String>)>,
}

/// Campaign `c` judged: its model against `baseline` (the stored one
/// when `None`), every verdict and the headline, sides named by release.
/// What every output of a campaign starts from — [`analyse`] for the
/// report and `storlab show`, `storlab compare` for its rows — so the
/// verdicts a comparison gives are the report's.
#[derive(Debug, Clone)]
pub struct Judgement {
    pub model: Report,
    /// Where each pair's reads came from; the caveats it gives are in
    /// the model and the verdicts.
    pub reads: Reads,
    /// The capacity searches; their verdicts lead the headline.
    pub capacities: Vec<capacity::Search>,
    pub verdicts: Vec<Verdict>,
    pub headline: Vec<Statement>,
}

/// The judgement of campaign `c`: the one place a campaign's runs become
/// its model (the workload kinds' chosen metrics, [`chosen::choose`]),
/// with the caveats of where its reads came from, before any verdict.
pub fn judge(c: &CampaignData, baseline: Option<&str>) -> Result<Judgement> {
    let mut model = model::build(c, baseline, &chosen::choose)?;
    let reads = reads::reads(c);
    reads::add_caveats(&mut model, &reads);
    let capacities = capacity::searches(c);
    let found = capacity::verdicts(&capacities, &model.baseline);
    // A search's headline is its capacities; its probes' verdicts on
    // their own metrics stay in the tables.
    let mut headline: Vec<Statement> = found
        .iter()
        .map(|v| Statement::One(Box::new(v.clone())))
        .collect();
    headline.extend(
        verdict::headline(&model)
            .into_iter()
            .filter(|s| !searched(&capacities, statement_family(s))),
    );
    let mut verdicts = verdict::verdicts(&model);
    verdicts.extend(found);
    releases::name_sides(c, &mut verdicts, &mut headline);
    Ok(Judgement {
        model,
        reads,
        capacities,
        verdicts,
        headline,
    })
}

/// The analysis of campaign `c`.
pub fn analyse(c: &CampaignData, options: &Options) -> Result<CampaignAnalysis> {
    study::check_levels(c, &options.compare_levels)?;
    let laid_out = laid_out_of(c, options)?;
    let Judgement {
        model,
        reads,
        capacities,
        verdicts,
        headline,
    } = judge(c, options.baseline.as_deref())?;
    let about = About::of(c);
    let setup = super::requested::warnings(&about.targets, &model.baseline);
    let warnings: Vec<Warning> = setup.iter().chain(&model.warnings).cloned().collect();
    let (targets, baseline) = (&model.targets, &model.baseline);
    let mut attributions = Vec::new();
    for w in &model.workloads {
        for t in targets {
            attributions.extend(attribution(c.runs_of(&w.name, t), &w.name, t)?);
        }
    }
    Ok(CampaignAnalysis {
        reads,
        verdicts,
        headline,
        // A search's probes are a sweep over the rate: its capacity section
        // says what a study of them would.
        studies: study::studies(c, &model, &options.compare_levels)
            .into_iter()
            .filter(|s| !searched(&capacities, &s.family))
            .collect(),
        replicas: replicas_of(c, &model)?,
        capacities,
        by_kind: by_kind::by_kind(c, &model, &warnings),
        pairs: pairs(c, &model),
        failed_pairs: failed_pairs(c, &model),
        compared: compared(c, &about.targets, &about.workloads, baseline),
        methods: methods(c, &model),
        // The body's charts of a workload: of those laid out only.
        timelines: model
            .workloads
            .iter()
            .filter(|w| laid_out.shows(&w.name))
            .flat_map(|w| {
                let primary = w.primary_metric().map(|m| &m.key);
                timelines(c, &w.name, primary, &options.series)
            })
            .collect(),
        curves: curves(c, |w| laid_out.shows(w))?,
        measured_with: measured_with(c),
        ranks: ranks(c),
        matrices: model
            .workloads
            .iter()
            .filter(|w| w.kind == matrix::KIND)
            .filter_map(|w| matrix::build(c, &w.name, targets, baseline))
            .collect(),
        telemetry: match options.summary_only {
            true => Vec::new(),
            false => model
                .workloads
                .iter()
                .filter(|w| laid_out.shows(&w.name))
                .filter_map(|w| telemetry(c, &w.name, targets, baseline))
                .collect(),
        },
        laid_out,
        attributions,
        about,
        lookups: OnceLock::new(),
        setup,
        warnings,
        model,
    })
}

/// The workloads a report of `c` for `options` lays out; names asked
/// for that are none of its workloads are refused.
pub fn laid_out_of(c: &CampaignData, options: &Options) -> Result<LaidOut> {
    LaidOut::check(c.campaign.id, &c.workloads, &options.workloads)?;
    Ok(laid_out(&c.workloads, options))
}

/// Of `workloads` (a campaign's), those a report for `options` lays out:
/// what its analysis, its reads of the telemetry and its series follow.
pub fn laid_out(workloads: &[WorkloadRow], options: &Options) -> LaidOut {
    LaidOut::of(workloads, &options.workloads, laid_out::MAX_VARIANTS)
}

/// `c`'s replicas side by side, each judged as its own report judges it
/// ([`judge`]) against `model`'s baseline.
fn replicas_of(c: &CampaignData, model: &Report) -> Result<Option<Replicas>> {
    if c.replicas.is_empty() {
        return Ok(None);
    }
    let mut members: Vec<(i64, Report)> = Vec::new();
    for r in &c.replicas {
        members.push((r.campaign.id, judge(r, Some(&model.baseline))?.model));
    }
    let mut all: Vec<(i64, &Report)> = members.iter().map(|(id, m)| (*id, m)).collect();
    all.push((c.campaign.id, model));
    all.sort_by_key(|(id, _)| *id);
    let ids: Vec<i64> = all.iter().map(|(id, _)| *id).collect();
    let models: Vec<&Report> = all.iter().map(|(_, m)| *m).collect();
    Ok(replicas::compare(&ids, &models, c.campaign.id))
}

/// Whether workload table `family` is a capacity search's probes.
fn searched(capacities: &[capacity::Search], family: &str) -> bool {
    capacities.iter().any(|s| s.workload == family)
}

/// The workload family a headline statement is about.
fn statement_family(s: &Statement) -> &str {
    match s {
        Statement::One(v) => &v.family,
        Statement::Alike(a) => &a.family,
    }
}

/// The figures of its runs a pair's summary reads beside the model's
/// (`super::figures`).
pub const PAIR_FIGURES: &[&MetricDef] = &[&LAT_P99_NS];

/// The figures of every workload and target the model shows.
fn pairs(c: &CampaignData, r: &Report) -> Vec<PairFigures> {
    let mut out = Vec::new();
    let p99_key = MetricKey::plain(LAT_P99_NS.name);
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in &m.targets {
            let p99: Vec<f64> = (c.column(&w.name, &t.target, &p99_key).into_iter())
                .map(|(_, v)| v)
                .collect();
            out.push(PairFigures {
                workload: w.name.clone(),
                target: t.target.clone(),
                failed: failed_runs(c, &w.name, &t.target),
                p99_ns: summarize(&p99).map(|s| s.mean),
            });
        }
    }
    out
}

/// The measured runs of a pair that failed.
fn failed_runs(c: &CampaignData, workload: &str, target: &str) -> usize {
    c.runs_of(workload, target)
        .filter(|r| !r.warmup && r.status == "failed")
        .count()
}

/// The pairs the model shows no figure of whose measured runs failed.
fn failed_pairs(c: &CampaignData, r: &Report) -> Vec<FailedPair> {
    let mut out = Vec::new();
    for w in &c.workloads {
        let shown: Vec<&str> = r
            .workloads
            .iter()
            .find(|x| x.name == w.name)
            .and_then(|x| x.primary_metric())
            .map(|m| m.targets.iter().map(|t| t.target.as_str()).collect())
            .unwrap_or_default();
        for t in c
            .targets
            .iter()
            .filter(|t| !shown.contains(&t.name.as_str()))
        {
            let failed = failed_runs(c, &w.name, &t.name);
            if failed > 0 {
                out.push(FailedPair {
                    workload: w.name.clone(),
                    target: t.name.clone(),
                    primary: w.primary_metric.clone(),
                    failed,
                });
            }
        }
    }
    out
}

/// What each workload's runs were measured with: per fact (in name
/// order), each target's distinct values.
fn measured_with(c: &CampaignData) -> Vec<RunFact> {
    let mut out = Vec::new();
    for w in &c.workloads {
        // The runs of a target with the very same facts say nothing new:
        // the first of each in run order (10^5 runs share a few lists).
        let mut seen = HashSet::new();
        let runs: Vec<_> = c
            .runs_of_workload(&w.name)
            .filter(|r| seen.insert((r.target.as_str(), r.facts.shared_address())))
            .collect();
        let mut names: Vec<&str> = runs.iter().flat_map(|r| r.facts.keys()).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let mut per_target: Vec<(String, Vec<String>)> = Vec::new();
            for r in &runs {
                let Some(v) = r.facts.get(name) else { continue };
                match per_target.iter_mut().find(|(t, _)| *t == r.target) {
                    Some((_, vs)) if !vs.iter().any(|x| x == v) => vs.push(v.to_string()),
                    Some(_) => {}
                    None => per_target.push((r.target.clone(), vec![v.to_string()])),
                }
            }
            out.push(RunFact {
                workload: w.name.clone(),
                name: name.to_string(),
                per_target,
            });
        }
    }
    out
}

impl CampaignAnalysis {
    fn lookups(&self) -> &Lookups {
        self.lookups.get_or_init(|| Lookups::of(self))
    }

    /// The verdict on `target` against the baseline on metric `metric`
    /// (its compact name) of `workload`; `None` when it was not compared.
    pub fn verdict(&self, workload: &str, metric: &str, target: &str) -> Option<&Verdict> {
        (self.lookups().verdicts.of(workload, &self.verdicts))
            .find(|v| v.metric == metric && v.candidate.target == target)
    }

    /// The figures of `workload` on `target` beside its primary metric.
    pub fn pair(&self, workload: &str, target: &str) -> Option<&PairFigures> {
        (self.lookups().pairs.of(workload, &self.pairs)).find(|p| p.target == target)
    }

    /// The study of workload table `family`.
    pub fn study(&self, family: &str) -> Option<&Study> {
        self.lookups().studies.of(family, &self.studies).next()
    }

    /// The cell-by-cell matrix of `workload`.
    pub fn matrix(&self, workload: &str) -> Option<&MatrixReport> {
        self.lookups().matrices.of(workload, &self.matrices).next()
    }

    /// The facts `workload`'s runs were measured with, in
    /// [`CampaignAnalysis::measured_with`]'s order.
    pub fn measured_with_of<'a>(&'a self, workload: &str) -> impl Iterator<Item = &'a RunFact> {
        self.lookups()
            .measured_with
            .of(workload, &self.measured_with)
    }

    /// The pairs of `workload` whose every measured run failed.
    pub fn failed_pairs_of<'a>(&'a self, workload: &str) -> impl Iterator<Item = &'a FailedPair> {
        self.lookups().failed_pairs.of(workload, &self.failed_pairs)
    }

    /// `workload`'s series over its measured runs, in
    /// [`CampaignAnalysis::timelines`]' order.
    pub fn timelines_of<'a>(&'a self, workload: &str) -> impl Iterator<Item = &'a Timeline> {
        self.lookups().timelines.of(workload, &self.timelines)
    }

    /// `workload`'s latency percentiles per target, in
    /// [`CampaignAnalysis::curves`]' order.
    pub fn curves_of<'a>(&'a self, workload: &str) -> impl Iterator<Item = &'a Curve> {
        self.lookups().curves.of(workload, &self.curves)
    }

    /// The telemetry of `workload`, if its runs recorded any.
    pub fn telemetry_of<'a>(&'a self, workload: &str) -> impl Iterator<Item = &'a Telemetry> {
        self.lookups().telemetry.of(workload, &self.telemetry)
    }

    /// Where `workload`'s latency went, per target, in
    /// [`CampaignAnalysis::attributions`]' order.
    pub fn attributions_of<'a>(&'a self, workload: &str) -> impl Iterator<Item = &'a Attribution> {
        self.lookups().attributions.of(workload, &self.attributions)
    }

    /// The waterfall of `workload` on `target` ([`Reads::pair`]).
    pub fn reads_pair(&self, workload: &str, target: &str) -> Option<&Waterfall> {
        (self.lookups().reads.of(workload, &self.reads.pairs)).find(|w| w.target == target)
    }

    /// The model's report of `workload`.
    pub fn workload(&self, workload: &str) -> Option<&WorkloadReport> {
        (self.lookups().workloads)
            .of(workload, &self.model.workloads)
            .next()
    }

    /// Workload `workload` as stored (the first of that name).
    pub fn stored_workload(&self, workload: &str) -> Option<&about::Workload> {
        (self.lookups().stored)
            .of(workload, &self.about.workloads)
            .next()
    }

    /// The last workload of the model (the report's order) that is a
    /// variant of workload table `family`.
    pub fn last_of_family(&self, family: &str) -> Option<&WorkloadReport> {
        let at = *self.lookups().last_of_family.get(family)?;
        self.model.workloads.get(at)
    }
}

/// The analysis' lists by the names they are looked up by.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lookups {
    verdicts: ByName,
    pairs: ByName,
    failed_pairs: ByName,
    studies: ByName,
    matrices: ByName,
    measured_with: ByName,
    timelines: ByName,
    curves: ByName,
    telemetry: ByName,
    attributions: ByName,
    reads: ByName,
    workloads: ByName,
    stored: ByName,
    /// Per workload table, the position in the model of its last variant.
    last_of_family: HashMap<String, usize>,
}

impl Lookups {
    fn of(a: &CampaignAnalysis) -> Lookups {
        let stored = ByName::of_list(&a.about.workloads, |w| &w.name);
        let mut last_of_family = HashMap::new();
        for (i, w) in a.model.workloads.iter().enumerate() {
            for s in stored.of(&w.name, &a.about.workloads) {
                last_of_family.insert(s.family.clone(), i);
            }
        }
        Lookups {
            verdicts: ByName::of_list(&a.verdicts, |v| &v.workload),
            pairs: ByName::of_list(&a.pairs, |p| &p.workload),
            failed_pairs: ByName::of_list(&a.failed_pairs, |p| &p.workload),
            studies: ByName::of_list(&a.studies, |s| &s.family),
            matrices: ByName::of_list(&a.matrices, |m| &m.workload),
            measured_with: ByName::of_list(&a.measured_with, |f| &f.workload),
            timelines: ByName::of_list(&a.timelines, |t| &t.workload),
            curves: ByName::of_list(&a.curves, |k| &k.workload),
            telemetry: ByName::of_list(&a.telemetry, |t| &t.workload),
            attributions: ByName::of_list(&a.attributions, |x| &x.workload),
            reads: ByName::of_list(&a.reads.pairs, |w| &w.workload),
            workloads: ByName::of_list(&a.model.workloads, |w| &w.name),
            stored,
            last_of_family,
        }
    }
}
