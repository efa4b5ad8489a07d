//! `bssplit`: a mix of block sizes with weights, in fio's syntax
//! `4k/10:64k/50:32k/40`; a size without a percentage shares what the
//! others leave, evenly; a second list after a comma is for writes
//! (`2k/50:4k/50,4k/90:8k/10`), and one list serves both directions.

use super::rng::Rng;
use crate::params::units::parse_size;

/// Block sizes of one direction with cumulative weights out of 100.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// (block size, cumulative percentage), the last reaching 100.
    steps: Vec<(usize, u32)>,
}

impl Split {
    /// One block size for every operation.
    pub fn fixed(bs: usize) -> Split {
        Split {
            steps: vec![(bs, 100)],
        }
    }

    pub fn min(&self) -> usize {
        self.steps.iter().map(|s| s.0).min().unwrap_or(0)
    }

    pub fn max(&self) -> usize {
        self.steps.iter().map(|s| s.0).max().unwrap_or(0)
    }

    /// Mean bytes per operation, by weight.
    pub fn mean(&self) -> f64 {
        let mut prev = 0;
        let mut sum = 0.0;
        for &(bs, cum) in &self.steps {
            sum += bs as f64 * (cum - prev) as f64 / 100.0;
            prev = cum;
        }
        sum
    }

    pub fn sizes(&self) -> impl Iterator<Item = usize> + '_ {
        self.steps.iter().map(|s| s.0)
    }

    /// Draws the size of the next operation.
    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> usize {
        if self.steps.len() == 1 {
            return self.steps[0].0;
        }
        let r = rng.below(100) as u32;
        self.steps
            .iter()
            .find(|s| r < s.1)
            .map_or(self.steps[self.steps.len() - 1].0, |s| s.0)
    }

    fn parse(text: &str) -> Result<Split, String> {
        let mut given = Vec::new();
        for item in text.split(':').map(str::trim).filter(|s| !s.is_empty()) {
            let (size, pct) = item.split_once('/').unwrap_or((item, ""));
            let bs = parse_size(size.trim())
                .map_err(|e| format!("`{item}`: {e}"))?
                .try_into()
                .map_err(|_| format!("`{item}`: block size too large"))?;
            if bs == 0 {
                return Err(format!("`{item}`: a block size must be larger than 0"));
            }
            let pct = match pct.trim() {
                "" => None,
                p => Some(p.parse::<u32>().map_err(|_| {
                    format!("`{item}`: the percentage after / must be a whole number from 0 to 100")
                })?),
            };
            given.push((bs, pct));
        }
        if given.is_empty() {
            return Err("an empty list; write SIZE/PERCENT pairs like 4k/10:64k/90".into());
        }
        Split::weigh(&given)
    }

    /// Spreads the percentage left over evenly across the sizes without one.
    fn weigh(given: &[(usize, Option<u32>)]) -> Result<Split, String> {
        let named: u32 = given.iter().filter_map(|g| g.1).sum();
        if named > 100 {
            return Err(format!("the percentages add up to {named}, more than 100"));
        }
        let blanks = given.iter().filter(|g| g.1.is_none()).count() as u32;
        let left = 100 - named;
        if blanks == 0 && left != 0 {
            return Err(format!(
                "the percentages add up to {named}; they must add up to 100"
            ));
        }
        let mut steps = Vec::new();
        let mut cum = 0;
        let mut blank_i = 0;
        for &(bs, pct) in given {
            let p = pct.unwrap_or_else(|| {
                blank_i += 1;
                // The last blank takes the remainder of the even division.
                left / blanks + u32::from(blank_i == blanks) * (left % blanks)
            });
            if p == 0 {
                continue;
            }
            cum += p;
            steps.push((bs, cum));
        }
        if steps.is_empty() {
            return Err("every percentage is 0".into());
        }
        Ok(Split { steps })
    }
}

/// The split of reads and of writes.
#[derive(Debug, Clone, PartialEq)]
pub struct BsSplit {
    pub read: Split,
    pub write: Split,
}

impl BsSplit {
    pub fn fixed(bs: usize) -> BsSplit {
        BsSplit {
            read: Split::fixed(bs),
            write: Split::fixed(bs),
        }
    }

    /// Parses fio's `bssplit`: one list for both directions, or reads then
    /// writes separated by a comma (a third list, fio's trims, is refused).
    pub fn parse(text: &str) -> Result<BsSplit, String> {
        let lists: Vec<&str> = text.split(',').collect();
        let (r, w) =
            match lists.as_slice() {
                [both] => (*both, *both),
                [r, w] => (*r, if w.trim().is_empty() { *r } else { *w }),
                _ => return Err(
                    "at most two lists: reads, then writes after a comma (storlab issues no trims)"
                        .into(),
                ),
            };
        Ok(BsSplit {
            read: Split::parse(r)?,
            write: Split::parse(w)?,
        })
    }

    pub fn min(&self) -> usize {
        self.read.min().min(self.write.min())
    }

    pub fn max(&self) -> usize {
        self.read.max().max(self.write.max())
    }

    /// Every size must be a multiple of the smallest, so that random
    /// offsets aligned to it and verify units tile every operation.
    pub fn check_multiples(&self) -> Result<(), String> {
        let min = self.min();
        match self
            .read
            .sizes()
            .chain(self.write.sizes())
            .find(|s| s % min != 0)
        {
            Some(s) => Err(format!(
                "{s} bytes is not a multiple of the smallest block size ({min} bytes)"
            )),
            None => Ok(()),
        }
    }

    #[inline]
    pub fn pick(&self, read: bool, rng: &mut Rng) -> usize {
        if read {
            self.read.pick(rng)
        } else {
            self.write.pick(rng)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fio_forms() {
        let s = BsSplit::parse("4k/10:64k/50:32k/40").unwrap();
        assert_eq!(s.read, s.write);
        assert_eq!((s.min(), s.max()), (4096, 65536));
        let s = BsSplit::parse("4k/50:1k/:32k/").unwrap();
        assert_eq!(s.read.steps, vec![(4096, 50), (1024, 75), (32768, 100)]);
        let s = BsSplit::parse("2k/50:4k/50,4k/90:8k/10").unwrap();
        assert_eq!(s.read.max(), 4096);
        assert_eq!(s.write.max(), 8192);
        assert_eq!(s.write.mean(), 0.9 * 4096.0 + 0.1 * 8192.0);
        let s = BsSplit::parse("4k/:8k/:16k/").unwrap();
        assert_eq!(s.read.steps, vec![(4096, 33), (8192, 66), (16384, 100)]);
    }

    #[test]
    fn refuses_what_fio_refuses() {
        assert!(BsSplit::parse("4k/60:8k/50")
            .unwrap_err()
            .contains("more than 100"));
        assert!(BsSplit::parse("4k/60:8k/30")
            .unwrap_err()
            .contains("add up to 100"));
        assert!(BsSplit::parse("4x/100").is_err());
        assert!(BsSplit::parse("").is_err());
        assert!(BsSplit::parse("4k,4k,4k").is_err());
        assert!(BsSplit::parse("4k/50:6k/50")
            .unwrap()
            .check_multiples()
            .is_err());
    }

    /// The Done-when test: proportions within 2 points over 10^5 operations.
    #[test]
    fn proportions_hold_within_two_percent_over_1e5_operations() {
        let s = BsSplit::parse("4k/10:64k/50:32k/40,8k/70:4k/30").unwrap();
        let mut rng = Rng::new(42);
        let n = 100_000;
        for (read, want) in [
            (true, vec![(4096, 0.10), (65536, 0.50), (32768, 0.40)]),
            (false, vec![(8192, 0.70), (4096, 0.30)]),
        ] {
            let mut counts = std::collections::HashMap::new();
            for _ in 0..n {
                *counts.entry(s.pick(read, &mut rng)).or_insert(0u32) += 1;
            }
            for (bs, share) in want {
                let got = counts[&bs] as f64 / n as f64;
                assert!((got - share).abs() < 0.02, "{bs}: {got} vs {share}");
            }
        }
    }
}
