//! The qualification from start to end: the stages in order within the budget,
//! then the verdicts, as one [`QualifyResult`].
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::budget::{minimum_budget, planned_runs, preliminary_note, Budget, STAGES};
use super::judge::{attach_cpu, facts, findings};
use super::plan::{largest_block, locations, stage_caches, target_size, Location, QualifyConfig};
use super::result::{QualifyResult, StageRecord};
use super::rules::Verdict;
use super::stages::{
    stage_checks, stage_neighbour, stage_profiles, stage_quick, stage_sim, stage_sweeps, Collected,
};
use super::system;
use super::{databases, references, rules};
use crate::runner::RunOptions;
use crate::workload::FillMode;

struct Progress {
    on: bool,
    total: Duration,
}

impl Progress {
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
    if locs.iter().any(|l| !l.device) {
        let need = largest_block(cfg.dbms, &locs)?;
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
    let system = system::gather(&locs, cfg.size, cfg.engine, stage_caches(cfg.dbms, &locs)?);
    let quiet = RunOptions {
        progress: false,
        ..opts.clone()
    };
    let progress = Progress {
        on: cfg.progress,
        total: cfg.time,
    };
    let mut c = Collected::default();
    let minimum = minimum_budget(&planned_runs(cfg.dbms, &locs)?);
    let preliminary = cfg.time < minimum;
    if preliminary && cfg.progress {
        crate::say!("[qualify] {}", preliminary_note(cfg.time, minimum));
    }

    // Set-up: the test files, before the budget starts.
    let t_setup = Instant::now();
    set_up(cfg, opts, &mut locs, made)?;
    let setup_s = t_setup.elapsed().as_secs_f64();
    for l in locs.iter_mut() {
        l.size = target_size(l);
    }
    let mut budget = Budget::new(cfg.time);
    progress.line(
        &budget,
        &format!("set-up took {setup_s:.1} s (test files); the budget starts now"),
    );

    let mut stages = run_stages(cfg, opts, &locs, &quiet, &progress, &mut budget, &mut c)?;
    if let Some(n) = cfg.neighbour.as_ref().filter(|_| !c.interrupted) {
        // After the budgeted stages, with its own fixed time (docs/qualify-storage.md).
        let mut distinct: Vec<&Location> = Vec::new();
        for l in &locs {
            if !distinct.iter().any(|x| x.target == l.target) {
                distinct.push(l);
            }
        }
        progress.line(&budget, &format!("stage neighbour: started ({})", n.text));
        let t0 = Instant::now();
        let (runs, summary) = stage_neighbour(cfg, &distinct, n, &quiet, &mut c)?;
        let elapsed = t0.elapsed().as_secs_f64();
        progress.line(
            &budget,
            &format!("stage neighbour: done in {elapsed:.1} s: {summary}"),
        );
        stages.push(StageRecord {
            name: "neighbour".into(),
            budget_s: elapsed,
            elapsed_s: elapsed,
            runs,
            summary,
        });
    }
    let measure_s = budget.elapsed().as_secs_f64();

    // Clean up the test files this run created.
    clean_up(cfg, &locs, &mut c);

    let db_notes = database_notes(cfg, &c);
    let mut res = QualifyResult {
        overall: Verdict::Fit,
        rules: cfg.rules,
        dbms: cfg.dbms,
        settings: databases::settings(cfg.dbms),
        trustworthy: true,
        verdicts: Vec::new(),
        recommendations: Vec::new(),
        time_budget_s: cfg.time.as_secs_f64(),
        setup_s,
        measure_s,
        locations: locs,
        system,
        stages,
        neighbours: c.neighbours,
        quick: c.quick,
        sweeps: c.sweeps,
        profiles: c.profiles,
        sim: c.sim,
        checks: Vec::new(),
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
    };
    res.notes.extend(db_notes);
    res.checks = findings(&c.warnings);
    attach_cpu(&mut res.checks, &c.cpu);
    let facts = facts(&res, &c.errors);
    let (verdicts, overall, trustworthy) = rules::judge(&facts);
    res.verdicts = verdicts;
    res.overall = overall;
    res.trustworthy = trustworthy;
    res.recommendations = rules::recommendations(&facts);
    res.references = references::collect(&res);
    if preliminary && !res.recommendations.is_empty() {
        let arg = crate::units::format_duration_arg;
        res.recommendations.insert(
            0,
            format!(
                "qualify again with --time {} or more before acting on the recommendations below: they come from a PRELIMINARY run of {}",
                arg(minimum),
                arg(cfg.time)
            ),
        );
    }
    if res.interrupted {
        res.notes
            .push("interrupted: the verdicts judge only what was measured before Ctrl-C".into());
    }
    Ok(res)
}

/// What the report says of the database qualified for: where its latency
/// limits come from, the simulator's I/O, workloads built from documentation
/// only, and the page-cache findings of its buffered workloads.
fn database_notes(cfg: &QualifyConfig, c: &Collected) -> Vec<String> {
    let mut out = Vec::new();
    if cfg.dbms != crate::dbms::Dbms::Sqlserver {
        out.push(format!(
            "latency limits for {}: {}",
            cfg.dbms.title(),
            databases::latency_guidance(cfg.dbms)
        ));
    }
    out.extend(databases::documented_only_note(cfg.dbms));
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

/// Creates the test files in the directories (before the budget starts);
/// a file of the same name iosim did not create is refused.
fn set_up(
    cfg: &QualifyConfig,
    opts: &RunOptions,
    locs: &mut [Location],
    made: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
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
    }
    Ok(())
}

/// Runs the stages in order, each in its share of what is left of the budget.
fn run_stages(
    cfg: &QualifyConfig,
    opts: &RunOptions,
    locs: &[Location],
    quiet: &RunOptions,
    progress: &Progress,
    budget: &mut Budget,
    c: &mut Collected,
) -> anyhow::Result<Vec<StageRecord>> {
    let mut stages = Vec::new();
    let distinct: Vec<&Location> = {
        let mut v: Vec<&Location> = Vec::new();
        for l in locs {
            if !v.iter().any(|x| x.target == l.target) {
                v.push(l);
            }
        }
        v
    };

    for (i, (name, share)) in STAGES.iter().enumerate() {
        let slot = budget.allot(*share);
        if opts.stop.load(Ordering::Relaxed) {
            c.interrupted = true;
            break;
        }
        progress.line(
            budget,
            &format!(
                "stage {}/{} {name}: started ({:.1} s)",
                i + 1,
                STAGES.len(),
                slot.as_secs_f64()
            ),
        );
        let t0 = Instant::now();
        let (runs, summary) = match *name {
            "quick corners" => stage_quick(cfg, &distinct, slot, quiet, c)?,
            "sweeps" => stage_sweeps(cfg, locs, slot, quiet, c)?,
            "profiles" => stage_profiles(cfg, locs, slot, quiet, c)?,
            "simulator" => stage_sim(cfg, locs, slot, &opts.stop, c)?,
            _ => stage_checks(locs, c),
        };
        let elapsed = t0.elapsed().as_secs_f64();
        progress.line(
            budget,
            &format!(
                "stage {}/{} {name}: done in {elapsed:.1} s: {summary}",
                i + 1,
                STAGES.len()
            ),
        );
        stages.push(StageRecord {
            name: name.to_string(),
            budget_s: slot.as_secs_f64(),
            elapsed_s: elapsed,
            runs,
            summary,
        });
    }
    Ok(stages)
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
