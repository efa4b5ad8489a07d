//! Metric definitions: a name, a unit and a direction.
//!
//! Values are kept in base units (bytes, seconds, nanoseconds for latency,
//! operations); formatting for humans happens only at the report edges.

use serde::{Deserialize, Serialize};

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::HigherIsBetter => "higher",
            Direction::LowerIsBetter => "lower",
        }
    }

    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "higher" => Some(Direction::HigherIsBetter),
            "lower" => Some(Direction::LowerIsBetter),
            _ => None,
        }
    }
}
