//! The qualification's text summary: the verdict first, then the evidence.

use std::fmt::Write as _;

use super::{QualifyResult, StageId};

fn us(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into())
}

/// A workload's flushes in a few words (`; fdatasync every 1 write: 9000, mean 410 us, p99 1200 us`).
fn flush_words(m: &super::Measure) -> String {
    let Some(f) = &m.flush else {
        return String::new();
    };
    let asked = crate::workload::Flush {
        kind: f.kind,
        every: f.every,
    };
    if f.timed() {
        format!(
            "  {asked}: {} flushes, mean {:.0} us, p99 {:.0} us, max {:.0} us",
            f.ios, f.mean_us, f.p99_us, f.max_us
        )
    } else {
        format!("  {asked}: not timed by this runner")
    }
}

/// The database and the settings assumed, in one line (`database: PostgreSQL;
/// settings assumed: wal_sync_method=fdatasync, ...`).
pub fn database_line(r: &QualifyResult) -> String {
    let settings: Vec<String> = r.settings.iter().map(|x| x.pair()).collect();
    format!(
        "database: {}{}",
        r.dbms.title(),
        if settings.is_empty() {
            String::new()
        } else {
            format!("; settings assumed: {}", settings.join(", "))
        }
    )
}

/// The text summary: verdict, reasons, recommendations, then the evidence.
pub fn text(r: &QualifyResult) -> String {
    let mut s = String::new();
    verdicts(&mut s, r);
    if !r.recommendations.is_empty() {
        let _ = writeln!(s, "\nRecommendations:");
        for x in &r.recommendations {
            let _ = writeln!(s, "  - {x}");
        }
    }
    if let Some(b) = &r.baseline {
        s.push('\n');
        s.push_str(&super::compare::text(b));
    }

    let sut = super::system::text(&r.system, r.time_budget_s, r.dbms);
    if !sut.is_empty() {
        let _ = write!(s, "\n{sut}");
    }

    s.push_str(&evidence_head(r));
    quick(&mut s, r);
    sweeps(&mut s, r);
    neighbours(&mut s, r);
    profiles(&mut s, r);
    stalls(&mut s, r);
    simulator(&mut s, r);
    checks(&mut s, r);
    let _ = write!(
        s,
        "\n{}",
        super::references::text(&super::references::collect(r))
    );
    s
}

/// The headline, the database and each role's verdict with its reasons.
fn verdicts(s: &mut String, r: &QualifyResult) {
    let _ = writeln!(
        s,
        "iosim qualify: {} ({}rules: {}){}",
        r.headline(),
        if r.dbms.guidance() == crate::dbms::Guidance::RulesTable {
            String::new()
        } else {
            format!("{}; ", r.dbms.title())
        },
        r.rules.name(),
        if r.trustworthy {
            ""
        } else {
            "  (NUMBERS NOT TRUSTWORTHY: see the self-checks)"
        }
    );
    let _ = writeln!(s, "  {}", database_line(r));
    if r.preliminary {
        let _ = writeln!(
            s,
            "  {}",
            super::preliminary_note(
                std::time::Duration::from_secs_f64(r.time_budget_s),
                std::time::Duration::from_secs_f64(r.minimum_budget_s)
            )
        );
    }
    for v in &r.verdicts {
        let loc = r.locations.iter().find(|l| l.role == v.role);
        let _ = writeln!(
            s,
            "  {:<7} {:<18} {}",
            r.dbms.role_name(v.role),
            v.verdict.label(),
            loc.map(|l| format!(
                "{}{}",
                l.target.display(),
                if l.derived {
                    " (beside the data: no --log given)"
                } else {
                    ""
                }
            ))
            .unwrap_or_default()
        );
        for reason in v.reasons.iter().chain(&v.passed) {
            let _ = writeln!(s, "      {} {}", reason.mark(), reason.line());
        }
    }
}

/// The quick corners' table.
fn quick(s: &mut String, r: &QualifyResult) {
    let _ = writeln!(s, "\nQuick corners:");
    let _ = writeln!(
        s,
        "  {:<7} {:<20}{:>11}{:>10}{:>11}{:>11}{:>10}{:>10}",
        "role", "test", "MiB/s", "IOPS", "read(us)", "write(us)", "p99(us)", "max(us)"
    );
    for m in &r.quick {
        let _ = writeln!(
            s,
            "  {:<7} {:<20}{:>11.1}{:>10.0}{:>11}{:>11}{:>10.0}{:>10.0}",
            r.dbms.role_name(m.role),
            m.name,
            m.mib_per_sec,
            m.iops,
            us(m.read_mean_us),
            us(m.write_mean_us),
            m.p99_us,
            m.max_us
        );
    }
}

/// Each sweep's table, its knee and its rate limit.
fn sweeps(s: &mut String, r: &QualifyResult) {
    for sw in &r.sweeps {
        let _ = writeln!(
            s,
            "\nSweep {} over {} ({}; mean ± sd over {} repetitions):",
            r.dbms.role_name(sw.role),
            sw.param,
            sw.workload,
            sw.result.repeat
        );
        let _ = writeln!(
            s,
            "  {:>8}{:>18}{:>8}{:>12}{:>18}{:>12}{:>12}",
            sw.param, "IOPS", "ci95%", "MiB/s", "mean(us)", "p99(us)", "max(us)"
        );
        for (i, p) in sw.result.points.iter().enumerate() {
            let knee = sw.result.knee.as_ref().is_some_and(|k| k.index == i);
            let _ = writeln!(
                s,
                "  {:>8}{:>18}{:>8}{:>12.1}{:>18}{:>12.0}{:>12.0}{}",
                p.params.get(sw.param.name()).cloned().unwrap_or_default(),
                p.iops.show(),
                p.iops.ci_pct(),
                p.mib_per_sec.mean,
                p.lat_mean_us.show(),
                p.lat_p99_us.mean,
                p.lat_max_us.mean,
                if knee { "  <- knee" } else { "" }
            );
        }
        if let Some(line) = super::knee_line(r, sw) {
            let _ = writeln!(s, "  {line}");
        }
        if let Some(c) = &sw.result.ceiling {
            let _ = writeln!(s, "  rate limit: {}", c.describe());
        }
    }
}

/// The noisy-neighbour stage, when it ran.
fn neighbours(s: &mut String, r: &QualifyResult) {
    if !r.neighbours.is_empty() {
        let _ = writeln!(s, "\nNoisy neighbour (8 KiB random reads at QD 1):");
        for n in &r.neighbours {
            let _ = writeln!(s, "  {}:", n.role.name());
            for line in n.report.text().lines() {
                let _ = writeln!(s, "    {line}");
            }
        }
    }
}

/// The database profiles' table.
fn profiles(s: &mut String, r: &QualifyResult) {
    let _ = writeln!(s, "\nDatabase profiles:");
    let _ = writeln!(
        s,
        "  {:<34} {:<7}{:>10}{:>10}{:>11}{:>11}{:>10}{:>11}{:>10}",
        "workload",
        "role",
        "IOPS",
        "MiB/s",
        "read(us)",
        "write(us)",
        "p99(us)",
        "p99.9(us)",
        "max(us)"
    );
    for p in &r.profiles {
        let m = &p.measure;
        let _ = writeln!(
            s,
            "  {:<34} {:<7}{:>10.0}{:>10.1}{:>11}{:>11}{:>10.0}{:>11.0}{:>10.0}{}{}",
            m.name,
            r.dbms.role_name(m.role),
            m.iops,
            m.mib_per_sec,
            us(m.read_mean_us),
            us(m.write_mean_us),
            m.p99_us,
            m.p999_us,
            m.max_us,
            if p.deep_queue {
                "  (deep queue: judged by throughput and the knee)"
            } else if !m.reads_reach_storage() && !m.writes_reach_storage() {
                "  (through the page cache: shown, not judged)"
            } else {
                ""
            },
            flush_words(m)
        );
    }
}

/// The slowest I/O of each role, when one was slow.
fn stalls(s: &mut String, r: &QualifyResult) {
    if !r.stalls.is_empty() {
        let _ = writeln!(s, "\nSlowest I/O (quick corners, sweeps and profiles):");
        for st in &r.stalls {
            let _ = writeln!(
                s,
                "  {:<7} {:.1} ms in {}; {} of {} I/Os over 1 s, {} over 15 s",
                r.dbms.role_name(st.role),
                st.max_us / 1000.0,
                st.max_in,
                st.ios_over_1s,
                st.ios,
                st.ios_over_15s
            );
        }
    }
}

/// The simulator's cycle and files, when it ran.
fn simulator(s: &mut String, r: &QualifyResult) {
    if let Some(sim) = &r.sim {
        let _ = writeln!(
            s,
            "\nSimulator: {} cycle(s) in {:.1} s, {} pages and {} log blocks verified, {} errors{}",
            sim.cycles,
            sim.duration_s,
            sim.pages_verified,
            sim.log_blocks_verified,
            sim.errors,
            sim.classes_words()
        );
        for f in &sim.files {
            let _ = writeln!(
                s,
                "  {:<4} {:<7} {:>9.0} IOPS  read {:>8.0} us  write {:>8.0} us  max {:>9.0} us  over 1 s {}  errors {}  {}",
                f.kind,
                r.dbms.role_name(f.role),
                f.iops,
                f.read_mean_us,
                f.write_mean_us,
                f.max_us,
                f.ios_over_1s,
                f.errors,
                f.path
            );
        }
        if sim.long_io_warnings > 0 {
            let _ = writeln!(
                s,
                "  long-I/O monitor: {} warning(s) of I/O requests outstanding for more than 15 s",
                sim.long_io_warnings
            );
        }
        if let Some(l) = &sim.error_log {
            let _ = writeln!(s, "  error log: {l}");
        }
    }
}

/// The self-checks' findings, the notes and what was left on disk.
fn checks(s: &mut String, r: &QualifyResult) {
    let _ = writeln!(s, "\nSelf-checks:");
    if r.checks.is_empty() {
        let _ = writeln!(s, "  nothing found: the device saw the I/O iosim issued, the CPU did not limit iosim, the test data is real");
    }
    for c in &r.checks {
        let _ = writeln!(
            s,
            "  {:<7} {} ({} run(s){}): {}",
            r.dbms.role_name(c.role),
            c.code,
            c.runs,
            if c.untrusted {
                ", numbers not trustworthy"
            } else {
                ""
            },
            c.message
        );
        if let Some(a) = &c.cpu {
            let _ = writeln!(s, "          who used the CPU: {}", a.summary());
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "Note: {n}");
    }
    if r.left_on_disk.is_empty() {
        let _ = writeln!(s, "Left on disk: nothing (the test files were removed).");
    } else {
        let _ = writeln!(s, "Left on disk: {}", r.left_on_disk.join("; "));
    }
}

/// `iosim qualify --plan`: what a qualification with `cfg` would run, and
/// nothing created or measured: the database and the settings it assumes,
/// each role's test target, the stages with their share of the budget and
/// their runs, the profiles' workloads, the minimum budget and the rules.
pub fn plan_text(cfg: &super::QualifyConfig) -> anyhow::Result<String> {
    use super::databases;
    let dur = crate::units::format_duration_arg;
    let locs = super::locations(cfg)?;
    let dbms = cfg.dbms;
    let planned = super::planned_runs(cfg, &locs)?;
    let minimum = super::minimum_budget(&planned);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "iosim qualify --plan: {} (--dbms {}), budget {}, rules {}",
        dbms.title(),
        dbms.name(),
        dur(cfg.time),
        cfg.rules.name()
    );
    let _ = writeln!(
        s,
        "Nothing was created or measured: run the same command without --plan to qualify."
    );
    let _ = writeln!(s, "\nSettings assumed:");
    for x in databases::settings(dbms) {
        let _ = writeln!(s, "  {:<44} {} {}", x.pair(), x.means, x.source_tag);
    }
    let _ = writeln!(s, "Latency limits: {}", databases::latency_guidance(dbms));
    if let Some(n) = databases::documented_only_note(dbms).filter(|_| cfg.profiles.is_empty()) {
        let _ = writeln!(s, "Note: {n}");
    }
    plan_roles(&mut s, cfg, &locs);
    plan_stages(&mut s, cfg, &locs, &planned);
    plan_profiles(&mut s, cfg, &locs)?;
    let _ = writeln!(
        s,
        "\nMinimum budget for a verdict that is not PRELIMINARY: {}{}",
        dur(minimum),
        if cfg.time < minimum {
            format!(" (--time {} is under it)", dur(cfg.time))
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "\nRules (--dbms {}, --rules {}):",
        dbms.name(),
        cfg.rules.name()
    );
    for (id, line) in super::rules::summary(dbms, cfg.rules) {
        let _ = writeln!(s, "  {:<20} {line}", id.as_str());
    }
    Ok(s)
}

/// `--plan`'s roles: each role's test target.
fn plan_roles(s: &mut String, cfg: &super::QualifyConfig, locs: &[super::Location]) {
    let dbms = cfg.dbms;
    let _ = writeln!(s, "\nRoles:");
    for l in locs {
        let what = if l.device {
            "a block device, used whole (overwritten)".to_string()
        } else if l.derived {
            format!(
                "a test file of {} beside the data: no --log given",
                crate::units::format_size(cfg.size)
            )
        } else {
            format!("a test file of {}", crate::units::format_size(cfg.size))
        };
        let _ = writeln!(
            s,
            "  {:<8} {} ({what})",
            dbms.role_name(l.role),
            l.target.display()
        );
    }
}

/// `--plan`'s stages: each one's share of the budget and its runs.
fn plan_stages(
    s: &mut String,
    cfg: &super::QualifyConfig,
    locs: &[super::Location],
    planned: &[(StageId, f64, usize)],
) {
    use super::databases;
    let dur = crate::units::format_duration_arg;
    let dbms = cfg.dbms;
    let _ = writeln!(s, "\nStages (nominal share of --time {}):", dur(cfg.time));
    let runs = |name: StageId| planned.iter().find(|p| p.0 == name).map_or(0, |p| p.2);
    for (name, share) in super::STAGES {
        let slot = cfg.time.mul_f64(share);
        let what = match name {
            StageId::QuickCorners => format!(
                "{} runs: the {} corners of iosim quick on each test target (direct)",
                runs(name),
                crate::quick::SUITE.len()
            ),
            StageId::Sweeps => {
                let mut parts = Vec::new();
                for l in locs {
                    let (rw, bs, qd, threads) = databases::sweep_shape(dbms, l.role);
                    parts.push(format!(
                        "{} {} {} over {qd} and {threads}",
                        dbms.role_name(l.role),
                        rw.name(),
                        crate::units::format_size(bs)
                    ));
                }
                format!(
                    "{} runs at least (every point {} times): {} ({})",
                    runs(name),
                    super::MIN_REPEAT,
                    parts.join("; "),
                    super::MEASURE_CACHE.name()
                )
            }
            StageId::Profiles => format!("{} phases, the profiles below", runs(name)),
            StageId::Simulator => {
                if dbms.simulated() {
                    "one iosim sim cycle with page verification, data and log files".into()
                } else {
                    "page integrity: one iosim sim cycle with page verification (SQL Server's I/O), data and log files".into()
                }
            }
            _ => "the runs' self-checks and the test files' content".into(),
        };
        let _ = writeln!(
            s,
            "  {:<14} {:>3.0}% {:>7}  {what}",
            name,
            share * 100.0,
            dur(slot)
        );
    }
}

/// `--plan`'s profiles: each one's targets and workloads.
fn plan_profiles(
    s: &mut String,
    cfg: &super::QualifyConfig,
    locs: &[super::Location],
) -> anyhow::Result<()> {
    let _ = writeln!(s, "\nProfiles:");
    // `--db-cache` as the run applies it: to the workloads that name a cache.
    let base = crate::workload::WorkloadSpec {
        shape: crate::workload::Shape {
            db_cache: cfg.db_cache,
            ..Default::default()
        },
        ..Default::default()
    };
    for planned in super::planned_profiles(cfg, locs)? {
        let p = &planned.profile;
        let targets: Vec<String> = p
            .target_names()
            .iter()
            .zip(&planned.roles)
            .map(|(t, r)| format!("{t} on {}", cfg.dbms.role_name(*r)))
            .collect();
        let whose = planned
            .given
            .as_ref()
            .map_or(String::new(), |g| format!(", your profile {g}"));
        let _ = writeln!(s, "  {} ({}{whose})", p.name, targets.join(", "));
        for w in &p.workloads {
            let mut spec = w.spec(&base)?;
            spec.resolve_sizes();
            let mut words = vec![spec.describe()];
            if let Some(f) = spec.flush {
                words.push(f.to_string());
            }
            if let Some(m) = spec.sync_method {
                words.push(format!("sync_method {m}"));
            }
            if let Some(r) = spec.rate_iops {
                words.push(format!("{r} I/Os a second per thread"));
            }
            if let (true, Some(c)) = (w.per_commit, p.commit_rate) {
                words.push(format!("(at {c} commits a second)"));
            }
            if let (true, Some(n)) = (w.per_client, p.clients) {
                words.push(format!("(with {n} clients)"));
            }
            let _ = writeln!(
                s,
                "    {:<18} phase {} {}",
                w.name,
                w.phase,
                words.join(", ")
            );
        }
    }
    Ok(())
}

/// The evidence's head: the budget, the stages against their shares, and
/// how the budget was kept (each overrun with its cause).
fn evidence_head(r: &QualifyResult) -> String {
    let mut s = String::new();
    let setup_where = if r.budget.is_some() {
        "paid from the budget"
    } else {
        "before the budget"
    };
    let _ = writeln!(
        s,
        "\nEvidence (budget {:.0} s, measured {:.1} s, set-up {:.1} s {setup_where})",
        r.time_budget_s, r.measure_s, r.setup_s
    );
    let _ = writeln!(s, "Stages (time taken of the share of the budget given):");
    for st in &r.stages {
        let _ = writeln!(
            s,
            "  {:<14} {:>6.1} s of {:>6.1} s  {}",
            st.name, st.elapsed_s, st.budget_s, st.summary
        );
    }
    let _ = writeln!(
        s,
        "  {:<14} {:>6.1} s of {:>6.1} s  (set-up {:.1} s {setup_where})",
        "total",
        r.stages.iter().map(|st| st.elapsed_s).sum::<f64>(),
        r.time_budget_s,
        r.setup_s
    );
    if let Some(b) = &r.budget {
        for l in super::budget::budget_lines(b) {
            let _ = writeln!(s, "{l}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::Dbms;
    use crate::qualify::QualifyConfig;

    /// `--commit-rate` shows in the plan on the workloads that follow the
    /// commits, at their scaled rate; a database whose profiles do not say
    /// their commit rate refuses it.
    #[test]
    fn the_plan_shows_your_commit_rate_on_the_commit_workloads() {
        let a = tempfile::tempdir().unwrap();
        let cfg = QualifyConfig {
            commit_rate: Some(569.0),
            ..QualifyConfig::for_test(Dbms::MYSQL, a.path())
        };
        let t = plan_text(&cfg).unwrap();
        let at: Vec<&str> = t
            .lines()
            .filter(|l| l.contains("(at 569 commits a second)"))
            .collect();
        assert_eq!(at.len(), 2, "{t}");
        assert!(
            at[0].trim_start().starts_with("redo-commit") && at[0].contains("479 I/Os a second"),
            "{t}"
        );
        assert!(
            at[1].trim_start().starts_with("binlog-commit") && at[1].contains("368 I/Os a second"),
            "{t}"
        );
        let cfg = QualifyConfig {
            commit_rate: Some(569.0),
            ..QualifyConfig::for_test(Dbms::ETCD, a.path())
        };
        let e = plan_text(&cfg).unwrap_err().to_string();
        assert!(
            e.contains("--commit-rate 569") && e.contains("commit_rate key"),
            "{e}"
        );
    }

    /// `--db-cache` shows in the plan where the run applies it: on the
    /// workloads whose reads a cache serves (mysql-oltp's pages), no other.
    #[test]
    fn the_plan_shows_your_database_cache_on_the_cached_workloads() {
        let a = tempfile::tempdir().unwrap();
        let cfg = QualifyConfig {
            db_cache: Some(crate::workload::DbCache::parse("128M/250M").unwrap()),
            ..QualifyConfig::for_test(Dbms::MYSQL, a.path())
        };
        let t = plan_text(&cfg).unwrap();
        let cached: Vec<&str> = t.lines().filter(|l| l.contains("db-cache")).collect();
        assert_eq!(cached.len(), 1, "{t}");
        assert!(
            cached[0].trim_start().starts_with("pages-16k") && cached[0].contains("db-cache 51.2%"),
            "{t}"
        );
    }

    #[test]
    fn the_plan_names_the_database_its_settings_roles_profiles_and_rules() {
        let a = tempfile::tempdir().unwrap();
        let cfg = |dbms| QualifyConfig {
            time: std::time::Duration::from_secs(600),
            size: 1 << 30,
            ..QualifyConfig::for_test(dbms, a.path())
        };
        let t = plan_text(&cfg(Dbms::POSTGRESQL)).unwrap();
        assert!(
            t.starts_with("iosim qualify --plan: PostgreSQL (--dbms postgresql), budget 600s, rules classic\n"),
            "{t}"
        );
        for want in [
            "  wal_sync_method=fdatasync ",
            "  full_page_writes=on ",
            "  wal      ",
            "  postgresql-oltp (data on data, wal on wal)",
            "sync_method fdatasync",
            "  flush-latency ",
            "Minimum budget for a verdict that is not PRELIMINARY: 131s",
        ] {
            assert!(t.contains(want), "{want:?} in\n{t}");
        }
        let t = plan_text(&cfg(Dbms::ETCD)).unwrap();
        assert!(t.contains("  etcd-wal-fsync "), "{t}");
        assert!(t.contains("  backend  "), "{t}");
        assert!(t.contains("wal write 4KiB over qd=1..32x2"), "{t}");
        let t = plan_text(&cfg(Dbms::ORACLE)).unwrap();
        assert!(t.contains("built from its documentation only"), "{t}");
        // Nothing was created.
        assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
    }
}
