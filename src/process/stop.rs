//! The stop flag raised by SIGINT, SIGTERM and SIGHUP (an ssh session that
//! drops): workloads poll it (one relaxed atomic load) and end their run
//! early; the runner then tears down. A closed stderr raises it too
//! (see [`crate::console`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The signals that stop a campaign, each handled alike.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Stop signals this process has received, from any handler: an external
/// command compares it before and after to see that one arrived while it
/// ran, so that the first Ctrl-C ends it (teardown commands started after
/// the signal run to their end).
static SIGNALS: AtomicUsize = AtomicUsize::new(0);

/// The stop flag of the campaign this process runs, once its handlers are
/// installed.
static RUNNING: Mutex<Option<StopFlag>> = Mutex::new(None);

/// How many stop signals this process has received so far.
pub fn signals_received() -> usize {
    SIGNALS.load(Ordering::SeqCst)
}

/// Whether a campaign's signal handlers are installed in this process.
pub fn handlers_installed() -> bool {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Whether the running campaign's stop flag is raised (a signal, a closed
/// stderr).
pub fn running_is_stopped() -> bool {
    RUNNING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .is_some_and(StopFlag::is_raised)
}

/// Interrupts the running campaign, if there is one, as a signal would
/// (without counting as one): what a closed stderr does.
pub fn interrupt_running() {
    let running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(flag) = running.as_ref() {
        flag.raise();
    }
}

#[derive(Debug, Clone, Default)]
pub struct StopFlag {
    raised: Arc<AtomicBool>,
    signals: Arc<AtomicUsize>,
}

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Raises the flag on SIGINT, SIGTERM and SIGHUP. A second signal kills
    /// the child process group running, if any, and exits at once (status
    /// 130), leaving recorded runs in the store.
    pub fn install_signal_handlers(&self) -> std::io::Result<()> {
        *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = Some(self.clone());
        crate::console::when_reader_gone(interrupt_running);
        for sig in STOP_SIGNALS {
            let raised = self.raised.clone();
            let signals = self.signals.clone();
            // SAFETY: the handler only touches atomics and calls kill and _exit, all async-signal-safe.
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    SIGNALS.fetch_add(1, Ordering::SeqCst);
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
