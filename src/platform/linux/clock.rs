//! The per-I/O clock on Linux: `clock_gettime(CLOCK_MONOTONIC)`, through
//! the vDSO (no system call) when the kernel's clocksource is `tsc`.

/// Monotonic time in nanoseconds since an arbitrary start.
#[inline]
pub fn now_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What the clock is, for the result's notes.
pub const CLOCK_NAME: &str = "clock_gettime(CLOCK_MONOTONIC)";
