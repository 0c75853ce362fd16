//! `iosim report`: one self-contained HTML file (inline SVG charts and a few
//! lines of inline JavaScript, nothing loaded from the network), or single
//! charts as SVG or PNG to paste into a ticket.
//!
//! Charts: latency percentile curve (log scale), latency histogram,
//! IOPS/MiB/s/latency over time, CPU (and device) counters, sweep curves
//! (IOPS and latency against queue depth or threads, knee marked), and every
//! chart overlays all the runs given.

pub mod kinds;
pub mod svg;

use serde_json::Value;
use std::fmt::Write as _;

use crate::store::{compare, meta, StoredRun};
use svg::{esc, fmt_num, fmt_us, Axis, Chart, Line, Mark};

/// One run-shaped result to draw.
pub struct Entry<'a> {
    /// Legend name.
    pub name: String,
    /// The run result.
    pub doc: &'a Value,
    /// The same, read back into its type (None if it is not a run result).
    pub result: Option<crate::runner::RunResult>,
    /// Colour index.
    pub color: usize,
    /// The stored run it comes from.
    pub run: &'a StoredRun,
}

/// Everything to draw from the stored runs.
pub fn entries(runs: &[StoredRun]) -> Vec<Entry<'_>> {
    let mut out = Vec::new();
    for r in runs {
        for (scope, doc) in meta::scopes(&r.doc) {
            let mut name = format!("#{}", r.row.id);
            if let Some(l) = &r.row.label {
                let _ = write!(name, " {l}");
            }
            if !scope.is_empty() {
                let _ = write!(name, " {scope}");
            } else if let Some(d) = workload(doc) {
                let _ = write!(name, " {d}");
            }
            let color = out.len();
            out.push(Entry {
                name,
                doc,
                result: serde_json::from_value(doc.clone()).ok(),
                color,
                run: r,
            });
        }
    }
    out
}

fn workload(doc: &Value) -> Option<String> {
    let spec: crate::workload::WorkloadSpec =
        serde_json::from_value(doc.get("config")?.clone()).ok()?;
    Some(spec.describe())
}

fn f(doc: &Value, ptr: &str) -> Option<f64> {
    doc.pointer(ptr).and_then(Value::as_f64)
}

/// Read and write latency histograms merged (nanoseconds), if the document has them.
pub fn histogram(doc: &Value) -> Option<hdrhistogram::Histogram<u64>> {
    let mut h: Option<hdrhistogram::Histogram<u64>> = None;
    for k in ["read", "write"] {
        let Some(s) = doc
            .pointer(&format!("/histograms/{k}"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        if s.is_empty() {
            continue;
        }
        let Ok(x) = crate::stats::decode_histogram(s) else {
            continue;
        };
        match &mut h {
            None => h = Some(x),
            Some(h) => {
                let _ = h.add(&x);
            }
        }
    }
    h.filter(|h| !h.is_empty())
}

/// The percentile axis position of quantile q: the number of nines, -log10(1 - q).
pub fn nines(q: f64) -> f64 {
    -(1.0 - q).log10()
}

fn percentile_ticks(max: f64) -> Vec<(f64, String)> {
    let mut t = vec![
        (0.0, "p0".to_string()),
        (nines(0.5), "p50".into()),
        (1.0, "p90".into()),
    ];
    let mut label = "p99".to_string();
    let mut x = 2.0;
    while x <= max.max(2.0) + 1e-9 {
        t.push((x, label.clone()));
        label = if label == "p99" {
            "p99.9".into()
        } else {
            format!("{label}9")
        };
        x += 1.0;
    }
    t
}

/// Latency against percentile, on log scales, from the HDR histograms (or
/// the stored percentiles when a document has no histogram).
pub fn percentile_chart(es: &[Entry]) -> Chart {
    let mut lines = Vec::new();
    let mut max_x: f64 = 3.0;
    for e in es {
        let mut pts = Vec::new();
        if let Some(h) = histogram(e.doc) {
            let top = (h.len() as f64).log10();
            let mut x = 0.0;
            while x <= top + 1e-9 {
                let q = 1.0 - 10f64.powf(-x);
                pts.push((x, h.value_at_quantile(q) as f64 / 1000.0));
                x += 0.05;
            }
            pts.push((top, h.max() as f64 / 1000.0));
            max_x = max_x.max(top);
        } else if let Some(Value::Object(p)) = e.doc.pointer("/total/total/latency_us/percentiles")
        {
            for (k, v) in p {
                if let (Ok(q), Some(v)) = (k.trim_start_matches('p').parse::<f64>(), v.as_f64()) {
                    pts.push((nines(q / 100.0), v));
                }
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        lines.push(Line {
            name: e.name.clone(),
            points: pts,
            color: e.color,
            ..Line::default()
        });
    }
    let max_x = max_x.ceil();
    let mut x = Axis::linear(
        "percentile (log scale of 1 - q: each step is one more nine)",
        fmt_num,
    );
    x.ticks = Some(percentile_ticks(max_x));
    x.min = Some(0.0);
    x.max = Some(max_x);
    Chart {
        id: "percentiles".into(),
        title: "Latency percentiles".into(),
        x,
        y: Axis::log("latency", fmt_us),
        lines,
        marks: vec![],
    }
}

/// Share of I/Os per latency bucket (20 log-spaced buckets per decade).
pub fn histogram_chart(es: &[Entry]) -> Chart {
    const PER_DECADE: f64 = 20.0;
    let mut lines = Vec::new();
    for e in es {
        let Some(h) = histogram(e.doc) else { continue };
        let mut buckets: std::collections::BTreeMap<i64, u64> = Default::default();
        for v in h.iter_recorded() {
            let us = (v.value_iterated_to() as f64 / 1000.0).max(0.01);
            *buckets
                .entry((us.log10() * PER_DECADE).floor() as i64)
                .or_default() += v.count_at_value();
        }
        let total = h.len() as f64;
        let mut pts = Vec::new();
        let (Some(&lo), Some(&hi)) = (buckets.keys().next(), buckets.keys().last()) else {
            continue;
        };
        for b in lo - 1..=hi + 1 {
            let pct = buckets.get(&b).copied().unwrap_or(0) as f64 / total * 100.0;
            pts.push((10f64.powf(b as f64 / PER_DECADE), pct));
        }
        pts.push((10f64.powf((hi + 2) as f64 / PER_DECADE), 0.0));
        lines.push(Line {
            name: e.name.clone(),
            points: pts,
            color: e.color,
            step: true,
            ..Line::default()
        });
    }
    Chart {
        id: "histogram".into(),
        title: "Latency histogram".into(),
        x: Axis::log("latency (log scale)", fmt_us),
        y: Axis::linear("% of I/Os per bucket (20 per decade)", fmt_num),
        lines,
        marks: vec![],
    }
}

fn series_points(doc: &Value, field: &str) -> Vec<(f64, f64)> {
    let Some(Value::Array(pts)) = doc.pointer("/series/total") else {
        return vec![];
    };
    pts.iter()
        .filter_map(|p| {
            Some((
                p.get("t_s")?.as_f64()?,
                p.pointer(&format!("/total/{field}"))?.as_f64()?,
            ))
        })
        .collect()
}

/// One throughput metric over time.
pub fn time_chart(es: &[Entry], id: &str, title: &str, field: &str, y_label: &str) -> Chart {
    let mut x = Axis::linear("time (s)", fmt_num);
    x.min = Some(0.0);
    Chart {
        id: id.into(),
        title: title.into(),
        x,
        y: Axis::linear(y_label, fmt_num),
        lines: es
            .iter()
            .map(|e| Line {
                name: e.name.clone(),
                points: series_points(e.doc, field),
                color: e.color,
                dots: true,
                ..Line::default()
            })
            .collect(),
        marks: vec![],
    }
}

/// p50 (solid) and p99 (dashed) latency per interval.
pub fn latency_time_chart(es: &[Entry]) -> Chart {
    let mut lines = Vec::new();
    for e in es {
        for (field, dashed, tag) in [("lat_p50_us", false, "p50"), ("lat_p99_us", true, "p99")] {
            lines.push(Line {
                name: format!("{} {tag}", e.name),
                points: series_points(e.doc, field),
                color: e.color,
                dashed,
                dots: true,
                ..Line::default()
            });
        }
    }
    let mut x = Axis::linear("time (s)", fmt_num);
    x.min = Some(0.0);
    Chart {
        id: "latency".into(),
        title: "Latency over time (p50 solid, p99 dashed)".into(),
        x,
        y: Axis::log("latency", fmt_us),
        lines,
        marks: vec![],
    }
}

/// Per-interval device and CPU counters as flat points (`t_s` plus numeric
/// fields), from a run's `monitor` (what `iosim run` records) or, for other
/// documents, from `series.cpu` / `series.device` / `series.devices`.
fn counter_points(doc: &Value, key: &str) -> Option<Vec<Value>> {
    if let Some(Value::Array(pts)) = doc.pointer(&format!("/series/{key}")) {
        return Some(pts.clone());
    }
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    let mut out: Vec<Value> = Vec::new();
    match key {
        "cpu" => {
            for p in doc.pointer("/monitor/cpu_series")?.as_array()? {
                let mut m = serde_json::Map::new();
                m.insert("t_s".into(), p.get("t_s")?.clone());
                for c in p.get("cores")?.as_array()? {
                    match c.get("cpu").and_then(Value::as_u64) {
                        None => {
                            for f in [
                                "busy_pct",
                                "user_pct",
                                "system_pct",
                                "irq_pct",
                                "iowait_pct",
                            ] {
                                if let Some(v) = num(c, f) {
                                    m.insert(format!("machine {f}"), v.into());
                                }
                            }
                        }
                        Some(n) => {
                            if let Some(v) = num(c, "busy_pct") {
                                m.insert(format!("cpu{n} busy_pct"), v.into());
                            }
                        }
                    }
                }
                out.push(Value::Object(m));
            }
        }
        "device" | "device_util" => {
            let fields: &[&str] = if key == "device" {
                &["transfers_per_sec"]
            } else {
                &["busy_pct", "avg_queue_len", "avg_transfer_ms"]
            };
            for d in doc.pointer("/monitor/devices")?.as_array()? {
                let name = d.get("name").and_then(Value::as_str).unwrap_or("device");
                for p in d.get("series")?.as_array()? {
                    let mut m = serde_json::Map::new();
                    m.insert("t_s".into(), p.get("t_s")?.clone());
                    for f in fields {
                        if let Some(v) = num(p, f) {
                            m.insert(format!("{name} {f}"), v.into());
                        }
                    }
                    out.push(Value::Object(m));
                }
            }
        }
        _ => return None,
    }
    (!out.is_empty()).then_some(out)
}

/// Charts of the device and CPU counters over time, every run overlaid.
pub fn counter_charts(es: &[Entry]) -> Vec<Chart> {
    let mut out = Vec::new();
    for (key, title) in [
        ("cpu", "CPU use over time (%)"),
        ("device", "Device transfers per second over time"),
        (
            "device_util",
            "Device busy %, average queue length and ms per transfer over time",
        ),
        ("devices", "Device counters over time"),
    ] {
        let mut lines = Vec::new();
        for e in es {
            let Some(pts) = counter_points(e.doc, key) else {
                continue;
            };
            let pts = &pts;
            let mut fields: Vec<String> = Vec::new();
            for p in pts {
                if let Value::Object(m) = p {
                    for (k, v) in m {
                        if k != "t_s" && k != "duration_s" && v.is_number() && !fields.contains(k) {
                            fields.push(k.clone());
                        }
                    }
                }
            }
            for (i, fld) in fields.iter().enumerate() {
                let points = pts
                    .iter()
                    .filter_map(|p| Some((p.get("t_s")?.as_f64()?, p.get(fld)?.as_f64()?)))
                    .collect();
                lines.push(Line {
                    name: format!("{} {fld}", e.name),
                    points,
                    color: e.color + i,
                    dashed: i % 2 == 1,
                    ..Line::default()
                });
            }
        }
        if !lines.is_empty() {
            let mut x = Axis::linear("time (s)", fmt_num);
            x.min = Some(0.0);
            out.push(Chart {
                id: format!("counters-{key}"),
                title: title.into(),
                x,
                y: Axis::linear("value", fmt_num),
                lines,
                marks: vec![],
            });
        }
    }
    out
}

/// Whole-run CPU use per run: busy, user, system, iowait of the machine, and
/// the busiest core.
pub fn cpu_bars(es: &[Entry], w: f64, h: f64) -> Option<String> {
    let cats: Vec<String> = es
        .iter()
        .map(|e| e.name.chars().take(28).collect())
        .collect();
    let get = |e: &Entry, k: &str| f(e.doc, &format!("/cpu/machine/0/{k}")).unwrap_or(0.0);
    if es.iter().all(|e| e.doc.pointer("/cpu/machine/0").is_none()) {
        return None;
    }
    let series: Vec<(String, Vec<f64>)> = [
        ("busy %", "busy_pct"),
        ("user %", "user_pct"),
        ("system %", "system_pct"),
        ("iowait %", "iowait_pct"),
    ]
    .iter()
    .map(|(n, k)| (n.to_string(), es.iter().map(|e| get(e, k)).collect()))
    .chain(std::iter::once((
        "busiest core %".to_string(),
        es.iter()
            .map(|e| f(e.doc, "/cpu/max_core_busy_pct").unwrap_or(0.0))
            .collect(),
    )))
    .collect();
    Some(svg::bars(
        "cpu",
        "CPU use during the run (whole machine, and the busiest core)",
        "% of CPU",
        &cats,
        &series,
        Some(100.0),
        w,
        h,
    ))
}

/// A sweep found among the entries: same workload except queue depth (or threads).
pub struct Sweep {
    /// `qd` or `threads`.
    pub param: &'static str,
    /// Legend name.
    pub name: String,
    /// Colour.
    pub color: usize,
    /// (param, IOPS, mean latency us, p99 latency us), sorted by param.
    pub points: Vec<(f64, f64, f64, f64)>,
    /// Index of the knee in `points`, if the curve flattens.
    pub knee: Option<usize>,
}

/// The saturation knee of a sweep, by the same rule `iosim sweep` uses
/// ([`crate::sweep::analysis::find_knee`] with its default threshold, on mean
/// latency): the last point before more load stops buying throughput. None
/// when the curve never flattens (or has fewer than three points).
pub fn knee(points: &[(f64, f64, f64, f64)]) -> Option<usize> {
    use crate::sweep::analysis::{find_knee, SeriesPoint, DEFAULT_KNEE_ELASTICITY};
    let series: Vec<SeriesPoint> = points
        .iter()
        .map(|p| SeriesPoint {
            load: p.0,
            throughput: p.1,
            latency: p.2,
        })
        .collect();
    find_knee(&series, DEFAULT_KNEE_ELASTICITY).map(|k| k.index)
}

/// The curves of `iosim sweep` results among the typed documents, coloured
/// after the `first_color` entries.
pub fn document_sweeps(
    typed: &[(&StoredRun, crate::document::Document)],
    first_color: usize,
) -> Vec<Sweep> {
    typed
        .iter()
        .filter_map(|(r, d)| match d {
            crate::document::Document::Sweep(h) => Some((r.row.id, &h.body)),
            _ => None,
        })
        .enumerate()
        .filter_map(|(i, (id, body))| kinds::sweep_curve(id, body, first_color + i))
        .collect()
}

/// Finds sweeps: groups of entries whose workload differs only in `qd` (or only in `threads`).
pub fn sweeps(es: &[Entry]) -> Vec<Sweep> {
    let mut out = Vec::new();
    for (param, other) in [("qd", "threads"), ("threads", "qd")] {
        let mut groups: Vec<(String, Vec<&Entry>)> = Vec::new();
        for e in es {
            let Some(Value::Object(cfg)) = e.doc.get("config") else {
                continue;
            };
            let mut key = cfg.clone();
            key.remove(param);
            key.remove("duration");
            key.remove("warmup");
            key.remove("seed");
            key.remove("io_limit");
            let k =
                serde_json::to_string(&key).unwrap_or_default() + &format!("{:?}", cfg.get(other));
            match groups.iter_mut().find(|g| g.0 == k) {
                Some(g) => g.1.push(e),
                None => groups.push((k, vec![e])),
            }
        }
        for (_, g) in groups {
            let mut pts: Vec<(f64, f64, f64, f64)> = g
                .iter()
                .filter_map(|e| {
                    Some((
                        f(e.doc, &format!("/config/{param}"))?,
                        f(e.doc, "/total/total/iops")?,
                        f(e.doc, "/total/total/latency_us/mean")?,
                        f(e.doc, "/total/total/latency_us/percentiles/p99")?,
                    ))
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            // Repetitions at one setting: keep their mean.
            let mut merged: Vec<(f64, f64, f64, f64, f64)> = Vec::new();
            for p in pts {
                match merged.last_mut() {
                    Some(m) if m.0 == p.0 => {
                        m.1 += p.1;
                        m.2 += p.2;
                        m.3 += p.3;
                        m.4 += 1.0;
                    }
                    _ => merged.push((p.0, p.1, p.2, p.3, 1.0)),
                }
            }
            if merged.len() < 2 {
                continue;
            }
            let points: Vec<_> = merged
                .iter()
                .map(|m| (m.0, m.1 / m.4, m.2 / m.4, m.3 / m.4))
                .collect();
            let first = g[0];
            let fixed = f(first.doc, &format!("/config/{param}")).unwrap_or(0.0);
            let (from, to) = if param == "qd" {
                (format!(" qd{fixed} "), " qd* ".to_string())
            } else {
                (format!(" x{fixed} "), " x* ".to_string())
            };
            let desc = workload(first.doc).unwrap_or_default().replace(&from, &to);
            out.push(Sweep {
                param,
                name: desc,
                color: out.len(),
                knee: knee(&points),
                points,
            });
        }
    }
    out
}

fn pow2_ticks(max: f64) -> Vec<(f64, String)> {
    let mut t = Vec::new();
    let mut v = 1.0;
    while v <= max * 1.001 {
        t.push((v, format!("{v}")));
        v *= 2.0;
    }
    t
}

/// IOPS and latency against the swept parameter, knee marked.
pub fn sweep_charts(sw: &[Sweep]) -> [Chart; 2] {
    let max = sw
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let params: Vec<&str> = sw.iter().map(|s| s.param).collect();
    let xl = if params.iter().all(|p| *p == "qd") {
        "queue depth per thread (log2)"
    } else if params.iter().all(|p| *p == "threads") {
        "threads per target (log2)"
    } else if params.iter().all(|p| *p == "outstanding") {
        "outstanding I/Os (log2)"
    } else {
        "queue depth or threads (log2)"
    };
    let min = sw
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(max, f64::min);
    let mut x = Axis::log(xl, fmt_num);
    x.ticks = Some(pow2_ticks(max));
    // A little room on both sides of the first and last setting.
    x.min = Some(min / 1.25);
    x.max = Some(max * 1.25);
    let mut iops = Chart {
        id: "sweep-iops".into(),
        title: "Sweep: IOPS (knee = where more load stops buying throughput)".into(),
        x: x.clone(),
        y: Axis::linear("IOPS", fmt_num),
        lines: vec![],
        marks: vec![],
    };
    let mut lat = Chart {
        id: "sweep-latency".into(),
        title: "Sweep: latency (mean solid, p99 dashed)".into(),
        x,
        y: Axis::log("latency", fmt_us),
        lines: vec![],
        marks: vec![],
    };
    for s in sw {
        let k = s.knee.map(|i| s.points[i]);
        iops.lines.push(Line {
            name: s.name.clone(),
            points: s.points.iter().map(|p| (p.0, p.1)).collect(),
            color: s.color,
            dots: true,
            ..Line::default()
        });
        if let Some(k) = k {
            iops.marks.push(Mark {
                x: k.0,
                y: k.1,
                label: format!("knee: {} {}, {} IOPS", s.param, k.0, fmt_num(k.1)),
                color: s.color,
            });
        }
        lat.lines.push(Line {
            name: format!("{} mean", s.name),
            points: s.points.iter().map(|p| (p.0, p.2)).collect(),
            color: s.color,
            dots: true,
            ..Line::default()
        });
        lat.lines.push(Line {
            name: format!("{} p99", s.name),
            points: s.points.iter().map(|p| (p.0, p.3)).collect(),
            color: s.color,
            dots: true,
            dashed: true,
            ..Line::default()
        });
        if let Some(k) = k {
            lat.marks.push(Mark {
                x: k.0,
                y: k.2,
                label: format!("knee: {} {}, {} mean", s.param, k.0, fmt_us(k.2)),
                color: s.color,
            });
        }
    }
    [iops, lat]
}

/// Chart sizes in the HTML page.
const W: f64 = 900.0;
const H: f64 = 440.0;

/// Every chart the report can draw for these entries, by id, as SVG.
pub fn charts(es: &[Entry], doc_sweeps: Vec<Sweep>, w: f64, h: f64) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |c: Chart| {
        if c.lines.iter().any(|l| !l.points.is_empty()) {
            out.push((c.id.clone(), svg::render(&c, w, h)));
        }
    };
    add(percentile_chart(es));
    add(histogram_chart(es));
    add(time_chart(es, "iops", "IOPS over time", "iops", "IOPS"));
    add(time_chart(
        es,
        "mibs",
        "Throughput over time",
        "mib_per_sec",
        "MiB/s",
    ));
    add(latency_time_chart(es));
    for c in counter_charts(es) {
        add(c);
    }
    let mut sw = sweeps(es);
    sw.extend(doc_sweeps);
    if !sw.is_empty() {
        for c in sweep_charts(&sw) {
            add(c);
        }
    }
    if let Some(b) = cpu_bars(es, w, h.min(380.0)) {
        out.push(("cpu".into(), b));
    }
    out
}

fn env_str(doc: &Value, ptr: &str) -> String {
    match doc.pointer(ptr) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

const CSS: &str = "body{font-family:DejaVu Sans,Liberation Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}.worse{color:#b00}.better{color:#070}.warn{color:#b00;font-weight:bold}\
figure{display:inline-block;margin:10px 10px 10px 0;vertical-align:top}figcaption{font-size:12px;color:#555;max-width:900px}\
.note{font-size:13px;color:#555}pre{font-size:11px;background:#f7f7f7;padding:8px;overflow:auto;max-height:400px}";

/// Checks the charts after the page is drawn and sets `data-charts-ok` (the
/// number drawn with content) on <body>; the browser test reads it.
const JS_CHECK: &str = "(function(){var ok=0,bad=[],all=document.querySelectorAll('svg.chart');\
for(var i=0;i<all.length;i++){var s=all[i],n=s.querySelectorAll('.series').length,b=null;\
try{b=s.getBBox();}catch(e){}if(n>0&&b&&b.width>0&&b.height>0){ok++;}else{bad.push(s.id);}}\
document.body.setAttribute('data-charts-total',String(all.length));\
document.body.setAttribute('data-charts-ok',String(ok));\
if(bad.length){document.body.setAttribute('data-charts-bad',bad.join(' '));}})();";

/// Records uncaught errors and console.error calls as attributes on <html>
/// (headless Chromium does not always log console messages to stderr).
const JS_ERRORS: &str = "window.addEventListener('error',function(e){document.documentElement.setAttribute('data-js-error',String(e.message));});\
(function(){var ce=console.error;console.error=function(){var d=document.documentElement;\
d.setAttribute('data-console-errors',String(Number(d.getAttribute('data-console-errors')||0)+1));\
return ce.apply(console,arguments);};})();";

/// Captions under each chart.
fn caption(id: &str) -> &'static str {
    match id {
        "percentiles" => "Latency at each percentile from the whole-run HDR histograms (reads and writes together). The x axis counts nines: p90, p99, p99.9 ... so the tail gets as much room as the median.",
        "histogram" => "How many I/Os took how long: the share of all I/Os in each latency bucket, buckets log-spaced (20 per decade).",
        "iops" => "Completed I/Os per second, per interval (one point per --interval).",
        "mibs" => "MiB per second, per interval.",
        "latency" => "Median and 99th-percentile latency in each interval.",
        "sweep-iops" => "IOPS as load grows. The knee (as iosim sweep finds it) is the last point before more load stops buying throughput: a step that adds under 10% of its load increase in IOPS while latency keeps rising. Beyond it, more outstanding I/O mostly adds queueing.",
        "sweep-latency" => "Latency as load grows; past the knee it rises faster than throughput.",
        "cpu" => "Whole-run CPU use of the machine (and its busiest core): a core near 100% means the run measured the CPU, not the storage.",
        _ => "Per-interval counters recorded with the run.",
    }
}

/// The whole HTML report.
pub fn html(runs: &[StoredRun]) -> String {
    let es = entries(runs);
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iosim report</title>\
         <script>{JS_ERRORS}</script><style>{CSS}</style></head><body>\n\
         <h1>iosim report</h1><p class=\"note\">Generated {} by iosim {} from {} stored run(s). Self-contained: no network needed.</p>\n",
        crate::clock::utc_now_rfc3339(),
        env!("CARGO_PKG_VERSION"),
        runs.len()
    );
    // Runs table.
    s.push_str("<h2>Runs</h2><table><tr><th class=\"l\">run</th><th class=\"l\">kind</th><th class=\"l\">label</th><th class=\"l\">started (UTC)</th>\
        <th class=\"l\">targets [device]</th><th class=\"l\">workload</th><th>s</th><th>IOPS</th><th>MiB/s</th>\
        <th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th></tr>\n");
    for e in &es {
        let d = e.doc;
        let us = |p: &str| f(d, p).map(fmt_us).unwrap_or_default();
        let r = e.run;
        let mut targets = r.row.targets.join(" ");
        if let Some(dev) = &r.row.device {
            let _ = write!(targets, " [{dev}]");
        }
        let _ = writeln!(
            s,
            "<tr><td class=\"l\"><span style=\"color:{}\">&#9632;</span> {}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            svg::PALETTE[e.color % svg::PALETTE.len()],
            esc(&e.name),
            esc(&r.row.kind),
            esc(r.row.label.as_deref().unwrap_or("")),
            esc(&env_str(d, "/started_at")),
            esc(&targets),
            esc(&workload(d).unwrap_or_default()),
            f(d, "/duration_s").map(|v| format!("{v:.1}")).unwrap_or_default(),
            f(d, "/total/total/iops").map(fmt_num).unwrap_or_default(),
            f(d, "/total/total/mib_per_sec").map(fmt_num).unwrap_or_default(),
            us("/total/total/latency_us/mean"),
            us("/total/total/latency_us/percentiles/p50"),
            us("/total/total/latency_us/percentiles/p99"),
            us("/total/total/latency_us/percentiles/p99.9"),
            us("/total/total/latency_us/max"),
            env_str(d, "/errors/count"),
        );
    }
    s.push_str("</table>\n");
    // Machines and where the targets lived, each distinct one once.
    let mut hosts: Vec<[String; 6]> = Vec::new();
    let mut places: Vec<[String; 6]> = Vec::new();
    for e in &es {
        let d = e.doc;
        let h = [
            env_str(d, "/environment/host"),
            env_str(d, "/environment/kernel"),
            env_str(d, "/environment/cpu_model"),
            env_str(d, "/environment/cpus"),
            f(d, "/environment/mem_total_bytes")
                .map(|b| crate::units::format_size(b as u64))
                .unwrap_or_default(),
            env_str(d, "/environment/clocksource"),
        ];
        if !hosts.contains(&h) {
            hosts.push(h);
        }
        for t in e
            .run
            .row
            .environment
            .iter()
            .filter_map(Value::as_array)
            .flatten()
        {
            let g = |k: &str| env_str(t, &format!("/{k}"));
            let size = t
                .get("device_size")
                .and_then(Value::as_u64)
                .map(crate::units::format_size)
                .unwrap_or_default();
            let p = [
                g("path"),
                g("filesystem"),
                g("mount_point"),
                g("mount_options"),
                format!("{} {}", g("device"), g("model")).trim().to_string(),
                size,
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
    // Relative differences against the first.
    if es.len() > 1 {
        s.push_str("<h2>Compared with the first</h2>");
        // Runs of different workloads are compared only with a warning.
        let mut kinds: Vec<String> = Vec::new();
        for w in es
            .iter()
            .filter_map(|e| e.result.as_ref())
            .map(crate::store::render::workload_key)
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
        let side =
            |e: &Entry| compare::Side::new(&e.name, vec![0], &e.result.iter().collect::<Vec<_>>());
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
    s.push_str("<h2>Charts</h2>\n");
    let typed = kinds::typed(runs);
    let doc_sweeps = document_sweeps(&typed, es.len());
    let cs = charts(&es, doc_sweeps, W, H);
    if cs.is_empty() {
        s.push_str("<p class=\"note\">These runs hold no run results to chart.</p>\n");
    }
    for (id, svg) in &cs {
        let _ = writeln!(
            s,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(caption(id))
        );
    }
    let mut notes = Vec::new();
    if !cs.iter().any(|c| c.0.starts_with("sweep")) {
        notes.push("No sweep curve: give runs of one workload that differ only in --qd (or only in --threads), e.g. `iosim report 3 4 5 6`.");
    }
    if !cs.iter().any(|c| c.0.starts_with("counters")) {
        notes.push("No per-interval CPU or device counters in these runs; the CPU chart shows whole-run use.");
    }
    for n in notes {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(n));
    }
    // Sweeps, profiles, simulations and matrices: their own sections.
    s.push_str(&kinds::sections(&typed));
    // Documents iosim cannot read or chart.
    let readable = |r: &StoredRun| {
        typed.iter().any(|(t, d)| {
            t.row.id == r.row.id && !matches!(d, crate::document::Document::Compare(_))
        })
    };
    for r in runs
        .iter()
        .filter(|r| meta::scopes(&r.doc).is_empty() && !readable(r))
    {
        let _ = writeln!(
            s,
            "<h2>Run {} ({})</h2><p class=\"note\">iosim cannot chart this kind; its JSON:</p><details open><pre>{}</pre></details>",
            r.row.id,
            esc(&r.row.kind),
            esc(&serde_json::to_string_pretty(&r.doc).unwrap_or_default())
        );
    }
    let _ = write!(s, "<script>{JS_CHECK}</script>\n</body></html>\n");
    s
}

/// Renders an SVG document to PNG bytes with resvg (system fonts), at `scale`.
pub fn png(svg: &str, scale: f32) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    if opt.fontdb.is_empty() {
        eprintln!("iosim: warning: no system fonts found, so the PNG has no text: install a font package (e.g. fonts-dejavu-core)");
    }
    let tree = usvg::Tree::from_str(svg, &opt)?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| anyhow::anyhow!("chart size is empty"))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        anyhow::anyhow!("cannot allocate a {}x{} image", size.width(), size.height())
    })?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    Ok(pixmap.encode_png()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn monitor_counters_become_time_series() {
        let doc = serde_json::json!({"monitor": {
            "cpu_series": [
                {"t_s": 1.0, "cores": [{"busy_pct": 50.0, "user_pct": 20.0}, {"cpu": 0, "busy_pct": 70.0}]},
                {"t_s": 2.0, "cores": [{"busy_pct": 60.0, "user_pct": 25.0}, {"cpu": 0, "busy_pct": 80.0}]}
            ],
            "devices": [{"name": "vda", "series": [
                {"t_s": 1.0, "transfers_per_sec": 1000.0, "busy_pct": 40.0, "avg_queue_len": 2.0},
                {"t_s": 2.0, "transfers_per_sec": 1200.0, "busy_pct": 45.0, "avg_queue_len": 2.5}
            ]}]
        }});
        let cpu = counter_points(&doc, "cpu").unwrap();
        assert_eq!(cpu.len(), 2);
        assert_eq!(cpu[1]["machine busy_pct"], 60.0);
        assert_eq!(cpu[0]["cpu0 busy_pct"], 70.0);
        let dev = counter_points(&doc, "device").unwrap();
        assert_eq!(dev[1]["vda transfers_per_sec"], 1200.0);
        assert!(
            dev[0].get("vda busy_pct").is_none(),
            "utilisation goes on its own chart"
        );
        let util = counter_points(&doc, "device_util").unwrap();
        assert_eq!(util[0]["vda avg_queue_len"], 2.0);
        assert!(counter_points(&serde_json::json!({}), "cpu").is_none());
    }

    use super::*;

    #[test]
    fn the_report_and_the_sweep_find_the_same_knee() {
        // IOPS saturates at qd 8 while latency keeps growing.
        let pts = [
            (1.0, 10_000.0, 100.0, 150.0),
            (2.0, 19_000.0, 105.0, 160.0),
            (4.0, 34_000.0, 118.0, 190.0),
            (8.0, 45_000.0, 178.0, 300.0),
            (16.0, 47_000.0, 340.0, 700.0),
            (32.0, 47_500.0, 673.0, 1500.0),
        ];
        let series: Vec<_> = pts
            .iter()
            .map(|p| crate::sweep::analysis::SeriesPoint {
                load: p.0,
                throughput: p.1,
                latency: p.2,
            })
            .collect();
        let sweep = crate::sweep::analysis::find_knee(
            &series,
            crate::sweep::analysis::DEFAULT_KNEE_ELASTICITY,
        )
        .unwrap();
        assert_eq!(knee(&pts), Some(sweep.index));
        assert_eq!(
            sweep.index, 3,
            "qd 8: going to 16 adds 4% IOPS for 100% load"
        );
        // A curve that never flattens has no knee in either.
        let rising = [
            (1.0, 1.0, 10.0, 10.0),
            (2.0, 2.0, 10.0, 10.0),
            (4.0, 4.0, 10.0, 10.0),
        ];
        assert_eq!(knee(&rising), None);
    }

    #[test]
    fn counters_are_charted_when_present() {
        let run = crate::store::StoredRun {
            row: crate::store::RunRow {
                id: 1,
                kind: "run".into(),
                started_at: "t".into(),
                label: None,
                host: None,
                targets: vec![],
                device: None,
                profile: None,
                iosim_version: None,
                group: None,
                environment: None,
            },
            doc: serde_json::json!({"total": {"total": {"iops": 1.0}},
                "series": {"cpu": [{"t_s": 1.0, "busy_pct": 50.0, "iowait_pct": 5.0}, {"t_s": 2.0, "busy_pct": 60.0, "iowait_pct": 4.0}],
                           "device": [{"t_s": 1.0, "util_pct": 90.0, "note": "x"}]}}),
        };
        let es = entries(std::slice::from_ref(&run));
        let cs = counter_charts(&es);
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[0].lines.len(), 2, "busy_pct and iowait_pct");
        assert_eq!(cs[0].lines[0].points, vec![(1.0, 50.0), (2.0, 60.0)]);
        assert_eq!(cs[1].lines.len(), 1, "non-numeric fields are skipped");
        let ids: Vec<String> = charts(&es, Vec::new(), 600.0, 300.0)
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert!(ids.contains(&"counters-cpu".to_string()), "{ids:?}");
        // No histogram, series or sweep: those charts are left out, not drawn empty.
        assert!(!ids.contains(&"percentiles".to_string()));
    }

    #[test]
    fn percentile_axis() {
        assert!((nines(0.99) - 2.0).abs() < 1e-12);
        let t = percentile_ticks(4.0);
        assert_eq!(t.last().unwrap().1, "p99.99");
    }
}
