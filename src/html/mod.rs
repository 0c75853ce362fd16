//! `iosim report`: one self-contained HTML file (inline SVG charts and a few
//! lines of inline JavaScript, nothing loaded from the network), or single
//! charts as SVG or PNG to paste into a ticket.
//!
//! Charts: latency percentile curve (log scale), latency histogram,
//! IOPS/MiB/s/latency over time, CPU (and device) counters, sweep curves
//! (IOPS and latency against queue depth or threads, knee marked), and every
//! chart overlays all the runs given.

pub mod kinds;
pub mod qualify;
pub mod svg;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::comparison as compare;
use crate::document::Document;
use crate::runner::{PointStats, RunResult};
use crate::stats::Percentile;
use crate::store::StoredRun;
use svg::{esc, fmt_num, fmt_us, Axis, Chart, Line, Mark};

/// One run result to draw.
pub struct Entry<'a> {
    /// Legend name.
    pub name: String,
    /// The run result.
    pub result: &'a RunResult,
    /// Colour index.
    pub color: usize,
    /// The stored run it comes from.
    pub run: &'a StoredRun,
}

/// Everything to draw from the typed documents ([`kinds::typed`]): each
/// run result they hold (a run has one, a quick suite one per test, a
/// profile one per workload).
pub fn entries<'a>(typed: &'a [(&'a StoredRun, Document)]) -> Vec<Entry<'a>> {
    let mut out = Vec::new();
    for (r, doc) in typed {
        for (scope, result) in doc.runs() {
            let mut name = format!("#{}", r.row.id);
            if let Some(l) = &r.row.label {
                let _ = write!(name, " {l}");
            }
            if !scope.is_empty() {
                let _ = write!(name, " {scope}");
            } else {
                let _ = write!(name, " {}", result.config.describe());
            }
            let color = out.len();
            out.push(Entry {
                name,
                result,
                color,
                run: r,
            });
        }
    }
    out
}

/// Read and write latency histograms merged (nanoseconds), if the result has them.
pub fn histogram(r: &RunResult) -> Option<hdrhistogram::Histogram<u64>> {
    let mut h: Option<hdrhistogram::Histogram<u64>> = None;
    for s in [&r.histograms.read, &r.histograms.write] {
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
        if let Some(h) = histogram(e.result) {
            let top = (h.len() as f64).log10();
            let mut x = 0.0;
            while x <= top + 1e-9 {
                let q = 1.0 - 10f64.powf(-x);
                pts.push((x, h.value_at_quantile(q) as f64 / 1000.0));
                x += 0.05;
            }
            pts.push((top, h.max() as f64 / 1000.0));
            max_x = max_x.max(top);
        } else {
            // No histogram (a document from an older iosim): the stored percentiles.
            for (k, v) in &e.result.total.total.latency_us.percentiles {
                if let Ok(q) = k.trim_start_matches('p').parse::<f64>() {
                    pts.push((nines(q / 100.0), *v));
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
        let Some(h) = histogram(e.result) else {
            continue;
        };
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

fn series_points(r: &RunResult, field: fn(&PointStats) -> f64) -> Vec<(f64, f64)> {
    r.series
        .total
        .iter()
        .map(|p| (p.t_s, field(&p.total)))
        .collect()
}

/// One throughput metric over time.
pub fn time_chart(
    es: &[Entry],
    id: &str,
    title: &str,
    field: fn(&PointStats) -> f64,
    y_label: &str,
) -> Chart {
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
                points: series_points(e.result, field),
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
        let p50: fn(&PointStats) -> f64 = |p| p.lat_p50_us;
        let p99: fn(&PointStats) -> f64 = |p| p.lat_p99_us;
        for (field, dashed, tag) in [(p50, false, "p50"), (p99, true, "p99")] {
            lines.push(Line {
                name: format!("{} {tag}", e.name),
                points: series_points(e.result, field),
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

/// Per-interval counters of a run's `monitor`, one named line each: for
/// `cpu` the machine's busy, user, system, irq and iowait shares and each
/// core's busy share (in name order); for `device` each device's transfers
/// per second, for `device_util` its busy %, mean queue length and ms per
/// transfer (devices in the order monitored, fields in name order).
fn counter_lines(r: &RunResult, key: &str) -> Vec<(String, Vec<(f64, f64)>)> {
    match key {
        "cpu" => {
            let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
            for p in &r.monitor.cpu_series {
                for c in &p.cores {
                    let mut add = |name: String, v: f64| {
                        if v.is_finite() {
                            lines.entry(name).or_default().push((p.t_s, v));
                        }
                    };
                    match c.cpu {
                        None => {
                            for (f, v) in [
                                ("busy_pct", c.busy_pct),
                                ("user_pct", c.user_pct),
                                ("system_pct", c.system_pct),
                                ("irq_pct", c.irq_pct),
                                ("iowait_pct", c.iowait_pct),
                            ] {
                                add(format!("machine {f}"), v);
                            }
                        }
                        Some(n) => add(format!("cpu{n} busy_pct"), c.busy_pct),
                    }
                }
            }
            lines.into_iter().collect()
        }
        "device" | "device_util" => {
            type Field = (
                &'static str,
                fn(&crate::sysmon::diskstats::DeviceCounters) -> f64,
            );
            let fields: &[Field] = if key == "device" {
                &[("transfers_per_sec", |d| d.transfers_per_sec)]
            } else {
                &[
                    ("avg_queue_len", |d| d.avg_queue_len),
                    ("avg_transfer_ms", |d| d.avg_transfer_ms),
                    ("busy_pct", |d| d.busy_pct),
                ]
            };
            let mut out = Vec::new();
            for d in &r.monitor.devices {
                for (f, get) in fields {
                    let pts: Vec<(f64, f64)> = d
                        .series
                        .iter()
                        .map(|p| (p.t_s, get(p)))
                        .filter(|p| p.1.is_finite())
                        .collect();
                    if !pts.is_empty() {
                        out.push((format!("{} {f}", d.name), pts));
                    }
                }
            }
            out
        }
        _ => Vec::new(),
    }
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
    ] {
        let mut lines = Vec::new();
        for e in es {
            for (i, (name, points)) in counter_lines(e.result, key).into_iter().enumerate() {
                lines.push(Line {
                    name: format!("{} {name}", e.name),
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
    type Share = fn(&crate::sysmon::cpu::CoreUtil) -> f64;
    let get = |e: &Entry, k: Share| e.result.cpu.machine.first().map_or(0.0, k);
    if es.iter().all(|e| e.result.cpu.machine.is_empty()) {
        return None;
    }
    let shares: [(&str, Share); 4] = [
        ("busy %", |c| c.busy_pct),
        ("user %", |c| c.user_pct),
        ("system %", |c| c.system_pct),
        ("iowait %", |c| c.iowait_pct),
    ];
    let series: Vec<(String, Vec<f64>)> = shares
        .iter()
        .map(|(n, k)| (n.to_string(), es.iter().map(|e| get(e, *k)).collect()))
        .chain(std::iter::once((
            "busiest core %".to_string(),
            es.iter().map(|e| e.result.cpu.max_core_busy_pct).collect(),
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
    /// The points, sorted by load.
    pub points: Vec<SweepPoint>,
    /// Index of the knee in `points`, if the curve flattens.
    pub knee: Option<usize>,
}

/// One point of a [`Sweep`]'s curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepPoint {
    /// The swept setting (queue depth, threads or outstanding I/Os).
    pub load: f64,
    /// IOPS.
    pub iops: f64,
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// p99 latency, microseconds.
    pub p99_us: f64,
}

impl SweepPoint {
    /// A point from (load, IOPS, mean latency us, p99 latency us).
    pub const fn new(load: f64, iops: f64, mean_us: f64, p99_us: f64) -> SweepPoint {
        SweepPoint {
            load,
            iops,
            mean_us,
            p99_us,
        }
    }
}

/// The saturation knee of a sweep, by the one rule `iosim sweep` uses
/// ([`crate::sweep::analysis::judge_knee`] with its default threshold, on mean
/// latency): the last point before more load stops buying throughput. The
/// points here are means without their spread, so they count as single runs:
/// the means decide. None when the curve never flattens (or has fewer than
/// three points).
pub fn knee(points: &[SweepPoint]) -> Option<usize> {
    use crate::sweep::analysis::{find_knee, SeriesPoint, DEFAULT_KNEE_ELASTICITY};
    let series: Vec<SeriesPoint> = points
        .iter()
        .map(|p| SeriesPoint::single(p.load, p.iops, p.mean_us))
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
    for param in ["qd", "threads"] {
        let setting = |spec: &crate::workload::WorkloadSpec| {
            f64::from(if param == "qd" { spec.qd } else { spec.threads })
        };
        // The workload without the swept setting and what does not change
        // what is measured (run time, warm-up, seed, I/O limit).
        let key = |spec: &crate::workload::WorkloadSpec| {
            let mut k = spec.clone();
            if param == "qd" {
                k.qd = 0;
            } else {
                k.threads = 0;
            }
            k.duration = Default::default();
            k.warmup = Default::default();
            k.seed = 0;
            k.io_limit = None;
            k
        };
        let mut groups: Vec<(crate::workload::WorkloadSpec, Vec<&Entry>)> = Vec::new();
        for e in es {
            let k = key(&e.result.config);
            match groups.iter_mut().find(|g| g.0 == k) {
                Some(g) => g.1.push(e),
                None => groups.push((k, vec![e])),
            }
        }
        for (_, g) in groups {
            let mut pts: Vec<SweepPoint> = g
                .iter()
                .filter_map(|e| {
                    let t = &e.result.total.total;
                    Some(SweepPoint::new(
                        setting(&e.result.config),
                        t.iops,
                        t.latency_us.mean,
                        t.latency_us.get(Percentile::P99)?,
                    ))
                })
                .collect();
            pts.sort_by(|a, b| a.load.total_cmp(&b.load));
            // Repetitions at one setting: keep their mean.
            let mut merged: Vec<(SweepPoint, f64)> = Vec::new();
            for p in pts {
                match merged.last_mut() {
                    Some((m, n)) if m.load == p.load => {
                        m.iops += p.iops;
                        m.mean_us += p.mean_us;
                        m.p99_us += p.p99_us;
                        *n += 1.0;
                    }
                    _ => merged.push((p, 1.0)),
                }
            }
            if merged.len() < 2 {
                continue;
            }
            let points: Vec<_> = merged
                .iter()
                .map(|(m, n)| SweepPoint::new(m.load, m.iops / n, m.mean_us / n, m.p99_us / n))
                .collect();
            let first = &g[0].result.config;
            let fixed = setting(first);
            let (from, to) = if param == "qd" {
                (format!(" qd{fixed} "), " qd* ".to_string())
            } else {
                (format!(" x{fixed} "), " x* ".to_string())
            };
            let desc = first.describe().replace(&from, &to);
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
        .flat_map(|s| s.points.iter().map(|p| p.load))
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
        .flat_map(|s| s.points.iter().map(|p| p.load))
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
            points: s.points.iter().map(|p| (p.load, p.iops)).collect(),
            color: s.color,
            dots: true,
            ..Line::default()
        });
        if let Some(k) = k {
            iops.marks.push(Mark {
                x: k.load,
                y: k.iops,
                label: format!("knee: {} {}, {} IOPS", s.param, k.load, fmt_num(k.iops)),
                color: s.color,
            });
        }
        lat.lines.push(Line {
            name: format!("{} mean", s.name),
            points: s.points.iter().map(|p| (p.load, p.mean_us)).collect(),
            color: s.color,
            dots: true,
            ..Line::default()
        });
        lat.lines.push(Line {
            name: format!("{} p99", s.name),
            points: s.points.iter().map(|p| (p.load, p.p99_us)).collect(),
            color: s.color,
            dots: true,
            dashed: true,
            ..Line::default()
        });
        if let Some(k) = k {
            lat.marks.push(Mark {
                x: k.load,
                y: k.mean_us,
                label: format!("knee: {} {}, {} mean", s.param, k.load, fmt_us(k.mean_us)),
                color: s.color,
            });
        }
    }
    [iops, lat]
}

/// Chart sizes in the HTML page.
const W: f64 = 900.0;
const H: f64 = 440.0;

/// Where a chart's legend goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LegendPlace {
    /// Inside the image, under the plot (single `--svg`/`--png` charts).
    InChart,
    /// In the page: a table keyed by colour under the chart when the
    /// in-chart legend would take more than [`MAX_LEGEND_ROWS`] rows.
    TableWhenMany,
}

/// The most rows an in-chart legend takes in the HTML page; beyond it the
/// legend becomes a table under the chart.
pub const MAX_LEGEND_ROWS: f64 = 2.0;

/// One drawn chart.
pub struct Figure {
    /// Its id (the `--chart` name).
    pub id: String,
    /// The `<svg>` element.
    pub svg: String,
    /// Its legend, when the page prints it as a table (empty: in the chart).
    pub table: Vec<svg::Key>,
}

/// Every chart the report can draw for these entries, as SVG.
pub fn charts(
    es: &[Entry],
    doc_sweeps: Vec<Sweep>,
    w: f64,
    h: f64,
    legend: LegendPlace,
) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::new();
    let mut add = |c: Chart| {
        if c.lines.iter().any(|l| !l.points.is_empty()) {
            let keys = svg::keys(&c);
            let (ml, mr, _) = svg::MARGINS;
            let table = legend == LegendPlace::TableWhenMany
                && svg::legend_rows(&keys, w - ml - mr) > MAX_LEGEND_ROWS;
            out.push(Figure {
                id: c.id.clone(),
                svg: svg::render_with(&c, w, h, !table),
                table: if table { keys } else { Vec::new() },
            });
        }
    };
    add(percentile_chart(es));
    add(histogram_chart(es));
    add(time_chart(es, "iops", "IOPS over time", |p| p.iops, "IOPS"));
    add(time_chart(
        es,
        "mibs",
        "Throughput over time",
        |p| p.mib_per_sec,
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
        out.push(Figure {
            id: "cpu".into(),
            svg: b,
            table: Vec::new(),
        });
    }
    out
}

/// A chart's legend as a table keyed by colour: one row per line, its
/// colour (and dash) drawn beside its name.
pub fn legend_table(keys: &[svg::Key]) -> String {
    let mut s = String::from(
        "<table class=\"legend\"><tr><th></th><th class=\"l\">line (dashed: p99, or the second of a pair)</th></tr>",
    );
    for (name, color, dashed) in keys {
        let c = svg::color(*color);
        let dash = if *dashed {
            " stroke-dasharray=\"6,4\""
        } else {
            ""
        };
        let _ = write!(
            s,
            "<tr class=\"key\" data-color=\"{c}\"><td><svg width=\"34\" height=\"10\"><line x1=\"2\" y1=\"5\" x2=\"32\" y2=\"5\" stroke=\"{c}\" stroke-width=\"3\"{dash}/></svg></td><td class=\"l\">{}</td></tr>",
            esc(name)
        );
    }
    s.push_str("</table>");
    s
}

const CSS: &str = "body{font-family:DejaVu Sans,Liberation Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}.worse{color:#b00}.better{color:#070}.warn{color:#b00;font-weight:bold}\
figure{display:inline-block;margin:10px 10px 10px 0;vertical-align:top}table.legend{margin:2px 0 6px 78px}table.legend td{border:none;padding:1px 6px}table.legend th{background:none;border:none}figcaption{font-size:12px;color:#555;max-width:900px}\
.note{font-size:13px;color:#555}pre{font-size:11px;background:#f7f7f7;padding:8px;overflow:auto;max-height:400px}";

/// Checks the charts after the page is drawn and sets `data-charts-ok` (the
/// number drawn with content) on <body>; the browser test reads it.
pub const JS_CHECK: &str =
    "(function(){var ok=0,bad=[],all=document.querySelectorAll('svg.chart');\
for(var i=0;i<all.length;i++){var s=all[i],n=s.querySelectorAll('.series').length,b=null;\
try{b=s.getBBox();}catch(e){}if(n>0&&b&&b.width>0&&b.height>0){ok++;}else{bad.push(s.id);}}\
document.body.setAttribute('data-charts-total',String(all.length));\
document.body.setAttribute('data-charts-ok',String(ok));\
if(bad.length){document.body.setAttribute('data-charts-bad',bad.join(' '));}})();";

/// Records uncaught errors and console.error calls as attributes on <html>
/// (headless Chromium does not always log console messages to stderr).
pub const JS_ERRORS: &str = "window.addEventListener('error',function(e){document.documentElement.setAttribute('data-js-error',String(e.message));});\
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
        crate::qualify::verdict_html::CSS,
        crate::clock::utc_now_rfc3339(),
        env!("CARGO_PKG_VERSION"),
        runs.len()
    );
    // Runs table.
    s.push_str("<h2>Runs</h2><table><tr><th class=\"l\">run</th><th class=\"l\">kind</th><th class=\"l\">label</th><th class=\"l\">started (UTC)</th>\
        <th class=\"l\">targets [device]</th><th class=\"l\">workload</th><th>s</th><th>IOPS</th><th>MiB/s</th>\
        <th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th></tr>\n");
    for e in &es {
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
    // Machines and where the targets lived, each distinct one once.
    let mut hosts: Vec<[String; 6]> = Vec::new();
    let mut places: Vec<[String; 6]> = Vec::new();
    for e in &es {
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
    s.push_str("<h2>Charts</h2>\n");
    let doc_sweeps = document_sweeps(&typed, es.len());
    let cs = charts(&es, doc_sweeps, W, H, LegendPlace::TableWhenMany);
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
    // Sweeps, profiles, simulations and matrices: their own sections.
    s.push_str(&kinds::sections(&typed));
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
    use super::*;

    /// A real (null-engine) result whose monitor saw two intervals of CPU
    /// and device counters.
    fn with_counters() -> RunResult {
        use crate::sysmon::cpu::CoreUtil;
        use crate::sysmon::diskstats::DeviceCounters;
        use crate::sysmon::sampler::{CpuPoint, DeviceSeries};
        let spec = crate::workload::WorkloadSpec {
            engine: crate::workload::EngineKind::Null,
            duration: std::time::Duration::from_millis(20),
            ..Default::default()
        };
        let mut r = crate::runner::run(&spec, &Default::default()).unwrap();
        let cpu = |t_s, busy, core| CpuPoint {
            t_s,
            duration_s: 1.0,
            cores: vec![
                CoreUtil {
                    busy_pct: busy,
                    user_pct: busy / 2.0,
                    ..CoreUtil::default()
                },
                CoreUtil {
                    cpu: Some(0),
                    busy_pct: core,
                    ..CoreUtil::default()
                },
            ],
        };
        r.monitor.cpu_series = vec![cpu(1.0, 50.0, 70.0), cpu(2.0, 60.0, 80.0)];
        let dev = |t_s, tps, busy, q| DeviceCounters {
            t_s,
            transfers_per_sec: tps,
            busy_pct: busy,
            avg_queue_len: q,
            ..DeviceCounters::default()
        };
        r.monitor.devices = vec![DeviceSeries {
            name: "vda".into(),
            whole: DeviceCounters::default(),
            series: vec![dev(1.0, 1000.0, 40.0, 2.0), dev(2.0, 1200.0, 45.0, 2.5)],
        }];
        r
    }

    #[test]
    fn monitor_counters_become_time_series() {
        let r = with_counters();
        let cpu = counter_lines(&r, "cpu");
        let names: Vec<&str> = cpu.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "cpu0 busy_pct",
                "machine busy_pct",
                "machine iowait_pct",
                "machine irq_pct",
                "machine system_pct",
                "machine user_pct"
            ]
        );
        assert_eq!(cpu[1].1, vec![(1.0, 50.0), (2.0, 60.0)]);
        assert_eq!(cpu[0].1, vec![(1.0, 70.0), (2.0, 80.0)]);
        let dev = counter_lines(&r, "device");
        assert_eq!(dev.len(), 1, "utilisation goes on its own chart");
        assert_eq!(dev[0].0, "vda transfers_per_sec");
        assert_eq!(dev[0].1[1], (2.0, 1200.0));
        let util = counter_lines(&r, "device_util");
        assert_eq!(util[0].0, "vda avg_queue_len");
        assert_eq!(util[0].1[0], (1.0, 2.0));
        let mut quiet = r.clone();
        quiet.monitor = Default::default();
        assert!(counter_lines(&quiet, "cpu").is_empty());
    }

    #[test]
    fn the_report_and_the_sweep_find_the_same_knee() {
        // IOPS saturates at qd 8 while latency keeps growing.
        let pts = [
            SweepPoint::new(1.0, 10_000.0, 100.0, 150.0),
            SweepPoint::new(2.0, 19_000.0, 105.0, 160.0),
            SweepPoint::new(4.0, 34_000.0, 118.0, 190.0),
            SweepPoint::new(8.0, 45_000.0, 178.0, 300.0),
            SweepPoint::new(16.0, 47_000.0, 340.0, 700.0),
            SweepPoint::new(32.0, 47_500.0, 673.0, 1500.0),
        ];
        let series: Vec<_> = pts
            .iter()
            .map(|p| crate::sweep::analysis::SeriesPoint::single(p.load, p.iops, p.mean_us))
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
            SweepPoint::new(1.0, 1.0, 10.0, 10.0),
            SweepPoint::new(2.0, 2.0, 10.0, 10.0),
            SweepPoint::new(4.0, 4.0, 10.0, 10.0),
        ];
        assert_eq!(knee(&rising), None);
    }

    #[test]
    fn counters_are_charted_when_present() {
        let mut r = with_counters();
        r.histograms = Default::default();
        r.series = Default::default();
        r.total.total.latency_us.percentiles.clear();
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
            doc: Document::run(r).to_value(),
        };
        let typed = kinds::typed(std::slice::from_ref(&run));
        let es = entries(&typed);
        let cs = counter_charts(&es);
        assert_eq!(cs.len(), 3);
        assert_eq!(
            cs[0].lines.len(),
            6,
            "the machine's five shares and one core"
        );
        assert_eq!(cs[1].lines.len(), 1, "transfers per second");
        assert_eq!(cs[2].lines.len(), 3, "busy, queue length, ms per transfer");
        let ids: Vec<String> = charts(&es, Vec::new(), 600.0, 300.0, LegendPlace::InChart)
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert!(ids.contains(&"counters-cpu".to_string()), "{ids:?}");
        // No histogram, series or sweep: those charts are left out, not drawn empty.
        assert!(!ids.contains(&"percentiles".to_string()));
        assert!(!ids.contains(&"iops".to_string()));
    }

    #[test]
    fn percentile_axis() {
        assert!((nines(0.99) - 2.0).abs() < 1e-12);
        let t = percentile_ticks(4.0);
        assert_eq!(t.last().unwrap().1, "p99.99");
    }
}
