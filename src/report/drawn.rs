//! Which series a report draws, so that only those are read from the
//! store ([`crate::store::Store::read_series`]): a campaign of 10^5 runs
//! keeps 8 series a run, and its report charts a handful. Kept beside the
//! sections that draw them: the telemetry section's course of a pair (its
//! first measured run that recorded telemetry), the latency attribution's
//! (its first measured run), and "Over time", which draws the primary
//! metric's series and those asked for (`--series`) of every measured
//! run. A section that draws another series must say so here; the report
//! built this way is checked against the one read whole
//! (`every_row_tests`).

use std::collections::HashSet;

use super::outline::Options;
use crate::analysis::chosen;
use crate::metric::catalogue as m;
use crate::store::{CampaignData, Drawn};

/// The series the report of campaign `c` (read without series) draws.
pub fn drawn(c: &CampaignData, options: &Options) -> Drawn {
    let mut whole = Vec::new();
    let mut seen: HashSet<(&str, &str, bool)> = HashSet::new();
    for r in c.runs.iter().filter(|r| !r.warmup && r.status == "ok") {
        let pair = (r.workload.as_str(), r.target.as_str());
        let mut first = seen.insert((pair.0, pair.1, false));
        if r.metric(&m::TELEMETRY_CPU_PCT).is_some() {
            first |= seen.insert((pair.0, pair.1, true));
        }
        if first {
            whole.push(r.id);
        }
    }
    let mut named: Vec<String> = options.series.clone();
    for w in &c.workloads {
        named.push(w.primary_metric.clone());
        named.extend(chosen::choose(w).primary.map(|k| k.name));
    }
    named.sort();
    named.dedup();
    Drawn { whole, named }
}
