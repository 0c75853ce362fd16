//! Database workload profiles: `iosim profile list|show` and
//! `iosim run --profile NAME PATH...`.
//!
//! A profile is a TOML data file (see `profiles/` and docs/profiles.md): a
//! name, a description, the reference row it comes from, and `[[workload]]`
//! entries. Each workload names a target role (`data`, `log`, `backup`, ...)
//! and a verdict role; workloads of the same `phase` run at the same time,
//! phases run one after the other. The built-in profiles are embedded in the
//! binary, so they work from anywhere; a path to a `.toml` file works too.
//!
//! Every result is judged against the latency guideline tables
//! ([`crate::verdict`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use crate::csvout::Fixed;
use crate::dbms::{Dbms, Guidance};
use crate::runner::{RunOptions, RunResult};
use crate::stats::Percentile;
use crate::verdict::{Role, Verdict};
use crate::workload::{CacheMode, RwMode, SeqLayout, TargetSpec, WorkloadSpec};

mod scale;

/// The built-in profiles, in listing order: (name, TOML text), each
/// database's (its module in [`crate::dbms`] registers them) in the order
/// `--dbms` lists the databases.
pub fn builtin() -> impl Iterator<Item = (&'static str, &'static str)> {
    Dbms::ALL
        .iter()
        .flat_map(|d| d.profile_files().iter().copied())
}

/// A profile as written in its TOML file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name (`oltp`).
    pub name: String,
    /// One line saying what it simulates.
    pub description: String,
    /// The reference row (and source tags) the numbers come from.
    pub source: String,
    /// The database whose I/O it models (`sqlserver` when absent).
    #[serde(default)]
    pub dbms: Dbms,
    /// Commits a second the database made while the workloads' rates were
    /// measured (transactions, or synced writes): `--commit-rate N` scales
    /// the rate of each workload marked `per_commit` by N over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_rate: Option<f64>,
    /// Client sessions the database served while the workloads were
    /// measured (pgbench -c, sysbench --threads): `--clients N` scales each
    /// workload marked `per_client` from it ([`Profile::at_clients`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// The workloads.
    #[serde(rename = "workload")]
    pub workloads: Vec<ProfileWorkload>,
}

fn one() -> u32 {
    1
}

fn sql_cache() -> CacheMode {
    CacheMode::DirectWritethrough
}

/// One `[[workload]]` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileWorkload {
    /// Name shown in reports.
    pub name: String,
    /// Target name; distinct names map to the paths given, in order of first appearance.
    pub target: String,
    /// What the file is to the database; decides the verdict tables.
    pub role: Role,
    /// Phases run one after another; workloads of one phase run at once.
    #[serde(default = "one")]
    pub phase: u32,
    /// Access pattern.
    pub rw: RwMode,
    /// Share of writes for mixed patterns.
    #[serde(default)]
    pub write_pct: Option<u8>,
    /// Block size (`8K`, `1M`).
    pub bs: String,
    /// Offset alignment for random I/O (default: the block size).
    #[serde(default)]
    pub align: Option<String>,
    /// Outstanding I/Os per thread.
    #[serde(default = "one")]
    pub qd: u32,
    /// Threads.
    #[serde(default = "one")]
    pub threads: u32,
    /// Page-cache behaviour (default: direct-writethrough, as SQL Server opens its files).
    #[serde(default = "sql_cache")]
    pub cache: CacheMode,
    /// Access skew (`zipf:1.1`, `hotcold:10/90`...; default uniform; docs/workloads.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<crate::workload::Distribution>,
    /// Where the hot blocks lie: `random` (default) or `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_placement: Option<crate::workload::Placement>,
    /// Block-size mix in fio's notation (`8K/70:64K/30`); replaces `bs` for the I/O sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<crate::workload::BsSplit>,
    /// A log's partly filled tail page written again: `PAGE[:PCT]`
    /// (`--tail-rewrite`), e.g. `"8k:70"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_rewrite: Option<String>,
    /// Percentage of every written 4 KiB block that compresses away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_pct: Option<u8>,
    /// Percentage of written 4 KiB blocks that repeat an earlier one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_pct: Option<u8>,
    /// The database's cache over the data, as measured (`--db-cache`):
    /// `"16%"`, `"32M/200M"` or a size. Random reads of its hottest share
    /// are hits, never issued; `rate_iops` then counts page requests, hits
    /// included. `--db-cache` on the command line replaces it (your cache
    /// against your data); workloads without it take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_cache: Option<String>,
    /// Its rate follows the database's commits (a log's writes and
    /// flushes): `--commit-rate N` multiplies `rate_iops` by N over the
    /// profile's `commit_rate`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_commit: bool,
    /// It follows the clients (`--clients N`, over the profile's
    /// `clients`): its threads are the sessions' own (a backend waiting for
    /// its page), so their number scales and the total rate stays; on a
    /// `per_commit` log, the commits each write and flush serve (group
    /// commit) scale instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_client: bool,
    /// An fsync after every N writes of a thread (fio's `fsync=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<u32>,
    /// An fdatasync after every N writes of a thread (fio's `fdatasync=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdatasync: Option<u32>,
    /// How each write is made durable, as a WAL's `wal_sync_method`:
    /// `open_datasync`, `open_sync`, `fdatasync` or `fsync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_method: Option<crate::workload::SyncMethod>,
    /// Writeback started after every N writes of a thread
    /// (`--sync-file-range N`: PostgreSQL's `checkpoint_flush_after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_file_range: Option<u32>,
    /// The workload's threads commit as a group (`--group-commit`): one
    /// flush at a time serves every write completed before it began.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_commit: bool,
    /// The flush after every N writes is a barrier (`--flush-barrier`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flush_barrier: bool,
    /// InnoDB's doublewrite area at the end of the region (`--doublewrite`), e.g. `"2M"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doublewrite: Option<String>,
    /// Bursts: after this many I/Os a thread pauses for `think` (`--burst`),
    /// as InnoDB writes a batch of doublewrite pages back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// The pause between bursts (`--think`), e.g. `"50ms"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<String>,
    /// Periodic bursts (`--burst-every`), e.g. `"2s"`: every this long a
    /// thread issues `burst` I/Os at `burst_rate_iops`, then runs at its
    /// `rate_iops` until the next: a checkpoint over a steady load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_every: Option<String>,
    /// I/Os per second per thread inside a periodic burst (`--burst-rate-iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_rate_iops: Option<u64>,
    /// A periodic burst's I/Os are writes, a checkpoint's (`--burst-writes`);
    /// the I/Os between bursts write less, so the workload's write share holds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub burst_writes: bool,
    /// I/Os per second per thread at most (fio's `rate_iops`): a database
    /// thread that does other work between its I/Os, so that page-cache hits
    /// do not turn a buffered workload into a CPU benchmark. It replaces
    /// `--rate-iops`/`--rate` for this workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<u64>,
    /// How new test files are laid out and what writes carry, as `--fill`
    /// says (`allocated`: blocks allocated but unwritten, as a database
    /// preallocates its WAL segments); it replaces `--fill` for this workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<crate::workload::FillMode>,
    /// Stop once each thread's I/Os add up to this many times its region, as
    /// `--passes` (fio's check writes its file once); `--duration` still caps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<u32>,
}

fn bad(msg: String) -> anyhow::Error {
    anyhow::Error::new(crate::Error::BadWorkload(msg))
}

impl Profile {
    /// Parses and checks a profile's TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Profile> {
        let p: Profile =
            toml::from_str(text).map_err(|e| bad(format!("profile {origin} is not valid: {e}")))?;
        p.check()
            .map_err(|e| bad(format!("profile {origin}: {e}")))?;
        Ok(p)
    }

    /// Loads a built-in profile by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> anyhow::Result<Profile> {
        if let Some((_, text)) = builtin().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text, &format!("'{name_or_path}'"));
        }
        let path = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || path.exists() || name_or_path.contains('/') {
            let text = std::fs::read_to_string(path).map_err(|e| {
                bad(format!(
                    "cannot read profile file '{}': {e}",
                    path.display()
                ))
            })?;
            return Profile::parse(&text, &format!("'{}'", path.display()));
        }
        let names: Vec<&str> = builtin().map(|(n, _)| n).collect();
        Err(bad(format!(
            "no built-in profile '{name_or_path}': use one of {} (iosim profile list), or a path to a .toml file",
            names.join(", ")
        )))
    }

    /// `commit_rate` and `per_commit` go together: a workload that follows
    /// the commits needs the rate they were measured at, and its own rate.
    fn check_commits(&self) -> Result<(), String> {
        if let Some(c) = self.commit_rate {
            if !(c.is_finite() && c > 0.0) {
                return Err(format!(
                    "commit_rate = {c}: give the commits a second the rates were measured at"
                ));
            }
            if !self.workloads.iter().any(|w| w.per_commit) {
                return Err(format!("commit_rate = {c} but no workload has per_commit = true: mark the workloads whose rate follows the commits (the log's), or leave commit_rate out"));
            }
        }
        for w in self.workloads.iter().filter(|w| w.per_commit) {
            if self.commit_rate.is_none() {
                return Err(format!("workload '{}' has per_commit = true but the profile has no commit_rate: give the commits a second its rate_iops was measured at", w.name));
            }
            if w.rate_iops.is_none() {
                return Err(format!("workload '{}' has per_commit = true but no rate_iops to scale: give its rate at the profile's commit_rate", w.name));
            }
        }
        Ok(())
    }

    /// `clients` and `per_client` go together, as `commit_rate` and
    /// `per_commit` do.
    fn check_clients(&self) -> Result<(), String> {
        match self.clients {
            Some(0) => {
                return Err(
                    "clients = 0: give the client sessions the workloads were measured with".into(),
                )
            }
            Some(c) if !self.workloads.iter().any(|w| w.per_client) => {
                return Err(format!("clients = {c} but no workload has per_client = true: mark the workloads that follow the clients (their sessions' reads, a group-committed log), or leave clients out"));
            }
            None => {
                if let Some(w) = self.workloads.iter().find(|w| w.per_client) {
                    return Err(format!("workload '{}' has per_client = true but the profile has no clients: give the client sessions it was measured with", w.name));
                }
            }
            Some(_) => {}
        }
        for w in self
            .workloads
            .iter()
            .filter(|w| w.per_client && w.per_commit)
        {
            if w.rate_iops.is_none() {
                return Err(format!("workload '{}' has per_client and per_commit but no rate_iops: give its writes a second at the profile's commit_rate and clients", w.name));
            }
        }
        Ok(())
    }

    /// Checks what the TOML parser cannot.
    fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("'name' is empty".into());
        }
        if self.workloads.is_empty() {
            return Err("it has no [[workload]] entry".into());
        }
        self.check_commits()?;
        self.check_clients()?;
        let mut names = BTreeSet::new();
        for w in &self.workloads {
            if !names.insert(w.name.as_str()) {
                return Err(format!("two workloads are named '{}'", w.name));
            }
            if w.target.trim().is_empty() {
                return Err(format!("workload '{}' has an empty target", w.name));
            }
            if w.phase == 0 {
                return Err(format!("workload '{}': phases start at 1, got 0", w.name));
            }
            // The rest (sizes, mixes, ranges) is checked by building the spec.
            let mut spec = w
                .spec(&WorkloadSpec::default())
                .map_err(|e| format!("workload '{}': {e}", w.name))?;
            spec.targets = vec![TargetSpec::new("/profile-check", None)];
            spec.validate()
                .map_err(|e| format!("workload '{}': {e}", w.name))?;
        }
        Ok(())
    }

    /// Distinct target names in order of first appearance.
    pub fn target_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for w in &self.workloads {
            if !out.contains(&w.target) {
                out.push(w.target.clone());
            }
        }
        out
    }

    /// Distinct phases, in order.
    pub fn phases(&self) -> Vec<u32> {
        self.workloads
            .iter()
            .map(|w| w.phase)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

impl ProfileWorkload {
    /// [`ProfileWorkload::spec`]: the shape (skew, sizes, tail rewrites,
    /// the database's cache), over `base`'s.
    fn shape(&self, base: &WorkloadSpec) -> Result<crate::workload::Shape, crate::Error> {
        let mut shape = base.shape.clone();
        if let Some(d) = self.distribution {
            shape.distribution = d;
        }
        if let Some(p) = self.hot_placement {
            shape.placement = p;
        }
        if let Some(b) = &self.bssplit {
            shape.bssplit = Some(b.clone());
        }
        if let Some(p) = self.dedupe_pct {
            shape.dedupe_pct = p;
        }
        if let Some(t) = &self.tail_rewrite {
            shape.tail_rewrite = Some(
                crate::workload::TailRewrite::parse(t)
                    .map_err(|e| crate::Error::BadWorkload(format!("tail_rewrite = {e}")))?,
            );
        }
        // A workload the profile gives a cache takes yours instead; the
        // others take none (their reads are not page reads a cache serves).
        shape.db_cache = match &self.db_cache {
            None => None,
            Some(c) => Some(match base.shape.db_cache {
                Some(yours) => yours,
                None => crate::workload::DbCache::parse(c)
                    .map_err(|e| crate::Error::BadWorkload(format!("db_cache = {e}")))?,
            }),
        };
        Ok(shape)
    }

    /// This workload's spec, with everything else (duration, engine, seed...) from `base`.
    pub fn spec(&self, base: &WorkloadSpec) -> Result<WorkloadSpec, crate::Error> {
        let write_pct = match self.write_pct {
            Some(p) if !self.rw.is_mixed() => {
                return Err(crate::Error::BadWorkload(format!(
                    "write_pct = {p} needs a mixed pattern: rw = \"readwrite\" or \"randrw\""
                )))
            }
            Some(p) => p,
            None => self.rw.default_write_pct(),
        };
        let align = match &self.align {
            Some(a) => Some(crate::units::parse_size(a)?),
            None => None,
        };
        if let Some(p) = self.compress_pct.filter(|&p| p > 100) {
            return Err(crate::Error::BadWorkload(format!(
                "compress_pct = {p}: give 0 to 100"
            )));
        }
        if let (Some(f), Some(p)) = (self.fill, self.compress_pct) {
            return Err(crate::Error::BadWorkload(format!(
                "fill = \"{f}\" and compress_pct = {p} both given: keep one (fill = \"compressible:{p}\" is the same as compress_pct = {p})"
            )));
        }
        let shape = self.shape(base)?;
        let flush = match (self.fsync, self.fdatasync) {
            (Some(_), Some(_)) => {
                return Err(crate::Error::BadWorkload(
                    "fsync and fdatasync both given: a workload flushes one way".into(),
                ))
            }
            (Some(every), None) => Some(crate::workload::Flush {
                kind: crate::workload::FlushKind::Fsync,
                every,
            }),
            (None, Some(every)) => Some(crate::workload::Flush {
                kind: crate::workload::FlushKind::Fdatasync,
                every,
            }),
            (None, None) => None,
        };
        if self.rate_iops == Some(0) {
            return Err(crate::Error::BadWorkload(
                "rate_iops = 0: give the I/Os per second per thread, or leave it out for no cap"
                    .into(),
            ));
        }
        let (rate_iops, rate_bytes) = match self.rate_iops {
            Some(r) => (Some(r), None),
            None => (base.rate_iops, base.rate_bytes),
        };
        Ok(WorkloadSpec {
            rw: self.rw,
            write_pct,
            flush,
            rate_iops,
            rate_bytes,
            sync_method: self.sync_method,
            sync_file_range: self.sync_file_range,
            group_commit: self.group_commit,
            flush_barrier: self.flush_barrier,
            doublewrite: match &self.doublewrite {
                Some(d) => Some(crate::units::parse_size(d)?),
                None => None,
            },
            burst: self.burst.unwrap_or(base.burst),
            think: match &self.think {
                Some(t) => crate::units::parse_duration(t)
                    .map_err(|e| crate::Error::BadWorkload(format!("think = '{t}': {e}")))?,
                None => base.think,
            },
            burst_every: match &self.burst_every {
                Some(t) => crate::units::parse_duration(t)
                    .map_err(|e| crate::Error::BadWorkload(format!("burst_every = '{t}': {e}")))?,
                None => base.burst_every,
            },
            burst_rate_iops: self.burst_rate_iops.or(base.burst_rate_iops),
            burst_writes: self.burst_writes || base.burst_writes,
            bs: crate::units::parse_size(&self.bs)?,
            align,
            threads: self.threads,
            qd: self.qd,
            cache: self.cache,
            fill: match (self.fill, self.compress_pct) {
                (Some(f), _) => f,
                (None, Some(p)) => crate::workload::FillMode::Compressible(p),
                (None, None) => base.fill,
            },
            passes: self.passes.or(base.passes),
            shape,
            ..base.clone()
        })
    }
}

/// A profile's target names bound to paths.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundTarget {
    /// Target name in the profile.
    pub name: String,
    /// The file or device it runs on.
    pub path: PathBuf,
    /// True when the path was not given and was derived from the first path.
    pub derived: bool,
}

/// Maps target names to paths: in order of first appearance; missing ones are
/// created next to the first path, suffixed with the target name.
pub fn bind_targets(names: &[String], paths: &[PathBuf]) -> anyhow::Result<Vec<BoundTarget>> {
    let Some(first) = paths.first() else {
        return Err(bad(format!(
            "--profile needs at least one path: the profile uses target{} {}; e.g. iosim run --profile NAME /mnt/data/iosim.dat --size 8G",
            if names.len() > 1 { "s" } else { "" },
            names.join(", ")
        )));
    };
    if paths.len() > names.len() {
        return Err(bad(format!(
            "{} paths given but the profile has {} target{} ({}): give one path per target, in that order",
            paths.len(),
            names.len(),
            if names.len() > 1 { "s" } else { "" },
            names.join(", ")
        )));
    }
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if let Some(p) = paths.get(i) {
            out.push(BoundTarget {
                name: name.clone(),
                path: p.clone(),
                derived: false,
            });
            continue;
        }
        if first.exists() && !first.is_file() {
            return Err(bad(format!(
                "'{}' is not a regular file, so iosim will not create the '{name}' target next to it: give a path for each target ({})",
                first.display(),
                names.join(", ")
            )));
        }
        out.push(BoundTarget {
            name: name.clone(),
            path: derived_path(first, name),
            derived: true,
        });
    }
    Ok(out)
}

/// `dir/data.dat` + `log` -> `dir/data-log.dat`.
pub fn derived_path(first: &Path, name: &str) -> PathBuf {
    let stem = first
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "iosim".into());
    let file = match first.extension() {
        Some(ext) => format!("{stem}-{name}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{name}"),
    };
    first.with_file_name(file)
}

/// What `iosim run --profile` takes from the command line: the paths, and
/// the settings that are not a workload's shape (duration, warm-up, seed,
/// engine, pacing...) in `base`, applied to every workload of the profile.
#[derive(Clone, Debug, Default)]
pub struct RunOverrides {
    /// Paths, bound to the profile's targets in order.
    pub paths: Vec<PathBuf>,
    /// Size to create missing files with.
    pub size: Option<u64>,
    /// Start of the region used in each target.
    pub offset: u64,
    /// Length of the region used (default: to the end).
    pub length: Option<u64>,
    /// Options given that set a workload's shape, which the profile sets instead: an error.
    pub conflicting: Vec<&'static str>,
    /// Every workload starts from this spec (its targets are ignored).
    pub base: WorkloadSpec,
}

/// One workload of a plan, ready to run.
#[derive(Clone, Debug)]
pub struct Planned {
    /// Workload name.
    pub name: String,
    /// Phase.
    pub phase: u32,
    /// Target name.
    pub target: String,
    /// Verdict role.
    pub role: Role,
    /// The spec.
    pub spec: WorkloadSpec,
}

/// A profile bound to paths and run options.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The profile.
    pub profile: Profile,
    /// Targets.
    pub targets: Vec<BoundTarget>,
    /// Workloads.
    pub workloads: Vec<Planned>,
    /// Size to create missing files with.
    pub size: Option<u64>,
    /// Notes for the report.
    pub notes: Vec<String>,
}

/// Builds the plan for `iosim run --profile`: the profile's shapes, the
/// other options of `r` (duration, warmup, size, engine, seed...) for every workload.
pub fn plan(profile: Profile, r: &RunOverrides) -> anyhow::Result<Plan> {
    let clash = &r.conflicting;
    if !clash.is_empty() {
        return Err(bad(format!(
            "{} cannot be used with --profile: the profile sets each workload's shape; copy it (iosim profile show {} > my.toml), edit it and run --profile my.toml",
            clash.join(", "),
            profile.name
        )));
    }
    if let Some(c) = r.base.shape.db_cache {
        let cached: Vec<&str> = profile
            .workloads
            .iter()
            .filter(|w| w.db_cache.is_some())
            .map(|w| w.name.as_str())
            .collect();
        if cached.is_empty() {
            return Err(bad(format!(
                "--db-cache {c}: profile '{}' has no workload whose page reads a database cache serves (no db_cache key): leave --db-cache out, or add db_cache to a random-read workload of a copy (iosim profile show {} > my.toml)",
                profile.name, profile.name
            )));
        }
    }
    let targets = bind_targets(&profile.target_names(), &r.paths)?;
    let mut notes = Vec::new();
    for t in targets.iter().filter(|t| t.derived) {
        notes.push(format!(
            "target '{}' was not given a path: using {} (next to the first path; the same drive)",
            t.name,
            t.path.display()
        ));
    }
    let base = WorkloadSpec {
        targets: Vec::new(),
        seq_layout: SeqLayout::Split,
        ..r.base.clone()
    };
    let mut workloads = Vec::new();
    for (i, w) in profile.workloads.iter().enumerate() {
        let mut spec = w
            .spec(&base)
            .map_err(|e| bad(format!("workload '{}': {e}", w.name)))?;
        // Different offsets for workloads sharing a file.
        spec.seed = r.base.seed.wrapping_add(i as u64);
        let path = &targets
            .iter()
            .find(|t| t.name == w.target)
            .expect("every target name is bound")
            .path;
        spec.targets = vec![TargetSpec {
            offset: r.offset,
            length: r.length,
            ..TargetSpec::new(path.clone(), r.size)
        }];
        spec.validate()
            .map_err(|e| bad(format!("workload '{}': {e}", w.name)))?;
        workloads.push(Planned {
            name: w.name.clone(),
            phase: w.phase,
            target: w.target.clone(),
            role: w.role,
            spec,
        });
    }
    Ok(Plan {
        profile,
        targets,
        workloads,
        size: r.size,
        notes,
    })
}

/// One workload's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOutcome {
    /// Workload name.
    pub name: String,
    /// Phase it ran in.
    pub phase: u32,
    /// Target name.
    pub target: String,
    /// Verdict role.
    pub role: Role,
    /// The full run result (the `iosim run` JSON schema).
    pub result: RunResult,
    /// Mean latency per direction judged against every applicable table.
    pub verdicts: Vec<Verdict>,
    /// Under mpirun/srun: ranks, per-rank and per-host results of this workload.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ranks: Option<crate::runner::RanksReport>,
}

/// Everything `iosim run --profile` measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileResult {
    /// Profile name.
    pub profile: String,
    /// Profile description.
    pub description: String,
    /// The reference row it comes from.
    pub source: String,
    /// The database whose I/O it models (`sqlserver` in results from before there was a choice).
    #[serde(default)]
    pub dbms: Dbms,
    /// Target names and paths.
    pub targets: Vec<BoundTarget>,
    /// Notes (derived paths, CPU accounting...).
    pub notes: Vec<String>,
    /// True when Ctrl-C stopped the run.
    pub interrupted: bool,
    /// I/O errors over all workloads.
    pub errors: u64,
    /// One entry per workload, in profile order.
    pub results: Vec<WorkloadOutcome>,
}

/// Creates the missing target files first, so concurrent workloads start
/// measuring together. Returns the files it created.
pub fn create_missing(
    paths: &[(String, PathBuf)],
    size: Option<u64>,
    fill: crate::workload::FillMode,
    opts: &RunOptions,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut created = Vec::new();
    for (name, path) in paths {
        if path.exists() {
            continue;
        }
        let Some(size) = size else {
            return Err(bad(format!(
                "the '{name}' target {} does not exist: give --size to create it (e.g. --size 8G)",
                path.display()
            )));
        };
        crate::target::create_test_file(
            path,
            size,
            fill,
            crate::target::PrepareOptions {
                progress: opts.progress,
                stop: Some(&opts.stop),
            },
        )?;
        created.push(path.clone());
    }
    Ok(created)
}

/// The workloads on files [`create_missing`] just made found them ready and
/// said they "reused" them: they say the profile created them instead.
fn say_created(results: &mut [WorkloadOutcome], targets: &[BoundTarget], created: &[PathBuf]) {
    for o in results {
        let Some(t) = targets
            .iter()
            .find(|t| t.name == o.target && created.contains(&t.path))
        else {
            continue;
        };
        for n in &mut o.result.notes {
            // Target notes read "PATH: note".
            if n.ends_with(crate::target::REUSED_NOTE) {
                *n = format!("{}: created by this profile run", t.path.display());
            }
        }
        for r in &mut o.result.targets {
            if std::path::Path::new(&r.path) == t.path {
                r.created = true;
            }
        }
    }
}

/// Runs a plan: phase by phase, the workloads of a phase at the same time.
pub fn run(plan: &Plan, opts: &RunOptions) -> anyhow::Result<ProfileResult> {
    let fill = plan
        .workloads
        .first()
        .map(|w| w.spec.fill)
        .unwrap_or(crate::workload::FillMode::Random);
    let named: Vec<(String, PathBuf)> = plan
        .targets
        .iter()
        .map(|t| (t.name.clone(), t.path.clone()))
        .collect();
    let created = create_missing(&named, plan.size, fill, opts)?;
    // Per-thread series and --verify are not a profile's.
    let phase_opts = RunOptions {
        thread_series: false,
        verify: None,
        ..opts.clone()
    };
    let mut results = Vec::new();
    let mut interrupted = false;
    for phase in plan.profile.phases() {
        if opts.stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let ws: Vec<&Planned> = plan.workloads.iter().filter(|w| w.phase == phase).collect();
        let specs: Vec<WorkloadSpec> = ws.iter().map(|w| w.spec.clone()).collect();
        // The phase is one run of the runner (one window, one monitor); under
        // mpirun/srun every rank's phase shares that window and the results
        // are merged across ranks.
        let rs = match crate::runner::run_joint(&specs, &phase_opts) {
            Ok(rs) => rs,
            Err(e) if crate::runner::stopped_before_window(&e, &phase_opts) => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        };
        for (w, c) in ws.into_iter().zip(rs) {
            let r = c.result;
            interrupted |= r.interrupted;
            results.push(WorkloadOutcome {
                name: w.name.clone(),
                phase: w.phase,
                target: w.target.clone(),
                role: w.role,
                verdicts: crate::verdict::judge_result(w.role, &r),
                result: r,
                ranks: c.ranks,
            });
        }
    }
    say_created(&mut results, &plan.targets, &created);
    // Profile order (phases already are in order within the file's order).
    let order = |n: &str| plan.workloads.iter().position(|w| w.name == n);
    results.sort_by_key(|o| (o.phase, order(&o.name)));
    let mut notes = plan.notes.clone();
    let concurrent = plan
        .profile
        .phases()
        .iter()
        .any(|ph| plan.workloads.iter().filter(|w| w.phase == *ph).count() > 1);
    if concurrent {
        notes.push(
            "workloads of a phase run at once, in one measured window with one system monitor: each result's machine CPU figures are the whole machine's, and a device two workloads share shows both workloads' I/O".into(),
        );
    }
    notes.extend(verdict_notes(&plan.profile));
    Ok(ProfileResult {
        profile: plan.profile.name.clone(),
        description: plan.profile.description.clone(),
        source: plan.profile.source.clone(),
        dbms: plan.profile.dbms,
        targets: plan.targets.clone(),
        notes,
        interrupted,
        errors: results.iter().map(|o| o.result.errors.count).sum(),
        results,
    })
}

/// What the verdicts of a profile that is not SQL Server's mean: the
/// latency tables are SQL Server's guidance, and a buffered workload's
/// latency is partly the page cache's.
fn verdict_notes(p: &Profile) -> Vec<String> {
    let mut out = Vec::new();
    match p.dbms.guidance() {
        Guidance::RulesTable => {}
        Guidance::OwnTargets { profile_note, .. } => out.push(profile_note.into()),
        Guidance::GeneralBands => out.push(format!(
            "the latency tables are SQL Server's published guidance, applied here as general latency bands: {} publishes no storage latency target of its own (iosim qualify --dbms {} judges by the rules docs/qualify-storage.md lists for it)",
            p.dbms.title(),
            p.dbms.name()
        )),
    }
    let buffered: Vec<&str> = p
        .workloads
        .iter()
        .filter(|w| !w.cache.is_direct())
        .map(|w| w.name.as_str())
        .collect();
    if !buffered.is_empty() {
        out.push(format!(
            "{} go{} through the page cache, as the database's own I/O does: {} latency is in part this host's memory, not the storage (the flushes reach the storage)",
            buffered.join(", "),
            if buffered.len() == 1 { "es" } else { "" },
            if buffered.len() == 1 { "its" } else { "their" }
        ));
    }
    out
}

fn ms(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{:.3} ms", us / 1000.0)
    }
}

/// The text report.
pub fn text(r: &ProfileResult) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "Profile {}: {}", r.profile, r.description);
    let _ = writeln!(s, "Database: {}", r.dbms.title());
    let _ = writeln!(s, "Source:  {}", r.source);
    for t in &r.targets {
        let _ = writeln!(
            s,
            "Target {:<8} {}{}",
            t.name,
            t.path.display(),
            if t.derived { " (derived)" } else { "" }
        );
    }
    let mut last_phase = 0;
    for o in &r.results {
        if o.phase != last_phase {
            let n = r.results.iter().filter(|x| x.phase == o.phase).count();
            let _ = writeln!(
                s,
                "\nPhase {} ({} workload{}{}, {:.1} s)",
                o.phase,
                n,
                if n > 1 { "s" } else { "" },
                if n > 1 { " at once" } else { "" },
                o.result.duration_s
            );
            last_phase = o.phase;
        }
        let t = &o.result.total.total;
        let _ = writeln!(
            s,
            "  {:<18} {:<7} {:<6} {:<40} {:>10.0} IOPS {:>9.2} MiB/s  mean {:>10}  p99 {:>10}",
            o.name,
            o.target,
            o.role.name(),
            o.result.config.describe(),
            t.iops,
            t.mib_per_sec,
            ms(t.latency_us.mean),
            ms(t.latency_us.p(Percentile::P99)),
        );
        for line in crate::verdict::text_lines(&o.verdicts) {
            let _ = writeln!(s, "      {line}");
        }
        if o.result.errors.count > 0 {
            let _ = writeln!(s, "      I/O errors: {}", o.result.errors.count);
        }
        for n in &o.result.notes {
            let _ = writeln!(s, "      note: {n}");
        }
    }
    let _ = writeln!(
        s,
        "\nVerdicts judge the mean latency (Avg. Disk sec/Transfer is a mean); [!] marks a band the source calls a problem."
    );
    let mut seen: Vec<&str> = Vec::new();
    for v in r.results.iter().flat_map(|o| &o.verdicts) {
        if !seen.contains(&v.guideline.as_str()) {
            seen.push(&v.guideline);
            let _ = writeln!(s, "  {:<28} {}: {}", v.short, v.source, v.title);
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "Note: {n}");
    }
    if r.interrupted {
        let _ = writeln!(s, "Interrupted: the results cover what was measured.");
    }
    // Under mpirun/srun: each workload's ranks.
    for o in &r.results {
        if let Some(ranks) = &o.ranks {
            let _ = write!(s, "\nWorkload {}:{}", o.name, ranks.text());
        }
    }
    s
}

/// One row of a profile's CSV: a workload's reads or writes, then one
/// verdict label per verdict table (empty where that table does not apply).
#[derive(Serialize)]
struct CsvRow<'a> {
    profile: &'a str,
    workload: &'a str,
    phase: u32,
    target: &'a str,
    role: &'a str,
    path: String,
    direction: &'a str,
    ios: u64,
    iops: Fixed<2>,
    mib_per_sec: Fixed<3>,
    mean_us: Fixed<2>,
    p99_us: Fixed<2>,
    verdicts: Vec<String>,
}

/// CSV: one row per workload and direction, one column per verdict table.
pub fn csv(r: &ProfileResult) -> String {
    use crate::verdict::Direction;
    let ids: Vec<&str> = crate::verdict::all().iter().map(|g| g.id).collect();
    let mut header = vec![
        "profile",
        "workload",
        "phase",
        "target",
        "role",
        "path",
        "direction",
        "ios",
        "iops",
        "mib_per_sec",
        "mean_us",
        "p99_us",
    ];
    header.extend(&ids);
    let mut rows = Vec::new();
    for o in &r.results {
        let path = o
            .result
            .config
            .targets
            .first()
            .map(|t| t.path.display().to_string())
            .unwrap_or_default();
        for (dir, name, d) in [
            (Direction::Read, "read", &o.result.total.read),
            (Direction::Write, "write", &o.result.total.write),
        ] {
            if d.ios == 0 {
                continue;
            }
            let verdicts = ids
                .iter()
                .map(|id| {
                    o.verdicts
                        .iter()
                        .find(|v| v.direction == dir && v.guideline == *id)
                        .map(|v| v.label.clone())
                        .unwrap_or_default()
                })
                .collect();
            rows.push(CsvRow {
                profile: &r.profile,
                workload: &o.name,
                phase: o.phase,
                target: &o.target,
                role: o.role.name(),
                path: path.clone(),
                direction: name,
                ios: d.ios,
                iops: Fixed(d.iops),
                mib_per_sec: Fixed(d.mib_per_sec),
                mean_us: Fixed(d.latency_us.mean),
                p99_us: Fixed(d.latency_us.p(Percentile::P99)),
                verdicts,
            });
        }
    }
    crate::csvout::write(Some(&header), rows)
}

/// `iosim profile list`: name, description and source of each built-in.
pub fn list_text() -> anyhow::Result<String> {
    let mut s = String::new();
    // The names' column, as wide as the longest name.
    let w = builtin().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, text) in builtin() {
        let p = Profile::parse(text, name)?;
        s.push_str(&format!(
            "{:<w$} {}\n{:<w$} database: {}; targets: {}; source: {}\n",
            p.name,
            p.description,
            "",
            p.dbms.title(),
            p.target_names().join(", "),
            p.source
        ));
    }
    s.push_str("\nShow one with: iosim profile show NAME (copy it, edit it, run it with --profile FILE.toml)\n");
    Ok(s)
}

/// `iosim profile show NAME`: the TOML text, ready to copy.
pub fn show_text(name_or_path: &str) -> anyhow::Result<String> {
    if let Some((_, text)) = builtin().find(|(n, _)| *n == name_or_path) {
        return Ok((*text).to_string());
    }
    Profile::load(name_or_path)?;
    Ok(std::fs::read_to_string(name_or_path)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::Provenance;

    #[test]
    fn every_builtin_parses_and_is_named_like_its_file() {
        for (name, text) in builtin() {
            let p = Profile::parse(text, name).unwrap();
            assert_eq!(&p.name, name);
            assert!(!p.source.is_empty());
            // A database's profiles are named after it; SQL Server's are not.
            if p.dbms == Dbms::SQLSERVER {
                assert!(!Dbms::ALL.iter().any(|d| name.starts_with(d.name())));
                // SQL Server opens its files unbuffered and write-through.
                assert!(p
                    .workloads
                    .iter()
                    .all(|w| w.cache == CacheMode::DirectWritethrough));
            } else {
                assert!(name.starts_with(&format!("{}-", p.dbms.name())), "{name}");
            }
            // Every workload builds a valid spec on a target (checked by parse), and
            // a documented-only database says so where users read it.
            match p.dbms.provenance() {
                Provenance::DocumentedOnly => {
                    assert!(p.description.contains("documented only"), "{name}")
                }
                Provenance::Literature => {
                    assert!(p.description.contains("literature-based"), "{name}")
                }
                Provenance::Checked => {}
            }
        }
        // Each database registers the profiles that name it.
        for &d in Dbms::ALL {
            for (name, text) in d.profile_files() {
                assert_eq!(Profile::parse(text, name).unwrap().dbms, d, "{name}");
            }
        }
        // Every file of profiles/ is built in, once.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|f| f.strip_suffix(".toml").map(str::to_string))
            .collect();
        files.sort();
        let mut names: Vec<String> = builtin().map(|(n, _)| n.to_string()).collect();
        names.sort();
        assert_eq!(names, files);
        // The names another engineer's bench script uses.
        for name in ["postgresql-oltp", "mysql-oltp", "oracle-oltp", "etcd-wal"] {
            assert!(builtin().any(|(n, _)| n == name), "{name}");
        }
    }

    fn spec_of(profile: &str, workload: &str) -> WorkloadSpec {
        let p = Profile::load(profile).unwrap();
        let w = p.workloads.iter().find(|w| w.name == workload).unwrap();
        let mut s = w.spec(&WorkloadSpec::default()).unwrap();
        s.resolve_sizes();
        s
    }

    /// `--db-cache` replaces the cache of the workloads that name one
    /// (mysql-oltp's page reads), leaves the others without, and is refused
    /// for a profile that has none.
    #[test]
    fn your_database_cache_replaces_the_profiles_on_its_cached_workloads_only() {
        let yours = crate::workload::DbCache::Share(0.32);
        let r = RunOverrides {
            paths: vec!["/x/data.dat".into()],
            base: WorkloadSpec {
                shape: crate::workload::Shape {
                    db_cache: Some(yours),
                    ..Default::default()
                },
                ..WorkloadSpec::default()
            },
            ..Default::default()
        };
        let p = plan(Profile::load("mysql-oltp").unwrap(), &r).unwrap();
        let cached: Vec<(&str, Option<crate::workload::DbCache>)> = p
            .workloads
            .iter()
            .map(|w| (w.name.as_str(), w.spec.shape.db_cache))
            .collect();
        assert_eq!(cached[0], ("pages-16k", Some(yours)));
        assert!(cached[1..].iter().all(|c| c.1.is_none()), "{cached:?}");
        // Without the option, the profile's own.
        let own = plan(
            Profile::load("mysql-oltp").unwrap(),
            &RunOverrides {
                paths: vec!["/x/data.dat".into()],
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            own.workloads[0].spec.shape.db_cache,
            Some(crate::workload::DbCache::Share(32.0 / 250.0))
        );
        let e = plan(Profile::load("etcd-wal").unwrap(), &r)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no workload whose page reads"), "{e}");
    }

    #[test]
    fn postgresql_reads_and_writes_through_the_page_cache_and_fdatasyncs_its_wal() {
        use crate::workload::{FlushKind, SyncMethod};
        let p = Profile::load("postgresql-oltp").unwrap();
        assert_eq!(p.dbms, Dbms::POSTGRESQL);
        assert_eq!(p.target_names(), ["data", "wal"]);
        // Page reads and writes through the page cache, as measured: the
        // writes hinted to writeback (flush_after) and fdatasynced at the
        // checkpoint's pace.
        let reads = spec_of("postgresql-oltp", "page-read");
        assert_eq!(
            (reads.rw, reads.cache, reads.qd),
            (RwMode::Randread, CacheMode::Buffered, 1)
        );
        let writes = spec_of("postgresql-oltp", "page-write");
        assert_eq!(
            (writes.rw, writes.cache),
            (RwMode::Randwrite, CacheMode::Buffered)
        );
        assert_eq!(writes.sync_file_range, Some(16));
        assert_eq!(writes.flush.map(|f| f.every), Some(1100));
        // One WAL writer, as PostgreSQL's group commit flushes one at a
        // time, each write starting in the page the last one ended in.
        let wal = spec_of("postgresql-oltp", "wal-commit");
        assert_eq!(wal.cache, CacheMode::Buffered);
        assert_eq!(wal.sync_method, Some(SyncMethod::Fdatasync));
        assert_eq!((wal.threads, wal.qd), (1, 1));
        assert_eq!(
            wal.shape.tail_rewrite.map(|t| (t.page, t.pct)),
            Some((8192, 99))
        );
        let mix = wal.shape.bssplit.as_ref().unwrap();
        assert_eq!(mix.sizes().first(), Some(&(8 << 10)));
        let cp = spec_of("postgresql-checkpoint", "checkpoint-8k");
        assert_eq!(cp.rw, RwMode::Randwrite);
        assert_eq!(cp.cache, CacheMode::Buffered);
        assert_eq!(
            cp.flush,
            Some(crate::workload::Flush {
                kind: FlushKind::Fsync,
                every: 32
            })
        );
        let scan = spec_of("postgresql-seqscan", "seqscan-8k");
        assert_eq!((scan.rw, scan.cache), (RwMode::Read, CacheMode::Buffered));
        let vac = spec_of("postgresql-seqscan", "autovacuum-8k");
        assert_eq!((vac.rw, vac.write_pct), (RwMode::Readwrite, 20));
    }

    #[test]
    fn innodb_pages_are_direct_and_its_logs_flush_per_commit() {
        use crate::workload::{FlushKind, SyncMethod};
        let p = Profile::load("mysql-oltp").unwrap();
        assert_eq!(p.target_names(), ["data", "doublewrite", "redo", "binlog"]);
        let pages = spec_of("mysql-oltp", "pages-16k");
        assert_eq!((pages.cache, pages.bs), (CacheMode::Direct, 16 << 10));
        // fdatasync: the measured redo's flushes commit no journal (an
        // fsync would, for the file's times).
        let redo = spec_of("mysql-oltp", "redo-commit");
        assert_eq!(
            redo.flush.map(|f| (f.kind, f.every)),
            Some((FlushKind::Fdatasync, 1))
        );
        // Whole 512-byte log blocks, written O_DIRECT as MariaDB does.
        assert_eq!(redo.cache, CacheMode::Direct);
        let sizes = redo.shape.bssplit.as_ref().unwrap().sizes();
        assert!(sizes.iter().all(|s| s % 512 == 0), "{sizes:?}");
        assert_eq!(spec_of("mysql-oltp", "doublewrite-batch").bs, 2 << 20);
        // The binary log grows: each fdatasync commits the journal.
        let binlog = spec_of("mysql-oltp", "binlog-commit");
        assert_eq!(binlog.sync_method, Some(SyncMethod::Fdatasync));
        assert_eq!(binlog.fill, crate::workload::FillMode::Grow);
        let p = Profile::load("mysql-doublewrite").unwrap();
        assert_eq!(p.target_names(), ["data", "doublewrite"]);
        let dw = spec_of("mysql-doublewrite", "doublewrite-batch");
        assert_eq!((dw.rw, dw.cache), (RwMode::Write, CacheMode::Direct));
        assert_eq!(dw.flush.map(|f| f.every), Some(1));
        assert_eq!(dw.bs, 1 << 20);
    }

    #[test]
    fn oracle_is_direct_with_a_redo_size_mix_and_multiblock_reads() {
        let redo = spec_of("oracle-oltp", "lgwr-redo");
        let mix = redo.shape.bssplit.as_ref().unwrap();
        assert_eq!(mix.sizes().first(), Some(&512));
        assert_eq!(redo.bs, 1 << 20, "up to 1 MiB");
        let dbwr = spec_of("oracle-oltp", "dbwr-8k");
        assert!(dbwr.qd >= 8, "asynchronous batches");
        let scan = spec_of("oracle-scan", "multiblock-1m");
        assert_eq!((scan.rw, scan.bs), (RwMode::Read, 1 << 20));
        assert!(Profile::load("oracle-oltp")
            .unwrap()
            .workloads
            .iter()
            .all(|w| w.cache.is_direct()));
    }

    #[test]
    fn etcd_appends_pages_and_its_fio_check_2300_bytes_buffered_with_fdatasync() {
        use crate::workload::{FillMode, FlushKind, SyncMethod};
        // The tail page again (4 KiB), or it and the next, unwritten one.
        let wal = spec_of("etcd-wal", "wal-append");
        assert_eq!(wal.shape.bssplit.as_ref().unwrap().sizes(), [4096, 8192]);
        assert_eq!(wal.shape.tail_rewrite.map(|t| t.page), Some(4096));
        assert_eq!((wal.qd, wal.threads), (1, 1));
        assert_eq!(wal.cache, CacheMode::Buffered);
        assert_eq!(wal.sync_method, Some(SyncMethod::Fdatasync));
        assert_eq!(wal.rate_iops, Some(352));
        let backend = spec_of("etcd-wal", "backend-commit");
        assert_eq!(
            backend.flush.map(|f| (f.kind, f.every)),
            Some((FlushKind::Fdatasync, 3))
        );
        // 10 commits a second: etcd's 100 ms batch interval.
        assert_eq!(backend.rate_iops, Some(30));
        // fio --rw=write --ioengine=sync --fdatasync=1 --bs=2300: buffered, one writer.
        let fio = spec_of("etcd-fio", "fdatasync-2300");
        assert_eq!((fio.bs, fio.qd, fio.threads), (2300, 1, 1));
        assert_eq!((fio.rw, fio.cache), (RwMode::Write, CacheMode::Buffered));
        assert_eq!(fio.sync_method, Some(SyncMethod::Fdatasync));
        assert_eq!(fio.rate_iops, None);
        // Laid out as fio lays out its file, and one pass over it, as fio's check.
        assert_eq!((fio.fill, fio.passes), (FillMode::Allocated, Some(1)));
        // etcd preallocates its WAL segments; the backend's file is written.
        assert_eq!(wal.fill, FillMode::Allocated);
        assert_eq!((backend.fill, backend.passes), (FillMode::Random, None));
    }

    #[test]
    fn a_workload_lays_out_its_file_one_way() {
        use crate::workload::FillMode;
        let base = "name = \"x\"\ndescription = \"d\"\nsource = \"s\"\n[[workload]]\nname = \"w\"\ntarget = \"log\"\nrole = \"log\"\nrw = \"write\"\nbs = \"4K\"\n";
        let p = Profile::parse(&format!("{base}fill = \"sparse\"\npasses = 2\n"), "t").unwrap();
        let s = p.workloads[0].spec(&WorkloadSpec::default()).unwrap();
        assert_eq!((s.fill, s.passes), (FillMode::Sparse, Some(2)));
        // A WAL's tail page, written again by 70% of the next writes.
        let p = Profile::parse(&format!("{base}qd = 1\ntail_rewrite = \"4k:70\"\n"), "t").unwrap();
        let s = p.workloads[0].spec(&WorkloadSpec::default()).unwrap();
        assert_eq!(s.shape.tail_rewrite.map(|t| t.arg()), Some("4K:70".into()));
        let e = Profile::parse(&format!("{base}tail_rewrite = \"4k:0\"\n"), "t")
            .and_then(|p| Ok(p.workloads[0].spec(&WorkloadSpec::default())?))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tail_rewrite = '4k:0'"), "{e}");
        // Writeback hints every 32 writes, through the page cache; a file
        // that grows as it is written.
        let p = Profile::parse(
            &format!("{base}cache = \"buffered\"\nsync_file_range = 32\nfill = \"grow\"\n"),
            "t",
        )
        .unwrap();
        let s = p.workloads[0].spec(&WorkloadSpec::default()).unwrap();
        assert_eq!((s.sync_file_range, s.fill), (Some(32), FillMode::Grow));
        // Bursts of 32 back to back, 58 ms apart.
        let p = Profile::parse(&format!("{base}burst = 32\nthink = \"58ms\"\n"), "t").unwrap();
        let s = p.workloads[0].spec(&WorkloadSpec::default()).unwrap();
        assert_eq!(
            (s.burst, s.think),
            (32, std::time::Duration::from_millis(58))
        );
        let e = Profile::parse(&format!("{base}think = \"soon\"\n"), "t")
            .and_then(|p| Ok(p.workloads[0].spec(&WorkloadSpec::default())?))
            .unwrap_err()
            .to_string();
        assert!(e.contains("think = 'soon'"), "{e}");
        let p = Profile::parse(&format!("{base}fill = \"zero\"\ncompress_pct = 50\n"), "t");
        let e = p
            .and_then(|p| Ok(p.workloads[0].spec(&WorkloadSpec::default())?))
            .unwrap_err()
            .to_string();
        assert!(e.contains("keep one"), "{e}");
    }

    #[test]
    fn a_profile_names_its_database_and_its_own_rate_cap() {
        let base = "name = \"x\"\ndescription = \"d\"\nsource = \"s\"\n";
        let w = "[[workload]]\nname = \"w\"\ntarget = \"data\"\nrole = \"data\"\nrw = \"randread\"\nbs = \"8K\"\n";
        assert_eq!(
            Profile::parse(&format!("{base}{w}"), "t").unwrap().dbms,
            Dbms::SQLSERVER
        );
        let p = Profile::parse(&format!("{base}dbms = \"etcd\"\n{w}"), "t").unwrap();
        assert_eq!(p.dbms, Dbms::ETCD);
        let e = Profile::parse(&format!("{base}dbms = \"db2\"\n{w}"), "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("db2") && e.contains("postgresql"), "{e}");
        // The profile's cap replaces the command line's, which applies elsewhere.
        let p = Profile::parse(&format!("{base}{w}rate_iops = 100\n"), "t").unwrap();
        let cli = WorkloadSpec {
            rate_bytes: Some(1 << 20),
            ..Default::default()
        };
        let s = p.workloads[0].spec(&cli).unwrap();
        assert_eq!((s.rate_iops, s.rate_bytes), (Some(100), None));
        let e = Profile::parse(&format!("{base}{w}rate_iops = 0\n"), "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rate_iops = 0"), "{e}");
        let list = list_text().unwrap();
        assert!(
            list.contains("database: PostgreSQL; targets: data, wal;"),
            "{list}"
        );
        assert!(
            list.contains("database: SQL Server; targets: data;"),
            "{list}"
        );
    }

    #[test]
    fn targets_in_order_of_first_appearance() {
        let p = Profile::load("oltp-with-log").unwrap();
        assert_eq!(p.target_names(), vec!["data", "log"]);
        let p = Profile::load("index-rebuild").unwrap();
        assert_eq!(p.phases(), vec![1, 2]);
        assert_eq!(p.target_names(), vec!["data"]);
    }

    #[test]
    fn binding_derives_missing_paths_next_to_the_first() {
        let names = vec!["data".to_string(), "log".to_string()];
        let b = bind_targets(&names, &[PathBuf::from("/x/db.dat")]).unwrap();
        assert_eq!(b[1].path, PathBuf::from("/x/db-log.dat"));
        assert!(b[1].derived && !b[0].derived);
        let b = bind_targets(&names, &[PathBuf::from("/x/a"), PathBuf::from("/y/b")]).unwrap();
        assert_eq!(b[1].path, PathBuf::from("/y/b"));
        assert!(!b[1].derived);
        assert!(bind_targets(&names, &[]).is_err());
        let three = [PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c")];
        assert!(bind_targets(&names, &three)
            .unwrap_err()
            .to_string()
            .contains("one path per target"));
    }

    #[test]
    fn bad_profiles_say_what_is_wrong() {
        let e = Profile::parse("name = \"x\"\ndescription = \"d\"\nsource = \"s\"\n", "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("workload"), "{e}");
        let base = "name = \"x\"\ndescription = \"d\"\nsource = \"s\"\n[[workload]]\nname = \"w\"\ntarget = \"data\"\nrole = \"data\"\nrw = \"randread\"\n";
        let e = Profile::parse(&format!("{base}bs = \"4Q\"\n"), "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("4Q"), "{e}");
        let e = Profile::parse(&format!("{base}bs = \"8K\"\nwrite_pct = 30\n"), "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("mixed"), "{e}");
        let e = Profile::parse(&format!("{base}bs = \"8K\"\nqd = 0\n"), "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("qd"), "{e}");
        let e = Profile::parse(&format!("{base}bs = \"8K\"\nfrobnicate = 1\n"), "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("frobnicate"), "{e}");
        let e = Profile::parse(&base.replace("\"data\"\nrw", "\"disk\"\nrw"), "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("disk"), "{e}");
        assert!(Profile::load("nosuch")
            .unwrap_err()
            .to_string()
            .contains("oltp-with-log"));
    }

    #[test]
    fn workloads_take_skew_size_mixes_and_data_patterns() {
        let text = "name = \"x\"\ndescription = \"d\"\nsource = \"s\"\n[[workload]]\nname = \"w\"\ntarget = \"data\"\nrole = \"data\"\nrw = \"randrw\"\nbs = \"8K\"\n\
            distribution = \"hotcold:10/90\"\nhot_placement = \"start\"\nbssplit = \"8K/90:64K/10\"\ncompress_pct = 50\ndedupe_pct = 10\n";
        let p = Profile::parse(text, "t").unwrap();
        let s = p.workloads[0].spec(&WorkloadSpec::default()).unwrap();
        assert_eq!(s.shape.distribution.to_string(), "hotcold:10/90");
        assert_eq!(s.shape.placement, crate::workload::Placement::Start);
        assert_eq!(s.shape.bssplit.unwrap().to_string(), "8K/90:64K/10");
        assert_eq!(s.fill, crate::workload::FillMode::Compressible(50));
        assert_eq!(s.shape.dedupe_pct, 10);
        // Without them, the command line's (the base's) apply.
        let plain = Profile::load("oltp").unwrap();
        let base = WorkloadSpec {
            shape: crate::workload::Shape {
                distribution: "zipf:1.1".parse().unwrap(),
                ..Default::default()
            },
            ..Default::default()
        };
        let s = plain.workloads[0].spec(&base).unwrap();
        assert_eq!(s.shape.distribution.to_string(), "zipf:1.1");
        for (good, bad) in [
            (
                "distribution = \"hotcold:10/90\"",
                "distribution = \"zipf:0\"",
            ),
            ("bssplit = \"8K/90:64K/10\"", "bssplit = \"8K/50\""),
            ("compress_pct = 50", "compress_pct = 150"),
        ] {
            let e = Profile::parse(&text.replace(good, bad), "t").unwrap_err();
            assert!(!e.to_string().contains("duplicate"), "{bad}: {e}");
        }
    }

    #[test]
    fn derived_path_keeps_the_extension() {
        assert_eq!(
            derived_path(Path::new("/d/iosim.dat"), "backup"),
            PathBuf::from("/d/iosim-backup.dat")
        );
        assert_eq!(
            derived_path(Path::new("/d/file"), "log"),
            PathBuf::from("/d/file-log")
        );
    }
}
