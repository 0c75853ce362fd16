//! The report's sections for result kinds that are not plain runs: sweep
//! curves of `iosim sweep` results (knee as the command found it), profile
//! verdicts, simulator results and matrix heat maps. Each reads the typed
//! document, never its JSON.

use std::fmt::Write as _;

use super::svg::{esc, fmt_num, fmt_us};
use super::{Sweep, SweepPoint};
use crate::document::Document;
use crate::matrix::MatrixResult;
use crate::profile::ProfileResult;
use crate::qualify::QualifyResult;
use crate::sim::summary::SimResult;
use crate::stats::Percentile;
use crate::store::StoredRun;
use crate::sweep::SweepResult;

/// The stored runs that read back into a typed document.
pub fn typed(runs: &[StoredRun]) -> Vec<(&StoredRun, Document)> {
    runs.iter()
        .filter_map(|r| Some((r, r.document().ok()?)))
        .collect()
}

/// The curve of one `iosim sweep` result: IOPS and latency against the
/// outstanding I/Os of each point, with the knee the command itself found
/// (its threshold and latency metric). None for a sweep whose points are not
/// in rising load (a grid over several axes has no curve).
pub fn sweep_curve(id: i64, r: &SweepResult, color: usize) -> Option<Sweep> {
    let pts: Vec<SweepPoint> = r
        .points
        .iter()
        .map(|p| {
            SweepPoint::new(
                p.outstanding as f64,
                p.iops.mean,
                p.lat_mean_us.mean,
                p.lat_p99_us.mean,
            )
        })
        .collect();
    if pts.len() < 2 || !pts.windows(2).all(|w| w[1].load > w[0].load) {
        return None;
    }
    Some(Sweep {
        param: "outstanding",
        name: format!(
            "#{id} sweep {}",
            r.axes
                .iter()
                .map(|a| a.param.name())
                .collect::<Vec<_>>()
                .join("+")
        ),
        color,
        points: pts,
        knee: r.knee.as_ref().map(|k| k.index),
    })
}

/// The HTML sections of every typed document that is not a plain run.
pub fn sections(docs: &[(&StoredRun, Document)]) -> String {
    let mut s = String::new();
    for (run, doc) in docs {
        match doc {
            Document::Sweep(h) => sweep_section(&mut s, run.row.id, &h.body),
            Document::Profile(h) => profile_section(&mut s, run.row.id, &h.body),
            Document::Sim(h) => sim_section(&mut s, run.row.id, &h.body),
            Document::Matrix(h) => matrix_section(&mut s, run.row.id, &h.body),
            Document::Qualify(h) => qualify_section(&mut s, run, &h.header, &h.body),
            // A replay's and a crash verdict's figures are in their text and JSON.
            Document::Run(_)
            | Document::Quick(_)
            | Document::Compare(_)
            | Document::Replay(_)
            | Document::Crash(_)
            | Document::Fsync(_) => {}
        }
    }
    s
}

/// A qualification: its verdicts with their reasons and sources, the
/// recommendations, and how its time was spent. Its charts are in its own
/// report (`iosim qualify --html FILE`), rendered with the same verdict
/// block ([`super::qualify::verdict`]).
fn qualify_section(
    s: &mut String,
    run: &StoredRun,
    h: &crate::document::Header,
    r: &QualifyResult,
) {
    use super::qualify::verdict as verdict_html;
    let _ = writeln!(
        s,
        "<h2 class=\"qualify\" data-verdict=\"{}\">Qualification #{}: {}</h2><p class=\"note\">Started {} (UTC) on {}; {}; budget {:.0} s, measured {:.1} s.{}</p>",
        r.overall.label(),
        run.row.id,
        verdict_html::overall_badge(r),
        esc(&h.started_at),
        esc(&h.host),
        esc(&r
            .locations
            .iter()
            .map(|l| format!("{} {}", l.role.name(), l.given.display()))
            .collect::<Vec<_>>()
            .join(", ")),
        r.time_budget_s,
        r.measure_s,
        if r.interrupted { " Interrupted." } else { "" }
    );
    let prefix = format!("q{}-", run.row.id);
    s.push_str(&verdict_html::section(r, &prefix));
    s.push_str(&verdict_html::stages_table(r));
    s.push_str("<p class=\"note\">The evidence behind these verdicts, with its charts, is in the qualification's own report: <code>iosim qualify ... --html FILE</code>.</p>\n");
    s.push_str(&crate::qualify::references::html(
        &crate::qualify::references::collect(r),
        &prefix,
    ));
}

fn sweep_section(s: &mut String, id: i64, r: &SweepResult) {
    let _ = writeln!(
        s,
        "<h2>Sweep #{id}{}</h2><table><tr><th class=\"l\">point</th><th>outstanding</th><th>IOPS</th><th>MiB/s</th><th>mean</th><th>p99</th><th>max</th><th class=\"l\">notes</th></tr>",
        r.study.as_deref().map(|n| format!(" ({})", esc(n))).unwrap_or_default()
    );
    for (i, p) in r.points.iter().enumerate() {
        let mut notes = Vec::new();
        if r.knee.as_ref().is_some_and(|k| k.index == i) {
            notes.push("knee");
        }
        if r.recommended == Some(i) {
            notes.push("recommended");
        }
        if p.cpu_bound_runs > 0 {
            notes.push("CPU-bound");
        }
        if p.noisy {
            notes.push("noisy");
        }
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&crate::store::render::point_name(p)),
            p.outstanding,
            fmt_num(p.iops.mean),
            fmt_num(p.mib_per_sec.mean),
            fmt_us(p.lat_mean_us.mean),
            fmt_us(p.lat_p99_us.mean),
            fmt_us(p.lat_max_us.mean),
            notes.join(", ")
        );
    }
    s.push_str("</table>\n");
    if !r.findings.is_empty() {
        s.push_str("<ul>");
        for f in &r.findings {
            let _ = write!(s, "<li>{}</li>", esc(f));
        }
        s.push_str("</ul>\n");
    }
}

fn profile_section(s: &mut String, id: i64, r: &ProfileResult) {
    let _ = writeln!(
        s,
        "<h2>Profile #{id}: {}</h2><p class=\"note\">{} Source: {}</p>\
         <table><tr><th class=\"l\">workload</th><th class=\"l\">target</th><th>IOPS</th><th>mean</th><th class=\"l\">verdicts</th></tr>",
        esc(&r.profile),
        esc(&r.description),
        esc(&r.source)
    );
    for w in &r.results {
        let t = &w.result.total.total;
        let verdicts: Vec<String> = w
            .verdicts
            .iter()
            .map(|v| {
                format!(
                    "<span class=\"{}\">{} {:.2} ms: {} ({})</span>",
                    if v.problem { "worse" } else { "better" },
                    match v.direction {
                        crate::verdict::Direction::Read => "read",
                        crate::verdict::Direction::Write => "write",
                    },
                    v.mean_ms,
                    esc(&v.label),
                    esc(&v.short)
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&w.name),
            esc(&w.target),
            fmt_num(t.iops),
            fmt_us(t.latency_us.mean),
            verdicts.join("<br>")
        );
    }
    s.push_str("</table>\n");
}

fn sim_section(s: &mut String, id: i64, r: &SimResult) {
    let _ = write!(
        s,
        "<h2>Simulation #{id}</h2><p class=\"note\">{} cycle(s), {:.1} s, engine {}; {} pages verified, {} errors{}.</p>",
        r.cycles,
        r.duration_s,
        esc(&r.engine),
        r.pages_verified,
        r.errors.count,
        if r.interrupted { ", interrupted" } else { "" }
    );
    s.push_str("<h3>Errors by class</h3><table><tr>");
    for c in r.errors.by_class.keys() {
        let _ = write!(s, "<th>{}</th>", esc(c));
    }
    s.push_str("</tr><tr>");
    for n in r.errors.by_class.values() {
        let cls = if *n > 0 { " class=\"worse\"" } else { "" };
        let _ = write!(s, "<td{cls}>{n}</td>");
    }
    s.push_str("</tr></table>\n");
    let row = |s: &mut String, name: &str, st: &crate::stats::RwResult| {
        let t = &st.total;
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            fmt_num(t.iops),
            fmt_num(t.mib_per_sec),
            fmt_us(t.latency_us.mean),
            fmt_us(t.latency_us.p(Percentile::P99)),
            fmt_us(t.latency_us.max)
        );
    };
    let head = |s: &mut String, what: &str| {
        let _ = writeln!(
            s,
            "<h3>Per {what}</h3><table><tr><th class=\"l\">{what}</th><th>IOPS</th><th>MiB/s</th><th>mean</th><th>p99</th><th>max</th></tr>"
        );
    };
    head(s, "user");
    for u in &r.users {
        row(s, &u.user, &u.stats);
    }
    s.push_str("</table>\n");
    head(s, "file");
    for f in &r.files {
        row(s, &format!("{} ({})", f.path, f.kind), &f.stats);
    }
    s.push_str("</table>\n");
}

/// One heat map: large levels down, small levels across, each cell shaded by
/// its value against the largest.
fn heat_map(
    s: &mut String,
    r: &MatrixResult,
    title: &str,
    value: fn(&crate::matrix::MatrixPoint) -> Option<f64>,
    show: fn(f64) -> String,
) {
    let max = r.points.iter().filter_map(value).fold(0.0_f64, f64::max);
    let _ = write!(
        s,
        "<h3>{}</h3><table class=\"heat\"><tr><th>large \\ small</th>",
        esc(title)
    );
    for sm in &r.small_levels {
        let _ = write!(s, "<th>{sm}</th>");
    }
    s.push_str("</tr>\n");
    for lg in &r.large_levels {
        let _ = write!(s, "<tr><th>{lg}</th>");
        for sm in &r.small_levels {
            let v = r
                .points
                .iter()
                .find(|p| p.small == *sm && p.large == *lg)
                .and_then(value);
            match v {
                Some(v) if max > 0.0 => {
                    // White (0) to blue (the largest).
                    let a = (v / max).clamp(0.0, 1.0);
                    let _ = write!(
                        s,
                        "<td style=\"background:rgba(31,119,180,{a:.2})\">{}</td>",
                        show(v)
                    );
                }
                _ => s.push_str("<td></td>"),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

fn matrix_section(s: &mut String, id: i64, r: &MatrixResult) {
    let _ = write!(
        s,
        "<h2>Load matrix #{id}: {}</h2><p class=\"note\">small I/O {} random, large I/O {} sequential, {}% writes, {:.0} s per point.</p>",
        esc(&r.path.display().to_string()),
        crate::units::format_size(r.small_bs),
        crate::units::format_size(r.large_bs),
        r.write_pct,
        r.duration_s
    );
    heat_map(s, r, "Small I/Os per second", |p| p.small_iops, fmt_num);
    heat_map(s, r, "Small I/O mean latency", |p| p.small_mean_us, fmt_us);
    heat_map(s, r, "Large MiB/s", |p| p.large_mib_s, fmt_num);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_map_shades_by_value_and_leaves_holes() {
        let p = |small, large, iops| crate::matrix::MatrixPoint {
            small,
            large,
            small_iops: iops,
            small_mean_us: None,
            small_p99_us: None,
            large_mib_s: None,
            large_mean_us: None,
            errors: 0,
        };
        let r = MatrixResult {
            path: "/x".into(),
            matrix: crate::matrix::MatrixKind::Basic,
            small_bs: 8192,
            large_bs: 1 << 20,
            small_levels: vec![0, 1, 2],
            large_levels: vec![0],
            write_pct: 0,
            duration_s: 1.0,
            points: vec![p(0, 0, None), p(1, 0, Some(50.0)), p(2, 0, Some(100.0))],
            summary: Default::default(),
            interrupted: false,
        };
        let mut s = String::new();
        heat_map(&mut s, &r, "t", |p| p.small_iops, fmt_num);
        assert!(s.contains("rgba(31,119,180,0.50)\">50"), "{s}");
        assert!(s.contains("rgba(31,119,180,1.00)\">100"), "{s}");
        assert!(s.contains("<tr><th>0</th><td></td>"), "{s}");
    }
}
