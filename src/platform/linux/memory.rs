//! Memory on Linux: the page size, zero-filled address space reserved
//! without committing memory, and transparent huge pages for I/O buffers.

use std::ptr::NonNull;

/// The system's page size.
pub fn page_size() -> usize {
    rustix::param::page_size()
}

/// Reserves `bytes` of private, zero-filled address space that takes memory
/// only where it is touched (`MAP_NORESERVE`); None when refused.
pub fn reserve_zeroed(bytes: usize) -> Option<NonNull<u8>> {
    use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
    // SAFETY: a new private anonymous mapping at an address the kernel
    // chooses: it replaces no memory of ours.
    let p = unsafe {
        mmap_anonymous(
            std::ptr::null_mut(),
            bytes,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE | MapFlags::NORESERVE,
        )
    }
    .ok()?;
    NonNull::new(p.cast::<u8>())
}

/// Releases what [`reserve_zeroed`] returned.
///
/// # Safety
/// `ptr` and `bytes` must be one reservation, and nothing may use it after.
pub unsafe fn release(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: the caller passes one whole reservation no one uses any more.
    let _ = unsafe { rustix::mm::munmap(ptr.as_ptr().cast(), bytes) };
}

/// Asks for huge pages for the range (failing, with THP disabled, leaves ordinary pages).
///
/// # Safety
/// The range must be memory of the caller's allocation.
pub unsafe fn advise_huge(ptr: *mut u8, len: usize) {
    // SAFETY: the range is the caller's allocation; madvise only changes how it is backed.
    unsafe {
        libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE);
    }
}

/// The process's address-space limit (`RLIMIT_AS`, `ulimit -v`), bytes;
/// None when unlimited.
pub fn address_space_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}
