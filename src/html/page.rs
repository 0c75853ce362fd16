//! The HTML page: runs table, comparisons, charts with captions, and the
//! few lines of inline CSS and JavaScript (in `assets/`).

use std::fmt::Write as _;

use super::charts::{charts, legend_table, LegendPlace};
use super::data::{document_sweeps, entries, Entry};
use super::kinds;
use super::svg::{self, esc, fmt_num, fmt_us};
use crate::comparison as compare;
use crate::document::Document;
use crate::store::StoredRun;

/// Chart sizes in the HTML page.
const W: f64 = 900.0;
const H: f64 = 440.0;

/// The page's style sheet.
const CSS: &str = include_str!("assets/report.css");

/// Checks the charts after the page is drawn and sets `data-charts-ok` (the
/// number drawn with content) on <body>; the browser test reads it.
pub const JS_CHECK: &str = include_str!("assets/check.js");

/// Records uncaught errors and console.error calls as attributes on <html>
/// (headless Chromium does not always log console messages to stderr).
pub const JS_ERRORS: &str = include_str!("assets/errors.js");

/// Captions under each chart.
fn caption(id: &str) -> &'static str {
    match id {
        "percentiles" => "Latency at each percentile from the whole-run HDR histograms (reads and writes together). The x axis counts nines: p90, p99, p99.9 ... so the tail gets as much room as the median.",
        "histogram" => "How many I/Os took how long: the share of all I/Os in each latency bucket, buckets log-spaced (20 per decade).",
        "iops" => "Completed I/Os per second, per interval (one point per --interval).",
        "mibs" => "MiB per second, per interval.",
        "latency" => "Median, 99th-percentile and largest latency in each interval. A series longer than the chart is wide is drawn as each pixel column's lowest and highest value, so a spike in one interval of thousands still shows.",
        "sweep-iops" => "IOPS as load grows. The knee (as iosim sweep finds it) is the first point where the next step buys no significant IOPS (Welch's test over the repetitions, or under 10% of its load increase) while latency keeps rising, and no later point has over 15% more IOPS beyond the confidence intervals. Beyond it, more outstanding I/O mostly adds queueing.",
        "sweep-latency" => "Latency as load grows; past the knee it rises faster than throughput.",
        "cpu" => "Whole-run CPU use of the machine (and its busiest core): a core near 100% means the run measured the CPU, not the storage.",
        _ => "Per-interval counters recorded with the run.",
    }
}

/// The whole HTML report.
pub fn html(runs: &[StoredRun]) -> String {
    let typed = kinds::typed(runs);
    let es = entries(&typed);
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iosim report</title>\
         <script>{JS_ERRORS}</script><style>{CSS}{}</style></head><body>\n\
         <h1>iosim report</h1><p class=\"note\">Generated {} by iosim {} from {} stored run(s). Self-contained: no network needed.</p>\n",
        super::qualify::verdict::CSS,
        crate::clock::utc_now_rfc3339(),
        env!("CARGO_PKG_VERSION"),
        runs.len()
    );
    runs_table(&mut s, &es);
    environment(&mut s, &es);
    compared(&mut s, &es);
    chart_figures(&mut s, &typed, &es);
    // Sweeps, profiles, simulations and matrices: their own sections.
    s.push_str(&kinds::sections(&typed));
    unreadable(&mut s, runs, &typed);
    let _ = write!(s, "<script>{JS_CHECK}</script>\n</body></html>\n");
    s
}

/// The runs table: one row per run result, its colour as in the charts.
fn runs_table(s: &mut String, es: &[Entry]) {
    // Runs table.
    s.push_str("<h2>Runs</h2><table><tr><th class=\"l\">run</th><th class=\"l\">kind</th><th class=\"l\">label</th><th class=\"l\">started (UTC)</th>\
        <th class=\"l\">targets [device]</th><th class=\"l\">workload</th><th>s</th><th>IOPS</th><th>MiB/s</th>\
        <th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th></tr>\n");
    for e in es {
        let d = e.result;
        let t = &d.total.total;
        let us = |p: &str| {
            t.latency_us
                .percentiles
                .get(p)
                .map(|v| fmt_us(*v))
                .unwrap_or_default()
        };
        let r = e.run;
        let mut targets = r.row.targets.join(" ");
        if let Some(dev) = &r.row.device {
            let _ = write!(targets, " [{dev}]");
        }
        let _ = writeln!(
            s,
            "<tr><td class=\"l\"><span style=\"color:{}\">&#9632;</span> {}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            svg::PALETTE[e.color % svg::PALETTE.len()],
            esc(&e.name),
            esc(&r.row.kind),
            esc(r.row.label.as_deref().unwrap_or("")),
            esc(&d.started_at),
            esc(&targets),
            esc(&d.config.describe()),
            d.duration_s,
            fmt_num(t.iops),
            fmt_num(t.mib_per_sec),
            fmt_us(t.latency_us.mean),
            us("p50"),
            us("p99"),
            us("p99.9"),
            fmt_us(t.latency_us.max),
            d.errors.count,
        );
    }
    s.push_str("</table>\n");
}

/// The machines and where the targets lived, each distinct one once.
fn environment(s: &mut String, es: &[Entry]) {
    // Machines and where the targets lived, each distinct one once.
    let mut hosts: Vec<[String; 6]> = Vec::new();
    let mut places: Vec<[String; 6]> = Vec::new();
    for e in es {
        let m = &e.result.environment;
        let h = [
            m.host.clone(),
            m.kernel.clone(),
            m.cpu_model.clone(),
            m.cpus.to_string(),
            crate::units::format_size(m.mem_total_bytes),
            m.clocksource.clone(),
        ];
        if !hosts.contains(&h) {
            hosts.push(h);
        }
        for t in e.run.row.environment.iter().flatten() {
            let g = |v: &Option<String>| v.clone().unwrap_or_default();
            let p = [
                t.path.clone(),
                g(&t.filesystem),
                g(&t.mount_point),
                g(&t.mount_options),
                format!("{} {}", g(&t.device), g(&t.model))
                    .trim()
                    .to_string(),
                t.device_size
                    .map(crate::units::format_size)
                    .unwrap_or_default(),
            ];
            if !places.contains(&p) {
                places.push(p);
            }
        }
    }
    s.push_str("<h2>Environment</h2><table><tr><th class=\"l\">host</th><th class=\"l\">kernel</th><th class=\"l\">CPU</th><th>CPUs</th><th>memory</th><th class=\"l\">clocksource</th></tr>\n");
    for h in &hosts {
        s.push_str("<tr>");
        for (k, c) in h.iter().enumerate() {
            let cls = if k == 3 || k == 4 { "" } else { " class=\"l\"" };
            let _ = write!(s, "<td{cls}>{}</td>", esc(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if !places.is_empty() {
        s.push_str("<table><tr><th class=\"l\">target</th><th class=\"l\">filesystem</th><th class=\"l\">mount point</th><th class=\"l\">mount options</th><th class=\"l\">device</th><th>device size</th></tr>\n");
        for p in &places {
            s.push_str("<tr>");
            for (k, c) in p.iter().enumerate() {
                let cls = if k == 5 { "" } else { " class=\"l\"" };
                let _ = write!(s, "<td{cls}>{}</td>", esc(c));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
    }
}

/// Each run's relative differences against the first.
fn compared(s: &mut String, es: &[Entry]) {
    // Relative differences against the first.
    if es.len() > 1 {
        s.push_str("<h2>Compared with the first</h2>");
        // Runs of different workloads are compared only with a warning.
        let mut kinds: Vec<String> = Vec::new();
        for w in es
            .iter()
            .map(|e| crate::store::render::workload_key(e.result))
        {
            if !kinds.contains(&w) {
                kinds.push(w);
            }
        }
        if kinds.len() > 1 {
            let _ = writeln!(
                s,
                "<p class=\"warn\">Warning: these runs did not run the same workload ({}): their differences measure different things.</p>",
                esc(&kinds.join("; "))
            );
        }
        s.push_str("<table><tr><th class=\"l\">run</th>");
        for m in compare::METRICS.iter() {
            let _ = write!(s, "<th>{}</th>", esc(m.name));
        }
        s.push_str("</tr>\n");
        let side = |e: &Entry| compare::Side::new(&e.name, vec![0], &[e.result]);
        let base = side(&es[0]);
        for e in &es[1..] {
            let side = side(e);
            let _ = write!(s, "<tr><td class=\"l\">{}</td>", esc(&e.name));
            for d in compare::diff(&base, &side) {
                let cls = match d.rel_pct {
                    Some(r) if r.abs() < 0.05 => "",
                    Some(_) if d.worse => " class=\"worse\"",
                    Some(_) => " class=\"better\"",
                    None => "",
                };
                let _ = write!(
                    s,
                    "<td{cls}>{}</td>",
                    d.rel_pct.map(|r| format!("{r:+.1}%")).unwrap_or_default()
                );
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table><p class=\"note\">Single runs: differences are shown without a significance test; `iosim compare label:A label:B` tests repetitions with Welch's t-test.</p>\n");
    }
}

/// The report of a histogram log (`iosim report --hist-log FILE`): its
/// span, each stream merged, and latency over time per interval.
pub fn hist_log_html(log: &crate::histlog::LogSummary) -> String {
    use crate::stats::Percentile as P;
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iosim histogram log</title>\
         <script>{JS_ERRORS}</script><style>{CSS}</style></head><body>\n\
         <h1>iosim histogram log</h1><p class=\"note\">Generated {} by iosim {} from {}: {} intervals of {:.3} s over {:.3} s. Self-contained: no network needed.</p>\n\
         <table><tr><th class=\"l\">stream</th><th>I/Os</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>",
        crate::clock::utc_now_rfc3339(),
        env!("CARGO_PKG_VERSION"),
        esc(&log.path),
        log.intervals,
        log.interval_s,
        log.span_s
    );
    for st in &log.streams {
        let l = &st.latency_us;
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&st.stream),
            st.ios,
            fmt_us(l.mean),
            fmt_us(l.p(P::P50)),
            fmt_us(l.p(P::P99)),
            fmt_us(l.p(P::P99_9)),
            fmt_us(l.max)
        );
    }
    s.push_str("</table>\n");
    let pts = log
        .points
        .iter()
        .map(|p| (p.t_s + p.duration_s, [p.p50_us, p.p99_us, p.max_us]))
        .collect();
    let chart = super::charts::latency_over_time(std::iter::once(("all".to_string(), 0, pts)));
    let _ = writeln!(
        s,
        "<figure>{}<figcaption>{}</figcaption></figure>",
        svg::render(&chart, W, H),
        esc(caption("latency"))
    );
    let _ = write!(s, "<script>{JS_CHECK}</script>\n</body></html>\n");
    s
}

/// The charts with their captions, and what is missing from them.
fn chart_figures(s: &mut String, typed: &[(&StoredRun, Document)], es: &[Entry]) {
    s.push_str("<h2>Charts</h2>\n");
    let doc_sweeps = document_sweeps(typed, es.len());
    let cs = charts(es, doc_sweeps, W, H, LegendPlace::TableWhenMany);
    if cs.is_empty() {
        s.push_str("<p class=\"note\">These runs hold no run results to chart.</p>\n");
    }
    for c in &cs {
        let table = if c.table.is_empty() {
            String::new()
        } else {
            legend_table(&c.table)
        };
        let _ = writeln!(
            s,
            "<figure>{}{table}<figcaption>{}</figcaption></figure>",
            c.svg,
            esc(caption(&c.id))
        );
    }
    let mut notes = Vec::new();
    if !cs.iter().any(|c| c.id.starts_with("sweep")) {
        notes.push("No sweep curve: give runs of one workload that differ only in --qd (or only in --threads), e.g. `iosim report 3 4 5 6`.");
    }
    if !cs.iter().any(|c| c.id.starts_with("counters")) {
        notes.push("No per-interval CPU or device counters in these runs; the CPU chart shows whole-run use.");
    }
    for n in notes {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(n));
    }
}

/// The stored documents iosim cannot read or chart, as their JSON.
fn unreadable(s: &mut String, runs: &[StoredRun], typed: &[(&StoredRun, Document)]) {
    // Documents iosim cannot read or chart.
    let readable = |r: &StoredRun| {
        typed
            .iter()
            .any(|(t, d)| t.row.id == r.row.id && !matches!(d, Document::Compare(_)))
    };
    for r in runs.iter().filter(|r| !readable(r)) {
        let _ = writeln!(
            s,
            "<h2>Run {} ({})</h2><p class=\"note\">iosim cannot chart this kind; its JSON:</p><details open><pre>{}</pre></details>",
            r.row.id,
            esc(&r.row.kind),
            esc(&serde_json::to_string_pretty(&r.doc).unwrap_or_default())
        );
    }
}
