//! The stop flag raised by SIGINT/SIGTERM: workloads poll it (one relaxed
//! atomic load) and end their run early; the runner then tears down.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct StopFlag {
    raised: Arc<AtomicBool>,
    signals: Arc<AtomicUsize>,
}

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Raises the flag on SIGINT and SIGTERM. A second signal kills the
    /// child process group running, if any, and exits at once (status 130),
    /// leaving recorded runs in the store.
    pub fn install_signal_handlers(&self) -> std::io::Result<()> {
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let raised = self.raised.clone();
            let signals = self.signals.clone();
            // SAFETY: the handler only touches atomics and calls kill and _exit, all async-signal-safe.
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    if signals.fetch_add(1, Ordering::SeqCst) >= 1 {
                        let group = super::child::RUNNING_GROUP.load(Ordering::SeqCst);
                        if group > 0 {
                            libc::kill(-group, libc::SIGKILL);
                        }
                        libc::_exit(130);
                    }
                    raised.store(true, Ordering::SeqCst);
                })?;
            }
        }
        Ok(())
    }

    pub fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
    }

    #[inline]
    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Relaxed)
    }

    /// The underlying flag, for hot loops that poll it directly.
    pub fn as_atomic(&self) -> &AtomicBool {
        &self.raised
    }
}
