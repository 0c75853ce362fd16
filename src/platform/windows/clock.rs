//! The per-I/O clock on Windows: `QueryPerformanceCounter`, as DiskSpd
//! times its I/O (no system call on current Windows: it reads the TSC).

use std::sync::OnceLock;

fn frequency() -> u64 {
    static FREQ: OnceLock<u64> = OnceLock::new();
    *FREQ.get_or_init(|| {
        let mut f = 0i64;
        // SAFETY: `f` is a valid i64 for the call to fill; it cannot fail on XP or later.
        unsafe { windows_sys::Win32::System::Performance::QueryPerformanceFrequency(&mut f) };
        (f as u64).max(1)
    })
}

/// Monotonic time in nanoseconds since an arbitrary start.
#[inline]
pub fn now_ns() -> u64 {
    let mut c = 0i64;
    // SAFETY: `c` is a valid i64 for the call to fill; it cannot fail on XP or later.
    unsafe { windows_sys::Win32::System::Performance::QueryPerformanceCounter(&mut c) };
    (u128::from(c as u64) * 1_000_000_000 / u128::from(frequency())) as u64
}

/// What the clock is, for the result's notes.
pub const CLOCK_NAME: &str = "QueryPerformanceCounter";
