//! Which series the analysis of a campaign follows over time, so that only
//! those are read from the store ([`crate::store::Store::read_series`]): a
//! campaign of 10^5 runs keeps 8 series a run, and its report charts a
//! handful — the telemetry's course of a pair (its first measured run that
//! recorded telemetry, [`super::telemetry`]), the latency attribution's
//! (its first measured run, [`super::attribution`]), and the timelines of
//! [`super::course`]: the primary metric's series and those asked for
//! (`--series`) of every measured run. A part of the analysis that follows
//! another series must say so here; the analysis made this way is checked
//! against the one read whole (`every_row_tests`).

use std::collections::HashSet;

use super::campaign::{laid_out, Options};
use super::chosen;
use crate::metric::catalogue as m;
use crate::store::{CampaignData, Drawn};

/// The series the analysis of campaign `c` (read without series) follows.
/// Of the workloads the report lays out only
/// ([`super::laid_out`]): the others have no chart.
pub fn drawn(c: &CampaignData, options: &Options) -> Drawn {
    let laid_out = laid_out(&c.workloads, options);
    let mut whole = Vec::new();
    let mut seen: HashSet<(&str, &str, bool)> = HashSet::new();
    let measured = c.runs.iter().filter(|r| !r.warmup && r.status == "ok");
    for r in measured.filter(|r| laid_out.shows(&r.workload)) {
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
    let of = laid_out.only(&c.workloads);
    Drawn { whole, named, of }
}
