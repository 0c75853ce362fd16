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
        "iosim qualify: {} (rules: {}){}",
        r.headline(),
        r.rules.name(),
        if r.trustworthy {
            ""
        } else {
            "  (NUMBERS NOT TRUSTWORTHY: see the self-checks)"
        }
    );
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
        s.push('\n');
        s.push_str(&super::compare::text(b));
    }

    let sut = super::system::text(&r.system, r.time_budget_s);
    if !sut.is_empty() {
        let _ = write!(s, "\n{sut}");
    }

    let _ = writeln!(
        s,
        "\nEvidence (budget {:.0} s, measured {:.1} s, set-up {:.1} s before the budget)",
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
        "  {:<14} {:>6.1} s of {:>6.1} s  (set-up {:.1} s before the budget)",
        "total",
        r.stages.iter().map(|st| st.elapsed_s).sum::<f64>(),
        r.time_budget_s,
        r.setup_s
    );
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
            m.role.name(),
            m.name,
            m.mib_per_sec,
            m.iops,
            us(m.read_mean_us),
            us(m.write_mean_us),
            m.p99_us,
            m.max_us
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
            "  {:>8}{:>18}{:>8}{:>12}{:>18}{:>12}{:>12}",
            sw.param, "IOPS", "ci95%", "MiB/s", "mean(us)", "p99(us)", "max(us)"
        );
        for (i, p) in sw.result.points.iter().enumerate() {
            let knee = sw.result.knee.as_ref().is_some_and(|k| k.index == i);
            let _ = writeln!(
                s,
                "  {:>8}{:>18}{:>8}{:>12.1}{:>18}{:>12.0}{:>12.0}{}",
                p.params.get(&sw.param).cloned().unwrap_or_default(),
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
    }
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
            "  {:<34} {:<7}{:>10.0}{:>10.1}{:>11}{:>11}{:>10.0}{:>11.0}{:>10.0}{}",
            m.name,
            m.role.name(),
            m.iops,
            m.mib_per_sec,
            us(m.read_mean_us),
            us(m.write_mean_us),
            m.p99_us,
            m.p999_us,
            m.max_us,
            if p.deep_queue {
                "  (deep queue: judged by throughput and the knee)"
            } else {
                ""
            }
        );
    }
    if !r.stalls.is_empty() {
        let _ = writeln!(s, "\nSlowest I/O (quick corners, sweeps and profiles):");
        for st in &r.stalls {
            let _ = writeln!(
                s,
                "  {:<7} {:.1} ms in {}; {} of {} I/Os over 1 s, {} over 15 s",
                st.role.name(),
                st.max_us / 1000.0,
                st.max_in,
                st.ios_over_1s,
                st.ios,
                st.ios_over_15s
            );
        }
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
            sim.classes_words()
        );
        for f in &sim.files {
            let _ = writeln!(
                s,
                "  {:<4} {:<7} {:>9.0} IOPS  read {:>8.0} us  write {:>8.0} us  max {:>9.0} us  over 1 s {}  errors {}  {}",
                f.kind,
                f.role.name(),
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
    let _ = write!(
        s,
        "\n{}",
        super::references::text(&super::references::collect(r))
    );
    s
}
