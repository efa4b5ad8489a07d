//! The log-linear buckets the kernel side counts request times in: exact
//! below 512 ns, and above it 256 buckets per power of two, so that a
//! bucket is never wider than 1/256 of its lower bound. A bucket is
//! `(shift, m)`: the times `[m << shift, (m + 1) << shift)`, with `m` in
//! 256..512 once `shift` is above 0 (the time's 9 leading bits). The
//! program computes the same pair with shifts and comparisons
//! ([`super::script`]); here the pair turns back into a time, the
//! bucket's midpoint, for the HDR histogram.

/// Bits of a time kept below its leading one: 2^8 = 256 buckets per
/// power of two.
pub const SUB_BITS: u32 = 8;

/// The largest error of a time read back as its bucket's midpoint,
/// relative to the time: half a bucket's width over its lower bound,
/// 1/512 (0.2%). The HDR histogram it goes into adds at most 0.1% (three
/// significant digits).
pub const MAX_RELATIVE_ERROR: f64 = 1.0 / (2u64 << SUB_BITS) as f64;

/// The bucket of `ns` (what the kernel side computes).
pub fn bucket(ns: u64) -> (u32, u64) {
    let msb = 63 - ns.max(1).leading_zeros();
    let shift = msb.saturating_sub(SUB_BITS);
    (shift, ns >> shift)
}

/// The time a bucket stands for: its midpoint (its only time, below 512 ns).
pub fn midpoint(shift: u32, m: u64) -> u64 {
    if shift == 0 {
        return m;
    }
    (m << shift) + (1u64 << (shift - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_times_are_exact() {
        for ns in [0u64, 1, 2, 255, 256, 511] {
            assert_eq!(bucket(ns), (0, ns));
            assert_eq!(midpoint(0, ns), ns);
        }
        assert_eq!(bucket(512), (1, 256));
        assert_eq!(bucket(1023), (1, 511));
        assert_eq!(bucket(1024), (2, 256));
    }

    #[test]
    fn a_midpoint_is_within_the_stated_error_of_every_time_in_its_bucket() {
        let mut worst: f64 = 0.0;
        let mut ns = 1u64;
        while ns < 3_600_000_000_000 {
            for x in [ns, ns + 1, ns * 3 / 2, ns * 2 - 1] {
                let (s, m) = bucket(x);
                assert!(m < 512 && (s == 0 || m >= 256), "{x}: {s} {m}");
                assert!((m << s) <= x && x < ((m + 1) << s), "{x}");
                let err = (midpoint(s, m) as f64 - x as f64).abs() / x as f64;
                worst = worst.max(err);
            }
            ns *= 2;
        }
        assert!(worst <= MAX_RELATIVE_ERROR, "{worst}");
        assert!(worst > MAX_RELATIVE_ERROR * 0.9, "{worst}");
    }
}
