//! The access pattern: the direction, offset and length of each operation.
//!
//! Lengths come from `bs` or `bssplit`, per direction. Sequential patterns
//! walk the region (`offset` .. `offset + size`) and wrap when the next
//! operation would not fit. Random patterns draw a block of the smallest
//! block size from `random_distribution`; a uniform one goes through fio's
//! random map unless `norandommap`, so that each pass covers every block
//! once, an operation being trimmed to the free run at its block as fio
//! does. An operation never crosses the region's end: it is shortened to
//! what fits, as fio picks a length that fits.

use super::dist::Blocks;
use super::job::{JobSpec, Rw};
use super::randmap::RandMap;
use super::rng::Rng;

/// One operation: whether it reads, where, and how many bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub read: bool,
    pub off: u64,
    pub len: usize,
}

pub struct Pattern {
    rw: Rw,
    split: super::bssplit::BsSplit,
    unit: u64,
    start: u64,
    size: u64,
    /// Blocks of `unit` bytes in the region.
    blocks: u64,
    rwmixread: u64,
    rng: Rng,
    pos: u64,
    dist: Blocks,
    map: Option<RandMap>,
    /// With the map: the block drawn for the next operation, drawn one
    /// operation ahead so that its word of the map is prefetched while this
    /// operation runs.
    ahead: u64,
    /// A pass over the region ended with the last operation.
    wrapped: bool,
}

impl Pattern {
    pub fn new(spec: &JobSpec) -> Pattern {
        let unit = spec.unit() as u64;
        let blocks = (spec.size / unit).max(1);
        let random = spec.rw.is_random();
        let mut rng = Rng::new(spec.seed);
        let map =
            (random && spec.randommap && spec.dist.is_uniform()).then(|| RandMap::new(blocks));
        let ahead = if map.is_some() { rng.below(blocks) } else { 0 };
        Pattern {
            rw: spec.rw,
            split: spec.split.clone(),
            unit,
            start: spec.offset,
            size: spec.size,
            blocks,
            rwmixread: spec.rwmixread as u64,
            rng,
            pos: 0,
            dist: Blocks::new(spec.dist, blocks, spec.seed ^ 0xD157),
            map,
            ahead,
            wrapped: false,
        }
    }

    /// Whether a pass over the region ended since the last call: the
    /// sequential walk reached the region's end, or the random map was
    /// full (random I/O without the map never wraps, as in fio).
    #[inline]
    pub fn take_wrap(&mut self) -> bool {
        std::mem::take(&mut self.wrapped)
    }

    /// The next operation.
    #[inline]
    pub fn next(&mut self) -> Op {
        let read = match self.rw {
            Rw::Read | Rw::RandRead => true,
            Rw::Write | Rw::RandWrite => false,
            Rw::Mixed => self.rng.below(100) < self.rwmixread,
        };
        let (off, len) = if self.rw.is_random() {
            let len = self.split.pick(read, &mut self.rng) as u64;
            self.random(len)
        } else {
            self.sequential(read)
        };
        Op {
            read,
            off: self.start + off,
            len: len as usize,
        }
    }

    /// The next block of a sequential pass: a size is drawn again until it
    /// fits before the region's end, as fio's `get_next_buflen` does, so
    /// that a pass covers the region exactly; what is left is taken whole
    /// when no size of this direction fits it.
    #[inline]
    fn sequential(&mut self, read: bool) -> (u64, u64) {
        let left = self.size - self.pos;
        let len = (0..64)
            .map(|_| self.split.pick(read, &mut self.rng) as u64)
            .find(|&len| len <= left)
            .unwrap_or(left);
        let off = self.pos;
        self.pos += len;
        if self.pos >= self.size {
            self.pos = 0;
            self.wrapped = true;
        }
        (off, len)
    }

    #[inline]
    fn random(&mut self, len: u64) -> (u64, u64) {
        // Most jobs have one block size: no division (tens of cycles).
        let want = if len == self.unit {
            1
        } else {
            (len / self.unit).max(1)
        };
        let Some(map) = self.map.as_mut() else {
            let b = self.dist.next(&mut self.rng);
            return (b * self.unit, want.min(self.blocks - b) * self.unit);
        };
        let drawn = self.ahead;
        self.ahead = self.rng.below(self.blocks);
        map.prefetch(self.ahead);
        let (b, got) = if want == 1 {
            (map.take_next_free(drawn).unwrap_or(drawn), 1)
        } else {
            let b = map.next_free(drawn).unwrap_or(drawn);
            (b, map.take_run(b, want.min(self.blocks - b)).max(1))
        };
        if map.is_full() {
            map.reset();
            self.wrapped = true;
        }
        (b * self.unit, got * self.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::io::bssplit::BsSplit;
    use crate::workload::io::dist::Dist;
    use crate::workload::io::engine::EngineKind;
    use crate::workload::io::fill::FillSpec;
    use std::time::Duration;

    fn spec(rw: Rw, split: &str, offset: u64, size: u64) -> JobSpec {
        JobSpec {
            rw,
            split: BsSplit::parse(split).unwrap(),
            offset,
            size,
            engine: EngineKind::Psync,
            iodepth: 1,
            batch_submit: 4,
            direct: false,
            fsync_every: 0,
            end_fsync: false,
            runtime: None,
            time_based: true,
            invalidate: true,
            advice: crate::workload::io::job::Advice::of_hint("1", rw),
            ramp: Duration::ZERO,
            rwmixread: 50,
            period_ps: None,
            seed: 17,
            dist: Dist::Random,
            randommap: true,
            fill: FillSpec::default(),
            verify: None,
            raw: false,
        }
    }

    /// The Done-when test: every block exactly once per pass.
    #[test]
    fn the_random_map_visits_each_block_exactly_once_per_pass() {
        let s = spec(Rw::RandRead, "4k", 1 << 20, 4 << 20);
        let blocks = 1024;
        let mut p = Pattern::new(&s);
        for pass in 0..3 {
            let mut seen = vec![0u32; blocks];
            for _ in 0..blocks {
                let op = p.next();
                assert_eq!(op.len, 4096);
                assert!(op.off >= 1 << 20 && op.off < 5 << 20);
                seen[((op.off - (1 << 20)) / 4096) as usize] += 1;
            }
            assert!(seen.iter().all(|&c| c == 1), "pass {pass}");
        }
    }

    /// fio's `invalidate` drops the cache at each wrap: the pattern says
    /// when a pass ended, once per pass, and never without the map.
    #[test]
    fn a_wrap_is_said_once_per_pass() {
        for rw in [Rw::RandRead, Rw::Read] {
            let mut p = Pattern::new(&spec(rw, "4k", 0, 64 << 10));
            let wraps: Vec<usize> = (1..=48)
                .filter(|_| {
                    p.next();
                    p.take_wrap()
                })
                .collect();
            assert_eq!(wraps, vec![16, 32, 48], "{rw:?}");
        }
        let mut s = spec(Rw::RandRead, "4k", 0, 64 << 10);
        s.randommap = false;
        let mut p = Pattern::new(&s);
        assert!(!(0..100).any(|_| {
            p.next();
            p.take_wrap()
        }));
    }

    #[test]
    fn with_bssplit_a_pass_covers_every_byte_once() {
        let s = spec(Rw::RandWrite, "4k/20:16k/50:64k/30", 0, 8 << 20);
        let mut p = Pattern::new(&s);
        let mut seen = vec![0u32; 2048];
        let mut bytes = 0;
        while bytes < 8 << 20 {
            let op = p.next();
            assert!(op.off + op.len as u64 <= 8 << 20);
            for u in op.off / 4096..(op.off + op.len as u64) / 4096 {
                seen[u as usize] += 1;
            }
            bytes += op.len as u64;
        }
        assert_eq!(bytes, 8 << 20);
        assert!(seen.iter().all(|&c| c == 1));
    }

    #[test]
    fn without_the_map_blocks_repeat() {
        let mut s = spec(Rw::RandRead, "4k", 0, 4 << 20);
        s.randommap = false;
        let mut p = Pattern::new(&s);
        let mut seen = vec![0u32; 1024];
        for _ in 0..1024 {
            seen[(p.next().off / 4096) as usize] += 1;
        }
        // Drawn with replacement, about 1/e of the blocks are missed.
        let missed = seen.iter().filter(|&&c| c == 0).count();
        assert!((300..450).contains(&missed), "{missed}");
    }

    #[test]
    fn sequential_walks_the_region_and_wraps() {
        let s = spec(Rw::Read, "4k/50:8k/50", 4096, 64 << 10);
        let mut p = Pattern::new(&s);
        let mut expect = 4096;
        for _ in 0..1000 {
            let op = p.next();
            assert_eq!(op.off, expect, "contiguous within a pass");
            assert!(op.off + op.len as u64 <= 4096 + (64 << 10));
            expect = op.off + op.len as u64;
            if expect == 4096 + (64 << 10) {
                expect = 4096; // a pass ends exactly at the region's end
            }
        }
    }

    /// bssplit proportions within 2 points over 10^5 operations per
    /// direction of a running pattern (without the random map, which trims
    /// operations).
    #[test]
    fn bssplit_proportions_hold_in_a_running_pattern() {
        let mut s = spec(Rw::Mixed, "4k/10:64k/50:32k/40,8k/70:4k/30", 0, 1 << 30);
        s.randommap = false;
        let mut p = Pattern::new(&s);
        let mut counts = std::collections::HashMap::new();
        let n = 200_000;
        for _ in 0..n {
            let op = p.next();
            *counts.entry((op.read, op.len)).or_insert(0u32) += 1;
        }
        let reads: u32 = counts.iter().filter(|(k, _)| k.0).map(|(_, v)| v).sum();
        let writes = n - reads;
        for ((read, len), share) in [
            ((true, 4096), 0.10),
            ((true, 65536), 0.50),
            ((true, 32768), 0.40),
            ((false, 8192), 0.70),
            ((false, 4096), 0.30),
        ] {
            let total = if read { reads } else { writes } as f64;
            let got = counts[&(read, len)] as f64 / total;
            assert!((got - share).abs() < 0.02, "{read} {len}: {got}");
        }
    }
}
