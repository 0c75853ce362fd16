//! The qualification's self-contained HTML report: the verdict first, then
//! the system under test, the evidence (every chart with its numbers in a
//! table under it) and the references. Charts come from [`crate::html`]; the verdict and references from [`crate::qualify`].
//! Nothing in it links outside the page except the sources' absolute
//! addresses, so the file can be mailed or moved.

pub mod verdict;

use std::fmt::Write as _;

use super::svg::{self, fmt_us, Chart};
use super::{sweep_charts, Sweep, SweepPoint};
use crate::qualify::{Measure, QualifyResult, RoleSweep};
use crate::sweep::Param;
use crate::text::escape_xml as esc;

/// The sweeps of one parameter as the report's sweep lines.
fn html_sweeps(sweeps: &[&RoleSweep]) -> Vec<Sweep> {
    sweeps
        .iter()
        .enumerate()
        .map(|(i, sw)| {
            let pts: Vec<SweepPoint> = sw
                .result
                .points
                .iter()
                .map(|p| {
                    SweepPoint::new(
                        p.params
                            .get(sw.param.name())
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0.0),
                        p.iops.mean,
                        p.lat_mean_us.mean,
                        p.lat_p99_us.mean,
                    )
                })
                .collect();
            Sweep {
                param: sw.param.name(),
                name: format!("{}: {}", sw.role.name(), sw.workload),
                color: i,
                knee: sw.result.knee.as_ref().map(|k| k.index),
                points: pts,
            }
        })
        .collect()
}

const W: f64 = 900.0;
const H: f64 = 420.0;
/// The corners' two panels side by side.
const W_PANEL: f64 = 660.0;

/// One chart of the report.
pub struct Figure {
    /// Its id (`data-chart`, and the SVG's id).
    pub id: String,
    /// Caption.
    pub caption: String,
    /// The SVG.
    pub svg: String,
    /// The numbers of this chart and the ones before it since the last
    /// table, as an HTML table (`data-for` names the charts it holds).
    pub table: Option<String>,
}

fn td(v: &str) -> String {
    format!("<td>{}</td>", esc(v))
}

fn opt_us(v: Option<f64>) -> String {
    v.map(fmt_us).unwrap_or_else(|| "-".into())
}

/// The corners' numbers: per location and test, IOPS, MiB/s and latency.
fn corners_table(quick: &[Measure], for_ids: &str) -> String {
    let mut s = format!(
        "<table class=\"numbers\" data-for=\"{for_ids}\"><tr><th class=\"l\">role</th><th class=\"l\">test</th><th>IOPS</th><th>MiB/s</th><th>read mean</th><th>write mean</th><th>p99</th><th class=\"l\">path</th></tr>"
    );
    for m in quick {
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.0}</td><td>{:.1}</td>{}{}{}<td class=\"l\">{}</td></tr>",
            m.role.name(),
            esc(&m.name),
            m.iops,
            m.mib_per_sec,
            td(&opt_us(m.read_mean_us)),
            td(&opt_us(m.write_mean_us)),
            td(&fmt_us(m.p99_us)),
            esc(&m.path)
        );
    }
    s.push_str("</table>");
    s
}

/// A sweep's numbers: each point's IOPS (mean, 95% confidence interval and
/// sd over the repetitions), MiB/s and latency, with the knee marked, and
/// the sweep's findings.
fn sweep_table(q: &QualifyResult, sw: &RoleSweep, for_ids: &str) -> String {
    let r = &sw.result;
    let mut s = format!(
        "<table class=\"numbers\" data-for=\"{for_ids}\"><caption class=\"l\">{}: {} ({} repetition(s) per point)</caption>\
         <tr><th>{}</th><th>outstanding</th><th>IOPS mean</th><th>&plusmn; 95% CI</th><th>&plusmn; sd</th><th>MiB/s</th>\
         <th>mean latency</th><th>&plusmn; sd</th><th>p99</th><th>max</th><th class=\"l\">notes</th></tr>",
        sw.role.name(),
        esc(&sw.workload),
        r.repeat,
        esc(sw.param.name())
    );
    for (i, p) in r.points.iter().enumerate() {
        let mut notes = Vec::new();
        if r.knee.as_ref().is_some_and(|k| k.index == i) {
            notes.push("knee".to_string());
        }
        if p.noisy {
            notes.push("noisy".into());
        }
        if p.cpu_bound_runs > 0 {
            notes.push(format!("CPU-bound in {} run(s)", p.cpu_bound_runs));
        }
        let ci = if p.iops.n > 1 {
            format!("{:.0} ({}%)", p.iops.ci95, p.iops.ci_pct())
        } else {
            "-".into()
        };
        let _ = write!(
            s,
            "<tr{}><td>{}</td><td>{}</td><td>{:.0}</td>{}<td>{:.0}</td><td>{:.1}</td>{}{}{}{}<td class=\"l\">{}</td></tr>",
            if notes.iter().any(|n| n == "knee") {
                " class=\"knee\""
            } else {
                ""
            },
            esc(&p.params.get(sw.param.name()).cloned().unwrap_or_default()),
            p.outstanding,
            p.iops.mean,
            td(&ci),
            p.iops.sd,
            p.mib_per_sec.mean,
            td(&fmt_us(p.lat_mean_us.mean)),
            td(&fmt_us(p.lat_mean_us.sd)),
            td(&fmt_us(p.lat_p99_us.mean)),
            td(&fmt_us(p.lat_max_us.mean)),
            esc(&notes.join(", "))
        );
    }
    s.push_str("</table>");
    if let Some(line) = crate::qualify::knee_line(q, sw) {
        let _ = write!(s, "<p class=\"note knee-line\">{}</p>", esc(&line));
    }
    if let Some(c) = &r.ceiling {
        let _ = write!(
            s,
            "<p class=\"note knee-line\">rate limit: {}</p>",
            esc(&c.describe())
        );
    }
    if !r.findings.is_empty() {
        let _ = write!(
            s,
            "<details class=\"note\"><summary>The sweep's findings ({})</summary><ul>",
            r.findings.len()
        );
        for f in &r.findings {
            let _ = write!(s, "<li>{}</li>", esc(f));
        }
        s.push_str("</ul></details>");
    }
    s
}

/// The database workloads' numbers and latency-table words.
fn profiles_table(r: &QualifyResult) -> String {
    let mut s = String::from("<table class=\"numbers\" data-for=\"profiles\"><tr><th class=\"l\">workload</th><th class=\"l\">role</th><th class=\"l\">pattern</th><th>IOPS</th><th>MiB/s</th><th>read mean</th><th>write mean</th><th>p99</th><th>flush p99</th><th class=\"l\">latency tables</th></tr>");
    for p in &r.profiles {
        let m = &p.measure;
        let flush = match &m.flush {
            Some(f) if f.timed() => fmt_us(f.p99_us),
            Some(_) => "not timed".into(),
            None => "-".into(),
        };
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.0}</td><td>{:.1}</td>{}{}{}{}<td class=\"l\">{}</td></tr>",
            esc(&m.name),
            r.dbms.role_name(m.role),
            esc(&m.workload),
            m.iops,
            m.mib_per_sec,
            td(&opt_us(m.read_mean_us)),
            td(&opt_us(m.write_mean_us)),
            td(&fmt_us(m.p99_us)),
            td(&flush),
            if p.deep_queue {
                "deep queue by design: judged by throughput and the sweep's knee".to_string()
            } else if !m.reads_reach_storage() && !m.writes_reach_storage() {
                "through the page cache: shown, not judged (its flushes are)".to_string()
            } else if p.tables.is_empty() {
                "judged by the rules of the verdict".to_string()
            } else {
                esc(&p.tables.join(" / "))
            }
        );
    }
    s.push_str("</table>");
    s
}

/// The simulator's numbers per file.
fn sim_table(sim: &crate::qualify::SimSummary) -> String {
    let mut s = String::from("<table class=\"numbers\" data-for=\"sim\"><tr><th class=\"l\">file</th><th class=\"l\">role</th><th>IOPS</th><th>read mean</th><th>write mean</th><th>errors</th><th class=\"l\">path</th></tr>");
    for f in &sim.files {
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.0}</td>{}{}<td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&f.kind),
            f.role.name(),
            f.iops,
            td(&fmt_us(f.read_mean_us)),
            td(&fmt_us(f.write_mean_us)),
            f.errors,
            esc(&f.path)
        );
    }
    let _ = write!(
        s,
        "</table><p class=\"note\">{} cycle(s) in {:.1} s; {} pages and {} log blocks read back and verified; {} errors{}.</p>",
        sim.cycles,
        sim.duration_s,
        sim.pages_verified,
        sim.log_blocks_verified,
        sim.errors,
        sim.classes_words()
    );
    s
}

/// Every chart of the report, each group followed by its numbers.
pub fn figures(r: &QualifyResult) -> Vec<Figure> {
    let mut out = Vec::new();
    quick_figures(r, &mut out);
    sweep_figures(r, &mut out);
    profiles_figure(r, &mut out);
    sim_figure(r, &mut out);
    out
}

/// The quick corners' two panels, when they ran.
fn quick_figures(r: &QualifyResult, out: &mut Vec<Figure>) {
    // Quick corners: IOPS and MiB/s in two panels (4 KiB random reads are
    // invisible beside 1 MiB sequential ones in MiB/s, and the other way
    // round in IOPS), one bar per location.
    let tests: Vec<String> = crate::quick::SUITE
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    let mut roles: Vec<crate::verdict::Role> = Vec::new();
    for m in &r.quick {
        if !roles.contains(&m.role) {
            roles.push(m.role);
        }
    }
    if !r.quick.is_empty() {
        let series = |f: fn(&Measure) -> f64| -> Vec<(String, Vec<f64>)> {
            roles
                .iter()
                .map(|role| {
                    (
                        role.name().to_string(),
                        crate::quick::SUITE
                            .iter()
                            .map(|c| {
                                r.quick
                                    .iter()
                                    .find(|m| m.role == *role && m.corner() == Some(c.id))
                                    .map_or(0.0, f)
                            })
                            .collect(),
                    )
                })
                .collect()
        };
        out.push(Figure {
            id: "quick-iops".into(),
            caption: "The five corner tests on each location: I/Os per second (the random 4 KiB tests' panel).".into(),
            svg: svg::bars(
                "quick-iops",
                "Corner tests per location: IOPS",
                "IOPS",
                &tests,
                &series(|m| m.iops),
                None,
                W_PANEL,
                H,
            ),
            table: None,
        });
        out.push(Figure {
            id: "quick-mibs".into(),
            caption: "The same tests in MiB/s (the sequential 1 MiB tests' panel).".into(),
            svg: svg::bars(
                "quick-mibs",
                "Corner tests per location: MiB/s",
                "MiB/s",
                &tests,
                &series(|m| m.mib_per_sec),
                None,
                W_PANEL,
                H,
            ),
            table: Some(corners_table(&r.quick, "quick-iops quick-mibs")),
        });
    }
}

/// Each sweep parameter's IOPS and latency charts, with their tables.
fn sweep_figures(r: &QualifyResult, out: &mut Vec<Figure>) {
    for param in [Param::Qd, Param::Threads] {
        let sw: Vec<&RoleSweep> = r.sweeps.iter().filter(|s| s.param == param).collect();
        if sw.is_empty() {
            continue;
        }
        let [mut iops, mut lat]: [Chart; 2] = sweep_charts(&html_sweeps(&sw));
        iops.id = format!("sweep-{param}-iops");
        lat.id = format!("sweep-{param}-latency");
        let what = if param == Param::Qd {
            "queue depth"
        } else {
            "threads"
        };
        let for_ids = format!("{} {}", iops.id, lat.id);
        out.push(Figure {
            id: iops.id.clone(),
            caption: format!("IOPS over {what} on each role's pattern, mean of the repetitions; the knee is where more load stops buying throughput (the rule of iosim sweep)."),
            svg: svg::render(&iops, W, H),
            table: None,
        });
        out.push(Figure {
            id: lat.id.clone(),
            caption: format!("Latency over {what}: mean solid, p99 dashed. Past the knee it grows faster than throughput."),
            svg: svg::render(&lat, W, H),
            table: Some(sw.iter().map(|s| sweep_table(r, s, &for_ids)).collect()),
        });
    }
}

/// The database workloads' mean latency, when profiles ran.
fn profiles_figure(r: &QualifyResult, out: &mut Vec<Figure>) {
    if !r.profiles.is_empty() {
        let names: Vec<String> = r.profiles.iter().map(|p| p.measure.name.clone()).collect();
        let series = vec![
            (
                "read mean (ms)".to_string(),
                r.profiles
                    .iter()
                    .map(|p| p.measure.read_mean_us.unwrap_or(0.0) / 1000.0)
                    .collect(),
            ),
            (
                "write mean (ms)".to_string(),
                r.profiles
                    .iter()
                    .map(|p| p.measure.write_mean_us.unwrap_or(0.0) / 1000.0)
                    .collect(),
            ),
        ];
        out.push(Figure {
            id: "profiles".into(),
            caption: "Mean latency of each database workload (ms). Latency-bound workloads are judged by it (data: 10/20 ms, log writes: 2/4 ms); deep-queue ones (read-ahead, checkpoint, bulk, backup) queue by design and are judged by throughput and the sweep's knee.".into(),
            svg: svg::bars("profiles", "Database workloads: mean latency (ms)", "ms", &names, &series, None, W, H),
            table: Some(profiles_table(r)),
        });
    }
}

/// The simulator's files' mean latency, when it ran.
fn sim_figure(r: &QualifyResult, out: &mut Vec<Figure>) {
    if let Some(sim) = &r.sim {
        if !sim.files.is_empty() {
            let names: Vec<String> = sim
                .files
                .iter()
                .map(|f| format!("{} {}", f.kind, f.role.name()))
                .collect();
            let series = vec![
                (
                    "read mean (ms)".to_string(),
                    sim.files.iter().map(|f| f.read_mean_us / 1000.0).collect(),
                ),
                (
                    "write mean (ms)".to_string(),
                    sim.files.iter().map(|f| f.write_mean_us / 1000.0).collect(),
                ),
            ];
            out.push(Figure {
                id: "sim".into(),
                caption: format!(
                    "The simulator's files: mean latency (ms). {} pages and {} log blocks read back and verified, {} errors.",
                    sim.pages_verified, sim.log_blocks_verified, sim.errors
                ),
                svg: svg::bars("sim", "Simulator: mean latency per file (ms)", "ms", &names, &series, None, W, H),
                table: Some(sim_table(sim)),
            });
        }
    }
}

const CSS: &str = "body{font-family:DejaVu Sans,Liberation Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}\
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}caption{text-align:left;font-size:12px;font-weight:bold;padding:4px 0}\
tr.knee td{background:#fff6d8}table.sut th{width:110px;vertical-align:top}table.sut{display:inline-table;margin-right:16px;vertical-align:top;max-width:680px}\
nav.toc{font-size:13px}nav.toc a{margin-right:14px}\
figure{display:inline-block;margin:10px 10px 10px 0;vertical-align:top}figcaption{font-size:12px;color:#555;max-width:900px}\
.note{font-size:13px;color:#555}li{margin:3px 0}";

/// The self-contained HTML report.
pub fn html(h: &crate::document::Header, r: &QualifyResult) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iosim qualify: {}</title>\
         <script>{}</script><style>{CSS}{}</style></head><body>\n\
         <h1>Storage qualification: {}</h1><p class=\"note\">iosim {} on {}, started {} (UTC); budget {:.0} s, measured {:.1} s, set-up {:.1} s. Self-contained: no network needed, and no link depends on where the file is.</p>\n\
         <nav class=\"toc\"><a href=\"#verdict\">Verdict</a><a href=\"#system\">System under test</a><a href=\"#evidence\">Evidence</a><a href=\"#self-checks\">Self-checks</a><a href=\"#references\">References</a></nav>\n",
        r.headline(),
        crate::html::JS_ERRORS,
        verdict::CSS,
        verdict::overall_badge(r),
        esc(&h.iosim_version),
        esc(&h.host),
        esc(&h.started_at),
        r.time_budget_s,
        r.measure_s,
        r.setup_s
    );
    s.push_str(&verdict::section(r, ""));
    s.push_str(&crate::qualify::system::html(
        &r.system,
        r.time_budget_s,
        r.dbms,
    ));
    s.push_str("<section id=\"evidence\"><h2>Evidence</h2>\n<h3>Stages</h3>");
    s.push_str(&verdict::stages_table(r));
    s.push('\n');
    for f in figures(r) {
        let _ = writeln!(
            s,
            "<figure class=\"chart\" data-chart=\"{}\">{}<figcaption>{}</figcaption></figure>",
            esc(&f.id),
            f.svg,
            esc(&f.caption)
        );
        if let Some(t) = f.table {
            let _ = writeln!(s, "<div class=\"numbers\">{t}</div>");
        }
    }
    s.push_str("<h3 id=\"self-checks\">Self-checks</h3><ul>");
    if r.checks.is_empty() {
        s.push_str("<li>nothing found: the device saw the I/O iosim issued, no core was saturated, the test data is real</li>");
    }
    for c in &r.checks {
        let _ = write!(
            s,
            "<li>{} <b>{}</b> ({} runs{}): {}{}</li>",
            c.role.name(),
            esc(c.code.as_str()),
            c.runs,
            if c.untrusted {
                ", numbers not trustworthy"
            } else {
                ""
            },
            esc(&c.message),
            c.cpu.as_ref().map(verdict::cpu_detail).unwrap_or_default()
        );
    }
    s.push_str("</ul>\n");
    for n in &r.notes {
        let _ = write!(s, "<p class=\"note\">Note: {}</p>", esc(n));
    }
    let _ = write!(
        s,
        "<p class=\"note\">Left on disk: {}</p>",
        if r.left_on_disk.is_empty() {
            "nothing (the test files were removed).".to_string()
        } else {
            esc(&r.left_on_disk.join("; "))
        }
    );
    s.push_str("</section>\n");
    s.push_str(&crate::qualify::references::html(
        &crate::qualify::references::collect(r),
        "",
    ));
    let _ = write!(
        s,
        "<script>{}</script>\n</body></html>\n",
        crate::html::JS_CHECK
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A qualification of a directory on this project's VM (10 s, 16 MiB
    /// test files), as `iosim qualify -o json` printed it.
    const FIXTURE: &str = include_str!("../../../tests/fixtures/qualify/dir-10s.json");

    fn fixture() -> (crate::document::Header, QualifyResult) {
        let v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        match crate::document::Document::from_value(v).unwrap() {
            crate::document::Document::Qualify(h) => (h.header, h.body),
            other => panic!("not a qualification: {}", other.kind()),
        }
    }

    /// Every value of attribute `name` in `html`.
    fn attrs<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
        let key = format!(" {name}=\"");
        html.split(&key)
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap())
            .collect()
    }

    /// The links that would break when the file is moved: neither an
    /// absolute address nor an anchor of an element in the page.
    fn broken_links(html: &str) -> Vec<String> {
        let ids = attrs(html, "id");
        attrs(html, "href")
            .into_iter()
            .filter(|h| match h.strip_prefix('#') {
                Some(a) => !ids.contains(&a),
                None => !crate::qualify::rules::is_absolute(h),
            })
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_report_links_only_to_absolute_addresses_and_its_own_anchors() {
        let (h, r) = fixture();
        let page = html(&h, &r);
        assert_eq!(broken_links(&page), Vec::<String>::new());
        assert!(!page.contains(" src="), "nothing to fetch");
        // The reasons' sources link to their rows in the references.
        assert!(
            page.contains("<a href=\"#ref-ms-2012\">[MS-2012]</a>"),
            "{page}"
        );
        assert!(
            page.contains("<a href=\"#ref-iosim-self-check\">"),
            "{page}"
        );
        assert!(!page.contains("docs/"), "no link to the project's docs");
        // The verdict first, then the system, the evidence, the references.
        let at = |id: &str| page.find(&format!("<section id=\"{id}\"")).unwrap();
        assert!(at("verdict") < at("system"));
        assert!(at("system") < at("evidence"));
        assert!(at("evidence") < at("references"));
    }

    #[test]
    fn every_chart_has_its_numbers_in_a_table() {
        let (h, r) = fixture();
        let page = html(&h, &r);
        let charts = attrs(&page, "data-chart");
        assert_eq!(
            charts,
            [
                "quick-iops",
                "quick-mibs",
                "sweep-qd-iops",
                "sweep-qd-latency",
                "sweep-threads-iops",
                "sweep-threads-latency",
                "profiles",
                "sim"
            ]
        );
        let tables = attrs(&page, "data-for");
        for c in &charts {
            assert!(
                tables.iter().any(|t| t.split(' ').any(|x| x == *c)),
                "chart {c} has no numbers table"
            );
        }
        // One row per point of every sweep, with its confidence interval.
        let rows = page.matches("<tr><td>").count() + page.matches("<tr class=\"knee\">").count();
        let points: usize = r.sweeps.iter().map(|s| s.result.points.len()).sum();
        assert!(rows >= points, "{rows} rows for {points} points");
        assert!(page.contains("&plusmn; 95% CI"));
        // The random 4 KiB corners have their own panel, in IOPS.
        let iops = &page[page.find("id=\"quick-iops\"").unwrap()..];
        assert!(
            iops.contains("rand read 4K QD32: data"),
            "bars titled per test"
        );
    }

    #[test]
    fn an_old_document_renders_without_relative_links() {
        let mut v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("system");
        o.remove("references");
        // As stored before: the self-check's address was a relative path.
        for verdict in o["verdicts"].as_array_mut().unwrap() {
            for reason in verdict["reasons"].as_array_mut().unwrap() {
                if reason["source_tag"] == "[iosim self-check]" {
                    reason["url"] = "docs/sysmon.md".into();
                }
            }
        }
        let crate::document::Document::Qualify(q) =
            crate::document::Document::from_value(v).unwrap()
        else {
            panic!("not a qualification")
        };
        let page = html(&q.header, &q.body);
        assert_eq!(broken_links(&page), Vec::<String>::new());
        assert!(
            page.contains("Not recorded"),
            "the system section says why it is empty"
        );
        let text = crate::qualify::render::text(&q.body);
        assert!(!text.contains("docs/sysmon.md"), "{text}");
        assert!(text.contains("References"), "{text}");
    }
}
