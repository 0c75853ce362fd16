//! The rules on fixed data, each firing and not firing.

use super::super::recommend::recommendations;
use super::*;
use crate::sysmon::check::WarningCode;
use crate::verdict::Direction;
use crate::workload::FlushKind;

fn role(role: Role) -> RoleFacts {
    RoleFacts {
        role,
        latency: vec![],
        knee: None,
        throughput: vec![],
        io_errors: 0,
        untrusted: vec![],
        sim_errors: 0,
        tails: vec![],
        slow: SlowFact::default(),
        sim_slow: SimSlowFact::default(),
        cache: None,
        flushes: vec![],
        flush_untimed: vec![],
        rate_limit: None,
        neighbour: None,
    }
}

fn lat(what: &str, d: Direction, ms: f64) -> LatencyFact {
    LatencyFact {
        what: what.into(),
        direction: d,
        mean_us: ms * 1000.0,
    }
}

fn facts(roles: Vec<RoleFacts>) -> Facts {
    Facts {
        roles,
        sim_completed: Some(true),
        sim_errors_by_class: vec![],
        log_shares_data: false,
        commit_alone_us: None,
        commit_with_data_us: None,
        rules: RuleSet::Classic,
        dbms: Dbms::SQLSERVER,
    }
}

fn tail(what: &str, ios: u64, p99_ms: f64, p999_ms: f64, max_ms: f64) -> TailFact {
    TailFact {
        what: what.into(),
        ios,
        p99_us: p99_ms * 1000.0,
        p999_us: p999_ms * 1000.0,
        max_us: max_ms * 1000.0,
    }
}

#[test]
fn fast_storage_is_fit() {
    let mut d = role(Role::Data);
    d.latency.push(lat("oltp data-8k", Direction::Read, 0.4));
    let mut l = role(Role::Log);
    l.latency.push(lat("commit-4k", Direction::Write, 0.2));
    let (v, overall, trusted) = judge(&facts(vec![d, l]));
    assert!(v
        .iter()
        .all(|r| r.verdict == Verdict::Fit && r.reasons.is_empty()));
    assert_eq!(overall, Verdict::Fit);
    assert!(trusted);
}

#[test]
fn data_latency_warns_then_fails() {
    let mut d = role(Role::Data);
    d.latency.push(lat("oltp data-8k", Direction::Read, 10.0));
    assert_eq!(
        judge_role(&d, None).verdict,
        Verdict::Fit,
        "10 ms is not above 10 ms"
    );
    d.latency[0].mean_us = 12_000.0;
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].source_tag, "[Randal]");
    assert!(
        v.reasons[0].line().contains("12.0 ms"),
        "{}",
        v.reasons[0].line()
    );
    d.latency[0].mean_us = 25_000.0;
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons[0].rule, RuleId::DataLatency);
    assert_eq!(v.reasons[0].source_tag, "[DiskSpd-SQL]");
}

#[test]
fn log_latency_judges_writes_only() {
    let mut l = role(Role::Log);
    l.latency
        .push(lat("log-writer commit-4k", Direction::Read, 30.0));
    assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
    l.latency
        .push(lat("log-writer commit-4k", Direction::Write, 1.9));
    assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
    l.latency[1].mean_us = 3_000.0;
    let v = judge_role(&l, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].source_tag, "[Log-vs-data]");
    l.latency[1].mean_us = 19_800.0;
    let v = judge_role(&l, None);
    assert_eq!(v.verdict, Verdict::NotFit);
    let line = v.reasons[0].line();
    assert!(line.contains("commit-4k write mean 19.8 ms"), "{line}");
    assert!(line.contains("above 4 ms"), "{line}");
    assert!(line.contains("[MS-2012]"), "{line}");
}

#[test]
fn deep_queue_work_is_judged_at_the_knee_not_by_its_mean() {
    let mut d = role(Role::Data);
    // A 128-deep scan's mean is queueing by design: it is no latency fact.
    d.throughput.push(ThroughputFact {
        what: "read-ahead scan-512k".into(),
        mib_s: 900.0,
        reference: "seq read 1M QD8".into(),
        reference_mib_s: 1000.0,
    });
    d.knee = Some(KneeFact {
        param: crate::sweep::Param::Qd,
        at: 16.0,
        iops: 50_000.0,
        mean_us: 320.0,
        max_iops: 52_000.0,
        growth_after: 3.0,
        before_last: true,
        proven: true,
    });
    assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
    d.knee.as_mut().unwrap().mean_us = 21_000.0;
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons[0].rule, RuleId::KneeLatency);
    d.knee.as_mut().unwrap().mean_us = 320.0;
    d.throughput[0].mib_s = 400.0;
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].rule, RuleId::DeepThroughput);
}

#[test]
fn errors_make_a_role_not_fit() {
    let mut d = role(Role::Data);
    d.io_errors = 1;
    let v = judge_role(&d, Some(true));
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons[0].rule, RuleId::IoErrors);
    let mut d = role(Role::Data);
    d.sim_errors = 3;
    let v = judge_role(&d, Some(true));
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons[0].source_tag, "[SQLIOSim]");
    let d = role(Role::Data);
    assert_eq!(
        judge_role(&d, Some(false)).verdict,
        Verdict::FitWithWarnings
    );
    let b = role(Role::Backup);
    assert_eq!(judge_role(&b, Some(false)).verdict, Verdict::Fit);
}

#[test]
fn self_check_failures_mark_numbers_untrustworthy() {
    let mut d = role(Role::Data);
    d.latency.push(lat("oltp data-8k", Direction::Read, 0.05));
    d.untrusted
        .push((WarningCode::CacheAnsweredReads, "a cache answered".into()));
    let f = facts(vec![d]);
    let (v, overall, trusted) = judge(&f);
    assert!(!trusted);
    assert_eq!(overall, Verdict::FitWithWarnings);
    assert!(v[0].reasons[0].line().contains("not trustworthy"));
    assert!(recommendations(&f)
        .iter()
        .any(|r| r.contains("not trustworthy")));
    // Two roles with the same finding: one recommendation.
    let mut l = role(Role::Log);
    l.untrusted
        .push((WarningCode::CacheAnsweredReads, "a cache answered".into()));
    let mut d = role(Role::Data);
    d.untrusted
        .push((WarningCode::CacheAnsweredReads, "a cache answered".into()));
    let r: Vec<String> = recommendations(&facts(vec![d, l]))
        .into_iter()
        .filter(|r| r.contains("not trustworthy"))
        .collect();
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(
        r[0].starts_with("the numbers for data and log are not trustworthy (cache_answered_reads)"),
        "{}",
        r[0]
    );
}

#[test]
fn a_test_file_a_cache_can_hold_warns() {
    const G: u64 = 1 << 30;
    let mut d = role(Role::Data);
    d.cache = Some(CacheFact {
        size: G,
        device: false,
        given: None,
        host_memory: 24 * G,
    });
    let mut l = d.clone();
    l.role = Role::Log;
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    let line = v.reasons[0].line();
    assert!(
        line.starts_with("test file of 1GiB: smaller than this host's memory (24GiB; no --cache-size given): the numbers may describe a cache"),
        "{line}"
    );
    assert!(line.contains("cache-sized-test [Marks-cache]"), "{line}");
    let rs = recommendations(&facts(vec![d.clone(), l]));
    assert_eq!(
        rs,
        ["qualify again with --size 24G or more: the data and log test files (1GiB each) are smaller than this host's memory (24GiB; no --cache-size given), or give the array's cache with --cache-size"]
    );
    // As large as the host's memory: no warning.
    d.cache.as_mut().unwrap().size = 24 * G;
    assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
    // The array's cache given: three times it, and the host's memory no longer counts.
    d.cache.as_mut().unwrap().given = Some(16 * G);
    let v = judge_role(&d, None);
    assert!(
        v.reasons[0]
            .limit
            .starts_with("smaller than 3x the 16GiB cache given with --cache-size"),
        "{:?}",
        v.reasons
    );
    assert_eq!(
        recommendations(&facts(vec![d.clone()])),
        ["qualify again with --size 48G or more: the data test file (24GiB) is smaller than 3x the 16GiB cache given with --cache-size"]
    );
    d.cache.as_mut().unwrap().size = 48 * G;
    assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
    d.cache.as_mut().unwrap().size = 100 << 20;
    d.cache.as_mut().unwrap().given = Some(0);
    assert_eq!(
        judge_role(&d, None).verdict,
        Verdict::Fit,
        "--cache-size 0: no cache"
    );
    // A device used whole.
    let c = CacheFact {
        size: 96 << 20,
        device: true,
        given: Some(64 << 20),
        host_memory: 0,
    };
    assert_eq!(c.fires().unwrap().0, 192 << 20);
    d.cache = Some(c);
    assert!(judge_role(&d, None).reasons[0]
        .measured
        .starts_with("device of 96MiB"));
}

#[test]
fn overall_is_the_worst_role() {
    let d = role(Role::Data);
    let mut l = role(Role::Log);
    l.latency.push(lat("commit-4k", Direction::Write, 8.0));
    let (_, overall, _) = judge(&facts(vec![d, l]));
    assert_eq!(overall, Verdict::NotFit);
}

#[test]
fn recommendations_come_from_the_measurements() {
    let mut d = role(Role::Data);
    d.knee = Some(KneeFact {
        param: crate::sweep::Param::Qd,
        at: 16.0,
        iops: 50_000.0,
        mean_us: 320.0,
        max_iops: 52_000.0,
        growth_after: 3.0,
        before_last: true,
        proven: true,
    });
    let mut f = facts(vec![d]);
    f.log_shares_data = true;
    f.commit_alone_us = Some(171.0);
    f.commit_with_data_us = Some(252.0);
    let rs = recommendations(&f);
    assert!(
        rs.iter()
            .any(|r| r.starts_with("the data's I/Os gain nothing past 16 outstanding I/Os: beyond it latency grows 3.0x for 4% more IOPS; SQL Server has no queue-depth setting")),
        "{rs:?}"
    );
    // Issue 37: a knee whose plateau the repetitions do not prove moves
    // with the spread between qualifications: no advice from it.
    f.roles[0].knee.as_mut().unwrap().proven = false;
    assert!(
        !recommendations(&f)
            .iter()
            .any(|r| r.contains("gain nothing")),
        "{rs:?}"
    );
    f.roles[0].knee.as_mut().unwrap().proven = true;
    assert!(rs.iter().any(|r| r == "put the log on its own device: commit latency 252 -> 171 us measured (beside data I/O -> alone)"), "{rs:?}");
    // Not firing: separate devices, a knee at the last point, similar commits.
    f.log_shares_data = false;
    f.roles[0].knee.as_mut().unwrap().max_iops = 120_000.0;
    assert!(
        recommendations(&f).is_empty(),
        "a knee far below the best is no plateau"
    );
    f.roles[0].knee.as_mut().unwrap().max_iops = 52_000.0;
    f.roles[0].knee.as_mut().unwrap().before_last = false;
    assert!(recommendations(&f).is_empty());
    f.log_shares_data = true;
    f.commit_with_data_us = Some(180.0);
    assert!(recommendations(&f).is_empty());
    f.sim_errors_by_class = vec![("torn_page".into(), 2)];
    assert!(recommendations(&f)[0].contains("2 torn_page"));
}

#[test]
fn tails_of_data_pages_warn_then_fail_one_line_per_workload() {
    let mut d = role(Role::Data);
    // Issue 24: a 1.5 ms mean with a 482 ms maximum passes the classic means.
    d.latency.push(lat("oltp data-8k", Direction::Read, 1.5));
    d.tails.push(tail("oltp data-8k", 50_000, 4.0, 60.0, 482.0));
    assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
    // ... and not the flash table's maximum.
    let v = judge_role_with(&d, None, RuleSet::Flash);
    assert_eq!(v.verdict, Verdict::FitWithWarnings, "{v:?}");
    let r: Vec<&RuleId> = v.reasons.iter().map(|r| &r.rule).collect();
    assert_eq!(
        r,
        [&RuleId::DataLatency, &RuleId::TailP99_9],
        "p99.9 60 ms > 20 ms comes before the max"
    );
    // Classic p99 above 100 ms warns, above 500 ms fails.
    d.tails[0] = tail("oltp data-8k", 50_000, 150.0, 300.0, 480.0);
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons.len(), 1, "one line per workload: {v:?}");
    assert_eq!(v.reasons[0].rule, RuleId::TailP99);
    let line = v.reasons[0].line();
    assert!(
        line.contains("oltp data-8k p99 150.0 ms: above 100 ms (1 I/O in 100)"),
        "{line}"
    );
    assert_eq!(v.reasons[0].source_tag, "[Randal]");
    d.tails[0] = tail("oltp data-8k", 50_000, 600.0, 700.0, 900.0);
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons[0].rule, RuleId::TailP99);
    // p99.9 and the maximum warn on their own.
    d.tails[0] = tail("oltp data-8k", 50_000, 20.0, 520.0, 530.0);
    let v = judge_role(&d, None);
    assert_eq!(v.reasons[0].rule, RuleId::TailP99_9);
    d.tails[0] = tail("oltp data-8k", 50_000, 20.0, 90.0, 530.0);
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].rule, RuleId::TailMax);
    // Too few I/Os for a percentile: only the maximum is judged.
    d.tails[0] = tail("oltp data-8k", 50, 600.0, 600.0, 400.0);
    assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
}

#[test]
fn tails_of_log_writes_have_their_own_limits() {
    let mut l = role(Role::Log);
    l.tails
        .push(tail("log-writer commit-4k", 5_000, 15.0, 40.0, 90.0));
    assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
    l.tails[0].p99_us = 25_000.0;
    let v = judge_role(&l, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].rule, RuleId::TailP99);
    assert_eq!(v.reasons[0].source_tag, "[DiskSpd-SQL]");
    l.tails[0].p99_us = 120_000.0;
    assert_eq!(judge_role(&l, None).verdict, Verdict::NotFit);
    // The same commits under the flash table.
    let mut l = role(Role::Log);
    l.tails
        .push(tail("log-writer commit-4k", 5_000, 3.0, 8.0, 90.0));
    assert_eq!(
        judge_role_with(&l, None, RuleSet::Flash).verdict,
        Verdict::Fit
    );
    l.tails[0].p99_us = 6_000.0;
    let v = judge_role_with(&l, None, RuleSet::Flash);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    l.tails[0].p99_us = 21_000.0;
    assert_eq!(
        judge_role_with(&l, None, RuleSet::Flash).verdict,
        Verdict::NotFit
    );
}

#[test]
fn the_flash_table_is_stricter_on_means() {
    let mut d = role(Role::Data);
    d.latency.push(lat("oltp data-8k", Direction::Read, 0.9));
    let mut l = role(Role::Log);
    l.latency.push(lat("commit-4k", Direction::Write, 0.9));
    for f in [&d, &l] {
        assert_eq!(
            judge_role_with(f, None, RuleSet::Flash).verdict,
            Verdict::Fit
        );
    }
    d.latency[0].mean_us = 3_000.0;
    l.latency[0].mean_us = 1_500.0;
    let (vd, vl) = (
        judge_role_with(&d, None, RuleSet::Flash),
        judge_role_with(&l, None, RuleSet::Flash),
    );
    assert_eq!(vd.verdict, Verdict::FitWithWarnings);
    assert_eq!(vd.reasons[0].source_tag, "[Dell-flash]");
    assert_eq!(vl.verdict, Verdict::FitWithWarnings);
    assert_eq!(vl.reasons[0].source_tag, "[Azure-PremiumV2]");
    // Fit by the classic table.
    assert_eq!(judge_role(&d, None).verdict, Verdict::Fit);
    assert_eq!(judge_role(&l, None).verdict, Verdict::Fit);
    d.latency[0].mean_us = 6_000.0;
    l.latency[0].mean_us = 2_500.0;
    assert_eq!(
        judge_role_with(&d, None, RuleSet::Flash).verdict,
        Verdict::NotFit
    );
    assert_eq!(
        judge_role_with(&l, None, RuleSet::Flash).verdict,
        Verdict::NotFit
    );
    // judge() uses the table the facts name.
    let mut f = facts(vec![d]);
    assert_eq!(judge(&f).1, Verdict::Fit);
    f.rules = RuleSet::Flash;
    assert_eq!(judge(&f).1, Verdict::NotFit);
}

#[test]
fn slow_ios_warn_and_stalls_over_15_s_are_not_fit() {
    let mut d = role(Role::Data);
    assert!(judge_role(&d, None).reasons.is_empty());
    d.slow = SlowFact {
        over_1s: 3,
        over_15s: 0,
        max_us: 1_210_000.0,
        max_in: "quick rand read 4K QD32".into(),
    };
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].rule, RuleId::SlowIo);
    assert_eq!(v.reasons[0].source_tag, "[MS-IO]");
    assert_eq!(
        v.reasons[0].measured,
        "3 I/O(s) over 1 s in the measurements on this location (slowest 1.21 s, in quick rand read 4K QD32)"
    );
    d.slow.over_1s = 4;
    d.slow.over_15s = 1;
    d.slow.max_us = 16_000_000.0;
    let v = judge_role(&d, None);
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(
        v.reasons.len(),
        1,
        "the stall, not also the slow I/Os: {v:?}"
    );
    assert_eq!(v.reasons[0].rule, RuleId::StalledIo);
    assert_eq!(v.reasons[0].source_tag, "[MS-833]");
    assert!(v.reasons[0].line().contains("error 833"));
    // Both tables count the same.
    assert_eq!(
        judge_role_with(&d, None, RuleSet::Flash).verdict,
        Verdict::NotFit
    );
}

#[test]
fn the_simulators_long_ios_join_the_verdict() {
    let mut d = role(Role::Data);
    d.sim_slow = SimSlowFact {
        over_1s: 2,
        over_15s: 0,
        long_io_warnings: 0,
        max_us: 1_500_000.0,
    };
    let v = judge_role(&d, Some(true));
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].rule, RuleId::SimSlowIo);
    d.sim_slow.over_15s = 1;
    d.sim_slow.max_us = 17_000_000.0;
    let v = judge_role(&d, Some(true));
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons.len(), 1);
    assert_eq!(v.reasons[0].rule, RuleId::SimLongIo);
    assert_eq!(v.reasons[0].source_tag, "[SQLIOSim]");
    assert!(v.reasons[0].measured.contains("slowest 17.00 s"), "{v:?}");
    // The monitor alone (an I/O outstanding over 15 s).
    let mut l = role(Role::Log);
    l.sim_slow.long_io_warnings = 2;
    let v = judge_role(&l, Some(true));
    assert_eq!(v.verdict, Verdict::NotFit);
    assert!(v.reasons[0].measured.contains("warned 2 time(s)"), "{v:?}");
}

fn flush(what: &str, ios: u64, mean_ms: f64, p99_ms: f64, max_ms: f64) -> FlushFact {
    FlushFact {
        what: what.into(),
        kind: FlushKind::Fdatasync,
        ios,
        mean_us: mean_ms * 1000.0,
        p99_us: p99_ms * 1000.0,
        p999_us: max_ms * 1000.0,
        max_us: max_ms * 1000.0,
    }
}

fn judge_etcd(f: &RoleFacts) -> RoleVerdict {
    judge_role_for(f, Some(true), RuleSet::Classic, Dbms::ETCD)
}

#[test]
fn etcds_wal_fdatasync_p99_over_10_ms_is_not_fit() {
    let mut wal = role(Role::Log);
    // A fast WAL: p99 2.4 ms.
    wal.flushes
        .push(flush("etcd-wal wal-append", 20_000, 1.3, 2.4, 15.8));
    let v = judge_etcd(&wal);
    assert_eq!(v.verdict, Verdict::Fit, "{v:?}");
    // Issue 37, part 4: a passing rule states its figure and limit, and
    // the line cites the source by its tag alone (the references give
    // its title and address once).
    let pass = v
        .passed
        .iter()
        .find(|x| x.rule == RuleId::EtcdWalFsync)
        .unwrap_or_else(|| panic!("{v:?}"));
    assert_eq!(pass.level, Level::Pass);
    assert_eq!(
        format!("{} {}", pass.mark(), pass.line()),
        "pass etcd-wal wal-append fdatasync p99 2.40 ms (20000 flushes): at or below 10 ms: etcd's WAL needs its fdatasync's p99 under 10 ms (etcd-wal-fsync [etcd-fio])"
    );
    assert!(v
        .passed
        .iter()
        .any(|x| x.rule == RuleId::IoErrors && x.measured == "0 I/O errors"));
    assert!(v.passed.iter().all(|x| !x.line().contains("http")));
    // A slow one: p99 12 ms.
    wal.flushes[0].p99_us = 12_000.0;
    let v = judge_etcd(&wal);
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons.len(), 1, "{v:?}");
    let x = &v.reasons[0];
    assert_eq!(x.rule, RuleId::EtcdWalFsync);
    assert_eq!(x.source_tag, "[etcd-fio]");
    assert!(is_absolute(&x.url));
    assert_eq!(
        x.line().split(" (etcd-wal-fsync").next().unwrap(),
        "etcd-wal wal-append fdatasync p99 12.0 ms (20000 flushes): above 10 ms: etcd's WAL needs its fdatasync's p99 under 10 ms"
    );
    // Exactly 10 ms is under the limit ("less than" is met by equal within the histogram).
    wal.flushes[0].p99_us = 10_000.0;
    assert_eq!(judge_etcd(&wal).verdict, Verdict::Fit);
    // Too few flushes for a p99: the slowest stands for it.
    wal.flushes[0] = flush("etcd-wal wal-append", 40, 1.0, 2.0, 11.0);
    let v = judge_etcd(&wal);
    assert_eq!(v.verdict, Verdict::NotFit);
    assert!(v.reasons[0]
        .measured
        .contains("max 11.0 ms (40 flushes: too few for a p99"));
    // The same flushes on SQL Server's rules are not judged by etcd's target.
    let v = judge_role_for(&wal, Some(true), RuleSet::Classic, Dbms::SQLSERVER);
    assert!(v.reasons.iter().all(|x| x.rule != RuleId::EtcdWalFsync));
}

#[test]
fn etcds_backend_commit_warns_over_25_ms_and_fails_over_250() {
    let mut backend = role(Role::Data);
    backend
        .flushes
        .push(flush("etcd-wal backend-commit", 3_000, 4.0, 20.0, 40.0));
    assert_eq!(judge_etcd(&backend).verdict, Verdict::Fit);
    backend.flushes[0].p99_us = 30_000.0;
    let v = judge_etcd(&backend);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].rule, RuleId::EtcdBackendCommit);
    assert_eq!(v.reasons[0].source_tag, "[etcd-commit]");
    backend.flushes[0].p99_us = 300_000.0;
    let v = judge_etcd(&backend);
    assert_eq!(v.verdict, Verdict::NotFit);
    assert_eq!(v.reasons[0].source_tag, "[etcd-alerts]");
    // A data file's flushes of another database are background writeback:
    // judged only when they stall.
    let v = judge_role_for(&backend, Some(true), RuleSet::Classic, Dbms::POSTGRESQL);
    assert_eq!(v.verdict, Verdict::Fit, "{v:?}");
}

#[test]
fn a_databases_without_latency_targets_cite_iosims_general_bands() {
    // PostgreSQL's WAL: commit flushes judged against the log band.
    let mut wal = role(Role::Log);
    wal.flushes
        .push(flush("postgresql-oltp wal-commit", 9_000, 3.0, 6.0, 9.0));
    let v = judge_role_for(&wal, Some(true), RuleSet::Classic, Dbms::POSTGRESQL);
    assert_eq!(v.verdict, Verdict::FitWithWarnings, "{v:?}");
    assert_eq!(v.reasons[0].rule, RuleId::FlushLatency);
    assert_eq!(v.reasons[0].source_tag, "[iosim-bands]");
    assert!(v.reasons[0]
        .source
        .starts_with("iosim's general latency bands"));
    assert!(v.reasons[0].line().starts_with(
        "postgresql-oltp wal-commit fdatasync mean 3.00 ms: above 2 ms for a commit's flush"
    ));
    wal.flushes[0].mean_us = 5_000.0;
    assert_eq!(
        judge_role_for(&wal, Some(true), RuleSet::Classic, Dbms::POSTGRESQL).verdict,
        Verdict::NotFit
    );
    // MySQL's data pages (direct): the data band, cited through iosim's bands.
    let mut d = role(Role::Data);
    d.latency
        .push(lat("mysql-oltp pages-16k", Direction::Read, 12.0));
    d.slow.over_15s = 1;
    d.slow.max_us = 16e6;
    let v = judge_role_for(&d, Some(true), RuleSet::Classic, Dbms::MYSQL);
    let tags: Vec<&str> = v.reasons.iter().map(|x| x.source_tag.as_str()).collect();
    assert_eq!(tags, ["[iosim-bands]", "[iosim-bands]"], "{v:?}");
    assert!(v.reasons[1]
        .limit
        .contains("SQL Server's error 833 threshold"));
    // The same facts for SQL Server cite its own guidance.
    let v = judge_role_for(&d, Some(true), RuleSet::Classic, Dbms::SQLSERVER);
    let tags: Vec<&str> = v.reasons.iter().map(|x| x.source_tag.as_str()).collect();
    assert_eq!(tags, ["[Randal]", "[MS-833]"]);
    // Every source a database's rules cite is in its references list.
    let common = [
        RANDAL,
        DISKSPD_SQL,
        MS_IO,
        MS_2012,
        LOG_VS_DATA,
        MS_833,
        DELL_FLASH,
        AZURE_PV2,
        SQLIOSIM,
        MARKS_CACHE,
        SELF_CHECK,
    ];
    for &dbms in Dbms::ALL {
        let listed = sources_for(dbms);
        let mut cited: Vec<Source> = common.iter().map(|s| cite(dbms, *s)).collect();
        cited.extend(dbms.flushes().targets().iter().flat_map(|t| t.sources()));
        for c in cited {
            assert!(
                listed.iter().any(|x| x.tag == c.tag),
                "{dbms}: cites {} but does not list it",
                c.tag
            );
        }
    }
}

#[test]
fn flushes_a_rule_judges_but_nobody_timed_warn() {
    let mut wal = role(Role::Log);
    wal.flush_untimed.push("etcd-wal wal-append".into());
    let v = judge_etcd(&wal);
    assert_eq!(v.verdict, Verdict::FitWithWarnings);
    assert_eq!(v.reasons[0].rule, RuleId::FlushNotMeasured);
    assert!(v.reasons[0]
        .measured
        .starts_with("etcd-wal wal-append: flushes asked for, not timed"));
    // A data file's background flushes: no rule would judge them, no warning.
    let mut d = role(Role::Data);
    d.flush_untimed
        .push("postgresql-checkpoint checkpoint-8k".into());
    assert_eq!(
        judge_role_for(&d, Some(true), RuleSet::Classic, Dbms::POSTGRESQL).verdict,
        Verdict::Fit
    );
}
