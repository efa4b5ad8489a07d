//! What one run yields. Values are in their catalogue unit's base form:
//! bytes, seconds, nanoseconds for latency, operations.

use hdrhistogram::Histogram;

use crate::metric::{Direction, HistDef, Labels, MetricDef, Unit};
use crate::warning::Warning;

/// One figure of a run: a catalogue metric, its labels and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub def: &'static MetricDef,
    pub labels: Labels,
    pub value: f64,
}

impl Metric {
    pub fn name(&self) -> &'static str {
        self.def.name
    }

    pub fn unit(&self) -> Unit {
        self.def.unit
    }

    pub fn direction(&self) -> Direction {
        self.def.direction
    }

    /// Whether this is `def` with exactly `labels`.
    pub fn is(&self, def: &MetricDef, labels: &Labels) -> bool {
        std::ptr::eq(self.def, def) && &self.labels == labels
    }
}

impl MetricDef {
    /// A value of this metric without labels: the run's overall figure.
    pub fn value(&'static self, value: f64) -> Metric {
        self.labelled(Labels::new(), value)
    }

    /// A value of this metric with labels.
    pub fn labelled(&'static self, labels: Labels, value: f64) -> Metric {
        Metric {
            def: self,
            labels,
            value,
        }
    }
}

/// A metric sampled at a fixed interval (throughput per second).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub def: &'static MetricDef,
    pub labels: Labels,
    pub interval_s: f64,
    pub values: Vec<f64>,
}

impl Series {
    /// One value per `interval_s` of the run, without labels.
    pub fn new(def: &'static MetricDef, interval_s: f64, values: Vec<f64>) -> Series {
        Series {
            def,
            labels: Labels::new(),
            interval_s,
            values,
        }
    }
}

/// A latency histogram in nanoseconds, merged exactly across threads.
#[derive(Debug, Clone)]
pub struct Hist {
    pub def: &'static HistDef,
    pub labels: Labels,
    pub hist: Histogram<u64>,
}

impl Hist {
    pub fn new(def: &'static HistDef, hist: Histogram<u64>) -> Hist {
        Hist {
            def,
            labels: Labels::new(),
            hist,
        }
    }
}

/// Everything a workload measured in one run.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    pub metrics: Vec<Metric>,
    pub series: Vec<Series>,
    pub histograms: Vec<Hist>,
    pub warnings: Vec<Warning>,
    /// What the run was measured with, stored beside it: name → text
    /// (`pg_server_version` → `15.18 (Debian 15.18-0+deb12u1)`).
    pub facts: Vec<(String, String)>,
}

impl RunOutput {
    /// The run's overall value of `def` (the one without labels).
    pub fn metric(&self, def: &MetricDef) -> Option<f64> {
        self.labelled(def, &Labels::new())
    }

    /// Adds `labels` (a variant's swept values) to every metric, series
    /// and histogram.
    pub fn add_labels(&mut self, labels: &Labels) {
        for m in &mut self.metrics {
            m.labels = std::mem::take(&mut m.labels).with_all(labels);
        }
        for s in &mut self.series {
            s.labels = std::mem::take(&mut s.labels).with_all(labels);
        }
        for h in &mut self.histograms {
            h.labels = std::mem::take(&mut h.labels).with_all(labels);
        }
    }

    /// The value of `def` with exactly `labels`.
    pub fn labelled(&self, def: &MetricDef, labels: &Labels) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.is(def, labels))
            .map(|m| m.value)
    }
}
