//! `iosim matrix`: Oracle ORION's load matrix on Linux.
//!
//! "Small" I/O is random reads (OLTP) at a queue depth equal to the small
//! level, one thread; "large" I/O is sequential reads in `level` streams
//! (threads), each with 4 I/Os outstanding, as ORION's `num_streamIO=4`.
//! Level 0 is off. Rows are large levels, columns small levels; row 0 is
//! small I/O alone, column 0 large I/O alone. `basic` runs row 0 and column 0;
//! `detailed` runs every combination, the two loads at the same time.
//!
//! Outputs (ORION's names): `PREFIX_iops.csv` (small IOPS), `PREFIX_mbps.csv`
//! (large MiB/s), `PREFIX_lat.csv` (small mean latency, µs) and
//! `PREFIX_summary.txt` (maximum small IOPS, maximum large MBPS, minimum small
//! latency, each with the point that reached it).

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::csvout::Fixed;
use crate::runner::RunOptions;
use crate::stats::Percentile;
use crate::workload::{CacheMode, EngineKind, FillMode, RwMode, TargetSpec, WorkloadSpec};

/// Outstanding I/Os per large stream (ORION's `num_streamIO` default).
pub const IOS_PER_STREAM: u32 = 4;

/// Which points to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatrixKind {
    /// Small alone (row 0) and large alone (column 0).
    Basic,
    /// Every combination of small and large levels.
    Detailed,
}

/// What to measure: the target, the two I/O shapes, the levels and the run settings.
#[derive(Debug, Clone)]
pub struct MatrixConfig {
    /// The file or block device (a missing file is created with `size`).
    pub target: PathBuf,
    /// Size of the file to create.
    pub size: Option<u64>,
    /// Small I/O size (random).
    pub small_bs: u64,
    /// Large I/O size (sequential streams).
    pub large_bs: u64,
    /// Small loads: outstanding random I/Os.
    pub small_levels: Vec<u32>,
    /// Large loads: sequential streams of [`IOS_PER_STREAM`] outstanding I/Os each.
    pub large_levels: Vec<u32>,
    /// Measured time of each point.
    pub duration: Duration,
    /// Unmeasured time before each point.
    pub warmup: Duration,
    /// basic or detailed.
    pub matrix: MatrixKind,
    /// Percentage of writes in both loads.
    pub write_pct: u8,
    /// Page-cache behaviour.
    pub cache: CacheMode,
    /// I/O engine.
    pub engine: EngineKind,
    /// Seed for offsets and data.
    pub seed: u64,
    /// Allow writing to block devices and to files iosim did not create.
    pub allow_destroy: bool,
}

/// One point of the matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixPoint {
    /// Small level (outstanding random I/Os).
    pub small: u32,
    /// Large level (streams).
    pub large: u32,
    /// Small I/Os per second.
    pub small_iops: Option<f64>,
    /// Small mean latency (µs).
    pub small_mean_us: Option<f64>,
    /// Small p99 latency (µs).
    pub small_p99_us: Option<f64>,
    /// Large throughput (MiB/s).
    pub large_mib_s: Option<f64>,
    /// Large mean latency (µs).
    pub large_mean_us: Option<f64>,
    /// I/O errors in this point.
    pub errors: u64,
}

/// A best value and where it was reached.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Best {
    /// The value.
    pub value: f64,
    /// Small level.
    pub small: u32,
    /// Large level.
    pub large: u32,
}

/// ORION's summary figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Maximum large MiB/s.
    pub max_large_mbps: Option<Best>,
    /// Maximum small IOPS.
    pub max_small_iops: Option<Best>,
    /// Minimum small mean latency (µs).
    pub min_small_latency_us: Option<Best>,
}

/// Everything `iosim matrix` measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixResult {
    /// The target.
    pub path: PathBuf,
    /// basic or detailed.
    pub matrix: MatrixKind,
    /// Small I/O size (bytes).
    pub small_bs: u64,
    /// Large I/O size (bytes).
    pub large_bs: u64,
    /// Small levels (columns), 0 first.
    pub small_levels: Vec<u32>,
    /// Large levels (rows), 0 first.
    pub large_levels: Vec<u32>,
    /// Writes in both loads (%).
    pub write_pct: u8,
    /// Measured time per point (s).
    pub duration_s: f64,
    /// Points in run order.
    pub points: Vec<MatrixPoint>,
    /// Best figures.
    pub summary: Summary,
    /// True when Ctrl-C stopped the matrix.
    pub interrupted: bool,
}

/// Sorted, deduplicated levels with 0 first.
pub fn normalise_levels(levels: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = levels.to_vec();
    v.push(0);
    v.sort_unstable();
    v.dedup();
    v
}

/// The (small, large) points to run, row by row; (0, 0) never runs.
pub fn points(small: &[u32], large: &[u32], kind: MatrixKind) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for &l in large {
        for &s in small {
            if s == 0 && l == 0 {
                continue;
            }
            if kind == MatrixKind::Basic && s != 0 && l != 0 {
                continue;
            }
            out.push((s, l));
        }
    }
    out
}

/// Which figure a grid holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Small IOPS.
    SmallIops,
    /// Large MiB/s.
    LargeMbps,
    /// Small mean latency (µs).
    SmallLatency,
}

impl Metric {
    fn of(self, p: &MatrixPoint) -> Option<f64> {
        match self {
            Metric::SmallIops => p.small_iops,
            Metric::LargeMbps => p.large_mib_s,
            Metric::SmallLatency => p.small_mean_us,
        }
    }
}

/// ORION's CSV layout: header `Large/Small,0,1,2,...`; one row per large
/// level; cells left empty where the point did not run or has no such I/O.
pub fn grid_csv(r: &MatrixResult, m: Metric) -> String {
    let levels: Vec<String> = r.small_levels.iter().map(|c| c.to_string()).collect();
    let mut header = vec!["Large/Small"];
    header.extend(levels.iter().map(String::as_str));
    let rows = r.large_levels.iter().map(|&l| {
        let cells: Vec<Option<Fixed<2>>> = r
            .small_levels
            .iter()
            .map(|&c| {
                r.points
                    .iter()
                    .find(|p| p.small == c && p.large == l)
                    .and_then(|p| m.of(p))
                    .map(Fixed)
            })
            .collect();
        (l, cells)
    });
    crate::csvout::write(Some(&header), rows)
}

/// The best figures over the points.
pub fn summarise(points: &[MatrixPoint]) -> Summary {
    let best = |m: Metric, want_max: bool| -> Option<Best> {
        let mut b: Option<Best> = None;
        for p in points {
            let Some(v) = m.of(p) else { continue };
            let better = match b {
                None => true,
                Some(x) if want_max => v > x.value,
                Some(x) => v < x.value,
            };
            if better {
                b = Some(Best {
                    value: v,
                    small: p.small,
                    large: p.large,
                });
            }
        }
        b
    };
    Summary {
        max_large_mbps: best(Metric::LargeMbps, true),
        max_small_iops: best(Metric::SmallIops, true),
        min_small_latency_us: best(Metric::SmallLatency, false),
    }
}

/// ORION-like summary lines.
pub fn summary_text(r: &MatrixResult) -> String {
    let mut s = format!(
        "iosim matrix ({}) on {}: small = random {} at QD=level, large = sequential {} in level streams x {} outstanding, {}% writes, {:.1} s per point\n",
        match r.matrix {
            MatrixKind::Basic => "basic",
            MatrixKind::Detailed => "detailed",
        },
        r.path.display(),
        crate::units::format_size(r.small_bs),
        crate::units::format_size(r.large_bs),
        IOS_PER_STREAM,
        r.write_pct,
        r.duration_s
    );
    let at = |b: &Best| format!("@ Small={} and Large={}", b.small, b.large);
    match &r.summary.max_large_mbps {
        Some(b) => s.push_str(&format!("Maximum Large MBPS={:.2} {}\n", b.value, at(b))),
        None => s.push_str("Maximum Large MBPS: no large I/O was run\n"),
    }
    match &r.summary.max_small_iops {
        Some(b) => s.push_str(&format!("Maximum Small IOPS={:.0} {}\n", b.value, at(b))),
        None => s.push_str("Maximum Small IOPS: no small I/O was run\n"),
    }
    match &r.summary.min_small_latency_us {
        Some(b) => s.push_str(&format!(
            "Minimum Small Latency={:.2} usecs {}\n",
            b.value,
            at(b)
        )),
        None => s.push_str("Minimum Small Latency: no small I/O was run\n"),
    }
    s.push_str("(MBPS is MiB/s; latency is the mean of the small I/Os)\n");
    if r.interrupted {
        s.push_str("Interrupted: the matrix covers the points measured.\n");
    }
    s
}

fn spec_for(
    a: &MatrixConfig,
    random: bool,
    bs: u64,
    threads: u32,
    qd: u32,
    seed: u64,
) -> WorkloadSpec {
    WorkloadSpec {
        targets: vec![TargetSpec::new(a.target.clone(), a.size)],
        rw: RwMode::from_parts(random, a.write_pct),
        write_pct: a.write_pct,
        bs,
        threads,
        qd,
        duration: a.duration,
        warmup: a.warmup,
        seed,
        cache: a.cache,
        engine: a.engine,
        fill: FillMode::Random,
        allow_destroy: a.allow_destroy,
        ..WorkloadSpec::default()
    }
}

/// Runs the matrix; `on_point` is called after each point.
pub fn run(
    a: &MatrixConfig,
    opts: &RunOptions,
    mut on_point: impl FnMut(usize, usize, &MatrixPoint),
) -> anyhow::Result<MatrixResult> {
    let small_levels = normalise_levels(&a.small_levels);
    let large_levels = normalise_levels(&a.large_levels);
    let todo = points(&small_levels, &large_levels, a.matrix);
    if todo.is_empty() {
        anyhow::bail!(
            "the matrix is empty: give at least one level above 0 (--small-levels 1,2,4 or --large-levels 1,2)"
        );
    }
    // Check both shapes at their highest load before spending time on any point.
    let max_small = small_levels.iter().copied().max().unwrap_or(0).max(1);
    let max_large = large_levels.iter().copied().max().unwrap_or(0).max(1);
    for s in [
        spec_for(a, true, a.small_bs, 1, max_small, a.seed),
        spec_for(a, false, a.large_bs, max_large, IOS_PER_STREAM, a.seed),
    ] {
        s.validate()?;
    }
    crate::profile::create_missing(
        &[("matrix".to_string(), a.target.clone())],
        a.size,
        FillMode::Random,
        opts,
    )?;
    let mut out = Vec::new();
    let mut interrupted = false;
    for (i, &(s, l)) in todo.iter().enumerate() {
        if opts.stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let (p, stopped) = run_point(a, opts, i, s, l)?;
        interrupted |= stopped;
        on_point(i, todo.len(), &p);
        out.push(p);
        if interrupted {
            break;
        }
    }
    Ok(MatrixResult {
        path: a.target.clone(),
        matrix: a.matrix,
        small_bs: a.small_bs,
        large_bs: a.large_bs,
        small_levels,
        large_levels,
        write_pct: a.write_pct,
        duration_s: a.duration.as_secs_f64(),
        summary: summarise(&out),
        points: out,
        interrupted,
    })
}

/// Runs point `i` of the matrix: `s` small and `l` large loads at once.
/// Returns the point and whether the run was interrupted.
fn run_point(
    a: &MatrixConfig,
    opts: &RunOptions,
    i: usize,
    s: u32,
    l: u32,
) -> anyhow::Result<(MatrixPoint, bool)> {
    let mut specs = Vec::new();
    if s > 0 {
        specs.push(spec_for(
            a,
            true,
            a.small_bs,
            1,
            s,
            a.seed.wrapping_add(i as u64),
        ));
    }
    if l > 0 {
        specs.push(spec_for(
            a,
            false,
            a.large_bs,
            l,
            IOS_PER_STREAM,
            a.seed.wrapping_add(1000 + i as u64),
        ));
    }
    let quiet = RunOptions {
        progress: false,
        ..opts.clone()
    };
    // Both loads in one run: one window, one monitor.
    let rs = crate::runner::run_many(&specs, &quiet)?;
    let mut rs = rs.into_iter();
    let small = if s > 0 { rs.next() } else { None };
    let large = if l > 0 { rs.next() } else { None };
    let interrupted = small.iter().chain(large.iter()).any(|r| r.interrupted);
    let p = MatrixPoint {
        small: s,
        large: l,
        small_iops: small.as_ref().map(|r| r.total.total.iops),
        small_mean_us: small.as_ref().map(|r| r.total.total.latency_us.mean),
        small_p99_us: small
            .as_ref()
            .map(|r| r.total.total.latency_us.p(Percentile::P99)),
        large_mib_s: large.as_ref().map(|r| r.total.total.mib_per_sec),
        large_mean_us: large.as_ref().map(|r| r.total.total.latency_us.mean),
        errors: small
            .iter()
            .chain(large.iter())
            .map(|r| r.errors.count)
            .sum(),
    };
    Ok((p, interrupted))
}

/// `PREFIX_name`: the prefix's file name gets `_name` appended.
pub fn output_path(prefix: &std::path::Path, name: &str) -> PathBuf {
    let file = prefix
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_else(|| "iosim-matrix".into());
    prefix.with_file_name(format!("{file}_{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(
        small: u32,
        large: u32,
        iops: Option<f64>,
        lat: Option<f64>,
        mbps: Option<f64>,
    ) -> MatrixPoint {
        MatrixPoint {
            small,
            large,
            small_iops: iops,
            small_mean_us: lat,
            small_p99_us: lat,
            large_mib_s: mbps,
            large_mean_us: None,
            errors: 0,
        }
    }

    #[test]
    fn levels_normalise() {
        assert_eq!(normalise_levels(&[4, 1, 2, 1]), vec![0, 1, 2, 4]);
        assert_eq!(normalise_levels(&[0, 1]), vec![0, 1]);
    }

    #[test]
    fn basic_is_row_zero_and_column_zero() {
        let p = points(&[0, 1, 2], &[0, 1, 2], MatrixKind::Basic);
        assert_eq!(p, vec![(1, 0), (2, 0), (0, 1), (0, 2)]);
        let d = points(&[0, 1, 2], &[0, 1, 2], MatrixKind::Detailed);
        assert_eq!(d.len(), 8);
        assert!(!d.contains(&(0, 0)));
        assert!(d.contains(&(2, 2)));
    }

    #[test]
    fn summary_finds_the_best_points() {
        let ps = vec![
            pt(1, 0, Some(100.0), Some(90.0), None),
            pt(2, 0, Some(300.0), Some(80.0), None),
            pt(0, 1, None, None, Some(50.0)),
            pt(0, 2, None, None, Some(70.0)),
            pt(2, 2, Some(150.0), Some(200.0), Some(60.0)),
        ];
        let s = summarise(&ps);
        assert_eq!(
            s.max_small_iops,
            Some(Best {
                value: 300.0,
                small: 2,
                large: 0
            })
        );
        assert_eq!(s.max_large_mbps.unwrap().large, 2);
        assert_eq!(s.min_small_latency_us.unwrap().value, 80.0);
        assert_eq!(summarise(&[]), Summary::default());
    }

    #[test]
    fn grids_have_orions_shape() {
        let r = MatrixResult {
            path: "/x".into(),
            matrix: MatrixKind::Basic,
            small_bs: 8192,
            large_bs: 1 << 20,
            small_levels: vec![0, 1, 2],
            large_levels: vec![0, 1],
            write_pct: 0,
            duration_s: 1.0,
            points: vec![
                pt(1, 0, Some(100.0), Some(90.0), None),
                pt(2, 0, Some(300.0), Some(80.5), None),
                pt(0, 1, None, None, Some(50.0)),
            ],
            summary: Summary::default(),
            interrupted: false,
        };
        assert_eq!(
            grid_csv(&r, Metric::SmallIops),
            "Large/Small,0,1,2\n0,,100.00,300.00\n1,,,\n"
        );
        assert_eq!(
            grid_csv(&r, Metric::LargeMbps),
            "Large/Small,0,1,2\n0,,,\n1,50.00,,\n"
        );
        assert_eq!(
            grid_csv(&r, Metric::SmallLatency),
            "Large/Small,0,1,2\n0,,90.00,80.50\n1,,,\n"
        );
        let r = MatrixResult {
            summary: summarise(&r.points),
            ..r
        };
        let t = summary_text(&r);
        assert!(
            t.contains("Maximum Large MBPS=50.00 @ Small=0 and Large=1"),
            "{t}"
        );
        assert!(
            t.contains("Maximum Small IOPS=300 @ Small=2 and Large=0"),
            "{t}"
        );
        assert!(
            t.contains("Minimum Small Latency=80.50 usecs @ Small=2 and Large=0"),
            "{t}"
        );
    }

    #[test]
    fn output_paths_append_to_the_prefix() {
        assert_eq!(
            output_path(std::path::Path::new("/d/run1"), "iops.csv"),
            PathBuf::from("/d/run1_iops.csv")
        );
    }
}
