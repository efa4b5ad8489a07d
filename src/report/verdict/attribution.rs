//! Where a workload's latency went, in words: "EVIDENCE: CONCLUSION
//! (WHY)", from the [`Finding`] the analysis decided
//! ([`crate::analysis::attribution`]): "p99 1.80 ms at the workload,
//! 1.70 ms at loop0: the device".

use crate::analysis::attribution::{Attribution, Finding, Why};
use crate::metric::format::format_ns;

/// The whole sentence.
pub(super) fn sentence(a: &Attribution) -> String {
    let w = format_ns(a.at_workload.p99);
    let evidence = match &a.finding {
        Finding::NoDeviceRequests => "no device requests".to_string(),
        Finding::CachedReads { top } => format!(
            "p99 {w} at the workload; {} was sent only {:.0} data request{}",
            top.device,
            top.requests,
            plural(top.requests == 1.0)
        ),
        Finding::FsyncsWaited { top, synced } => format!(
            "p99 {w} per operation at the workload, {} per fsync; {} at {}{} ({:.0} flushes in {} run{})",
            format_ns(synced.at_workload.p99),
            format_ns(top.latency.p99),
            top.device,
            synced
                .flush_p99
                .map(|f| format!(", its flushes {}", format_ns(f)))
                .unwrap_or_default(),
            synced.flushes,
            synced.runs,
            plural(synced.runs == 1)
        ),
        Finding::OffPath { top } | Finding::Device { top } | Finding::AboveDevice { top, .. } => {
            format!(
                "p99 {w} at the workload, {} at {}",
                format_ns(top.latency.p99),
                top.device
            )
        }
    };
    format!("{evidence}: {}{}", conclusion(a), why(&a.finding))
}

/// What the sentence concludes: "the device", "above the device", "the
/// writes went to the page cache, the fsyncs waited for vda"; the same
/// words for pairs that came out alike, whatever their figures.
pub(super) fn conclusion(a: &Attribution) -> String {
    match &a.finding {
        Finding::NoDeviceRequests | Finding::CachedReads { .. } => "the page cache".into(),
        Finding::FsyncsWaited { top, .. } => format!(
            "the writes went to the page cache, the fsyncs waited for {}",
            top.device
        ),
        Finding::OffPath { .. } => "not the device — its requests took longer than the workload waited, so they were off its path".into(),
        Finding::Device { .. } => "the device".into(),
        Finding::AboveDevice { .. } => "above the device".into(),
    }
}

/// What follows the conclusion, in brackets: why, where it is known.
fn why(f: &Finding) -> String {
    match f {
        Finding::OffPath { .. } => " (write-back, read-ahead or other processes' I/O)".into(),
        Finding::AboveDevice {
            why: Some(Why::Busy { process, pct }),
            ..
        } => {
            // A group's label (`kernel threads`, `other targets`) is plural.
            let whose = match process.ends_with('s') && process.contains(' ') {
                true => format!("{process}'"),
                false => format!("{process}'s"),
            };
            format!(" ({whose} CPU was {pct:.0}% of a core)")
        }
        Finding::AboveDevice {
            why: Some(Why::OthersCpu { pct }),
            ..
        } => format!(
            " (other processes used {pct:.0}% of the host's CPU: the workload waited for a core)"
        ),
        _ => String::new(),
    }
}

fn plural(one: bool) -> &'static str {
    match one {
        true => "",
        false => "s",
    }
}

#[cfg(test)]
mod tests;
