//! What to qualify and where: the roles' locations, the shape of each stage's runs.
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::databases;
use super::rules::RuleSet;
use super::stage_id::StageId;
use super::system;
use crate::dbms::Dbms;
use crate::verdict::Role;
use crate::workload::{CacheMode, EngineKind, WorkloadSpec};

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
    /// `--neighbour`: the noisy-neighbour stage's background workload.
    pub neighbour: Option<crate::neighbour::NeighbourSpec>,
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
    /// The database qualified for: its roles, workloads and rules (`--dbms`).
    pub dbms: Dbms,
    /// The user's own profiles (`--profile FILE|NAME`): the profiles stage
    /// runs them instead of the database's (empty: the database's).
    pub profiles: Vec<String>,
    /// The database's own cache against its data (`--db-cache`), for the
    /// profiles' workloads whose reads a cache serves (`db_cache` key).
    pub db_cache: Option<crate::workload::DbCache>,
    /// `--commit-rate`: the commits a second the profiles' `per_commit`
    /// workloads are scaled to.
    pub commit_rate: Option<f64>,
    /// `--clients`: the client sessions the profiles' `per_client`
    /// workloads are scaled to.
    pub clients: Option<u32>,
}

#[cfg(test)]
impl QualifyConfig {
    /// A qualification of `dir` (data, the log beside it) for `dbms`,
    /// 60 s, 1 MiB files, nothing else given: the tests' starting point.
    pub(crate) fn for_test(dbms: Dbms, dir: &Path) -> QualifyConfig {
        QualifyConfig {
            neighbour: None,
            roles: vec![RoleArg {
                role: Role::Data,
                path: dir.into(),
            }],
            time: Duration::from_secs(60),
            size: 1 << 20,
            engine: EngineKind::Auto,
            allow_destroy: false,
            keep_files: false,
            progress: false,
            rules: RuleSet::Classic,
            cache_size: None,
            dbms,
            profiles: Vec::new(),
            db_cache: None,
            commit_rate: None,
            clients: None,
        }
    }
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
pub(super) fn stage_caches(
    cfg: &QualifyConfig,
    locs: &[Location],
) -> anyhow::Result<Vec<system::StageCache>> {
    let mut profiles: Vec<CacheMode> = Vec::new();
    for planned in planned_profiles(cfg, locs)? {
        for w in &planned.profile.workloads {
            if !profiles.contains(&w.cache) {
                profiles.push(w.cache);
            }
        }
    }
    let sim = crate::sim::files::cache_mode(&crate::sim::config::SimConfig::default());
    Ok([
        (StageId::QuickCorners, vec![QUICK_CACHE]),
        (StageId::Sweeps, vec![MEASURE_CACHE]),
        (StageId::Profiles, profiles),
        (StageId::Simulator, vec![sim]),
    ]
    .into_iter()
    .map(|(stage, cache)| system::StageCache { stage, cache })
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
        if !databases::roles(cfg.dbms).contains(&r.role) {
            return Err(bad(format!(
                "--{} is SQL Server's {}: iosim models no such file for {}; give --data and --log (its {}) for --dbms {}",
                r.role.name(),
                r.role.name(),
                cfg.dbms.title(),
                cfg.dbms.role_name(Role::Log),
                cfg.dbms.name()
            )));
        }
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
/// note saying so when any were dropped, naming the role `role` (as the
/// database calls it: `wal`).
pub fn fit_threads_axis(axis: &mut crate::sweep::Axis, cores: usize, role: &str) -> Option<String> {
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
        role,
        show(&axis.values),
        show(&before),
    ))
}

/// A profile the profiles stage runs, loaded, with the role of each of its
/// targets (in the profile's target order).
#[derive(Clone, Debug)]
pub struct PlannedProfile {
    /// The profile.
    pub profile: crate::profile::Profile,
    /// Each target's role, whose location it is run on.
    pub roles: Vec<Role>,
    /// What `--profile` named (a file or a built-in name); `None` for one of
    /// the database's own profiles.
    pub given: Option<String>,
    /// What `--commit-rate` and `--clients` changed in it, for the report's notes.
    pub load_notes: Vec<String>,
}

/// The profiles the profiles stage runs: the user's (`--profile`), else the
/// database's that fit the roles present.
pub fn planned_profiles(
    cfg: &QualifyConfig,
    locs: &[Location],
) -> anyhow::Result<Vec<PlannedProfile>> {
    let mut planned = profiles_to_run(cfg, locs)?;
    // Those that say what they were measured at run at yours; the others
    // as they are.
    if let Some(c) = cfg.commit_rate {
        scale_where_said(
            &mut planned,
            |p| p.commit_rate.is_some(),
            |p| p.at_commit_rate(c),
            |names| {
                format!(
            "--commit-rate {c}: none of {names} says the commit rate its workloads were measured at (a commit_rate key), so there is nothing for it to scale: leave --commit-rate out, or give a --profile with commit_rate and per_commit"
        )
            },
        )?;
    }
    if let Some(n) = cfg.clients {
        scale_where_said(
            &mut planned,
            |p| p.clients.is_some(),
            |p| p.at_clients(n),
            |names| {
                format!(
            "--clients {n}: none of {names} says the client sessions its workloads were measured with (a clients key), so there is nothing for it to scale: leave --clients out, or give a --profile with clients and per_client"
        )
            },
        )?;
    }
    if let Some(c) = cfg.db_cache {
        if !planned
            .iter()
            .any(|p| p.profile.workloads.iter().any(|w| w.db_cache.is_some()))
        {
            anyhow::bail!(crate::Error::BadWorkload(format!(
                "--db-cache {c}: no workload of {} says the database cache its page reads were measured at (a db_cache key), so there is nothing for it to change: leave --db-cache out, or give a --profile whose random-read workload has db_cache",
                names_of(&planned)
            )));
        }
    }
    Ok(planned)
}

/// The planned profiles' names, for a message.
fn names_of(planned: &[PlannedProfile]) -> String {
    let names: Vec<&str> = planned.iter().map(|p| p.profile.name.as_str()).collect();
    names.join(", ")
}

/// A load option (`--commit-rate`, `--clients`) applied with `scale` to each
/// planned profile that `says` what it was measured at, its note kept;
/// refused with `refusal(names)` when none says it.
fn scale_where_said(
    planned: &mut [PlannedProfile],
    says: impl Fn(&crate::profile::Profile) -> bool,
    scale: impl Fn(crate::profile::Profile) -> anyhow::Result<(crate::profile::Profile, String)>,
    refusal: impl FnOnce(String) -> String,
) -> anyhow::Result<()> {
    if !planned.iter().any(|p| says(&p.profile)) {
        anyhow::bail!(crate::Error::BadWorkload(refusal(names_of(planned))));
    }
    for p in planned.iter_mut().filter(|p| says(&p.profile)) {
        let (scaled, note) = scale(p.profile.clone())?;
        p.profile = scaled;
        p.load_notes.push(note);
    }
    Ok(())
}

/// [`planned_profiles`]: the user's profiles, else the database's.
fn profiles_to_run(cfg: &QualifyConfig, locs: &[Location]) -> anyhow::Result<Vec<PlannedProfile>> {
    if cfg.profiles.is_empty() {
        return databases::profiles(cfg.dbms, |r| locs.iter().any(|l| l.role == r))
            .into_iter()
            .map(|(name, roles)| {
                Ok(PlannedProfile {
                    profile: crate::profile::Profile::load(name)?,
                    roles,
                    given: None,
                    load_notes: Vec::new(),
                })
            })
            .collect();
    }
    cfg.profiles
        .iter()
        .map(|given| {
            let profile = crate::profile::Profile::load(given)?;
            let roles = own_profile_roles(&profile, locs);
            Ok(PlannedProfile {
                profile,
                roles,
                given: Some(given.clone()),
                load_notes: Vec::new(),
            })
        })
        .collect()
}

/// The role of each target of a user's profile: its first workload's
/// `role`, where the qualification has that role's location, else the
/// data's (a profile's tempdb target qualified for a database without one).
fn own_profile_roles(p: &crate::profile::Profile, locs: &[Location]) -> Vec<Role> {
    p.target_names()
        .iter()
        .map(|t| {
            let role = p
                .workloads
                .iter()
                .find(|w| &w.target == t)
                .map_or(Role::Data, |w| w.role);
            if locs.iter().any(|l| l.role == role) {
                role
            } else {
                Role::Data
            }
        })
        .collect()
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
            | ("oracle-scan", _)
            | ("oracle-oltp", "dbwr-8k")
            | ("mysql-doublewrite", "in-place-16k")
    )
}

/// The smallest test file every stage's I/O fits in (the quick corners',
/// the sweeps', the profiles'): each file must hold the largest I/O, and
/// where a profile puts several targets on one location ([`slices`]), each
/// slice must hold its workload's.
pub(super) fn largest_block(cfg: &QualifyConfig, locs: &[Location]) -> anyhow::Result<u64> {
    let mut need = crate::quick::SUITE.iter().map(|c| c.bs).max().unwrap_or(0);
    for l in locs {
        need = need.max(databases::sweep_shape(cfg.dbms, l.role).1);
    }
    for PlannedProfile {
        profile: p, roles, ..
    } in planned_profiles(cfg, locs)?
    {
        let names = p.target_names();
        let sl = slices(&roles);
        for w in &p.workloads {
            let mut spec = w.spec(&WorkloadSpec::default())?;
            spec.resolve_sizes();
            let i = names.iter().position(|n| *n == w.target).unwrap_or(0);
            let parts = sl.get(i).map_or(1, |s| s.1) as u64;
            need = need.max(if parts > 1 {
                parts * spec.bs.next_multiple_of(SLICE_ALIGN)
            } else {
                spec.bs
            });
        }
    }
    Ok(need)
}

/// Where a profile puts several targets on one location, each gets a slice
/// of the file or device starting at a multiple of this.
pub const SLICE_ALIGN: u64 = 1 << 20;

/// For each target of a profile (by the roles of its targets, in order):
/// which slice of its role's location it uses and of how many (`(0, 1)`:
/// the whole of it).
pub fn slices(roles: &[Role]) -> Vec<(usize, usize)> {
    roles
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let of = roles.iter().filter(|x| *x == r).count();
            let index = roles[..i].iter().filter(|x| *x == r).count();
            (index, of)
        })
        .collect()
}

/// The region `(offset, length)` of slice `index` of `of` in a location of
/// `size` bytes, aligned to [`SLICE_ALIGN`] (None: the whole location).
pub fn slice_region(size: u64, (index, of): (usize, usize)) -> Option<(u64, u64)> {
    if of <= 1 {
        return None;
    }
    let len = (size / of as u64) / SLICE_ALIGN * SLICE_ALIGN;
    Some((index as u64 * len, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::verdict::Role;

    #[test]
    fn locations_bind_roles_and_refuse_what_they_cannot_use() {
        let a = tempfile::tempdir().unwrap();
        let cfg = QualifyConfig::for_test(Dbms::SQLSERVER, a.path());
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
    fn targets_sharing_a_location_get_aligned_slices() {
        use Role::{Data, Log};
        assert_eq!(slices(&[Data, Log]), [(0, 1), (0, 1)]);
        // InnoDB: data and doublewrite on data, redo and binary log on the log.
        assert_eq!(
            slices(&[Data, Data, Log, Log]),
            [(0, 2), (1, 2), (0, 2), (1, 2)]
        );
        assert_eq!(slice_region(1 << 30, (0, 1)), None);
        assert_eq!(slice_region(1 << 30, (1, 2)), Some((512 << 20, 512 << 20)));
        // Aligned to 1 MiB, whatever the size.
        let (off, len) = slice_region((16 << 20) + 12345, (1, 3)).unwrap();
        assert_eq!((off % SLICE_ALIGN, len % SLICE_ALIGN), (0, 0));
        assert_eq!(len, 5 << 20);
        // The smallest test file holds a slice of each workload's largest I/O.
        let a = tempfile::tempdir().unwrap();
        let cfg_for = |dbms| QualifyConfig::for_test(dbms, a.path());
        let locs = locations(&cfg_for(Dbms::MYSQL)).unwrap();
        // InnoDB's doublewrite batches of up to 2 MiB, in a slice of two.
        assert_eq!(
            largest_block(&cfg_for(Dbms::MYSQL), &locs).unwrap(),
            4 << 20
        );
        assert_eq!(
            largest_block(&cfg_for(Dbms::SQLSERVER), &locs).unwrap(),
            1 << 20
        );
    }

    #[test]
    fn another_database_has_no_tempdb_or_backup() {
        let a = tempfile::tempdir().unwrap();
        let role = |role| RoleArg {
            role,
            path: a.path().into(),
        };
        let cfg = QualifyConfig {
            roles: vec![role(Role::Data), role(Role::Tempdb)],
            ..QualifyConfig::for_test(Dbms::POSTGRESQL, a.path())
        };
        let e = locations(&cfg).unwrap_err().to_string();
        assert!(
            e.starts_with("--tempdb is SQL Server's tempdb: iosim models no such file for PostgreSQL; give --data and --log (its wal)"),
            "{e}"
        );
        let ok = QualifyConfig {
            neighbour: None,
            dbms: Dbms::SQLSERVER,
            ..cfg.clone()
        };
        assert_eq!(locations(&ok).unwrap().len(), 3);
        let etcd = QualifyConfig {
            neighbour: None,
            roles: vec![role(Role::Data)],
            dbms: Dbms::ETCD,
            ..cfg
        };
        let l = locations(&etcd).unwrap();
        let planned: Vec<(String, Vec<Role>)> = planned_profiles(&etcd, &l)
            .unwrap()
            .into_iter()
            .map(|p| (p.profile.name, p.roles))
            .collect();
        assert_eq!(
            planned,
            [
                ("etcd-wal".to_string(), vec![Role::Log, Role::Data]),
                ("etcd-fio".to_string(), vec![Role::Log])
            ]
        );
    }

    #[test]
    fn a_users_profile_replaces_the_databases_and_keeps_its_targets_roles() {
        let a = tempfile::tempdir().unwrap();
        let file = a.path().join("mine.toml");
        std::fs::write(
            &file,
            "name = \"mine\"\ndescription = \"d\"\nsource = \"s\"\n\
             [[workload]]\nname = \"wal\"\ntarget = \"log\"\nrole = \"log\"\nrw = \"write\"\nbs = \"8K\"\n\
             [[workload]]\nname = \"pages\"\ntarget = \"data\"\nrole = \"data\"\nrw = \"randread\"\nbs = \"8K\"\n\
             [[workload]]\nname = \"sort\"\ntarget = \"tmp\"\nrole = \"tempdb\"\nrw = \"randwrite\"\nbs = \"64K\"\n",
        )
        .unwrap();
        let cfg = QualifyConfig {
            profiles: vec![file.to_str().unwrap().to_string(), "etcd-fio".into()],
            ..QualifyConfig::for_test(Dbms::POSTGRESQL, a.path())
        };
        let locs = locations(&cfg).unwrap();
        let planned = planned_profiles(&cfg, &locs).unwrap();
        let got: Vec<(&str, &[Role], Option<&str>)> = planned
            .iter()
            .map(|p| {
                (
                    p.profile.name.as_str(),
                    p.roles.as_slice(),
                    p.given.as_deref(),
                )
            })
            .collect();
        // The log target on the log; tempdb, which PostgreSQL has not, on
        // the data; a built-in name works too. No postgresql-oltp.
        assert_eq!(
            got,
            [
                (
                    "mine",
                    &[Role::Log, Role::Data, Role::Data][..],
                    Some(file.to_str().unwrap())
                ),
                ("etcd-fio", &[Role::Log][..], Some("etcd-fio")),
            ]
        );
        // Its largest I/O sizes the test files; its phases the budget.
        assert_eq!(largest_block(&cfg, &locs).unwrap(), 2 << 20);
        // A profile that does not load is an error naming it.
        let bad = QualifyConfig {
            profiles: vec![a.path().join("none.toml").to_str().unwrap().into()],
            ..cfg
        };
        let e = planned_profiles(&bad, &locs).unwrap_err().to_string();
        assert!(e.contains("none.toml"), "{e}");
    }

    #[test]
    fn deep_queue_workloads_are_named() {
        assert!(is_deep_queue("read-ahead", "scan-512k"));
        assert!(is_deep_queue("backup", "write-backup-1m"));
        assert!(!is_deep_queue("oltp-with-log", "data-8k"));
        assert!(!is_deep_queue("bulk-insert", "log-60k"));
        assert!(is_deep_queue("oracle-scan", "multiblock-1m"));
        assert!(!is_deep_queue("oracle-oltp", "single-block-8k"));
    }

    #[test]
    fn threads_sweeps_fit_the_cores() {
        let axis = |role| {
            crate::sweep::parse_axis(databases::sweep_shape(Dbms::SQLSERVER, role).3).unwrap()
        };
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
        let note = fit_threads_axis(&mut a, 2, "data").unwrap();
        assert_eq!(nums(&a), [1, 2, 4]);
        assert_eq!(
            note,
            "the data threads sweep stops at 4 threads, not 8: 2 per core on this 2-core machine (more would wait for each other's CPU and measure the machine, not the storage)"
        );
        // The log's 1..4 fits two cores: no note.
        let mut a = axis(Role::Log);
        assert_eq!(fit_threads_axis(&mut a, 2, "log"), None);
        assert_eq!(nums(&a), [1, 2, 4]);
        // Four cores and more: the whole axis.
        let mut a = axis(Role::Data);
        assert_eq!(fit_threads_axis(&mut a, 4, "data"), None);
        assert_eq!(nums(&a), [1, 2, 4, 8]);
        // One core: 1 and 2.
        let mut a = axis(Role::Tempdb);
        assert!(fit_threads_axis(&mut a, 1, "tempdb").is_some());
        assert_eq!(nums(&a), [1, 2]);
    }
}
