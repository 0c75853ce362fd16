//! Configuration of `iosim sim`: SQLIOSim's INI format and a native TOML.
//!
//! Both formats set the same keys. INI follows SQLIOSim: `[CONFIG]`,
//! `[RandomUser]`, `[AuditUser]`, `[ReadAheadUser]`, `[BulkUpdateUser]`,
//! `[ShrinkUser]`, `[File1]`..`[FileN]`; `;` starts a comment; percentages
//! are hundredths of a percent (`CacheHitRatio=1000` is 10%); booleans are
//! `TRUE`/`FALSE` (case-sensitive, anything else is false with a warning);
//! a non-numeric number is 0 (with a warning), as SQLIOSim does.
//!
//! TOML uses the same sections and keys in snake_case (`[config]`,
//! `[random_user]`, `[[file]]`, `cache_hit_ratio`), real booleans, and
//! percentages in percent (`cache_hit_ratio = 10`). CamelCase keys are
//! accepted too. Unknown sections and keys are reported as warnings.
//!
//! This file holds the configuration's types, defaults and limits; the
//! parsers are in [`crate::sim::config_parse`] and the checks of a parsed
//! configuration (`SimConfig::finalize` and the memory it needs) in
//! `config_check`.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::distributions::Bernoulli;
use serde::{Deserialize, Serialize};

use crate::units::format_size;
use crate::workload::EngineKind;

/// Why a simulator configuration was refused; each message names the key or
/// file and says what to give instead.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The configuration file could not be read.
    #[error("cannot read configuration '{}': {err}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        err: std::io::Error,
    },
    /// A `.toml` file that is not TOML.
    #[error("{origin} is not valid TOML: {reason}")]
    NotToml {
        /// The file.
        origin: String,
        /// The parser's words.
        reason: String,
    },
    /// An INI section header without its `]`.
    #[error("{at}: section header '{line}' lacks its closing ']'")]
    UnclosedSection {
        /// `file:line`.
        at: String,
        /// The line.
        line: String,
    },
    /// NaN or an infinity where a number was expected.
    #[error(
        "{at}: {setting} is not a finite number: give {valid}{}",
        in_section(section)
    )]
    NotFinite {
        /// `file:line` (INI) or the file (TOML).
        at: String,
        /// `Key=value` as written.
        setting: String,
        /// What the key accepts.
        valid: String,
        /// The TOML section it was in.
        section: Option<String>,
    },
    /// A `[FileN]` without `FileName`.
    #[error("[File{file}] has no FileName: give each file a path")]
    NoFileName {
        /// N of `[FileN]`.
        file: usize,
    },
    /// A Windows path without a drive letter (UNC or relative with `\`).
    #[error("[File{file}] FileName '{name}' is a Windows path: give a Linux path (e.g. /mnt/data/sqliosim.mdx)")]
    WindowsPath {
        /// N of `[FileN]`.
        file: usize,
        /// The name.
        name: String,
    },
    /// `IOSIM_DRIVES` is malformed.
    #[error("{0}")]
    Drives(String),
    /// A drive letter `IOSIM_DRIVES` does not map.
    #[error("[File{file}] FileName '{name}': {reason} (for iosim sim, set IOSIM_DRIVES; or give a Linux path)")]
    UnmappedDrive {
        /// N of `[FileN]`.
        file: usize,
        /// The name.
        name: String,
        /// Why it does not map.
        reason: String,
    },
    /// The user counts add up above SQLIOSim's limit.
    #[error("{section} UserCount={count} takes the users configured above SQLIOSim's limit of CPUCount x 1023 - 100 = {limit}: lower UserCount")]
    TooManyUsers {
        /// `[RandomUser]`, ...
        section: &'static str,
        /// Its UserCount.
        count: i64,
        /// The limit.
        limit: i64,
    },
    /// No data file.
    #[error("the configuration has no data file: add a [FileN] with LogFile=FALSE")]
    NoDataFile,
    /// No log file.
    #[error(
        "the configuration has no log file: SQLIOSim needs at least one [FileN] with LogFile=TRUE"
    )]
    NoLogFile,
    /// A size above what Linux allows.
    #[error("[File{file}] {key}={mb} MB is above the largest file Linux allows ({MAX_FILE_MB} MB): give a smaller {key}")]
    FileTooLarge {
        /// N of `[FileN]`.
        file: usize,
        /// `InitialSize` or `MaxSize`.
        key: &'static str,
        /// The size given.
        mb: u64,
    },
    /// `InitialSize` 0.
    #[error("{}: InitialSize is 0 MB: give it a size in MB", name.display())]
    ZeroSize {
        /// The file.
        name: PathBuf,
    },
    /// A percentage that is not one.
    #[error(
        "{key} is {p}: give a percentage from 0 to 100% (INI: hundredths of a percent, 0 to 10000)"
    )]
    BadChance {
        /// The key.
        key: &'static str,
        /// The fraction it came to.
        p: f64,
    },
    /// A minimum above its maximum.
    #[error("{keys}: the minimum {lo} is above the maximum {hi}: give a minimum no larger than the maximum")]
    EmptyRange {
        /// `Min/MaxIOChainLength`, ...
        keys: &'static str,
        /// The minimum.
        lo: u64,
        /// The maximum.
        hi: u64,
    },
    /// The page-state tables would not fit in the address space.
    #[error("[File{file}] MaxSize={max_mb} MB: the data files' page-state tables ({PAGE_STATE_BYTES} bytes per 8 KiB page up to MaxSize, taken only as pages are reached) would reserve {} of address space, more than the {} iosim allows: give MaxSize of at most {most_mb} MB per data file", format_size(*reserved), format_size(TABLE_ADDRESS_SPACE))]
    TablesTooLarge {
        /// N of the largest data file's `[FileN]`.
        file: usize,
        /// Its MaxSize.
        max_mb: u64,
        /// Bytes the tables would reserve.
        reserved: u64,
        /// The largest MaxSize per data file that fits.
        most_mb: u64,
    },
    /// The page-state tables would not fit in memory.
    #[error("[File{file}] InitialSize={initial_mb} MB: the page-state tables of the data files would need {} of memory ({PAGE_STATE_BYTES} bytes per 8 KiB page), but this machine has {} available: give InitialSize of at most {most_mb} MB per data file", format_size(*tables), format_size(*available))]
    TablesOutOfMemory {
        /// N of the largest data file's `[FileN]`.
        file: usize,
        /// Its InitialSize.
        initial_mb: u64,
        /// Bytes the tables need.
        tables: u64,
        /// MemAvailable.
        available: u64,
        /// The largest InitialSize per data file that fits.
        most_mb: u64,
    },
    /// The users' buffers would not fit in memory.
    #[error("the users' page buffers would need {} of memory (UserCount x pages per I/O x 8 KiB, over [RandomUser], [AuditUser], [ReadAheadUser] and [BulkUpdateUser]), but this machine has {} available: lower UserCount or MaxIOChainLength, BuffersValidated, BuffersRAMax, BuffersBUMax", format_size(*users), format_size(*available))]
    BuffersOutOfMemory {
        /// Bytes the buffers need.
        users: u64,
        /// MemAvailable.
        available: u64,
    },
    /// Two files that are one.
    #[error("{first} and {second} are the same file: give every file its own path (a directory given twice with --dir, or a FileName used twice)")]
    SameFile {
        /// The first, in words (`[File1] /x/a.mdf`).
        first: String,
        /// The second.
        second: String,
    },
}

/// ` (in [SECTION])` for a TOML section, nothing otherwise.
fn in_section(section: &Option<String>) -> String {
    section
        .as_ref()
        .map(|s| format!(" (in [{s}])"))
        .unwrap_or_default()
}

/// One file of the simulated database.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileCfg {
    /// Path.
    pub name: PathBuf,
    /// Size at start, MiB.
    pub initial_mb: u64,
    /// Largest size, MiB.
    pub max_mb: u64,
    /// Grow/shrink step, MiB (0 = fixed size).
    pub increment_mb: u64,
    /// May be shrunk.
    pub shrinkable: bool,
    /// A log file (.ldf) rather than a data file.
    pub log_file: bool,
    /// Created sparse.
    pub sparse: bool,
}

/// [RandomUser].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandomUserCfg {
    /// Users; -1 = min(2 x CPUs, 8).
    pub user_count: i64,
    /// Chance to jump to a new region, fraction.
    pub jump_to_new_region: f64,
    /// Region length, pages.
    pub min_chain: u64,
    /// Region length, pages.
    pub max_chain: u64,
    /// Fraction of the pages read that are updated.
    pub read_write_ratio: f64,
    /// Log record size, bytes.
    pub min_log: u64,
    /// Log record size, bytes.
    pub max_log: u64,
    /// Chance a transaction rolls back (in memory), fraction.
    pub rollback_chance: f64,
    /// Pause after each transaction.
    pub sleep_after_ms: u64,
}

/// [AuditUser].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditUserCfg {
    /// Users.
    pub user_count: i64,
    /// Pages validated per cycle.
    pub buffers_validated: u64,
    /// Cycles between pauses.
    pub delay_after_cycles: u64,
    /// Pause, ms.
    pub delay_ms: u64,
}

/// [ReadAheadUser] and [BulkUpdateUser] (same shape).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunUserCfg {
    /// Users; -1 = one per CPU, at most 4.
    pub user_count: i64,
    /// Pages per I/O, minimum.
    pub min_pages: u64,
    /// Pages per I/O, maximum.
    pub max_pages: u64,
    /// Cycles between pauses.
    pub delay_after_cycles: u64,
    /// Pause, ms.
    pub delay_ms: u64,
}

/// [ShrinkUser].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShrinkUserCfg {
    /// Seconds between grow/shrink operations, minimum.
    pub min_interval_s: u64,
    /// Maximum.
    pub max_interval_s: u64,
    /// Increments per operation, minimum.
    pub min_extends: u64,
    /// Maximum.
    pub max_extends: u64,
}

/// What the simulated users draw from, derived from a checked configuration
/// ([`SimConfig::choices`]): every probability and range a user samples.
#[derive(Clone, Debug)]
pub struct Choices {
    /// JumpToNewRegionPercentage: a RandomUser moves to a new region.
    pub jump: Bernoulli,
    /// CacheHitRatio: a page read is served from the simulated cache.
    pub cache_hit: Bernoulli,
    /// RandomUserReadWriteRatio: a page read is updated.
    pub update: Bernoulli,
    /// RollbackChance: a transaction rolls back in memory.
    pub rollback: Bernoulli,
    /// Min/MaxIOChainLength, pages.
    pub chain: RangeInclusive<u64>,
    /// Min/MaxLogPerBuffer, bytes of a log record.
    pub log_bytes: RangeInclusive<u64>,
    /// Min/MaxShrinkInterval, milliseconds between grow/shrink operations.
    pub shrink_wait_ms: RangeInclusive<u64>,
    /// Min/MaxExtends: increments per grow/shrink.
    pub extends: RangeInclusive<u64>,
}

/// Everything `iosim sim` runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// Error log (SQLIOSim's XML; JSON lines for a `.jsonl` / `.json` name).
    pub error_file: PathBuf,
    /// Logical CPUs (sizes the default user counts).
    pub cpu_count: u64,
    /// Simulated buffer pool, MiB (bounds the dirty pages).
    pub max_memory_mb: u64,
    /// Stop at the first error.
    pub stop_on_error: bool,
    /// Cycles; 0 = until interrupted.
    pub test_cycles: u64,
    /// Timed part of each cycle.
    pub test_cycle_duration: Duration,
    /// Fraction of page reads satisfied by the simulated cache.
    pub cache_hit_ratio: f64,
    /// O_DIRECT.
    pub no_buffering: bool,
    /// O_DSYNC.
    pub write_through: bool,
    /// Process-wide outstanding I/O limit (0 = 140,000).
    pub max_outstanding_io: u64,
    /// Throttle target, ms.
    pub target_io_duration_ms: u64,
    /// No throttling in initial update and checkpoints.
    pub allow_io_bursts: bool,
    /// One vectored I/O per run of pages.
    pub use_scatter_gather: bool,
    /// Read-ahead reads pages even when cached.
    pub force_read_ahead: bool,
    /// Delete the files before the run.
    pub delete_files_at_startup: bool,
    /// Delete the files after the run.
    pub delete_files_at_shutdown: bool,
    /// Zero-fill on growth (otherwise instant initialisation with fallocate).
    pub stamp_files: bool,
    /// [RandomUser].
    pub random: RandomUserCfg,
    /// [AuditUser].
    pub audit: AuditUserCfg,
    /// [ReadAheadUser].
    pub read_ahead: RunUserCfg,
    /// [BulkUpdateUser].
    pub bulk: RunUserCfg,
    /// [ShrinkUser].
    pub shrink: ShrinkUserCfg,
    /// Files.
    pub files: Vec<FileCfg>,
    /// iosim: read retries before a failed check is reported.
    pub read_retries: u64,
    /// iosim: I/O engine.
    #[serde(skip, default = "auto_engine")]
    pub engine: EngineKind,
    /// iosim: seed of page contents and user decisions.
    pub seed: u64,
    /// iosim: verify pages (off only to measure the cost of verification).
    pub verify: bool,
}

fn auto_engine() -> EngineKind {
    EngineKind::Auto
}

impl Default for SimConfig {
    fn default() -> Self {
        let cpus = std::thread::available_parallelism()
            .map_or(1, |n| n.get() as u64)
            .min(64);
        SimConfig {
            error_file: PathBuf::from("sqliosim.log.xml"),
            cpu_count: cpus,
            max_memory_mb: default_memory_mb(),
            stop_on_error: true,
            test_cycles: 1,
            test_cycle_duration: Duration::from_secs(300),
            cache_hit_ratio: 0.10,
            no_buffering: true,
            write_through: true,
            max_outstanding_io: 0,
            target_io_duration_ms: 100,
            allow_io_bursts: true,
            use_scatter_gather: true,
            force_read_ahead: true,
            delete_files_at_startup: true,
            delete_files_at_shutdown: false,
            stamp_files: false,
            random: RandomUserCfg {
                user_count: -1,
                jump_to_new_region: 0.05,
                min_chain: 1,
                max_chain: 100,
                read_write_ratio: 0.90,
                min_log: 64,
                max_log: 8192,
                rollback_chance: 0.01,
                sleep_after_ms: 5,
            },
            audit: AuditUserCfg {
                user_count: 2,
                buffers_validated: 64,
                delay_after_cycles: 2,
                delay_ms: 200,
            },
            read_ahead: RunUserCfg {
                user_count: 2,
                min_pages: 32,
                max_pages: 64,
                delay_after_cycles: 2,
                delay_ms: 200,
            },
            bulk: RunUserCfg {
                user_count: -1,
                min_pages: 64,
                max_pages: 128,
                delay_after_cycles: 2,
                delay_ms: 10,
            },
            shrink: ShrinkUserCfg {
                min_interval_s: 120,
                max_interval_s: 600,
                min_extends: 1,
                max_extends: 20,
            },
            files: Vec::new(),
            read_retries: 15,
            engine: EngineKind::native(),
            seed: 0x5106_1051,
            verify: true,
        }
    }
}

/// MemAvailable in MiB (SQLIOSim's default buffer pool is the free memory).
fn default_memory_mb() -> u64 {
    crate::sysmon::host::mem_available_bytes().map_or(1024, |b| (b >> 20).max(16))
}

/// The default file pair in `dir`: a 1 GiB data file that may grow to 2 GiB,
/// and a 50 MiB log.
pub fn default_files(dir: &Path, data_mb: Option<u64>) -> Vec<FileCfg> {
    let data = data_mb.unwrap_or(1024);
    vec![
        FileCfg {
            name: dir.join("sqliosim.mdx"),
            initial_mb: data,
            max_mb: data.saturating_mul(2),
            increment_mb: (data / 16).max(1),
            shrinkable: true,
            log_file: false,
            sparse: false,
        },
        FileCfg {
            name: dir.join("sqliosim.ldx"),
            initial_mb: (data / 2).clamp(1, 50),
            max_mb: (data / 2).clamp(1, 50),
            increment_mb: 0,
            shrinkable: false,
            log_file: true,
            sparse: false,
        },
    ]
}

/// Most address space the page-state tables may reserve (64 TiB: half of
/// x86-64's 128 TiB user space). Reserving costs no memory; touching does.
pub const TABLE_ADDRESS_SPACE: u64 = 64 << 40;

/// Bytes of page state per data page (generation, dirty generation, latch).
pub const PAGE_STATE_BYTES: u64 = 4 + 4 + 1;
/// Pages per MiB.
pub const PAGES_PER_MB: u64 = (1 << 20) / crate::verify::PAGE_SIZE as u64;
/// The largest file size Linux allows (off_t), in MB.
pub const MAX_FILE_MB: u64 = (i64::MAX as u64) >> 20;

/// Most read retries before a failed check is reported (SQLIOSim: 15).
pub const MAX_READ_RETRIES: u64 = 1000;
/// Largest run of pages in one vectored I/O (the kernel's IOV_MAX).
pub const MAX_RUN_PAGES: u64 = 1024;
/// Pages per checkpoint / lazy-writer gather write at most.
pub const CHECKPOINT_RUN: u64 = 128;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config_parse::{parse_ini, parse_toml};

    const DEFAULT_INI: &str = include_str!("../../examples/sqliosim.default.cfg.ini");

    #[test]
    fn shipped_default_ini_parses_without_warnings() {
        let (c, w) = parse_ini(DEFAULT_INI, "default").unwrap();
        // The XML error log is written as XML now: no warning at all.
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.cache_hit_ratio, 0.10);
        assert_eq!(c.random.min_chain, 50);
        assert_eq!(c.random.read_write_ratio, 0.90);
        assert_eq!(c.random.rollback_chance, 0.01);
        assert_eq!(c.random.jump_to_new_region, 0.05);
        assert_eq!(c.bulk.max_pages, 128);
        assert_eq!(c.files.len(), 2);
        assert!(c.files[1].log_file);
        assert_eq!(c.error_file, PathBuf::from("sqliosim.log.xml"));
    }

    #[test]
    fn toml_equivalent_matches_ini() {
        let (a, _) = parse_ini(DEFAULT_INI, "ini").unwrap();
        let (b, w) =
            parse_toml(include_str!("../../examples/sqliosim.default.toml"), "toml").unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            a.error_file.with_extension(""),
            b.error_file.with_extension("")
        );
        let mut b = b;
        b.error_file = a.error_file.clone();
        assert_eq!(a, b);
    }

    #[test]
    fn quirks_and_warnings() {
        let ini = "; comment\n[CONFIG]\nCacheHitRatio=2500 ; a quarter\nStopOnError=true\nTestCycles=abc\nFrobnicate=1\n[Weird]\nx=1\n[File1]\nFileName=/tmp/x.mdx\nInitialSize=10\nMaxSize=5\n";
        let (c, w) = parse_ini(ini, "t").unwrap();
        assert_eq!(c.cache_hit_ratio, 0.25);
        assert!(!c.stop_on_error, "lowercase true is not TRUE");
        assert_eq!(c.test_cycles, 0);
        assert_eq!(c.files[0].max_mb, 10);
        let all = w.join("\n");
        assert!(all.contains("case-sensitive"), "{all}");
        assert!(all.contains("TestCycles=abc"), "{all}");
        assert!(all.contains("unknown key Frobnicate"), "{all}");
        assert!(all.contains("unknown section [weird]"), "{all}");
    }

    #[test]
    fn finalize_checks_files_and_users() {
        let mut c = SimConfig::default();
        assert!(matches!(c.finalize().unwrap_err(), ConfigError::NoDataFile));
        let mut c = SimConfig {
            cpu_count: 2,
            files: default_files(Path::new("/tmp"), Some(64)),
            ..SimConfig::default()
        };
        c.finalize().unwrap();
        assert_eq!(c.random.user_count, 4);
        assert_eq!(c.bulk.user_count, 2);
        assert_eq!(c.files[1].initial_mb, 32);
        let mut c = SimConfig {
            files: vec![c.files[0].clone()],
            ..c
        };
        assert!(matches!(c.finalize().unwrap_err(), ConfigError::NoLogFile));
    }

    #[test]
    fn missing_filename_is_an_error() {
        assert!(parse_ini("[File1]\nInitialSize=5\n", "t")
            .unwrap_err()
            .to_string()
            .contains("FileName"));
    }

    /// On Windows, SQLIOSim's configuration files are used with their paths unchanged.
    #[cfg(windows)]
    #[test]
    fn windows_file_names_are_used_as_they_are_on_windows() {
        let ini = "[CONFIG]\n[File1]\nFileName=q:\\sqliosim.mdx\nInitialSize=10\nLogFile=FALSE\n[File2]\nFileName=\\\\srv\\share\\l.ldx\nInitialSize=10\nLogFile=TRUE\n";
        let (c, _) = parse_ini(ini, "t.ini").unwrap();
        assert_eq!(c.files[0].name, PathBuf::from("q:\\sqliosim.mdx"));
        assert_eq!(c.files[1].name, PathBuf::from("\\\\srv\\share\\l.ldx"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn windows_file_names_map_through_iosim_drives_or_are_refused() {
        std::env::set_var("IOSIM_DRIVES", "Q=/mnt/q");
        let ini = |name: &str| {
            format!("[CONFIG]\n[File1]\nFileName={name}\nInitialSize=10\nLogFile=FALSE\n[File2]\nFileName=/tmp/l.ldx\nInitialSize=10\nLogFile=TRUE\n")
        };
        let (c, _) = parse_ini(&ini("q:\\sqliosim.mdx"), "t.ini").unwrap();
        assert_eq!(c.files[0].name, PathBuf::from("/mnt/q/sqliosim.mdx"));
        let e = parse_ini(&ini("v:\\sqliosim.mdx"), "t.ini")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--drive V=") && e.contains("IOSIM_DRIVES"),
            "{e}"
        );
        let e = parse_ini(&ini("\\DB52\\testfile.dat"), "t.ini")
            .unwrap_err()
            .to_string();
        assert!(e.contains("Windows path"), "{e}");
        let (c, _) = parse_ini(&ini("/tmp/d.mdx"), "t.ini").unwrap();
        assert_eq!(c.files[0].name, PathBuf::from("/tmp/d.mdx"));
    }

    /// Every numeric key of the INI format, with its section.
    const NUMERIC_INI_KEYS: [(&str, &str); 33] = [
        ("CONFIG", "CPUCount"),
        ("CONFIG", "Affinity"),
        ("CONFIG", "IOAffinity"),
        ("CONFIG", "MaxMemoryMB"),
        ("CONFIG", "TestCycles"),
        ("CONFIG", "TestCycleDuration"),
        ("CONFIG", "CacheHitRatio"),
        ("CONFIG", "MaxOutstandingIO"),
        ("CONFIG", "TargetIODuration"),
        ("CONFIG", "ReadRetries"),
        ("CONFIG", "Seed"),
        ("RandomUser", "UserCount"),
        ("RandomUser", "JumpToNewRegionPercentage"),
        ("RandomUser", "MinIOChainLength"),
        ("RandomUser", "MaxIOChainLength"),
        ("RandomUser", "RandomUserReadWriteRatio"),
        ("RandomUser", "MinLogPerBuffer"),
        ("RandomUser", "MaxLogPerBuffer"),
        ("RandomUser", "RollbackChance"),
        ("RandomUser", "SleepAfter"),
        ("RandomUser", "YieldPercentage"),
        ("RandomUser", "CPUCyclesMin"),
        ("AuditUser", "BuffersValidated"),
        ("AuditUser", "DelayAfterCycles"),
        ("AuditUser", "AuditDelay"),
        ("ReadAheadUser", "BuffersRAMax"),
        ("ReadAheadUser", "RADelay"),
        ("BulkUpdateUser", "BuffersBUMin"),
        ("BulkUpdateUser", "BUDelay"),
        ("ShrinkUser", "MinShrinkInterval"),
        ("ShrinkUser", "MaxExtends"),
        ("File1", "InitialSize"),
        ("File1", "Increment"),
    ];

    const FILES: &str = "[File1]\nFileName=/tmp/nf.mdx\nInitialSize=8\n[File2]\nFileName=/tmp/nf.ldx\nInitialSize=4\nLogFile=TRUE\n";

    #[test]
    fn non_finite_numbers_are_refused_naming_the_key() {
        for (section, key) in NUMERIC_INI_KEYS {
            for v in ["NaN", "nan", "inf", "-inf", "infinity", "-Infinity"] {
                // The key after the files, so that [File1] keys land in their section.
                let ini = format!("{FILES}[{section}]\n{key}={v}\n");
                let e = parse_ini(&ini, "t.ini").unwrap_err().to_string();
                assert!(
                    e.starts_with("t.ini:")
                        && e.contains(&format!("{key}={v} is not a finite number: give ")),
                    "{key}={v}: {e}"
                );
            }
        }
        let e = parse_ini("[RandomUser]\nRollbackChance=NaN\n", "t.ini")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.ini:2: RollbackChance=NaN is not a finite number: give hundredths of a percent from 0 to 10000 (100 = 1%)"
        );
        // TOML: `nan` and `inf` are TOML floats; percentages are in percent there.
        for v in ["nan", "inf", "-inf", "+inf"] {
            let t = format!("[random_user]\nrollback_chance = {v}\n");
            let e = parse_toml(&t, "t.toml").unwrap_err().to_string();
            assert!(
                e.contains("rollback_chance = ")
                    && e.contains("is not a finite number: give a percentage from 0 to 100")
                    && e.contains("[random_user]"),
                "{v}: {e}"
            );
            let t = format!("[config]\ntest_cycles = {v}\n");
            let e = parse_toml(&t, "t.toml").unwrap_err().to_string();
            assert!(
                e.contains("test_cycles = ") && e.contains("not a finite number"),
                "{e}"
            );
        }
    }

    #[test]
    fn huge_and_negative_zero_values_are_read_or_capped_without_overflow() {
        let big = [
            "18446744073709551615",
            "18446744073709551616",
            "1e30",
            "1.7976931348623157e308",
            "-1e30",
            "-0",
            "-0.0",
        ];
        for (section, key) in NUMERIC_INI_KEYS {
            for v in big {
                let ini = format!("{FILES}[{section}]\n{key}={v}\n");
                // Parsed (or refused with a message); a finalized config gives its users' choices.
                if let Ok((mut c, _)) = parse_ini(&ini, "t.ini") {
                    if c.finalize().is_ok() {
                        c.choices().unwrap();
                    }
                }
            }
        }
        let (c, _) = parse_ini("[CONFIG]\nSeed=18446744073709551615\n", "t").unwrap();
        assert_eq!(c.seed, u64::MAX, "a u64 key takes its whole range exactly");
        let (c, w) = parse_ini(
            "[CONFIG]\nCacheHitRatio=-0\n[RandomUser]\nRollbackChance=1e30\nJumpToNewRegionPercentage=-5\n",
            "t",
        )
        .unwrap();
        assert!(c.cache_hit_ratio == 0.0 && c.cache_hit_ratio.is_sign_positive());
        assert_eq!(c.random.rollback_chance, 1.0);
        assert_eq!(c.random.jump_to_new_region, 0.0);
        let all = w.join("\n");
        assert!(
            all.contains("RollbackChance=1e30 is outside hundredths of a percent from 0 to 10000 (100 = 1%); using 100%"),
            "{all}"
        );
        assert!(
            all.contains("JumpToNewRegionPercentage=-5 is outside"),
            "{all}"
        );
        // Waits and durations are capped so that deadlines in ns cannot overflow.
        let mut c = parse_ini(
            &format!("[CONFIG]\nTestCycleDuration=1e30\nTargetIODuration=18446744073709551615\nReadRetries=1e30\n[RandomUser]\nSleepAfter=18446744073709551615\n[ShrinkUser]\nMinShrinkInterval=1e30\nMaxShrinkInterval=1e30\n{FILES}"),
            "t",
        )
        .unwrap()
        .0;
        let w = c.finalize().unwrap().join("\n");
        let max_s = crate::units::MAX_DURATION_S;
        assert_eq!(c.test_cycle_duration, Duration::from_secs(max_s));
        assert_eq!(c.random.sleep_after_ms, max_s * 1000);
        assert_eq!(c.target_io_duration_ms, max_s * 1000);
        assert_eq!(c.shrink.max_interval_s, max_s);
        assert_eq!(c.read_retries, MAX_READ_RETRIES);
        assert!(
            w.contains(
                "SleepAfter=18446744073709551615 ms is above the longest wait iosim accepts"
            ),
            "{w}"
        );
        assert!(w.contains("TestCycleDuration="), "{w}");
        let ch = c.choices().unwrap();
        assert_eq!(*ch.shrink_wait_ms.end(), max_s * 1000);
        // TOML: -0.0 and huge floats.
        let (c, _) = parse_toml(
            "[config]\ncache_hit_ratio = -0.0\nseed = 9223372036854775807\ntest_cycles = 1e300\n",
            "t",
        )
        .unwrap();
        assert!(c.cache_hit_ratio == 0.0 && c.cache_hit_ratio.is_sign_positive());
        assert_eq!(c.test_cycles, u64::MAX);
    }

    #[test]
    fn choices_refuse_a_probability_that_is_not_one() {
        let mut c = SimConfig {
            files: default_files(Path::new("/tmp"), Some(8)),
            ..SimConfig::default()
        };
        c.random.rollback_chance = f64::NAN;
        let e = c.finalize().unwrap_err().to_string();
        assert!(
            e.starts_with("RollbackChance is NaN: give a percentage"),
            "{e}"
        );
        c.random.rollback_chance = 0.5;
        c.cache_hit_ratio = f64::INFINITY;
        assert!(c
            .choices()
            .unwrap_err()
            .to_string()
            .starts_with("CacheHitRatio is inf"));
    }

    #[test]
    fn cpu_simulation_warns_only_when_on() {
        let (_, w) = parse_ini(
            "[RandomUser]\nCPUSimulation=FALSE\nYieldPercentage=0\n[File1]\nFileName=/tmp/a\n",
            "t",
        )
        .unwrap();
        assert!(w.iter().all(|w| !w.contains("not simulated")), "{w:?}");
        let (_, w) = parse_ini(
            "[RandomUser]\nCPUSimulation=TRUE\nYieldPercentage=500\n[File1]\nFileName=/tmp/a\n",
            "t",
        )
        .unwrap();
        assert_eq!(
            w.iter().filter(|w| w.contains("not simulated")).count(),
            2,
            "{w:?}"
        );
    }
}
