//! Page-aligned I/O buffers, as O_DIRECT and registered io_uring buffers need.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The system's page size, read once at run time (4 KiB on most x86-64
/// machines, 16 or 64 KiB on some arm64 and POWER kernels). Every I/O buffer
/// is aligned to it, which is enough for any device's direct I/O.
pub fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    *PAGE.get_or_init(crate::platform::memory::page_size)
}

/// Size of a transparent huge page (PMD size), read once at run time from
/// the kernel; 2 MiB (x86-64 and arm64 with 4 KiB pages) when unreadable.
fn huge_page_size() -> usize {
    static HUGE: OnceLock<usize> = OnceLock::new();
    *HUGE.get_or_init(|| {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .filter(|&n| n.is_power_of_two() && n >= page_size())
            .unwrap_or(2 << 20)
    })
}

/// Buffers from this size up go on huge pages: a request this large spans
/// 128 or more 4 KiB pages, the segment limit of loop devices and many HBAs.
const HUGE_FROM: usize = 512 << 10;

/// A buffer that cannot be allocated: its size overflows, or the allocator
/// refused it (not enough memory).
#[derive(Debug, thiserror::Error)]
#[error("cannot allocate an I/O buffer of {len} bytes: {why}")]
pub struct AllocError {
    /// Bytes asked for.
    pub len: usize,
    /// What went wrong.
    pub why: &'static str,
}

impl From<AllocError> for std::io::Error {
    fn from(e: AllocError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::OutOfMemory, e)
    }
}

/// A zeroed, page-aligned heap buffer.
///
/// Buffers of 512 KiB or more are rounded up to whole 2 MiB, aligned to
/// 2 MiB and asked for transparent huge pages, so a large request is
/// physically contiguous: a 1 MiB read then reaches the device as one request
/// instead of being split because it spans more 4 KiB pages than the device
/// takes segments (128 on loop devices, 254 on virtio-blk).
#[derive(Debug)]
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
    /// Allocates `len` zeroed bytes aligned to the page size (at least one
    /// page); 512 KiB and larger on huge pages where the kernel allows them.
    /// Aborts if the memory cannot be had, like `Vec`; callers sizing a
    /// buffer from user input use [`AlignedBuf::try_new`].
    pub fn new(len: usize) -> AlignedBuf {
        match AlignedBuf::try_new(len) {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        }
    }

    /// Bytes that [`AlignedBuf::try_new`] would take for `len` (rounded up to
    /// whole pages, or whole huge pages from 512 KiB); None on overflow.
    pub fn footprint(len: usize) -> Option<usize> {
        let page = page_size();
        let len = len.max(1).checked_next_multiple_of(page)?;
        if len < HUGE_FROM {
            Some(len)
        } else {
            len.checked_next_multiple_of(huge_page_size())
        }
    }

    /// Like [`AlignedBuf::new`], but returns an error instead of aborting
    /// when the size overflows or the allocator refuses it.
    pub fn try_new(len: usize) -> Result<AlignedBuf, AllocError> {
        let asked = len;
        let overflow = AllocError {
            len: asked,
            why: "the size overflows",
        };
        let len = AlignedBuf::footprint(len).ok_or(overflow)?;
        let align = if len < HUGE_FROM {
            page_size()
        } else {
            huge_page_size()
        };
        let layout = Layout::from_size_align(len, align).map_err(|_| AllocError {
            len: asked,
            why: "the size overflows",
        })?;
        let refused = AllocError {
            len: asked,
            why: "not enough memory",
        };
        if len < HUGE_FROM {
            // SAFETY: layout has a non-zero size.
            let raw = unsafe { alloc_zeroed(layout) };
            let ptr = NonNull::new(raw).ok_or(refused)?;
            return Ok(AlignedBuf { ptr, len, align });
        }
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let ptr = NonNull::new(raw).ok_or(refused)?;
        // SAFETY: the range is this allocation; the advice only changes how
        // it is backed, and failing (THP disabled) leaves ordinary pages.
        unsafe {
            crate::platform::memory::advise_huge(raw, len);
            // Zeroing faults the pages in, now as huge pages.
            std::ptr::write_bytes(raw, 0, len);
        }
        Ok(AlignedBuf { ptr, len, align })
    }

    /// Length in bytes (a multiple of the page size).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a buffer holds at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Raw pointer to the first byte, for reading (stable for the buffer's life).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// Raw pointer to the first byte, for the kernel or a copy to write
    /// through; only from a unique borrow, so no shared slice of the same
    /// bytes can be alive while it is handed out.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
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
        const HUGE_PAGE: usize = 2 << 20;
        if huge_page_size() != HUGE_PAGE || page_size() != 4096 {
            crate::testkit::skip("this test assumes 4 KiB pages and 2 MiB huge pages");
            return;
        }
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
        assert_eq!(b.as_ptr() as usize % page_size(), 0);
        assert_eq!(b.len(), 10_000usize.next_multiple_of(page_size()));
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn page_size_is_the_kernels() {
        let ps = page_size();
        assert!(ps.is_power_of_two() && ps >= 4096);
        let out = std::process::Command::new("getconf")
            .arg("PAGESIZE")
            .output();
        if let Ok(o) = out {
            let s = String::from_utf8_lossy(&o.stdout);
            if let Ok(n) = s.trim().parse::<usize>() {
                assert_eq!(ps, n);
            }
        }
    }

    #[test]
    fn impossible_sizes_are_errors_not_aborts() {
        assert!(AlignedBuf::footprint(usize::MAX).is_none());
        let e = AlignedBuf::try_new(usize::MAX).unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        // 2^62 bytes: a valid layout that no machine can provide.
        let e = AlignedBuf::try_new(1 << 62).unwrap_err();
        assert!(e.to_string().contains("not enough memory"), "{e}");
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

mod zeroed {
    /// Types whose all-zero bit pattern is a valid value (sealed: only atomics).
    pub trait Sealed {}
    impl Sealed for std::sync::atomic::AtomicU32 {}
    impl Sealed for std::sync::atomic::AtomicBool {}
}

/// Element types of a [`SparseTable`]: atomics, for which all zero bytes is 0 / false.
pub trait ZeroIsValid: zeroed::Sealed + Sync {}
impl ZeroIsValid for std::sync::atomic::AtomicU32 {}
impl ZeroIsValid for std::sync::atomic::AtomicBool {}

/// A fixed-length table of atomics that starts all zero and takes memory only
/// where it is touched: an anonymous mapping without swap reservation, which
/// the kernel backs with zero pages on first use. The simulator's page-state
/// tables are sized for a file's MaxSize but hold memory in proportion to the
/// pages the run really reaches.
pub struct SparseTable<T: ZeroIsValid> {
    ptr: NonNull<T>,
    len: usize,
    bytes: usize,
}

// SAFETY: the table owns its mapping and hands out only shared references to
// atomics (`T: Sync`), so it may move to and be shared with other threads.
unsafe impl<T: ZeroIsValid> Send for SparseTable<T> {}
// SAFETY: as above: every access through `&SparseTable` is an atomic operation.
unsafe impl<T: ZeroIsValid> Sync for SparseTable<T> {}

impl<T: ZeroIsValid> SparseTable<T> {
    /// A table of `len` zero elements; fails if the size overflows or the
    /// kernel refuses the address space.
    pub fn new(len: usize) -> Result<SparseTable<T>, AllocError> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(AllocError {
                len: usize::MAX,
                why: "the size overflows",
            })?;
        if bytes == 0 {
            return Ok(SparseTable {
                ptr: NonNull::dangling(),
                len,
                bytes,
            });
        }
        let ptr = crate::platform::memory::reserve_zeroed(bytes)
            .ok_or(AllocError {
                len: bytes,
                why: "the kernel refused the address space",
            })?
            .cast::<T>();
        Ok(SparseTable { ptr, len, bytes })
    }
}

impl<T: ZeroIsValid> std::ops::Deref for SparseTable<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is page-aligned (or dangling with len 0) and valid for
        // `len` elements of T for the table's life; the kernel zero-fills the
        // mapping, and all zero bytes is a valid T (ZeroIsValid is sealed to
        // atomics); only shared references are handed out.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroIsValid> Drop for SparseTable<T> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            // SAFETY: the mapping was made in `new` with this length and no
            // reference into it outlives `self`.
            unsafe { crate::platform::memory::release(self.ptr.cast(), self.bytes) };
        }
    }
}

#[cfg(test)]
mod sparse_tests {
    use super::SparseTable;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

    #[cfg(target_os = "linux")]
    fn rss_kib() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    #[test]
    fn starts_zero_and_keeps_values() {
        let t: SparseTable<AtomicU32> = SparseTable::new(1000).unwrap();
        assert_eq!(t.len(), 1000);
        assert!(t.iter().all(|x| x.load(Ordering::Relaxed) == 0));
        t[999].store(7, Ordering::Relaxed);
        assert_eq!(t[999].load(Ordering::Relaxed), 7);
        let b: SparseTable<AtomicBool> = SparseTable::new(0).unwrap();
        assert!(b.is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_huge_table_costs_only_the_pages_touched() {
        // 1 TiB of address space (256 G entries of 4 bytes): far more than this
        // machine's memory, yet touching a few entries costs a few pages.
        let before = rss_kib();
        let t: SparseTable<AtomicU32> = SparseTable::new(1 << 38).unwrap();
        for i in [0usize, 1 << 20, 1 << 30, (1 << 38) - 1] {
            t[i].store(1, Ordering::Relaxed);
        }
        assert!(
            rss_kib() < before + 64 * 1024,
            "{} -> {}",
            before,
            rss_kib()
        );
        assert!(SparseTable::<AtomicU32>::new(usize::MAX).is_err());
    }
}
