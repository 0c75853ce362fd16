//! The per-I/O clock: monotonic nanoseconds as a plain `u64`.
//!
//! `clock_gettime(CLOCK_MONOTONIC)` goes through the vDSO (no system call)
//! when the kernel's clocksource is `tsc`, which `iosim` reports in its
//! notes when it is not. Workers read the clock once per batch of
//! completions and once per batch of submissions, not once per I/O.

/// Longest single wait of a thread waiting for an I/O's due time (a paced
/// `run`, a replay's gap between two traced I/Os), so a stop (Ctrl-C,
/// SIGTERM, another thread's error) is noticed within this time.
pub const MAX_NAP_NS: u64 = 50_000_000;

/// Monotonic time in nanoseconds since an arbitrary start.
#[inline]
pub fn now_ns() -> u64 {
    crate::platform::clock::now_ns()
}

/// Wall-clock time now as RFC 3339 UTC (`2026-11-22T03:49:31Z`).
pub fn utc_now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Formats seconds since the Unix epoch as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_319_371), "2026-11-22T03:49:31Z");
    }
}
