//! Human sizes and durations.
//!
//! Sizes use powers of two, as SQLIO, DiskSpd and PowerShell do: `4K` is
//! 4,096 bytes, `1M` is 1,048,576 bytes, `1G` is 2^30 and `1T` is 2^40.
//! The suffix may be written `K`, `KB`, `KiB` (any case); all mean the same.
//! A plain number is a count of bytes. `B` alone means bytes.
//!
//! Durations accept `ms`, `s`, `m` and `h` suffixes; a plain number means
//! seconds (`30` is 30 seconds, as SQLIO's `-s30`).

use std::time::Duration;

use crate::error::Error;

/// Parses a size such as `4K`, `1.5G`, `512`, `64KiB`.
pub fn parse_size(text: &str) -> Result<u64, Error> {
    let bad = || Error::BadSize(text.to_string());
    let t = text.trim();
    if t.is_empty() {
        return Err(bad());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(bad());
    }
    let suffix = suffix.trim().to_ascii_lowercase();
    let shift = match suffix.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        _ => return Err(bad()),
    };
    let mult = 1u64 << shift;
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| bad())?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
            return Err(bad());
        }
        Ok(bytes.round() as u64)
    } else {
        let v: u64 = num.parse().map_err(|_| bad())?;
        v.checked_mul(mult).ok_or_else(bad)
    }
}

/// The longest duration iosim accepts anywhere, seconds (about 31 years):
/// deadlines computed in nanoseconds from it cannot overflow.
pub const MAX_DURATION_S: u64 = 1_000_000_000;

/// Parses a duration such as `30`, `30s`, `500ms`, `5m`, `1h`.
pub fn parse_duration(text: &str) -> Result<Duration, Error> {
    let bad = || Error::BadDuration(text.to_string());
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let secs = match suffix.trim() {
        "" | "s" | "sec" | "secs" => v,
        "ms" => v / 1000.0,
        "m" | "min" | "mins" => v * 60.0,
        "h" | "hr" | "hrs" => v * 3600.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || !(0.0..=MAX_DURATION_S as f64).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A count with thousands separators, as a report shows it: `64,170`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats a byte count with a binary suffix: `4KiB`, `1GiB`, `1.50GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u32); 5] = [
        ("PiB", 50),
        ("TiB", 40),
        ("GiB", 30),
        ("MiB", 20),
        ("KiB", 10),
    ];
    for (name, shift) in UNITS {
        let unit = 1u64 << shift;
        if bytes >= unit {
            if bytes % unit == 0 {
                return format!("{}{}", bytes / unit, name);
            }
            return format!("{:.2}{}", bytes as f64 / unit as f64, name);
        }
    }
    format!("{bytes}B")
}

/// Formats a size the way it would be typed on iosim's command line (`4K`, `1M`, `1536K`).
pub fn format_size_arg(bytes: u64) -> String {
    for (name, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        let unit = 1u64 << shift;
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{}", bytes / unit, name);
        }
    }
    bytes.to_string()
}

/// Formats a duration the way it would be typed on the command line (`30s`, `1500ms`).
pub fn format_duration_arg(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Rounds `v` down to a multiple of `align` (a power of two or any non-zero value).
pub fn align_down(v: u64, align: u64) -> u64 {
    if align == 0 {
        v
    } else {
        v - v % align
    }
}

/// Rounds `v` up to a multiple of `align`.
pub fn align_up(v: u64, align: u64) -> u64 {
    if align == 0 {
        v
    } else {
        v.div_ceil(align) * align
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(2000), "2,000");
        assert_eq!(format_count(64_170), "64,170");
        assert_eq!(format_count(1_234_567), "1,234,567");
    }

    #[test]
    fn sizes_are_powers_of_two() {
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KB").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("2T").unwrap(), 2 << 40);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("512B").unwrap(), 512);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size(" 8K ").unwrap(), 8192);
    }

    #[test]
    fn bad_sizes_are_refused() {
        for t in [
            "",
            "K",
            "4X",
            "-4K",
            "4KK",
            "1.2.3M",
            "99999999999999999999T",
        ] {
            assert!(parse_size(t).is_err(), "{t:?} should fail");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        for t in ["", "s", "5x", "-1s"] {
            assert!(parse_duration(t).is_err(), "{t:?} should fail");
        }
    }

    #[test]
    fn formatting_round_trips() {
        for v in [512u64, 4096, 8192, 1 << 20, 3 << 29, 1 << 30, 5 << 40] {
            assert_eq!(parse_size(&format_size_arg(v)).unwrap(), v);
        }
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_size(1 << 30), "1GiB");
        assert_eq!(format_size(1536 << 20), "1.50GiB");
        assert_eq!(format_size(100), "100B");
        assert_eq!(format_duration_arg(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration_arg(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn alignment() {
        assert_eq!(align_down(4097, 4096), 4096);
        assert_eq!(align_up(4097, 4096), 8192);
        assert_eq!(align_up(8192, 4096), 8192);
        assert_eq!(align_down(5, 0), 5);
    }
}
