//! Which of fio's reporting groups ran at the same time.
//!
//! fio's JSON gives each entry of its `jobs` array a `groupid` but not when
//! it ran, and leaves flag options (`stonewall`, `new_group`) out of its
//! echo of the job options; the job file says it. A job with `stonewall`
//! (or `wait_for_previous`, or `wait_for`) starts after the jobs before it
//! have ended: a new phase. `new_group` alone starts a new reporting group
//! in the same phase: its jobs run alongside the group before. The clones of
//! `numjobs` are in their job's group and phase (fio clears `stonewall` on
//! them).
//!
//! fio's entries are matched to the job file's jobs by name, in order: one
//! per clone, or one per group under `group_reporting` (named after the
//! group's first job). A group's phase is its first job's. Not modelled:
//! `startdelay`, and a `wait_for` job that stays in the group of the jobs it
//! waits for (its group is placed in the phase of its first job).

use std::collections::BTreeMap;

use super::jobfile::JobInfo;

/// The phase (0, 1, …) of each group id in `entries` (fio's jobs array:
/// name and group id, in order), or why the job file's jobs do not match
/// them.
pub fn assign(jobs: &[JobInfo], entries: &[(&str, i64)]) -> Result<BTreeMap<i64, usize>, String> {
    let clones = clone_phases(jobs);
    let mut out = BTreeMap::new();
    let mut next = 0;
    for (i, &(name, group)) in entries.iter().enumerate() {
        let found = clones[next.min(clones.len())..]
            .iter()
            .position(|&(n, _)| n == name)
            .map(|k| k + next)
            .ok_or_else(|| {
                format!("fio's job #{i} `{name}` is not a job of the job file at that place")
            })?;
        out.entry(group).or_insert(clones[found].1);
        next = found + 1;
    }
    Ok(out)
}

/// Every job clone in fio's order, with its phase.
fn clone_phases(jobs: &[JobInfo]) -> Vec<(&str, usize)> {
    let mut phase = 0;
    let mut out = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        if j.waits && i > 0 {
            phase += 1;
        }
        for _ in 0..j.numjobs {
            out.push((j.name.as_str(), phase));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::jobfile::jobs;
    use super::*;

    fn phases(text: &str, entries: &[(&str, i64)]) -> Vec<(i64, usize)> {
        assign(&jobs(text), entries).unwrap().into_iter().collect()
    }

    #[test]
    fn stonewall_starts_a_phase_and_new_group_does_not() {
        let text = "[a]\nnumjobs=2\n[b]\nnew_group\n[c]\nstonewall\n[d]\nwait_for_previous\n";
        let entries = [("a", 0), ("a", 0), ("b", 1), ("c", 2), ("d", 3)];
        assert_eq!(phases(text, &entries), vec![(0, 0), (1, 0), (2, 1), (3, 2)]);
        // group_reporting: one entry per group, named after its first job.
        assert_eq!(
            phases(text, &[("a", 0), ("b", 1), ("c", 2), ("d", 3)]),
            vec![(0, 0), (1, 0), (2, 1), (3, 2)]
        );
    }

    #[test]
    fn stonewall_in_global_puts_every_job_in_its_own_phase() {
        let text = "[global]\nstonewall\n[w]\n[r]\n[r2]\n";
        assert_eq!(
            phases(text, &[("w", 0), ("r", 1), ("r2", 2)]),
            vec![(0, 0), (1, 1), (2, 2)]
        );
    }

    #[test]
    fn entries_the_job_file_does_not_have_are_said() {
        let err = assign(&jobs("[a]\n"), &[("a", 0), ("b", 1)]).unwrap_err();
        assert!(err.contains("#1 `b`"), "{err}");
    }
}
