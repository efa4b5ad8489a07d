//! The warning catalogue: every kind of warning a run or a campaign can
//! carry, with its stable name (stored, exported), the words people read,
//! and whether it is a *caveat*: a sign that the run measured something
//! other than what it meant to (memory instead of the device, a sync that
//! reached no device, a CPU, a busy host, a target that degraded), which a
//! verdict resting on that run must carry.
//!
//! A [`Warning`] is a kind and the sentence that gives its evidence. Code
//! decides by kind, never by parsing the text; the text is for people.
//! Stores written before warnings had kinds are classified once, by the
//! sentence's opening words ([`WarningKind::classify_legacy`]).

use serde::{Deserialize, Serialize};

// The thresholds at which the telemetry's validity checks raise their
// kinds (`crate::measure::telemetry::checks`), which the analysis reads
// back when it says how far past them the runs went.

/// Below this share of the workload's reads delivered by the device, the
/// reads came from memory.
pub const PAGE_CACHE_RATIO: f64 = 0.10;
/// A thread this busy (% of a core), or this long running or waiting
/// for a CPU, bounds the run: it is CPU-bound.
pub const CPU_BOUND_PCT: f64 = 90.0;
/// Other processes' share of the host's CPU (%) that makes a noisy host.
pub const NOISY_OTHERS_PCT: f64 = 10.0;
/// Hypervisor steal (% of the host's CPU) that makes a noisy host.
pub const NOISY_STEAL_PCT: f64 = 5.0;

/// What a warning is about. Names are stable snake_case: they are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// Reads the device did not deliver: the page cache served them.
    PageCache,
    /// A working set the page cache holds, read more than once over.
    WorkingSetInRam,
    /// A working set the ZFS ARC holds.
    WorkingSetInArc,
    /// A pgbench database that fits in shared_buffers.
    DatabaseInSharedBuffers,
    /// The two sides of a verdict read mostly from different layers of
    /// their stacks (one from a cache, the other from its device): said
    /// of a verdict by the analysis, never of a run.
    ServedByDifferentLayers,
    /// Writes still dirty in memory when the run ended.
    UnflushedWrites,
    /// The workload synced, but no flush request reached any device.
    DurabilityNotMeasured,
    /// A thread at the limit of its core.
    CpuBound,
    /// Other processes or the hypervisor took the host's CPU.
    NoisyHost,
    /// The target degraded during the run (a brick offline, a pool not
    /// ONLINE, a serving daemon restarted).
    DegradedTarget,
    /// sync(2) also flushed what other processes left dirty.
    SyncFlushedOthers,
    /// An open-loop rate the system could not hold.
    RateNotHeld,
    /// A steady-state criterion not met within the run.
    SteadyStateNotReached,
    /// Caches were not dropped before runs that asked for it.
    CachesNotDropped,
    /// A run that failed or was interrupted.
    RunFailed,
    /// Fewer measured runs than an interval needs.
    FewRuns,
    /// A comparison that neither side won, with the runs that would settle it.
    Inconclusive,
    /// An interval wider than the resolution a reviewer asks for.
    Imprecise,
    /// Runs far from the others (modified z-score).
    Outlier,
    /// A first measured run apart from others that agree.
    FirstRunApart,
    /// A requested setting that did not take, or that the baseline already had.
    Setting,
    /// Two campaigns compared although they did not run alike.
    Unlike,
    /// What a workload says of its own run (fio's messages, a replaced
    /// option, a command's stray processes, the server's counters).
    Note,
}

/// Where a kind of warning belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The run measured something else than it meant to: a caveat.
    Validity,
    /// Runs that failed.
    Failure,
    /// What the numbers can and cannot say (n, spread, outliers).
    Statistics,
    /// What was asked of a target against what it got.
    Setup,
    /// A workload's own remark.
    Note,
}

impl WarningKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [WarningKind; 23] = [
        WarningKind::RunFailed,
        WarningKind::DegradedTarget,
        WarningKind::DurabilityNotMeasured,
        WarningKind::PageCache,
        WarningKind::WorkingSetInRam,
        WarningKind::WorkingSetInArc,
        WarningKind::DatabaseInSharedBuffers,
        WarningKind::ServedByDifferentLayers,
        WarningKind::UnflushedWrites,
        WarningKind::CachesNotDropped,
        WarningKind::SyncFlushedOthers,
        WarningKind::CpuBound,
        WarningKind::NoisyHost,
        WarningKind::RateNotHeld,
        WarningKind::SteadyStateNotReached,
        WarningKind::FewRuns,
        WarningKind::Inconclusive,
        WarningKind::Imprecise,
        WarningKind::Outlier,
        WarningKind::FirstRunApart,
        WarningKind::Setting,
        WarningKind::Unlike,
        WarningKind::Note,
    ];

    /// The stable name stored and exported.
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::PageCache => "page_cache",
            WarningKind::WorkingSetInRam => "working_set_in_ram",
            WarningKind::WorkingSetInArc => "working_set_in_arc",
            WarningKind::DatabaseInSharedBuffers => "database_in_shared_buffers",
            WarningKind::ServedByDifferentLayers => "served_by_different_layers",
            WarningKind::UnflushedWrites => "unflushed_writes",
            WarningKind::DurabilityNotMeasured => "durability_not_measured",
            WarningKind::CpuBound => "cpu_bound",
            WarningKind::NoisyHost => "noisy_host",
            WarningKind::DegradedTarget => "degraded_target",
            WarningKind::SyncFlushedOthers => "sync_flushed_others",
            WarningKind::RateNotHeld => "rate_not_held",
            WarningKind::SteadyStateNotReached => "steady_state_not_reached",
            WarningKind::CachesNotDropped => "caches_not_dropped",
            WarningKind::RunFailed => "run_failed",
            WarningKind::FewRuns => "few_runs",
            WarningKind::Inconclusive => "inconclusive",
            WarningKind::Imprecise => "imprecise",
            WarningKind::Outlier => "outlier",
            WarningKind::FirstRunApart => "first_run_apart",
            WarningKind::Setting => "setting",
            WarningKind::Unlike => "unlike",
            WarningKind::Note => "note",
        }
    }

    /// The kind of a stored name; `None` for a name this storlab does not
    /// know (a newer store's).
    pub fn from_name(name: &str) -> Option<WarningKind> {
        WarningKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The words a reader sees, as a heading for warnings of this kind
    /// ("page cache", "durability not measured").
    pub fn label(self) -> &'static str {
        match self {
            WarningKind::PageCache => "page cache",
            WarningKind::WorkingSetInRam => "working set in RAM",
            WarningKind::WorkingSetInArc => "working set in the ARC",
            WarningKind::DatabaseInSharedBuffers => "database in shared_buffers",
            WarningKind::ServedByDifferentLayers => "served by different layers",
            WarningKind::UnflushedWrites => "unflushed writes",
            WarningKind::DurabilityNotMeasured => "durability not measured",
            WarningKind::CpuBound => "CPU-bound",
            WarningKind::NoisyHost => "noisy host",
            WarningKind::DegradedTarget => "degraded target",
            WarningKind::SyncFlushedOthers => "sync(2) flushed others' data",
            WarningKind::RateNotHeld => "rate not held",
            WarningKind::SteadyStateNotReached => "steady state not reached",
            WarningKind::CachesNotDropped => "caches not dropped",
            WarningKind::RunFailed => "failed runs",
            WarningKind::FewRuns => "too few runs",
            WarningKind::Inconclusive => "inconclusive",
            WarningKind::Imprecise => "imprecise",
            WarningKind::Outlier => "outliers",
            WarningKind::FirstRunApart => "first run apart",
            WarningKind::Setting => "requested setting",
            WarningKind::Unlike => "not like for like",
            WarningKind::Note => "note",
        }
    }

    pub fn category(self) -> Category {
        match self {
            WarningKind::PageCache
            | WarningKind::WorkingSetInRam
            | WarningKind::WorkingSetInArc
            | WarningKind::DatabaseInSharedBuffers
            | WarningKind::ServedByDifferentLayers
            | WarningKind::UnflushedWrites
            | WarningKind::DurabilityNotMeasured
            | WarningKind::CpuBound
            | WarningKind::NoisyHost
            | WarningKind::DegradedTarget
            | WarningKind::SyncFlushedOthers
            | WarningKind::RateNotHeld
            | WarningKind::SteadyStateNotReached
            | WarningKind::CachesNotDropped => Category::Validity,
            WarningKind::RunFailed => Category::Failure,
            WarningKind::FewRuns
            | WarningKind::Inconclusive
            | WarningKind::Imprecise
            | WarningKind::Outlier
            | WarningKind::FirstRunApart => Category::Statistics,
            WarningKind::Setting | WarningKind::Unlike => Category::Setup,
            WarningKind::Note => Category::Note,
        }
    }

    /// Whether a verdict resting on a run with this warning must say so.
    pub fn is_caveat(self) -> bool {
        self.category() == Category::Validity
    }

    /// The kind of a warning stored before warnings had kinds, from the
    /// words its sentence opened with (they named the kind); [`Note`] when
    /// none matches. Only for reading older stores and spools.
    ///
    /// [`Note`]: WarningKind::Note
    pub fn classify_legacy(text: &str) -> WarningKind {
        const OPENINGS: [(&str, WarningKind); 17] = [
            ("page cache:", WarningKind::PageCache),
            ("working set in RAM:", WarningKind::WorkingSetInRam),
            ("working set in the ARC:", WarningKind::WorkingSetInArc),
            (
                "database in shared_buffers:",
                WarningKind::DatabaseInSharedBuffers,
            ),
            ("unflushed writes:", WarningKind::UnflushedWrites),
            (
                "durability not measured",
                WarningKind::DurabilityNotMeasured,
            ),
            ("CPU-bound:", WarningKind::CpuBound),
            ("noisy host:", WarningKind::NoisyHost),
            ("degraded target", WarningKind::DegradedTarget),
            ("sync(2) flushed others", WarningKind::SyncFlushedOthers),
            ("pgbench did not hold rate", WarningKind::RateNotHeld),
            (
                "steady state not reached",
                WarningKind::SteadyStateNotReached,
            ),
            ("caches were not dropped", WarningKind::CachesNotDropped),
            ("too few measured runs", WarningKind::FewRuns),
            (
                "inconclusive against the baseline",
                WarningKind::Inconclusive,
            ),
            ("imprecise:", WarningKind::Imprecise),
            ("outliers (", WarningKind::Outlier),
        ];
        // Campaign-level lines open with the runs they concern:
        // `run 7 (w on t): page cache: …`.
        let body = match text.split_once("): ") {
            Some((head, rest)) if head.starts_with("run") => rest,
            _ => text,
        };
        OPENINGS
            .iter()
            .find(|(opening, _)| body.starts_with(opening))
            .map(|(_, kind)| *kind)
            .unwrap_or(WarningKind::Note)
    }
}

/// One warning: its kind and the sentence with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Warning {
    pub kind: WarningKind,
    pub text: String,
}

impl Warning {
    pub fn new(kind: WarningKind, text: impl Into<String>) -> Warning {
        Warning {
            kind,
            text: text.into(),
        }
    }

    /// A workload's own remark.
    pub fn note(text: impl Into<String>) -> Warning {
        Warning::new(WarningKind::Note, text)
    }

    pub fn is_caveat(&self) -> bool {
        self.kind.is_caveat()
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<&str> = WarningKind::ALL.iter().map(|k| k.name()).collect();
        for k in WarningKind::ALL {
            assert_eq!(WarningKind::from_name(k.name()), Some(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WarningKind::ALL.len());
        assert_eq!(WarningKind::from_name("from_the_future"), None);
    }

    #[test]
    fn older_sentences_are_classified_by_their_opening() {
        let cases = [
            (
                "page cache: vda delivered 0 B of the 1 GiB read",
                WarningKind::PageCache,
            ),
            (
                "noisy host: other processes used 40.0%",
                WarningKind::NoisyHost,
            ),
            (
                "run 7 (seq on cwd): CPU-bound: a thread of storlab at 99%",
                WarningKind::CpuBound,
            ),
            (
                "runs 3, 5 (oltp on ext4, 2 runs): unflushed writes: of the 1 GiB",
                WarningKind::UnflushedWrites,
            ),
            ("fio said: something", WarningKind::Note),
            ("ext4: noatime was asked for", WarningKind::Note),
        ];
        for (text, kind) in cases {
            assert_eq!(WarningKind::classify_legacy(text), kind, "{text}");
        }
    }

    #[test]
    fn validity_kinds_are_the_caveats() {
        assert!(WarningKind::PageCache.is_caveat());
        assert!(WarningKind::DurabilityNotMeasured.is_caveat());
        assert!(WarningKind::NoisyHost.is_caveat());
        assert!(!WarningKind::Outlier.is_caveat());
        assert!(!WarningKind::Note.is_caveat());
        assert!(!WarningKind::RunFailed.is_caveat());
    }
}
