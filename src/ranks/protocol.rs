//! What the ranks say to each other, encoded as JSON bytes for
//! [`super::Ranks`]: the opening of a job, rank 0's instruction before each
//! run, and each rank's report after it, whose figures travel as a
//! [`WireOutput`].

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

pub use crate::measure::wire::WireOutput;
use crate::provision::client::ClientMount;

/// Rank 0's first word: the experiment every rank runs, or why there is none.
#[derive(Debug, Serialize, Deserialize)]
pub enum Opening {
    /// The experiment's text, parsed by every rank (`origin` resolves
    /// relative paths, so the files it names must exist on every host).
    Experiment {
        origin: String,
        source: String,
        /// Rank 0's storlab version: every rank must run the same one.
        version: String,
    },
    Abort,
}

/// Each rank's answer to the opening.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hello {
    pub host: String,
    pub error: Option<String>,
}

/// Rank 0's decision after the hellos: go, with every rank's host, or not.
#[derive(Debug, Serialize, Deserialize)]
pub struct Start {
    pub go: bool,
    pub hosts: Vec<String>,
}

/// Rank 0's instruction before each run, and around the campaign's runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Instruction {
    /// Before the first run: the first rank of each host other than rank
    /// 0's mounts each target that has a client mount (`None`: a target
    /// clients do not mount); every rank answers with its error, if any.
    Mount(Vec<Option<ClientMount>>),
    Run(RunOrder),
    /// After the last run, before rank 0 tears the targets down: undo what
    /// `Mount` did; every rank answers with its error, if any.
    Unmount,
    /// The campaign is over (finished, interrupted or failed): exit.
    Over,
}

/// One run, as every rank must carry it out.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOrder {
    pub target: usize,
    pub workload: usize,
    /// The run's directory on rank 0's host; each rank works in `rank-K`
    /// inside it (the same path on every host).
    pub dir: PathBuf,
    pub run_seed: u64,
    /// The run's 0-based position in the campaign.
    pub position: u32,
    /// The raw device of a `block` target, which the workload runs on
    /// instead of files in `dir` (never under MPI).
    #[serde(default)]
    pub device: Option<PathBuf>,
}

/// What one rank reports after a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: usize,
    pub host: String,
    /// `ok`, `failed`, `interrupted`, or `skipped` when another rank's
    /// failure kept this one from running.
    pub status: String,
    pub error: Option<String>,
    /// Seconds from the start barrier to the end of this rank's run.
    pub done_s: Option<f64>,
    pub output: Option<WireOutput>,
}

pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("storlab's messages always serialize")
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| anyhow!("a malformed message between ranks: {e}"))
}
