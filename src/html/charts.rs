//! The charts: latency percentiles and histogram, series over time,
//! counters, CPU, sweep curves; each as a [`Chart`] drawn by [`svg`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::data::{histogram, nines, sweeps, Entry, Sweep};
use super::svg::{self, esc, fmt_num, fmt_us, Axis, Chart, Line, Mark};
use crate::runner::{PointStats, RunResult};

pub(super) fn percentile_ticks(max: f64) -> Vec<(f64, String)> {
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
        marks: es.iter().flat_map(|e| change_marks(e, field)).collect(),
    }
}

/// The run's changes over time and rate limits (docs/changes.md) as
/// labelled points on an over-time chart of `field`: each at the interval
/// where it began.
fn change_marks(e: &Entry, field: fn(&PointStats) -> f64) -> Vec<Mark> {
    use crate::changes::ChangeKind;
    let pts = &e.result.series.total;
    let at = |t: f64| {
        pts.iter()
            .find(|p| p.t_s > t + 1e-9)
            .or(pts.last())
            .map_or(0.0, |p| field(&p.total))
    };
    let c = &e.result.changes;
    let mut out: Vec<Mark> = c
        .events
        .iter()
        .map(|ev| Mark {
            x: ev.at_s,
            y: at(ev.at_s),
            label: match ev.kind {
                ChangeKind::StepDown | ChangeKind::StepUp => {
                    format!("step {:+.0}%", ev.change_pct)
                }
                ChangeKind::Drift => format!("drift {:+.0}%", ev.change_pct),
                ChangeKind::PeriodicStalls => {
                    format!("stalls every {:.1} s", ev.period_s.unwrap_or(0.0))
                }
            },
            color: e.color,
        })
        .collect();
    out.extend(c.rate_limits.iter().map(|l| Mark {
        x: (l.from_s + l.to_s) / 2.0,
        y: at((l.from_s + l.to_s) / 2.0),
        label: format!("rate limit {}", l.level()),
        color: e.color,
    }));
    out
}

/// p50 (solid), p99 (dashed) and max (thin) latency per interval of each run.
pub fn latency_time_chart(es: &[Entry]) -> Chart {
    latency_over_time(es.iter().map(|e| {
        let pts = e
            .result
            .series
            .total
            .iter()
            .map(|p| {
                (
                    p.t_s,
                    [p.total.lat_p50_us, p.total.lat_p99_us, p.total.lat_max_us],
                )
            })
            .collect();
        (e.name.clone(), e.color, pts)
    }))
}

/// Latency over time from per-interval (time s, [p50, p99, max] µs) points,
/// one named, coloured set each: p50 solid, p99 dashed, max thin. A series
/// longer than the chart is wide (a day of 1 s intervals) is drawn as each
/// pixel column's min-max envelope, and the chart says so ([`svg::render`]);
/// extra markers go in the chart's `marks`.
pub fn latency_over_time(
    runs: impl Iterator<Item = (String, usize, Vec<(f64, [f64; 3])>)>,
) -> Chart {
    let mut lines = Vec::new();
    for (name, color, pts) in runs {
        for (i, tag) in ["p50", "p99", "max"].into_iter().enumerate() {
            lines.push(Line {
                name: format!("{name} {tag}"),
                points: pts.iter().map(|(t, v)| (*t, v[i])).collect(),
                color,
                dashed: i == 1,
                thin: i == 2,
                dots: i < 2,
                ..Line::default()
            });
        }
    }
    let mut x = Axis::linear("time (s)", fmt_num);
    x.min = Some(0.0);
    Chart {
        id: "latency".into(),
        title: "Latency over time (p50 solid, p99 dashed, max thin)".into(),
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
pub(super) fn counter_lines(r: &RunResult, key: &str) -> Vec<(String, Vec<(f64, f64)>)> {
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
