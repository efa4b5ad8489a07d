//! Measurement primitives: what a run yields (metrics, series, histograms),
//! the hot loops' clock, latency histograms (whole-run and per-second), per-thread CPU
//! accounting, telemetry, and a run's figures as text (for MPI and the
//! spool). The child processes and the stop flag are [`crate::process`]'s.

pub mod clock;
pub mod cpu;
pub mod intervals;
pub mod latency;
pub mod layers;
pub mod output;
pub mod telemetry;
pub mod wire;

pub use output::{Hist, Metric, RunOutput, Series};
