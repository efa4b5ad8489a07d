//! Human-readable numbers for tick labels and value annotations:
//! SI suffixes (1.2k, 3.4M), sensible decimals, no `-0`.

const PREFIXES: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];

/// From this magnitude on, numbers are printed in scientific notation.
const SCIENTIFIC_FROM: f64 = 1e18;

/// Most decimals ever printed; beyond that the caller should pick a unit.
const MAX_DECIMALS: usize = 9;

fn prefix_for(abs: f64) -> (f64, &'static str) {
    PREFIXES
        .iter()
        .find(|(scale, _)| abs >= *scale)
        .map_or((1.0, ""), |&(scale, suffix)| (scale, suffix))
}

/// `value` with `decimals` decimals, trailing zeros dropped, never `-0`.
fn fixed(value: f64, decimals: usize) -> String {
    let mut s = format!("{value:.decimals$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// Decimals needed to tell apart values `step` apart.
fn decimals_for_step(step: f64) -> usize {
    if !step.is_finite() || step <= 0.0 || step >= 1.0 {
        return 0;
    }
    ((-step.log10()).ceil() as usize).min(MAX_DECIMALS)
}

/// Formatter shared by all ticks of a linear axis, so they use one suffix.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TickFormat {
    scientific: bool,
    scale: f64,
    suffix: &'static str,
    decimals: usize,
}

impl TickFormat {
    /// For an axis over `lo..hi` showing at most `max_ticks` labels.
    pub(crate) fn for_range(lo: f64, hi: f64, max_ticks: usize) -> TickFormat {
        let max_abs = lo.abs().max(hi.abs());
        let (scale, suffix) = prefix_for(max_abs);
        // Ticks are at least span / max_ticks apart, so this is enough.
        let step = (hi - lo).abs() / max_ticks.max(1) as f64 / scale;
        TickFormat {
            scientific: max_abs >= SCIENTIFIC_FROM,
            scale,
            suffix,
            decimals: decimals_for_step(step),
        }
    }

    /// For an axis of percentages over `lo..hi`: plain numbers, never an
    /// SI prefix ("1200", not "1.2k": a per cent with a prefix misreads).
    pub(crate) fn percent_range(lo: f64, hi: f64, max_ticks: usize) -> TickFormat {
        let step = (hi - lo).abs() / max_ticks.max(1) as f64;
        TickFormat {
            scientific: lo.abs().max(hi.abs()) >= SCIENTIFIC_FROM,
            scale: 1.0,
            suffix: "",
            decimals: decimals_for_step(step),
        }
    }

    pub(crate) fn format(&self, value: f64) -> String {
        if self.scientific {
            return si(value);
        }
        let s = fixed(value / self.scale, self.decimals);
        if s == "0" {
            s
        } else {
            s + self.suffix
        }
    }
}

/// One value on its own, three significant digits: `1.23k`, `45.6M`, `0.0123`.
pub(crate) fn si(value: f64) -> String {
    si_digits(value, 3)
}

/// One value on its own with `digits` significant digits and an SI suffix.
pub(crate) fn si_digits(value: f64, digits: i32) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    let rounded = round_significant(value, digits);
    if rounded.abs() >= SCIENTIFIC_FROM {
        return scientific(value, digits);
    }
    let (scale, suffix) = prefix_for(rounded.abs());
    let scaled = rounded / scale;
    let magnitude = scaled.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).clamp(0, MAX_DECIMALS as i32) as usize;
    fixed(scaled, decimals) + suffix
}

/// `value` as `1.23e20`: `digits` significant digits, trailing zeros dropped.
fn scientific(value: f64, digits: i32) -> String {
    let precision = (digits - 1).max(0) as usize;
    let s = format!("{value:.precision$e}");
    match s.split_once('e') {
        Some((mantissa, exponent)) => format!("{}e{exponent}", fixed_trim(mantissa)),
        None => s,
    }
}

fn fixed_trim(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

fn round_significant(value: f64, digits: i32) -> f64 {
    let magnitude = value.abs().log10().floor() as i32;
    let factor = 10f64.powi(digits - 1 - magnitude);
    (value * factor).round() / factor
}

/// Round values (multiples of 1, 2 or 5 × 10^k) within `lo..=hi`, at most
/// about `max` of them, for labelling a scale that is not a plotters axis.
pub(crate) fn nice_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if hi <= lo || max < 2 || !(hi - lo).is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / (max - 1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&step| step >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A signed percentage with one decimal below 100: `+4.2%`, `-12.0%`, `+150%`.
pub(crate) fn percent(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    let decimals = if value.abs() < 100.0 { 1 } else { 0 };
    let body = format!("{:.decimals$}", value.abs());
    let zero = body.chars().all(|c| c == '0' || c == '.');
    let sign = if zero {
        "±"
    } else if value > 0.0 {
        "+"
    } else {
        "-"
    };
    format!("{sign}{body}%")
}

/// A signed whole percentage: `+12%`, `-3%`, `0%`.
pub(crate) fn percent_whole(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    let rounded = value.round();
    if rounded > 0.0 {
        format!("+{rounded}%")
    } else if rounded < 0.0 {
        format!("{rounded}%")
    } else {
        "0%".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_share_one_suffix_and_enough_decimals() {
        let f = TickFormat::for_range(0.0, 2500.0, 8);
        let labels: Vec<String> = [0.0, 500.0, 1000.0, 1500.0, 2500.0]
            .iter()
            .map(|&v| f.format(v))
            .collect();
        assert_eq!(labels, ["0", "0.5k", "1k", "1.5k", "2.5k"]);

        let f = TickFormat::for_range(0.0, 1.0, 10);
        assert_eq!(f.format(0.30000000000000004), "0.3");
        let f = TickFormat::for_range(0.0, 0.5, 10);
        assert_eq!(f.format(0.25), "0.25");

        let f = TickFormat::for_range(-3e6, 4e6, 8);
        assert_eq!(f.format(-2e6), "-2M");
        assert_eq!(f.format(-0.0), "0");
    }

    #[test]
    fn si_uses_three_significant_digits() {
        assert_eq!(si(1234.0), "1.23k");
        assert_eq!(si(999_600.0), "1M");
        assert_eq!(si(45_600_000.0), "45.6M");
        assert_eq!(si(1e9), "1G");
        assert_eq!(si(0.012345), "0.0123");
        assert_eq!(si(-250.0), "-250");
        assert_eq!(si(f64::NAN), "n/a");
        assert_eq!(si(1.2345e20), "1.23e20");
        assert_eq!(TickFormat::for_range(0.0, 1e300, 8).format(5e299), "5e299");
        let pct = TickFormat::percent_range(-100.0, 1200.0, 9);
        assert_eq!(pct.format(1200.0), "1200");
        assert_eq!(pct.format(-50.0), "-50");
        assert_eq!(
            TickFormat::percent_range(-0.01, 0.01, 9).format(0.005),
            "0.005"
        );
    }

    #[test]
    fn nice_ticks_are_round_and_inside() {
        assert_eq!(nice_ticks(3e5, 1.03e7, 6), [2e6, 4e6, 6e6, 8e6, 1e7]);
        assert_eq!(nice_ticks(-50.5, 50.5, 7), [-40.0, -20.0, 0.0, 20.0, 40.0]);
        assert_eq!(
            nice_ticks(0.0, 1.0, 6),
            [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(nice_ticks(2.0, 2.0, 6), [2.0]);
        assert_eq!(si_digits(1234.0, 2), "1.2k");
    }

    #[test]
    fn percent_is_signed() {
        assert_eq!(percent_whole(10.5), "+11%");
        assert_eq!(percent_whole(-0.4), "0%");
        assert_eq!(percent_whole(-3.0), "-3%");
        assert_eq!(percent(4.24), "+4.2%");
        assert_eq!(percent(-12.0), "-12.0%");
        assert_eq!(percent(150.4), "+150%");
        assert_eq!(percent(-0.01), "±0.0%");
    }
}
