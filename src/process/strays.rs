//! What a measured child leaves behind. A command may start processes that
//! outlive it — in its own process group (`daemon &`), or in a session of
//! their own (`setsid`, a double fork) — which keep files open and the
//! target busy, so that it cannot be unmounted. While a child runs storlab
//! is its descendants' subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant
//! orphaned then becomes storlab's child instead of init's, and once the
//! child has ended storlab kills and reaps every such process and their
//! descendants. A process counts as the child's leftover only if it became
//! storlab's child since the child started and it is in the child's
//! process group or in a session other than storlab's — which a program
//! storlab started itself never is.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How long to keep finding and killing strays before giving up.
const PATIENCE: Duration = Duration::from_secs(3);

/// Makes this process the subreaper of what the next child starts.
pub struct Adopter {
    before: HashSet<i32>,
}

/// A process's parent, process group and session.
#[derive(Debug, Clone, Copy)]
struct Family {
    ppid: i32,
    pgid: i32,
    sid: i32,
}

/// Every process's family, from /proc.
fn families() -> HashMap<i32, Family> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the command name: state, ppid, pgrp, session, …
        let f: Vec<i32> = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .skip(1)
                    .take(3)
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        if let [ppid, pgid, sid] = f[..] {
            out.insert(pid, Family { ppid, pgid, sid });
        }
    }
    out
}

fn children_of(me: i32, all: &HashMap<i32, Family>) -> HashSet<i32> {
    all.iter()
        .filter(|(_, f)| f.ppid == me)
        .map(|(p, _)| *p)
        .collect()
}

/// `root` and everything below it.
fn tree(root: i32, all: &HashMap<i32, Family>) -> Vec<i32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(all.iter().filter(|(_, f)| f.ppid == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// This process's session.
fn own_session() -> i32 {
    // SAFETY: getsid(0) has no preconditions.
    unsafe { libc::getsid(0) }
}

impl Adopter {
    /// Call right before spawning the child.
    pub fn start() -> Adopter {
        // SAFETY: prctl with integer arguments only.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        Adopter {
            before: children_of(std::process::id() as i32, &families()),
        }
    }

    /// Once the child is reaped: kills its process group (`group`), then
    /// every process orphaned to us since [`Adopter::start`] and their
    /// descendants, and reaps them. Returns how many processes it killed.
    pub fn sweep(self, group: i32) -> usize {
        let me = std::process::id() as i32;
        let mut killed: HashSet<i32> = HashSet::new();
        // SAFETY: kill has no memory preconditions; the group is our
        // child's (never 0: that would be storlab's own group).
        if group > 0 && unsafe { libc::kill(-group, libc::SIGKILL) } == 0 {
            killed.insert(-group);
        }
        let t0 = Instant::now();
        let mut quiet = 0;
        let session = own_session();
        while t0.elapsed() < PATIENCE && quiet < 3 {
            let all = families();
            let strays: Vec<i32> = children_of(me, &all)
                .difference(&self.before)
                .copied()
                .filter(|p| all[p].pgid == group || all[p].sid != session)
                .collect();
            if strays.is_empty() {
                quiet += 1;
            } else {
                quiet = 0;
            }
            for s in strays {
                for p in tree(s, &all) {
                    // SAFETY: as above; each pid descends from our child.
                    unsafe { libc::kill(p, libc::SIGKILL) };
                    killed.insert(p);
                }
                // SAFETY: reaps a child of ours without blocking.
                unsafe { libc::waitpid(s, std::ptr::null_mut(), libc::WNOHANG) };
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: as in `start`.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) };
        killed.remove(&-group);
        killed.len()
    }
}
