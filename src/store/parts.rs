//! What of each run a read command asks the store for.

/// What of each run a reader needs: a history reads one figure of every
/// run, a report everything; what is not asked for is not read from the
/// store (and reads as empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    /// Only the figures of these catalogue names (with any labels);
    /// `None`: every figure.
    pub metrics: Option<Vec<String>>,
    /// Figures of these catalogue names (with any labels) read per pair
    /// and key into [`crate::store::CampaignData::columns`], not into the
    /// runs: what only a pair's statistics read (a report's telemetry).
    pub columns: Vec<String>,
    /// Those of the runs of these workloads only (the variants a report
    /// lays out); `None`: of every run.
    pub columns_of: Option<Vec<String>>,
    pub series: bool,
    pub histograms: bool,
    pub warnings: bool,
    pub facts: bool,
    pub ranks: bool,
}

impl Parts {
    /// Everything every run recorded.
    pub fn all() -> Parts {
        Parts {
            metrics: None,
            columns: Vec::new(),
            columns_of: None,
            series: true,
            histograms: true,
            warnings: true,
            facts: true,
            ranks: true,
        }
    }

    /// What the terminal's summary reads (`show`, `run`'s closing
    /// summary): everything but the series, which only the report's
    /// charts draw.
    pub fn terminal() -> Parts {
        Parts {
            series: false,
            ..Parts::all()
        }
    }

    /// Only the figures named (`tps`, `ops_per_s`), with any labels.
    pub fn figures(names: &[String]) -> Parts {
        Parts {
            metrics: Some(names.to_vec()),
            columns: Vec::new(),
            columns_of: None,
            series: false,
            histograms: false,
            warnings: false,
            facts: false,
            ranks: false,
        }
    }
}

/// The series a report draws, read after the rest of a campaign
/// ([`crate::store::Store::read_series`]): every series of a few runs
/// (the one a chart of a pair's course picks), and of every run the
/// series of the figures named (a workload's primary metric, drawn for
/// each measured run). 10^5 runs keep 8 series each; a report draws a
/// handful of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Drawn {
    /// Runs (by id) whose every series is read.
    pub whole: Vec<i64>,
    /// Catalogue names whose series (with any labels) every run reads.
    pub named: Vec<String>,
    /// The workloads whose runs read the `named` series (a report lays
    /// out some variants); `None`: every workload's.
    pub of: Option<Vec<String>>,
}
