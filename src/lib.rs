//! storlab: a laboratory for storage experiments.
//!
//! An experiment file names targets (storage configurations), workloads and a
//! plan; storlab provisions each target, runs the workloads with sound
//! methodology, stores every run in SQLite and turns runs into verdicts.

/// storlab's version with the git commit it was built from and its enabled
/// features, as `storlab --version` prints it and every campaign stores it.
pub const VERSION: &str = env!("STORLAB_VERSION_LONG");

#[macro_use]
pub mod console;

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod estimate;
pub mod experiment;
pub mod export;
pub mod fact;
pub mod foreign;
pub mod host;
pub mod measure;
pub mod metric;
pub mod params;
pub mod plan;
pub mod process;
pub mod progress;
pub mod provenance;
pub mod provision;
pub mod ranks;
pub mod report;
pub mod rounds;
pub mod runner;
pub mod search;
pub mod stats;
pub mod store;
pub mod targets;
#[cfg(test)]
mod testdata;
pub mod warning;
pub mod workload;
