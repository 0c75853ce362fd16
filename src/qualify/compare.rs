//! Two qualifications compared: the verdict of each role then and now, each
//! workload's IOPS and mean latency with the repetitions' confidence where
//! there are some, and what regressed beyond a threshold. The one
//! implementation behind `iosim qualify --baseline` and `iosim compare` of
//! two stored qualifications (docs/qualify-storage.md, docs/history.md).
//!
//! A figure regressed when it is worse (less IOPS, more latency) by more
//! than the threshold ([`crate::comparison::beyond`], the rule of `run
//! --baseline`) and by more than its noise
//! ([`crate::comparison::family_noise_band_pct`]): the intervals of its
//! repetitions side by side (sweep points), or, for a figure measured once
//! (corners, profiles), the spread of its run's per-interval series that
//! the qualification stored; each band widened for the number of figures
//! compared (Bonferroni), so noise alone makes a regression of one of them
//! at most 5% of the time. A role's verdict that got worse (FIT, FIT WITH
//! WARNINGS, NOT FIT) is a regression too.

use std::fmt::Write as _;

use super::{BaselineComparison, Change, ChangeMetric, MeasureKind, QualifyResult};
use crate::comparison::{beyond, family_noise_band_pct, is_worse, rel_change, Noise, ALPHA};
use crate::sweep::analysis::Stat;
use crate::verdict::Role;

/// What one qualification against one other cannot tell.
pub const CAVEAT: &str = "a figure measured once (corners, profiles: \"single run\") is judged against the spread of its run's per-interval series, which understates the spread between runs on a busy machine; a sweep point against its repetitions' intervals; each band is widened for the number of figures compared (Bonferroni: noise alone takes any one of them past its band 5% of the time); only a difference beyond both the noise and the threshold is a regression, and never one of a figure whose run the CPU held (cpu_taken_by_others, cpu_bound_iosim) or another process shared the device with (device_used_by_others): it measured them as much as the storage";

/// One figure of a qualification: its mean, spread and repetitions.
struct Figure {
    kind: MeasureKind,
    role: Role,
    name: String,
    metric: ChangeMetric,
    stat: Stat,
    noise: Noise,
    /// The CPU held a run behind it.
    cpu_held: bool,
    /// Other processes used the device during a run behind it.
    device_shared: bool,
}

/// Every figure compared: the corners, the sweep points, the profiles' workloads.
fn figures(r: &QualifyResult) -> Vec<Figure> {
    let mut out = Vec::new();
    let measures = r.quick.iter().map(|m| (MeasureKind::Corner, m)).chain(
        r.profiles
            .iter()
            .map(|p| (MeasureKind::Profile, &p.measure)),
    );
    let mut sweeps = Vec::new();
    for s in &r.sweeps {
        for p in &s.result.points {
            let value = p.params.get(s.param.name()).cloned().unwrap_or_default();
            let name = format!("{}={value}", s.param);
            sweeps.push((s.role, name, p));
        }
    }
    // Corners first, then the sweeps, then the profiles: the order of the report.
    let (corners, profiles): (Vec<_>, Vec<_>) =
        measures.partition(|(k, _)| *k == MeasureKind::Corner);
    for (kind, m) in corners {
        push_measure(&mut out, kind, m);
    }
    for (role, name, p) in sweeps {
        for (metric, stat) in [
            (ChangeMetric::Iops, &p.iops),
            (ChangeMetric::MeanUs, &p.lat_mean_us),
        ] {
            out.push(Figure {
                kind: MeasureKind::Sweep,
                role,
                name: name.clone(),
                metric,
                noise: Noise::of((stat.n > 1).then_some(100.0 * stat.cv), stat.n),
                stat: stat.clone(),
                cpu_held: p.cpu_bound_runs > 0,
                device_shared: false,
            });
        }
    }
    for (kind, m) in profiles {
        push_measure(&mut out, kind, m);
    }
    out
}

fn push_measure(out: &mut Vec<Figure>, kind: MeasureKind, m: &super::Measure) {
    let [iops_spread, lat_spread] = m.spread_pct.unwrap_or_default();
    let metrics = [
        (ChangeMetric::Iops, Some(m.iops), iops_spread),
        (ChangeMetric::ReadMeanUs, m.read_mean_us, lat_spread),
        (ChangeMetric::WriteMeanUs, m.write_mean_us, lat_spread),
    ];
    for (metric, v, spread) in metrics {
        if let Some(v) = v {
            out.push(Figure {
                kind,
                role: m.role,
                name: m.name.clone(),
                metric,
                stat: Stat::of(&[v]),
                noise: Noise::of(spread, 1),
                cpu_held: m.cpu_held.is_some(),
                device_shared: m.device_shared,
            });
        }
    }
}

/// The change of one figure; `regressed` when worse beyond `threshold_pct`
/// (when given) and not within the repetitions' noise.
/// `family` is the number of figures compared at once (the noise band is
/// widened for it: [`family_noise_band_pct`]).
fn change(then: &Figure, now: &Figure, threshold_pct: Option<f64>, family: usize) -> Change {
    let rel_pct = rel_change(then.stat.mean, now.stat.mean);
    let welch = crate::stats::welch_summary(
        (then.stat.mean, then.stat.sd, then.stat.n),
        (now.stat.mean, now.stat.sd, now.stat.n),
    );
    let worse = rel_pct.is_some_and(|r| is_worse(r, now.metric.higher_is_better()));
    let noise_pct = family_noise_band_pct(then.noise, now.noise, family);
    let within_noise = rel_pct.is_some_and(|r| !beyond(r, noise_pct));
    // A figure the CPU held measures the CPU as much as the storage: never
    // blame the storage for what another process (or iosim itself) did.
    let cpu_held = then.cpu_held || now.cpu_held;
    // Nor for what another process's I/O on the device did.
    let device_shared = then.device_shared || now.device_shared;
    let regressed = match (rel_pct, threshold_pct) {
        (Some(r), Some(t)) => worse && beyond(r, t) && !within_noise && !cpu_held && !device_shared,
        _ => false,
    };
    let ci = |s: &Stat| (s.n > 1).then_some(s.ci95);
    Change {
        kind: now.kind,
        role: now.role,
        name: now.name.clone(),
        metric: now.metric,
        then: then.stat.mean,
        now: now.stat.mean,
        then_ci95: ci(&then.stat),
        now_ci95: ci(&now.stat),
        rel_pct,
        welch,
        worse,
        regressed,
        noise_pct: Some(noise_pct),
        single_run: then.stat.n < 2 || now.stat.n < 2,
        cpu_held,
        device_shared,
    }
}

/// A role's verdict that got worse only by `untrusted` self-check findings
/// (the CPU taken, a cache answering): every reason it has now and had not
/// then (by rule and level) is one. Such a change says the measurement
/// changed, not the storage.
fn worse_only_by_untrusted(
    then: &super::rules::RoleVerdict,
    now: &super::rules::RoleVerdict,
) -> bool {
    use super::rules::RuleId;
    let mut new = now.reasons.iter().filter(|x| {
        !then
            .reasons
            .iter()
            .any(|t| t.rule == x.rule && t.level >= x.level)
    });
    let first = new.next();
    first.is_some_and(|x| x.rule == RuleId::Untrusted) && new.all(|x| x.rule == RuleId::Untrusted)
}

/// Compares `now` with the earlier qualification `then` (stored as run
/// `then_id`, started at `then_started`); `now_id` is `now`'s run id when
/// it is stored. With a threshold, the regressions are listed.
pub fn compare(
    then_id: i64,
    then_started: &str,
    then: &QualifyResult,
    now_id: Option<i64>,
    now: &QualifyResult,
    threshold_pct: Option<f64>,
) -> BaselineComparison {
    let before = figures(then);
    let pairs: Vec<(&Figure, Figure)> = figures(now)
        .into_iter()
        .filter_map(|f| {
            let b = before.iter().find(|b| {
                b.kind == f.kind && b.role == f.role && b.name == f.name && b.metric == f.metric
            })?;
            Some((b, f))
        })
        .collect();
    let family = pairs.len();
    let workloads: Vec<Change> = pairs
        .iter()
        .map(|(b, f)| change(b, f, threshold_pct, family))
        .collect();
    let roles: Vec<_> = now
        .verdicts
        .iter()
        .filter_map(|v| {
            then.verdicts
                .iter()
                .find(|b| b.role == v.role)
                .map(|b| (v.role, b.verdict, v.verdict))
        })
        .collect();
    let mut regressions = Vec::new();
    if let Some(t) = threshold_pct {
        for (role, a, b) in &roles {
            // A verdict worse only by `untrusted` findings (the CPU taken,
            // a cache answering) says the measurement changed, not the storage.
            let untrusted_only = matches!(
                (
                    then.verdicts.iter().find(|v| v.role == *role),
                    now.verdicts.iter().find(|v| v.role == *role),
                ),
                (Some(t), Some(n)) if worse_only_by_untrusted(t, n)
            );
            if b > a && !untrusted_only {
                regressions.push(format!(
                    "{} verdict {} -> {}",
                    role.name(),
                    a.label(),
                    b.label()
                ));
            }
        }
        for c in workloads.iter().filter(|c| c.regressed) {
            regressions.push(format!(
                "{} {} {} {} {} ({}, beyond noise ±{:.1}%{}, threshold {t}%)",
                c.role.name(),
                c.kind.name(),
                c.name,
                c.metric.label(),
                arrow(c),
                pct(c.rel_pct),
                c.noise_pct.unwrap_or(0.0),
                if c.single_run { ", single run" } else { "" }
            ));
        }
    }
    let mut caveat = CAVEAT.to_string();
    let which = match (then.preliminary, now.preliminary) {
        (true, true) => Some("both qualifications are"),
        (true, false) => Some("the earlier qualification is"),
        (false, true) => Some("this qualification is"),
        (false, false) => None,
    };
    if let Some(which) = which {
        let _ = write!(
            caveat,
            "; {which} PRELIMINARY (a budget under the minimum): a first look, not figures to hold a storage to"
        );
    }
    BaselineComparison {
        id: then_id,
        started_at: then_started.to_string(),
        overall: then.overall,
        changes: lines(&workloads),
        roles,
        caveat,
        now_id,
        now_overall: Some(now.overall),
        workloads,
        threshold_pct,
        regressions,
    }
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn with_ci(v: f64, ci: Option<f64>) -> String {
    match ci {
        Some(c) => format!("{} ±{}", num(v), num(c)),
        None => num(v),
    }
}

fn arrow(c: &Change) -> String {
    format!(
        "{} -> {}",
        with_ci(c.then, c.then_ci95),
        with_ci(c.now, c.now_ci95)
    )
}

fn pct(p: Option<f64>) -> String {
    p.map_or_else(|| "-".into(), |p| format!("{p:+.1}%"))
}

/// One figure's change in words: `IOPS 33190 ±640 -> 30000 ±700 (-9.6%,
/// within noise ±12%, p = 0.21)`, or `(-54.0%, within noise ±60%, single
/// run)` for a figure measured once.
fn words(c: &Change) -> String {
    let noise = match (c.noise_pct, c.rel_pct) {
        (Some(n), Some(r)) if !beyond(r, n) => format!(", within noise ±{n:.1}%"),
        (Some(n), _) => format!(", beyond noise ±{n:.1}%"),
        _ => String::new(),
    };
    let test = match c.welch {
        Some(w) if w.p < ALPHA => format!(", p = {:.3}", w.p),
        Some(w) => format!(", p = {:.2}", w.p),
        None => String::new(),
    };
    format!(
        "{} {} ({}{noise}{test}{}{}){}",
        c.metric.label(),
        arrow(c),
        pct(c.rel_pct),
        if c.single_run { ", single run" } else { "" },
        if c.cpu_held {
            ", not judged: the CPU held a run behind it"
        } else if c.device_shared {
            ", not judged: another process used the device during a run behind it"
        } else {
            ""
        },
        if c.regressed { " REGRESSED" } else { "" }
    )
}

/// One line per workload: its figures' changes.
fn lines(ws: &[Change]) -> Vec<String> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for c in ws {
        let key = format!("{:<7} {:<8} {}", c.role.name(), c.kind.name(), c.name);
        match out.iter_mut().find(|x| x.0 == key) {
            Some(x) => x.1.push(words(c)),
            None => out.push((key, vec![words(c)])),
        }
    }
    out.into_iter()
        .map(|(k, v)| format!("{k}: {}", v.join(", ")))
        .collect()
}

/// The comparison in text: the heading, each role's verdict then and now,
/// each workload's changes, the regressions and the caveat.
pub fn text(b: &BaselineComparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} qualification {} of {} (then {}{}):",
        b.now_id.map_or_else(
            || "Against".to_string(),
            |n| format!("Qualification {n} against")
        ),
        b.id,
        b.started_at,
        b.overall.label(),
        b.now_overall
            .map(|v| format!(", now {}", v.label()))
            .unwrap_or_default()
    );
    for (role, then, now) in &b.roles {
        let _ = writeln!(
            s,
            "  {:<7} {} -> {}",
            role.name(),
            then.label(),
            now.label()
        );
    }
    if !b.workloads.is_empty() {
        let _ = writeln!(
            s,
            "  Workloads, then -> now (± the 95% confidence interval over a sweep point's repetitions; noise: the difference the figures' spread alone reaches; single run: measured once, its spread that of its run's intervals; latency in us):"
        );
    }
    for c in &b.changes {
        let _ = writeln!(s, "  {c}");
    }
    if let Some(t) = b.threshold_pct {
        if b.regressions.is_empty() {
            let _ = writeln!(
                s,
                "  No regression beyond {t}%: no role's verdict got worse, no IOPS or mean latency worse by more than {t}% and by more than its noise (a difference within noise is not one)."
            );
        } else {
            let _ = writeln!(s, "  REGRESSIONS beyond {t}%:");
            for r in &b.regressions {
                let _ = writeln!(s, "    {r}");
            }
        }
    }
    let _ = writeln!(s, "  note: {}", b.caveat);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qualify::rules::{RoleVerdict, Verdict};
    use crate::qualify::{Measure, ProfileMeasure};

    fn measure(name: &str, role: Role, iops: f64, write_us: f64) -> Measure {
        Measure {
            name: name.into(),
            role,
            path: "/data/f".into(),
            workload: "write 4KiB qd1".into(),
            bs: 4096,
            duration_s: 1.0,
            iops,
            mib_per_sec: iops / 256.0,
            read_mean_us: None,
            write_mean_us: Some(write_us),
            p99_us: write_us * 2.0,
            p999_us: write_us * 3.0,
            max_us: write_us * 4.0,
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

    fn result(commit_iops: f64, commit_us: f64, log: Verdict) -> QualifyResult {
        let doc = serde_json::json!({
            "overall": log.label(), "trustworthy": true, "verdicts": [], "recommendations": [],
            "time_budget_s": 60.0, "setup_s": 0.0, "measure_s": 60.0, "locations": [], "stages": [],
            "quick": [], "sweeps": [], "profiles": [], "sim": null, "checks": [], "baseline": null,
            "notes": [], "left_on_disk": [], "interrupted": false
        });
        let mut r: QualifyResult = serde_json::from_value(doc).unwrap();
        r.verdicts = vec![
            RoleVerdict {
                role: Role::Data,
                verdict: Verdict::Fit,
                reasons: vec![],
                passed: vec![],
            },
            RoleVerdict {
                role: Role::Log,
                verdict: log,
                reasons: vec![],
                passed: vec![],
            },
        ];
        r.profiles = vec![ProfileMeasure {
            profile: "log-writer".into(),
            measure: measure("log-writer commit-4k", Role::Log, commit_iops, commit_us),
            tables: vec![],
            deep_queue: false,
        }];
        r
    }

    #[test]
    fn a_slower_log_and_a_worse_verdict_regress_beyond_the_threshold() {
        let then = result(5000.0, 200.0, Verdict::Fit);
        let now = result(2250.0, 444.0, Verdict::NotFit);
        let b = compare(7, "2026-11-01T00:00:00Z", &then, None, &now, Some(10.0));
        assert_eq!(
            b.roles,
            [
                (Role::Data, Verdict::Fit, Verdict::Fit),
                (Role::Log, Verdict::Fit, Verdict::NotFit)
            ]
        );
        let iops = &b.workloads[0];
        assert_eq!(iops.metric, ChangeMetric::Iops);
        assert!((iops.rel_pct.unwrap() + 55.0).abs() < 1e-9);
        assert!(iops.worse && iops.regressed && iops.welch.is_none());
        assert!(b.workloads[1].regressed, "write mean +122%");
        assert_eq!(b.regressions.len(), 3, "{:?}", b.regressions);
        assert_eq!(b.regressions[0], "log verdict FIT -> NOT FIT");
        assert!(
            b.regressions[1]
                .starts_with("log profile log-writer commit-4k IOPS 5000 -> 2250 (-55.0%"),
            "{:?}",
            b.regressions
        );
        let t = text(&b);
        assert!(t.contains("REGRESSIONS beyond 10%"), "{t}");
        assert!(t.contains("log-writer commit-4k: IOPS 5000 -> 2250 (-55.0%, beyond noise ±47.5%, single run) REGRESSED, write mean us 200 -> 444 (+122.0%, beyond noise ±47.5%, single run) REGRESSED"), "{t}");
        // Issue 37: single runs whose intervals spread by 30% each cannot
        // tell -55% from noise (±95% for two figures): within noise, no regression.
        let noisy = |mut r: QualifyResult| {
            r.profiles[0].measure.spread_pct = Some([Some(30.0), Some(30.0)]);
            r
        };
        let b = compare(
            7,
            "",
            &noisy(then.clone()),
            None,
            &noisy(result(2250.0, 444.0, Verdict::Fit)),
            Some(10.0),
        );
        assert!(
            b.regressions.iter().all(|r| !r.contains(" IOPS ")),
            "{:?}",
            b.regressions
        );
        assert!(
            text(&b).contains("(-55.0%, within noise ±95.1%, single run)"),
            "{}",
            text(&b)
        );
        // Within the threshold, or without one: nothing regressed.
        let b = compare(
            7,
            "",
            &then,
            None,
            &result(4800.0, 210.0, Verdict::Fit),
            Some(10.0),
        );
        assert!(b.regressions.is_empty() && b.workloads.iter().all(|c| c.worse && !c.regressed));
        assert!(text(&b).contains("No regression beyond 10%"));
        let b = compare(7, "", &then, Some(8), &now, None);
        assert!(b.regressions.is_empty() && b.workloads.iter().all(|c| !c.regressed));
        assert!(text(&b).starts_with("Qualification 8 against qualification 7"));
        // Faster is no regression however far.
        let b = compare(7, "", &now, None, &then, Some(1.0));
        assert!(b.regressions.is_empty(), "{:?}", b.regressions);
    }

    #[test]
    fn repetitions_tell_a_regression_from_noise() {
        let s = |mean: f64, sd: f64| Stat {
            mean,
            sd,
            ci95: sd * 4.3,
            cv: sd / mean,
            n: 3,
        };
        let f = |stat: Stat| Figure {
            kind: MeasureKind::Sweep,
            role: Role::Data,
            name: "qd=8".into(),
            metric: ChangeMetric::Iops,
            noise: Noise::of(Some(100.0 * stat.cv), stat.n),
            stat,
            cpu_held: false,
            device_shared: false,
        };
        // -20% but the repetitions spread over ±30%: within the noise.
        let c = change(&f(s(1000.0, 300.0)), &f(s(800.0, 300.0)), Some(10.0), 1);
        assert!(c.worse && !c.regressed, "{c:?}");
        assert!(c.welch.unwrap().p > ALPHA);
        assert!(words(&c).contains("within noise"), "{}", words(&c));
        // -20% with tight repetitions: a regression.
        let c = change(&f(s(1000.0, 10.0)), &f(s(800.0, 10.0)), Some(10.0), 1);
        assert!(c.regressed, "{c:?}");
        assert!(words(&c).contains("beyond noise"), "{}", words(&c));
        assert_eq!(c.then_ci95, Some(43.0));
        // Issue 37: two repetitions, significant by Welch's test, but their
        // 95% intervals (±98% and ±244%) overlap: within noise.
        let two = |mean: f64, sd: f64| Stat {
            mean,
            sd,
            ci95: crate::stats::t_975(1) * sd / 2f64.sqrt(),
            cv: sd / mean,
            n: 2,
        };
        let c = change(
            &f(two(20472.0, 366.0)),
            &f(two(15535.0, 535.0)),
            Some(10.0),
            1,
        );
        assert!(c.worse && !c.regressed, "{c:?}");
        assert!(c.welch.unwrap().p < ALPHA, "{c:?}");
        assert!(words(&c).contains("within noise"), "{}", words(&c));
        // Tight repetitions, -20%, but a run behind one side was CPU-bound:
        // shown, never a regression of the storage.
        let mut held = f(s(800.0, 10.0));
        held.cpu_held = true;
        let c = change(&f(s(1000.0, 10.0)), &held, Some(10.0), 1);
        assert!(c.worse && !c.regressed && c.cpu_held, "{c:?}");
        assert!(
            words(&c).contains("not judged: the CPU held a run"),
            "{}",
            words(&c)
        );
        // Nor when another process used the device behind one side (a
        // corner at 0 IOPS beside a disk writer, against 425).
        let mut shared = f(s(0.0, 0.0));
        shared.device_shared = true;
        let c = change(&f(s(425.0, 1.0)), &shared, Some(10.0), 1);
        assert!(c.worse && !c.regressed && c.device_shared, "{c:?}");
        assert!(
            words(&c).contains("not judged: another process used the device"),
            "{}",
            words(&c)
        );
    }
    /// Issue 37: a qualification compares about a hundred figures; at 95%
    /// each, five would cross their bands by chance. The band is widened
    /// for the family (Bonferroni): +69.4% against two short runs' 25%
    /// spreads crosses ±69.3% alone, not ±123% among a hundred.
    #[test]
    fn many_figures_compared_widen_each_band() {
        let f = |v: f64| Figure {
            kind: MeasureKind::Profile,
            role: Role::Data,
            name: "read-ahead scan-512k".into(),
            metric: ChangeMetric::ReadMeanUs,
            stat: Stat::of(&[v]),
            noise: Noise::of(Some(crate::comparison::SHORT_RUN_SPREAD_PCT), 1),
            cpu_held: false,
            device_shared: false,
        };
        let alone = change(&f(29472.0), &f(49926.0), Some(10.0), 1);
        assert!(alone.regressed, "{alone:?}");
        assert!((alone.noise_pct.unwrap() - 69.3).abs() < 0.05);
        let among = change(&f(29472.0), &f(49926.0), Some(10.0), 100);
        assert!(among.worse && !among.regressed, "{among:?}");
        assert!((among.noise_pct.unwrap() - 123.1).abs() < 0.5, "{among:?}");
        // A throttle's -90% latency rise (x10) is beyond any such band.
        let slow = change(&f(600.0), &f(5738.0), Some(10.0), 100);
        assert!(slow.regressed, "{slow:?}");
    }

    /// A verdict worse only by `untrusted` findings is no regression of the
    /// storage; one worse by a rule about the storage is.
    #[test]
    fn a_verdict_worse_only_by_untrusted_findings_is_not_the_storages() {
        use crate::qualify::rules::{Level, Reason, RoleVerdict, RuleId, Verdict};
        let reason = |rule: RuleId, level: Level| -> Reason {
            serde_json::from_value(serde_json::json!({
                "role": "data", "level": level, "rule": rule, "measured": "m",
                "limit": "l", "source_tag": "[t]", "source": "s", "url": ""
            }))
            .unwrap()
        };
        let v = |verdict: Verdict, reasons: Vec<Reason>| RoleVerdict {
            role: Role::Data,
            verdict,
            reasons,
            passed: vec![],
        };
        let cache = reason(RuleId::CacheSizedTest, Level::Warning);
        let then = v(Verdict::FitWithWarnings, vec![cache.clone()]);
        let cpu = v(
            Verdict::FitWithWarnings,
            vec![cache.clone(), reason(RuleId::Untrusted, Level::Warning)],
        );
        assert!(worse_only_by_untrusted(&then, &cpu));
        let slow = v(
            Verdict::NotFit,
            vec![
                cache.clone(),
                reason(RuleId::Untrusted, Level::Warning),
                reason(RuleId::DataLatency, Level::Fail),
            ],
        );
        assert!(!worse_only_by_untrusted(&then, &slow));
        // A label changed with no new reason is taken as it is.
        assert!(!worse_only_by_untrusted(
            &then,
            &v(Verdict::NotFit, vec![cache])
        ));
    }
}
