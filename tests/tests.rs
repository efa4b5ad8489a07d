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
/// pgbench on a PostgreSQL cluster storlab starts and stops (or by dsn).
mod pgbench_runs;
/// The embedded SQLite TPC-B-like workload and its consistency invariant.
mod sqlite_oltp_runs;
