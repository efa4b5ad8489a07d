//! All progress output of a campaign goes through here, to stderr: a bar
//! with ETA on a terminal, plain lines otherwise, nothing with `--quiet`
//! except notes that change what the numbers mean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Printer {
    quiet: bool,
    bar: Option<ProgressBar>,
}

impl Printer {
    pub fn new(quiet: bool) -> Printer {
        Printer { quiet, bar: None }
    }

    /// Starts a campaign of `total` weight units (estimated milliseconds).
    pub fn start(&mut self, runs: usize, estimate: Duration) {
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
            eprintln!(
                "storlab: {runs} runs planned, about {}",
                crate::experiment::units::format_seconds(estimate.as_secs_f64())
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
        match &self.bar {
            Some(bar) => {
                bar.inc(weight.as_millis() as u64);
                bar.println(format!("[{}/{}] {label}: {outcome}", index + 1, total));
            }
            None if !self.quiet => eprintln!("[{}/{}] {label}: {outcome}", index + 1, total),
            None => {}
        }
    }

    /// A note the user should see even with --quiet.
    pub fn note(&self, message: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("note: {message}")),
            None => eprintln!("note: {message}"),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
