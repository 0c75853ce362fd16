//! What to qualify and where: the roles' locations, the shape of each stage's runs.
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::rules::RuleSet;
use super::system;
use crate::verdict::Role;
use crate::workload::{CacheMode, EngineKind, RwMode, WorkloadSpec};

/// Where one role goes, as given.
#[derive(Clone, Debug)]
pub struct RoleArg {
    /// Role.
    pub role: Role,
    /// A directory or a block device.
    pub path: PathBuf,
}

/// What to qualify, and how long to take.
#[derive(Clone, Debug)]
pub struct QualifyConfig {
    /// Roles and their locations; data first. Log falls back to the data location.
    pub roles: Vec<RoleArg>,
    /// Time budget of the measurements.
    pub time: Duration,
    /// Size of the test files created in directories.
    pub size: u64,
    /// Engine.
    pub engine: EngineKind,
    /// Allow writing to block devices.
    pub allow_destroy: bool,
    /// Keep created test files.
    pub keep_files: bool,
    /// Stage lines on stderr.
    pub progress: bool,
    /// The latency table the verdict uses.
    pub rules: RuleSet,
    /// The cache in front of the disks, as the user gave it (`--cache-size`).
    pub cache_size: Option<u64>,
}

/// A role bound to its test target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    /// Role.
    pub role: Role,
    /// What was given (directory or device).
    pub given: PathBuf,
    /// The file or device measured.
    pub target: PathBuf,
    /// A block device.
    pub device: bool,
    /// Kernel name of the block device under it, when known.
    pub block_device: Option<String>,
    /// Created by this qualification.
    pub created: bool,
    /// Not given: placed beside the data.
    pub derived: bool,
    /// Size of the file or device measured, bytes (0: not known, stored by an older iosim).
    #[serde(default)]
    pub size: u64,
}

/// How the quick corners open their files (the corners of `iosim quick`).
pub const QUICK_CACHE: CacheMode = CacheMode::Direct;
/// How the sweeps open their files (and the profiles, unless a workload says
/// otherwise): as SQL Server opens its files.
pub const MEASURE_CACHE: CacheMode = CacheMode::DirectWritethrough;

/// How each stage opens its files, for the report.
pub(super) fn stage_caches(locs: &[Location]) -> anyhow::Result<Vec<system::StageCache>> {
    let mut profiles: Vec<CacheMode> = Vec::new();
    for (name, _) in profile_list(locs) {
        for w in &crate::profile::Profile::load(name)?.workloads {
            if !profiles.contains(&w.cache) {
                profiles.push(w.cache);
            }
        }
    }
    let sim = crate::sim::files::cache_mode(&crate::sim::config::SimConfig::default());
    Ok([
        ("quick corners", vec![QUICK_CACHE]),
        ("sweeps", vec![MEASURE_CACHE]),
        ("profiles", profiles),
        ("simulator", vec![sim]),
    ]
    .into_iter()
    .map(|(stage, cache)| system::StageCache {
        stage: stage.into(),
        cache,
    })
    .collect())
}

/// Size of a location's file or device now (0 when it cannot be read).
pub(super) fn target_size(l: &Location) -> u64 {
    if l.device {
        std::fs::File::open(&l.target)
            .and_then(|f| crate::target::device_size(&f))
            .unwrap_or(0)
    } else {
        std::fs::metadata(&l.target).map_or(0, |m| m.len())
    }
}

fn block_device_of(p: &Path) -> Option<String> {
    let probe = if p.exists() {
        p.to_path_buf()
    } else {
        p.parent()?.to_path_buf()
    };
    match crate::sysmon::mounts::resolve_target(&probe) {
        crate::sysmon::mounts::Resolution::Device(d) => Some(d.name),
        _ => None,
    }
}

/// Binds roles to test targets: a directory gets `iosim-qualify-ROLE.dat`, a
/// device is used whole. The log goes beside the data when not given.
pub fn locations(cfg: &QualifyConfig) -> anyhow::Result<Vec<Location>> {
    let bad = |m: String| anyhow::Error::new(crate::Error::BadWorkload(m));
    let mut out: Vec<Location> = Vec::new();
    for r in &cfg.roles {
        let device = crate::platform::fs::path_is_device(&r.path);
        if device && !cfg.allow_destroy {
            return Err(crate::Error::WouldDestroy(
                r.path.clone(),
                format!(
                    "it is a block device and qualifying it as {} overwrites it: add --allow-destroy if its contents may go",
                    r.role.name()
                ),
            )
            .into());
        }
        if !device && !r.path.is_dir() {
            if !r.path.exists() {
                return Err(crate::Error::MissingDirectory(r.path.clone()).into());
            }
            return Err(bad(format!(
                "--{} {}: give a directory (a test file is created in it) or a block device",
                r.role.name(),
                r.path.display()
            )));
        }
        let target = if device {
            r.path.clone()
        } else {
            r.path.join(format!("iosim-qualify-{}.dat", r.role.name()))
        };
        if let Some(o) = out.iter().find(|o| o.target == target) {
            return Err(bad(format!(
                "--{} and --{} name the same device {}: a device holds one role; give each role its own device, or directories",
                o.role.name(),
                r.role.name(),
                target.display()
            )));
        }
        out.push(Location {
            role: r.role,
            given: r.path.clone(),
            block_device: block_device_of(&target),
            target,
            device,
            created: false,
            derived: false,
            size: 0,
        });
    }
    let data = out
        .iter()
        .find(|l| l.role == Role::Data)
        .cloned()
        .ok_or_else(|| bad("--data is required".into()))?;
    if !out.iter().any(|l| l.role == Role::Log) {
        if data.device {
            return Err(bad(format!(
                "--data {} is a device and holds the data role only: give --log DIR|DEV for the log",
                data.given.display()
            )));
        }
        let target = data.given.join("iosim-qualify-log.dat");
        out.push(Location {
            role: Role::Log,
            given: data.given.clone(),
            block_device: data.block_device.clone(),
            target,
            device: false,
            created: false,
            derived: true,
            size: 0,
        });
    }
    out.sort_by_key(|l| role_order(l.role));
    Ok(out)
}

fn role_order(r: Role) -> usize {
    match r {
        Role::Data => 0,
        Role::Log => 1,
        Role::Tempdb => 2,
        Role::Backup => 3,
    }
}

/// True when two locations share a block device (or a path).
pub fn shares_device(a: &Location, b: &Location) -> bool {
    a.given == b.given || matches!((&a.block_device, &b.block_device), (Some(x), Some(y)) if x == y)
}

pub(super) fn base_spec(cfg: &QualifyConfig, duration: Duration) -> WorkloadSpec {
    WorkloadSpec {
        duration,
        engine: cfg.engine,
        cache: MEASURE_CACHE,
        allow_destroy: cfg.allow_destroy,
        ..WorkloadSpec::default()
    }
}

/// Worker threads per core the threads sweeps go up to. The sweeps run QD 4
/// per thread, so a thread waits for its I/O part of the time and two share a
/// core without waiting for each other; beyond that they queue for the CPU
/// and the sweep measures the machine, not the storage (on a 2-vCPU VM, 8
/// threads waited for a core about 19% of their time, 1 or 2 threads 5 to
/// 12%). Queue depths need no such cap: one thread drives any depth.
pub const SWEEP_THREADS_PER_CORE: u64 = 2;

/// Drops the values of a threads axis beyond [`SWEEP_THREADS_PER_CORE`] per
/// core of a machine with `cores` cores (keeping at least one value); the
/// note saying so when any were dropped.
pub fn fit_threads_axis(axis: &mut crate::sweep::Axis, cores: usize, role: Role) -> Option<String> {
    use crate::sweep::Value;
    let cap = SWEEP_THREADS_PER_CORE * cores.max(1) as u64;
    let before = axis.values.clone();
    axis.values
        .retain(|v| matches!(v, Value::Num(n) if *n <= cap));
    if axis.values.is_empty() {
        axis.values = before.into_iter().take(1).collect();
        return None;
    }
    if axis.values.len() == before.len() {
        return None;
    }
    let show = |v: &[Value]| match v.last() {
        Some(Value::Num(n)) => n.to_string(),
        _ => "?".into(),
    };
    Some(format!(
        "the {} threads sweep stops at {} threads, not {}: {SWEEP_THREADS_PER_CORE} per core on this {cores}-core machine (more would wait for each other's CPU and measure the machine, not the storage)",
        role.name(),
        show(&axis.values),
        show(&before),
    ))
}

/// The sweeps of a role: the pattern the database uses there, over queue depth and threads.
pub fn sweep_shape(role: Role) -> (RwMode, u64, &'static str, &'static str) {
    match role {
        Role::Data => (RwMode::Randread, 8 << 10, "qd=1..64x2", "threads=1..8x2"),
        Role::Log => (RwMode::Write, 60 << 10, "qd=1..32x2", "threads=1..4x2"),
        Role::Tempdb => (RwMode::Randrw, 8 << 10, "qd=1..64x2", "threads=1..8x2"),
        Role::Backup => (RwMode::Write, 1 << 20, "qd=1..16x2", "threads=1..4x2"),
    }
}

/// The profiles that fit the roles present, with their targets' locations.
pub fn profile_list(locs: &[Location]) -> Vec<(&'static str, Vec<Role>)> {
    let has = |r: Role| locs.iter().any(|l| l.role == r);
    let mut v = vec![
        ("oltp-with-log", vec![Role::Data, Role::Log]),
        ("log-writer", vec![Role::Log]),
        ("checkpoint", vec![Role::Data]),
        ("read-ahead", vec![Role::Data]),
        ("bulk-insert", vec![Role::Data, Role::Log]),
    ];
    if has(Role::Tempdb) {
        v.push(("tempdb", vec![Role::Tempdb]));
    }
    if has(Role::Backup) {
        v.push(("backup", vec![Role::Data, Role::Backup]));
        v.push(("restore", vec![Role::Data, Role::Backup]));
    }
    v
}

/// Workloads judged by throughput and the knee rather than their mean latency.
pub fn is_deep_queue(profile: &str, workload: &str) -> bool {
    matches!(
        (profile, workload),
        ("read-ahead", _)
            | ("backup", _)
            | ("restore", _)
            | ("bulk-insert", "eager-write-128k")
            | ("checkpoint", _)
    )
}

/// The largest block any stage issues on the test files (the quick
/// corners', the sweeps', the profiles'): each file must hold one.
pub(super) fn largest_block(locs: &[Location]) -> anyhow::Result<u64> {
    let mut bs = crate::quick::SUITE.iter().map(|c| c.bs).max().unwrap_or(0);
    for l in locs {
        bs = bs.max(sweep_shape(l.role).1);
    }
    for (name, _) in profile_list(locs) {
        for w in &crate::profile::Profile::load(name)?.workloads {
            let mut spec = w.spec(&WorkloadSpec::default())?;
            spec.resolve_sizes();
            bs = bs.max(spec.bs);
        }
    }
    Ok(bs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qualify::rules::RuleSet;

    use crate::verdict::Role;
    use crate::workload::EngineKind;
    use std::time::Duration;

    #[test]
    fn locations_bind_roles_and_refuse_what_they_cannot_use() {
        let a = tempfile::tempdir().unwrap();
        let cfg = QualifyConfig {
            roles: vec![RoleArg {
                role: Role::Data,
                path: a.path().into(),
            }],
            time: Duration::from_secs(60),
            size: 1 << 20,
            engine: EngineKind::Auto,
            allow_destroy: false,
            keep_files: false,
            progress: false,
            rules: RuleSet::Classic,
            cache_size: None,
        };
        let l = locations(&cfg).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].role, Role::Log);
        assert!(l[1].derived);
        assert!(shares_device(&l[0], &l[1]));
        assert!(l[0].target.ends_with("iosim-qualify-data.dat"));
        let mut bad = cfg.clone();
        bad.roles[0].path = a.path().join("nope");
        assert!(locations(&bad).is_err());
        let f = a.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        bad.roles[0].path = f;
        assert!(locations(&bad)
            .unwrap_err()
            .to_string()
            .contains("directory"));
    }

    #[test]
    fn deep_queue_workloads_are_named() {
        assert!(is_deep_queue("read-ahead", "scan-512k"));
        assert!(is_deep_queue("backup", "write-backup-1m"));
        assert!(!is_deep_queue("oltp-with-log", "data-8k"));
        assert!(!is_deep_queue("bulk-insert", "log-60k"));
    }

    #[test]
    fn threads_sweeps_fit_the_cores() {
        let axis = |role| crate::sweep::parse_axis(sweep_shape(role).3).unwrap();
        let nums = |a: &crate::sweep::Axis| {
            a.values
                .iter()
                .map(|v| match v {
                    crate::sweep::Value::Num(n) => *n,
                    _ => 0,
                })
                .collect::<Vec<_>>()
        };
        // Two cores: data's 1..8 stops at 4, and says so.
        let mut a = axis(Role::Data);
        let note = fit_threads_axis(&mut a, 2, Role::Data).unwrap();
        assert_eq!(nums(&a), [1, 2, 4]);
        assert_eq!(
            note,
            "the data threads sweep stops at 4 threads, not 8: 2 per core on this 2-core machine (more would wait for each other's CPU and measure the machine, not the storage)"
        );
        // The log's 1..4 fits two cores: no note.
        let mut a = axis(Role::Log);
        assert_eq!(fit_threads_axis(&mut a, 2, Role::Log), None);
        assert_eq!(nums(&a), [1, 2, 4]);
        // Four cores and more: the whole axis.
        let mut a = axis(Role::Data);
        assert_eq!(fit_threads_axis(&mut a, 4, Role::Data), None);
        assert_eq!(nums(&a), [1, 2, 4, 8]);
        // One core: 1 and 2.
        let mut a = axis(Role::Tempdb);
        assert!(fit_threads_axis(&mut a, 1, Role::Tempdb).is_some());
        assert_eq!(nums(&a), [1, 2]);
    }
}
