//! `iosim sweep`: vary workload parameters over lists, ranges or doubling
//! series, alone, as a grid, or zipped together; repeat each point; report
//! mean ± sd with 95% confidence intervals, noisy points, the saturation knee,
//! the best setting under a latency limit, and CPU-bound points.
//!
//! Axis syntax (`--vary`): `qd=1,2,4,8`, `qd=1..64` (step 1), `qd=1..64:4`
//! (step 4), `qd=1..128x2` (doubling), `threads=32..1/2` (halving),
//! `bs=4K,8K,64K`, `write-pct=0..100:25`, `rw=randread,randwrite`,
//! `submit-batch=0,1,4`; workload shape (docs/workloads.md):
//! `distribution=uniform,zipf:1.1,hotcold:10/90`, `compress-pct=0..75:25`,
//! `dedupe-pct=0,20`, and `bssplit=8K/100;8K/70:64K/30` (split on `;`, as a
//! split's own `,` separates reads from writes).

pub mod analysis;
pub mod studies;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::csvout::Fixed;
use serde::{Deserialize, Serialize};

use crate::runner::{RunOptions, RunResult};
use crate::stats::Percentile;
use crate::sysmon::check::{CpuCause, WarningCode, CPU_LIMITED_CODES};
use crate::units::{format_size_arg, parse_size};
use crate::workload::{BsSplit, Distribution, RwMode, WorkloadSpec};
use analysis::{
    is_noisy, judge_knee, recommend, suggested_repeats, Knee, KneeStatus, KneeVerdict, SeriesPoint,
    Stat,
};

/// A parameter a sweep can vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Param {
    /// Outstanding I/Os per thread.
    Qd,
    /// Threads per target.
    Threads,
    /// Block size.
    Bs,
    /// Share of writes.
    WritePct,
    /// Pattern.
    Rw,
    /// I/Os per submission system call (0 = all free slots).
    SubmitBatch,
    /// Access skew (`--distribution`).
    Distribution,
    /// Block-size mix (`--bssplit`).
    Bssplit,
    /// Compressible share of written blocks (`--compress-pct`).
    CompressPct,
    /// Duplicate share of written blocks (`--dedupe-pct`).
    DedupePct,
}

impl Param {
    /// Name on the command line (and in documents: the serde name).
    pub fn name(self) -> &'static str {
        match self {
            Param::Qd => "qd",
            Param::Threads => "threads",
            Param::Bs => "bs",
            Param::WritePct => "write-pct",
            Param::Rw => "rw",
            Param::SubmitBatch => "submit-batch",
            Param::Distribution => "distribution",
            Param::Bssplit => "bssplit",
            Param::CompressPct => "compress-pct",
            Param::DedupePct => "dedupe-pct",
        }
    }

    fn parse(s: &str) -> Result<Param, String> {
        Ok(match s.trim() {
            "qd" | "o" | "iodepth" => Param::Qd,
            "threads" | "t" => Param::Threads,
            "bs" | "b" => Param::Bs,
            "write-pct" | "write_pct" | "w" => Param::WritePct,
            "rw" => Param::Rw,
            "submit-batch" | "submit_batch" | "iodepth_batch_submit" => Param::SubmitBatch,
            "distribution" | "random_distribution" => Param::Distribution,
            "bssplit" => Param::Bssplit,
            "compress-pct" | "compress_pct" | "buffer_compress_percentage" => Param::CompressPct,
            "dedupe-pct" | "dedupe_pct" | "dedupe_percentage" => Param::DedupePct,
            other => {
                return Err(format!(
                    "cannot sweep '{other}': choose qd, threads, bs, write-pct, rw, submit-batch, \
                     distribution, bssplit, compress-pct or dedupe-pct"
                ))
            }
        })
    }
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One value of a parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A number (bytes for bs).
    Num(u64),
    /// A pattern.
    Rw(RwMode),
    /// A distribution or size mix, as written on the command line (checked when parsed).
    Text(String),
}

impl Value {
    fn show(&self, p: Param) -> String {
        match (self, p) {
            (Value::Num(v), Param::Bs) => format_size_arg(*v),
            (Value::Num(v), _) => v.to_string(),
            (Value::Rw(m), _) => m.name().to_string(),
            (Value::Text(t), _) => t.clone(),
        }
    }
}

/// A parameter and the values it takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// The parameter.
    pub param: Param,
    /// Its values, in order.
    pub values: Vec<Value>,
}

/// Parses `--vary` text (see the module docs).
pub fn parse_axis(text: &str) -> Result<Axis, String> {
    let (name, spec) = text
        .split_once('=')
        .ok_or_else(|| format!("--vary '{text}': write PARAM=VALUES, e.g. qd=1..64x2"))?;
    let param = Param::parse(name)?;
    let values = if param == Param::Rw {
        spec.split(',')
            .map(|v| {
                RwMode::from_name(v)
                    .map(Value::Rw)
                    .ok_or_else(|| format!("unknown rw '{v}'"))
            })
            .collect::<Result<Vec<_>, _>>()?
    } else if param == Param::Distribution {
        spec.split(',')
            .map(|v| Ok(Value::Text(v.trim().parse::<Distribution>()?.to_string())))
            .collect::<Result<Vec<_>, String>>()?
    } else if param == Param::Bssplit {
        spec.split(';')
            .map(|v| Ok(Value::Text(v.trim().parse::<BsSplit>()?.to_string())))
            .collect::<Result<Vec<_>, String>>()?
    } else {
        parse_numbers(spec, param == Param::Bs)?
            .into_iter()
            .map(Value::Num)
            .collect()
    };
    if values.is_empty() {
        return Err(format!("--vary '{text}' gives no values"));
    }
    if matches!(param, Param::CompressPct | Param::DedupePct)
        && values
            .iter()
            .any(|v| matches!(v, Value::Num(n) if *n > 100))
    {
        return Err(format!("--vary '{text}': percentages go from 0 to 100"));
    }
    if values.len() > 10_000 {
        return Err(format!(
            "--vary '{text}' gives {} values: too many",
            values.len()
        ));
    }
    Ok(Axis { param, values })
}

fn parse_numbers(spec: &str, sizes: bool) -> Result<Vec<u64>, String> {
    let num = |s: &str| -> Result<u64, String> {
        if sizes {
            parse_size(s).map_err(|e| e.to_string())
        } else {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("'{s}' is not a whole number"))
        }
    };
    if let Some((a, rest)) = spec.split_once("..") {
        let a = num(a)?;
        let (b, op, k) = if let Some((b, k)) = rest.split_once('x') {
            (
                num(b)?,
                'x',
                k.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("bad factor '{k}'"))?,
            )
        } else if let Some((b, k)) = rest.split_once('/') {
            (
                num(b)?,
                '/',
                k.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("bad divisor '{k}'"))?,
            )
        } else if let Some((b, k)) = rest.split_once(':') {
            (num(b)?, ':', num(k)?)
        } else {
            (num(rest)?, ':', if sizes { a.max(1) } else { 1 })
        };
        let mut out = Vec::new();
        match op {
            'x' => {
                if k < 2 || a == 0 {
                    return Err("a doubling series needs a start above 0 and a factor of 2 or more (1..64x2)".into());
                }
                let mut v = a;
                while v <= b {
                    out.push(v);
                    v = v.saturating_mul(k);
                }
            }
            '/' => {
                if k < 2 || b == 0 {
                    return Err("a halving series needs an end above 0 and a divisor of 2 or more (32..1/2)".into());
                }
                let mut v = a;
                while v >= b && v > 0 {
                    out.push(v);
                    v /= k;
                }
            }
            _ => {
                if k == 0 {
                    return Err("a range step must be above 0".into());
                }
                let mut v = a;
                while v <= b {
                    out.push(v);
                    v += k;
                }
            }
        }
        Ok(out)
    } else {
        spec.split(',').map(num).collect()
    }
}

/// How several axes combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Combine {
    /// Every combination (threads x qd).
    Grid,
    /// Position by position (threads doubling while qd halves, seed 001).
    Zip,
}

/// The settings of one point.
pub type Point = BTreeMap<Param, Value>;

/// The points of a sweep.
pub fn points(axes: &[Axis], combine: Combine) -> Result<Vec<Point>, String> {
    match combine {
        Combine::Zip => {
            let n = axes.first().map_or(0, |a| a.values.len());
            if axes.iter().any(|a| a.values.len() != n) {
                return Err("--zip needs every --vary to have the same number of values".into());
            }
            Ok((0..n)
                .map(|i| {
                    axes.iter()
                        .map(|a| (a.param, a.values[i].clone()))
                        .collect()
                })
                .collect())
        }
        Combine::Grid => {
            let mut out: Vec<Point> = vec![BTreeMap::new()];
            for a in axes {
                let mut next = Vec::new();
                for p in &out {
                    for v in &a.values {
                        let mut q = p.clone();
                        q.insert(a.param, v.clone());
                        next.push(q);
                    }
                }
                out = next;
            }
            Ok(out)
        }
    }
}

/// Applies a point's settings to a workload.
pub fn apply(base: &WorkloadSpec, p: &Point) -> WorkloadSpec {
    let mut s = base.clone();
    for (k, v) in p {
        match (k, v) {
            (Param::Qd, Value::Num(n)) => s.qd = *n as u32,
            (Param::Threads, Value::Num(n)) => s.threads = *n as u32,
            (Param::Bs, Value::Num(n)) => s.bs = *n,
            (Param::SubmitBatch, Value::Num(n)) => {
                s.submit_batch = (*n).min(u32::MAX as u64) as u32
            }
            (Param::WritePct, Value::Num(n)) => {
                s.write_pct = (*n).min(100) as u8;
                if !s.rw.is_mixed() {
                    s.rw = RwMode::from_parts(s.rw.is_random(), s.write_pct);
                }
            }
            (Param::Rw, Value::Rw(m)) => {
                s.rw = *m;
                if !m.is_mixed() {
                    s.write_pct = m.default_write_pct();
                }
            }
            // Checked when the axis was parsed.
            (Param::Distribution, Value::Text(t)) => {
                if let Ok(d) = t.parse() {
                    s.shape.distribution = d;
                    for t in &mut s.targets {
                        t.distribution = None;
                    }
                }
            }
            (Param::Bssplit, Value::Text(t)) => s.shape.bssplit = t.parse().ok(),
            (Param::CompressPct, Value::Num(n)) => {
                s.fill = crate::workload::FillMode::Compressible((*n).min(100) as u8)
            }
            (Param::DedupePct, Value::Num(n)) => s.shape.dedupe_pct = (*n).min(100) as u8,
            _ => {}
        }
    }
    s
}

/// Results of one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// Settings, by parameter name.
    pub params: BTreeMap<String, String>,
    /// Total outstanding I/Os (targets x threads x qd): the load.
    pub outstanding: u64,
    /// IOPS over repetitions.
    pub iops: Stat,
    /// MiB/s over repetitions.
    pub mib_per_sec: Stat,
    /// Mean latency, µs.
    pub lat_mean_us: Stat,
    /// 99th percentile latency, µs.
    pub lat_p99_us: Stat,
    /// Maximum latency, µs.
    pub lat_max_us: Stat,
    /// Repetitions whose run was limited by the CPU: iosim's own threads
    /// saturated their cores, or other processes took CPU they needed
    /// (results stored before iosim told these apart: a core >= 95% busy).
    pub cpu_bound_runs: usize,
    /// Busiest core over the repetitions, %.
    pub max_core_busy_pct: f64,
    /// The repetitions disagree (IOPS coefficient of variation above 10%).
    pub noisy: bool,
    /// Repetitions suggested for a ±5% confidence interval, when noisy.
    pub suggested_repeats: Option<usize>,
    /// Self-check warning codes seen in any repetition.
    pub warnings: Vec<WarningCode>,
}

/// A whole sweep: the JSON of `iosim sweep --output json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// Built-in study name, when one was run.
    pub study: Option<String>,
    /// The workload every point starts from.
    pub base: WorkloadSpec,
    /// The axes.
    pub axes: Vec<Axis>,
    /// Grid or zip.
    pub combine: Combine,
    /// Repetitions per point.
    pub repeat: usize,
    /// The points, in run order.
    pub points: Vec<PointResult>,
    /// Where throughput stops rising (only for a single numeric axis or a zip).
    pub knee: Option<Knee>,
    /// What the knee rule concluded: found, still scales, undecided (with
    /// the repetitions that would decide it) or not judged.
    #[serde(default)]
    pub knee_status: KneeStatus,
    /// Latency limit asked for, µs (applied to `latency_metric`).
    pub max_latency_us: Option<f64>,
    /// `mean` or `p99`.
    pub latency_metric: String,
    /// Best point under the latency limit.
    pub recommended: Option<usize>,
    /// Plain-words findings: knee, recommendation, CPU-bound and noisy points.
    pub findings: Vec<String>,
    /// True when interrupted.
    pub interrupted: bool,
    /// Throughput flat across loads with latency growing in proportion: a
    /// rate limit (docs/changes.md); absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<crate::changes::Ceiling>,
}

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// Base workload.
    pub base: WorkloadSpec,
    /// Axes.
    pub axes: Vec<Axis>,
    /// Or explicit points (studies); used when not empty.
    pub explicit: Vec<Point>,
    /// Grid or zip.
    pub combine: Combine,
    /// Repetitions per point.
    pub repeat: usize,
    /// Latency limit, µs.
    pub max_latency_us: Option<f64>,
    /// Use p99 rather than mean latency for the limit and the knee.
    pub use_p99: bool,
    /// Knee elasticity threshold.
    pub knee_threshold: f64,
    /// Study name.
    pub study: Option<String>,
    /// Most repetitions per point any suggestion may ask for (what the
    /// caller's time allows; [`analysis::MAX_DECIDING_REPEATS`] for `iosim sweep`).
    pub max_repeats: usize,
}

/// Runs a sweep. `each` is called after every repetition (for saving or printing).
pub fn run(
    plan: &SweepPlan,
    opts: &RunOptions,
    mut each: impl FnMut(&Point, usize, &RunResult),
) -> anyhow::Result<SweepResult> {
    let pts = if plan.explicit.is_empty() {
        points(&plan.axes, plan.combine).map_err(anyhow::Error::msg)?
    } else {
        plan.explicit.clone()
    };
    if pts.is_empty() {
        anyhow::bail!("the sweep has no points: give --vary or --study");
    }
    let repeat = plan.repeat.max(1);
    let mut results = Vec::new();
    let mut interrupted = false;
    'outer: for (i, p) in pts.iter().enumerate() {
        let spec = apply(&plan.base, p);
        spec.validate()?;
        let mut runs = Vec::new();
        for rep in 0..repeat {
            if opts.stop.load(std::sync::atomic::Ordering::Relaxed) {
                interrupted = true;
                break 'outer;
            }
            if opts.progress {
                crate::say!(
                    "[point {}/{}, run {}/{}] {}",
                    i + 1,
                    pts.len(),
                    rep + 1,
                    repeat,
                    describe(p)
                );
            }
            let r = match crate::runner::run(&spec, opts) {
                Ok(r) => r,
                Err(e) if crate::runner::stopped_before_window(&e, opts) => {
                    interrupted = true;
                    break 'outer;
                }
                Err(e) => return Err(e),
            };
            each(p, rep, &r);
            if r.interrupted {
                interrupted = true;
                runs.push(r);
                break 'outer;
            }
            runs.push(r);
        }
        results.push(summarize_point(p, &spec, &runs));
    }
    Ok(analyse(plan, results, interrupted))
}

fn describe(p: &Point) -> String {
    p.iter()
        .map(|(k, v)| format!("{}={}", k.name(), v.show(*k)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Summarises the repetitions of one point.
pub fn summarize_point(p: &Point, spec: &WorkloadSpec, runs: &[RunResult]) -> PointResult {
    let get = |f: &dyn Fn(&RunResult) -> f64| Stat::of(&runs.iter().map(f).collect::<Vec<_>>());
    let iops = get(&|r| r.total.total.iops);
    let cpu_bound_runs = runs
        .iter()
        .filter(|r| {
            r.cpu.cpu_bound
                || r.warnings
                    .iter()
                    .any(|w| CPU_LIMITED_CODES.contains(&w.code))
        })
        .count();
    let mut warnings: Vec<WarningCode> = runs
        .iter()
        .flat_map(|r| r.warnings.iter().map(|w| w.code.clone()))
        .collect();
    warnings.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    warnings.dedup();
    let noisy = is_noisy(&iops);
    let targets = spec.targets.len().max(1) as u64;
    PointResult {
        params: p
            .iter()
            .map(|(k, v)| (k.name().to_string(), v.show(*k)))
            .collect(),
        outstanding: targets * u64::from(spec.threads) * u64::from(spec.qd),
        suggested_repeats: noisy.then(|| suggested_repeats(&iops)),
        iops,
        mib_per_sec: get(&|r| r.total.total.mib_per_sec),
        lat_mean_us: get(&|r| r.total.total.latency_us.mean),
        lat_p99_us: get(&|r| r.total.total.latency_us.p(Percentile::P99)),
        lat_max_us: get(&|r| r.total.total.latency_us.max),
        cpu_bound_runs,
        max_core_busy_pct: runs
            .iter()
            .map(|r| r.cpu.max_core_busy_pct)
            .fold(0.0, f64::max),
        noisy,
        warnings,
    }
}

/// The points as the knee rule sees them: load (outstanding I/Os), IOPS
/// with its spread over the repetitions, and the mean latency (or p99).
pub fn series(points: &[PointResult], use_p99: bool) -> Vec<SeriesPoint> {
    points
        .iter()
        .map(|p| SeriesPoint {
            load: p.outstanding as f64,
            throughput: p.iops.mean,
            throughput_sd: p.iops.sd,
            runs: p.iops.n,
            latency: if use_p99 {
                p.lat_p99_us.mean
            } else {
                p.lat_mean_us.mean
            },
        })
        .collect()
}

/// Adds the knee, the recommendation and the findings.
pub fn analyse(plan: &SweepPlan, points: Vec<PointResult>, interrupted: bool) -> SweepResult {
    let lat = |p: &PointResult| {
        if plan.use_p99 {
            p.lat_p99_us.mean
        } else {
            p.lat_mean_us.mean
        }
    };
    let series = series(&points, plan.use_p99);
    // A knee needs load that only grows along the run order.
    let monotonic = series.windows(2).all(|w| w[1].load > w[0].load);
    let verdict = if monotonic {
        judge_knee(&series, plan.knee_threshold, plan.max_repeats)
    } else {
        KneeVerdict::TooShort
    };
    let recommended = plan.max_latency_us.and_then(|m| recommend(&series, m));
    let mut findings = Vec::new();
    if let KneeVerdict::At(k) = &verdict {
        findings.push(format!(
            "knee: {} ({}).",
            describe_point(&points[k.index]),
            k.explanation
        ));
    } else if let Some(f) = verdict.finding() {
        findings.push(f);
    }
    let knee_status = KneeStatus::from(&verdict);
    let knee = verdict.knee();
    let ceiling = ceiling_of(&points);
    if let Some(c) = &ceiling {
        findings.push(c.describe());
    }
    if let Some(m) = plan.max_latency_us {
        let metric = if plan.use_p99 { "p99" } else { "mean" };
        match recommended {
            Some(i) => findings.push(format!(
                "best under {metric} latency {m} us: {} with {} IOPS, {} MiB/s, {metric} latency {:.1} us.",
                describe_point(&points[i]),
                points[i].iops.show(),
                points[i].mib_per_sec.show(),
                lat(&points[i])
            )),
            None => findings.push(format!("no point kept {metric} latency under {m} us.")),
        }
    }
    for p in &points {
        findings.extend(point_findings(p, plan.max_repeats));
    }
    SweepResult {
        study: plan.study.clone(),
        base: plan.base.clone(),
        axes: plan.axes.clone(),
        combine: plan.combine,
        repeat: plan.repeat.max(1),
        points,
        knee_status,
        knee,
        max_latency_us: plan.max_latency_us,
        latency_metric: if plan.use_p99 {
            "p99".into()
        } else {
            "mean".into()
        },
        recommended,
        findings,
        interrupted,
        ceiling,
    }
}

/// A point's own findings: held by the CPU (and by whom), or noisy (and
/// the repetitions that would settle it, at most `max_repeats`).
fn point_findings(p: &PointResult, max_repeats: usize) -> Vec<String> {
    let mut out = Vec::new();
    if p.cpu_bound_runs > 0 {
        let has = |c: CpuCause| p.warnings.iter().any(|w| *w == c.code());
        let (why, what_to_do) = if has(CpuCause::Others) {
            (
                "other processes took CPU it needed".to_string(),
                "stop them and measure again",
            )
        } else if has(CpuCause::Iosim) {
            (
                "iosim's own threads saturated their cores".to_string(),
                "spread the load over more cores, or use larger blocks",
            )
        } else {
            // Results stored before the causes were told apart.
            (
                format!("a core reached {:.0}%", p.max_core_busy_pct),
                "spread the load over more threads or cores",
            )
        };
        out.push(format!(
            "{}: CPU-bound in {} run(s) ({why}): the storage may do more than this point shows; {what_to_do}.",
            describe_point(p),
            p.cpu_bound_runs,
        ));
    }
    if p.noisy {
        out.push(match p.suggested_repeats.unwrap_or(3) {
            n if n <= max_repeats => format!(
                "{}: noisy (IOPS cv {:.0}%): run with --repeat {n} for a ±5% confidence interval.",
                describe_point(p),
                p.iops.cv * 100.0,
            ),
            n => format!(
                "{}: noisy (IOPS cv {:.0}%): a ±5% confidence interval would take {n} repetitions, more than the {} this sweep allows; quieten the system or run longer points.",
                describe_point(p),
                p.iops.cv * 100.0,
                max_repeats
            ),
        });
    }
    out
}

/// The sweep's rate-limit ceiling ([`crate::changes::ceiling`]), over
/// points the CPU did not limit.
fn ceiling_of(points: &[PointResult]) -> Option<crate::changes::Ceiling> {
    if points.iter().any(|p| p.cpu_bound_runs > 0) {
        return None;
    }
    let load: Vec<crate::changes::LoadPoint> = points
        .iter()
        .map(|p| crate::changes::LoadPoint {
            load: p.outstanding as f64,
            iops: p.iops.mean,
            mib_per_sec: p.mib_per_sec.mean,
            lat_mean_us: p.lat_mean_us.mean,
        })
        .collect();
    crate::changes::ceiling(&load)
}

fn describe_point(p: &PointResult) -> String {
    p.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The sweep table.
pub fn text(r: &SweepResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sweep{}: {} on {}, {} repetition(s) per point{}",
        r.study
            .as_ref()
            .map(|n| format!(" {n}"))
            .unwrap_or_default(),
        r.base.describe(),
        r.base
            .targets
            .iter()
            .map(|t| t.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        r.repeat,
        if r.interrupted { " (INTERRUPTED)" } else { "" }
    );
    let names: Vec<String> = r
        .points
        .first()
        .map(|p| p.params.keys().cloned().collect())
        .unwrap_or_default();
    let mut header = String::new();
    for n in &names {
        let _ = write!(header, "{n:>10}");
    }
    let _ = writeln!(
        s,
        "{header}{:>6}{:>18}{:>14}{:>16}{:>16}{:>16}{:>10}  flags",
        "load", "IOPS", "MiB/s", "mean(us)", "p99(us)", "max(us)", "ci95%"
    );
    for (i, p) in r.points.iter().enumerate() {
        let mut row = String::new();
        for n in &names {
            let _ = write!(row, "{:>10}", p.params.get(n).cloned().unwrap_or_default());
        }
        let mut flags = Vec::new();
        if r.knee.as_ref().is_some_and(|k| k.index == i) {
            flags.push("KNEE");
        }
        if r.recommended == Some(i) {
            flags.push("BEST");
        }
        if p.cpu_bound_runs > 0 {
            flags.push("cpu-bound");
        }
        if p.noisy {
            flags.push("noisy");
        }
        let ci = p.iops.ci_pct();
        let _ = writeln!(
            s,
            "{row}{:>6}{:>18}{:>14}{:>16}{:>16}{:>16}{:>10}  {}",
            p.outstanding,
            p.iops.show(),
            p.mib_per_sec.show(),
            p.lat_mean_us.show(),
            p.lat_p99_us.show(),
            p.lat_max_us.show(),
            ci,
            flags.join(",")
        );
    }
    for f in &r.findings {
        let _ = writeln!(s, "- {f}");
    }
    s
}

/// One row of the sweep's CSV: the point's parameter values, then its figures.
#[derive(Serialize)]
struct CsvRow {
    params: Vec<String>,
    outstanding: u64,
    repeats: usize,
    iops_mean: Fixed<2>,
    iops_sd: Fixed<2>,
    iops_ci95: Fixed<2>,
    mib_s_mean: Fixed<3>,
    mib_s_sd: Fixed<3>,
    lat_mean_us: Fixed<2>,
    lat_mean_sd: Fixed<2>,
    lat_p99_us: Fixed<2>,
    lat_p99_sd: Fixed<2>,
    lat_max_us: Fixed<2>,
    cpu_bound_runs: usize,
    noisy: bool,
    knee: bool,
    recommended: bool,
}

/// The sweep as CSV, one row per point.
pub fn csv(r: &SweepResult) -> String {
    let names: Vec<String> = r
        .points
        .first()
        .map(|p| p.params.keys().cloned().collect())
        .unwrap_or_default();
    let mut header: Vec<&str> = names.iter().map(String::as_str).collect();
    header.extend([
        "outstanding",
        "repeats",
        "iops_mean",
        "iops_sd",
        "iops_ci95",
        "mib_s_mean",
        "mib_s_sd",
        "lat_mean_us",
        "lat_mean_sd",
        "lat_p99_us",
        "lat_p99_sd",
        "lat_max_us",
        "cpu_bound_runs",
        "noisy",
        "knee",
        "recommended",
    ]);
    let rows = r.points.iter().enumerate().map(|(i, p)| CsvRow {
        params: names
            .iter()
            .map(|n| p.params.get(n).cloned().unwrap_or_default())
            .collect(),
        outstanding: p.outstanding,
        repeats: p.iops.n,
        iops_mean: Fixed(p.iops.mean),
        iops_sd: Fixed(p.iops.sd),
        iops_ci95: Fixed(p.iops.ci95),
        mib_s_mean: Fixed(p.mib_per_sec.mean),
        mib_s_sd: Fixed(p.mib_per_sec.sd),
        lat_mean_us: Fixed(p.lat_mean_us.mean),
        lat_mean_sd: Fixed(p.lat_mean_us.sd),
        lat_p99_us: Fixed(p.lat_p99_us.mean),
        lat_p99_sd: Fixed(p.lat_p99_us.sd),
        lat_max_us: Fixed(p.lat_max_us.mean),
        cpu_bound_runs: p.cpu_bound_runs,
        noisy: p.noisy,
        knee: r.knee.as_ref().is_some_and(|k| k.index == i),
        recommended: r.recommended == Some(i),
    });
    crate::csvout::write(Some(&header), rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(a: &Axis) -> Vec<u64> {
        a.values
            .iter()
            .map(|v| if let Value::Num(n) = v { *n } else { panic!() })
            .collect()
    }

    #[test]
    fn axis_syntax() {
        assert_eq!(nums(&parse_axis("qd=1,2,4").unwrap()), vec![1, 2, 4]);
        assert_eq!(nums(&parse_axis("qd=1..5").unwrap()), vec![1, 2, 3, 4, 5]);
        assert_eq!(
            nums(&parse_axis("qd=1..64x2").unwrap()),
            vec![1, 2, 4, 8, 16, 32, 64]
        );
        assert_eq!(
            nums(&parse_axis("threads=32..1/2").unwrap()),
            vec![32, 16, 8, 4, 2, 1]
        );
        assert_eq!(
            nums(&parse_axis("write-pct=0..100:25").unwrap()),
            vec![0, 25, 50, 75, 100]
        );
        assert_eq!(
            nums(&parse_axis("bs=4K,8K,64K").unwrap()),
            vec![4096, 8192, 65536]
        );
        assert_eq!(
            nums(&parse_axis("bs=4K..16Kx2").unwrap()),
            vec![4096, 8192, 16384]
        );
        let sb = parse_axis("submit-batch=0,1,4").unwrap();
        assert_eq!(sb.param, Param::SubmitBatch);
        assert_eq!(nums(&sb), vec![0, 1, 4]);
        let spec = apply(
            &WorkloadSpec::default(),
            &[(Param::SubmitBatch, Value::Num(4))].into_iter().collect(),
        );
        assert_eq!(spec.submit_batch, 4);
        let rw = parse_axis("rw=randread,randwrite").unwrap();
        assert_eq!(
            rw.values,
            vec![Value::Rw(RwMode::Randread), Value::Rw(RwMode::Randwrite)]
        );
        for bad in [
            "qd",
            "depth=1,2",
            "qd=a",
            "qd=0..8x2",
            "qd=1..8x1",
            "rw=sideways",
            "qd=1..8:0",
        ] {
            assert!(parse_axis(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn grid_and_zip() {
        let t = parse_axis("threads=1,2").unwrap();
        let q = parse_axis("qd=1,2,4").unwrap();
        assert_eq!(
            points(&[t.clone(), q.clone()], Combine::Grid)
                .unwrap()
                .len(),
            6
        );
        assert!(points(&[t, q], Combine::Zip).is_err());
        let t = parse_axis("threads=1..32x2").unwrap();
        let q = parse_axis("qd=32..1/2").unwrap();
        let z = points(&[t, q], Combine::Zip).unwrap();
        assert_eq!(z.len(), 6);
        assert_eq!(z[1][&Param::Threads], Value::Num(2));
        assert_eq!(z[1][&Param::Qd], Value::Num(16));
    }

    #[test]
    fn apply_sets_the_parameters() {
        let base = WorkloadSpec::default();
        let mut p = Point::new();
        p.insert(Param::Qd, Value::Num(16));
        p.insert(Param::Bs, Value::Num(8192));
        p.insert(Param::WritePct, Value::Num(30));
        let s = apply(&base, &p);
        assert_eq!(
            (s.qd, s.bs, s.write_pct, s.rw),
            (16, 8192, 30, RwMode::Randrw)
        );
        let mut p = Point::new();
        p.insert(Param::Rw, Value::Rw(RwMode::Write));
        let s = apply(&base, &p);
        assert_eq!((s.rw, s.write_pct), (RwMode::Write, 100));
    }

    #[test]
    fn shape_axes_parse_check_and_apply() {
        let d = parse_axis("distribution=uniform,zipf:1.1,hotcold:10/90").unwrap();
        assert_eq!(d.param, Param::Distribution);
        assert_eq!(d.values[2], Value::Text("hotcold:10/90".into()));
        assert!(parse_axis("distribution=zipf:0").is_err());
        let b = parse_axis("bssplit=8K/100;8K/70:64K/30,64K/100").unwrap();
        assert_eq!(b.values.len(), 2);
        assert_eq!(b.values[1], Value::Text("8K/70:64K/30,64K/100".into()));
        assert!(parse_axis("bssplit=8K/70:64K/20").is_err());
        let c = parse_axis("compress-pct=0..75:25").unwrap();
        assert_eq!(c.values.len(), 4);
        assert!(parse_axis("dedupe-pct=0,120").is_err());
        assert_eq!(
            parse_axis("buffer_compress_percentage=50").unwrap().param,
            Param::CompressPct
        );
        let mut p = Point::new();
        p.insert(Param::Distribution, d.values[1].clone());
        p.insert(Param::Bssplit, b.values[1].clone());
        p.insert(Param::CompressPct, Value::Num(50));
        p.insert(Param::DedupePct, Value::Num(20));
        let s = apply(&WorkloadSpec::default(), &p);
        assert_eq!(s.shape.distribution, Distribution::Zipf(1.1));
        assert_eq!(s.shape.bssplit.unwrap().to_string(), "8K/70:64K/30,64K/100");
        assert_eq!(s.fill, crate::workload::FillMode::Compressible(50));
        assert_eq!(s.shape.dedupe_pct, 20);
        assert_eq!(
            Value::Text("zipf:1.1".into()).show(Param::Distribution),
            "zipf:1.1"
        );
    }

    fn point(q: u64, iops: &[f64], lat: f64) -> PointResult {
        PointResult {
            params: [("qd".to_string(), q.to_string())].into(),
            outstanding: q,
            iops: Stat::of(iops),
            mib_per_sec: Stat::of(&[1.0]),
            lat_mean_us: Stat::of(&[lat]),
            lat_p99_us: Stat::of(&[lat * 2.0]),
            lat_max_us: Stat::of(&[lat * 3.0]),
            cpu_bound_runs: 0,
            max_core_busy_pct: 50.0,
            noisy: is_noisy(&Stat::of(iops)),
            suggested_repeats: None,
            warnings: vec![],
        }
    }

    /// A stored run result (a fixture written before the CPU causes were
    /// told apart: `cpu_bound` true, warning `cpu_bound`).
    fn stored_run() -> RunResult {
        let p =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/csv/run.json");
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    #[test]
    fn cpu_bound_points_count_old_and_new_codes_and_say_the_cause() {
        use crate::sysmon::check::{CpuCause, Warning};
        let old = stored_run();
        assert!(old.cpu.cpu_bound && old.cpu.cause.is_none());
        let with = |cause: CpuCause| {
            let mut r = stored_run();
            r.warnings.retain(|w| !w.code.as_str().starts_with("cpu"));
            r.cpu.cpu_bound = cause.untrusted();
            r.cpu.cause = Some(cause);
            r.warnings.push(Warning {
                code: cause.code(),
                message: "m".into(),
            });
            r
        };
        let spec = WorkloadSpec::default();
        let mut p = Point::new();
        p.insert(Param::Qd, Value::Num(1));
        let count = |runs: &[RunResult]| summarize_point(&p, &spec, runs).cpu_bound_runs;
        assert_eq!(
            count(std::slice::from_ref(&old)),
            1,
            "a stored cpu_bound still counts"
        );
        assert_eq!(count(&[with(CpuCause::Others), with(CpuCause::Iosim)]), 2);
        assert_eq!(
            count(&[with(CpuCause::IoPath)]),
            0,
            "the I/O path is the storage's cost"
        );
        let plan = SweepPlan {
            base: WorkloadSpec::default(),
            axes: vec![],
            explicit: vec![],
            combine: Combine::Grid,
            repeat: 1,
            max_latency_us: None,
            use_p99: false,
            knee_threshold: analysis::DEFAULT_KNEE_ELASTICITY,
            study: None,
            max_repeats: analysis::MAX_DECIDING_REPEATS,
        };
        let finding = |runs: Vec<RunResult>| {
            let r = analyse(&plan, vec![summarize_point(&p, &spec, &runs)], false);
            r.findings
                .into_iter()
                .find(|f| f.contains("CPU-bound"))
                .unwrap_or_default()
        };
        assert!(
            finding(vec![with(CpuCause::Others)]).contains("(other processes took CPU it needed)")
        );
        assert!(finding(vec![with(CpuCause::Iosim)])
            .contains("(iosim's own threads saturated their cores)"));
        assert!(finding(vec![old]).contains("(a core reached 100%)"));
        assert_eq!(finding(vec![with(CpuCause::IoPath)]), "");
    }

    #[test]
    fn analysis_finds_knee_best_and_noise() {
        let plan = SweepPlan {
            base: WorkloadSpec::default(),
            axes: vec![],
            explicit: vec![],
            combine: Combine::Grid,
            repeat: 3,
            max_latency_us: Some(300.0),
            use_p99: false,
            knee_threshold: analysis::DEFAULT_KNEE_ELASTICITY,
            study: None,
            max_repeats: analysis::MAX_DECIDING_REPEATS,
        };
        let pts = vec![
            point(1, &[10_000.0; 3], 100.0),
            point(2, &[19_000.0; 3], 105.0),
            point(4, &[30_000.0; 3], 133.0),
            point(8, &[31_000.0, 40_000.0, 22_000.0], 258.0),
            point(16, &[31_200.0; 3], 512.0),
        ];
        let r = analyse(&plan, pts, false);
        assert_eq!(r.knee.as_ref().unwrap().index, 2);
        assert_eq!(r.recommended, Some(3));
        assert!(
            r.findings.iter().any(|f| f.contains("noisy")),
            "{:?}",
            r.findings
        );
        let t = text(&r);
        assert!(
            t.contains("KNEE") && t.contains("BEST") && t.contains("noisy"),
            "{t}"
        );
        let c = csv(&r);
        assert_eq!(c.lines().count(), 6);
    }
}
