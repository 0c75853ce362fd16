//! The fingerprint as a text table for a DBA: one table per layer, one
//! column per stream, one row per metric ([`metrics`], the list
//! `--compare` walks too).

use std::fmt::Write as _;

use super::{Fingerprint, StreamPrint};
use crate::units::{format_count, format_size};

/// How a metric's value reads, and which tolerance `--compare` applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A share 0..1 (absolute tolerance near 0).
    Share,
    /// A ratio to writes (flushes per write; absolute tolerance near 0).
    PerWrite,
    /// A count.
    Count,
    /// Bytes.
    Bytes,
    /// Per second.
    Rate,
    /// A plain number (a level, a coefficient).
    Number,
}

impl Kind {
    /// True for shares and ratios, judged absolutely below 0.2.
    pub fn is_share(self) -> bool {
        matches!(self, Kind::Share | Kind::PerWrite)
    }

    /// `value` as the table shows it.
    pub fn format(self, value: f64) -> String {
        match self {
            Kind::Share | Kind::PerWrite => format!("{value:.3}"),
            Kind::Count => format_count(value.round() as u64),
            Kind::Bytes => format_size(value.round() as u64),
            Kind::Rate => format!("{value:.1}/s"),
            Kind::Number => format!("{value:.2}"),
        }
    }
}

/// One metric of a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Label (also the key `--compare` matches on).
    pub label: String,
    /// Value; `None`: not in this trace.
    pub value: Option<f64>,
    /// How it reads.
    pub kind: Kind,
}

fn m(label: &str, value: Option<f64>, kind: Kind) -> Metric {
    Metric {
        label: label.to_string(),
        value,
        kind,
    }
}

/// Every metric of a stream, in the table's order; block sizes last, one
/// row per size (`size 8KiB share`).
pub fn metrics(s: &StreamPrint) -> Vec<Metric> {
    use Kind::*;
    let o = s.outstanding.as_ref();
    let mut v = vec![
        m("I/Os (reads + writes)", Some(s.ios as f64), Count),
        m("share of the layer's I/Os", Some(s.layer_share), Share),
        m("read share", Some(s.read_share), Share),
        m("mean request size", Some(s.mean_size_bytes), Bytes),
        m("sequential share (strict)", Some(s.sequential.share), Share),
        m(
            "sequential share (+ tail-page rewrites)",
            Some(s.sequential.share_with_tail_rewrites),
            Share,
        ),
        m(
            "sequential share of writes (strict)",
            Some(s.sequential.write_share),
            Share,
        ),
        m(
            "sequential share of writes (+ tail rewrites)",
            Some(s.sequential.write_share_with_tail_rewrites),
            Share,
        ),
        m(
            "tail-page rewrites",
            Some(s.sequential.tail_rewrites as f64),
            Count,
        ),
    ];
    v.extend(flush_metrics(s));
    v.extend([
        m("arrival rate", s.arrival.iops, Rate),
        m(
            "burstiness (CV of 100 ms counts)",
            s.arrival.cv_100ms,
            Number,
        ),
        m("peak 100 ms / mean", s.arrival.peak_over_mean_100ms, Number),
        m("outstanding I/Os, mean", o.map(|o| o.mean), Number),
        m("outstanding I/Os, p99", o.map(|o| o.p99 as f64), Number),
        m("outstanding I/Os, max", o.map(|o| o.max as f64), Number),
        m(
            "hottest 1% of 1 MiB regions: share of I/Os",
            Some(s.skew.hottest_1pct_share),
            Share,
        ),
        m(
            "hottest 10% of 1 MiB regions: share of I/Os",
            Some(s.skew.hottest_10pct_share),
            Share,
        ),
        m(
            "1 MiB regions touched",
            Some(s.skew.regions_touched as f64),
            Count,
        ),
        m(
            "span of offsets",
            Some(s.skew.span_end.saturating_sub(s.skew.span_start) as f64),
            Bytes,
        ),
    ]);
    if s.discards > 0 {
        v.push(m("discards", Some(s.discards as f64), Count));
    }
    for z in &s.sizes {
        v.push(m(
            &format!("size {} share", size_label(z.bytes)),
            Some(z.share),
            Share,
        ));
    }
    v
}

/// The flush rows of [`metrics`]: counts, per write, journal commits and order.
fn flush_metrics(s: &StreamPrint) -> Vec<Metric> {
    use Kind::*;
    let mut v = vec![
        m("flushes", Some(s.flushes.flushes as f64), Count),
        m("empty flushes", Some(s.flushes.empty as f64), Count),
        m("FUA writes", Some(s.flushes.fua as f64), Count),
        m("flushes per write", Some(s.flushes.per_write), PerWrite),
        m("FUA per write", Some(s.flushes.fua_per_write), PerWrite),
    ];
    if let Some(per) = s.journal_commits_per_write() {
        v.push(m("journal commits per write", Some(per), PerWrite));
    }
    if let Some(f) = &s.flushes.order {
        v.extend([
            m(
                "flushes submitted over another flush",
                f.flushes_overlapping,
                Share,
            ),
            m(
                "flushes submitted with writes in flight",
                f.flushes_behind_writes,
                Share,
            ),
            m(
                "writes submitted during a flush",
                f.writes_during_flush,
                Share,
            ),
        ]);
    }
    v
}

/// A size, exactly: `8K`, `1M`, `1536K`, or bytes (`2300B`).
pub fn size_label(bytes: u32) -> String {
    if bytes % 1024 == 0 {
        crate::units::format_size_arg(u64::from(bytes))
    } else {
        format!("{bytes}B")
    }
}

/// Rows of a table: the label, then one cell per column.
pub fn table(out: &mut String, head: &[String], rows: &[Vec<String>]) {
    let cols = head.len();
    let mut width = vec![0usize; cols];
    for r in std::iter::once(head).chain(rows.iter().map(Vec::as_slice)) {
        for (k, c) in r.iter().enumerate().take(cols) {
            width[k] = width[k].max(c.chars().count());
        }
    }
    for r in std::iter::once(head).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (k, c) in r.iter().enumerate().take(cols) {
            if k == 0 {
                let _ = write!(line, "  {c:<w$}", w = width[0]);
            } else {
                let _ = write!(line, "  {c:>w$}", w = width[k]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// Labels of every stream's metrics, in order of first appearance (block
/// sizes differ between streams).
pub fn labels<'a>(all: impl IntoIterator<Item = &'a [Metric]>) -> Vec<(String, Kind)> {
    let mut out: Vec<(String, Kind)> = Vec::new();
    for ms in all {
        for x in ms {
            if !out.iter().any(|(l, _)| *l == x.label) {
                out.push((x.label.clone(), x.kind));
            }
        }
    }
    out
}

/// The whole fingerprint as text.
pub fn text(f: &Fingerprint) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "iosim fingerprint of {} ({}, {:.1} s, {} {})",
        f.trace,
        f.format,
        f.duration_s,
        if f.format.starts_with("fio") {
            "files"
        } else {
            "devices"
        },
        f.sources.join(" ")
    );
    for l in &f.layers {
        let _ = writeln!(out, "\nlayer: {}", l.layer.describe());
        let per: Vec<Vec<Metric>> = l.streams.iter().map(metrics).collect();
        let mut head = vec!["metric".to_string()];
        head.extend(l.streams.iter().map(|s| s.name.clone()));
        let rows: Vec<Vec<String>> = labels(per.iter().map(Vec::as_slice))
            .into_iter()
            .map(|(label, kind)| {
                let mut r = vec![label.clone()];
                for ms in &per {
                    r.push(match ms.iter().find(|x| x.label == label) {
                        Some(Metric { value: Some(v), .. }) => kind.format(*v),
                        Some(Metric { value: None, .. }) => "not in this trace".into(),
                        None => "-".into(),
                    });
                }
                r
            })
            .collect();
        table(&mut out, &head, &rows);
    }
    if !f.notes.is_empty() {
        out.push('\n');
        for n in &f.notes {
            let _ = writeln!(out, "note: {n}");
        }
    }
    out
}
