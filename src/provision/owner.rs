//! Which process owns something storlab made: its pid and the time the
//! kernel started it (field 22 of `/proc/PID/stat`, in clock ticks since
//! boot). A pid alone is not an owner: pids are reused, so a working
//! directory or a journal whose pid now belongs to another process must not
//! count as alive. The start time tells the two apart.

use serde::{Deserialize, Serialize};

use crate::process::stat;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// Start time in clock ticks since boot; 0 when it could not be read.
    pub start: u64,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start: start_of(pid).unwrap_or(0),
        }
    }

    /// Whether this very process still runs (same pid, same start time, not
    /// a zombie). An owner whose start time was not recorded counts as alive
    /// while its pid exists, the cautious answer.
    pub fn is_alive(&self) -> bool {
        match stat::of(self.pid) {
            None => false,
            Some(s) if s.zombie() => false,
            Some(s) => self.start == 0 || s.start == self.start,
        }
    }
}

/// The start time of `pid`, if it runs.
pub fn start_of(pid: u32) -> Option<u64> {
    stat::of(pid).map(|s| s.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = Owner::me();
        assert!(me.start > 0);
        assert!(me.is_alive());
        let reused = Owner {
            pid: me.pid,
            start: me.start + 1,
        };
        assert!(!reused.is_alive(), "same pid, other start: another process");
        let gone = Owner {
            pid: u32::MAX - 1,
            start: 1,
        };
        assert!(!gone.is_alive());
    }
}
