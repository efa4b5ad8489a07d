//! Parsing of the text units users write: sizes with binary suffixes
//! (`4k`, `256M`, `4G`, `1.5G`) and durations (`500ms`, `20s`, `10m`, `1h`).
//!
//! Sizes are always binary (k = 1024): storage users write `4k` blocks and
//! mean 4096 bytes, as fio and iozone do. A duration is at most
//! [`MAX_DURATION_S`], however it is written; estimates built from
//! parameters saturate ([`saturating_secs`]) rather than overflow.

use std::time::Duration;

/// Parses a size such as `4k`, `256M`, `4G`, `512` (bytes) or `1.5G`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!("`{text}` is not a size; write a number with an optional unit, e.g. 4k, 256M, 4G")
    })?;
    let mult = size_multiplier(unit.trim()).ok_or_else(|| {
        format!("`{text}` has an unknown size unit `{unit}`; use one of B, k, M, G, T (binary: k = 1024)")
    })?;
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

fn size_multiplier(unit: &str) -> Option<u64> {
    let u = unit.to_ascii_lowercase();
    let u = u.trim_end_matches("ib").trim_end_matches('b');
    Some(match u {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    })
}

/// Parses a duration such as `500ms`, `20s`, `10m`, `1h`, `1.5s`.
/// A bare number is seconds, as in fio's `runtime`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a duration; write e.g. 500ms, 20s, 10m"))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "`{text}` has an unknown duration unit `{other}`; use ms, s, m or h"
            ))
        }
    };
    duration_from_secs(secs, text)
}

/// The longest duration a parameter may hold: about 31 years.
pub const MAX_DURATION_S: f64 = 1e9;

/// Seconds as a [`Duration`], refused outside 0 to [`MAX_DURATION_S`]
/// (`inf`, `nan` and `1e300` included); `text` is how the user wrote it.
pub fn duration_from_secs(secs: f64, text: &str) -> Result<Duration, String> {
    if !(0.0..=MAX_DURATION_S).contains(&secs) {
        return Err(format!(
            "`{text}` is out of range: a duration is from 0 to {MAX_DURATION_S:e} s (about 31 years)"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Seconds as a [`Duration`] for estimates: a negative or undefined figure
/// is zero, one beyond what a `Duration` holds is [`Duration::MAX`].
pub fn saturating_secs(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

/// Formats bytes for humans with binary units (`4.0 KiB`, `1.5 GiB`).
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Formats a duration in seconds for humans: `850 ms`, `12.3 s`, `4m05s`,
/// `11h02m`, `3d04h` (seconds dropped from an hour on, minutes from a day
/// on); `—` for what is no duration (negative, NaN).
pub fn format_seconds(secs: f64) -> String {
    if secs.is_nan() || secs < 0.0 {
        return "—".into();
    }
    if secs < 1.0 {
        return format!("{:.0} ms", secs * 1e3);
    }
    if secs < 120.0 {
        return format!("{secs:.1} s");
    }
    // Saturates: `as` makes anything beyond u64 seconds u64::MAX.
    let s = secs.round() as u64;
    if s < 3600 {
        return format!("{}m{:02}s", s / 60, s % 60);
    }
    let m = s.saturating_add(30) / 60;
    if m < 24 * 60 {
        return format!("{}h{:02}m", m / 60, m % 60);
    }
    let h = s.saturating_add(1800) / 3600;
    format!("{}d{:02}h", h / 24, h % 24)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("4x").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("k").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("3 fortnights").is_err());
        assert!(parse_duration("1e300").is_err());
        assert!(parse_duration("2e9s").is_err());
        assert!(duration_from_secs(f64::INFINITY, "inf").is_err());
        assert!(duration_from_secs(f64::NAN, "nan").is_err());
        assert!(duration_from_secs(1.8e19, "1.8e19").is_err());
        assert_eq!(
            duration_from_secs(1.5, "1.5"),
            Ok(Duration::from_millis(1500))
        );
    }

    #[test]
    fn estimates_saturate() {
        assert_eq!(saturating_secs(f64::INFINITY), Duration::MAX);
        assert_eq!(saturating_secs(1e300), Duration::MAX);
        assert_eq!(saturating_secs(f64::NAN), Duration::ZERO);
        assert_eq!(saturating_secs(-1.0), Duration::ZERO);
        assert_eq!(saturating_secs(2.5), Duration::from_millis(2500));
    }

    #[test]
    fn human_formats() {
        assert_eq!(format_bytes(4096.0), "4.0 KiB");
        assert_eq!(format_bytes(100.0), "100 B");
        assert_eq!(format_seconds(0.25), "250 ms");
        assert_eq!(format_seconds(245.0), "4m05s");
        assert_eq!(format_seconds(3599.0), "59m59s");
        // #40 item 9: was `661m35s`.
        assert_eq!(format_seconds(39_695.0), "11h02m");
        assert_eq!(format_seconds(86_399.0), "1d00h");
        assert_eq!(format_seconds(3.0 * 86_400.0 + 4.0 * 3600.0), "3d04h");
        // Was `37838871m26s` for an estimate of `duration_s = 1e9`.
        assert_eq!(format_seconds(1e9), "11574d02h");
        assert_eq!(format_seconds(f64::MAX), "213503982334601d07h");
        assert_eq!(format_seconds(f64::NAN), "—");
        assert_eq!(format_seconds(-1.0), "—");
    }
}
