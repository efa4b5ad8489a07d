//! The resolved experiment: what a valid file means, in typed form.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::capacity::{grid_slug, number_text, Capacity, ProbeOf};
use super::sweep::{variant_name, Factor, Scale};
use crate::params::{choices, declare, Choice, Fault, ParamType, Params, Value};
use crate::stats::Analysis;
use crate::targets::{TargetConfig, TargetKind};
use crate::workload::{WorkloadConfig, WorkloadKind};

/// A whole experiment, validated.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    pub plan: Plan,
    pub targets: Vec<TargetSpec>,
    pub workloads: Vec<WorkloadSpec>,
    /// The file's text as written, stored with the campaign.
    pub source: String,
    /// Where it came from (`built-in:quick` for the built-in experiment).
    pub origin: String,
}

#[derive(Debug, Clone)]
pub struct TargetSpec {
    /// `NAME`, or `NAME[k=v,…]` for a variant of a swept target.
    pub name: String,
    /// The `[[target]]` table's own name, shared by its variants.
    pub family: String,
    /// The swept values that make this variant (those of the target it
    /// stands on first): labels on every metric of its runs.
    pub factors: Vec<Factor>,
    /// A short name safe in paths and resource names: the name, or
    /// `NAME-N` for the N-th variant.
    pub slug: String,
    pub kind: TargetKind,
    /// Only one variant of the baseline table is the baseline: the first.
    pub baseline: bool,
    /// `caches = false` turns off reading where its runs' reads came from
    /// (the layers' counters, and Gluster's profiling that feeds them).
    pub caches: bool,
    /// The target whose working directory holds this one's image
    /// (`on = "gluster-r3"`), as an index into the experiment's targets.
    pub on: Option<usize>,
    /// The parameters as resolved: stored with the campaign.
    pub params: Params,
    /// The same, typed and checked: what the target is built from.
    pub config: Arc<dyn TargetConfig>,
}

impl TargetSpec {
    /// This target with one parameter overridden, checked anew, as a sweep
    /// makes its variants.
    pub fn with_value(&self, key: &str, value: Value) -> Result<TargetSpec, Fault> {
        let mut params = self.params.clone();
        params.set(key, value);
        let config = self.kind.configure(&params)?;
        Ok(TargetSpec {
            params,
            config,
            ..self.clone()
        })
    }
}

#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    /// `NAME`, or `NAME[k=v,…]` for a variant of a swept workload.
    pub name: String,
    /// The `[[workload]]` table's own name, shared by its variants.
    pub family: String,
    /// The swept values that make this variant: labels on every metric.
    pub factors: Vec<Factor>,
    /// A short name safe in paths: the name, or `NAME-N` for the N-th variant.
    pub slug: String,
    pub kind: WorkloadKind,
    /// The parameters as resolved (paths made absolute, a fio job's text):
    /// stored with every run.
    pub params: Params,
    /// The same, typed and checked: what estimates, preflight and the
    /// workload itself are built from.
    pub config: Arc<dyn WorkloadConfig>,
    /// Names of the targets this workload runs on (a target's own name
    /// takes in all its variants); all when empty.
    pub only_targets: Vec<String>,
    /// Factors whose levels the report compares with each other on every
    /// target (`compare_levels = ["compress"]`): gzip against none.
    pub compare_levels: Vec<String>,
    /// Under MPI, every rank works in one shared directory instead of its own.
    pub shared: bool,
    /// Differences within ±this % of the baseline are equivalent
    /// (`equivalence_margin`, 5 % unless the file says otherwise).
    pub margin_pct: f64,
    /// A capacity search over its offered rate: it never runs itself,
    /// its probes do ([`super::capacity`]).
    pub capacity: Option<Capacity>,
    /// The search this variant is a probe of, made as the search ran.
    pub probe_of: Option<ProbeOf>,
}

impl WorkloadSpec {
    pub fn runs_on(&self, target: &TargetSpec) -> bool {
        self.only_targets.is_empty()
            || self
                .only_targets
                .iter()
                .any(|t| *t == target.name || *t == target.family)
    }

    /// This workload with one parameter overridden, checked and resolved
    /// anew (relative paths against `base`, the experiment file's
    /// directory), as a sweep makes its variants.
    pub fn with_value(&self, key: &str, value: Value, base: &Path) -> Result<WorkloadSpec, Fault> {
        let mut params = self.params.clone();
        params.set(key, value);
        let config = self.kind.configure(&mut params, base)?;
        Ok(WorkloadSpec {
            params,
            config,
            ..self.clone()
        })
    }

    /// The variant of this workload that probes grid point `k` of its
    /// capacity search.
    pub fn probe(&self, k: i64) -> Result<WorkloadSpec, Fault> {
        let c = self.capacity.as_ref().ok_or((
            "capacity",
            "the workload has no capacity search".to_string(),
        ))?;
        let value = c.value_at(k);
        let param = c.open_loop.param;
        let ty = self
            .kind
            .params()
            .iter()
            .find(|s| s.name == param)
            .map(|s| s.ty)
            .ok_or((param, "the kind has no such parameter".to_string()))?;
        let (v, text) = match ty {
            ParamType::Size => (Value::Size(value as u64), format!("{}", value as u64)),
            ParamType::Int { .. } => (Value::Int(value as i64), format!("{}", value as i64)),
            _ => (Value::Float(value), number_text(value)),
        };
        let mut probe = self.with_value(param, v, Path::new("."))?;
        let factor = Factor {
            key: param.to_string(),
            value: text.clone(),
            text,
            scale: Scale::Number,
        };
        probe.factors.push(factor);
        probe.name = variant_name(&self.family, &probe.factors);
        probe.slug = format!("{}-r{}", self.slug, grid_slug(k));
        probe.capacity = None;
        probe.probe_of = Some(ProbeOf {
            search: self.name.clone(),
            k,
            offered: c.open_loop.total(value),
        });
        Ok(probe)
    }
}

choices! {
    pub enum Order {
        Interleaved = "interleaved",
        Balanced = "balanced",
        Randomized = "randomized",
        Sequential = "sequential",
    }
}

choices! {
    pub enum Remount { Never = "never", BetweenRuns = "between-runs" }
}

/// How many measured runs each target–workload pair gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Repetitions {
    Fixed(u32),
    /// After `min` rounds, keep adding rounds for the pairs whose primary
    /// metric's 95% CI half-width is above `until_ci_pct` % of its mean,
    /// until each is within it or has `max` runs.
    Adaptive {
        min: u32,
        max: u32,
        until_ci_pct: f64,
    },
    /// A sequential plan: after `min` rounds, keep adding rounds for each
    /// workload until every primary comparison of it is decided (different
    /// or equivalent, judged so that looking after every round stays
    /// valid: [`crate::stats::sequential`]) or it has `max` runs.
    Decided {
        min: u32,
        max: u32,
    },
}

/// The plan when the file names no `repetitions`: until decided, 3 to 10
/// rounds; with `order = "sequential"`, which judges nothing until the last
/// pair has run, 3.
pub const DEFAULT_REPETITIONS: Repetitions = Repetitions::Decided { min: 3, max: 10 };
/// The default with `order = "sequential"`.
pub const DEFAULT_SEQUENTIAL_ORDER_REPETITIONS: Repetitions = Repetitions::Fixed(3);

impl Repetitions {
    pub fn min(self) -> u32 {
        match self {
            Repetitions::Fixed(n) => n,
            Repetitions::Adaptive { min, .. } | Repetitions::Decided { min, .. } => min,
        }
    }

    pub fn max(self) -> u32 {
        match self {
            Repetitions::Fixed(n) => n,
            Repetitions::Adaptive { max, .. } | Repetitions::Decided { max, .. } => max,
        }
    }

    pub fn to_json(self) -> serde_json::Value {
        match self {
            Repetitions::Fixed(n) => json!(n),
            Repetitions::Adaptive {
                min,
                max,
                until_ci_pct,
            } => json!({"min": min, "max": max, "until_ci_pct": until_ci_pct}),
            Repetitions::Decided { min, max } => {
                json!({"min": min, "max": max, "until": "decided"})
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub repetitions: Repetitions,
    /// Upper bound on the whole campaign's time.
    pub max_time: Option<Duration>,
    pub order: Order,
    pub seed: u64,
    pub drop_caches: bool,
    pub remount: Remount,
    pub warmup: u32,
    /// How targets are compared: on the ratio scale, or by their means.
    pub analysis: Analysis,
    /// Sample devices, CPU, memory and daemons during every run.
    pub telemetry: bool,
    /// Trace the block requests of the target's devices (with telemetry).
    pub block_trace: bool,
    /// Requests a second of one device above which block tracing stops
    /// for the rest of the campaign (its own cost would exceed the
    /// noise); 0: any rate.
    pub block_trace_max_rate: u64,
    /// The most target variants, and target–workload pairs, the sweeps
    /// may make: counted before any is built.
    pub max_variants: u64,
    /// 0 for a campaign of the file; N for its N-th replica (`storlab
    /// replicate`), whose rounds take another order: balanced rounds start
    /// N rows further in their Williams design, randomized ones mix N into
    /// their seed.
    pub replica: u32,
}

/// The plan's word for the statistics' analysis (which lives in `stats`,
/// a layer that knows nothing of parameters).
impl Choice for Analysis {
    const NAMES: &'static [&'static str] = &["ratio", "means"];

    fn from_name(name: &str) -> Option<Analysis> {
        Self::NAMES
            .contains(&name)
            .then(|| Analysis::from_word(Some(name)))
    }

    fn name(self) -> &'static str {
        self.word()
    }
}

declare! {
    /// The `[plan]` table's parameters (`repetitions` may also be a table
    /// of adaptive repetitions, which the parser reads itself).
    pub struct PlanParams {
        repetitions: int(u32, 1, 10_000) => "measured runs of every target-workload pair; or { min = 3, max = 10, until = \"decided\" }, the default: rounds until every comparison with the baseline is different or equivalent (3 runs with order = \"sequential\"); or { min = 3, max = 20, until_ci = \"2%\" }",
        max_time: duration => "stop starting new runs after this long (adaptive plans say which pairs stopped on time)",
        order: choice(Order) = "balanced" => "balanced rounds: every pair once per round, a workload's targets in an order that turns per round so that each follows every other equally often (AB BA); interleaved rounds in one order (AB AB); a seeded shuffle within each round; or all repetitions of a pair back to back",
        seed: int(u64, 0, i64::MAX) = "1" => "seed of the randomized order",
        drop_caches: bool = "true" => "sync and drop the page cache before every run (needs root)",
        remount: choice(Remount) = "never" => "unmount and mount every mountable target before each run",
        warmup: int(u32, 0, 1000) = "0" => "unmeasured runs of every pair before the measured ones",
        analysis: choice(Analysis) = "ratio" => "compare targets by the ratio of geometric means (log scale, paired by round) or by Welch's t on the means (for metrics that can be zero or negative; chosen by itself for those)",
        telemetry: bool = "true" => "sample the target's devices, host CPU, memory and the daemons serving the target once a second during every run, and warn when a run measured the wrong thing (page cache, CPU)",
        block_trace: bool = "true" => "with telemetry, trace the block requests of the target's devices with bpftrace (root, bpftrace installed): each device's request latency, queue time, flushes; without it, /proc/diskstats' averages",
        block_trace_max_rate: int(u64, 0, 1_000_000_000) = "120000" => "requests a second of the traced devices together (a loop device over a disk counts each I/O twice) above which block tracing stops for the rest of the campaign, where its own cost (two tracepoints per request) would exceed run-to-run noise; the runs say so in their block_trace fact; 0 traces at any rate",
        max_variants: int(u64, 1, 100_000_000) = "10000" => "refuse sweeps that make more target variants, or target-workload pairs, than this (counted before any is made); raise it for a larger study",
    }
}

declare! {
    /// Adaptive repetitions' bounds: `repetitions = { min = 3, max = 20,
    /// until_ci = "2%" }` or `{ min = 3, max = 10, until = "decided" }`
    /// (the parser reads `until_ci`, a percentage, and `until`).
    pub struct AdaptiveParams {
        min: int(u32, 1, 10_000) = "3" => "measured runs of every pair before the interval is judged",
        max: int(u32, 1, 10_000) = "10" => "measured runs of a pair at most",
    }
}

impl From<PlanParams> for Plan {
    fn from(p: PlanParams) -> Plan {
        Plan {
            repetitions: match (p.repetitions, p.order) {
                (Some(n), _) => Repetitions::Fixed(n),
                (None, Order::Sequential) => DEFAULT_SEQUENTIAL_ORDER_REPETITIONS,
                (None, _) => DEFAULT_REPETITIONS,
            },
            max_time: p.max_time,
            order: p.order,
            seed: p.seed,
            drop_caches: p.drop_caches,
            remount: p.remount,
            warmup: p.warmup,
            analysis: p.analysis,
            telemetry: p.telemetry,
            block_trace: p.block_trace,
            block_trace_max_rate: p.block_trace_max_rate,
            max_variants: p.max_variants,
            replica: 0,
        }
    }
}

impl Plan {
    pub fn to_json(&self) -> serde_json::Value {
        let mut plan = json!({
            "repetitions": self.repetitions.to_json(),
            "max_time_s": self.max_time.map(|d| d.as_secs_f64()),
            "order": self.order.name(),
            "seed": self.seed,
            "drop_caches": self.drop_caches,
            "remount": self.remount.name(),
            "warmup": self.warmup,
            "analysis": self.analysis.word(),
            "telemetry": self.telemetry,
            "block_trace": self.block_trace,
            "block_trace_max_rate": self.block_trace_max_rate,
        });
        if self.replica > 0 {
            plan["replica"] = json!(self.replica);
        }
        plan
    }
}

impl Experiment {
    /// Index of the baseline target: the one marked (the first variant of
    /// a swept one), else the first that a workload runs on (a target that
    /// only carries others is not measured), else the first.
    pub fn baseline(&self) -> usize {
        self.targets
            .iter()
            .position(|t| t.baseline)
            .or_else(|| {
                self.targets
                    .iter()
                    .position(|t| self.workloads.iter().any(|w| w.runs_on(t)))
            })
            .unwrap_or(0)
    }

    /// Target indices in the order they are provisioned: each after the
    /// target it stands on, otherwise as written. Teardown is the reverse.
    pub fn provision_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = Vec::with_capacity(self.targets.len());
        let mut placed = vec![false; self.targets.len()];
        fn place(exp: &Experiment, i: usize, placed: &mut [bool], order: &mut Vec<usize>) {
            if placed[i] {
                return;
            }
            placed[i] = true; // the parser refuses cycles; this only guards
            if let Some(c) = exp.targets[i].on {
                place(exp, c, placed, order);
            }
            order.push(i);
        }
        for i in 0..self.targets.len() {
            place(self, i, &mut placed, &mut order);
        }
        order
    }

    /// The workload whose directory the runs of workload `w` use: the
    /// first variant of its table that keeps the same files (one
    /// PostgreSQL cluster for every transaction count of a sweep), else
    /// `w` itself.
    pub fn files_of(&self, w: usize) -> usize {
        let me = &self.workloads[w];
        let Some(key) = me.config.kept_files() else {
            return w;
        };
        self.workloads
            .iter()
            .position(|o| o.family == me.family && o.config.kept_files().as_ref() == Some(&key))
            .unwrap_or(w)
    }

    /// The resolved experiment as JSON, stored with the campaign.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "description": self.description,
            "origin": self.origin,
            "plan": self.plan.to_json(),
            "targets": self.targets.iter().map(|t| {
                let mut j = json!({
                    "name": t.name, "kind": t.kind.name(), "baseline": t.baseline, "params": t.params.to_json(),
                    "family": t.family, "factors": t.factors, "on": t.on.map(|c| &self.targets[c].name),
                });
                // Said only when off, so that stored experiments of
                // targets that left it on read as before.
                if !t.caches {
                    j["caches"] = json!(false);
                }
                j
            }).collect::<Vec<_>>(),
            "workloads": self.workloads.iter().map(|w| json!({
                "name": w.name, "kind": w.kind.name(), "targets": w.only_targets, "shared": w.shared, "params": w.params.to_json(),
                "family": w.family, "factors": w.factors, "compare_levels": w.compare_levels,
                "equivalence_margin_pct": w.margin_pct,
                "capacity": w.capacity.as_ref().map(Capacity::to_json),
                "probe": w.probe_of.as_ref().map(ProbeOf::to_json),
            })).collect::<Vec<_>>(),
        })
    }

    /// Rough duration of the whole campaign, for `storlab check` and the
    /// ETA; saturates rather than overflows.
    pub fn estimate(&self) -> Duration {
        let runs_per_pair = self.plan.repetitions.min() + self.plan.warmup;
        let mut total = Duration::ZERO;
        for w in &self.workloads {
            let targets = self.targets.iter().filter(|t| w.runs_on(t)).count() as u32;
            let runs = targets.saturating_mul(runs_per_pair);
            total = total.saturating_add(w.config.estimate().saturating_mul(runs));
        }
        total
    }
}
