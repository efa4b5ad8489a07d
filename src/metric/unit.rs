//! Units of measure as a type. A value is stored in its unit's base form
//! (bytes, seconds, nanoseconds for latency, operations); the unit's
//! [`Family`] tells a renderer how to show it to people, which happens only
//! at the report's edges.

use serde::{Serialize, Serializer};

/// The unit a metric's values are stored in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unit {
    Bytes,
    BytesPerSec,
    /// The change of a throughput per second (a steady-state slope).
    BytesPerSecPerSec,
    Seconds,
    /// Latencies and per-operation CPU time.
    Nanoseconds,
    Ops,
    OpsPerSec,
    OpsPerSecPerSec,
    Transactions,
    TransactionsPerSec,
    Percent,
    Ratio,
    /// Matrix cells measured.
    Cells,
    /// Directory entries read.
    Entries,
    /// Table rows.
    Rows,
    /// 1 for yes, 0 for no.
    Flag,
    /// Bytes per committed transaction (WAL, data pages).
    BytesPerTransaction,
    /// WAL records (full-page images among them).
    Records,
    /// Checkpoints a database server made.
    Checkpoints,
    /// Requests in a device's queue.
    Requests,
}

/// How renderers show values of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Binary multiples: KiB, MiB, GiB.
    Bytes,
    /// Binary multiples per second.
    BytesPerSec,
    /// ms, s, minutes.
    Seconds,
    /// ns, µs, ms, s.
    Nanoseconds,
    /// One decimal and a percent sign.
    Percent,
    /// k, M, G with three significant digits, then the unit's text if any.
    Count,
}

/// Every unit, for parsing stored texts (and for the export schema's test).
pub const UNITS: &[Unit] = &[
    Unit::Bytes,
    Unit::BytesPerSec,
    Unit::BytesPerSecPerSec,
    Unit::Seconds,
    Unit::Nanoseconds,
    Unit::Ops,
    Unit::OpsPerSec,
    Unit::OpsPerSecPerSec,
    Unit::Transactions,
    Unit::TransactionsPerSec,
    Unit::Percent,
    Unit::Ratio,
    Unit::Cells,
    Unit::Entries,
    Unit::Rows,
    Unit::Flag,
    Unit::BytesPerTransaction,
    Unit::Records,
    Unit::Checkpoints,
    Unit::Requests,
];

impl Unit {
    /// The unit as stored and exported: `bytes/s`, `ns`, `tx/s`, … (a flag
    /// has no unit text). The texts are those earlier storlabs stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::BytesPerSec => "bytes/s",
            Unit::BytesPerSecPerSec => "bytes/s per s",
            Unit::Seconds => "s",
            Unit::Nanoseconds => "ns",
            Unit::Ops => "ops",
            Unit::OpsPerSec => "ops/s",
            Unit::OpsPerSecPerSec => "ops/s per s",
            Unit::Transactions => "tx",
            Unit::TransactionsPerSec => "tx/s",
            Unit::Percent => "%",
            Unit::Ratio => "ratio",
            Unit::Cells => "cells",
            Unit::Entries => "entries",
            Unit::Rows => "rows",
            Unit::Flag => "",
            Unit::BytesPerTransaction => "bytes/tx",
            Unit::Records => "records",
            Unit::Checkpoints => "checkpoints",
            Unit::Requests => "requests",
        }
    }

    /// The unit a stored text names; `None` for a text no storlab wrote.
    pub fn parse(text: &str) -> Option<Unit> {
        UNITS.iter().copied().find(|u| u.as_str() == text)
    }

    pub fn family(self) -> Family {
        match self {
            Unit::Bytes => Family::Bytes,
            Unit::BytesPerSec => Family::BytesPerSec,
            Unit::Seconds => Family::Seconds,
            Unit::Nanoseconds => Family::Nanoseconds,
            Unit::Percent => Family::Percent,
            _ => Family::Count,
        }
    }

    /// Whether values are amounts per second (rates and throughputs).
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Unit::BytesPerSec | Unit::OpsPerSec | Unit::TransactionsPerSec
        )
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Unit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_has_one_text_that_parses_back() {
        for u in UNITS {
            assert_eq!(Unit::parse(u.as_str()), Some(*u));
            assert_eq!(UNITS.iter().filter(|x| x.as_str() == u.as_str()).count(), 1);
        }
        assert_eq!(Unit::parse("furlongs"), None);
        assert!(Unit::TransactionsPerSec.is_rate() && !Unit::Seconds.is_rate());
    }
}
