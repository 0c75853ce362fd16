//! After a run: merge what the workers measured into one [`RunResult`].

use crate::stats::RwStats;
use crate::sysmon::check::{cpu_cause, cpu_warning, self_checks, CpuCause, Warning, WarningCode};
use crate::sysmon::content::TargetContent;
use crate::sysmon::mounts::Resolution;
use crate::sysmon::procs::CpuAttribution;
use crate::sysmon::sampler::MonitorReport;
use crate::target::{PreparedTarget, TargetKind};
use crate::workload::distribution::SkewReport;
use crate::workload::measured::{ShapeResult, ShapeStats, TargetSkew};
use crate::workload::{EngineKind, WorkloadSpec};

use super::result::{
    CpuResult, ErrorSummary, HistogramSet, MeasuredWindow, RunResult, Series, TargetResult,
    ThreadResult, SCHEMA_VERSION,
};
use super::worker::WorkerOut;

/// What the run knew besides the workers' measurements.
pub(super) struct RunFacts {
    pub spec: WorkloadSpec,
    pub started_at: String,
    pub engine: EngineKind,
    pub notes: Vec<String>,
    pub interrupted: bool,
    pub targets: Vec<PreparedTarget>,
    pub resolutions: Vec<Resolution>,
    /// Per target: what it holds, looked at before the run.
    pub content: Vec<TargetContent>,
    pub monitor: MonitorReport,
    pub series: Series,
    /// The shared window, `[start, end)` in clock ns (`u64::MAX`: never opened).
    pub window: (u64, u64),
    /// Wall-clock ns since the Unix epoch minus clock ns, read once for the run.
    pub unix_offset_ns: i128,
    /// What the other workloads of the run issued to each block device (by
    /// name): the device's counters include it, so the self-checks do too.
    pub elsewhere: Vec<crate::sysmon::check::IssuedElsewhere>,
}

/// A worker that first ran, or noticed the end, later than this after the
/// window's edge makes the run say so: 10 ms or 1% of the window.
fn window_tolerance_ns(window_ns: u64) -> u64 {
    (window_ns / 100).max(10_000_000)
}

/// Workers that could not start or stop with the window (more runnable
/// threads than CPUs): the rates stay true, but the run says so.
fn window_warnings(outs: &[WorkerOut], (start, end): (u64, u64)) -> Vec<Warning> {
    let mut out = Vec::new();
    if start == u64::MAX || end == u64::MAX || end <= start {
        return out;
    }
    let tol = window_tolerance_ns(end - start);
    let n = outs.len();
    let late: Vec<u64> = outs
        .iter()
        .map(|o| o.first_ts.saturating_sub(start))
        .filter(|&l| l > tol)
        .collect();
    if let Some(max) = late.iter().max() {
        out.push(Warning {
            code: WarningCode::WorkersStartedLate,
            message: format!(
                "{} of {n} workers first ran up to {:.0} ms after the measured window opened \
                 (more runnable threads than CPUs?): the load was lighter than asked at the start. \
                 Rates are over the common window, so they are not inflated; use fewer threads or a --warmup",
                late.len(),
                *max as f64 / 1e6
            ),
        });
    }
    let late: Vec<u64> = outs
        .iter()
        .filter(|o| o.noticed_end_ts != 0)
        .map(|o| o.noticed_end_ts.saturating_sub(end))
        .filter(|&l| l > tol)
        .collect();
    if let Some(max) = late.iter().max() {
        out.push(Warning {
            code: WarningCode::WorkersStoppedLate,
            message: format!(
                "{} of {n} workers noticed the end of the measured window up to {:.0} ms late \
                 (more runnable threads than CPUs?): I/O after the end is not counted, \
                 but the run took that much longer; use fewer threads",
                late.len(),
                *max as f64 / 1e6
            ),
        });
    }
    out
}

/// Per thread, per target and in total: what the workers measured.
pub(super) struct Merged {
    pub total: RwStats,
    pub per_target: Vec<RwStats>,
    pub threads: Vec<ThreadResult>,
    pub errors: ErrorSummary,
    pub user_s: f64,
    pub sys_s: f64,
}

/// What the workers of one workload measured, merged.
pub(super) fn merge(outs: &[WorkerOut], ntargets: usize) -> Merged {
    let mut m = Merged {
        total: RwStats::default(),
        per_target: (0..ntargets).map(|_| RwStats::default()).collect(),
        threads: Vec::new(),
        errors: ErrorSummary::default(),
        user_s: 0.0,
        sys_s: 0.0,
    };
    for o in outs {
        m.total.merge(&o.stats);
        m.per_target[o.target].merge(&o.stats);
        m.errors.count += o.errors;
        for r in &o.error_records {
            if m.errors.first.len() < 100 {
                m.errors.first.push(r.clone());
            }
        }
        m.user_s += o.user_s;
        m.sys_s += o.sys_s;
        m.threads.push(ThreadResult {
            thread: o.thread,
            target: o.target,
            cpu: o.cpu,
            duration_s: o.duration_ns as f64 / 1e9,
            cpu_user_s: o.user_s,
            cpu_sys_s: o.sys_s,
            result: o.stats.summarize(o.duration_ns as f64 / 1e9),
        });
    }
    m.threads.sort_by_key(|t| t.thread);
    m
}

/// CPU use of the workers and of the machine over `secs` measured seconds,
/// who used it (`attribution`, from the monitor) and whether it limited the
/// run; with the run's one CPU warning, if any.
fn cpu_result(
    user_s: f64,
    sys_s: f64,
    secs: f64,
    mon: &MonitorReport,
    attribution: Option<CpuAttribution>,
) -> (CpuResult, Option<Warning>) {
    let machine = mon.cpu_whole.clone();
    let max_core = machine
        .iter()
        .filter(|c| c.cpu.is_some())
        .map(|c| c.busy_pct)
        .fold(0.0, f64::max);
    let cause = attribution.as_ref().and_then(|a| cpu_cause(a, max_core));
    let warning = cause
        .zip(attribution.as_ref())
        .map(|(c, a)| cpu_warning(c, a));
    let cpu = CpuResult {
        user_s,
        sys_s,
        process_pct_of_one_core: if secs > 0.0 {
            100.0 * (user_s + sys_s) / secs
        } else {
            0.0
        },
        max_core_busy_pct: max_core,
        cpu_bound: cause.is_some_and(CpuCause::untrusted),
        cause,
        attribution,
        machine,
    };
    (cpu, warning)
}

fn target_results(
    spec: &WorkloadSpec,
    targets: &[PreparedTarget],
    per_target: &[RwStats],
    secs: f64,
) -> Vec<TargetResult> {
    targets
        .iter()
        .enumerate()
        .map(|(i, t)| TargetResult {
            path: t.path.display().to_string(),
            kind: match t.kind {
                TargetKind::File => "file",
                TargetKind::BlockDevice => "block_device",
                TargetKind::Null => "null",
            }
            .into(),
            size: t.size,
            region_start: t.region_start,
            region_len: t.region_len,
            created: t.created,
            dio_align: t.dio_align,
            threads: spec.threads_for(i),
            result: per_target[i].summarize(secs),
        })
        .collect()
}

/// The window as wall-clock times (`None`: it never opened).
fn wall_window((start, end): (u64, u64), offset: i128) -> Option<MeasuredWindow> {
    if start == u64::MAX || end == u64::MAX {
        return None;
    }
    let wall = |t: u64| u64::try_from((i128::from(t) + offset).max(0)).unwrap_or(u64::MAX);
    Some(MeasuredWindow {
        start_unix_ns: wall(start),
        end_unix_ns: wall(end),
    })
}

/// The result document of one workload of a run (`m`: its workers' `outs` merged).
pub(super) fn assemble(f: RunFacts, outs: &[WorkerOut], m: Merged) -> RunResult {
    let RunFacts {
        spec,
        started_at,
        engine,
        mut notes,
        interrupted,
        targets,
        resolutions,
        content,
        series,
        window,
        unix_offset_ns,
        mut monitor,
        elsewhere,
    } = f;
    let duration_ns = outs.iter().map(|o| o.duration_ns).max().unwrap_or(0);
    let secs = duration_ns as f64 / 1e9;
    if m.errors.count > 0 {
        notes.push(format!(
            "{} I/O errors (see errors in the JSON output for offsets)",
            m.errors.count
        ));
    }
    let attribution = monitor.attribution.take();
    let (cpu, cpu_warning) = cpu_result(m.user_s, m.sys_s, secs, &monitor, attribution);
    let environment = crate::sysmon::host::host_info();
    let regions: Vec<_> = targets.iter().map(PreparedTarget::region).collect();
    let mut warnings = self_checks(
        &spec,
        &regions,
        &resolutions,
        &m.per_target,
        &content,
        &elsewhere,
        &monitor,
        &environment,
    );
    warnings.extend(cpu_warning);
    warnings.extend(window_warnings(outs, window));
    let total = m.total.summarize(secs);
    let changes = changes_of(&spec, engine, &series, &monitor, &resolutions, &total, &cpu);
    warnings.extend(crate::changes::rate_limit_warning(&changes.rate_limits));
    let shape = shape_result(&spec, outs, secs, &m.total);
    let mut late = crate::stats::SlowAfterWindow::default();
    for o in outs {
        late.merge(&o.late);
    }
    if let Some(l) = late.if_slow() {
        notes.push(format!(
            "{} I/O(s) in flight when the measured window closed took over 1 s ({} over 15 s, the slowest {:.2} s): they are not in the statistics, which describe the window (slow_after_window in the JSON)",
            l.ios.over_1s,
            l.ios.over_15s,
            l.max_us / 1e6
        ));
    }
    RunResult {
        schema_version: SCHEMA_VERSION,
        iosim_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        host: environment.host.clone(),
        targets: target_results(&spec, &targets, &m.per_target, secs),
        config: spec,
        engine: engine.name().to_string(),
        notes,
        interrupted,
        duration_s: secs,
        total,
        threads: m.threads,
        cpu,
        errors: m.errors,
        series,
        histograms: HistogramSet::of(&m.total),
        environment,
        devices: resolutions,
        monitor,
        warnings,
        shape,
        verify: None,
        window: wall_window(window, unix_offset_ns),
        slow_after_window: late.if_slow(),
        changes,
        neighbour: None,
    }
}

/// The rate limits and changes over time of a run ([`crate::changes`]),
/// from its total series and the device under its target (when every
/// target is on one device).
fn changes_of(
    spec: &WorkloadSpec,
    engine: EngineKind,
    series: &Series,
    monitor: &MonitorReport,
    resolutions: &[Resolution],
    total: &crate::stats::RwResult,
    cpu: &CpuResult,
) -> crate::changes::Changes {
    use crate::changes::{detect, Context, DeviceView, Interval};
    let intervals: Vec<Interval> = series
        .total
        .iter()
        .map(|p| Interval {
            t_s: p.t_s,
            duration_s: p.duration_s,
            iops: p.total.iops,
            mib_per_sec: p.total.mib_per_sec,
            lat_mean_us: p.total.lat_mean_us,
            read_iops: p.read.iops,
            write_iops: p.write.iops,
        })
        .collect();
    let depth = crate::engine::Capabilities::of(engine).slots_for(spec.qd) as f64;
    let outstanding: f64 = (0..spec.targets.len().max(1))
        .map(|i| f64::from(spec.threads_for(i)) * depth)
        .sum();
    let mut names = resolutions.iter().map(|r| r.device().map(|d| &d.name));
    let device = match names.next() {
        Some(Some(first)) if names.all(|n| n == Some(first)) => {
            monitor.device(first).map(|c| DeviceView {
                name: first.clone(),
                await_ms: c.avg_transfer_ms,
                transfers: c.reads + c.writes,
            })
        }
        _ => None,
    };
    detect(
        &intervals,
        &Context {
            outstanding: (!spec.paced()).then_some(outstanding),
            device,
            iosim_ios: total.total.ios,
            cpu_limited: cpu.cpu_bound,
            cpu_finding: cpu.cause.is_some(),
        },
    )
}

/// The workers' per-size, open-loop and skew measurements merged (issue 17).
fn shape_result(
    spec: &WorkloadSpec,
    outs: &[WorkerOut],
    secs: f64,
    total: &RwStats,
) -> Option<ShapeResult> {
    let mut merged = ShapeStats::default();
    for o in outs {
        merged.merge(&o.shape);
    }
    let skew = (0..spec.targets.len())
        .filter(|&i| !spec.distribution_for(i).is_uniform())
        .map(|i| {
            let mine = outs.iter().filter(|o| o.target == i);
            let blocks = mine.clone().map(|o| o.slots).max().unwrap_or(0);
            TargetSkew {
                target: i,
                report: SkewReport::from_counts(
                    spec.distribution_for(i),
                    spec.shape.placement,
                    blocks,
                    mine.map(|o| o.skew),
                ),
            }
        })
        .filter(|k| k.report.ios > 0)
        .collect();
    let mut r = merged.result(spec, secs, total, skew);
    r.db_cache = db_cache_result(spec, outs, total);
    (!r.is_empty()).then_some(r)
}

/// What the database's cache served (`--db-cache`): its hits, and the
/// reads that went to storage, against what the skew predicts.
fn db_cache_result(
    spec: &WorkloadSpec,
    outs: &[WorkerOut],
    total: &RwStats,
) -> Option<crate::workload::dbcache::DbCacheResult> {
    let c = spec.shape.db_cache?;
    let per: Vec<(u64, f64, f64)> = outs.iter().filter_map(|o| o.cache).collect();
    let hits: u64 = per.iter().map(|p| p.0).sum();
    let reads = hits + total.read.ios;
    let n = per.len().max(1) as f64;
    Some(crate::workload::dbcache::DbCacheResult {
        cache: c.arg(),
        share: per.iter().map(|p| p.1).sum::<f64>() / n,
        reads,
        hits,
        hit_ratio: if reads == 0 {
            0.0
        } else {
            hits as f64 / reads as f64
        },
        expected_hit_ratio: per.iter().map(|p| p.2).sum::<f64>() / n,
    })
}
