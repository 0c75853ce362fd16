//! The stages: quick corners, sweeps, profiles, simulator, self-checks.
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::budget::{per_run, sweep_repeats};
use super::databases::sweep_shape;
use super::judge::findings;
use super::plan::{
    base_spec, fit_threads_axis, is_deep_queue, planned_profiles, slice_region, slices, Location,
    PlannedProfile, QualifyConfig, QUICK_CACHE,
};
use super::result::{Measure, ProfileMeasure, RoleStalls, RoleSweep, SimFileSummary, SimSummary};
use super::rules;
use crate::quick::CornerId;
use crate::runner::{RunOptions, RunResult};
use crate::sweep::analysis::MAX_DECIDING_REPEATS;
use crate::sysmon::check::{CpuCause, WarningCode};
use crate::sysmon::procs::CpuAttribution;
use crate::verdict::Role;
use crate::workload::EngineKind;
use crate::workload::FillMode;

/// What the stages collect.
#[derive(Default)]
pub(super) struct Collected {
    pub(super) quick: Vec<Measure>,
    pub(super) sweeps: Vec<RoleSweep>,
    pub(super) profiles: Vec<ProfileMeasure>,
    pub(super) sim: Option<SimSummary>,
    /// (role, code, message) of every run's self-check warnings.
    pub(super) warnings: Vec<(Role, WarningCode, String)>,
    /// Who used the CPU in the runs with a CPU finding.
    pub(super) cpu: Vec<(Role, CpuCause, CpuAttribution)>,
    /// Errors per role.
    pub(super) errors: Vec<(Role, u64)>,
    /// Slow I/Os per role.
    pub(super) stalls: Vec<RoleStalls>,
    pub(super) notes: Vec<String>,
    pub(super) left: Vec<String>,
    pub(super) interrupted: bool,
    /// Page-cache findings of buffered-by-design workloads, not counted as untrusted.
    pub(super) page_cache_by_design: usize,
    /// The noisy-neighbour stage's studies, per location.
    pub(super) neighbours: Vec<super::result::RoleNeighbour>,
    /// The current stage's slowest I/O, us, and where (for its overrun's cause).
    pub(super) stage_longest: (f64, String),
}

/// The self-check codes that say the page cache answered: expected of a
/// buffered workload.
const PAGE_CACHE_CODES: [WarningCode; 4] = [
    WarningCode::CacheAnsweredReads,
    WarningCode::WritesMissedDevice,
    WarningCode::WritesStillCached,
    WarningCode::BufferedFitsInMemory,
];

impl Collected {
    pub(super) fn cpu_of(&mut self, role: Role, cpu: &crate::runner::CpuResult) {
        if let (Some(cause), Some(a)) = (cpu.cause, &cpu.attribution) {
            self.cpu.push((role, cause, a.clone()));
        }
    }

    pub(super) fn run(&mut self, role: Role, what: &str, r: &RunResult) {
        // A workload that goes through the page cache by design (the
        // database's own I/O does) is expected to be answered by it: the
        // checks that say so describe the database, not a flaw of the
        // measurement, and its page-cache latencies are not judged.
        let by_design = !r.config.cache.is_direct();
        for w in &r.warnings {
            if by_design && PAGE_CACHE_CODES.contains(&w.code) {
                self.page_cache_by_design += 1;
                continue;
            }
            self.warnings
                .push((role, w.code.clone(), w.message.clone()));
        }
        self.cpu_of(role, &r.cpu);
        self.errors.push((role, r.errors.count));
        self.interrupted |= r.interrupted;
        self.stall(role, what, r);
    }

    pub(super) fn stall(&mut self, role: Role, what: &str, r: &RunResult) {
        let i = match self.stalls.iter().position(|s| s.role == role) {
            Some(i) => i,
            None => {
                self.stalls.push(RoleStalls {
                    role,
                    ios: 0,
                    ios_over_1s: 0,
                    ios_over_15s: 0,
                    max_us: 0.0,
                    max_in: String::new(),
                });
                self.stalls.len() - 1
            }
        };
        self.stalls[i].add(what, r);
        let max = super::result::run_max_us(r);
        if max > self.stage_longest.0 {
            self.stage_longest = (max, what.to_string());
        }
    }
}

impl Collected {
    /// A sweep's runs (their warnings, errors, stop and CPU), as
    /// [`stage_sweeps`] saw them; returns how many.
    fn fold_sweep_runs(&mut self, role: Role, seen: Vec<SweepRunSeen>) -> usize {
        let n = seen.len();
        for (ws, errs, intr, cpu) in seen {
            for (code, msg) in ws {
                self.warnings.push((role, code, msg));
            }
            self.cpu_of(role, &cpu);
            self.errors.push((role, errs));
            self.interrupted |= intr;
        }
        n
    }
}

/// What [`stage_sweeps`] keeps of each run: warnings, errors, stopped, CPU.
type SweepRunSeen = (
    Vec<(WarningCode, String)>,
    u64,
    bool,
    crate::runner::CpuResult,
);

/// A run its stage's deadline (or Ctrl-C) stopped before it measured any
/// I/O: no measurement, nothing to judge.
fn unmeasured(r: &RunResult) -> bool {
    r.interrupted && r.total.total.ios == 0
}

pub(super) fn stage_quick(
    cfg: &QualifyConfig,
    distinct: &[&Location],
    slot: Duration,
    opts: &RunOptions,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let n = crate::quick::SUITE.len() * distinct.len();
    let duration = per_run(slot, n);
    let mut runs = 0;
    for l in distinct {
        let q = crate::quick::run(
            &crate::quick::QuickConfig {
                path: l.target.clone(),
                size: cfg.size,
                duration,
                engine: cfg.engine,
                cache: QUICK_CACHE,
                allow_destroy: cfg.allow_destroy,
            },
            opts,
        )?;
        for t in q.tests.iter().filter(|t| !unmeasured(&t.result)) {
            let name = format!("quick {}", t.id);
            c.run(l.role, &name, &t.result);
            c.quick.push(Measure::of(t.id.name(), l.role, &t.result));
            runs += 1;
        }
        for note in q.notes.iter().filter(|n| n.contains("not supported")) {
            c.notes.push(note.clone());
        }
    }
    Ok((
        runs,
        format!(
            "{runs} corner tests of {} on {} location(s)",
            crate::units::format_duration_arg(duration),
            distinct.len()
        ),
    ))
}

pub(super) fn stage_sweeps(
    cfg: &QualifyConfig,
    locs: &[Location],
    slot: Duration,
    opts: &RunOptions,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let mut plans = Vec::new();
    let cores = crate::sysmon::host::host_info().cpus;
    for l in locs {
        let (rw, bs, qd, threads) = sweep_shape(cfg.dbms, l.role);
        for (axis, fixed_qd) in [(qd, 1), (threads, 4)] {
            let mut axis = crate::sweep::parse_axis(axis).map_err(anyhow::Error::msg)?;
            if axis.param == crate::sweep::Param::Threads {
                c.notes.extend(fit_threads_axis(
                    &mut axis,
                    cores,
                    cfg.dbms.role_name(l.role),
                ));
            }
            plans.push((l, axis, rw, bs, fixed_qd));
        }
    }
    let points: usize = plans.iter().map(|p| p.1.values.len()).sum();
    let repeat = sweep_repeats(slot, points);
    let duration = per_run(slot, points * repeat);
    let mut runs = 0;
    for (l, axis, rw, bs, fixed_qd) in plans {
        if opts.stop.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        let param = axis.param;
        let mut base = base_spec(cfg, duration);
        base.targets = vec![crate::workload::TargetSpec::new(l.target.clone(), None)];
        base.rw = rw;
        base.write_pct = if rw.is_mixed() {
            50
        } else {
            rw.default_write_pct()
        };
        base.bs = bs;
        base.qd = fixed_qd;
        base.seq_layout = crate::workload::SeqLayout::Split;
        let plan = crate::sweep::SweepPlan {
            base,
            axes: vec![axis],
            explicit: Vec::new(),
            combine: crate::sweep::Combine::Grid,
            repeat,
            max_latency_us: Some(rules::DATA_WARN_MS * 1000.0),
            use_p99: false,
            knee_threshold: crate::sweep::analysis::DEFAULT_KNEE_ELASTICITY,
            study: None,
            max_repeats: MAX_DECIDING_REPEATS,
        };
        let role = l.role;
        let mut seen = Vec::new();
        let res = crate::sweep::run(&plan, opts, |_, _, r| {
            c.stall(role, &format!("sweep {}", r.config.describe()), r);
            if unmeasured(r) {
                return;
            }
            seen.push((
                r.warnings
                    .iter()
                    .map(|w| (w.code.clone(), w.message.clone()))
                    .collect::<Vec<_>>(),
                r.errors.count,
                r.interrupted,
                r.cpu.clone(),
            ));
        })?;
        runs += c.fold_sweep_runs(role, seen);
        if res.points.is_empty() {
            // Stopped before its first point was measured.
            continue;
        }
        c.sweeps.push(RoleSweep {
            role,
            workload: res.base.describe(),
            param,
            result: res,
        });
    }
    Ok((
        runs,
        format!(
            "{} sweeps, {points} points x {repeat} repetitions of {}",
            c.sweeps.len(),
            crate::units::format_duration_arg(duration)
        ),
    ))
}

pub(super) fn stage_profiles(
    cfg: &QualifyConfig,
    locs: &[Location],
    slot: Duration,
    opts: &RunOptions,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let list = planned_profiles(cfg, locs)?;
    c.notes
        .extend(list.iter().flat_map(|p| p.load_notes.iter().cloned()));
    let count = list.len();
    let phases: usize = list.iter().map(|p| p.profile.phases().len()).sum();
    let duration = per_run(slot, phases);
    let mut runs = 0;
    for PlannedProfile {
        profile: p,
        roles,
        given,
        ..
    } in list
    {
        if opts.stop.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        let name = p.name.clone();
        let paths: Vec<PathBuf> = roles
            .iter()
            .map(|r| {
                locs.iter()
                    .find(|l| l.role == *r)
                    .map(|l| l.target.clone())
                    .expect("planned_profiles only names present roles")
            })
            .collect();
        let names = p.target_names();
        let base = profile_base(cfg, &p, duration);
        let mut plan = crate::profile::plan(
            p,
            &crate::profile::RunOverrides {
                paths,
                base,
                ..Default::default()
            },
        )?;
        place_targets(&mut plan, &names, &roles, locs, &mut c.notes);
        let r = crate::profile::run(&plan, opts)?;
        c.interrupted |= r.interrupted;
        for o in r.results.iter().filter(|o| !unmeasured(&o.result)) {
            let role = locs
                .iter()
                .find(|l| Some(&l.target) == o.result.config.targets.first().map(|t| &t.path))
                .map_or(o.role, |l| l.role);
            let what = format!("{name} {}", o.name);
            c.run(role, &what, &o.result);
            c.profiles.push(ProfileMeasure {
                profile: name.clone(),
                measure: Measure::of(&what, role, &o.result),
                // SQL Server's guideline tables' words; the other databases
                // are judged by their rules alone.
                tables: if cfg.dbms.guidance() == crate::dbms::Guidance::RulesTable {
                    crate::verdict::text_lines(&o.verdicts)
                } else {
                    Vec::new()
                },
                // The database's own deep-queue workloads; a user's profile
                // is judged on its latency like any other.
                deep_queue: given.is_none() && is_deep_queue(&name, &o.name),
            });
            runs += 1;
        }
    }
    Ok((
        runs,
        format!(
            "{count} profiles, {phases} phases of {}",
            crate::units::format_duration_arg(duration)
        ),
    ))
}

/// Targets sharing a location (InnoDB's redo and binary log on the log's)
/// each get a slice of its file or device; a file that grows must be the
/// workload's own, so on a slice or a device it is written in place.
fn place_targets(
    plan: &mut crate::profile::Plan,
    names: &[String],
    roles: &[Role],
    locs: &[Location],
    notes: &mut Vec<String>,
) {
    let shares = slices(roles);
    for w in &mut plan.workloads {
        let Some(i) = names.iter().position(|n| *n == w.target) else {
            continue;
        };
        let loc = locs.iter().find(|l| Some(&l.role) == roles.get(i));
        let size = loc.map_or(0, |l| l.size);
        let slice = shares.get(i).and_then(|s| slice_region(size, *s));
        if let Some((offset, length)) = slice {
            for t in &mut w.spec.targets {
                t.offset = offset;
                t.length = Some(length);
            }
        }
        if w.spec.fill == FillMode::Grow && (slice.is_some() || loc.is_some_and(|l| l.device)) {
            w.spec.fill = FillMode::Random;
            notes.push(format!(
                "{} {}: written in place, not grown (fill = \"grow\"): it shares its test file or device with another workload, and emptying it would empty theirs",
                plan.profile.name, w.name
            ));
        }
    }
}

pub(super) fn stage_sim(
    cfg: &QualifyConfig,
    locs: &[Location],
    slot: Duration,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let loc = |r: Role| {
        locs.iter()
            .find(|l| l.role == r)
            .expect("data and log are bound")
    };
    let (data, log) = (loc(Role::Data), loc(Role::Log));
    // The fixed part of a cycle (initial update, checkpoint, full audit) is
    // about three passes over the data file in pages: sized at the speed of
    // the random 4 KiB writes measured here, so it takes a fifth of the slot.
    let speed = c
        .quick
        .iter()
        .filter(|m| m.role == Role::Data && m.corner() == Some(CornerId::RandWrite4KQd32))
        .map(|m| m.mib_per_sec)
        .fold(f64::INFINITY, f64::min);
    let seq = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        50.0
    };
    let mut data_mb = ((slot.as_secs_f64() * 0.2 * seq / 3.0) as u64).clamp(8, 1024);
    let log_mb = (data_mb / 4).clamp(4, 50);
    let file = |l: &Location, name: &str| {
        if l.device {
            l.target.clone()
        } else {
            l.given.join(name)
        }
    };
    let mut files = crate::sim::config::default_files(Path::new(""), Some(data_mb));
    files[0].name = file(data, "iosim-qualify-sim.mdx");
    files[1].name = file(log, "iosim-qualify-sim.ldx");
    files[1].initial_mb = log_mb;
    files[1].max_mb = log_mb;
    for (f, l) in files.iter_mut().zip([data, log]) {
        if l.device {
            // A device has a fixed size: no growth, no shrink.
            let dev = std::fs::File::open(&l.target)
                .and_then(|f| crate::target::device_size(&f))
                .unwrap_or(0)
                >> 20;
            f.initial_mb = f.initial_mb.min(dev.max(1));
            f.max_mb = f.initial_mb;
            f.increment_mb = 0;
            f.shrinkable = false;
        }
    }
    data_mb = files[0].initial_mb;
    let err_dir = if data.device {
        std::env::temp_dir()
    } else {
        data.given.clone()
    };
    let error_file = err_dir.join(format!("iosim-qualify-sim-{}.jsonl", std::process::id()));
    let fixed = 3.0 * (data_mb + log_mb) as f64 / seq;
    let timed = Duration::from_secs_f64((slot.as_secs_f64() * 0.85 - fixed).max(1.0));
    let mut sc = crate::sim::config::SimConfig {
        files,
        error_file: error_file.clone(),
        test_cycles: 1,
        test_cycle_duration: timed,
        delete_files_at_shutdown: true,
        engine: match cfg.engine {
            EngineKind::Sync => EngineKind::Sync,
            _ => EngineKind::native(),
        },
        ..crate::sim::config::SimConfig::default()
    };
    sc.max_memory_mb = sc.max_memory_mb.min(1024);
    sc.finalize()?;
    let r = crate::sim::run(
        sc,
        &crate::sim::RunOpts {
            stop: stop.clone(),
            allow_destroy: cfg.allow_destroy,
            faults: Vec::new(),
            quiet: true,
            long_io: Duration::from_secs(15),
            max_dumps: crate::sim::DEFAULT_MAX_DUMPS,
        },
    )?;
    let log_file = file(log, "iosim-qualify-sim.ldx");
    Ok((1, record_sim(cfg, &r, &log_file, &error_file, c)))
}

/// What the simulator's pass gives the qualification: its summary, the
/// files it left, its slowest I/O for the stage; the stage's summary line.
fn record_sim(
    cfg: &QualifyConfig,
    r: &crate::sim::summary::SimResult,
    log_file: &Path,
    error_file: &Path,
    c: &mut Collected,
) -> String {
    let role_of = |path: &str| {
        if Path::new(path) == log_file {
            Role::Log
        } else {
            Role::Data
        }
    };
    let mut per_file_errors: Vec<(String, u64)> = Vec::new();
    for e in &r.errors.first {
        match per_file_errors.iter_mut().find(|x| x.0 == e.file) {
            Some(x) => x.1 += 1,
            None => per_file_errors.push((e.file.clone(), 1)),
        }
    }
    let files: Vec<SimFileSummary> = r
        .files
        .iter()
        .map(|f| SimFileSummary {
            path: f.path.clone(),
            kind: f.kind.clone(),
            role: role_of(&f.path),
            iops: f.stats.total.iops,
            read_mean_us: f.stats.read.latency_us.mean,
            write_mean_us: f.stats.write.latency_us.mean,
            errors: per_file_errors
                .iter()
                .find(|x| x.0 == f.path)
                .map_or(0, |x| x.1),
            max_us: f.stats.total.latency_us.max,
            ios_over_1s: f.slow_ios.over_1s,
            ios_over_15s: f.slow_ios.over_15s,
        })
        .collect();
    for f in r.files.iter().filter(|f| Path::new(&f.path).is_file()) {
        // DeleteFilesAtShutdown failed (the simulator warned why).
        let why = r
            .warnings
            .iter()
            .find(|w| w.contains(&f.path))
            .map_or_else(|| "not deleted".to_string(), |w| w.clone());
        c.left
            .push(format!("{} (the simulator's file: {why})", f.path));
    }
    let error_log = if r.errors.count > 0 {
        c.left.push(format!(
            "{} (the simulator's error log)",
            error_file.display()
        ));
        Some(error_file.display().to_string())
    } else {
        let _ = std::fs::remove_file(error_file);
        None
    };
    c.interrupted |= r.interrupted;
    let summary = format!(
        "{}{} cycle(s), {} pages and {} log blocks verified, {} errors",
        if cfg.dbms.simulated() {
            ""
        } else {
            "page integrity with SQL Server's I/O: "
        },
        r.cycles,
        r.pages_verified,
        r.log_blocks_verified,
        r.errors.count
    );
    for f in &files {
        if f.max_us > c.stage_longest.0 {
            c.stage_longest = (f.max_us, format!("simulator {}", f.path));
        }
    }
    c.sim = Some(SimSummary {
        duration_s: r.duration_s,
        cycles: r.cycles,
        pages_verified: r.pages_verified,
        log_blocks_verified: r.log_blocks_verified,
        errors: r.errors.count,
        errors_by_class: r
            .errors
            .by_class
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (k.clone(), *n))
            .collect(),
        files,
        error_log,
        interrupted: r.interrupted,
        long_io_warnings: r.long_io_warnings,
    });
    summary
}

/// Each phase of the noisy-neighbour stage (alone, then beside the neighbour).
pub const NEIGHBOUR_PHASE: Duration = Duration::from_secs(5);

/// The noisy-neighbour stage (`--neighbour`): on each distinct location,
/// 8 KiB random reads at QD 1 (a page read's latency) alone, then beside
/// the background workload, through the `run --neighbour` study.
pub(super) fn stage_neighbour(
    cfg: &QualifyConfig,
    locs: &[&Location],
    n: &crate::neighbour::NeighbourSpec,
    opts: &RunOptions,
    c: &mut Collected,
) -> anyhow::Result<(usize, String)> {
    let mut runs = 0;
    for l in locs {
        if opts.stop.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        let fg = crate::workload::WorkloadSpec {
            targets: vec![crate::workload::TargetSpec::new(
                l.target.clone(),
                Some(l.size),
            )],
            rw: crate::workload::RwMode::Randread,
            bs: 8192,
            qd: 1,
            ..base_spec(cfg, NEIGHBOUR_PHASE)
        };
        let j = crate::neighbour::run(&fg, n, opts)?;
        let what = format!("neighbour {}", n.text);
        c.run(l.role, &what, &j.result);
        if let Some(report) = j.result.neighbour.clone() {
            c.neighbours.push(super::result::RoleNeighbour {
                role: l.role,
                report,
            });
        }
        runs += 2;
    }
    Ok((
        runs,
        format!(
            "8 KiB random reads at QD 1 alone and beside {} on {} location(s), {} each",
            n.text,
            locs.len(),
            crate::units::format_duration_arg(NEIGHBOUR_PHASE)
        ),
    ))
}

pub(super) fn stage_checks(locs: &[Location], c: &mut Collected) -> (usize, String) {
    // The runner checked every run against the device counters, CPU use and
    // the file's content; this adds the content of each test target now.
    for l in locs {
        if l.device {
            continue;
        }
        if crate::sysmon::content::file_is_sparse(&l.target).unwrap_or(false) {
            c.warnings.push((
                l.role,
                WarningCode::SparseTestFile,
                format!(
                    "{} has holes: reads of holes never reach the device",
                    l.target.display()
                ),
            ));
        }
        if crate::sysmon::content::looks_zero_filled(&l.target, 16).unwrap_or(false) {
            c.warnings.push((
                l.role,
                WarningCode::ZeroFilledTestFile,
                format!("{} reads back as zeros: storage that compresses or deduplicates serves it without real I/O", l.target.display()),
            ));
        }
    }
    let f = findings(&c.warnings);
    let bad = f.iter().filter(|x| x.untrusted).count();
    (
        0,
        format!(
            "{} finding(s) over {} run warnings; {bad} make the numbers untrustworthy",
            f.len(),
            c.warnings.len()
        ),
    )
}

/// The settings every workload of profile `p` starts from: `--db-cache`
/// goes to the profiles that have a workload whose reads a cache serves.
fn profile_base(
    cfg: &QualifyConfig,
    p: &crate::profile::Profile,
    duration: Duration,
) -> crate::workload::WorkloadSpec {
    let mut base = base_spec(cfg, duration);
    if p.workloads.iter().any(|w| w.db_cache.is_some()) {
        base.shape.db_cache = cfg.db_cache;
    }
    base
}
