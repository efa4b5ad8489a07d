//! What the runs of the store say, before anyone lays it out: pure
//! functions of the stored campaigns (passed in, never read here), so that
//! they are tested without root and could aggregate in SQL one day.
//!
//! [`campaign::analyse`] analyses a campaign once into a
//! [`CampaignAnalysis`]: the report, `storlab show`, `compare` and the
//! JSON summary lay that out. [`verdict`] holds every verdict as data
//! (outcome, caveats, what the headline says of them), worded in one
//! place, `crate::report::verdict::words`. [`model`] holds each workload's statistics and verdicts against the
//! baseline; [`comparison`] the comparisons `storlab compare` and a report
//! of two campaigns make, after [`differences`] says what differs between
//! them; [`history`] a series of campaigns over time; [`study`] a swept
//! workload's factors (pivots, curves, level comparisons); [`matrix`] the
//! cells of an iozone-like matrix and the metric its verdict concerns;
//! [`latency`] the merged percentile curves; [`steady`] what the steady-state
//! detector found; [`ranks`] how multi-client runs shared the work;
//! [`model::family`] how a family of comparisons is judged as one;
//! [`replicas`] a campaign's replicas side by side; [`warnings`]
//! a campaign's warnings counted by kind; [`attribution`] where a
//! workload's latency went (the device or above it); [`reads`] where its
//! reads came from (each layer of the target's stack); [`capacity`] what a
//! capacity search found on each target, and capacities compared.
//! [`figures`] gathers the figures each section declares it reads, so
//! that the summary reads only those of each run.
//!
//! The presentation ([`crate::report`]) builds on these; nothing here
//! imports it.

pub mod about;
pub mod attribution;
pub(crate) mod by_name;
pub mod campaign;
pub mod capacity;
pub mod chosen;
pub mod comparison;
pub mod course;
pub mod differences;
pub mod drawn;
#[cfg(test)]
mod every_row_tests;
pub mod figures;
pub mod history;
pub mod laid_out;
pub mod latency;
pub mod matrix;
pub mod methodology;
pub mod model;
pub mod ranks;
pub mod reads;
pub mod releases;
pub mod replicas;
pub mod requested;
pub mod setup;
pub mod steady;
pub mod study;
pub mod telemetry;
pub mod verdict;
pub mod warnings;

pub use self::campaign::{analyse, CampaignAnalysis};
