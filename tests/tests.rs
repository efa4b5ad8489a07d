//! storlab's integration tests: the real binary on real directories and a
//! real tmpfs. One binary, one module per area.

#[macro_use]
mod util;

/// The HTML report in a real headless Chromium.
mod browser;
/// A minimal DevTools client for the browser tests.
mod cdp;
/// What survives a killed campaign, and what the next one cleans.
mod crash;
/// The io_uring and mmap engines and open-loop rates.
mod engines;
/// Malformed experiment files: one error line with file:line:column, exit 2.
mod experiment_errors;
/// Real runs of the io workload on directories and tmpfs, checked through the store.
mod io_runs;
/// Verdicts, comparisons and the regression gate on real campaigns.
mod verdicts;
