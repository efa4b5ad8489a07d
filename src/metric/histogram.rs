//! How latencies are recorded: HDR histograms of nanoseconds from 1 ns to
//! an hour at three significant digits, the same for every run, so that
//! they merge exactly across threads, ranks and runs (the measuring side
//! records into them, the analysis merges what was stored).

use hdrhistogram::Histogram;

/// Highest trackable latency: one hour in nanoseconds.
pub const MAX_NS: u64 = 3_600_000_000_000;

/// A histogram for latencies in nanoseconds with three significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("constant bounds are valid")
}
