//! From the measurements to the verdicts: the findings of the self-checks, the
//! facts the rules judge, and the knee in words.

use super::budget::budget_for_repeats;
use super::plan::{shares_device, Location};
use super::result::{CheckFinding, QualifyResult, RoleSweep};
use super::rules;
use super::rules::{
    Facts, FlushFact, KneeFact, LatencyFact, RoleFacts, SimSlowFact, SlowFact, TailFact,
    ThroughputFact,
};
use crate::quick::CornerId;
use crate::sweep::analysis::Stat;
use crate::sysmon::check::{CpuCause, WarningCode};
use crate::sysmon::procs::CpuAttribution;
use crate::verdict::{Direction, Role};

/// Self-check codes that mean the numbers measure something other than the
/// storage. A CPU kept busy by the kernel's I/O path (`cpu_busy_io_path`) is
/// not one: that is part of the storage's cost.
pub const UNTRUSTED_CODES: [WarningCode; 12] = [
    WarningCode::CacheAnsweredReads,
    WarningCode::DeviceUsedByOthers,
    WarningCode::WritesMissedDevice,
    WarningCode::WritesStillCached,
    WarningCode::BufferedFitsInMemory,
    CpuCause::Iosim.code(),
    CpuCause::Others.code(),
    WarningCode::SparseTestFile,
    WarningCode::ZeroFilledTestFile,
    WarningCode::DirectIoUnavailable,
    WarningCode::LoopBackingCached,
    WarningCode::UnwrittenDevice,
];

/// What the knee rule concluded on one of the qualification's sweeps, in
/// words: the knee, "no knee: still scales", or undecided with the budget
/// that would decide it (qualify has no --repeat: its repetitions grow with
/// --time). `None` when the sweep was not judged.
pub fn knee_line(r: &QualifyResult, s: &RoleSweep) -> Option<String> {
    use crate::sweep::analysis::KneeStatus;
    let res = &s.result;
    let param = s.param.name().to_uppercase();
    let at = |load: f64| {
        res.points
            .iter()
            .find(|p| p.outstanding as f64 == load)
            .and_then(|p| p.params.get(s.param.name()).cloned())
            .unwrap_or_else(|| format!("{load}"))
    };
    let points: usize = r.sweeps.iter().map(|s| s.result.points.len()).sum();
    let budget = |n: usize| {
        budget_for_repeats(n, points)
            .map(|t| format!("{}m", t.as_secs() / 60))
            .unwrap_or_else(|| "more than a day".into())
    };
    Some(match &res.knee_status {
        KneeStatus::Found => {
            let k = res.knee.as_ref()?;
            let p = res.points.get(k.index)?;
            format!(
                "knee at {param} {}: {} IOPS, {:.0}% of the best; {}",
                p.params.get(s.param.name()).cloned().unwrap_or_default(),
                p.iops.show(),
                k.share_of_max * 100.0,
                k.explanation
            )
        }
        KneeStatus::StillScales { last_load } => format!(
            "no knee up to {param} {}: the storage still scales (a later point always had over {:.0}% more IOPS)",
            at(*last_load),
            crate::sweep::analysis::KNEE_MARGIN * 100.0
        ),
        KneeStatus::Undecided {
            load,
            repeats: Some(n),
            ..
        } => format!(
            "knee undecided at {param} {}: {} repetitions are too noisy to tell whether IOPS flattens there; --time {} gives the sweeps {n}, enough to decide it",
            at(*load),
            res.repeat,
            budget(*n)
        ),
        KneeStatus::Undecided {
            load, max_repeats, ..
        } => format!(
            "knee undecided at {param} {}: {} repetitions are too noisy to tell whether IOPS flattens there, and even {max_repeats} (--time {}) would not decide it: quieten the system and qualify again",
            at(*load),
            res.repeat,
            budget(*max_repeats)
        ),
        KneeStatus::NotJudged => return None,
    })
}

/// A measurement beating a ceiling by more than this (%) refutes it.
pub const CEILING_REFUTED_PCT: f64 = 5.0;

/// The measurement of the same location, in the same qualification, that
/// went past a sweep's ceiling (issue 37: a "limit" at 49,637 IOPS while
/// the location's 4K QD32 corner reached 69,086 is none): one of the
/// ceiling's direction (a read-only sweep's by read-only measurements, a
/// write-only one's by write-only ones; a mix's is refuted only by its own
/// sweep's other points), of the rate it held, beyond
/// [`CEILING_REFUTED_PCT`]. Its name, or `None` when nothing refutes it.
fn refuted_by(r: &QualifyResult, sweep: &RoleSweep, c: &crate::changes::Ceiling) -> Option<String> {
    use crate::changes::LimitMetric;
    let beats = |iops: f64, mib: f64| {
        let (v, limit) = match c.metric {
            LimitMetric::Iops => (iops, c.iops),
            LimitMetric::Bandwidth => (mib, c.mib_per_sec),
        };
        v > limit * (1.0 + CEILING_REFUTED_PCT / 100.0)
    };
    let own = sweep.result.points.iter().enumerate().find(|(i, p)| {
        !c.points.contains(i)
            && p.outstanding as f64 > c.from_load
            && beats(p.iops.mean, p.mib_per_sec.mean)
    });
    if let Some((_, p)) = own {
        return Some(format!("the sweep's {} in flight", p.outstanding));
    }
    let base = &sweep.result.base;
    let (reads, writes) = (base.write_pct < 100, base.writes());
    if reads && writes {
        return None;
    }
    r.quick
        .iter()
        .chain(r.profiles.iter().map(|p| &p.measure))
        .filter(|m| m.role == sweep.role)
        .filter(|m| m.read_mean_us.is_some() == reads && m.write_mean_us.is_some() == writes)
        .find(|m| beats(m.iops, m.mib_per_sec))
        .map(|m| m.name.clone())
}

/// The ceiling of `role`'s sweep, in words, unless the same location
/// measured past it ([`refuted_by`]).
fn sweep_ceiling(r: &QualifyResult, role: Role) -> Option<String> {
    r.sweeps
        .iter()
        .filter(|s| s.role == role)
        .find_map(|s| Some((s, s.result.ceiling.as_ref()?)))
        .filter(|(s, c)| refuted_by(r, s, c).is_none())
        .map(|(_, c)| c.describe())
}

/// Folds the runs' warnings into one finding per (role, code).
pub fn findings(ws: &[(Role, WarningCode, String)]) -> Vec<CheckFinding> {
    let mut out: Vec<CheckFinding> = Vec::new();
    for (role, code, msg) in ws {
        match out.iter_mut().find(|f| f.role == *role && &f.code == code) {
            Some(f) => f.runs += 1,
            None => out.push(CheckFinding {
                code: code.clone(),
                role: *role,
                message: msg.clone(),
                runs: 1,
                untrusted: UNTRUSTED_CODES.contains(code),
                cpu: None,
            }),
        }
    }
    out
}

/// Gives each CPU finding who used the CPU in the longest run of its role
/// that showed it (the shares of a short run are coarse: the kernel counts
/// CPU time in 10 ms ticks), and that run's message, so the two agree.
pub fn attach_cpu(checks: &mut [CheckFinding], cpu: &[(Role, CpuCause, CpuAttribution)]) {
    for f in checks.iter_mut() {
        let Some((_, cause, a)) = cpu
            .iter()
            .filter(|(role, c, _)| *role == f.role && c.code() == f.code)
            .max_by(|x, y| x.2.window_s.total_cmp(&y.2.window_s))
        else {
            continue;
        };
        f.message = crate::sysmon::check::cpu_warning(*cause, a).message;
        f.cpu = Some(a.clone());
    }
}

fn knee_fact(s: &RoleSweep) -> Option<KneeFact> {
    let pts = &s.result.points;
    let max_iops = pts.iter().map(|p| p.iops.mean).fold(0.0, f64::max);
    let k = s.result.knee.as_ref()?;
    let p = pts.get(k.index)?;
    Some(KneeFact {
        param: s.param,
        at: p
            .params
            .get(s.param.name())
            .and_then(|v| v.parse().ok())
            .unwrap_or(k.load),
        iops: p.iops.mean,
        mean_us: p.lat_mean_us.mean,
        max_iops,
        growth_after: k.latency_growth_after,
        before_last: k.index + 1 < pts.len(),
        proven: k.confirmed
            && crate::sweep::analysis::plateau_proven(&crate::sweep::series(pts, false), k.index),
    })
}

/// The facts the rules judge, from the measurements.
pub fn facts(r: &QualifyResult, errors: &[(Role, u64)]) -> Facts {
    let roles = r
        .locations
        .iter()
        .map(|l| role_facts(r, l, errors))
        .collect();
    let find = |name: &str| {
        r.profiles
            .iter()
            .find(|p| p.measure.name == name)
            .and_then(|p| p.measure.write_mean_us)
    };
    let data = r.locations.iter().find(|l| l.role == Role::Data);
    let log = r.locations.iter().find(|l| l.role == Role::Log);
    Facts {
        roles,
        sim_completed: r.sim.as_ref().map(|s| s.cycles > 0),
        sim_errors_by_class: r
            .sim
            .as_ref()
            .map(|s| s.errors_by_class.clone())
            .unwrap_or_default(),
        log_shares_data: matches!((data, log), (Some(d), Some(l)) if shares_device(d, l)),
        commit_alone_us: find("log-writer commit-4k"),
        commit_with_data_us: find("oltp-with-log log-4k"),
        rules: r.rules,
        dbms: r.dbms,
    }
}

/// The facts of the role on `l`.
fn role_facts(r: &QualifyResult, l: &Location, errors: &[(Role, u64)]) -> RoleFacts {
    let role = l.role;
    let ProfileFacts {
        latency,
        throughput,
        tails,
        flushes,
        flush_untimed,
    } = profile_facts(r, role);
    let knee = r
        .sweeps
        .iter()
        .find(|s| s.role == role && s.param == crate::sweep::Param::Qd)
        .and_then(knee_fact);
    let untrusted = r
        .checks
        .iter()
        .filter(|f| f.role == role && f.untrusted)
        .map(|f| (f.code.clone(), f.message.clone()))
        .collect();
    let sim_errors = sim_errors(r, role);
    let slow = r
        .stalls
        .iter()
        .find(|s| s.role == role)
        .map(|s| SlowFact {
            over_1s: s.ios_over_1s,
            over_15s: s.ios_over_15s,
            max_us: s.max_us,
            max_in: s.max_in.clone(),
        })
        .unwrap_or_default();
    RoleFacts {
        role,
        latency,
        knee,
        throughput,
        io_errors: errors.iter().filter(|e| e.0 == role).map(|e| e.1).sum(),
        untrusted,
        sim_errors,
        tails,
        slow,
        sim_slow: sim_slow(r, role),
        cache: (l.size > 0).then_some(rules::CacheFact {
            size: l.size,
            device: l.device,
            given: r.cache_size,
            host_memory: r.host_memory,
        }),
        flushes,
        flush_untimed,
        neighbour: r
            .neighbours
            .iter()
            .find(|n| n.role == role)
            .map(|n| rules::NeighbourFact {
                spec: n.report.background.spec.clone(),
                alone_p99_us: n.report.alone.lat_p99_us,
                together_p99_us: n.report.together.lat_p99_us,
                iops_pct: n.report.change.iops_pct.unwrap_or(0.0),
            }),
        rate_limit: r
            .checks
            .iter()
            .find(|f| f.role == role && f.code == WarningCode::RateLimited)
            .map(|f| f.message.clone())
            .or_else(|| sweep_ceiling(r, role)),
    }
}

/// The simulator's errors on `role`'s files (data also takes those tied to no file).
fn sim_errors(r: &QualifyResult, role: Role) -> u64 {
    r.sim.as_ref().map_or(0, |s| {
        s.files
            .iter()
            .filter(|f| f.role == role)
            .map(|f| f.errors)
            .sum::<u64>()
            + if role == Role::Data {
                // Errors not tied to a file listed (should not happen) count against data.
                s.errors
                    .saturating_sub(s.files.iter().map(|f| f.errors).sum())
            } else {
                0
            }
    })
}

/// The facts of one role's profiles: the means and tails of the
/// latency-bound workloads, the deep-queue ones' throughput, the flushes.
struct ProfileFacts {
    latency: Vec<LatencyFact>,
    throughput: Vec<ThroughputFact>,
    tails: Vec<TailFact>,
    flushes: Vec<FlushFact>,
    flush_untimed: Vec<String>,
}

/// The facts of `role`'s profiles, from their measurements.
fn profile_facts(r: &QualifyResult, role: Role) -> ProfileFacts {
    let mut latency = Vec::new();
    let mut throughput = Vec::new();
    let mut tails = Vec::new();
    let mut flushes = Vec::new();
    let mut flush_untimed = Vec::new();
    for p in r.profiles.iter().filter(|p| p.measure.role == role) {
        let m = &p.measure;
        // Flushes reach the storage whatever the cache: judged by their own rules.
        match &m.flush {
            Some(f) if f.timed() => flushes.push(FlushFact {
                what: m.name.clone(),
                kind: f.kind,
                ios: f.ios,
                mean_us: f.mean_us,
                p99_us: f.p99_us,
                p999_us: f.p999_us,
                max_us: f.max_us,
            }),
            Some(_) => flush_untimed.push(m.name.clone()),
            None => {}
        }
        if p.deep_queue {
            if m.bs < 512 << 10 {
                // Small blocks are no match for the 1 MiB corner; the knee judges them.
                continue;
            }
            let reference = if m.write_mean_us.is_some() {
                CornerId::SeqWrite1M
            } else {
                CornerId::SeqRead1M
            };
            if let Some(q) = r
                .quick
                .iter()
                .find(|q| q.role == role && q.corner() == Some(reference))
            {
                throughput.push(ThroughputFact {
                    what: m.name.clone(),
                    mib_s: m.mib_per_sec,
                    reference: reference.name().into(),
                    reference_mib_s: q.mib_per_sec,
                });
            }
            continue;
        }
        // A buffered read or write the page cache answered says nothing
        // about the storage: only what reached it is judged.
        let (reads, writes) = (m.reads_reach_storage(), m.writes_reach_storage());
        if m.max_us > 0.0 && (reads || writes) && (role != Role::Log || m.read_mean_us.is_none()) {
            tails.push(TailFact {
                what: m.name.clone(),
                ios: m.ios(),
                p99_us: m.p99_us,
                p999_us: m.p999_us,
                max_us: m.max_us,
            });
        }
        for (d, v) in [
            (Direction::Read, m.read_mean_us.filter(|_| reads)),
            (Direction::Write, m.write_mean_us.filter(|_| writes)),
        ] {
            if let Some(v) = v {
                latency.push(LatencyFact {
                    what: m.name.clone(),
                    direction: d,
                    mean_us: v,
                });
            }
        }
    }
    ProfileFacts {
        latency,
        throughput,
        tails,
        flushes,
        flush_untimed,
    }
}

/// What the simulator saw of slow I/O on `role`'s file. Its long-I/O
/// monitor does not know which file an outstanding I/O was on: when no
/// file's completed I/Os explain its warnings (none over 15 s), they count
/// against every role the simulator ran on.
fn sim_slow(r: &QualifyResult, role: Role) -> SimSlowFact {
    let Some(s) = &r.sim else {
        return SimSlowFact::default();
    };
    let mut f = SimSlowFact::default();
    for x in s.files.iter().filter(|x| x.role == role) {
        f.over_1s += x.ios_over_1s;
        f.over_15s += x.ios_over_15s;
        f.max_us = f.max_us.max(x.max_us);
    }
    let explained = s.files.iter().any(|x| x.ios_over_15s > 0);
    if !explained && s.files.iter().any(|x| x.role == role) {
        f.long_io_warnings = s.long_io_warnings;
    }
    f
}

/// The repetitions' mean ± 95% interval, for reports.
pub fn show_stat(s: &Stat) -> String {
    s.show()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qualify::rules::{RuleSet, SlowFact, Verdict};
    use crate::qualify::*;

    use crate::sysmon::check::CpuCause;
    use crate::sysmon::procs::CpuAttribution;
    use crate::verdict::Role;

    #[test]
    fn cpu_findings_are_untrusted_by_cause_and_carry_who_used_it() {
        let ws = vec![
            (Role::Data, WarningCode::CpuTakenByOthers, "x".to_string()),
            (Role::Data, WarningCode::CpuTakenByOthers, "y".to_string()),
            (Role::Log, WarningCode::CpuBusyIoPath, "z".to_string()),
            (Role::Log, WarningCode::CpuBoundIosim, "w".to_string()),
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
            cache: None,
            flush: None,
            spread_pct: None,
            cpu_held: None,
            device_shared: false,
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
            neighbours: vec![],
            overall: Verdict::Fit,
            rules: RuleSet::Flash,
            dbms: crate::dbms::Dbms::SQLSERVER,
            settings: vec![],
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
            budget: None,
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
        assert!(v[0]
            .reasons
            .iter()
            .any(|x| x.rule == rules::RuleId::SimLongIo));
        assert_eq!(v[1].verdict, Verdict::Fit);
        // Warnings no file explains count against both roles.
        r.sim.as_mut().unwrap().files[0].ios_over_15s = 0;
        let f = facts(&r, &[]);
        assert_eq!(f.roles[0].sim_slow.long_io_warnings, 3);
        assert_eq!(f.roles[1].sim_slow.long_io_warnings, 3);
    }

    #[test]
    fn buffered_workloads_are_judged_by_their_flushes_only() {
        use crate::workload::{CacheMode, FlushKind};
        let mut r = result();
        r.dbms = crate::dbms::Dbms::ETCD;
        r.sim = None;
        r.stalls.clear();
        let buffered = |name: &str, role: Role, flush: Option<FlushMeasure>| ProfileMeasure {
            profile: "etcd-wal".into(),
            measure: Measure {
                cache: Some(CacheMode::Buffered),
                read_mean_us: None,
                write_mean_us: Some(3.0),
                flush,
                ..measure(name, role)
            },
            tables: vec![],
            deep_queue: false,
        };
        let timed = FlushMeasure {
            kind: FlushKind::Fdatasync,
            every: 1,
            ios: 5_000,
            mean_us: 900.0,
            p99_us: 14_000.0,
            p999_us: 20_000.0,
            max_us: 30_000.0,
        };
        r.profiles = vec![
            buffered("etcd-wal wal-append", Role::Log, Some(timed.clone())),
            buffered(
                "etcd-wal backend-commit",
                Role::Data,
                Some(FlushMeasure {
                    ios: 0,
                    ..timed.clone()
                }),
            ),
        ];
        let f = facts(&r, &[]);
        assert_eq!(f.dbms, crate::dbms::Dbms::ETCD);
        let (d, l) = (&f.roles[0], &f.roles[1]);
        // The page cache's writes are not judged, nor their tails.
        assert!(d.latency.is_empty() && l.latency.is_empty() && l.tails.is_empty());
        assert_eq!(l.flushes.len(), 1);
        assert_eq!(l.flushes[0].p99_us, 14_000.0);
        assert_eq!(d.flush_untimed, ["etcd-wal backend-commit"]);
        let (v, overall, _) = rules::judge(&f);
        assert_eq!(overall, Verdict::NotFit);
        assert_eq!(v[1].reasons[0].rule, rules::RuleId::EtcdWalFsync);
        assert_eq!(v[0].reasons[0].rule, rules::RuleId::FlushNotMeasured);
        // A direct workload of the same database is judged as before.
        r.profiles[0].measure.cache = Some(CacheMode::Direct);
        r.profiles[0].measure.flush = None;
        let f = facts(&r, &[]);
        assert_eq!(f.roles[1].latency.len(), 1);
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
