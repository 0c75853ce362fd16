//! `iosim qualify`: the whole qualification of a database's storage as one
//! command, within a time budget, ending with one verdict per role and
//! overall (see docs/qualify-storage.md).
//!
//! Every stage calls the library's existing pieces: the quick corners
//! ([`crate::quick`]), queue-depth and thread sweeps with repetitions
//! ([`crate::sweep`]), the database profiles ([`crate::profile`]), the
//! simulator with page verification ([`crate::sim`]) and the self-checks the
//! runner performs on every run ([`crate::sysmon::check`]). This module only
//! binds locations to roles, splits the budget, keeps the figures the rules
//! need ([`rules`]) and renders the result ([`render`]: text; [`crate::html::qualify`]: the HTML
//! page, in its own report and in `iosim report`), with the system under test ([`system`]) and the sources the rules
//! cite ([`references`]) in both.
//!
//! By stage: `databases` says what each database (`--dbms`) runs and
//! assumes, `plan` binds the locations and shapes the stages' runs,
//! `budget` splits the time, `measure` runs the stages (`stages`) in order,
//! `judge` turns what they measured into the facts the rules judge, and
//! `result` holds it all.

pub mod compare;
pub mod csv;
pub mod recommend;
pub mod references;
pub mod render;
pub mod rules;
pub mod system;

mod budget;
pub mod databases;
mod facts;
mod judge;
mod measure;
mod plan;
mod reason;
mod result;
mod sources;
mod stage_id;
mod stages;
mod summary;
mod thresholds;

use crate::runner::RunOptions;
pub use budget::{
    budget_for_repeats, budget_lines, minimum_budget, per_run, planned_runs, preliminary_note,
    slot_for, sweep_repeats, Budget, MEANINGFUL_RUN, MIN_REPEAT, MIN_RUN, STAGES, SWEEP_RUN_TARGET,
};
pub use databases::{sweep_shape, Setting};
pub use judge::{attach_cpu, facts, findings, knee_line, show_stat, UNTRUSTED_CODES};
use measure::qualify;
pub use plan::{
    fit_threads_axis, is_deep_queue, locations, planned_profiles, shares_device, slice_region,
    slices, Location, PlannedProfile, QualifyConfig, RoleArg, MEASURE_CACHE, QUICK_CACHE,
    SLICE_ALIGN, SWEEP_THREADS_PER_CORE,
};
pub use stage_id::StageId;

pub use result::{
    BaselineComparison, BudgetAccount, Change, ChangeMetric, CheckFinding, FlushMeasure, Measure,
    MeasureKind, ProfileMeasure, QualifyResult, RoleStalls, RoleSweep, SimFileSummary, SimSummary,
    StageRecord,
};

/// Runs the qualification. `baseline` is compared at the end (resolved by the caller before).
/// A failure removes the test files it created (unless `--keep-files`), and says so.
pub fn run(cfg: &QualifyConfig, opts: &RunOptions) -> anyhow::Result<QualifyResult> {
    let mut made = Vec::new();
    qualify(cfg, opts, &mut made).map_err(|mut e| {
        for path in made.iter().filter(|_| !cfg.keep_files) {
            if crate::targetlock::remove_file(path).is_ok() {
                e = crate::target::with_outcome(e, crate::target::FileFate::Removed, path);
            }
        }
        e
    })
}
