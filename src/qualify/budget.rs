//! The time budget: each stage's share, each run's length, the repetitions it buys.
use std::path::Path;
use std::time::{Duration, Instant};

use super::plan::{profile_list, sweep_shape, Location};
use crate::sweep::analysis::MAX_DECIDING_REPEATS;

/// The stages and their fixed shares of the budget.
pub const STAGES: [(&str, f64); 5] = [
    ("quick corners", 0.10),
    ("sweeps", 0.35),
    ("profiles", 0.30),
    ("simulator", 0.20),
    ("self-checks", 0.05),
];

/// Shortest measured time of one run, whatever the budget.
pub const MIN_RUN: Duration = Duration::from_millis(100);

/// Splits the budget: each stage gets its fixed share of what is left, so an
/// early stage that overran is paid for by the later ones, and the whole ends
/// within the budget (plus at most one short run per stage).
pub struct Budget {
    start: Instant,
    total: Duration,
    shares_left: f64,
}

impl Budget {
    /// A budget of `total` starting now.
    pub fn new(total: Duration) -> Budget {
        Budget {
            start: Instant::now(),
            total,
            shares_left: STAGES.iter().map(|s| s.1).sum(),
        }
    }

    /// Time used.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Time left.
    pub fn left(&self) -> Duration {
        self.total.saturating_sub(self.elapsed())
    }

    /// The next stage's time, for a stage with `share`.
    pub fn allot(&mut self, share: f64) -> Duration {
        let left = self.left();
        self.allot_from(share, left)
    }

    pub(super) fn allot_from(&mut self, share: f64, left: Duration) -> Duration {
        let d = if self.shares_left > 0.0 {
            left.mul_f64((share / self.shares_left).min(1.0))
        } else {
            Duration::ZERO
        };
        self.shares_left -= share;
        d
    }
}

/// Share of each run's slot that is measured ([`per_run`]); the rest is set-up and analysis.
const MEASURED_SHARE: f64 = 0.9;
/// Set-up and analysis kept for each run besides [`MEASURED_SHARE`], s.
const RUN_OVERHEAD_S: f64 = 0.03;

/// Measured time of each of `runs` runs sharing `slot` (some of it is set-up
/// and analysis of each run: 10% and 30 ms are kept for that).
pub fn per_run(slot: Duration, runs: usize) -> Duration {
    let each = slot.as_secs_f64() / runs.max(1) as f64;
    Duration::from_secs_f64((each * MEASURED_SHARE - RUN_OVERHEAD_S).max(0.0)).max(MIN_RUN)
}

/// The slot in which `runs` runs each measure `each`: the inverse of [`per_run`].
pub fn slot_for(each: Duration, runs: usize) -> Duration {
    Duration::from_secs_f64(runs as f64 * (each.as_secs_f64() + RUN_OVERHEAD_S) / MEASURED_SHARE)
}

/// The shortest measurement whose numbers mean something: under a second, a
/// run's start (threads, the queue filling, cold paths) is a visible part of
/// it, and what a device does every second or so (flushes, garbage
/// collection, an array destaging its cache) is not sampled.
pub const MEANINGFUL_RUN: Duration = Duration::from_secs(1);

/// The fewest repetitions of a sweep point that show its spread (a
/// confidence interval, the knee's test, `compare`'s Welch test need two).
pub const MIN_REPEAT: usize = 2;

/// The runs each measuring stage makes for these locations, with the
/// stage's share: the quick corners on each distinct target, every sweep
/// point [`MIN_REPEAT`] times, every phase of the profiles that fit the roles.
pub fn planned_runs(locs: &[Location]) -> anyhow::Result<Vec<(&'static str, f64, usize)>> {
    let mut targets: Vec<&Path> = Vec::new();
    for l in locs {
        if !targets.contains(&l.target.as_path()) {
            targets.push(&l.target);
        }
    }
    let mut points = 0;
    for l in locs {
        let (_, _, qd, threads) = sweep_shape(l.role);
        for axis in [qd, threads] {
            points += crate::sweep::parse_axis(axis)
                .map_err(anyhow::Error::msg)?
                .values
                .len();
        }
    }
    let mut phases = 0;
    for (name, _) in profile_list(locs) {
        phases += crate::profile::Profile::load(name)?.phases().len();
    }
    let share = |name: &str| STAGES.iter().find(|s| s.0 == name).map_or(0.0, |s| s.1);
    Ok(vec![
        (
            "quick corners",
            share("quick corners"),
            crate::quick::SUITE.len() * targets.len(),
        ),
        ("sweeps", share("sweeps"), points * MIN_REPEAT),
        ("profiles", share("profiles"), phases),
    ])
}

/// The least budget (whole seconds) that gives every run of
/// [`planned_runs`] [`MEANINGFUL_RUN`] of measuring, each stage within its
/// share. A qualification with less is PRELIMINARY: the simulator and the
/// self-checks are not counted (the simulator sizes its cycle to its share,
/// and `sim-missing` says when it could not complete one).
pub fn minimum_budget(planned: &[(&str, f64, usize)]) -> Duration {
    let need = planned
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|p| slot_for(MEANINGFUL_RUN, p.2).as_secs_f64() / p.1)
        .fold(0.0, f64::max);
    Duration::from_secs(need.ceil() as u64)
}

/// Why a qualification is PRELIMINARY, and what to do about it.
pub fn preliminary_note(budget: Duration, minimum: Duration) -> String {
    let arg = crate::units::format_duration_arg;
    format!(
        "PRELIMINARY: a budget of {} is under the {} these roles need for every measurement to last {} and every sweep point to be measured {} times; the verdict and recommendations are a first look: qualify again with --time {} or more before acting on them",
        arg(budget),
        arg(minimum),
        arg(MEANINGFUL_RUN),
        MIN_REPEAT,
        arg(minimum)
    )
}

/// Each sweep point's run aims for this long when the budget gives the
/// sweeps more repetitions than three.
pub const SWEEP_RUN_TARGET: Duration = Duration::from_secs(3);

/// Repetitions per sweep point: as many as the sweeps' share of the budget
/// gives with runs of [`SWEEP_RUN_TARGET`], up to the sweep's cap
/// ([`MAX_DECIDING_REPEATS`]); at least three of a second or more, else two.
/// A larger `--time` buys repetitions, which is how a knee the noise left
/// undecided gets decided ([`knee_line`] says which budget would).
pub fn sweep_repeats(slot: Duration, points: usize) -> usize {
    let fits = |r: usize, run: Duration| per_run(slot, points * r) >= run;
    match (3..=MAX_DECIDING_REPEATS)
        .rev()
        .find(|&r| fits(r, SWEEP_RUN_TARGET))
    {
        Some(r) => r,
        None if fits(3, Duration::from_secs(1)) => 3,
        None => 2,
    }
}

/// The smallest whole-minute budget whose sweeps get `repeats` repetitions
/// of each of `points` points (by [`sweep_repeats`] on the sweeps' share).
pub fn budget_for_repeats(repeats: usize, points: usize) -> Option<Duration> {
    let share = STAGES
        .iter()
        .find(|s| s.0 == "sweeps")
        .map_or(0.35, |s| s.1);
    (1..=24 * 60)
        .map(|m| Duration::from_secs(m * 60))
        .find(|t| sweep_repeats(t.mul_f64(share), points) >= repeats)
}
