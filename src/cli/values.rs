//! Value parsers shared by every command's options: sizes, durations, CPU
//! lists, latencies. Each returns a message that says what to type instead.

use std::time::Duration;

use clap::builder::PossibleValue;
use clap::ValueEnum;

use crate::document::Kind;
use crate::workload::{CacheMode, EngineKind, Placement, RwMode};

/// Parses a size for clap.
pub fn size_arg(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s).map_err(|e| e.to_string())
}

/// Parses a duration for clap (what it accepts: [`DURATION_UNITS`]).
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s).map_err(|e| e.to_string())
}

/// What every duration option accepts ([`crate::units::parse_duration`]),
/// said once and added to each one's help by [`document_durations`].
pub const DURATION_UNITS: &str =
    "Units: ms, s, m or min, h (500ms, 90s, 5min, 2h); a plain number is seconds.";

/// Adds [`DURATION_UNITS`] to the help of every option that takes a
/// duration, in `cmd` and all its subcommands.
pub fn document_durations(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_value_parser().type_id() != std::any::TypeId::of::<Duration>() {
            return a;
        }
        let with_units = |h: Option<&clap::builder::StyledStr>| {
            let h = h.map(|h| h.to_string()).unwrap_or_default();
            match h.trim_end() {
                "" => DURATION_UNITS.to_string(),
                t if t.ends_with('.') => format!("{t} {DURATION_UNITS}"),
                t => format!("{t}. {DURATION_UNITS}"),
            }
        };
        let help = with_units(a.get_help());
        match a.get_long_help().map(|h| with_units(Some(h))) {
            Some(long) => a.help(help).long_help(long),
            None => a.help(help),
        }
    })
    .mut_subcommands(document_durations)
}

/// A list of CPUs given as `0,2,4-7`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// Parses a CPU list for clap.
pub fn cpu_list_value(s: &str) -> Result<CpuList, String> {
    cpu_list_arg(s).map(CpuList)
}

/// Parses a CPU list such as `0,2,4-7`.
pub fn cpu_list_arg(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("invalid CPU list '{s}': use numbers and ranges such as 0,2,4-7");
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().map_err(|_| bad())?;
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            if b < a {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    if out.is_empty() {
        return Err(format!("invalid CPU list '{s}': it names no CPU"));
    }
    Ok(out)
}

/// Parses a latency such as `2ms`, `500us` or `0.5` (milliseconds) into microseconds.
pub fn latency_arg(s: &str) -> Result<f64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(v) = t.strip_suffix("us") {
        (v, 1.0)
    } else if let Some(v) = t.strip_suffix("ms") {
        (v, 1000.0)
    } else if let Some(v) = t.strip_suffix('s') {
        (v, 1_000_000.0)
    } else {
        (t.as_str(), 1000.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("invalid latency '{s}': use e.g. 2ms or 500us"))?;
    let us = v * mult;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("invalid latency '{s}': it must be above 0"));
    }
    if !us.is_finite() {
        return Err(format!(
            "invalid latency '{s}': too large; use e.g. 2ms or 500us"
        ));
    }
    Ok(us)
}

/// Parses a number of 0 or more for an f64 option (`--threshold 10`,
/// `--knee-threshold 0.1`): NaN, infinities and negatives are refused, -0 is 0.
pub fn non_negative_arg(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v + 0.0),
        Ok(_) => Err(format!(
            "'{s}' is not a finite number of 0 or more: give e.g. 10 or 0.5"
        )),
        Err(_) => Err(format!("'{s}' is not a number: give e.g. 10 or 0.5")),
    }
}

/// Parses `--commit-rate`: commits a second, more than 0 (`569`, `569/s`).
pub fn commit_rate_arg(s: &str) -> Result<f64, String> {
    let n = s.trim().trim_end_matches("/s");
    match n.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a commit rate: give the commits (transactions) a second, more than 0, e.g. 569 or 569/s"
        )),
    }
}

// The workload's choices as command-line values. They are defined here, not
// derived in `workload`, so that the library does not depend on clap; each
// match is exhaustive, so a new variant does not compile until it has help.

impl ValueEnum for RwMode {
    fn value_variants<'a>() -> &'a [Self] {
        &RwMode::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            RwMode::Read => "Sequential reads",
            RwMode::Write => "Sequential writes",
            RwMode::Randread => "Random reads",
            RwMode::Randwrite => "Random writes",
            RwMode::Readwrite => "Sequential mixed reads and writes (`--write-pct`, default 50)",
            RwMode::Randrw => "Random mixed reads and writes (`--write-pct`, default 50)",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

impl ValueEnum for CacheMode {
    fn value_variants<'a>() -> &'a [Self] {
        &CacheMode::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            CacheMode::Direct => {
                "O_DIRECT: bypass the page cache (DiskSpd -Su, SQLIO's default unbuffered I/O)"
            }
            CacheMode::Buffered => "Through the page cache (SQLIO -BY, DiskSpd -Sb)",
            CacheMode::Writethrough => {
                "Page cache with O_DSYNC: each write returns once stable (DiskSpd -Sw)"
            }
            CacheMode::DirectWritethrough => {
                "O_DIRECT and O_DSYNC together, as SQL Server opens its files (DiskSpd -Sh)"
            }
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

impl ValueEnum for EngineKind {
    fn value_variants<'a>() -> &'a [Self] {
        &EngineKind::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            EngineKind::Auto => {
                "The fastest engine for the request (default): sync through the page cache at queue depth 1, io_uring otherwise (iocp on Windows)"
            }
            EngineKind::Uring => {
                "io_uring with registered files and buffers and batched submission (Linux)"
            }
            EngineKind::Sync => {
                "pread/pwrite, one I/O at a time per thread (queue depth is 1 whatever --qd says)"
            }
            EngineKind::Null => {
                "No storage at all: every I/O completes at once. Measures iosim's own overhead"
            }
            EngineKind::Mmap => "Memory-mapped I/O through the page cache (DiskSpd -Sm, fio ioengine=mmap); needs --cache buffered or writethrough (Linux)",
            EngineKind::Iocp => "Overlapped I/O on an I/O completion port per thread, as DiskSpd (Windows; its default there)",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

impl ValueEnum for Placement {
    fn value_variants<'a>() -> &'a [Self] {
        &[Placement::Random, Placement::Start]
    }

    // No help per value: `--hot-placement`'s own help says what each does.
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            Placement::Random => "random",
            Placement::Start => "start",
        }))
    }
}

/// The kinds the history stores ([`Kind::is_stored`]), in [`Kind::ALL`]'s order.
static STORED_KINDS: std::sync::LazyLock<Vec<Kind>> =
    std::sync::LazyLock::new(|| Kind::ALL.into_iter().filter(|k| k.is_stored()).collect());

impl ValueEnum for Kind {
    fn value_variants<'a>() -> &'a [Self] {
        &STORED_KINDS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            Kind::Run => "iosim run, sqlio and diskspd",
            Kind::Quick => "iosim quick (and iosim with no command)",
            Kind::Sweep => "iosim sweep",
            Kind::Profile => "iosim run --profile",
            Kind::Matrix => "iosim matrix",
            Kind::Sim => "iosim sim",
            Kind::Compare => "iosim compare (printed, never stored)",
            Kind::Qualify => "iosim qualify",
            Kind::Replay => "iosim replay",
            Kind::Crash => "iosim crash verify",
            Kind::Fsync => "iosim fsync",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_rate_is_a_positive_number_of_commits_a_second() {
        assert_eq!(commit_rate_arg("569"), Ok(569.0));
        assert_eq!(commit_rate_arg("569/s"), Ok(569.0));
        assert_eq!(commit_rate_arg(" 0.5 "), Ok(0.5));
        for bad in ["0", "-3", "inf", "NaN", "fast", ""] {
            let e = commit_rate_arg(bad).unwrap_err();
            assert!(e.contains("e.g. 569"), "{bad}: {e}");
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list_arg("0,2,4-6").unwrap(), vec![0, 2, 4, 5, 6]);
        assert!(cpu_list_arg("3-1").is_err());
        assert!(cpu_list_arg("x").is_err());
    }

    #[test]
    fn history_kinds_are_every_stored_kind() {
        assert_eq!(STORED_KINDS.len(), Kind::ALL.len() - 1);
        assert!(!STORED_KINDS.contains(&Kind::Compare));
        for k in STORED_KINDS.iter() {
            assert_eq!(Kind::from_str(k.name(), false), Ok(*k), "{}", k.name());
        }
        assert!(Kind::from_str("compare", false).is_err());
    }

    #[test]
    fn latencies() {
        assert_eq!(latency_arg("2ms").unwrap(), 2000.0);
        assert_eq!(latency_arg("500us").unwrap(), 500.0);
        assert_eq!(latency_arg("0.5").unwrap(), 500.0);
        assert!(latency_arg("0").is_err());
        for bad in ["NaN", "inf", "-inf", "1e308s", "-1ms"] {
            assert!(latency_arg(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn non_negative_numbers_refuse_nan_and_infinities() {
        assert_eq!(non_negative_arg("10").unwrap(), 10.0);
        assert_eq!(non_negative_arg("1e300").unwrap(), 1e300);
        let z = non_negative_arg("-0").unwrap();
        assert!(z == 0.0 && z.is_sign_positive(), "-0 is 0");
        for bad in ["NaN", "nan", "inf", "-inf", "infinity", "-1"] {
            let e = non_negative_arg(bad).unwrap_err();
            assert!(e.contains("not a finite number of 0 or more"), "{bad}: {e}");
        }
        assert!(non_negative_arg("ten")
            .unwrap_err()
            .contains("not a number"));
    }
}
