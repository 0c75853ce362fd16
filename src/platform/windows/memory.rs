//! Memory on Windows: the page size and zero-filled memory from `VirtualAlloc`.

use std::ptr::NonNull;

use windows_sys::Win32::System::Memory::{
    VirtualAlloc, VirtualFree, MEM_COMMIT, MEM_RELEASE, MEM_RESERVE, PAGE_READWRITE,
};

/// The system's page size.
pub fn page_size() -> usize {
    // SAFETY: SYSTEM_INFO is plain data for GetSystemInfo to fill.
    let mut si = unsafe { std::mem::zeroed() };
    // SAFETY: `si` is a live SYSTEM_INFO.
    unsafe { windows_sys::Win32::System::SystemInformation::GetSystemInfo(&mut si) };
    (si.dwPageSize as usize).max(4096)
}

/// Commits `bytes` of zero-filled, page-aligned memory (`VirtualAlloc`);
/// Windows gives it physical pages only where it is touched. None when refused.
pub fn reserve_zeroed(bytes: usize) -> Option<NonNull<u8>> {
    // SAFETY: a new allocation at an address the system chooses.
    let p = unsafe {
        VirtualAlloc(
            std::ptr::null(),
            bytes,
            MEM_RESERVE | MEM_COMMIT,
            PAGE_READWRITE,
        )
    };
    NonNull::new(p.cast::<u8>())
}

/// Releases what [`reserve_zeroed`] returned.
///
/// # Safety
/// `ptr` must be one allocation of [`reserve_zeroed`], and nothing may use it after.
pub unsafe fn release(ptr: NonNull<u8>, _bytes: usize) {
    // SAFETY: the caller passes a whole allocation no one uses any more.
    unsafe { VirtualFree(ptr.as_ptr().cast(), 0, MEM_RELEASE) };
}

/// Huge pages need the lock-pages privilege on Windows: nothing is asked.
///
/// # Safety
/// None needed; unsafe to match the Linux side.
pub unsafe fn advise_huge(_ptr: *mut u8, _len: usize) {}

/// The process's address-space limit: Windows has no `RLIMIT_AS` (a job
/// object's limit is not read), so None.
pub fn address_space_limit() -> Option<u64> {
    None
}
