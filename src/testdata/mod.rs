//! Campaigns built for the unit tests, in memory or in a real store: the
//! one place tests outside the store and the analysis make stored data,
//! so that the report's tests lay out analyses of them without naming the
//! store. It knows nothing above the store (the analysis' tests use it
//! too).

pub mod every_row;
pub mod runs;
pub mod study;
pub mod telemetry;
