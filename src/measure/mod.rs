//! Measurement primitives: what a run yields (metrics, series, histograms),
//! latency histograms (whole-run and per-second), per-thread CPU
//! accounting, measured child processes, the stop flag, and a run's
//! figures as text (for MPI and the spool).

pub mod child;
pub mod cpu;
pub mod intervals;
pub mod latency;
pub mod output;
pub mod stop;
pub mod strays;
pub mod telemetry;
pub mod wire;

pub use output::{Hist, Metric, RunOutput, Series};
pub use stop::StopFlag;
