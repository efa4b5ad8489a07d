//! All progress output of a campaign goes through here, to stderr: a bar
//! with ETA on a terminal, plain lines otherwise, nothing with `--quiet`
//! except notes that change what the numbers mean.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::params::units::format_seconds;

pub struct Printer {
    quiet: bool,
    bar: Option<ProgressBar>,
    /// When the campaign started and its estimate, for the plain lines' ETA.
    started: Instant,
    estimate: Duration,
    /// The estimated share of the runs finished so far.
    done: Cell<Duration>,
}

/// Time left: the estimate still to go, scaled by how far the finished
/// runs took longer (or shorter) than estimated — through FUSE a workload
/// can take ten times its local estimate. `None` before anything finished.
pub fn time_left(estimate: Duration, done: Duration, elapsed: Duration) -> Option<Duration> {
    if done.is_zero() {
        return None;
    }
    let pace = elapsed.as_secs_f64() / done.as_secs_f64();
    Some(estimate.saturating_sub(done).mul_f64(pace))
}

impl Printer {
    pub fn new(quiet: bool) -> Printer {
        Printer {
            quiet,
            bar: None,
            started: Instant::now(),
            estimate: Duration::ZERO,
            done: Cell::new(Duration::ZERO),
        }
    }

    /// Starts a campaign of `total` weight units (estimated milliseconds).
    pub fn start(&mut self, runs: usize, estimate: Duration) {
        self.started = Instant::now();
        self.estimate = estimate;
        self.done.set(Duration::ZERO);
        if self.quiet {
            return;
        }
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(estimate.as_millis().max(1) as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} ETA {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        } else {
            errln!(
                "storlab: {runs} runs planned, about {}",
                format_seconds(estimate.as_secs_f64())
            );
        }
    }

    pub fn run_started(&self, index: usize, total: usize, label: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("[{}/{}] {label}", index + 1, total));
        }
    }

    /// Reports a finished run; `weight` is its share of the estimate.
    pub fn run_finished(
        &self,
        index: usize,
        total: usize,
        label: &str,
        outcome: &str,
        weight: Duration,
    ) {
        // A run's error can quote a program's stderr.
        let outcome = crate::foreign::visible(outcome);
        self.done.set(self.done.get() + weight);
        match &self.bar {
            Some(bar) => {
                bar.inc(weight.as_millis() as u64);
                bar.println(format!("[{}/{}] {label}: {outcome}", index + 1, total));
            }
            None if !self.quiet => {
                let left = time_left(self.estimate, self.done.get(), self.started.elapsed())
                    .filter(|_| index + 1 < total)
                    .map(|d| format!(" (about {} left)", format_seconds(d.as_secs_f64())))
                    .unwrap_or_default();
                errln!("[{}/{}] {label}: {outcome}{left}", index + 1, total)
            }
            None => {}
        }
    }

    /// A note the user should see even with --quiet.
    pub fn note(&self, message: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("note: {message}")),
            None => errln!("note: {message}"),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_follows_the_pace_of_the_finished_runs() {
        let s = Duration::from_secs;
        assert_eq!(time_left(s(100), Duration::ZERO, s(5)), None);
        // On estimate: what is left of the estimate.
        assert_eq!(time_left(s(100), s(20), s(20)), Some(s(80)));
        // Ten times slower than estimated (a FUSE target): ten times longer.
        assert_eq!(time_left(s(100), s(20), s(200)), Some(s(800)));
        // Past the estimate (adaptive plans estimate their maximum).
        assert_eq!(time_left(s(100), s(120), s(60)), Some(Duration::ZERO));
    }
}
