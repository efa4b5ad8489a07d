//! storlab's integration tests: the real binary on real directories and a
//! real tmpfs. One binary, one module per area.

#[macro_use]
mod util;

/// What survives a killed campaign, and what the next one cleans.
mod crash;
/// Malformed experiment files: one error line with file:line:column, exit 2.
mod experiment_errors;
/// Real runs of the io workload on directories and tmpfs, checked through the store.
mod io_runs;
/// The seed studies' workloads (matrix, smallfiles, tinywrites) through the real binary.
mod seed_workloads;
