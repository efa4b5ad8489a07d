//! The resolved experiment: what a valid file means, in typed form.

use std::time::Duration;

use serde_json::json;

use super::params::{ParamSpec, ParamType, Params};
use crate::targets::TargetKind;
use crate::workload::WorkloadKind;

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
    pub name: String,
    pub kind: TargetKind,
    pub baseline: bool,
    pub params: Params,
}

#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    pub name: String,
    pub kind: WorkloadKind,
    pub params: Params,
    /// Names of the targets this workload runs on; all when empty.
    pub only_targets: Vec<String>,
    /// Under MPI, every rank works in one shared directory instead of its own.
    pub shared: bool,
}

impl WorkloadSpec {
    pub fn runs_on(&self, target: &str) -> bool {
        self.only_targets.is_empty() || self.only_targets.iter().any(|t| t == target)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Interleaved,
    Randomized,
    Sequential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remount {
    Never,
    BetweenRuns,
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
}

impl Repetitions {
    pub fn min(self) -> u32 {
        match self {
            Repetitions::Fixed(n) => n,
            Repetitions::Adaptive { min, .. } => min,
        }
    }

    pub fn max(self) -> u32 {
        match self {
            Repetitions::Fixed(n) => n,
            Repetitions::Adaptive { max, .. } => max,
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
}

/// The `[plan]` table's parameters.
pub const PLAN_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "repetitions",
        ty: ParamType::Int { min: 1, max: 10_000 },
        default: Some("3"),
        help: "measured runs of every target-workload pair, or { min = 3, max = 20, until_ci = \"2%\" }",
    },
    ParamSpec {
        name: "max_time",
        ty: ParamType::Duration,
        default: None,
        help: "stop starting new runs after this long (adaptive plans say which pairs stopped on time)",
    },
    ParamSpec {
        name: "order",
        ty: ParamType::Choice(&["interleaved", "randomized", "sequential"]),
        default: Some("interleaved"),
        help: "interleaved rounds ABAB..., a seeded shuffle within each round, or all repetitions of a pair back to back",
    },
    ParamSpec {
        name: "seed",
        ty: ParamType::Int { min: 0, max: i64::MAX },
        default: Some("1"),
        help: "seed of the randomized order",
    },
    ParamSpec {
        name: "drop_caches",
        ty: ParamType::Bool,
        default: Some("true"),
        help: "sync and drop the page cache before every run (needs root)",
    },
    ParamSpec {
        name: "remount",
        ty: ParamType::Choice(&["never", "between-runs"]),
        default: Some("never"),
        help: "unmount and mount every mountable target before each run",
    },
    ParamSpec {
        name: "warmup",
        ty: ParamType::Int { min: 0, max: 1000 },
        default: Some("0"),
        help: "unmeasured runs of every pair before the measured ones",
    },
];

impl Plan {
    pub fn from_params(p: &Params) -> Plan {
        let order = match p.str("order") {
            Some("randomized") => Order::Randomized,
            Some("sequential") => Order::Sequential,
            _ => Order::Interleaved,
        };
        let remount = match p.str("remount") {
            Some("between-runs") => Remount::BetweenRuns,
            _ => Remount::Never,
        };
        Plan {
            repetitions: Repetitions::Fixed(p.int("repetitions").unwrap_or(3).max(1) as u32),
            max_time: p.duration("max_time"),
            order,
            seed: p.int("seed").unwrap_or(1) as u64,
            drop_caches: p.bool("drop_caches").unwrap_or(true),
            remount,
            warmup: p.int("warmup").unwrap_or(0).max(0) as u32,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "repetitions": self.repetitions.to_json(),
            "max_time_s": self.max_time.map(|d| d.as_secs_f64()),
            "order": format!("{:?}", self.order).to_lowercase(),
            "seed": self.seed,
            "drop_caches": self.drop_caches,
            "remount": match self.remount { Remount::Never => "never", Remount::BetweenRuns => "between-runs" },
            "warmup": self.warmup,
        })
    }
}

impl Experiment {
    /// Index of the baseline target: the one marked, else the first.
    pub fn baseline(&self) -> usize {
        self.targets.iter().position(|t| t.baseline).unwrap_or(0)
    }

    /// The resolved experiment as JSON, stored with the campaign.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "description": self.description,
            "origin": self.origin,
            "plan": self.plan.to_json(),
            "targets": self.targets.iter().map(|t| json!({
                "name": t.name, "kind": t.kind.name(), "baseline": t.baseline, "params": t.params.to_json(),
            })).collect::<Vec<_>>(),
            "workloads": self.workloads.iter().map(|w| json!({
                "name": w.name, "kind": w.kind.name(), "targets": w.only_targets, "shared": w.shared, "params": w.params.to_json(),
            })).collect::<Vec<_>>(),
        })
    }

    /// Rough duration of the whole campaign, for `storlab check` and the ETA.
    pub fn estimate(&self) -> Duration {
        let mut total = Duration::ZERO;
        for w in &self.workloads {
            let per_run = w.kind.estimate(&w.params);
            let targets = self.targets.iter().filter(|t| w.runs_on(&t.name)).count() as u32;
            total += per_run * targets * (self.plan.repetitions.min() + self.plan.warmup);
        }
        total
    }
}
