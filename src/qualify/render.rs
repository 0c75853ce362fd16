//! The qualification's text summary: the verdict first, then the evidence.

use std::fmt::Write as _;

use super::QualifyResult;

fn us(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into())
}

/// The text summary: verdict, reasons, recommendations, then the evidence.
pub fn text(r: &QualifyResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "iosim qualify: {}{}",
        r.overall.label(),
        if r.trustworthy {
            ""
        } else {
            "  (NUMBERS NOT TRUSTWORTHY: see the self-checks)"
        }
    );
    for v in &r.verdicts {
        let loc = r.locations.iter().find(|l| l.role == v.role);
        let _ = writeln!(
            s,
            "  {:<7} {:<18} {}",
            v.role.name(),
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
        for reason in &v.reasons {
            let _ = writeln!(
                s,
                "      {} {}",
                if reason.level == super::rules::Level::Fail {
                    "FAIL"
                } else {
                    "warn"
                },
                reason.line()
            );
        }
    }
    if !r.recommendations.is_empty() {
        let _ = writeln!(s, "\nRecommendations:");
        for x in &r.recommendations {
            let _ = writeln!(s, "  - {x}");
        }
    }
    if let Some(b) = &r.baseline {
        let _ = writeln!(
            s,
            "\nAgainst qualification {} of {} (then {}):",
            b.id,
            b.started_at,
            b.overall.label()
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
        for c in &b.changes {
            let _ = writeln!(s, "  {c}");
        }
        let _ = writeln!(s, "  note: {}", b.caveat);
    }

    let _ = writeln!(
        s,
        "\nEvidence (budget {:.0} s, measured {:.1} s, set-up {:.1} s before the budget)",
        r.time_budget_s, r.measure_s, r.setup_s
    );
    let _ = writeln!(s, "Stages:");
    for st in &r.stages {
        let _ = writeln!(
            s,
            "  {:<14} {:>6.1} s of {:>6.1} s  {}",
            st.name, st.elapsed_s, st.budget_s, st.summary
        );
    }
    let _ = writeln!(s, "\nQuick corners:");
    let _ = writeln!(
        s,
        "  {:<7} {:<20}{:>11}{:>10}{:>11}{:>11}{:>10}",
        "role", "test", "MiB/s", "IOPS", "read(us)", "write(us)", "p99(us)"
    );
    for m in &r.quick {
        let _ = writeln!(
            s,
            "  {:<7} {:<20}{:>11.1}{:>10.0}{:>11}{:>11}{:>10.0}",
            m.role.name(),
            m.name,
            m.mib_per_sec,
            m.iops,
            us(m.read_mean_us),
            us(m.write_mean_us),
            m.p99_us
        );
    }
    for sw in &r.sweeps {
        let _ = writeln!(
            s,
            "\nSweep {} over {} ({}; mean ± sd over {} repetitions):",
            sw.role.name(),
            sw.param,
            sw.workload,
            sw.result.repeat
        );
        let _ = writeln!(
            s,
            "  {:>8}{:>18}{:>18}{:>14}",
            sw.param, "IOPS", "mean(us)", "p99(us)"
        );
        for (i, p) in sw.result.points.iter().enumerate() {
            let knee = sw.result.knee.as_ref().is_some_and(|k| k.index == i);
            let _ = writeln!(
                s,
                "  {:>8}{:>18}{:>18}{:>14.0}{}",
                p.params.get(&sw.param).cloned().unwrap_or_default(),
                p.iops.show(),
                p.lat_mean_us.show(),
                p.lat_p99_us.mean,
                if knee { "  <- knee" } else { "" }
            );
        }
    }
    let _ = writeln!(s, "\nDatabase profiles:");
    let _ = writeln!(
        s,
        "  {:<34} {:<7}{:>10}{:>10}{:>11}{:>11}{:>10}",
        "workload", "role", "IOPS", "MiB/s", "read(us)", "write(us)", "p99(us)"
    );
    for p in &r.profiles {
        let m = &p.measure;
        let _ = writeln!(
            s,
            "  {:<34} {:<7}{:>10.0}{:>10.1}{:>11}{:>11}{:>10.0}{}",
            m.name,
            m.role.name(),
            m.iops,
            m.mib_per_sec,
            us(m.read_mean_us),
            us(m.write_mean_us),
            m.p99_us,
            if p.deep_queue {
                "  (deep queue: judged by throughput and the knee)"
            } else {
                ""
            }
        );
    }
    if let Some(sim) = &r.sim {
        let _ = writeln!(
            s,
            "\nSimulator: {} cycle(s) in {:.1} s, {} pages and {} log blocks verified, {} errors{}",
            sim.cycles,
            sim.duration_s,
            sim.pages_verified,
            sim.log_blocks_verified,
            sim.errors,
            if sim.errors_by_class.is_empty() {
                String::new()
            } else {
                format!(
                    " ({})",
                    sim.errors_by_class
                        .iter()
                        .map(|(c, n)| format!("{n} {c}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        for f in &sim.files {
            let _ = writeln!(
                s,
                "  {:<4} {:<7} {:>9.0} IOPS  read {:>8.0} us  write {:>8.0} us  errors {}  {}",
                f.kind,
                f.role.name(),
                f.iops,
                f.read_mean_us,
                f.write_mean_us,
                f.errors,
                f.path
            );
        }
        if let Some(l) = &sim.error_log {
            let _ = writeln!(s, "  error log: {l}");
        }
    }
    let _ = writeln!(s, "\nSelf-checks:");
    if r.checks.is_empty() {
        let _ = writeln!(s, "  nothing found: the device saw the I/O iosim issued, the CPU did not limit iosim, the test data is real");
    }
    for c in &r.checks {
        let _ = writeln!(
            s,
            "  {:<7} {} ({} run(s){}): {}",
            c.role.name(),
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
    s
}
