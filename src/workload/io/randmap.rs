//! fio's random map: the blocks of a region that a pass has already done,
//! so that uniform random I/O covers every block exactly once per pass. A
//! drawn block that is taken moves on to the next free one (fio's
//! `axmap_next_free`); when every block is taken, a new pass begins.
//!
//! As fio's axmap, the map is hierarchical: a bit per block, and above it a
//! bit per full word, so finding the next free block costs a few word
//! operations even when the pass is nearly done. Bits past the end of a
//! level are kept set, so a last, partial word counts as full in time.

#[derive(Debug, Clone)]
pub struct RandMap {
    n: u64,
    levels: Vec<Vec<u64>>,
    taken: u64,
}

const FULL: u64 = !0;

impl RandMap {
    pub fn new(n: u64) -> RandMap {
        let mut m = RandMap {
            n,
            levels: Vec::new(),
            taken: 0,
        };
        m.reset();
        m
    }

    /// Starts a new pass: every block free again.
    pub fn reset(&mut self) {
        self.levels.clear();
        self.taken = 0;
        let mut bits = self.n.max(1);
        loop {
            let words = bits.div_ceil(64);
            let mut level = vec![0u64; words as usize];
            let used = bits % 64;
            if used != 0 {
                level[words as usize - 1] = FULL << used;
            }
            self.levels.push(level);
            if words == 1 {
                break;
            }
            bits = words;
        }
    }

    pub fn is_full(&self) -> bool {
        self.taken >= self.n
    }

    pub fn is_taken(&self, b: u64) -> bool {
        self.levels[0][(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    /// Takes block `b`; false if it was taken already.
    pub fn take(&mut self, b: u64) -> bool {
        if self.is_taken(b) {
            return false;
        }
        self.taken += 1;
        let mut i = b;
        for level in self.levels.iter_mut() {
            let w = (i / 64) as usize;
            level[w] |= 1 << (i % 64);
            if level[w] != FULL {
                break;
            }
            i = w as u64;
        }
        true
    }

    /// The first free block at or after `b`, wrapping to the start; `None`
    /// when the pass is complete.
    pub fn next_free(&self, b: u64) -> Option<u64> {
        if self.is_full() {
            return None;
        }
        self.first_clear(0, b).or_else(|| self.first_clear(0, 0))
    }

    /// First clear bit at index ≥ `i` of `level`.
    fn first_clear(&self, level: usize, i: u64) -> Option<u64> {
        let words = &self.levels[level];
        let w = (i / 64) as usize;
        if w >= words.len() {
            return None;
        }
        let m = !words[w] & (FULL << (i % 64));
        if m != 0 {
            return Some(w as u64 * 64 + m.trailing_zeros() as u64);
        }
        if level + 1 == self.levels.len() {
            return None;
        }
        let next = self.first_clear(level + 1, w as u64 + 1)?;
        let m = !words[next as usize];
        Some(next * 64 + m.trailing_zeros() as u64)
    }

    /// Asks the CPU to bring block `b`'s word into its cache, ahead of a
    /// [`RandMap::take_next_free`] of `b`. Drawn at random, the word is
    /// rarely cached: its load was most of the pattern's time per 4 KiB
    /// read (the kernel's page-cache walk evicts the map between calls);
    /// prefetched before the operation's system call, it arrives during it.
    #[inline(always)]
    pub fn prefetch(&self, b: u64) {
        #[cfg(target_arch = "x86_64")]
        if let Some(w) = self.levels[0].get((b / 64) as usize) {
            // SAFETY: a prefetch is a hint that never faults; the address
            // is that of a live element.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    (w as *const u64).cast::<i8>(),
                )
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = b;
    }

    /// Takes the first free block at or after `b` (wrapping) and returns
    /// it; `None` when the pass is complete. `next_free` then `take`, with
    /// the common case — a free block in `b`'s own word — in one load and
    /// one store (uniform random reads of one block spend most of their
    /// pattern's time here).
    #[inline]
    pub fn take_next_free(&mut self, b: u64) -> Option<u64> {
        let w = (b / 64) as usize;
        let word = self.levels[0][w];
        let m = !word & (FULL << (b % 64));
        if m == 0 || word | (m & m.wrapping_neg()) == FULL {
            // Another word, or this one fills up (the level above learns).
            let b = self.next_free(b)?;
            self.take(b);
            return Some(b);
        }
        self.levels[0][w] = word | (m & m.wrapping_neg());
        self.taken += 1;
        Some(w as u64 * 64 + m.trailing_zeros() as u64)
    }

    /// Takes up to `want` consecutive free blocks from `b` (which is free);
    /// how many it took. Stops at a taken block or the end, as fio's
    /// `mark_random_map` trims an operation to the free run.
    pub fn take_run(&mut self, b: u64, want: u64) -> u64 {
        let mut k = 0;
        while k < want && b + k < self.n && self.take(b + k) {
            k += 1;
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::io::rng::Rng;

    #[test]
    fn next_free_skips_taken_blocks_and_wraps() {
        let mut m = RandMap::new(200);
        for b in 10..150 {
            assert!(m.take(b));
        }
        assert!(!m.take(20));
        assert_eq!(m.next_free(10), Some(150));
        assert_eq!(m.next_free(5), Some(5));
        for b in 150..200 {
            m.take(b);
        }
        assert_eq!(m.next_free(160), Some(0));
        for b in 0..10 {
            m.take(b);
        }
        assert!(m.is_full());
        assert_eq!(m.next_free(0), None);
        m.reset();
        assert_eq!(m.next_free(199), Some(199));
    }

    #[test]
    fn taking_the_next_free_block_is_next_free_then_take() {
        for n in [1u64, 63, 64, 65, 130, 4096, 70_000] {
            let (mut a, mut b) = (RandMap::new(n), RandMap::new(n));
            let mut rng = Rng::new(n ^ 7);
            for _ in 0..n {
                let drawn = rng.below(n);
                let want = a.next_free(drawn).expect("free blocks left");
                assert!(a.take(want));
                assert_eq!(b.take_next_free(drawn), Some(want), "{n}");
            }
            assert!(b.is_full() && b.take_next_free(0).is_none());
            assert_eq!(a.levels, b.levels);
        }
    }

    #[test]
    fn runs_stop_at_taken_blocks_and_the_end() {
        let mut m = RandMap::new(100);
        m.take(7);
        assert_eq!(m.take_run(4, 8), 3);
        assert_eq!(m.take_run(98, 8), 2);
    }

    #[test]
    fn random_draws_fill_large_maps_exactly() {
        for n in [1u64, 63, 64, 65, 4096, 262_145] {
            let mut m = RandMap::new(n);
            let mut rng = Rng::new(n);
            for _ in 0..n {
                let b = m.next_free(rng.below(n)).expect("free blocks left");
                assert!(m.take(b));
            }
            assert!(m.is_full(), "{n}");
        }
    }
}
