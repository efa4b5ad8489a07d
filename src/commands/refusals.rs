//! `check`'s account of what `run` would refuse on this host — a kernel
//! without the NFS client, a program not installed, root that a
//! provisioning target needs — judged by the runner's own preflight
//! ([`crate::runner::refusals`]), so that the two commands never disagree.

/// Prints each reason on stderr, `found` (why a found file may not run)
/// first; whether there was any.
pub fn print(exp: &crate::experiment::Experiment, found: Option<String>) -> bool {
    let mut all: Vec<anyhow::Error> = found.into_iter().map(anyhow::Error::msg).collect();
    all.extend(crate::runner::refusals(exp));
    if all.is_empty() {
        return false;
    }
    errln!(
        "error: `storlab run` would refuse this experiment on this host ({} reason{}):",
        all.len(),
        if all.len() == 1 { "" } else { "s" }
    );
    for e in &all {
        errln!("  - {e:#}");
    }
    true
}
