//! storlab: a laboratory for storage experiments.
//!
//! An experiment file names targets (storage configurations), workloads and a
//! plan; storlab provisions each target, runs the workloads with sound
//! methodology, stores every run in SQLite and turns runs into verdicts.

pub mod metric;
pub mod report;
