//! Aligned I/O buffers: O_DIRECT needs the buffer, offset and length aligned
//! to the logical block size; 4 KiB alignment satisfies every device here.
//! What the io engine's buffers hold is `fill.rs`'s business.

use std::alloc::{alloc_zeroed, dealloc, Layout};

pub use super::fill::fill_random;

pub const ALIGN: usize = 4096;

/// A heap buffer aligned to [`ALIGN`].
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is uniquely owned; no aliasing pointers escape.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of incompressible bytes, a function of `seed`.
    pub fn new(len: usize, seed: u64) -> AlignedBuf {
        let mut buf = AlignedBuf::zeroed(len);
        fill_random(buf.as_mut_slice(), seed);
        buf
    }

    pub fn zeroed(len: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1), ALIGN).expect("valid buffer layout");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes for the buffer's
        // lifetime, and &mut self guarantees uniqueness.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_or_filled() {
        let mut b = AlignedBuf::zeroed(8192);
        assert_eq!(b.as_mut_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_mut_slice().len(), 8192);
        assert!(b.as_mut_slice().iter().all(|&x| x == 0));
        let mut b = AlignedBuf::new(8192, 7);
        assert!(b.as_mut_slice().iter().any(|&x| x != 0));
    }
}
