//! Campaigns built for the unit tests, in memory or in a real store: the
//! one place tests outside the store and the analysis make stored data,
//! so that the report's tests lay out analyses of them without naming the
//! store.

pub mod every_row;
pub mod study;
pub mod telemetry;

use crate::analysis::CampaignAnalysis;
use crate::store::CampaignData;

/// The analysis of `c` with the default options.
pub fn analysed(c: &CampaignData) -> CampaignAnalysis {
    crate::analysis::analyse(c, &Default::default()).unwrap()
}
