//! The time budget: each stage's share, each run's length, the repetitions it buys.
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use super::databases::sweep_shape;
use super::plan::{planned_profiles, Location, QualifyConfig};
use super::result::{BudgetAccount, Overrun, OverrunCause};
use super::stage_id::StageId;
use crate::sweep::analysis::MAX_DECIDING_REPEATS;

/// The stages and their fixed shares of the budget.
pub const STAGES: [(StageId, f64); 5] = [
    (StageId::QuickCorners, 0.10),
    (StageId::Sweeps, 0.35),
    (StageId::Profiles, 0.30),
    (StageId::Simulator, 0.20),
    (StageId::SelfChecks, 0.05),
];

/// A stage's share of the budget (0 for a stage outside [`STAGES`]).
pub fn share(stage: StageId) -> f64 {
    STAGES.iter().find(|s| s.0 == stage).map_or(0.0, |s| s.1)
}

/// Shortest measured time of one run, whatever the budget.
pub const MIN_RUN: Duration = Duration::from_millis(100);

/// Splits the budget: each stage gets its fixed share of what is left, so an
/// early stage that overran is paid for by the later ones. Each stage stops
/// at its deadline ([`Deadline`]); a stage that starts with nothing left is
/// skipped, so the whole ends within the budget plus the I/O it waited for
/// at the last deadline (docs/qualify-storage.md, "How the budget is kept").
pub struct Budget {
    start: Instant,
    end: Instant,
    total: Duration,
    shares_left: f64,
}

/// The share of the budget creating the test files may take; past it the
/// stages still get the rest of the budget, and the excess is the set-up's
/// overrun ([`Budget::after_setup`]).
pub const SETUP_SHARE: f64 = 0.25;

/// A stage ending later than its deadline by less than this is on time:
/// a run notices its stop flag within a poll, not at once.
pub const OVERRUN_GRACE: Duration = Duration::from_millis(100);

impl Budget {
    /// A budget of `total` starting now (the set-up is paid from it).
    pub fn new(total: Duration) -> Budget {
        let start = Instant::now();
        Budget {
            start,
            end: start + total,
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
        self.end.saturating_duration_since(Instant::now())
    }

    /// Called once the test files exist: what their creation took is paid
    /// from the budget up to [`SETUP_SHARE`] of it; past that the stages
    /// keep the rest of the budget and the end moves by the excess, which is
    /// returned (the set-up's overrun, zero when it kept to its share).
    pub fn after_setup(&mut self) -> Duration {
        let keep = Instant::now() + self.total.mul_f64(1.0 - SETUP_SHARE);
        let over = keep.saturating_duration_since(self.end);
        self.end = self.end.max(keep);
        over
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

/// How often a [`Deadline`]'s watch looks at the user's stop flag.
const WATCH_POLL: Duration = Duration::from_millis(20);

/// A stage's stop flag: raised at the stage's deadline, or as soon as the
/// user's (Ctrl-C) is. The stage's runs, sweeps, profiles and simulator
/// stop on it as on Ctrl-C: a run ends its window, waits for the I/O in
/// flight (an I/O cannot be abandoned: its wait is a stall) and reports
/// what it measured; no new run starts.
pub struct Deadline {
    flag: Arc<AtomicBool>,
    user: Arc<AtomicBool>,
    quit: Option<mpsc::Sender<()>>,
    watch: Option<std::thread::JoinHandle<()>>,
}

impl Deadline {
    /// A deadline `slot` from now over the user's stop flag `user`.
    pub fn start(user: &Arc<AtomicBool>, slot: Duration) -> std::io::Result<Deadline> {
        let flag = Arc::new(AtomicBool::new(user.load(Ordering::Relaxed)));
        let at = Instant::now() + slot;
        let (tx, rx) = mpsc::channel::<()>();
        let (f, u) = (flag.clone(), user.clone());
        let watch = std::thread::Builder::new()
            .name("qualify-deadline".into())
            .spawn(move || loop {
                let now = Instant::now();
                if u.load(Ordering::Relaxed) || now >= at {
                    f.store(true, Ordering::Relaxed);
                    return;
                }
                match rx.recv_timeout((at - now).min(WATCH_POLL)) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
            })?;
        Ok(Deadline {
            flag,
            user: user.clone(),
            quit: Some(tx),
            watch: Some(watch),
        })
    }

    /// The flag the stage's work stops on.
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.flag
    }

    /// The deadline stopped the stage (not the user).
    pub fn cut(&self) -> bool {
        self.flag.load(Ordering::Relaxed) && !self.user.load(Ordering::Relaxed)
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        drop(self.quit.take());
        if let Some(w) = self.watch.take() {
            let _ = w.join();
        }
    }
}

/// What a stage's time went to, for [`stage_overrun`].
pub struct StageTime<'a> {
    /// The stage.
    pub stage: StageId,
    /// Its share of the budget.
    pub planned: Duration,
    /// What it took.
    pub took: Duration,
    /// Its slowest I/O (what it waited for at the deadline, at most), s,
    /// and where.
    pub longest_io: Option<(f64, &'a str)>,
}

/// The stage's overrun with its cause, or `None` when it ended within
/// [`OVERRUN_GRACE`] of its share: an I/O that took half the overrun or more
/// was a stall waited for at the deadline; else the time went around the
/// measured windows (starting runs, draining queues, creating the
/// simulator's files, analysis), slow on slow storage.
pub fn stage_overrun(t: &StageTime) -> Option<Overrun> {
    let over = t.took.checked_sub(t.planned)?;
    if over < OVERRUN_GRACE {
        return None;
    }
    let (cause, why) = match t.longest_io {
        Some((s, what)) if s >= over.as_secs_f64() * 0.5 => (
            OverrunCause::Stall,
            format!(
                "a stall: an I/O took {s:.1} s ({what}); the stage stopped at its deadline and waited for the I/O in flight, which cannot be abandoned"
            ),
        ),
        _ if t.stage == StageId::SelfChecks => (
            OverrunCause::Stall,
            "a stall: reading the test files back (holes, zero-filled data) waited for the storage"
                .to_string(),
        ),
        _ => (
            OverrunCause::Overhead,
            format!(
                "slow storage around the measured windows: {}",
                overhead_of(t.stage)
            ),
        ),
    };
    Some(Overrun {
        stage: t.stage,
        planned_s: t.planned.as_secs_f64(),
        took_s: t.took.as_secs_f64(),
        over_s: over.as_secs_f64(),
        cause,
        why,
    })
}

/// What a stage does outside its measured windows.
fn overhead_of(stage: StageId) -> &'static str {
    match stage {
        StageId::Simulator => {
            "creating and filling the simulator's files, its final checkpoint and audit"
        }
        StageId::Profiles => "setting up each phase's workloads and draining their queues",
        _ => "setting up each run and draining its queue",
    }
}

/// The set-up's overrun: creating the test files took `took`, past
/// [`SETUP_SHARE`] of `total` by `over`.
pub fn setup_overrun(
    total: Duration,
    took: Duration,
    over: Duration,
    bytes: u64,
) -> Option<Overrun> {
    if over < OVERRUN_GRACE {
        return None;
    }
    let rate = bytes as f64 / took.as_secs_f64().max(1e-9) / (1 << 20) as f64;
    Some(Overrun {
        stage: StageId::SetUp,
        planned_s: total.mul_f64(SETUP_SHARE).as_secs_f64(),
        took_s: took.as_secs_f64(),
        over_s: over.as_secs_f64(),
        cause: OverrunCause::FileCreation,
        why: format!(
            "file creation on slow storage: {} of test files written at {rate:.1} MiB/s; give a smaller --size, or keep the files (--keep-files) and qualify again: an existing iosim test file is reused",
            crate::units::format_size(bytes)
        ),
    })
}

/// The noisy-neighbour stage's time: after the budget, by design.
pub fn neighbour_overrun(took: Duration) -> Overrun {
    Overrun {
        stage: StageId::Neighbour,
        planned_s: 0.0,
        took_s: took.as_secs_f64(),
        over_s: took.as_secs_f64(),
        cause: OverrunCause::OutsideBudget,
        why: "outside --time by design: --neighbour's studies run after the budgeted stages".into(),
    }
}

/// How the budget was kept, one line each: the wall time against the
/// budget, then each overrun (`overrun: sweeps 6.1 s past its 4.7 s
/// share: a stall: ...`) and each skipped stage.
pub fn budget_lines(b: &BudgetAccount) -> Vec<String> {
    let mut out = vec![if b.overrun_s > 0.0 {
        format!(
            "Budget: {:.1} s planned, {:.1} s taken: over by {:.1} s (the slowest I/O waited for took {:.1} s)",
            b.planned_s, b.wall_s, b.overrun_s, b.longest_stall_s
        )
    } else {
        format!(
            "Budget: {:.1} s planned, {:.1} s taken: within it",
            b.planned_s, b.wall_s
        )
    }];
    for o in &b.overruns {
        out.push(if o.cause == OverrunCause::OutsideBudget {
            format!("  overrun: {} {:.1} s, {}", o.stage, o.took_s, o.why)
        } else {
            format!(
                "  overrun: {} {:.1} s past its {:.1} s share: {}",
                o.stage, o.over_s, o.planned_s, o.why
            )
        });
    }
    if !b.skipped.is_empty() {
        out.push(format!(
            "  skipped, nothing was left of the budget: {} (qualify again with a larger --time to measure them)",
            b.skipped
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
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

/// The runs each measuring stage makes for these locations when qualifying
/// as `cfg` asks, with the stage's share: the quick corners on each distinct
/// target, every sweep point [`MIN_REPEAT`] times, every phase of the
/// profiles ([`planned_profiles`]: the user's, else the database's that fit
/// the roles).
pub fn planned_runs(
    cfg: &QualifyConfig,
    locs: &[Location],
) -> anyhow::Result<Vec<(StageId, f64, usize)>> {
    let mut targets: Vec<&Path> = Vec::new();
    for l in locs {
        if !targets.contains(&l.target.as_path()) {
            targets.push(&l.target);
        }
    }
    let mut points = 0;
    for l in locs {
        let (_, _, qd, threads) = sweep_shape(cfg.dbms, l.role);
        for axis in [qd, threads] {
            points += crate::sweep::parse_axis(axis)
                .map_err(anyhow::Error::msg)?
                .values
                .len();
        }
    }
    let mut phases = 0;
    for planned in planned_profiles(cfg, locs)? {
        phases += planned.profile.phases().len();
    }
    Ok(vec![
        (
            StageId::QuickCorners,
            share(StageId::QuickCorners),
            crate::quick::SUITE.len() * targets.len(),
        ),
        (StageId::Sweeps, share(StageId::Sweeps), points * MIN_REPEAT),
        (StageId::Profiles, share(StageId::Profiles), phases),
    ])
}

/// The least budget (whole seconds) that gives every run of
/// [`planned_runs`] [`MEANINGFUL_RUN`] of measuring, each stage within its
/// share. A qualification with less is PRELIMINARY: the simulator and the
/// self-checks are not counted (the simulator sizes its cycle to its share,
/// and `sim-missing` says when it could not complete one).
pub fn minimum_budget(planned: &[(StageId, f64, usize)]) -> Duration {
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
    let sweeps = share(StageId::Sweeps);
    (1..=24 * 60)
        .map(|m| Duration::from_secs(m * 60))
        .find(|t| sweep_repeats(t.mul_f64(sweeps), points) >= repeats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qualify::*;
    use crate::sweep::analysis::MAX_DECIDING_REPEATS;

    use crate::verdict::Role;
    use std::time::Duration;

    #[test]
    fn budget_splits_in_fixed_shares_of_what_is_left() {
        let mut b = Budget::new(Duration::from_secs(100));
        let q = b.allot_from(STAGES[0].1, Duration::from_secs(100));
        assert!((q.as_secs_f64() - 10.0).abs() < 1e-6, "{q:?}");
        // The first stage took its 10 s: the next gets its 35 of the 90 left.
        let s = b.allot_from(STAGES[1].1, Duration::from_secs(90));
        assert!((s.as_secs_f64() - 35.0).abs() < 1e-6, "{s:?}");
        // An overrun is paid for by the stages after it, in proportion.
        let p = b.allot_from(STAGES[2].1, Duration::from_secs(11));
        assert!((p.as_secs_f64() - 6.0).abs() < 1e-6, "{p:?}");
        let sum: f64 = STAGES.iter().map(|s| s.1).sum();
        assert!((sum - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_set_up_past_its_share_is_an_overrun_and_the_stages_keep_the_rest() {
        let mut b = Budget::new(Duration::from_secs(100));
        // Within its quarter: paid from the budget, no overrun.
        assert_eq!(b.after_setup(), Duration::ZERO);
        assert!(b.left() > Duration::from_secs(99));
        // A set-up that took the whole budget: the stages still get 75 s.
        let mut b = Budget::new(Duration::from_millis(200));
        std::thread::sleep(Duration::from_millis(250));
        let over = b.after_setup();
        assert!(over >= Duration::from_millis(150 + 50), "{over:?}");
        assert!(b.left() > Duration::ZERO && b.left() <= Duration::from_millis(150));
        let o = setup_overrun(
            Duration::from_millis(200),
            Duration::from_millis(250),
            over,
            1 << 30,
        )
        .unwrap();
        assert_eq!(o.cause, OverrunCause::FileCreation);
        assert!(
            o.why.starts_with("file creation on slow storage: 1GiB"),
            "{}",
            o.why
        );
        assert!(setup_overrun(Duration::from_secs(1), Duration::ZERO, Duration::ZERO, 0).is_none());
    }

    #[test]
    fn an_overrun_names_its_stall_or_the_time_around_the_windows() {
        let t = |took: u64, io: Option<(f64, &'static str)>| StageTime {
            stage: StageId::Sweeps,
            planned: Duration::from_secs(4),
            took: Duration::from_millis(took),
            longest_io: io,
        };
        // On time, or late by less than the grace.
        assert!(stage_overrun(&t(3000, None)).is_none());
        assert!(stage_overrun(&t(4050, Some((8.0, "x")))).is_none());
        // An 8 s pause waited for at the deadline.
        let o = stage_overrun(&t(11_000, Some((8.0, "sweep randread")))).unwrap();
        assert_eq!(o.cause, OverrunCause::Stall);
        assert!((o.over_s - 7.0).abs() < 1e-9, "{o:?}");
        assert!(
            o.why
                .starts_with("a stall: an I/O took 8.0 s (sweep randread)"),
            "{}",
            o.why
        );
        // I/Os of 0.2 s do not explain 2 s: the runs' set-up and draining do.
        let o = stage_overrun(&t(6000, Some((0.2, "sweep")))).unwrap();
        assert_eq!(o.cause, OverrunCause::Overhead);
        assert!(o.why.contains("draining"), "{}", o.why);
        let n = neighbour_overrun(Duration::from_secs(10));
        assert_eq!((n.cause, n.over_s), (OverrunCause::OutsideBudget, 10.0));
    }

    #[test]
    fn a_deadline_raises_its_flag_and_the_users_stop_raises_it_at_once() {
        let user = Arc::new(AtomicBool::new(false));
        let d = Deadline::start(&user, Duration::from_millis(50)).unwrap();
        assert!(!d.flag().load(Ordering::Relaxed));
        let t0 = Instant::now();
        while !d.flag().load(Ordering::Relaxed) {
            assert!(t0.elapsed() < Duration::from_secs(30), "never raised");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(d.cut(), "the deadline, not the user");
        let d = Deadline::start(&user, Duration::from_secs(3600)).unwrap();
        user.store(true, Ordering::Relaxed);
        let t0 = Instant::now();
        while !d.flag().load(Ordering::Relaxed) {
            assert!(t0.elapsed() < Duration::from_secs(30), "never raised");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!d.cut(), "the user stopped it");
        // Dropping a deadline far away ends its watch at once.
        let t0 = Instant::now();
        drop(
            Deadline::start(&Arc::new(AtomicBool::new(false)), Duration::from_secs(3600)).unwrap(),
        );
        assert!(t0.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn per_run_keeps_room_for_set_up_and_a_floor() {
        assert_eq!(per_run(Duration::ZERO, 10), MIN_RUN);
        let d = per_run(Duration::from_secs(100), 10);
        assert!((d.as_secs_f64() - 8.97).abs() < 1e-6, "{d:?}");
    }

    #[test]
    fn the_budget_buys_sweep_repetitions() {
        // 20 points (data and log, queue depth and threads) as qualify sweeps them.
        let sweeps = |t: u64| sweep_repeats(Duration::from_secs(t).mul_f64(0.35), 20);
        assert_eq!(sweeps(10), 2);
        assert_eq!(sweeps(600), 3);
        assert!(sweeps(30 * 60) > 3, "{}", sweeps(30 * 60));
        assert_eq!(sweeps(24 * 3600), MAX_DECIDING_REPEATS);
        // The budget named for n repetitions gives n, and a minute less does not.
        for n in 4..=MAX_DECIDING_REPEATS {
            let t = budget_for_repeats(n, 20).unwrap();
            assert!(sweeps(t.as_secs()) >= n);
            assert!(sweeps(t.as_secs() - 60) < n, "{n}: {t:?}");
        }
    }

    #[test]
    fn the_minimum_budget_gives_each_run_a_second_and_each_point_two_repetitions() {
        let d = Duration::from_millis(1234);
        let back = per_run(slot_for(d, 40), 40);
        assert!(
            (back.as_secs_f64() - d.as_secs_f64()).abs() < 1e-9,
            "{back:?}"
        );
        // Data and log in one directory: 2 targets x 5 corners, 20 sweep
        // points x 2, the profiles' phases. The sweeps decide: 40 runs of
        // 1 s in 35% of the budget.
        let a = tempfile::tempdir().unwrap();
        let cfg = QualifyConfig::for_test(crate::dbms::Dbms::SQLSERVER, a.path());
        let planned = planned_runs(&cfg, &locations(&cfg).unwrap()).unwrap();
        assert_eq!(planned[0], (StageId::QuickCorners, 0.10, 10));
        assert_eq!(planned[1], (StageId::Sweeps, 0.35, 40));
        let min = minimum_budget(&planned);
        assert_eq!(min, Duration::from_secs(131), "{planned:?}");
        // At the minimum every stage's runs measure a second or more; a
        // second less and the sweeps' do not.
        for (_, share, runs) in &planned {
            assert!(per_run(min.mul_f64(*share), *runs) >= MEANINGFUL_RUN);
        }
        let less = min - Duration::from_secs(1);
        assert!(per_run(less.mul_f64(0.35), 40) < MEANINGFUL_RUN);
        // More roles, more points: a larger minimum.
        let t = tempfile::tempdir().unwrap();
        let mut more = cfg.clone();
        more.roles.push(RoleArg {
            role: Role::Tempdb,
            path: t.path().into(),
        });
        assert!(minimum_budget(&planned_runs(&more, &locations(&more).unwrap()).unwrap()) > min);
        // Another database: its own profiles' phases, the same sweeps.
        let pg = QualifyConfig {
            neighbour: None,
            dbms: crate::dbms::Dbms::POSTGRESQL,
            ..cfg.clone()
        };
        let planned_pg = planned_runs(&pg, &locations(&pg).unwrap()).unwrap();
        assert_eq!(planned_pg[1], planned[1]);
        assert_eq!(
            planned_pg[2],
            (StageId::Profiles, 0.30, 4),
            "oltp, checkpoint, seqscan's 2 phases"
        );
        let note = preliminary_note(Duration::from_secs(10), min);
        assert!(
            note.starts_with("PRELIMINARY: a budget of 10s is under the 131s"),
            "{note}"
        );
        assert!(note.contains("--time 131s"), "{note}");
    }
}
