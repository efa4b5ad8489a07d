//! Human formatting for the report: a value in its stored unit (from
//! [`crate::metric::format`], which the analysis' sentences use too).

pub use crate::metric::format::format_value;
