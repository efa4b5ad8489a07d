//! What a campaign was, as it was stored: its identity, provenance, host,
//! plan, and its targets and workloads with their parameters and what was
//! read back from them — the facts a report names beside the figures,
//! read once from the campaign's data so that the layout never reads the
//! store. The records are the store's own (plain data); the typed views
//! of stored parameters ([`StoredPlan`], [`Requested`]) read them.

use crate::fact::{Environment, TargetFacts};
use crate::store::{CampaignData, TargetRow};

pub use crate::experiment::sweep::Factor;
pub use crate::store::stored::{Repetitions, Requested, StoredPlan};
pub use crate::store::{CampaignFacts, CampaignRow, PairStop};

/// A campaign as stored, without its runs.
#[derive(Debug, Clone, Default)]
pub struct About {
    pub campaign: CampaignRow,
    /// UUID, tags, versions, host facts, import record.
    pub facts: CampaignFacts,
    /// The host the campaign ran on.
    pub environment: Environment,
    pub plan: StoredPlan,
    /// Why each pair stopped taking runs.
    pub stops: Vec<PairStop>,
    /// In the experiment's order.
    pub targets: Vec<Target>,
    /// In the experiment's order.
    pub workloads: Vec<Workload>,
    /// Runs stored: every one, measured (not warm-up), with caches dropped
    /// before them, remounted before them.
    pub runs: RunCounts,
}

/// A target as stored.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub name: String,
    pub kind: String,
    /// Its parameters as stored (the resolved experiment).
    pub params: serde_json::Value,
    /// What it asked for that is checked against what was read back.
    pub requested: Requested,
    /// What was read back once it was provisioned.
    pub facts: TargetFacts,
    /// The `[[target]]` table it is a variant of, and its swept values.
    pub family: String,
    pub factors: Vec<Factor>,
    /// Whether any run was made on it (failed ones too): not so a Gluster
    /// volume that only carries the VM disks the runs used.
    pub ran: bool,
}

/// A workload as stored.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    pub name: String,
    pub kind: String,
    /// Its parameters as stored (the resolved experiment).
    pub params: serde_json::Value,
    /// The `[[workload]]` table it is a variant of, and its swept values.
    pub family: String,
    pub factors: Vec<Factor>,
}

/// How many runs the campaign stored, by what was done around them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunCounts {
    pub all: usize,
    pub measured: usize,
    pub caches_dropped: usize,
    pub remounted: usize,
}

impl Target {
    pub fn of(t: &TargetRow) -> Target {
        Target {
            name: t.name.clone(),
            kind: t.kind.clone(),
            params: t.params.clone(),
            requested: t.requested(),
            facts: t.read_back(),
            family: t.family.clone(),
            factors: t.factors.clone(),
            ran: false,
        }
    }
}

impl About {
    pub fn of(c: &CampaignData) -> About {
        let runs = &c.runs;
        About {
            campaign: c.campaign.clone(),
            facts: c.facts.clone(),
            environment: Environment::read(&c.environment),
            plan: c.plan(),
            stops: c.stops.clone(),
            targets: c
                .targets
                .iter()
                .map(|t| Target {
                    ran: runs.iter().any(|r| r.target == t.name),
                    ..Target::of(t)
                })
                .collect(),
            workloads: c
                .workloads
                .iter()
                .map(|w| Workload {
                    name: w.name.clone(),
                    kind: w.kind.clone(),
                    params: w.params.clone(),
                    family: w.family.clone(),
                    factors: w.factors.clone(),
                })
                .collect(),
            runs: RunCounts {
                all: runs.len(),
                measured: runs.iter().filter(|r| !r.warmup).count(),
                caches_dropped: runs.iter().filter(|r| r.caches_dropped).count(),
                remounted: runs.iter().filter(|r| r.remounted).count(),
            },
        }
    }

    /// The position of target `name` in the experiment (0 when unknown):
    /// its colour in every chart.
    pub fn target_index(&self, name: &str) -> usize {
        self.targets
            .iter()
            .position(|t| t.name == name)
            .unwrap_or(0)
    }
}
