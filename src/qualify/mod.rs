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
//! need ([`rules`]) and renders the result ([`render`]: text; [`html`]: the
//! report), with the system under test ([`system`]) and the sources the rules
//! cite ([`references`]) in both.
//!
//! By stage: `plan` binds the locations and shapes the stages' runs,
//! `budget` splits the time, `measure` runs the stages (`stages`) in order,
//! `judge` turns what they measured into the facts the rules judge, and
//! `result` holds it all.

pub mod compare;
pub mod csv;
pub mod html;
pub mod references;
pub mod render;
pub mod rules;
pub mod system;
pub mod verdict_html;

mod budget;
mod judge;
mod measure;
mod plan;
mod result;
mod stages;

use crate::runner::RunOptions;
pub use budget::{
    budget_for_repeats, minimum_budget, per_run, planned_runs, preliminary_note, slot_for,
    sweep_repeats, Budget, MEANINGFUL_RUN, MIN_REPEAT, MIN_RUN, STAGES, SWEEP_RUN_TARGET,
};
pub use judge::{attach_cpu, facts, findings, knee_line, show_stat, UNTRUSTED_CODES};
use measure::qualify;
pub use plan::{
    fit_threads_axis, is_deep_queue, locations, profile_list, shares_device, sweep_shape, Location,
    QualifyConfig, RoleArg, MEASURE_CACHE, QUICK_CACHE, SWEEP_THREADS_PER_CORE,
};
pub use result::{
    BaselineComparison, Change, ChangeMetric, CheckFinding, Measure, MeasureKind, ProfileMeasure,
    QualifyResult, RoleStalls, RoleSweep, SimFileSummary, SimSummary, StageRecord,
};

/// Runs the qualification. `baseline` is compared at the end (resolved by the caller before).
/// A failure removes the test files it created (unless `--keep-files`), and says so.
pub fn run(cfg: &QualifyConfig, opts: &RunOptions) -> anyhow::Result<QualifyResult> {
    let mut made = Vec::new();
    qualify(cfg, opts, &mut made).map_err(|mut e| {
        for path in made.iter().filter(|_| !cfg.keep_files) {
            if std::fs::remove_file(path).is_ok() {
                e = crate::target::with_outcome(e, crate::target::FileFate::Removed, path);
            }
        }
        e
    })
}

#[cfg(test)]
mod tests {
    use super::rules::{RuleSet, SlowFact, Verdict};
    use super::*;
    use crate::sweep::analysis::MAX_DECIDING_REPEATS;
    use crate::sysmon::check::CpuCause;
    use crate::sysmon::procs::CpuAttribution;
    use crate::verdict::Role;
    use crate::workload::EngineKind;
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
    fn per_run_keeps_room_for_set_up_and_a_floor() {
        assert_eq!(per_run(Duration::ZERO, 10), MIN_RUN);
        let d = per_run(Duration::from_secs(100), 10);
        assert!((d.as_secs_f64() - 8.97).abs() < 1e-6, "{d:?}");
    }

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
        let planned = planned_runs(&locations(&cfg).unwrap()).unwrap();
        assert_eq!(planned[0], ("quick corners", 0.10, 10));
        assert_eq!(planned[1], ("sweeps", 0.35, 40));
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
        assert!(minimum_budget(&planned_runs(&locations(&more).unwrap()).unwrap()) > min);
        let note = preliminary_note(Duration::from_secs(10), min);
        assert!(
            note.starts_with("PRELIMINARY: a budget of 10s is under the 131s"),
            "{note}"
        );
        assert!(note.contains("--time 131s"), "{note}");
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

    #[test]
    fn cpu_findings_are_untrusted_by_cause_and_carry_who_used_it() {
        let ws = vec![
            (
                Role::Data,
                "cpu_taken_by_others".to_string(),
                "x".to_string(),
            ),
            (
                Role::Data,
                "cpu_taken_by_others".to_string(),
                "y".to_string(),
            ),
            (Role::Log, "cpu_busy_io_path".to_string(), "z".to_string()),
            (Role::Log, "cpu_bound_iosim".to_string(), "w".to_string()),
        ];
        let mut f = findings(&ws);
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].runs, f[0].untrusted), (2, true));
        assert!(!f[1].untrusted, "the I/O path is the storage's cost");
        assert!(f[2].untrusted);
        let a = |others: f64, window_s: f64| CpuAttribution {
            others_pct: others,
            cores: 2,
            window_s,
            ..Default::default()
        };
        attach_cpu(
            &mut f,
            &[
                (Role::Data, CpuCause::Others, a(30.0, 1.0)),
                (Role::Data, CpuCause::Others, a(90.0, 0.1)),
                (Role::Log, CpuCause::Others, a(90.0, 2.0)),
            ],
        );
        assert_eq!(
            f[0].cpu.as_ref().unwrap().others_pct,
            30.0,
            "the longest run"
        );
        assert!(
            f[0].message
                .starts_with("other processes took CPU iosim needed"),
            "its message: {}",
            f[0].message
        );
        assert_eq!(f[1].message, "z", "no attribution: the run's message stays");
        assert!(f[1].cpu.is_none() && f[2].cpu.is_none());
    }

    fn measure(name: &str, role: Role) -> Measure {
        Measure {
            name: name.into(),
            role,
            path: "/x".into(),
            workload: "w".into(),
            bs: 8192,
            duration_s: 10.0,
            iops: 1000.0,
            mib_per_sec: 7.8,
            read_mean_us: Some(1500.0),
            write_mean_us: None,
            p99_us: 4000.0,
            p999_us: 60_000.0,
            max_us: 482_000.0,
            ios_over_1s: 0,
            ios_over_15s: 0,
            errors: 0,
        }
    }

    fn result() -> QualifyResult {
        let loc = |role: Role| Location {
            role,
            given: "/d".into(),
            target: format!("/d/iosim-qualify-{}.dat", role.name()).into(),
            device: false,
            block_device: None,
            created: true,
            derived: role == Role::Log,
            size: 64 << 20,
        };
        let sim_file = |kind: &str, role: Role, over_15s: u64| SimFileSummary {
            path: format!("/d/sim.{kind}"),
            kind: kind.into(),
            role,
            iops: 100.0,
            read_mean_us: 500.0,
            write_mean_us: 500.0,
            errors: 0,
            max_us: if over_15s > 0 { 16e6 } else { 2e3 },
            ios_over_1s: over_15s,
            ios_over_15s: over_15s,
        };
        QualifyResult {
            overall: Verdict::Fit,
            rules: RuleSet::Flash,
            trustworthy: true,
            verdicts: vec![],
            recommendations: vec![],
            time_budget_s: 60.0,
            setup_s: 1.0,
            measure_s: 60.0,
            locations: vec![loc(Role::Data), loc(Role::Log)],
            stages: vec![],
            quick: vec![],
            sweeps: vec![],
            profiles: vec![ProfileMeasure {
                profile: "oltp-with-log".into(),
                measure: measure("oltp-with-log data-8k", Role::Data),
                tables: vec![],
                deep_queue: false,
            }],
            sim: Some(SimSummary {
                duration_s: 10.0,
                cycles: 1,
                pages_verified: 10,
                log_blocks_verified: 10,
                errors: 0,
                errors_by_class: vec![],
                files: vec![
                    sim_file("mdx", Role::Data, 0),
                    sim_file("ldx", Role::Log, 0),
                ],
                error_log: None,
                interrupted: false,
                long_io_warnings: 0,
            }),
            checks: vec![],
            stalls: vec![RoleStalls {
                role: Role::Data,
                ios: 50_000,
                ios_over_1s: 2,
                ios_over_15s: 0,
                max_us: 1_250_000.0,
                max_in: "quick rand read 4K QD32".into(),
            }],
            baseline: None,
            notes: vec![],
            left_on_disk: vec![],
            interrupted: false,
            system: Default::default(),
            references: vec![],
            preliminary: false,
            minimum_budget_s: 0.0,
            test_file_size: 64 << 20,
            cache_size: Some(0),
            host_memory: 0,
        }
    }

    #[test]
    fn facts_carry_tails_stalls_and_the_simulators_long_ios() {
        let mut r = result();
        let f = facts(&r, &[]);
        assert_eq!(f.rules, RuleSet::Flash);
        let d = &f.roles[0];
        assert_eq!(d.role, Role::Data);
        assert_eq!(d.tails.len(), 1);
        assert_eq!(d.tails[0].ios, 10_000);
        assert_eq!(d.tails[0].max_us, 482_000.0);
        assert_eq!(d.slow.over_1s, 2);
        assert_eq!(d.slow.max_in, "quick rand read 4K QD32");
        assert_eq!(f.roles[1].slow, SlowFact::default());
        let (v, overall, _) = rules::judge(&f);
        let data: Vec<&str> = v[0].reasons.iter().map(|x| x.rule.as_str()).collect();
        assert_eq!(data, ["data-latency", "tail-p99.9", "slow-io"]);
        assert_eq!(overall, Verdict::FitWithWarnings);
        // The simulator's monitor warned, and the data file had the stall: data only.
        let sim = r.sim.as_mut().unwrap();
        sim.long_io_warnings = 3;
        sim.files[0] = SimFileSummary {
            ios_over_1s: 1,
            ios_over_15s: 1,
            max_us: 16e6,
            ..sim.files[0].clone()
        };
        let f = facts(&r, &[]);
        assert_eq!(f.roles[0].sim_slow.over_15s, 1);
        assert_eq!(
            f.roles[0].sim_slow.long_io_warnings, 0,
            "explained by the file"
        );
        assert_eq!(
            f.roles[1].sim_slow.over_1s + f.roles[1].sim_slow.long_io_warnings,
            0
        );
        let (v, overall, _) = rules::judge(&f);
        assert_eq!(overall, Verdict::NotFit);
        assert!(v[0].reasons.iter().any(|x| x.rule == "sim-long-io"));
        assert_eq!(v[1].verdict, Verdict::Fit);
        // Warnings no file explains count against both roles.
        r.sim.as_mut().unwrap().files[0].ios_over_15s = 0;
        let f = facts(&r, &[]);
        assert_eq!(f.roles[0].sim_slow.long_io_warnings, 3);
        assert_eq!(f.roles[1].sim_slow.long_io_warnings, 3);
    }

    #[test]
    fn documents_stored_before_the_tails_still_load() {
        let mut v = serde_json::to_value(result()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("rules");
        o.remove("stalls");
        for k in ["p999_us", "max_us", "ios_over_1s", "ios_over_15s"] {
            o["profiles"][0]["measure"]
                .as_object_mut()
                .unwrap()
                .remove(k);
        }
        o["sim"].as_object_mut().unwrap().remove("long_io_warnings");
        for k in ["max_us", "ios_over_1s", "ios_over_15s"] {
            o["sim"]["files"][0].as_object_mut().unwrap().remove(k);
        }
        let old: QualifyResult = serde_json::from_value(v).unwrap();
        assert_eq!(old.rules, RuleSet::Classic);
        assert!(old.stalls.is_empty());
        assert_eq!(old.profiles[0].measure.max_us, 0.0);
        // Without the figures no tail rule fires.
        let f = facts(&old, &[]);
        assert!(f.roles[0].tails.is_empty());
    }
}
