//! Aligned I/O buffers: O_DIRECT needs the buffer, offset and length aligned
//! to the logical block size; 4 KiB alignment satisfies every device here.

use std::alloc::{alloc_zeroed, dealloc, Layout};

pub const ALIGN: usize = 4096;

/// A heap buffer aligned to [`ALIGN`], filled with incompressible bytes.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is uniquely owned; no aliasing pointers escape.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize, seed: u64) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1), ALIGN).expect("valid buffer layout");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let mut buf = AlignedBuf { ptr, layout };
        fill_random(buf.as_mut_slice(), seed);
        buf
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() bytes for the buffer's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees uniqueness.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Fills `buf` with pseudo-random bytes (incompressible, like fio's default).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut rng = super::rng::Rng::new(seed);
    for chunk in buf.chunks_mut(8) {
        let bytes = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_filled() {
        let b = AlignedBuf::new(8192, 7);
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_slice().len(), 8192);
        assert!(b.as_slice().iter().any(|&x| x != 0));
    }
}
