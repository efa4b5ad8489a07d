//! The sections every report has, built from the model and the stored
//! campaign: the summary `storlab show` prints, what ran, the headline,
//! what was compared side by side (and the requested differences that are
//! none), the environment, the methodology, and per workload its values,
//! differences, series over time and latency percentiles. What a
//! workload kind or a feature adds is in [`super::contrib`]; the order of
//! it all is [`super::outline`]'s. [`across`] holds the sections of a
//! report comparing two campaigns.

pub mod across;
pub mod campaign;
pub mod capacity;
pub mod compared;
pub mod comparisons;
pub mod methodology;
pub mod overview;
pub mod percentiles;
pub mod ranks;
pub mod replicas;
pub mod series;
pub mod summary;
pub mod warnings;
pub mod workload;

use super::svg::{target_color, Rgb};
use crate::analysis::about::About;

/// The colour of `target` in every chart: its position in the experiment.
pub fn color_of(c: &About, target: &str) -> Rgb {
    target_color(c.target_index(target))
}
