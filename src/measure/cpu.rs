//! CPU time of the calling thread (getrusage RUSAGE_THREAD), so each I/O
//! thread accounts for exactly its own work.

/// User and system CPU seconds consumed so far by the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user_s: f64,
    pub sys_s: f64,
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
        CpuTimes {
            user_s: secs(ru.ru_utime),
            sys_s: secs(ru.ru_stime),
        }
    }

    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
        }
    }

    pub fn plus(self, other: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: self.user_s + other.user_s,
            sys_s: self.sys_s + other.sys_s,
        }
    }
}
