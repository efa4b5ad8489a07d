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
/// Loop, ZFS and Gluster targets provisioned, run and torn down for real;
/// cleanup after SIGKILL; dangerous specs refused.
mod provision;
