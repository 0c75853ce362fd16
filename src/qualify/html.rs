//! The qualification's self-contained HTML report: the verdict first, then
//! the evidence. Charts come from [`crate::html`].

use std::fmt::Write as _;

use super::{QualifyResult, RoleSweep};
use crate::html::svg::{self, fmt_us, Chart};
use crate::html::{sweep_charts, Sweep};
use crate::text::escape_xml as esc;

/// The sweeps of one parameter as the report's sweep lines.
fn html_sweeps(sweeps: &[&RoleSweep]) -> Vec<Sweep> {
    sweeps
        .iter()
        .enumerate()
        .map(|(i, sw)| {
            let pts: Vec<(f64, f64, f64, f64)> = sw
                .result
                .points
                .iter()
                .map(|p| {
                    (
                        p.params
                            .get(&sw.param)
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0.0),
                        p.iops.mean,
                        p.lat_mean_us.mean,
                        p.lat_p99_us.mean,
                    )
                })
                .collect();
            Sweep {
                param: if sw.param == "qd" { "qd" } else { "threads" },
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

/// Every chart of the report: (id, caption, SVG).
pub fn charts(r: &QualifyResult) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    // Quick corners: IOPS per test, one bar per location.
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
        let series: Vec<(String, Vec<f64>)> = roles
            .iter()
            .map(|role| {
                (
                    role.name().to_string(),
                    tests
                        .iter()
                        .map(|t| {
                            r.quick
                                .iter()
                                .find(|m| m.role == *role && &m.name == t)
                                .map_or(0.0, |m| m.mib_per_sec)
                        })
                        .collect(),
                )
            })
            .collect();
        out.push((
            "quick".to_string(),
            "The five corner tests on each location, MiB/s (sequential 1 MiB, random 4 KiB)."
                .to_string(),
            svg::bars(
                "quick",
                "Corner tests per location (MiB/s)",
                "MiB/s",
                &tests,
                &series,
                None,
                W,
                H,
            ),
        ));
    }
    for param in ["qd", "threads"] {
        let sw: Vec<&RoleSweep> = r.sweeps.iter().filter(|s| s.param == param).collect();
        if sw.is_empty() {
            continue;
        }
        let [mut iops, mut lat]: [Chart; 2] = sweep_charts(&html_sweeps(&sw));
        iops.id = format!("sweep-{param}-iops");
        lat.id = format!("sweep-{param}-latency");
        let what = if param == "qd" {
            "queue depth"
        } else {
            "threads"
        };
        out.push((
            iops.id.clone(),
            format!("IOPS over {what} on each role's pattern, mean of the repetitions; the knee is where more load stops buying throughput (the rule of iosim sweep)."),
            svg::render(&iops, W, H),
        ));
        out.push((
            lat.id.clone(),
            format!("Latency over {what}: mean solid, p99 dashed. Past the knee it grows faster than throughput."),
            svg::render(&lat, W, H),
        ));
    }
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
        out.push((
            "profiles".to_string(),
            "Mean latency of each database workload (ms). Latency-bound workloads are judged by it (data: 10/20 ms, log writes: 2/4 ms); deep-queue ones (read-ahead, checkpoint, bulk, backup) queue by design and are judged by throughput and the sweep's knee.".to_string(),
            svg::bars("profiles", "Database workloads: mean latency (ms)", "ms", &names, &series, None, W, H),
        ));
    }
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
            out.push((
                "sim".to_string(),
                format!(
                    "The simulator's files: mean latency (ms). {} pages and {} log blocks read back and verified, {} errors.",
                    sim.pages_verified, sim.log_blocks_verified, sim.errors
                ),
                svg::bars("sim", "Simulator: mean latency per file (ms)", "ms", &names, &series, None, W, H),
            ));
        }
    }
    out
}

const CSS: &str = "body{font-family:DejaVu Sans,Liberation Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}\
figure{display:inline-block;margin:10px 10px 10px 0;vertical-align:top}figcaption{font-size:12px;color:#555;max-width:900px}\
.note{font-size:13px;color:#555}li{margin:3px 0}";

/// The self-contained HTML report.
pub fn html(h: &crate::document::Header, r: &QualifyResult) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iosim qualify: {}</title><style>{CSS}{}</style></head><body>\n\
         <h1>Storage qualification: {}</h1><p class=\"note\">iosim {} on {}, started {} (UTC); budget {:.0} s, measured {:.1} s, set-up {:.1} s. Self-contained: no network needed.</p>\n",
        r.overall.label(),
        super::verdict_html::CSS,
        super::verdict_html::badge(r.overall),
        esc(&h.iosim_version),
        esc(&h.host),
        esc(&h.started_at),
        r.time_budget_s,
        r.measure_s,
        r.setup_s
    );
    s.push_str(&super::verdict_html::section(r));
    s.push_str("<section id=\"evidence\"><h2>Evidence</h2>\n");
    s.push_str(&super::verdict_html::stages_table(r));
    s.push('\n');
    for (id, cap, svg) in charts(r) {
        let _ = writeln!(
            s,
            "<figure class=\"chart\" data-chart=\"{id}\">{svg}<figcaption>{}</figcaption></figure>",
            esc(&cap)
        );
    }
    s.push_str("<h3>Database workloads</h3><table><tr><th class=\"l\">workload</th><th class=\"l\">role</th><th class=\"l\">pattern</th><th>IOPS</th><th>MiB/s</th><th>read mean</th><th>write mean</th><th>p99</th><th class=\"l\">latency tables</th></tr>");
    for p in &r.profiles {
        let m = &p.measure;
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.0}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&m.name),
            m.role.name(),
            esc(&m.workload),
            m.iops,
            m.mib_per_sec,
            m.read_mean_us.map(fmt_us).unwrap_or_default(),
            m.write_mean_us.map(fmt_us).unwrap_or_default(),
            fmt_us(m.p99_us),
            if p.deep_queue {
                "deep queue by design: judged by throughput and the sweep's knee".to_string()
            } else {
                esc(&p.tables.join(" / "))
            }
        );
    }
    s.push_str("</table>\n<h3>Self-checks</h3><ul>");
    if r.checks.is_empty() {
        s.push_str("<li>nothing found</li>");
    }
    for c in &r.checks {
        let _ = write!(
            s,
            "<li>{} <b>{}</b> ({} runs{}): {}{}</li>",
            c.role.name(),
            esc(&c.code),
            c.runs,
            if c.untrusted {
                ", numbers not trustworthy"
            } else {
                ""
            },
            esc(&c.message),
            c.cpu
                .as_ref()
                .map(super::verdict_html::cpu_detail)
                .unwrap_or_default()
        );
    }
    s.push_str("</ul>\n");
    for n in &r.notes {
        let _ = write!(s, "<p class=\"note\">Note: {}</p>", esc(n));
    }
    s.push_str("</section></body></html>\n");
    s
}
