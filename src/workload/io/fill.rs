//! What writes carry, with fio's buffer options and meanings:
//!
//! - by default a buffer is filled with random bytes once and scrambled
//!   before every write (`scramble_buffers`, as fio's
//!   `small_content_scramble`: each 512-byte sector gets the write's offset
//!   and a stamp), so that no two written sectors are identical and a
//!   deduplicating target cannot fold them, at a cost of two stores per
//!   sector;
//! - `refill_buffers` refills the buffer with new random bytes per write;
//! - `buffer_compress_percentage = P` fills each segment of
//!   `buffer_compress_chunk` bytes (the smallest block size when 0) with
//!   100−P % random bytes followed by zeros, so that a compressor stores
//!   about P % less; it implies refilling, as fio;
//! - `dedupe_percentage = D` makes D % of the writes repeat the previous
//!   unique buffer byte for byte (fio's default `dedupe_mode = repeat`); it
//!   implies refilling too;
//! - `zero_buffers` writes zeros.
//!
//! The generators are counter-based (word i of a buffer is a mix of the
//! buffer's seed and i), so a buffer is a pure function of its seed: a
//! deduplicated write regenerates its original from the seed alone, and
//! `tinywrites`' `data = "ratio:F"` uses [`fill_compressible`] as well.

use super::rng::{mix64, Rng};

/// Sector size of the scramble, as fio's.
const SECTOR: usize = 512;

/// The buffer options of a job, as fio names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillSpec {
    pub zero: bool,
    pub refill: bool,
    pub scramble: bool,
    /// Percentage of each segment that is zeros (0: not set).
    pub compress_pct: u32,
    /// Segment of the compressible pattern; 0 means the smallest block size.
    pub compress_chunk: usize,
    /// Percentage of writes that repeat the previous unique buffer.
    pub dedupe_pct: u32,
}

impl Default for FillSpec {
    fn default() -> FillSpec {
        FillSpec {
            zero: false,
            refill: false,
            scramble: true,
            compress_pct: 0,
            compress_chunk: 512,
            dedupe_pct: 0,
        }
    }
}

impl FillSpec {
    /// Whether every write gets a freshly generated buffer.
    pub fn refills(&self) -> bool {
        self.refill || self.compress_pct > 0 || self.dedupe_pct > 0
    }
}

/// Fills `buf` with pseudo-random bytes that are a function of `seed`.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let base = mix64(seed);
    let mut words = buf.chunks_exact_mut(8);
    for (i, w) in (&mut words).enumerate() {
        w.copy_from_slice(&mix64(base.wrapping_add(i as u64)).to_le_bytes());
    }
    let rest = words.into_remainder();
    let last = mix64(base ^ 0x5555_5555_5555_5555).to_le_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

/// fio's compressible pattern: each `segment` of `buf` is `100 − pct` %
/// random bytes followed by zeros (a short tail goes to the zeros, as fio's
/// `__fill_random_buf_percentage`). `pct = 100` is all zeros.
pub fn fill_compressible(buf: &mut [u8], pct: u32, segment: usize, seed: u64) {
    let random = segment * (100 - pct.min(100)) as usize / 100;
    fill_segments(buf, random, segment, seed);
}

/// Each `segment` of `buf` is `random` random bytes followed by zeros.
pub fn fill_segments(buf: &mut [u8], random: usize, segment: usize, seed: u64) {
    for (i, seg) in buf.chunks_mut(segment.max(1)).enumerate() {
        let (noise, zeros) = seg.split_at_mut(random.min(seg.len()));
        fill_random(noise, seed.wrapping_add(i as u64));
        zeros.fill(0);
    }
}

/// Writes the offset of each sector and a per-write stamp into it, at a
/// place that varies with the write, as fio's `small_content_scramble`.
pub fn scramble(buf: &mut [u8], offset: u64, stamp: u64) {
    let slot = ((stamp ^ offset) & 7) as usize * 64;
    for (i, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        let off = offset + (i * SECTOR) as u64;
        sector[slot..slot + 8].copy_from_slice(&off.to_le_bytes());
        sector[48..56].copy_from_slice(&stamp.to_le_bytes());
        sector[56..64].copy_from_slice(&offset.to_le_bytes());
    }
}

/// One job's generator of write buffers.
#[derive(Debug, Clone)]
pub struct Filler {
    spec: FillSpec,
    /// The segment of the compressible pattern, resolved against the block size.
    segment: usize,
    rng: Rng,
    /// Seed of the last unique buffer, which deduplicated writes repeat.
    prev: u64,
    writes: u64,
}

impl Filler {
    pub fn new(spec: FillSpec, min_bs: usize, seed: u64) -> Filler {
        let segment = match spec.compress_chunk {
            0 => min_bs,
            c => c.min(min_bs),
        };
        let mut rng = Rng::new(seed ^ 0xF111);
        let prev = rng.next_u64();
        Filler {
            spec,
            segment,
            rng,
            prev,
            writes: 0,
        }
    }

    /// Contents of a freshly allocated buffer, before any write.
    pub fn initial(&mut self, buf: &mut [u8]) {
        let seed = self.prev;
        self.generate(buf, seed);
    }

    /// Prepares `buf` for the write at `offset`.
    #[inline]
    pub fn for_write(&mut self, buf: &mut [u8], offset: u64) {
        self.writes += 1;
        if self.spec.refills() {
            let seed = self.next_seed();
            self.generate(buf, seed);
        } else if self.spec.scramble && !self.spec.zero {
            scramble(buf, offset, mix64(self.writes ^ self.prev));
        }
    }

    fn next_seed(&mut self) -> u64 {
        let d = self.spec.dedupe_pct as u64;
        if d > 0 && self.rng.below(100) < d {
            return self.prev;
        }
        self.prev = self.rng.next_u64();
        self.prev
    }

    fn generate(&self, buf: &mut [u8], seed: u64) {
        if self.spec.compress_pct > 0 {
            fill_compressible(buf, self.spec.compress_pct, self.segment, seed);
        } else if self.spec.zero {
            buf.fill(0);
        } else {
            fill_random(buf, seed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn deflated_len(data: &[u8]) -> usize {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap().len()
    }

    #[test]
    fn random_fill_is_a_function_of_the_seed_and_incompressible() {
        let mut a = vec![0u8; 65536 + 3];
        let mut b = a.clone();
        fill_random(&mut a, 9);
        fill_random(&mut b, 9);
        assert_eq!(a, b);
        fill_random(&mut b, 10);
        assert_ne!(a, b);
        assert!(deflated_len(&a) as f64 > 0.99 * a.len() as f64);
    }

    #[test]
    fn compress_percentage_compresses_to_about_that_level() {
        for (pct, chunk) in [(50, 512), (50, 0), (75, 4096), (20, 512)] {
            let spec = FillSpec {
                compress_pct: pct,
                compress_chunk: chunk,
                ..FillSpec::default()
            };
            let mut f = Filler::new(spec, 4096, 1);
            let mut buf = vec![0u8; 1 << 20];
            for block in buf.chunks_mut(65536) {
                f.for_write(block, 0);
            }
            let ratio = buf.len() as f64 / deflated_len(&buf) as f64;
            let want = 100.0 / (100 - pct) as f64;
            assert!(
                (ratio / want - 1.0).abs() < 0.06,
                "{pct}% chunk {chunk}: ratio {ratio:.3}, want {want:.3}"
            );
        }
    }

    #[test]
    fn segments_are_random_then_zeros() {
        let mut buf = vec![1u8; 1024];
        fill_compressible(&mut buf, 50, 512, 3);
        assert!(buf[256..512].iter().all(|&b| b == 0));
        assert!(buf[768..].iter().all(|&b| b == 0));
        assert!(buf[..256].iter().any(|&b| b != 0));
        fill_compressible(&mut buf, 100, 512, 3);
        assert!(buf.iter().all(|&b| b == 0));
    }

    #[test]
    fn dedupe_percentage_repeats_that_share_of_buffers() {
        let spec = FillSpec {
            dedupe_pct: 30,
            ..FillSpec::default()
        };
        let mut f = Filler::new(spec, 4096, 5);
        let mut seen = HashSet::new();
        let n = 20_000;
        let mut buf = vec![0u8; 4096];
        for i in 0..n {
            f.for_write(&mut buf, i * 4096);
            seen.insert(crc32c::crc32c(&buf));
        }
        let unique = seen.len() as f64 / n as f64;
        assert!((unique - 0.70).abs() < 0.02, "unique share {unique}");
    }

    #[test]
    fn scrambled_writes_differ_in_every_sector() {
        let mut f = Filler::new(FillSpec::default(), 4096, 5);
        let mut buf = vec![0u8; 4096];
        f.initial(&mut buf);
        let mut sectors = HashSet::new();
        for i in 0..100u64 {
            f.for_write(&mut buf, i * 4096);
            for s in buf.chunks(SECTOR) {
                assert!(sectors.insert(s.to_vec()), "a repeated sector");
            }
        }
    }

    #[test]
    fn zero_buffers_stay_zero() {
        let spec = FillSpec {
            zero: true,
            ..FillSpec::default()
        };
        let mut f = Filler::new(spec, 4096, 5);
        let mut buf = vec![7u8; 4096];
        f.initial(&mut buf);
        f.for_write(&mut buf, 4096);
        assert!(buf.iter().all(|&b| b == 0));
    }
}
