//! CPU time of the calling thread, so each I/O thread accounts for exactly
//! its own work: the user/system split from getrusage(RUSAGE_THREAD), and
//! the total from CLOCK_THREAD_CPUTIME_ID. The split is scaled from
//! scheduler ticks and clamped to be monotonic, so over a short run it can
//! stay unchanged (0 s); the clock counts the scheduler's nanoseconds and
//! does not.

/// CPU seconds consumed so far by the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user_s: f64,
    pub sys_s: f64,
    /// User plus system, at nanosecond resolution.
    pub total_s: f64,
}

impl CpuTimes {
    pub fn thread_now() -> CpuTimes {
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: ru is a valid rusage to fill; RUSAGE_THREAD is Linux-specific and always valid there.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        if rc != 0 {
            return CpuTimes::default();
        }
        let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        let user_s = secs(ru.ru_utime);
        let sys_s = secs(ru.ru_stime);
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: ts is a valid timespec to fill; the clock id is a constant Linux knows.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        let total_s = if rc == 0 {
            ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
        } else {
            user_s + sys_s
        };
        CpuTimes {
            user_s,
            sys_s,
            total_s,
        }
    }

    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
            total_s: (self.total_s - earlier.total_s).max(0.0),
        }
    }

    pub fn plus(self, other: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: self.user_s + other.user_s,
            sys_s: self.sys_s + other.sys_s,
            total_s: self.total_s + other.total_s,
        }
    }
}
