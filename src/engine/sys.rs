//! The one raw system call iosim makes outside I/O that no safe wrapper
//! crate covers: `getrusage` (rustix has none). Kept here, with the engine's
//! other `unsafe` code, behind a safe function.

/// User and system CPU seconds of the calling thread (`RUSAGE_THREAD`) or of
/// the whole process (`RUSAGE_SELF`).
pub fn cpu_times(thread: bool) -> (f64, f64) {
    let who = if thread {
        libc::RUSAGE_THREAD
    } else {
        libc::RUSAGE_SELF
    };
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage for the call to fill; `who`
    // is one of the two values getrusage accepts for it, so it cannot fail
    // (and on failure the zeroed struct reads as 0 s).
    let ru = unsafe {
        libc::getrusage(who, ru.as_mut_ptr());
        ru.assume_init()
    };
    let s = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows_with_work() {
        let (u0, s0) = super::cpu_times(true);
        // Spin until the thread's CPU time moves (it must, however busy the
        // machine is); the deadline only turns a hang into a failure.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut x = 0u64;
        let (u1, s1) = loop {
            for _ in 0..1_000_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            }
            let now = super::cpu_times(true);
            if now.0 + now.1 > u0 + s0 {
                break now;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "thread CPU time never moved"
            );
        };
        std::hint::black_box(x);
        let (pu, ps) = super::cpu_times(false);
        assert!(
            pu + ps + 1e-3 >= u1 + s1,
            "process {pu}+{ps} < thread {u1}+{s1}"
        );
    }
}
