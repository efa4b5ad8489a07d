//! Human formatting of stored values, used only at the edges: the
//! sentences the analysis writes (warnings) and the renderers (terminal,
//! Markdown, HTML). Storage keeps base units.

use super::{Family, Unit};
use crate::params::units::{format_bytes, format_seconds};

/// Formats a value in its stored unit for people, after the unit's family.
pub fn format_value(value: f64, unit: Unit) -> String {
    if !value.is_finite() {
        return "n/a".into();
    }
    match unit.family() {
        Family::BytesPerSec => format!("{}/s", format_bytes(value)),
        Family::Bytes => format_bytes(value),
        Family::Nanoseconds => format_ns(value),
        Family::Seconds => format_seconds(value),
        Family::Percent => format!("{value:.1}%"),
        Family::Count => count(value, unit),
    }
}

/// `1.23k ops/s`; operations and flags bare (`1.23k`); bytes per
/// transaction as a size (`8.2 KiB/tx`).
fn count(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Ops | Unit::Flag => si(value),
        Unit::BytesPerTransaction => format!("{}/tx", format_bytes(value)),
        other => format!("{} {other}", si(value)),
    }
}

/// Nanoseconds as ns, µs, ms or s.
pub fn format_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// 1234 → 1.23k, 2.5e6 → 2.50M, three significant digits.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if scaled.abs() >= 100.0 {
        0
    } else if scaled.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{scaled:.digits$}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_value(1_572_864.0, Unit::BytesPerSec), "1.5 MiB/s");
        assert_eq!(format_value(1500.0, Unit::Nanoseconds), "1.5 µs");
        assert_eq!(format_value(123_456.0, Unit::OpsPerSec), "123k ops/s");
        assert_eq!(format_value(18_841.0, Unit::Transactions), "18.8k tx");
        assert_eq!(format_value(18_841.0, Unit::Ops), "18.8k");
        assert_eq!(
            format_value(8396.8, Unit::BytesPerTransaction),
            "8.2 KiB/tx"
        );
        assert_eq!(format_value(12.34, Unit::Percent), "12.3%");
        assert_eq!(si(2.5), "2.50");
        assert_eq!(format_value(f64::NAN, Unit::Nanoseconds), "n/a");
    }
}
