//! Checks of a parsed simulator configuration: user counts resolved,
//! waits, ranges and files checked (or clamped with a warning), the users'
//! choices built, and the memory a run needs measured against what the
//! machine has.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::distributions::Bernoulli;

use super::config::{
    Choices, ConfigError, SimConfig, CHECKPOINT_RUN, MAX_FILE_MB, MAX_READ_RETRIES, MAX_RUN_PAGES,
    PAGES_PER_MB, PAGE_STATE_BYTES, TABLE_ADDRESS_SPACE,
};

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
