//! `iosim fingerprint --compare A B`: every metric of two fingerprints side
//! by side, per layer and stream, with the ratio B/A, and each metric
//! outside the tolerance marked. The tolerance is bench/dbengines.py's: 25%
//! relative; for shares and per-write ratios where A is under 0.2 (near 0),
//! 0.05 absolute instead (the two meet at 0.2). Counts are context, not
//! judged (they grow with the length of the capture).

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::render::{labels, metrics, table, Kind, Metric};
use super::{Fingerprint, FingerprintError, Layer, StreamMap, StreamPrint};

/// Relative tolerance.
pub const REL_TOL: f64 = 0.25;
/// Absolute tolerance for shares and ratios under [`ABS_TOL`] / [`REL_TOL`].
pub const ABS_TOL: f64 = 0.05;

/// One metric compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The metric.
    pub metric: String,
    /// How it reads.
    pub kind: Kind,
    /// A's value (`None`: not in A's trace).
    pub a: Option<f64>,
    /// B's value.
    pub b: Option<f64>,
    /// B / A.
    pub ratio: Option<f64>,
    /// Judged at all (counts and missing values are not).
    pub judged: bool,
    /// Outside the tolerance.
    pub out: bool,
}

/// One stream of one layer compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamComparison {
    /// Layer.
    pub layer: Layer,
    /// Stream.
    pub stream: String,
    /// Overlap of the two size mixes: the sum over sizes of the smaller share (1: the same mix).
    pub size_mix_overlap: f64,
    /// Every metric.
    pub rows: Vec<Row>,
}

/// Two fingerprints compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// A's trace.
    pub a: String,
    /// B's trace.
    pub b: String,
    /// Layer and stream pairs found in both.
    pub streams: Vec<StreamComparison>,
    /// Metrics outside the tolerance, in all.
    pub out_of_tolerance: u64,
    /// Layers and streams found in one only.
    pub notes: Vec<String>,
}

/// True when B is within the tolerance of A.
pub fn within(a: f64, b: f64, kind: Kind) -> bool {
    if kind.is_share() && a.abs() < ABS_TOL / REL_TOL {
        return (b - a).abs() <= ABS_TOL + 1e-12;
    }
    if a == 0.0 {
        return b == 0.0;
    }
    ((b - a) / a).abs() <= REL_TOL + 1e-12
}

/// A fingerprint from `path`: a saved one (`--json` output, a JSON object)
/// or a trace, fingerprinted with `regions`.
pub fn load(path: &Path, map: &StreamMap) -> Result<Fingerprint, FingerprintError> {
    if path.is_file() {
        let mut head = [0u8; 64];
        let n = std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .unwrap_or(0);
        if head[..n].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
            let text = std::fs::read_to_string(path).map_err(|e| FingerprintError::BadSaved {
                path: path.to_path_buf(),
                cause: e.to_string(),
            })?;
            return serde_json::from_str(&text).map_err(|e| FingerprintError::BadSaved {
                path: path.to_path_buf(),
                cause: e.to_string(),
            });
        }
    }
    super::of_trace(path, map)
}

fn stream(f: &Fingerprint, layer: Layer, name: &str) -> Option<StreamPrint> {
    f.layers
        .iter()
        .find(|l| l.layer == layer)?
        .streams
        .iter()
        .find(|s| s.name == name)
        .cloned()
}

/// Compares B with A.
pub fn compare(a: &Fingerprint, b: &Fingerprint) -> Comparison {
    let mut out = Comparison {
        a: a.trace.clone(),
        b: b.trace.clone(),
        streams: Vec::new(),
        out_of_tolerance: 0,
        notes: Vec::new(),
    };
    for la in &a.layers {
        if !b.layers.iter().any(|l| l.layer == la.layer) {
            out.notes
                .push(format!("the {} layer is in A only", la.layer.name()));
            continue;
        }
        for sa in &la.streams {
            let Some(sb) = stream(b, la.layer, &sa.name) else {
                out.notes.push(format!(
                    "stream '{}' ({} layer) is in A only",
                    sa.name,
                    la.layer.name()
                ));
                continue;
            };
            let c = compare_streams(la.layer, sa, &sb);
            out.out_of_tolerance += c.rows.iter().filter(|r| r.out).count() as u64;
            out.streams.push(c);
        }
    }
    for lb in &b.layers {
        if !a.layers.iter().any(|l| l.layer == lb.layer) {
            out.notes
                .push(format!("the {} layer is in B only", lb.layer.name()));
        }
    }
    out
}

/// One stream's metrics side by side.
pub fn compare_streams(layer: Layer, a: &StreamPrint, b: &StreamPrint) -> StreamComparison {
    let (ma, mb) = (metrics(a), metrics(b));
    let find = |ms: &[Metric], l: &str| ms.iter().find(|x| x.label == l).and_then(|x| x.value);
    let rows = labels([ma.as_slice(), mb.as_slice()])
        .into_iter()
        .map(|(label, kind)| {
            let size_row = label.starts_with("size ");
            // A size one trace lacks has a share of 0 there.
            let missing = if size_row { Some(0.0) } else { None };
            let va = find(&ma, &label).or(missing);
            let vb = find(&mb, &label).or(missing);
            let judged = kind != Kind::Count && va.is_some() && vb.is_some();
            let out = match (va, vb) {
                (Some(x), Some(y)) if judged => !within(x, y, kind),
                _ => false,
            };
            Row {
                metric: label,
                kind,
                a: va,
                b: vb,
                ratio: match (va, vb) {
                    (Some(x), Some(y)) if x != 0.0 => Some(y / x),
                    _ => None,
                },
                judged,
                out,
            }
        })
        .collect();
    let overlap = a
        .sizes
        .iter()
        .map(|x| {
            let y = b
                .sizes
                .iter()
                .find(|y| y.bytes == x.bytes)
                .map_or(0.0, |y| y.share);
            x.share.min(y)
        })
        .sum();
    StreamComparison {
        layer,
        stream: a.name.clone(),
        size_mix_overlap: overlap,
        rows,
    }
}

/// The comparison as text.
pub fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "iosim fingerprint --compare\n  A: {}\n  B: {}",
        c.a, c.b
    );
    let _ = writeln!(
        out,
        "tolerance: {:.0}% relative; {} absolute for shares and per-write ratios where A is under {:.1}; counts are context, not judged",
        REL_TOL * 100.0,
        ABS_TOL,
        ABS_TOL / REL_TOL
    );
    for s in &c.streams {
        let _ = writeln!(
            out,
            "\nlayer: {}, stream: {} (size mix overlap {:.3})",
            s.layer.describe(),
            s.stream,
            s.size_mix_overlap
        );
        let head: Vec<String> = ["metric", "A", "B", "B/A", ""]
            .iter()
            .map(|h| h.to_string())
            .collect();
        let rows: Vec<Vec<String>> = s
            .rows
            .iter()
            .map(|r| {
                let k = r.kind;
                let v = |x: Option<f64>| x.map_or("not in trace".to_string(), |x| k.format(x));
                vec![
                    r.metric.clone(),
                    v(r.a),
                    v(r.b),
                    r.ratio.map_or("-".into(), |x| format!("{x:.2}")),
                    if r.out {
                        "OUT".into()
                    } else if r.judged {
                        String::new()
                    } else {
                        "(not judged)".into()
                    },
                ]
            })
            .collect();
        table(&mut out, &head, &rows);
    }
    for n in &c.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(
        out,
        "\n{} metric(s) outside the tolerance (marked OUT)",
        c.out_of_tolerance
    );
    out
}
