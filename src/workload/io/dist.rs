//! `random_distribution`: which block a random operation goes to, with
//! fio's names and parameters.
//!
//! - `random`: uniform (the default; with the random map, every block once
//!   per pass, see `randmap.rs`);
//! - `zipf:θ`: block ranks drawn with P(k) ∝ k^−θ (θ > 0, fio's default
//!   1.1), sampled exactly by rejection (`rand_distr`), where fio uses Gray
//!   et al.'s approximation;
//! - `pareto:h`: fio's formula, rank = (n − 1)·u^(ln h / ln(1 − h)) for
//!   0 < h < 1 (0.2 puts 80 % of the accesses on 20 % of the blocks);
//! - `normal:σ`: a Gaussian around the middle of the region with a standard
//!   deviation of σ % of it (0 < σ < 100), redrawn when it falls outside;
//!   fio approximates it with a mean of 12 uniforms plus jitter.
//!
//! As in fio, the ranks of zipf, pareto and normal are scattered over the
//! region so that the hot blocks are not all at its start — here by a
//! bijection (a Feistel permutation), so that each rank keeps its own block
//! (fio's hash modulo the block count may fold two ranks together). An
//! optional second value, `zipf:1.2:0.25`, places the distribution's base at
//! that fraction of the region instead, unscattered: the hottest blocks are
//! then contiguous from there on (for normal, the centre of the bell).
//! fio's own defaults are kept: `zipf` alone is θ = 1.1, `pareto` alone is
//! h = 0.2; the non-uniform distributions use no random map, as in fio.

use rand_distr::{Distribution as _, Normal, Zipf};

use super::rng::{mix64, Rng};

/// The configured distribution, before it is sized to a region.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    Random,
    Zipf { theta: f64, center: Option<f64> },
    Pareto { h: f64, center: Option<f64> },
    Normal { sigma_pct: f64, center: Option<f64> },
}

impl Dist {
    pub fn parse(text: &str) -> Result<Dist, String> {
        let parts: Vec<&str> = text.split(':').map(str::trim).collect();
        if parts.len() > 3 {
            return Err(format!("`{text}`: at most NAME:VALUE:BASE"));
        }
        if !["random", "zipf", "pareto", "normal"].contains(&parts[0]) {
            return Err(format!(
                "unknown distribution `{}`; random, zipf:θ, pareto:h or normal:σ",
                parts[0]
            ));
        }
        let value = number(parts.get(1), "the distribution's parameter")?;
        let center = number(parts.get(2), "the base, a fraction from 0 to 1")?;
        if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err(format!("`{text}`: the base is a fraction from 0 to 1"));
        }
        let dist = match (parts[0], value) {
            ("random", None) => Dist::Random,
            ("random", Some(_)) => return Err("`random` takes no parameter".into()),
            ("zipf", theta) => Dist::Zipf {
                theta: theta.unwrap_or(1.1),
                center,
            },
            ("pareto", h) => Dist::Pareto {
                h: h.unwrap_or(0.2),
                center,
            },
            ("normal", Some(sigma_pct)) => Dist::Normal { sigma_pct, center },
            ("normal", None) => {
                return Err(
                    "normal needs its deviation, a percentage of the region: normal:10".into(),
                )
            }
            (name, _) => return Err(format!("unknown distribution `{name}`")),
        };
        dist.check()?;
        Ok(dist)
    }

    fn check(&self) -> Result<(), String> {
        match *self {
            Dist::Zipf { theta, .. } if theta <= 0.0 => {
                Err(format!("zipf's θ must be larger than 0, not {theta}"))
            }
            Dist::Pareto { h, .. } if !(h > 0.0 && h < 1.0) => {
                Err(format!("pareto's h must lie between 0 and 1, not {h}"))
            }
            Dist::Normal { sigma_pct, .. } if !(sigma_pct > 0.0 && sigma_pct < 100.0) => Err(
                format!("normal's σ is a percentage between 0 and 100, not {sigma_pct}"),
            ),
            _ => Ok(()),
        }
    }

    pub fn is_uniform(&self) -> bool {
        *self == Dist::Random
    }
}

/// An optional number of a distribution's text; `what` names it in errors.
fn number(s: Option<&&str>, what: &str) -> Result<Option<f64>, String> {
    match s {
        None | Some(&"") => Ok(None),
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| format!("`{v}` is not a number ({what})")),
    }
}

/// A distribution sized to a region of `n` blocks: draws block indices.
#[derive(Debug, Clone)]
pub struct Blocks {
    n: u64,
    sampler: Sampler,
    place: Place,
}

#[derive(Debug, Clone)]
enum Sampler {
    Uniform,
    Zipf(Zipf<f64>),
    Pareto { pow: f64 },
    Normal(Normal<f64>),
}

/// How ranks become blocks.
#[derive(Debug, Clone)]
enum Place {
    Scatter(Scatter),
    /// Ranks counted on from this block, wrapping.
    From(u64),
}

impl Blocks {
    pub fn new(dist: Dist, n: u64, seed: u64) -> Blocks {
        let n = n.max(1);
        let nf = n as f64;
        let (sampler, center) = match dist {
            Dist::Random => (Sampler::Uniform, None),
            Dist::Zipf { theta, center } => (
                Sampler::Zipf(Zipf::new(nf, theta).expect("θ > 0 and n ≥ 1 are checked")),
                center,
            ),
            Dist::Pareto { h, center } => (
                Sampler::Pareto {
                    pow: h.ln() / (1.0 - h).ln(),
                },
                center,
            ),
            Dist::Normal { sigma_pct, center } => {
                let sd = (nf * sigma_pct / 100.0).max(f64::MIN_POSITIVE);
                let mean = center.unwrap_or(0.5) * nf;
                let normal = Normal::new(mean, sd).expect("a finite, positive deviation");
                (Sampler::Normal(normal), center.map(|_| 0.0))
            }
        };
        let place = match center {
            Some(c) => Place::From(((c * nf) as u64).min(n - 1)),
            None => Place::Scatter(Scatter::new(n, seed)),
        };
        Blocks { n, sampler, place }
    }

    /// The rank of the next block (0 is the hottest), before placement.
    #[inline]
    pub fn rank(&self, rng: &mut Rng) -> u64 {
        match &self.sampler {
            Sampler::Uniform => rng.below(self.n),
            Sampler::Zipf(z) => (z.sample(rng) as u64).clamp(1, self.n) - 1,
            Sampler::Pareto { pow } => ((self.n - 1) as f64 * rng.unit().powf(*pow)) as u64,
            Sampler::Normal(d) => loop {
                let x = d.sample(rng);
                if x >= 0.0 && x < self.n as f64 {
                    break x as u64;
                }
            },
        }
    }

    /// The next block index, in `0..n`.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let r = self.rank(rng);
        match (&self.sampler, &self.place) {
            (Sampler::Uniform, _) => r,
            (_, Place::Scatter(s)) => s.apply(r),
            (_, Place::From(b)) => (b + r) % self.n,
        }
    }
}

/// A pseudo-random bijection of `0..n`: a balanced Feistel network over the
/// smallest even number of bits that covers n, cycle-walking values ≥ n
/// back into range.
#[derive(Debug, Clone)]
pub struct Scatter {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Scatter {
    pub fn new(n: u64, seed: u64) -> Scatter {
        let bits = (64 - (n.max(2) - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let keys = std::array::from_fn(|i| mix64(seed ^ (0x0FE1_57E1 + i as u64)));
        Scatter { n, half_bits, keys }
    }

    #[inline]
    fn round(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = mix64(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    #[inline]
    pub fn apply(&self, rank: u64) -> u64 {
        let mut x = self.round(rank);
        while x >= self.n {
            x = self.round(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::distribution::{ChiSquared, ContinuousCDF};

    #[test]
    fn parses_fio_forms_and_defaults() {
        assert_eq!(Dist::parse("random"), Ok(Dist::Random));
        assert_eq!(
            Dist::parse("zipf:1.2"),
            Ok(Dist::Zipf {
                theta: 1.2,
                center: None
            })
        );
        assert_eq!(
            Dist::parse("zipf"),
            Ok(Dist::Zipf {
                theta: 1.1,
                center: None
            })
        );
        assert_eq!(
            Dist::parse("pareto:0.3:0.25"),
            Ok(Dist::Pareto {
                h: 0.3,
                center: Some(0.25)
            })
        );
        assert!(Dist::parse("normal").is_err());
        assert!(Dist::parse("pareto:1.5")
            .unwrap_err()
            .contains("between 0 and 1"));
        assert!(Dist::parse("zipf:0").is_err());
        assert!(Dist::parse("zipf:1.2:2").is_err());
        assert!(Dist::parse("zoned:60/10").unwrap_err().contains("unknown"));
    }

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let s = Scatter::new(n, 11);
            let mut seen = vec![false; n as usize];
            for r in 0..n {
                let b = s.apply(r) as usize;
                assert!(!seen[b], "n = {n}: {b} twice");
                seen[b] = true;
            }
        }
    }

    /// The Done-when test: zipf:1.2 hit counts against the theoretical
    /// distribution, χ² at the 1 % level. Ranks 1..=30 are cells of their
    /// own; the tail is grouped into cells of at least 5 expected hits.
    #[test]
    fn zipf_hit_counts_follow_the_theory() {
        let n = 10_000u64;
        let theta = 1.2;
        let samples = 100_000u64;
        let b = Blocks::new(Dist::parse("zipf:1.2").unwrap(), n, 3);
        let mut rng = Rng::new(99);
        let mut hits = vec![0u64; n as usize];
        for _ in 0..samples {
            hits[b.rank(&mut rng) as usize] += 1;
        }
        let h: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
        let p = |k: u64| (k as f64 + 1.0).powf(-theta) / h;
        let (mut chi2, mut cells) = (0.0, 0);
        let (mut obs, mut exp) = (0.0, 0.0);
        for k in 0..n {
            obs += hits[k as usize] as f64;
            exp += p(k) * samples as f64;
            if k < 30 || exp >= 50.0 || k == n - 1 {
                chi2 += (obs - exp).powi(2) / exp;
                cells += 1;
                (obs, exp) = (0.0, 0.0);
            }
        }
        let critical = ChiSquared::new((cells - 1) as f64)
            .unwrap()
            .inverse_cdf(0.99);
        assert!(
            chi2 < critical,
            "χ² {chi2:.1} over {cells} cells, critical {critical:.1}"
        );
        // And placed hits are the ranks' own, scattered one to one.
        let mut placed = vec![0u64; n as usize];
        let mut rng = Rng::new(99);
        for _ in 0..samples {
            placed[b.next(&mut rng) as usize] += 1;
        }
        let mut a = hits.clone();
        let mut c = placed.clone();
        a.sort_unstable();
        c.sort_unstable();
        assert_eq!(a, c);
        assert!(placed[0] < hits[0], "rank 0 should not stay at block 0");
    }

    #[test]
    fn pareto_puts_most_hits_on_few_blocks() {
        let n = 1000;
        let b = Blocks::new(Dist::parse("pareto:0.2").unwrap(), n, 3);
        let mut rng = Rng::new(5);
        let hot = (0..100_000).filter(|_| b.rank(&mut rng) < n / 5).count();
        assert!((hot as f64 / 1e5 - 0.8).abs() < 0.01, "{hot}");
    }

    #[test]
    fn normal_has_the_deviation_asked_for_and_stays_inside() {
        let n = 100_000;
        let b = Blocks::new(Dist::parse("normal:5:0.5").unwrap(), n, 3);
        let mut rng = Rng::new(5);
        let xs: Vec<f64> = (0..50_000).map(|_| b.next(&mut rng) as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!((mean / n as f64 - 0.5).abs() < 0.002, "{mean}");
        assert!((sd / n as f64 - 0.05).abs() < 0.002, "{sd}");
        let wide = Blocks::new(Dist::parse("normal:90").unwrap(), 100, 3);
        assert!((0..10_000).all(|_| wide.next(&mut rng) < 100));
    }
}
