//! Page-aligned I/O buffers, as O_DIRECT and registered io_uring buffers need.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every I/O buffer: one page, enough for any device's direct I/O.
pub const BUF_ALIGN: usize = 4096;

/// A zeroed, page-aligned heap buffer.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: AlignedBuf owns its memory exclusively, like Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only give out shared slices.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes aligned to [`BUF_ALIGN`] (at least one page).
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let layout = Layout::from_size_align(len, BUF_ALIGN).expect("buffer size overflows");
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    /// Length in bytes (a multiple of the page size).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a buffer holds at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Raw pointer to the first byte (stable for the buffer's life).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout =
            Layout::from_size_align(self.len, BUF_ALIGN).expect("layout was valid at allocation");
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr.as_ptr(), layout) }
    }
}

/// Fills `buf` with incompressible pseudo-random bytes from `seed` (fast: 8 bytes per step).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut x = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        x = wyrand(&mut x);
        c.copy_from_slice(&x.to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let tail = wyrand(&mut x).to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&tail[..n]);
}

/// wyrand: a tiny, fast, statistically good generator for payload bytes.
#[inline]
pub fn wyrand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0xa076_1d64_78bd_642f);
    let t = u128::from(*state) * u128::from(*state ^ 0xe703_7ed1_a0b4_28db);
    ((t >> 64) as u64) ^ (t as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let b = AlignedBuf::new(10_000);
        assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
        assert_eq!(b.len(), 12_288);
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn random_fill_is_incompressible_looking() {
        let mut b = vec![0u8; 1 << 16];
        fill_random(&mut b, 1);
        let mut counts = [0u32; 256];
        for &x in &b {
            counts[x as usize] += 1;
        }
        // Each byte value should appear about 256 times.
        assert!(counts.iter().all(|&c| (150..400).contains(&c)));
        let mut c = vec![0u8; 1 << 16];
        fill_random(&mut c, 2);
        assert_ne!(b, c);
    }
}
