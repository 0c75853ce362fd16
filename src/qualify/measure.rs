//! The qualification from start to end: the stages in order within the budget,
//! then the verdicts, as one [`QualifyResult`].
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::budget::{
    minimum_budget, neighbour_overrun, planned_runs, preliminary_note, setup_overrun,
    stage_overrun, Budget, Deadline, StageTime, STAGES,
};
use super::judge::{attach_cpu, facts, findings};
use super::plan::{largest_block, locations, stage_caches, target_size, Location, QualifyConfig};
use super::result::{BudgetAccount, Overrun, QualifyResult, StageRecord};
use super::rules::Verdict;
use super::stage_id::StageId;
use super::stages::{
    stage_checks, stage_neighbour, stage_profiles, stage_quick, stage_sim, stage_sweeps, Collected,
};
use super::system;
use super::{databases, references, rules};
use crate::runner::RunOptions;
use crate::verdict::Role;
use crate::workload::FillMode;

struct Progress {
    on: bool,
    total: Duration,
}

impl Progress {
    /// The budget's account, at the end.
    fn account(&self, account: &BudgetAccount) {
        if self.on {
            for l in super::budget::budget_lines(account) {
                crate::say!("[qualify] {}", l.trim_start());
            }
        }
    }

    fn line(&self, budget: &Budget, msg: &str) {
        if self.on {
            crate::say!(
                "[qualify {:>6.1} s | {:>6.1} s left of {}] {msg}",
                budget.elapsed().as_secs_f64(),
                budget.left().as_secs_f64(),
                crate::units::format_duration_arg(self.total)
            );
        }
    }
}

/// [`run`]; the test files it creates go to `made`.
pub(super) fn qualify(
    cfg: &QualifyConfig,
    opts: &RunOptions,
    made: &mut Vec<PathBuf>,
) -> anyhow::Result<QualifyResult> {
    let mut locs = locations(cfg)?;
    check_size(cfg, &locs)?;
    let system = system::gather(&locs, cfg.size, cfg.engine, stage_caches(cfg, &locs)?);
    let quiet = RunOptions {
        progress: false,
        ..opts.clone()
    };
    let progress = Progress {
        on: cfg.progress,
        total: cfg.time,
    };
    let mut c = Collected::default();
    let minimum = minimum_budget(&planned_runs(cfg, &locs)?);
    let preliminary = cfg.time < minimum;
    if preliminary && cfg.progress {
        crate::say!("[qualify] {}", preliminary_note(cfg.time, minimum));
    }

    // The budget starts now: creating the test files is paid from it.
    let mut budget = Budget::new(cfg.time);
    let mut acct = Account::default();
    let setup = budgeted_set_up(cfg, opts, &mut locs, made, &mut budget, &mut acct)?;
    progress.line(
        &budget,
        &format!(
            "set-up took {:.1} s (test files), paid from the budget",
            setup.as_secs_f64()
        ),
    );
    let t_measure = Instant::now();
    let mut stages = run_stages(
        cfg,
        &locs,
        &Run {
            user: opts,
            quiet: &quiet,
            progress: &progress,
        },
        &mut budget,
        &mut c,
        &mut acct,
    )?;
    if let Some(n) = cfg.neighbour.as_ref().filter(|_| !c.interrupted) {
        let record = run_neighbour(cfg, &locs, n, &quiet, &progress, &budget, &mut c)?;
        acct.overruns
            .push(neighbour_overrun(Duration::from_secs_f64(record.elapsed_s)));
        stages.push(record);
    }
    let measure_s = t_measure.elapsed().as_secs_f64();

    // Clean up the test files this run created.
    clean_up(cfg, &locs, &mut c);
    let account = acct.close(cfg.time, budget.elapsed());
    progress.account(&account);

    let db_notes = database_notes(cfg, &c);
    let errors = std::mem::take(&mut c.errors);
    let mut res = QualifyResult {
        overall: Verdict::Fit,
        rules: cfg.rules,
        dbms: cfg.dbms,
        settings: databases::settings(cfg.dbms),
        trustworthy: true,
        verdicts: Vec::new(),
        recommendations: Vec::new(),
        time_budget_s: cfg.time.as_secs_f64(),
        setup_s: setup.as_secs_f64(),
        measure_s,
        locations: locs,
        system,
        stages,
        neighbours: c.neighbours,
        quick: c.quick,
        sweeps: c.sweeps,
        profiles: c.profiles,
        sim: c.sim,
        checks: findings(&c.warnings),
        stalls: c.stalls,
        baseline: None,
        notes: c.notes,
        left_on_disk: c.left,
        interrupted: c.interrupted,
        references: Vec::new(),
        preliminary,
        minimum_budget_s: minimum.as_secs_f64(),
        test_file_size: cfg.size,
        cache_size: cfg.cache_size,
        host_memory: crate::sysmon::host::host_info().mem_total_bytes,
        budget: Some(account),
    };
    res.notes.extend(db_notes);
    attach_cpu(&mut res.checks, &c.cpu);
    judge(&mut res, &errors, minimum, cfg.time);
    Ok(res)
}

/// The set-up, paid from `budget` (its overrun, if any, into `acct`);
/// returns how long it took.
fn budgeted_set_up(
    cfg: &QualifyConfig,
    opts: &RunOptions,
    locs: &mut [Location],
    made: &mut Vec<PathBuf>,
    budget: &mut Budget,
    acct: &mut Account,
) -> anyhow::Result<Duration> {
    let t0 = Instant::now();
    let created = set_up(cfg, opts, locs, made)?;
    let took = t0.elapsed();
    let over = budget.after_setup();
    acct.overruns
        .extend(setup_overrun(cfg.time, took, over, created));
    for l in locs.iter_mut() {
        l.size = target_size(l);
    }
    Ok(took)
}

/// The verdicts, recommendations and references of a measured qualification.
fn judge(res: &mut QualifyResult, errors: &[(Role, u64)], minimum: Duration, time: Duration) {
    let facts = facts(res, errors);
    let (verdicts, overall, trustworthy) = rules::judge(&facts);
    res.verdicts = verdicts;
    res.overall = overall;
    res.trustworthy = trustworthy;
    res.recommendations = super::recommend::recommendations(&facts);
    res.references = references::collect(res);
    if res.preliminary && !res.recommendations.is_empty() {
        let arg = crate::units::format_duration_arg;
        res.recommendations.insert(
            0,
            format!(
                "qualify again with --time {} or more before acting on the recommendations below: they come from a PRELIMINARY run of {}",
                arg(minimum),
                arg(time)
            ),
        );
    }
    if res.interrupted {
        res.notes
            .push("interrupted: the verdicts judge only what was measured before Ctrl-C".into());
    }
}

/// Each test file qualify creates in a directory must hold its largest I/O.
fn check_size(cfg: &QualifyConfig, locs: &[Location]) -> anyhow::Result<()> {
    if locs.iter().any(|l| !l.device) {
        let need = largest_block(cfg, locs)?;
        if cfg.size < need {
            let arg = crate::units::format_size_arg;
            return Err(crate::Error::BadWorkload(format!(
                "--size {}: each test file qualify creates in a directory must hold its largest I/O, or a slice for each workload that shares it ({}): give --size {} or more (the default is 1G)",
                arg(cfg.size),
                arg(need),
                arg(need)
            ))
            .into());
        }
    }
    Ok(())
}

/// The noisy-neighbour stage, after the budgeted ones with its own fixed
/// time (docs/qualify-storage.md): outside `--time`, and the budget's
/// account says so.
fn run_neighbour(
    cfg: &QualifyConfig,
    locs: &[Location],
    n: &crate::neighbour::NeighbourSpec,
    quiet: &RunOptions,
    progress: &Progress,
    budget: &Budget,
    c: &mut Collected,
) -> anyhow::Result<StageRecord> {
    let distinct = distinct(locs);
    progress.line(
        budget,
        &format!(
            "stage {}: started ({}; outside the budget)",
            StageId::Neighbour,
            n.text
        ),
    );
    let t0 = Instant::now();
    let (runs, summary) = stage_neighbour(cfg, &distinct, n, quiet, c)?;
    let elapsed = t0.elapsed().as_secs_f64();
    progress.line(
        budget,
        &format!(
            "stage {}: done in {elapsed:.1} s: {summary}",
            StageId::Neighbour
        ),
    );
    Ok(StageRecord {
        name: StageId::Neighbour,
        budget_s: elapsed,
        elapsed_s: elapsed,
        runs,
        summary,
    })
}

/// The locations with distinct targets (data and log in one directory share one).
fn distinct(locs: &[Location]) -> Vec<&Location> {
    let mut v: Vec<&Location> = Vec::new();
    for l in locs {
        if !v.iter().any(|x| x.target == l.target) {
            v.push(l);
        }
    }
    v
}

/// The budget's account as the stages go: overruns, skipped stages, the
/// slowest I/O waited for.
#[derive(Default)]
struct Account {
    overruns: Vec<Overrun>,
    skipped: Vec<StageId>,
    longest: (f64, String),
}

impl Account {
    /// The account of a qualification that took `wall` of `planned`.
    fn close(self, planned: Duration, wall: Duration) -> BudgetAccount {
        BudgetAccount {
            planned_s: planned.as_secs_f64(),
            wall_s: wall.as_secs_f64(),
            overrun_s: wall.saturating_sub(planned).as_secs_f64(),
            longest_stall_s: self.longest.0 / 1e6,
            longest_stall_in: self.longest.1,
            skipped: self.skipped,
            overruns: self.overruns,
        }
    }
}

/// What the report says of the database qualified for: where its latency
/// limits come from, the simulator's I/O, workloads built from documentation
/// only, and the page-cache findings of its buffered workloads.
fn database_notes(cfg: &QualifyConfig, c: &Collected) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(limits) = databases::latency_limits(cfg.dbms) {
        out.push(format!("latency limits for {}: {limits}", cfg.dbms.title()));
    }
    if cfg.profiles.is_empty() {
        out.extend(databases::documented_only_note(cfg.dbms));
    } else {
        out.push(format!(
            "the profiles stage ran your own workload ({}) instead of {}'s profiles, each target on the location of its workloads' role, judged by {}'s rules",
            cfg.profiles.join(", "),
            cfg.dbms.title(),
            cfg.dbms.title()
        ));
    }
    out.extend(databases::simulator_note(cfg.dbms));
    if c.page_cache_by_design > 0 {
        out.push(format!(
            "{} self-check finding(s) said the page cache answered {}'s buffered workloads, as it answers the database itself: they do not make the numbers untrustworthy, and those workloads' read and write latencies are shown, not judged (their flushes, which reach the storage, are)",
            c.page_cache_by_design,
            cfg.dbms.title()
        ));
    }
    out
}

/// Creates the test files in the directories (paid from the budget); a
/// file of the same name iosim did not create is refused. Returns the
/// bytes written.
fn set_up(
    cfg: &QualifyConfig,
    opts: &RunOptions,
    locs: &mut [Location],
    made: &mut Vec<PathBuf>,
) -> anyhow::Result<u64> {
    let mut written = 0;
    for l in locs.iter_mut().filter(|l| !l.device) {
        if l.target.exists() {
            if !crate::target::is_iosim_file(&l.target) {
                return Err(crate::Error::WouldDestroy(
                    l.target.clone(),
                    "a file of that name exists and iosim did not create it: remove or rename it"
                        .into(),
                )
                .into());
            }
            continue;
        }
        if cfg.progress {
            crate::say!(
                "[qualify set-up] creating {} ({})",
                l.target.display(),
                crate::units::format_size(cfg.size)
            );
        }
        crate::target::create_test_file(
            &l.target,
            cfg.size,
            FillMode::Random,
            crate::target::PrepareOptions {
                progress: opts.progress,
                stop: Some(&opts.stop),
            },
        )?;
        made.push(l.target.clone());
        l.created = true;
        written += cfg.size;
    }
    Ok(written)
}

/// A stage's summary when it started with nothing left of the budget.
const SKIPPED: &str = "skipped: nothing was left of the budget";
/// Ends a stage's summary when its deadline stopped it.
const CUT: &str = "stopped at its deadline";

/// The options the stages run under: the user's (Ctrl-C), the quiet
/// copy each stage's runs start from, the progress lines.
struct Run<'a> {
    user: &'a RunOptions,
    quiet: &'a RunOptions,
    progress: &'a Progress,
}

/// Runs the stages in order, each in its share of what is left of the
/// budget and stopped at its deadline; a stage with nothing left is
/// skipped. Each stage's overrun goes to `acct` with its cause.
fn run_stages(
    cfg: &QualifyConfig,
    locs: &[Location],
    run: &Run,
    budget: &mut Budget,
    c: &mut Collected,
    acct: &mut Account,
) -> anyhow::Result<Vec<StageRecord>> {
    let mut stages = Vec::new();
    let distinct = distinct(locs);
    let user = &run.user.stop;
    for (i, &(name, share)) in STAGES.iter().enumerate() {
        let slot = budget.allot(share);
        if user.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        let head = format!("stage {}/{} {name}", i + 1, STAGES.len());
        if slot.is_zero() {
            run.progress.line(
                budget,
                &format!("{head}: skipped, nothing is left of the budget"),
            );
            acct.skipped.push(name);
            stages.push(StageRecord {
                name,
                budget_s: 0.0,
                elapsed_s: 0.0,
                runs: 0,
                summary: SKIPPED.into(),
            });
            continue;
        }
        run.progress.line(
            budget,
            &format!("{head}: started ({:.1} s)", slot.as_secs_f64()),
        );
        let deadline = Deadline::start(user, slot)?;
        let opts = RunOptions {
            stop: deadline.flag().clone(),
            ..run.quiet.clone()
        };
        c.stage_longest = (0.0, String::new());
        let t0 = Instant::now();
        let (runs, summary) = match name {
            StageId::QuickCorners => stage_quick(cfg, &distinct, slot, &opts, c)?,
            StageId::Sweeps => stage_sweeps(cfg, locs, slot, &opts, c)?,
            StageId::Profiles => stage_profiles(cfg, locs, slot, &opts, c)?,
            StageId::Simulator => stage_sim(cfg, locs, slot, deadline.flag(), c)?,
            // STAGES holds the budgeted stages: the set-up and the
            // neighbour stage run outside this loop.
            StageId::SelfChecks | StageId::SetUp | StageId::Neighbour => stage_checks(locs, c),
        };
        let took = t0.elapsed();
        let cut = deadline.cut();
        drop(deadline);
        if !user.load(Ordering::Relaxed) {
            // The deadline stopped its runs, not the user.
            c.interrupted = false;
        }
        let summary = if cut {
            format!("{summary}; {CUT}")
        } else {
            summary
        };
        run.progress.line(
            budget,
            &format!("{head}: done in {:.1} s: {summary}", took.as_secs_f64()),
        );
        note_stage(name, slot, took, c, acct);
        stages.push(StageRecord {
            name,
            budget_s: slot.as_secs_f64(),
            elapsed_s: took.as_secs_f64(),
            runs,
            summary,
        });
    }
    Ok(stages)
}

/// A stage's slowest I/O and overrun into the budget's account.
fn note_stage(name: StageId, slot: Duration, took: Duration, c: &Collected, acct: &mut Account) {
    let (us, what) = &c.stage_longest;
    if *us > acct.longest.0 {
        acct.longest = (*us, what.clone());
    }
    acct.overruns.extend(stage_overrun(&StageTime {
        stage: name,
        planned: slot,
        took,
        longest_io: (*us > 0.0).then_some((*us / 1e6, what.as_str())),
    }));
}

/// Removes the test files this run created (unless `--keep-files`) and
/// notes the ones left on disk.
fn clean_up(cfg: &QualifyConfig, locs: &[Location], c: &mut Collected) {
    for l in locs {
        if l.device || !l.target.exists() {
            continue;
        }
        if cfg.keep_files || !l.created {
            c.left.push(format!(
                "{} ({}, kept{})",
                l.target.display(),
                crate::units::format_size(std::fs::metadata(&l.target).map_or(0, |m| m.len())),
                if l.created {
                    ": --keep-files"
                } else {
                    ": it existed before"
                }
            ));
        } else if let Err(e) = crate::targetlock::remove_file(&l.target) {
            c.left
                .push(format!("{} (could not remove it: {e})", l.target.display()));
        }
    }
}
