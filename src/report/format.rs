//! Human formatting for the report: a value in its stored unit (from
//! [`crate::metric::format`], which the analysis' sentences use too), an
//! effect against the baseline, and a metric's name in prose.
//!
//! One way to write an effect, in every renderer (terminal, Markdown,
//! HTML): a change below ×2 either way as a percentage (`+12.3%`,
//! `-34.0%`), from ×2 as a ratio (`×597`, `÷3.4`), and one notation for an
//! estimate and its interval together, chosen by the largest of them:
//! `×597 [×132, ×2706]`, never `+59600% [×132, …]`.

pub use crate::metric::format::format_value;

/// How an effect and its interval are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notation {
    /// `+12.3%`: every value within ×2 of the baseline.
    Percent,
    /// `×597`, `÷3.4`: some value ×2 or more from it either way.
    Ratio,
}

impl Notation {
    /// The notation of an estimate and its bounds, given as % differences
    /// (`+100` is ×2); unbounded bounds do not count.
    pub fn of(pcts: &[f64]) -> Notation {
        let far = pcts
            .iter()
            .filter(|p| p.is_finite())
            .map(|p| 1.0 + p / 100.0)
            .any(|r| !(0.5 < r && r < 2.0));
        match far {
            true => Notation::Ratio,
            false => Notation::Percent,
        }
    }
}

/// One value of an effect (a % difference) in notation `n`.
pub fn effect(pct: f64, n: Notation) -> String {
    if pct.is_infinite() {
        return "unbounded".into();
    }
    if pct.is_nan() {
        return "n/a".into();
    }
    match n {
        Notation::Percent => format!("{pct:+.1}%"),
        Notation::Ratio => ratio_text(1.0 + pct / 100.0),
    }
}

/// `×1.03`, `×2.4`, `×15`, `×2706`, `×4.6e14`; below 1 its inverse,
/// `÷3.4`.
fn ratio_text(r: f64) -> String {
    if r <= 0.0 {
        // Only an interval of means (not of ratios) reaches here.
        return "×0".into();
    }
    let (sign, x) = if r >= 1.0 { ("×", r) } else { ("÷", 1.0 / r) };
    // Two decimals near 1, so that a bound of -2.5% does not read ÷1.0.
    let digits = if x < 1.095 {
        2
    } else if x < 9.95 {
        1
    } else {
        0
    };
    if x >= 1e4 {
        format!("{sign}{x:.1e}")
    } else {
        format!("{sign}{x:.digits$}")
    }
}

/// `+12.3%`, `-4.0%`, `±0.0%`: one decimal, signed; from ×2 a ratio,
/// `×3.1`.
pub fn pct_text(diff_pct: f64) -> String {
    let text = effect(diff_pct, Notation::of(&[diff_pct]));
    match text.as_str() {
        "+0.0%" | "-0.0%" => "±0.0%".into(),
        _ => text,
    }
}

/// `+12.3% [+8.1%, +16.5%]` or `×597 [×132, ×2706]`: an effect with its
/// 95% interval, in one notation; `[unbounded: baseline too noisy]` when
/// neither bound is finite.
pub fn effect_text(pct: f64, low: f64, high: f64) -> String {
    effect_text_in(pct, low, high, None)
}

/// [`effect_text`] in notation `n`, or in the effect's own when `None`: a
/// column of effects read side by side (replicas) takes one notation.
pub fn effect_text_in(pct: f64, low: f64, high: f64, n: Option<Notation>) -> String {
    if low.is_infinite() && high.is_infinite() {
        let n = n.unwrap_or(Notation::of(&[pct]));
        return format!("{} [unbounded: baseline too noisy]", effect(pct, n));
    }
    let n = n.unwrap_or(Notation::of(&[pct, low, high]));
    format!(
        "{} [{}, {}]",
        effect(pct, n),
        effect(low, n),
        effect(high, n)
    )
}

pub use crate::metric::human_name;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_below_x2_read_as_percentages_and_from_x2_as_ratios() {
        assert_eq!(effect_text(12.34, 8.1, 16.5), "+12.3% [+8.1%, +16.5%]");
        assert_eq!(effect_text(-19.7, -21.2, -18.2), "-19.7% [-21.2%, -18.2%]");
        // The examples: a large effect, and one interval that mixed
        // notations ("+3689.7% [+899.6%, ×144]").
        assert_eq!(
            effect_text(59600.0, 13100.0, 270500.0),
            "×597 [×132, ×2706]"
        );
        assert_eq!(effect_text(3689.7, 899.6, 14300.0), "×38 [×10, ×144]");
        // A bound past ×2 makes the whole interval a ratio.
        assert_eq!(effect_text(61.0, -32.9, 286.6), "×1.6 [÷1.5, ×3.9]");
        assert_eq!(effect_text(-70.0, -80.0, -50.0), "÷3.3 [÷5.0, ÷2.0]");
        assert_eq!(effect_text(-46.4, -70.5, -2.5), "÷1.9 [÷3.4, ÷1.03]");
        assert_eq!(effect_text(4.6e16, 1.0, 9.0e16), "×4.6e14 [×1.01, ×9.0e14]");
        assert_eq!(
            effect_text(5.0, f64::NEG_INFINITY, f64::INFINITY),
            "+5.0% [unbounded: baseline too noisy]"
        );
        assert_eq!(
            effect_text(5.0, -3.0, f64::INFINITY),
            "+5.0% [-3.0%, unbounded]"
        );
    }

    #[test]
    fn metrics_have_human_names_in_prose() {
        assert_eq!(human_name("bw_bytes_per_s"), "throughput");
        assert_eq!(human_name("lat_p99_ns"), "p99 latency");
        assert_eq!(human_name("dev_util_pct"), "dev_util_pct");
    }
}
