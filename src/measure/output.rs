//! What one run yields. Values are in base units: bytes, seconds,
//! nanoseconds for latency, operations.

use hdrhistogram::Histogram;

use crate::metric::Direction;

/// One named figure of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: &'static str,
    pub direction: Direction,
}

impl Metric {
    pub fn higher(name: impl Into<String>, value: f64, unit: &'static str) -> Metric {
        Metric {
            name: name.into(),
            value,
            unit,
            direction: Direction::HigherIsBetter,
        }
    }

    pub fn lower(name: impl Into<String>, value: f64, unit: &'static str) -> Metric {
        Metric {
            name: name.into(),
            value,
            unit,
            direction: Direction::LowerIsBetter,
        }
    }
}

/// A value sampled at a fixed interval (throughput per second).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub unit: &'static str,
    pub interval_s: f64,
    pub values: Vec<f64>,
}

/// A latency histogram in nanoseconds, merged exactly across threads.
#[derive(Debug, Clone)]
pub struct Hist {
    pub name: String,
    pub unit: &'static str,
    pub hist: Histogram<u64>,
}

/// Everything a workload measured in one run.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    pub metrics: Vec<Metric>,
    pub series: Vec<Series>,
    pub histograms: Vec<Hist>,
    pub warnings: Vec<String>,
    /// What the run was measured with, stored beside it: name → text
    /// (`fio_version` → `fio-3.33`, `disk0` → `loop3`).
    pub facts: Vec<(String, String)>,
}

impl RunOutput {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }
}
