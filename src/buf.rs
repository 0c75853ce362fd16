//! Page-aligned I/O buffers, as O_DIRECT and registered io_uring buffers need.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every I/O buffer: one page, enough for any device's direct I/O.
pub const BUF_ALIGN: usize = 4096;

/// Size of a transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Buffers from this size up go on huge pages: a request this large spans
/// 128 or more 4 KiB pages, the segment limit of loop devices and many HBAs.
const HUGE_FROM: usize = 512 << 10;

/// A zeroed, page-aligned heap buffer.
///
/// Buffers of 512 KiB or more are rounded up to whole 2 MiB, aligned to
/// 2 MiB and asked for transparent huge pages, so a large request is
/// physically contiguous: a 1 MiB read then reaches the device as one request
/// instead of being split because it spans more 4 KiB pages than the device
/// takes segments (128 on loop devices, 254 on virtio-blk).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    align: usize,
}

// SAFETY: AlignedBuf owns its memory exclusively, like Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only give out shared slices.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes aligned to [`BUF_ALIGN`] (at least one
    /// page); 512 KiB and larger on huge pages where the kernel allows them.
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).div_ceil(BUF_ALIGN) * BUF_ALIGN;
        if len < HUGE_FROM {
            let layout = Layout::from_size_align(len, BUF_ALIGN).expect("buffer size overflows");
            // SAFETY: layout has a non-zero size.
            let raw = unsafe { alloc_zeroed(layout) };
            let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
            return AlignedBuf {
                ptr,
                len,
                align: BUF_ALIGN,
            };
        }
        let len = len.div_ceil(HUGE_PAGE) * HUGE_PAGE;
        let layout = Layout::from_size_align(len, HUGE_PAGE).expect("buffer size overflows");
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        // SAFETY: the range is this allocation; madvise only changes how it is
        // backed, and failing (THP disabled) leaves ordinary pages.
        unsafe {
            libc::madvise(raw.cast(), len, libc::MADV_HUGEPAGE);
            // Zeroing faults the pages in, now as huge pages.
            std::ptr::write_bytes(raw, 0, len);
        }
        AlignedBuf {
            ptr,
            len,
            align: HUGE_PAGE,
        }
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
            Layout::from_size_align(self.len, self.align).expect("layout was valid at allocation");
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
    fn large_buffers_sit_on_huge_page_boundaries() {
        let mut b = AlignedBuf::new(8 << 20);
        assert_eq!(b.as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(b.len(), 8 << 20);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[(8 << 20) - 1] = 7;
        // Rounded up to whole huge pages, never down.
        assert_eq!(AlignedBuf::new(HUGE_PAGE + 1).len(), 2 * HUGE_PAGE);
        assert_eq!(AlignedBuf::new(HUGE_FROM).len(), HUGE_PAGE);
        assert_eq!(AlignedBuf::new(HUGE_FROM - 4096).len(), HUGE_FROM - 4096);
    }

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
