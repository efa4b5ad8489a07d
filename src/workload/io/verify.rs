//! `verify = "crc32c"`: every written unit (the smallest block size, fio's
//! default `verify_interval`) begins with a header that names its offset
//! and carries a CRC-32C of the rest of the unit; every read checks the
//! units it brought back. A unit whose header is missing, names another
//! offset (a misdirected write) or whose checksum fails is a mismatch.
//!
//! Header layout (little-endian): magic `u32`, crc32c `u32` over the unit
//! from byte 8 on, offset `u64`, unit length `u32`, reserved `u32`.

/// "STLV": a storlab verify header.
const MAGIC: u32 = 0x564c_5453;
pub const HEADER: usize = 24;

/// Why a unit failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// No verify header: data storlab did not write in verify mode.
    NoHeader,
    /// The header names another offset or length.
    Misplaced { offset: u64, len: u32 },
    /// The checksum of the unit does not match its header.
    Crc { stored: u32, computed: u32 },
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::NoHeader => write!(f, "no verify header"),
            Mismatch::Misplaced { offset, len } => {
                write!(f, "the header belongs to offset {offset} ({len} bytes)")
            }
            Mismatch::Crc { stored, computed } => write!(
                f,
                "crc32c {computed:#010x} does not match the stored {stored:#010x}"
            ),
        }
    }
}

/// Stamps every unit of `buf`, which is written at `offset`.
#[inline]
pub fn stamp(buf: &mut [u8], offset: u64, unit: usize) {
    for (i, u) in buf.chunks_exact_mut(unit).enumerate() {
        let off = offset + (i * unit) as u64;
        u[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        u[8..16].copy_from_slice(&off.to_le_bytes());
        u[16..20].copy_from_slice(&(unit as u32).to_le_bytes());
        u[20..24].copy_from_slice(&0u32.to_le_bytes());
        let crc = crc32c::crc32c(&u[8..]);
        u[4..8].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Checks every unit of `buf`, read from `offset`; the first bad unit's
/// offset and why.
#[inline]
pub fn check(buf: &[u8], offset: u64, unit: usize) -> Result<(), (u64, Mismatch)> {
    for (i, u) in buf.chunks_exact(unit).enumerate() {
        let off = offset + (i * unit) as u64;
        check_unit(u, off).map_err(|m| (off, m))?;
    }
    Ok(())
}

fn check_unit(u: &[u8], off: u64) -> Result<(), Mismatch> {
    let word = |r: std::ops::Range<usize>| u32::from_le_bytes(u[r].try_into().expect("4 bytes"));
    if word(0..4) != MAGIC {
        return Err(Mismatch::NoHeader);
    }
    let stored_off = u64::from_le_bytes(u[8..16].try_into().expect("8 bytes"));
    let len = word(16..20);
    if stored_off != off || len as usize != u.len() {
        return Err(Mismatch::Misplaced {
            offset: stored_off,
            len,
        });
    }
    let stored = word(4..8);
    let computed = crc32c::crc32c(&u[8..]);
    if stored != computed {
        return Err(Mismatch::Crc { stored, computed });
    }
    Ok(())
}

/// Mismatches seen by one job: the first (which names the offset) and how
/// many, for `verify_fatal = false`, which checks on and fails at the end.
#[derive(Debug, Clone, Default)]
pub struct Failures {
    pub first: Option<(u64, Mismatch)>,
    pub count: u64,
}

impl Failures {
    pub fn add(&mut self, at: (u64, Mismatch)) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamped_units_pass_and_any_change_is_caught() {
        let mut buf = vec![0xA5u8; 16384];
        stamp(&mut buf, 8192, 4096);
        assert_eq!(check(&buf, 8192, 4096), Ok(()));
        // Read back from elsewhere: misplaced.
        assert!(matches!(
            check(&buf, 0, 4096),
            Err((0, Mismatch::Misplaced { offset: 8192, .. }))
        ));
        let mut bad = buf.clone();
        bad[4096 + 100] ^= 1;
        assert!(matches!(
            check(&bad, 8192, 4096),
            Err((12288, Mismatch::Crc { .. }))
        ));
        let zeros = vec![0u8; 4096];
        assert_eq!(check(&zeros, 0, 4096), Err((0, Mismatch::NoHeader)));
    }
}
