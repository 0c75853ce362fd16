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

/// Keys whose INI value is hundredths of a percent.
const PERCENT_KEYS: [&str; 5] = [
    "cachehitratio",
    "jumptonewregionpercentage",
    "randomuserreadwriteratio",
    "rollbackchance",
    "yieldpercentage",
];

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

struct Setter<'a> {
    cfg: &'a mut SimConfig,
    warnings: &'a mut Vec<String>,
    origin: String,
    /// TOML (percentages in percent, `key = value`) rather than INI.
    toml: bool,
    /// The first value refused (a run must not start with it).
    error: Option<ConfigError>,
}

impl Setter<'_> {
    /// `Key=value` as the user wrote it (TOML: `key = value`).
    fn shown(&self, key: &str, v: &str) -> String {
        if self.toml {
            format!("{key} = {}", v.trim())
        } else {
            format!("{key}={}", v.trim())
        }
    }

    /// Refuses NaN and infinities: they parse as numbers, but no key has a
    /// meaning for them (SQLIOSim's own parser reads none of them).
    fn refuse_non_finite(&mut self, key: &str, v: &str, valid: &str) {
        if self.error.is_none() {
            self.error = Some(ConfigError::NotFinite {
                at: self.origin.clone(),
                setting: self.shown(key, v),
                valid: valid.to_string(),
                section: None,
            });
        }
    }

    /// A whole number (user counts: -1 = the default).
    fn num(&mut self, key: &str, v: &str) -> i64 {
        let t = v.trim();
        match t.parse::<i64>() {
            Ok(n) => n,
            Err(_) => match t.parse::<f64>() {
                // Saturates: 1e30 reads as i64::MAX, which the checks below refuse or cap.
                Ok(f) if f.is_finite() => f as i64,
                Ok(_) => {
                    self.refuse_non_finite(key, v, "a whole number, e.g. 4");
                    0
                }
                Err(_) => {
                    self.warnings.push(format!(
                        "{}: {key}={v} is not a number; SQLIOSim reads it as 0, so does iosim",
                        self.origin
                    ));
                    0
                }
            },
        }
    }

    /// A whole number of 0 or more (the whole u64 range: a seed of
    /// 18446744073709551615 is read exactly).
    fn u(&mut self, key: &str, v: &str) -> u64 {
        let t = v.trim();
        if let Ok(n) = t.parse::<u64>() {
            return n;
        }
        if let Ok(f) = t.parse::<f64>() {
            if f.is_finite() && f >= 0.0 {
                // Saturates: 1e30 reads as u64::MAX, which the checks cap where it matters.
                return f as u64;
            }
        }
        let n = self.num(key, v);
        if n < 0 {
            self.warnings
                .push(format!("{}: {key}={v} is negative; using 0", self.origin));
        }
        n.max(0) as u64
    }

    /// A percentage: INI in hundredths of a percent (SQLIOSim), TOML in
    /// percent (already scaled to hundredths by the TOML reader). Returns a
    /// fraction in 0..=1 (never -0); values outside are capped with a warning.
    fn pct(&mut self, key: &str, v: &str) -> f64 {
        let unit = if self.toml {
            "a percentage from 0 to 100"
        } else {
            "hundredths of a percent from 0 to 10000 (100 = 1%)"
        };
        let t = v.trim();
        let raw = match t.parse::<f64>() {
            Ok(r) if r.is_finite() => r,
            Ok(_) => {
                self.refuse_non_finite(key, v, unit);
                return 0.0;
            }
            Err(_) => {
                self.warnings.push(format!(
                    "{}: {key}={v} is not a number; SQLIOSim reads it as 0, so does iosim",
                    self.origin
                ));
                return 0.0;
            }
        };
        let frac = raw / 10_000.0;
        if !(0.0..=1.0).contains(&frac) {
            let (capped, used) = if frac < 0.0 {
                (0.0, "0")
            } else {
                (1.0, "100%")
            };
            let shown = if self.toml {
                format!("{key} = {}", raw / 100.0)
            } else {
                format!("{key}={t}")
            };
            self.warnings.push(format!(
                "{}: {shown} is outside {unit}; using {used}",
                self.origin
            ));
            return capped;
        }
        // `+ 0.0` turns -0 into 0 (reports print 0%, not -0%).
        frac + 0.0
    }

    fn boolean(&mut self, key: &str, v: &str) -> bool {
        match v.trim() {
            "TRUE" => true,
            "FALSE" => false,
            other => {
                self.warnings.push(format!(
                    "{}: {key}={other}: booleans are TRUE or FALSE (case-sensitive, as in SQLIOSim); read as FALSE",
                    self.origin
                ));
                false
            }
        }
    }

    /// Sets one key. `section` and `key` are normalised (lowercase, no `_`).
    fn set(&mut self, section: &str, key: &str, raw_key: &str, v: &str) {
        let known = match section {
            "config" => self.set_config(key, raw_key, v),
            "randomuser" => self.set_random(key, raw_key, v),
            "audituser" => self.set_audit(key, raw_key, v),
            "readaheaduser" => {
                let r = &mut self.cfg.read_ahead.clone();
                let known = self.set_run(
                    r,
                    key,
                    raw_key,
                    v,
                    "buffersramin",
                    "buffersramax",
                    "radelay",
                );
                self.cfg.read_ahead = r.clone();
                known
            }
            "bulkupdateuser" => {
                let r = &mut self.cfg.bulk.clone();
                let known = self.set_run(
                    r,
                    key,
                    raw_key,
                    v,
                    "buffersbumin",
                    "buffersbumax",
                    "budelay",
                );
                self.cfg.bulk = r.clone();
                known
            }
            "shrinkuser" => self.set_shrink(key, raw_key, v),
            s if s.starts_with("file") => self.set_file(s, key, raw_key, v),
            _ => {
                self.warnings.push(format!(
                    "{}: unknown section [{section}] ignored",
                    self.origin
                ));
                return;
            }
        };
        if !known {
            self.warnings.push(format!(
                "{}: unknown key {raw_key} in [{section}] ignored",
                self.origin
            ));
        }
    }

    fn set_config(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            // SQLIOSim's XML log; a .jsonl / .json name gets JSON lines (sim/errorlog.rs).
            "errorfile" => self.cfg.error_file = PathBuf::from(v.trim()),
            "cpucount" => self.cfg.cpu_count = self.u(k, v).clamp(1, 64),
            "affinity" | "ioaffinity" => {
                if self.u(k, v) != 0 {
                    self.warnings.push(format!(
                        "{}: {k} is accepted but not applied: pin iosim with taskset instead",
                        self.origin
                    ));
                }
            }
            "maxmemorymb" => self.cfg.max_memory_mb = self.u(k, v).max(1),
            "stoponerror" => self.cfg.stop_on_error = self.boolean(k, v),
            "testcycles" => self.cfg.test_cycles = self.u(k, v),
            "testcycleduration" => self.cfg.test_cycle_duration = Duration::from_secs(self.u(k, v)),
            "cachehitratio" => self.cfg.cache_hit_ratio = self.pct(k, v),
            "nobuffering" => self.cfg.no_buffering = self.boolean(k, v),
            "writethrough" => self.cfg.write_through = self.boolean(k, v),
            "maxoutstandingio" => self.cfg.max_outstanding_io = self.u(k, v),
            "targetioduration" => self.cfg.target_io_duration_ms = self.u(k, v).max(1),
            "allowiobursts" => self.cfg.allow_io_bursts = self.boolean(k, v),
            "usescattergather" | "scattergather" => {
                self.cfg.use_scatter_gather = self.boolean(k, v)
            }
            "forcereadahead" => self.cfg.force_read_ahead = self.boolean(k, v),
            "deletefilesatstartup" => self.cfg.delete_files_at_startup = self.boolean(k, v),
            "deletefilesatshutdown" => self.cfg.delete_files_at_shutdown = self.boolean(k, v),
            "stampfiles" => self.cfg.stamp_files = self.boolean(k, v),
            "readretries" => self.cfg.read_retries = self.u(k, v),
            "seed" => self.cfg.seed = self.u(k, v),
            "engine" => match v.trim().to_ascii_lowercase().as_str() {
                "uring" | "io_uring" => self.cfg.engine = EngineKind::Uring,
                "sync" => self.cfg.engine = EngineKind::Sync,
                other => self.warnings.push(format!(
                    "{}: Engine={other} unknown (use uring or sync); keeping {}",
                    self.origin,
                    self.cfg.engine.name()
                )),
            },
            _ => return false,
        }
        true
    }

    fn set_random(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            "usercount" => self.cfg.random.user_count = self.num(k, v),
            "jumptonewregionpercentage" => self.cfg.random.jump_to_new_region = self.pct(k, v),
            "miniochainlength" => self.cfg.random.min_chain = self.u(k, v).max(1),
            "maxiochainlength" => self.cfg.random.max_chain = self.u(k, v).max(1),
            "randomuserreadwriteratio" => self.cfg.random.read_write_ratio = self.pct(k, v),
            "minlogperbuffer" => self.cfg.random.min_log = self.u(k, v).clamp(1, 64_000),
            "maxlogperbuffer" => self.cfg.random.max_log = self.u(k, v).clamp(1, 64_000),
            "rollbackchance" => self.cfg.random.rollback_chance = self.pct(k, v),
            "sleepafter" => self.cfg.random.sleep_after_ms = self.u(k, v),
            "yieldpercentage" | "cpusimulation" | "cpucyclesmin" | "cpucyclesmax" => {
                // Undocumented CPU-burning knobs of the shipped INI: their off values
                // (FALSE / 0, as shipped) change nothing; anything else is not simulated.
                let t = v.trim();
                let n = t.parse::<f64>();
                if n.as_ref().is_ok_and(|n| !n.is_finite()) {
                    self.refuse_non_finite(k, v, "0 or FALSE (these keys are not simulated)");
                    return true;
                }
                let off = t == "FALSE" || n.is_ok_and(|n| n == 0.0);
                if !off {
                    self.warnings.push(format!(
                        "{}: {k}={t} is accepted but not simulated: iosim users spend no extra CPU per page and do not yield (SQLIOSim documents neither key)",
                        self.origin
                    ));
                }
            }
            _ => return false,
        }
        true
    }

    fn set_audit(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            "usercount" => self.cfg.audit.user_count = self.num(k, v),
            "buffersvalidated" => self.cfg.audit.buffers_validated = self.u(k, v).max(1),
            "delayaftercycles" => self.cfg.audit.delay_after_cycles = self.u(k, v),
            "auditdelay" => self.cfg.audit.delay_ms = self.u(k, v),
            _ => return false,
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn set_run(
        &mut self,
        r: &mut RunUserCfg,
        key: &str,
        k: &str,
        v: &str,
        min: &str,
        max: &str,
        delay: &str,
    ) -> bool {
        if key == "usercount" {
            r.user_count = self.num(k, v);
        } else if key == min {
            r.min_pages = self.u(k, v).max(1);
        } else if key == max {
            r.max_pages = self.u(k, v).max(1);
        } else if key == "delayaftercycles" {
            r.delay_after_cycles = self.u(k, v);
        } else if key == delay {
            r.delay_ms = self.u(k, v);
        } else {
            return false;
        }
        true
    }

    fn set_shrink(&mut self, key: &str, k: &str, v: &str) -> bool {
        match key {
            "minshrinkinterval" => self.cfg.shrink.min_interval_s = self.u(k, v),
            "maxshrinkinterval" => self.cfg.shrink.max_interval_s = self.u(k, v),
            "minextends" => self.cfg.shrink.min_extends = self.u(k, v).max(1),
            "maxextends" => self.cfg.shrink.max_extends = self.u(k, v).max(1),
            _ => return false,
        }
        true
    }

    fn set_file(&mut self, section: &str, key: &str, k: &str, v: &str) -> bool {
        let Ok(n) = section["file".len()..].parse::<usize>() else {
            self.warnings.push(format!(
                "{}: section [{section}] ignored: use [File1], [File2], ...",
                self.origin
            ));
            return true;
        };
        if n == 0 || n > 4096 {
            self.warnings
                .push(format!("{}: section [{section}] ignored", self.origin));
            return true;
        }
        while self.cfg.files.len() < n {
            self.cfg.files.push(FileCfg {
                name: PathBuf::new(),
                initial_mb: 0,
                max_mb: 0,
                increment_mb: 0,
                shrinkable: false,
                log_file: false,
                sparse: false,
            });
        }
        let i = n - 1;
        match key {
            "filename" => self.cfg.files[i].name = PathBuf::from(v.trim()),
            "initialsize" => self.cfg.files[i].initial_mb = self.u(k, v),
            "maxsize" => self.cfg.files[i].max_mb = self.u(k, v),
            "increment" => self.cfg.files[i].increment_mb = self.u(k, v),
            "shrinkable" => self.cfg.files[i].shrinkable = self.boolean(k, v),
            "logfile" => self.cfg.files[i].log_file = self.boolean(k, v),
            "sparse" => self.cfg.files[i].sparse = self.boolean(k, v),
            _ => return false,
        }
        true
    }
}

/// Parses SQLIOSim's INI text over the defaults. Returns the configuration and warnings.
pub fn parse_ini(text: &str, origin: &str) -> Result<(SimConfig, Vec<String>), ConfigError> {
    let mut cfg = SimConfig::default();
    let mut warnings = Vec::new();
    let mut section = String::new();
    {
        let mut st = Setter {
            cfg: &mut cfg,
            warnings: &mut warnings,
            origin: origin.to_string(),
            toml: false,
            error: None,
        };
        for (lineno, line) in text.lines().enumerate() {
            let line = line.split(';').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            st.origin = format!("{origin}:{}", lineno + 1);
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .ok_or_else(|| ConfigError::UnclosedSection {
                        at: format!("{origin}:{}", lineno + 1),
                        line: line.to_string(),
                    })?;
                section = norm(name);
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                st.warnings
                    .push(format!("{}: '{line}' is not key=value; ignored", st.origin));
                continue;
            };
            if section.is_empty() {
                st.warnings
                    .push(format!("{}: {k} outside any section; ignored", st.origin));
                continue;
            }
            st.set(&section, &norm(k), k.trim(), v);
            if let Some(e) = st.error.take() {
                return Err(e);
            }
        }
    }
    finish_files(&mut cfg)?;
    Ok((cfg, warnings))
}

/// Parses the native TOML format over the defaults.
pub fn parse_toml(text: &str, origin: &str) -> Result<(SimConfig, Vec<String>), ConfigError> {
    let doc: toml::Table = text
        .parse::<toml::Table>()
        .map_err(|e| ConfigError::NotToml {
            origin: origin.to_string(),
            reason: e.to_string(),
        })?;
    let mut cfg = SimConfig::default();
    let mut warnings = Vec::new();
    {
        let mut st = Setter {
            cfg: &mut cfg,
            warnings: &mut warnings,
            origin: origin.to_string(),
            toml: true,
            error: None,
        };
        for (sec, val) in &doc {
            let nsec = norm(sec);
            let tables: Vec<(String, &toml::Table)> = match (nsec.as_str(), val) {
                ("file" | "files", toml::Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| t.as_table().map(|t| (format!("file{}", i + 1), t)))
                    .collect(),
                (_, toml::Value::Table(t)) => vec![(nsec.clone(), t)],
                _ => {
                    st.warnings.push(format!(
                        "{origin}: top-level key '{sec}' ignored: settings belong in sections such as [config]"
                    ));
                    continue;
                }
            };
            for (section, t) in tables {
                for (k, v) in t {
                    let nk = norm(k);
                    let s = match v {
                        toml::Value::Boolean(b) => (if *b { "TRUE" } else { "FALSE" }).to_string(),
                        toml::Value::Integer(i) if PERCENT_KEYS.contains(&nk.as_str()) => {
                            (*i as f64 * 100.0).to_string()
                        }
                        toml::Value::Float(f) if PERCENT_KEYS.contains(&nk.as_str()) => {
                            (f * 100.0).to_string()
                        }
                        toml::Value::Integer(i) => i.to_string(),
                        toml::Value::Float(f) => f.to_string(),
                        toml::Value::String(s) => s.clone(),
                        other => {
                            st.warnings.push(format!(
                                "{origin}: [{sec}] {k} = {other} has an unsupported type; ignored"
                            ));
                            continue;
                        }
                    };
                    st.set(&section, &nk, k, &s);
                    if let Some(mut e) = st.error.take() {
                        if let ConfigError::NotFinite { section, .. } = &mut e {
                            *section = Some(sec.to_string());
                        }
                        return Err(e);
                    }
                }
            }
        }
    }
    finish_files(&mut cfg)?;
    Ok((cfg, warnings))
}

fn finish_files(cfg: &mut SimConfig) -> Result<(), ConfigError> {
    for (i, f) in cfg.files.iter_mut().enumerate() {
        if f.name.as_os_str().is_empty() {
            return Err(ConfigError::NoFileName { file: i + 1 });
        }
        if f.max_mb < f.initial_mb {
            f.max_mb = f.initial_mb;
        }
        f.name = windows_path(&f.name, i)?;
    }
    Ok(())
}

/// SQLIOSim's configurations name Windows paths (`f:\sqliosim.mdx`): the drive
/// letter maps through `IOSIM_DRIVES` as in `iosim sqlio` / `iosim diskspd`;
/// an unmapped drive letter or a UNC path is refused (never a file literally
/// named `f:\...`).
fn windows_path(name: &Path, i: usize) -> Result<PathBuf, ConfigError> {
    let raw = name.to_string_lossy();
    if crate::platform::IS_WINDOWS {
        // SQLIOSim's own paths, on its own system: used as they are, unless
        // the user mapped the drive (`Extensions::resolve`).
        let ext = crate::compat::Extensions::from_env()
            .map_err(|e| ConfigError::Drives(e.to_string()))?;
        return ext.resolve(&raw).map_err(|e| ConfigError::UnmappedDrive {
            file: i + 1,
            name: raw.to_string(),
            reason: e.to_string(),
        });
    }
    let b = raw.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if !drive && !raw.starts_with("\\\\") && !raw.contains('\\') {
        return Ok(name.to_path_buf());
    }
    if !drive {
        return Err(ConfigError::WindowsPath {
            file: i + 1,
            name: raw.to_string(),
        });
    }
    let ext =
        crate::compat::Extensions::from_env().map_err(|e| ConfigError::Drives(e.to_string()))?;
    ext.resolve(&raw).map_err(|e| ConfigError::UnmappedDrive {
        file: i + 1,
        name: raw.to_string(),
        reason: e.to_string(),
    })
}

/// Reads a configuration file: TOML when it ends in `.toml`, INI otherwise.
pub fn load(path: &Path) -> Result<(SimConfig, Vec<String>), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Unreadable {
        path: path.to_path_buf(),
        err,
    })?;
    let origin = path.display().to_string();
    if path.extension().is_some_and(|e| e == "toml") {
        parse_toml(&text, &origin)
    } else {
        parse_ini(&text, &origin)
    }
}

impl SimConfig {
    /// Resolves -1 user counts and checks what the run needs. Returns warnings.
    pub fn finalize(&mut self) -> Result<Vec<String>, ConfigError> {
        let mut w = Vec::new();
        self.resolve_user_counts()?;
        self.clamp_durations(&mut w);
        self.clamp_ranges(&mut w);
        self.check_files(&mut w)?;
        if self.use_scatter_gather && !self.no_buffering {
            w.push("UseScatterGather=TRUE forces NoBuffering=TRUE, as in SQLIOSim".into());
            self.no_buffering = true;
        }
        if let Some(avail) = crate::sysmon::host::mem_available_bytes() {
            self.check_memory(avail)?;
        }
        self.choices()?;
        Ok(w)
    }

    /// Resolves -1 user counts from the CPU count, and refuses more users
    /// than the machine can run, each kind alone and all together.
    fn resolve_user_counts(&mut self) -> Result<(), ConfigError> {
        let cpus = self.cpu_count.max(1) as i64;
        if self.random.user_count < 0 {
            self.random.user_count = (2 * cpus).min(8);
        }
        if self.bulk.user_count < 0 {
            self.bulk.user_count = cpus.min(4);
        }
        if self.read_ahead.user_count < 0 {
            self.read_ahead.user_count = 2;
        }
        if self.audit.user_count < 0 {
            self.audit.user_count = 2;
        }
        // Each count alone and their sum (checked: a huge UserCount must not
        // wrap around and start threads without end).
        let limit = cpus * 1023 - 100;
        let mut total: i64 = 0;
        for (n, section) in [
            (self.random.user_count, "[RandomUser]"),
            (self.audit.user_count, "[AuditUser]"),
            (self.read_ahead.user_count, "[ReadAheadUser]"),
            (self.bulk.user_count, "[BulkUpdateUser]"),
        ] {
            total =
                total
                    .checked_add(n)
                    .filter(|&t| t <= limit)
                    .ok_or(ConfigError::TooManyUsers {
                        section,
                        count: n,
                        limit,
                    })?;
        }
        Ok(())
    }

    /// Caps waits and durations at MAX_DURATION_S (about 31 years, as
    /// --duration), so that deadlines in nanoseconds cannot overflow, and the
    /// read retries at their limit.
    fn clamp_durations(&mut self, w: &mut Vec<String>) {
        let max_s = crate::units::MAX_DURATION_S;
        for (v, what, unit, per_s) in [
            (&mut self.random.sleep_after_ms, "SleepAfter", "ms", 1000),
            (&mut self.audit.delay_ms, "AuditDelay", "ms", 1000),
            (&mut self.read_ahead.delay_ms, "RADelay", "ms", 1000),
            (&mut self.bulk.delay_ms, "BUDelay", "ms", 1000),
            (
                &mut self.target_io_duration_ms,
                "TargetIODuration",
                "ms",
                1000,
            ),
            (&mut self.shrink.min_interval_s, "MinShrinkInterval", "s", 1),
            (&mut self.shrink.max_interval_s, "MaxShrinkInterval", "s", 1),
        ] {
            if *v > max_s * per_s {
                w.push(format!(
                    "{what}={v} {unit} is above the longest wait iosim accepts ({max_s} s, about 31 years); using {} {unit}",
                    max_s * per_s
                ));
                *v = max_s * per_s;
            }
        }
        if self.read_retries > MAX_READ_RETRIES {
            w.push(format!(
                "ReadRetries={} (--retries) is above {MAX_RETRIES}: a failed check re-reads its page that many times before it is reported; using {MAX_RETRIES}",
                self.read_retries,
                MAX_RETRIES = MAX_READ_RETRIES
            ));
            self.read_retries = MAX_READ_RETRIES;
        }
        if self.test_cycle_duration > Duration::from_secs(max_s) {
            w.push(format!(
                "TestCycleDuration={} s is above the longest duration iosim accepts ({max_s} s, about 31 years); using {max_s} s",
                self.test_cycle_duration.as_secs()
            ));
            self.test_cycle_duration = Duration::from_secs(max_s);
        }
    }

    /// Makes every minimum at most its maximum, and runs of pages at most one
    /// vectored I/O.
    fn clamp_ranges(&mut self, w: &mut Vec<String>) {
        for (lo, hi, what) in [
            (
                &mut self.random.min_chain,
                &mut self.random.max_chain,
                "Min/MaxIOChainLength",
            ),
            (
                &mut self.read_ahead.min_pages,
                &mut self.read_ahead.max_pages,
                "BuffersRAMin/Max",
            ),
            (
                &mut self.bulk.min_pages,
                &mut self.bulk.max_pages,
                "BuffersBUMin/Max",
            ),
            (
                &mut self.random.min_log,
                &mut self.random.max_log,
                "Min/MaxLogPerBuffer",
            ),
            (
                &mut self.shrink.min_extends,
                &mut self.shrink.max_extends,
                "Min/MaxExtends",
            ),
            (
                &mut self.shrink.min_interval_s,
                &mut self.shrink.max_interval_s,
                "Min/MaxShrinkInterval",
            ),
        ] {
            if *lo > *hi {
                w.push(format!(
                    "{what}: minimum {lo} above maximum {hi}; using {hi} for both"
                ));
                *lo = *hi;
            }
        }
        for (v, what) in [
            (&mut self.random.max_chain, "MaxIOChainLength"),
            (&mut self.read_ahead.max_pages, "BuffersRAMax"),
            (&mut self.bulk.max_pages, "BuffersBUMax"),
            (&mut self.audit.buffers_validated, "BuffersValidated"),
        ] {
            if *v > MAX_RUN_PAGES {
                w.push(format!("{what}={v} is above {MAX_RUN_PAGES} pages (one vectored I/O); using {MAX_RUN_PAGES}"));
                *v = MAX_RUN_PAGES;
            }
        }
        self.random.min_chain = self.random.min_chain.min(self.random.max_chain);
        self.read_ahead.min_pages = self.read_ahead.min_pages.min(self.read_ahead.max_pages);
        self.bulk.min_pages = self.bulk.min_pages.min(self.bulk.max_pages);
    }

    /// Refuses a configuration without a data file or a log file, with the
    /// same file twice, or with a file too large or empty; reduces increments
    /// as SQLIOSim does.
    fn check_files(&mut self, w: &mut Vec<String>) -> Result<(), ConfigError> {
        if self.files.iter().filter(|f| !f.log_file).count() == 0 {
            return Err(ConfigError::NoDataFile);
        }
        if !self.files.iter().any(|f| f.log_file) {
            return Err(ConfigError::NoLogFile);
        }
        self.check_distinct_files()?;
        for (i, f) in self.files.iter_mut().enumerate() {
            for (mb, key) in [(f.initial_mb, "InitialSize"), (f.max_mb, "MaxSize")] {
                if mb > MAX_FILE_MB {
                    return Err(ConfigError::FileTooLarge {
                        file: i + 1,
                        key,
                        mb,
                    });
                }
            }
            f.max_mb = f.max_mb.max(f.initial_mb);
        }
        for f in &self.files {
            if f.initial_mb == 0 {
                return Err(ConfigError::ZeroSize {
                    name: f.name.clone(),
                });
            }
        }
        // SQLIOSim: Increment is reduced so that Increment x MaxExtents < MaxMemoryMB / #files.
        let nfiles = self.files.len() as u64;
        for f in &mut self.files {
            if f.increment_mb > 0 {
                let cap = (self.max_memory_mb / nfiles.max(1)).saturating_sub(1)
                    / self.shrink.max_extends.max(1);
                if f.increment_mb > cap.max(1) {
                    w.push(format!(
                        "{}: Increment {} MB reduced to {} MB (Increment x MaxExtents must stay below MaxMemoryMB / files, as in SQLIOSim)",
                        f.name.display(),
                        f.increment_mb,
                        cap.max(1)
                    ));
                    f.increment_mb = cap.max(1);
                }
            }
            if f.increment_mb == 0 && f.shrinkable {
                f.shrinkable = false;
            }
        }
        Ok(())
    }

    /// What the simulated users draw from. Refuses a probability that is
    /// not a number from 0 to 1 and an empty range, naming the key, so that
    /// no user meets one (`gen_bool` panics on NaN, `gen_range` on an empty
    /// range). [`finalize`](Self::finalize) calls it; a run builds its users'
    /// choices here.
    pub fn choices(&self) -> Result<Choices, ConfigError> {
        let chance = |p: f64, key: &'static str| {
            Bernoulli::new(p).map_err(|_| ConfigError::BadChance { key, p })
        };
        let range = |lo: u64, hi: u64, keys: &'static str| {
            if lo <= hi {
                Ok(lo..=hi)
            } else {
                Err(ConfigError::EmptyRange { keys, lo, hi })
            }
        };
        let s = &self.shrink;
        Ok(Choices {
            jump: chance(self.random.jump_to_new_region, "JumpToNewRegionPercentage")?,
            cache_hit: chance(self.cache_hit_ratio, "CacheHitRatio")?,
            update: chance(self.random.read_write_ratio, "RandomUserReadWriteRatio")?,
            rollback: chance(self.random.rollback_chance, "RollbackChance")?,
            chain: range(
                self.random.min_chain,
                self.random.max_chain,
                "Min/MaxIOChainLength",
            )?,
            log_bytes: range(
                self.random.min_log,
                self.random.max_log,
                "Min/MaxLogPerBuffer",
            )?,
            shrink_wait_ms: range(
                s.min_interval_s.saturating_mul(1000),
                s.max_interval_s.saturating_mul(1000),
                "Min/MaxShrinkInterval",
            )?,
            extends: range(s.min_extends, s.max_extends, "Min/MaxExtends")?,
        })
    }

    /// Bytes the run allocates that grow with the configuration: the
    /// page-state tables of the data files (generation, dirty generation and
    /// latch: [`PAGE_STATE_BYTES`] per page) and every user's page buffers.
    /// The tables are reserved for MaxSize but sparse: memory is taken only
    /// for the pages a run reaches, so they count here up to InitialSize (a
    /// file that grows takes 9 bytes more per 8 KiB page, 0.11% of what it
    /// grows by, bounded by the disk's free space). Saturates instead of
    /// overflowing.
    pub fn memory_needed(&self) -> (u64, u64) {
        let page = crate::verify::PAGE_SIZE as u64;
        let tables = self
            .files
            .iter()
            .filter(|f| !f.log_file)
            .map(|f| {
                f.initial_mb
                    .saturating_mul(PAGES_PER_MB)
                    .saturating_mul(PAGE_STATE_BYTES)
            })
            .fold(0u64, u64::saturating_add);
        let users = [
            (self.random.user_count, self.random.max_chain),
            (self.audit.user_count, self.audit.buffers_validated),
            (self.read_ahead.user_count, self.read_ahead.max_pages),
            (self.bulk.user_count, self.bulk.max_pages),
            // Checkpoint, lazy writer and the end-of-cycle audit.
            (3, CHECKPOINT_RUN),
        ]
        .iter()
        .map(|&(n, pages)| (n.max(0) as u64).saturating_mul(pages).saturating_mul(page))
        .fold(0u64, u64::saturating_add);
        (tables, users)
    }

    /// Address space the data files' page-state tables reserve (up to MaxSize).
    pub fn table_reservation(&self) -> u64 {
        self.files
            .iter()
            .filter(|f| !f.log_file)
            .map(|f| {
                f.max_mb
                    .max(f.initial_mb)
                    .saturating_mul(PAGES_PER_MB)
                    .saturating_mul(PAGE_STATE_BYTES)
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Refuses a configuration whose in-memory state would not fit in
    /// `available` bytes (MemAvailable), or whose page-state tables would not
    /// fit in the address space, naming the key to lower.
    pub fn check_memory(&self, available: u64) -> Result<(), ConfigError> {
        let data_files = self.files.iter().filter(|g| !g.log_file).count().max(1) as u64;
        let reserved = self.table_reservation();
        if reserved > TABLE_ADDRESS_SPACE {
            let (i, f) = self
                .files
                .iter()
                .enumerate()
                .filter(|(_, f)| !f.log_file)
                .max_by_key(|(_, f)| f.max_mb)
                .expect("a data file (reservation above zero)");
            return Err(ConfigError::TablesTooLarge {
                file: i + 1,
                max_mb: f.max_mb,
                reserved,
                most_mb: TABLE_ADDRESS_SPACE / PAGE_STATE_BYTES / PAGES_PER_MB / data_files,
            });
        }
        let (tables, users) = self.memory_needed();
        if tables.saturating_add(users) <= available {
            return Ok(());
        }
        if tables >= users {
            let (i, f) = self
                .files
                .iter()
                .enumerate()
                .filter(|(_, f)| !f.log_file)
                .max_by_key(|(_, f)| f.initial_mb)
                .expect("a data file (checked above)");
            let room = available.saturating_sub(users) / PAGE_STATE_BYTES / PAGES_PER_MB;
            return Err(ConfigError::TablesOutOfMemory {
                file: i + 1,
                initial_mb: f.initial_mb,
                tables,
                available,
                most_mb: room / data_files,
            });
        }
        Err(ConfigError::BuffersOutOfMemory { users, available })
    }
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

impl SimConfig {
    /// Refuses two files that are the same file (the same directory given
    /// twice with `--dir`, the same FileName twice, or the error log naming a
    /// database file): the simulator would delete and truncate a file that is
    /// still in use, and verify pages another file wrote.
    fn check_distinct_files(&self) -> Result<(), ConfigError> {
        let mut seen: Vec<(PathBuf, String)> = Vec::new();
        let named = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                (
                    f.name.clone(),
                    format!("[File{}] {}", i + 1, f.name.display()),
                )
            })
            .chain(std::iter::once((
                self.error_file.clone(),
                format!("the error log {}", self.error_file.display()),
            )));
        for (path, what) in named {
            let key = same_file_key(&path);
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                return Err(ConfigError::SameFile {
                    first: first.clone(),
                    second: what,
                });
            }
            seen.push((key, what));
        }
        Ok(())
    }
}

/// A path's identity for duplicate checks: its directory resolved (symbolic
/// links, `.` and `..`) when it exists, plus its file name.
fn same_file_key(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match path.file_name() {
        Some(n) => dir.join(n),
        None => path.to_path_buf(),
    }
}

/// Most read retries before a failed check is reported (SQLIOSim: 15).
pub const MAX_READ_RETRIES: u64 = 1000;
/// Largest run of pages in one vectored I/O (the kernel's IOV_MAX).
pub const MAX_RUN_PAGES: u64 = 1024;
/// Pages per checkpoint / lazy-writer gather write at most.
pub const CHECKPOINT_RUN: u64 = 128;

#[cfg(test)]
mod tests {
    use super::*;

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
