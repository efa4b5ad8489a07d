//! Measurement primitives: what a run yields (metrics, series, histograms),
//! latency histograms, per-thread CPU accounting, measured child processes
//! and the stop flag.

pub mod child;
pub mod cpu;
pub mod latency;
pub mod output;
pub mod stop;
pub mod telemetry;

pub use output::{Hist, Metric, RunOutput, Series};
pub use stop::StopFlag;
