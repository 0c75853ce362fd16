//! Runs a workload: prepares the targets, starts one worker thread per
//! (target, thread), and merges what they measured.
//!
//! Each worker owns its engine, its offset generator and its statistics.
//! The hot loop queues an I/O for every free slot, stamps the batch with one
//! clock read, submits and waits in one system call, stamps the completions
//! with one clock read, and records each latency into thread-private
//! statistics: no allocation, lock, formatting or extra system call per I/O.
//!
//! At every interval boundary (1 s by default) a worker hands a copy of its
//! interval statistics to the main thread over a channel (once per interval,
//! not per I/O), adds them to its whole-run statistics and starts the next
//! interval. The main thread merges intervals across threads exactly, drives
//! the live progress line, and builds the time series.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::clock::now_ns;
use crate::engine::{self, Completion, EngineConfig, IoReq, Op};
use crate::stats::{DirStats, RwResult, RwStats};
use crate::sysmon::check::{self, CheckInput, Warning};
use crate::sysmon::cpu::{self, CoreUtil};
use crate::sysmon::mounts::{self, Resolution};
use crate::sysmon::sampler::{Monitor, MonitorReport};
use crate::target::{self, PrepareOptions, PreparedTarget, TargetKind};
use crate::workload::{EngineKind, FillMode, OffsetGen, SeqLayout, WorkloadSpec};

/// Version of the JSON result schema (see docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = 1;

/// A worker stops after this many I/O errors.
pub const MAX_ERRORS_PER_THREAD: u64 = 1000;

/// Error records kept per thread (all errors are counted).
const ERROR_RECORDS_PER_THREAD: usize = 32;

/// How a run is carried out, apart from the workload itself.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Live progress and file-creation bars on stderr.
    pub progress: bool,
    /// Set by Ctrl-C/SIGTERM: stop and report what was measured.
    pub stop: Arc<AtomicBool>,
    /// Time-series interval.
    pub interval: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            stop: Arc::new(AtomicBool::new(false)),
            interval: Duration::from_secs(1),
        }
    }
}

/// One I/O error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    /// Target index.
    pub target: usize,
    /// Thread index (global).
    pub thread: usize,
    /// `read` or `write`.
    pub op: String,
    /// Byte offset.
    pub offset: u64,
    /// Bytes requested.
    pub len: u32,
    /// Bytes transferred (short I/O) or -errno.
    pub result: i32,
    /// What it means.
    pub message: String,
}

/// Results of one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// Path.
    pub path: String,
    /// `file`, `block_device` or `null`.
    pub kind: String,
    /// Size of the file or device.
    pub size: u64,
    /// First byte used.
    pub region_start: u64,
    /// Bytes of the region used.
    pub region_len: u64,
    /// True when this run created or extended the file.
    pub created: bool,
    /// Direct-I/O alignment of the target.
    pub dio_align: u64,
    /// Threads on this target.
    pub threads: u32,
    /// Read, write and total.
    #[serde(flatten)]
    pub result: RwResult,
}

/// Results of one worker thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// Global thread number.
    pub thread: usize,
    /// Target index.
    pub target: usize,
    /// CPU the thread was pinned to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Measured time of this thread.
    pub duration_s: f64,
    /// User CPU seconds while measuring.
    pub cpu_user_s: f64,
    /// System CPU seconds while measuring.
    pub cpu_sys_s: f64,
    /// Read, write and total.
    #[serde(flatten)]
    pub result: RwResult,
}

/// CPU use during the measured time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuResult {
    /// User CPU seconds of the worker threads.
    pub user_s: f64,
    /// System CPU seconds of the worker threads.
    pub sys_s: f64,
    /// Worker CPU time as a percentage of one core.
    pub process_pct_of_one_core: f64,
    /// Whole machine, then each core.
    pub machine: Vec<CoreUtil>,
    /// Busiest core's busy percentage.
    pub max_core_busy_pct: f64,
    /// True when a core was at least 95% busy: the run may measure the CPU, not the storage.
    pub cpu_bound: bool,
}

/// Errors seen during the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// All I/O errors and short transfers.
    pub count: u64,
    /// The first few, with offsets.
    pub first: Vec<IoErrorRecord>,
}

/// One point of the time series: one interval, one scope (a target or the total).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// End of the interval, seconds from the start of measuring.
    pub t_s: f64,
    /// Length of the interval.
    pub duration_s: f64,
    /// Reads.
    pub read: PointStats,
    /// Writes.
    pub write: PointStats,
    /// Both.
    pub total: PointStats,
}

/// Throughput and latency over one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointStats {
    /// I/Os completed.
    pub ios: u64,
    /// Bytes.
    pub bytes: u64,
    /// I/Os per second.
    pub iops: f64,
    /// MiB per second.
    pub mib_per_sec: f64,
    /// Mean latency, µs.
    pub lat_mean_us: f64,
    /// Median latency, µs.
    pub lat_p50_us: f64,
    /// 99th percentile, µs.
    pub lat_p99_us: f64,
    /// Maximum, µs.
    pub lat_max_us: f64,
}

impl PointStats {
    fn from_dir(d: &DirStats, secs: f64) -> PointStats {
        let r = d.summarize(secs);
        PointStats {
            ios: r.ios,
            bytes: r.bytes,
            iops: r.iops,
            mib_per_sec: r.mib_per_sec,
            lat_mean_us: r.latency_us.mean,
            lat_p50_us: r.latency_us.p("p50"),
            lat_p99_us: r.latency_us.p("p99"),
            lat_max_us: r.latency_us.max,
        }
    }
}

/// Time series of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Interval length, seconds.
    pub interval_s: f64,
    /// All targets together.
    pub total: Vec<SeriesPoint>,
    /// Per target, in target order.
    pub targets: Vec<Vec<SeriesPoint>>,
}

/// Everything a run measured. This struct is the JSON schema (`--output json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Schema version of this document.
    pub schema_version: u32,
    /// iosim's version.
    pub iosim_version: String,
    /// When the run started (UTC).
    pub started_at: String,
    /// Host name.
    pub host: String,
    /// The resolved workload.
    pub config: WorkloadSpec,
    /// The engine actually used (after any fallback).
    pub engine: String,
    /// Notes: fallbacks, reused files, warnings.
    pub notes: Vec<String>,
    /// True when Ctrl-C or SIGTERM stopped the run early.
    pub interrupted: bool,
    /// Measured time (excluding warmup).
    pub duration_s: f64,
    /// All targets.
    pub total: RwResult,
    /// Per target.
    pub targets: Vec<TargetResult>,
    /// Per thread.
    pub threads: Vec<ThreadResult>,
    /// CPU use.
    pub cpu: CpuResult,
    /// I/O errors.
    pub errors: ErrorSummary,
    /// Time series.
    pub series: Series,
    /// Whole-run latency histograms of all targets together (HdrHistogram V2, base64).
    pub histograms: HistogramSet,
    /// The machine.
    pub environment: crate::sysmon::host::HostInfo,
    /// The block device under each target (or why there is none), in target order.
    pub devices: Vec<Resolution>,
    /// Device and CPU counters over the measured time, whole run and per interval.
    pub monitor: MonitorReport,
    /// Results checked against the kernel's counters: what may make them untrue.
    pub warnings: Vec<Warning>,
}

/// Latency histograms, nanoseconds, as [`crate::stats::encode_histogram`] writes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramSet {
    /// Reads.
    pub read: String,
    /// Writes.
    pub write: String,
}

/// What a worker sends at each interval boundary.
struct IntervalMsg {
    target: usize,
    index: usize,
    duration_ns: u64,
    stats: RwStats,
}

/// What a worker returns.
struct WorkerOut {
    target: usize,
    thread: usize,
    cpu: Option<usize>,
    duration_ns: u64,
    user_s: f64,
    sys_s: f64,
    stats: RwStats,
    errors: u64,
    error_records: Vec<IoErrorRecord>,
}

struct WorkerPlan {
    target: usize,
    thread: usize,
    /// Thread index within its target.
    local: usize,
    threads_on_target: usize,
    cpu: Option<Vec<usize>>,
    file: Option<std::fs::File>,
}

/// Runs `spec` and returns what it measured.
pub fn run(spec: &WorkloadSpec, opts: &RunOptions) -> anyhow::Result<RunResult> {
    spec.validate()?;
    let started_at = crate::clock::utc_now_rfc3339();
    let mut notes = Vec::new();
    let mut spec = spec.clone();
    if spec.engine == EngineKind::Null && spec.targets.is_empty() {
        spec.targets
            .push(crate::workload::TargetSpec::new("null", Some(1 << 30)));
    }

    // Prepare every target (create, check, align).
    let mut targets: Vec<PreparedTarget> = Vec::new();
    for i in 0..spec.targets.len() {
        let t = target::prepare(
            &spec,
            i,
            PrepareOptions {
                progress: opts.progress,
                stop: Some(&opts.stop),
            },
        )
        .with_context(|| format!("target '{}'", spec.targets[i].path.display()))?;
        for n in &t.notes {
            notes.push(format!("{}: {n}", t.path.display()));
        }
        targets.push(t);
    }
    if opts.stop.load(Ordering::Relaxed) {
        anyhow::bail!("interrupted before the run started");
    }

    // Engine choice, once, so every thread uses the same one.
    let mut engine_kind = spec.engine;
    if engine_kind == EngineKind::Uring {
        if let Err(e) = engine::uring_available() {
            if spec.sqpoll || spec.hipri {
                anyhow::bail!("io_uring is not available here ({e}), and --sqpoll/--hipri need it");
            }
            notes.push(format!(
                "io_uring is not available here ({e}); fell back to the sync engine (pread/pwrite, queue depth 1 per thread)"
            ));
            engine_kind = EngineKind::Sync;
        }
    }
    if matches!(engine_kind, EngineKind::Sync | EngineKind::Mmap) && spec.qd > 1 {
        notes.push(format!(
            "the {} engine does one I/O at a time per thread: --qd {} acts as 1",
            engine_kind.name(),
            spec.qd
        ));
    }
    if let Some(cs) = crate::clock::clocksource() {
        if cs != "tsc" {
            notes.push(format!(
                "clocksource is '{cs}', not 'tsc': timestamps may cost a system call each"
            ));
        }
    }
    if spec.fill == FillMode::Zero {
        notes.push("writes carry zeros: storage that compresses or detects zeros will look faster than it is".into());
    }

    // Plan the workers and open their files (errors surface here, not in threads).
    let writes = spec.writes();
    let mut plans = Vec::new();
    let mut global = 0usize;
    for (ti, t) in targets.iter().enumerate() {
        let n = spec.threads_for(ti) as usize;
        for local in 0..n {
            let file = if t.kind == TargetKind::Null {
                None
            } else {
                Some(target::open_for_io(t, spec.cache, writes)?)
            };
            let cpu = if !spec.targets[ti].cpus.is_empty() {
                Some(spec.targets[ti].cpus.clone())
            } else if !spec.cpus.is_empty() {
                Some(vec![spec.cpus[global % spec.cpus.len()]])
            } else {
                None
            };
            plans.push(WorkerPlan {
                target: ti,
                thread: global,
                local,
                threads_on_target: n,
                cpu,
                file,
            });
            global += 1;
        }
    }

    let nworkers = plans.len();
    let barrier = Arc::new(Barrier::new(nworkers + 1));
    let (tx, rx) = mpsc::channel::<IntervalMsg>();
    let engine_notes = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut handles = Vec::new();
    let shared_offsets: Vec<Arc<AtomicU64>> = targets
        .iter()
        .map(|_| Arc::new(AtomicU64::new(0)))
        .collect();
    for plan in plans {
        let t = &targets[plan.target];
        let ctx = WorkerCtx {
            spec: spec.clone(),
            engine: engine_kind,
            region_start: t.region_start,
            region_len: t.region_len,
            stop: opts.stop.clone(),
            barrier: barrier.clone(),
            tx: tx.clone(),
            interval_ns: opts.interval.as_nanos().max(1_000_000) as u64,
            notes: engine_notes.clone(),
            shared_offset: shared_offsets[plan.target].clone(),
        };
        let h = std::thread::Builder::new()
            .name(format!("iosim-w{}", plan.thread))
            .spawn(move || worker(ctx, plan))
            .context("cannot start a worker thread")?;
        handles.push(h);
    }
    drop(tx);

    // What the test files hold, checked before the run (sparse or zero-filled files flatter reads).
    let content: Vec<(bool, bool)> = targets
        .iter()
        .map(|t| match t.kind {
            TargetKind::File => (
                check::file_is_sparse(&t.path).unwrap_or(false),
                check::looks_zero_filled(&t.path, 16).unwrap_or(false),
            ),
            _ => (false, false),
        })
        .collect();

    // Which block device each target lives on, and a monitor of those devices and the CPUs.
    let resolutions: Vec<Resolution> = targets
        .iter()
        .map(|t| match t.kind {
            TargetKind::Null => Resolution::NoDevice {
                fs_type: "null".into(),
                reason: "the null engine touches no storage".into(),
            },
            _ => mounts::resolve_target(&t.path),
        })
        .collect();
    let mut watched: Vec<String> = Vec::new();
    for d in resolutions.iter().filter_map(|r| r.device()) {
        for n in d.monitor_names() {
            if !watched.contains(&n) {
                watched.push(n);
            }
        }
    }
    let monitor = Monitor::start(watched, opts.interval.max(Duration::from_millis(10)));

    // Start everyone together; the monitor's baseline is the start of measuring.
    barrier.wait();
    monitor.reset_baseline();
    let t_start = now_ns();
    let warmup_ns = spec.warmup.as_nanos() as u64;
    let progress = Progress::new(opts.progress, &spec);
    let mut warm = warmup_ns == 0;
    let mut agg = IntervalAgg::new(targets.len(), nworkers);
    loop {
        if !warm && now_ns() >= t_start + warmup_ns {
            monitor.reset_baseline();
            warm = true;
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(msg) => {
                if let Some(point) = agg.add(msg) {
                    progress.update(&point);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let mon = monitor.stop();
    progress.finish();

    let mut outs = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok(o)) => outs.push(o),
            Ok(Err(e)) => return Err(e),
            Err(_) => anyhow::bail!("a worker thread panicked; this is a bug in iosim"),
        }
    }
    notes.extend(engine_notes.lock().map(|v| v.clone()).unwrap_or_default());
    notes.sort();
    notes.dedup();

    // Merge.
    let duration_ns = outs.iter().map(|o| o.duration_ns).max().unwrap_or(0);
    let secs = duration_ns as f64 / 1e9;
    let mut total = RwStats::default();
    let mut per_target: Vec<RwStats> = (0..targets.len()).map(|_| RwStats::default()).collect();
    let mut errors = ErrorSummary::default();
    let mut threads = Vec::new();
    let (mut user_s, mut sys_s) = (0.0, 0.0);
    for o in &outs {
        total.merge(&o.stats);
        per_target[o.target].merge(&o.stats);
        errors.count += o.errors;
        for r in &o.error_records {
            if errors.first.len() < 100 {
                errors.first.push(r.clone());
            }
        }
        user_s += o.user_s;
        sys_s += o.sys_s;
        threads.push(ThreadResult {
            thread: o.thread,
            target: o.target,
            cpu: o.cpu,
            duration_s: o.duration_ns as f64 / 1e9,
            cpu_user_s: o.user_s,
            cpu_sys_s: o.sys_s,
            result: o.stats.summarize(o.duration_ns as f64 / 1e9),
        });
    }
    if errors.count > 0 {
        notes.push(format!(
            "{} I/O errors (see errors in the JSON output for offsets)",
            errors.count
        ));
    }
    let machine = mon.cpu_whole.clone();
    let max_core = machine
        .iter()
        .filter(|c| c.cpu.is_some())
        .map(|c| c.busy_pct)
        .fold(0.0, f64::max);
    let cpu_res = CpuResult {
        user_s,
        sys_s,
        process_pct_of_one_core: if secs > 0.0 {
            100.0 * (user_s + sys_s) / secs
        } else {
            0.0
        },
        max_core_busy_pct: max_core,
        cpu_bound: max_core >= 95.0,
        machine,
    };
    let environment = crate::sysmon::host::host_info();
    let warnings = self_checks(
        &spec,
        &targets,
        &resolutions,
        &per_target,
        &content,
        &mon,
        max_core,
        &environment,
    );
    let interrupted = opts.stop.load(Ordering::Relaxed);
    let target_results = targets
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
        .collect();
    threads.sort_by_key(|t| t.thread);
    Ok(RunResult {
        schema_version: SCHEMA_VERSION,
        iosim_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        host: environment.host.clone(),
        config: spec,
        engine: engine_kind.name().to_string(),
        notes,
        interrupted,
        duration_s: secs,
        total: total.summarize(secs),
        targets: target_results,
        threads,
        cpu: cpu_res,
        errors,
        series: agg.finish(opts.interval.as_secs_f64()),
        histograms: HistogramSet {
            read: crate::stats::encode_histogram(&total.read.hist),
            write: crate::stats::encode_histogram(&total.write.hist),
        },
        environment,
        devices: resolutions,
        monitor: mon,
        warnings,
    })
}

struct WorkerCtx {
    spec: WorkloadSpec,
    engine: EngineKind,
    region_start: u64,
    region_len: u64,
    stop: Arc<AtomicBool>,
    barrier: Arc<Barrier>,
    tx: mpsc::Sender<IntervalMsg>,
    interval_ns: u64,
    notes: Arc<std::sync::Mutex<Vec<String>>>,
    /// The target's shared sequential offset (`SeqLayout::Shared`).
    shared_offset: Arc<AtomicU64>,
}

fn worker(ctx: WorkerCtx, plan: WorkerPlan) -> anyhow::Result<WorkerOut> {
    let spec = &ctx.spec;
    // Everything that can fail or allocate happens before the barrier.
    let setup = (|| -> anyhow::Result<_> {
        let mut cpu_used = None;
        if let Some(cpus) = &plan.cpu {
            let r = if cpus.len() == 1 {
                cpu::pin_to_cpu(cpus[0])
            } else {
                cpu::pin_to_cpus(cpus)
            };
            r.with_context(|| {
                format!(
                    "cannot pin a worker to CPU(s) {cpus:?}: check --cpus against the CPUs online"
                )
            })?;
            if cpus.len() == 1 {
                cpu_used = Some(cpus[0]);
            }
        }
        let slots = if matches!(ctx.engine, EngineKind::Sync | EngineKind::Mmap) {
            1
        } else {
            spec.qd as usize
        };
        let fds = plan
            .file
            .as_ref()
            .map(|f| vec![f.as_raw_fd()])
            .unwrap_or_default();
        let cfg = EngineConfig {
            fds,
            slots,
            slot_size: spec.bs as usize,
            sqpoll: spec.sqpoll,
            hipri: spec.hipri,
            writable: spec.writes(),
            sync_writes: spec.cache.is_sync(),
        };
        let (mut eng, _) =
            engine::create(ctx.engine, &cfg).context("cannot set up the I/O engine")?;
        if !eng.notes().is_empty() {
            if let Ok(mut n) = ctx.notes.lock() {
                n.extend(eng.notes());
            }
        }
        if spec.writes() && spec.fill != FillMode::Zero {
            for s in 0..slots {
                crate::buf::fill_random(
                    eng.buffer(s),
                    spec.seed ^ ((plan.thread as u64) << 32) ^ s as u64,
                );
            }
        }
        Ok((eng, cpu_used, slots))
    })();
    let (mut eng, cpu_used, slots) = match setup {
        Ok(v) => v,
        Err(e) => {
            // Release the others: they must not wait forever at the barrier.
            ctx.stop.store(true, Ordering::Relaxed);
            ctx.barrier.wait();
            return Err(e);
        }
    };

    let random = spec.rw.is_random();
    let align = spec.effective_align();
    let start = match spec.seq_layout {
        SeqLayout::Split => {
            let share = ctx.region_len / plan.threads_on_target as u64;
            crate::units::align_down(share * plan.local as u64, spec.bs.max(align))
        }
        SeqLayout::Stride(s) => s.wrapping_mul(plan.local as u64),
        SeqLayout::Shared => 0,
    };
    let seed = spec
        .seed
        .wrapping_add((plan.thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut gen = OffsetGen::new(
        ctx.region_start,
        ctx.region_len,
        spec.bs,
        align,
        random,
        start,
        spec.write_pct,
        seed,
    );
    if let Some(p) = spec.random_pct {
        gen = gen.mixed(p);
    }
    gen = gen.shaped(spec, plan.target);
    if spec.seq_layout == SeqLayout::Shared {
        gen = gen.shared(ctx.shared_offset.clone());
    }
    let bs = spec.bs as u32;
    let sync = eng.is_sync();

    let mut comps = vec![Completion::default(); slots];
    let mut submit_ts = vec![0u64; slots];
    let mut slot_off = vec![0u64; slots];
    let mut slot_op = vec![Op::Read; slots];
    let mut free: Vec<u32> = (0..slots as u32).rev().collect();
    let mut pending: Vec<u32> = Vec::with_capacity(slots);
    let mut cur = RwStats::default();
    let mut whole = RwStats::default();
    let mut errors = 0u64;
    let mut error_records = Vec::with_capacity(ERROR_RECORDS_PER_THREAD);
    let mut write_seq = 0u64;
    let scramble = spec.writes() && spec.fill != FillMode::Zero;

    ctx.barrier.wait();
    let t0 = now_ns();
    let mut pacer = Pacer::new(spec, t0);
    let warmup_end = t0 + spec.warmup.as_nanos() as u64;
    let mut measuring = spec.warmup.is_zero();
    let mut measure_start = t0;
    let mut end = if measuring {
        t0 + spec.duration.as_nanos() as u64
    } else {
        u64::MAX
    };
    let mut next_boundary = if measuring {
        t0 + ctx.interval_ns
    } else {
        u64::MAX
    };
    let mut interval_start = t0;
    let mut interval_index = 0usize;
    let (mut ru0_user, mut ru0_sys) = if measuring {
        cpu::rusage(true)
    } else {
        (0.0, 0.0)
    };
    let mut inflight = 0usize;
    let mut stopping = ctx.stop.load(Ordering::Relaxed);
    let mut last_ts = t0;
    let mut measured_ios = 0u64;
    let io_limit = spec.io_limit.unwrap_or(u64::MAX);
    // Engines whose queued I/O is already done gain nothing from committing
    // in groups: their requests are stamped once per batch, as before.
    let submit_batch = if spec.submit_batch == 0 || !eng.commit_submits() {
        usize::MAX
    } else {
        spec.submit_batch as usize
    };

    loop {
        // A slot is free but the rate cap or think time says not yet.
        let mut waiting = false;
        // Queue an I/O for every free slot.
        if !stopping {
            while let Some(slot) = free.pop() {
                if let Some(p) = &mut pacer {
                    let now = now_ns();
                    if now < p.due() {
                        free.push(slot);
                        waiting = true;
                        break;
                    }
                    p.issued(now);
                }
                let (off, write) = gen.next_io();
                let op = if write { Op::Write } else { Op::Read };
                let s = slot as usize;
                if write && scramble {
                    // Defeat deduplication cheaply: a unique word at the start of every 4 KiB.
                    write_seq += 1;
                    let b = eng.buffer(s);
                    let stamp = (write_seq ^ seed).to_le_bytes();
                    for chunk in b[..bs as usize].chunks_mut(4096) {
                        if chunk.len() >= 8 {
                            chunk[..8].copy_from_slice(&stamp);
                        }
                    }
                }
                slot_off[s] = off;
                slot_op[s] = op;
                if sync {
                    submit_ts[s] = last_ts;
                }
                eng.queue(IoReq {
                    slot,
                    file: 0,
                    op,
                    offset: off,
                    len: bs,
                })?;
                inflight += 1;
                if !sync {
                    pending.push(slot);
                    if pending.len() >= submit_batch {
                        // A group is full: stamp it and hand it to the kernel now.
                        stamp_group(&mut pending, &mut submit_ts);
                        eng.commit()?;
                    }
                }
            }
            if !sync && !pending.is_empty() {
                // Submitted by the reap below, right after this stamp.
                stamp_group(&mut pending, &mut submit_ts);
            }
        }
        let n = if inflight == 0 {
            let (true, Some(p)) = (waiting, &pacer) else {
                break;
            };
            // Nothing in flight: sleep until the next I/O is due, the interval
            // ends or the run ends, in steps short enough to notice a stop.
            let now = now_ns();
            let until = p.due().min(next_boundary).min(end);
            let nap = until.saturating_sub(now).min(MAX_NAP_NS);
            if nap > 0 {
                std::thread::sleep(Duration::from_nanos(nap));
            }
            0
        } else if let (true, Some(p)) = (waiting, &pacer) {
            let wait = p.due().saturating_sub(now_ns());
            eng.reap_timeout(1, &mut comps, wait)?
        } else {
            eng.reap(1, &mut comps)?
        };
        let now = now_ns();
        last_ts = now;
        for c in &comps[..n] {
            let s = c.slot as usize;
            inflight -= 1;
            free.push(c.slot);
            if c.result == bs as i32 {
                // Completions past --number-ios (reaped in the same batch) are not counted.
                if measuring && !stopping && measured_ios < io_limit {
                    let lat = now.saturating_sub(submit_ts[s]);
                    match slot_op[s] {
                        Op::Read => cur.read.record(lat, u64::from(bs)),
                        Op::Write => cur.write.record(lat, u64::from(bs)),
                    }
                    measured_ios += 1;
                }
            } else {
                errors += 1;
                if error_records.len() < ERROR_RECORDS_PER_THREAD {
                    error_records.push(IoErrorRecord {
                        target: plan.target,
                        thread: plan.thread,
                        op: if slot_op[s] == Op::Read {
                            "read"
                        } else {
                            "write"
                        }
                        .into(),
                        offset: slot_off[s],
                        len: bs,
                        result: c.result,
                        message: if c.result < 0 {
                            std::io::Error::from_raw_os_error(-c.result).to_string()
                        } else {
                            format!("short transfer: {} of {} bytes", c.result, bs)
                        },
                    });
                }
                if errors >= MAX_ERRORS_PER_THREAD {
                    stopping = true;
                }
            }
        }
        if stopping {
            continue;
        }
        if !measuring && now >= warmup_end {
            // Warmup over: start measuring from here.
            measuring = true;
            measure_start = now;
            interval_start = now;
            end = now + spec.duration.as_nanos() as u64;
            next_boundary = now + ctx.interval_ns;
            cur.reset();
            (ru0_user, ru0_sys) = cpu::rusage(true);
        }
        if now >= next_boundary
            || now >= end
            || measured_ios >= io_limit
            || ctx.stop.load(Ordering::Relaxed)
        {
            if measuring {
                let last =
                    now >= end || measured_ios >= io_limit || ctx.stop.load(Ordering::Relaxed);
                let stamp = if last { now.min(end) } else { next_boundary };
                // Once per interval: hand a copy to the main thread, fold into the whole run.
                let _ = ctx.tx.send(IntervalMsg {
                    target: plan.target,
                    index: interval_index,
                    duration_ns: stamp.saturating_sub(interval_start),
                    stats: cur.clone(),
                });
                whole.merge(&cur);
                cur.reset();
                interval_index += 1;
                interval_start = stamp;
                next_boundary = stamp + ctx.interval_ns;
                if last {
                    stopping = true;
                }
            } else if ctx.stop.load(Ordering::Relaxed) {
                stopping = true;
            }
        }
    }
    let measure_end = last_ts.min(end).max(measure_start);
    let (ru1_user, ru1_sys) = cpu::rusage(true);
    if !measuring {
        (ru0_user, ru0_sys) = (ru1_user, ru1_sys);
    }
    whole.merge(&cur);
    Ok(WorkerOut {
        target: plan.target,
        thread: plan.thread,
        cpu: cpu_used,
        duration_ns: if measuring {
            measure_end - measure_start
        } else {
            0
        },
        user_s: ru1_user - ru0_user,
        sys_s: ru1_sys - ru0_sys,
        stats: whole,
        errors,
        error_records,
    })
}

/// Stamps a group of queued slots with the time just before their submission.
#[inline]
fn stamp_group(pending: &mut Vec<u32>, submit_ts: &mut [u64]) {
    let ts = now_ns();
    for &s in pending.iter() {
        submit_ts[s as usize] = ts;
    }
    pending.clear();
}

/// Longest single sleep of a paced thread with nothing in flight, so a stop
/// (Ctrl-C, another thread's error) is noticed within this time.
const MAX_NAP_NS: u64 = 50_000_000;

/// A paced thread that falls further behind its schedule than this (a slow
/// device, a stall) does not try to make the backlog up in one burst.
const MAX_CATCH_UP_NS: u64 = 100_000_000;

/// Paces one thread's I/O starts: a rate cap (one start per interval) and
/// bursts followed by think time. Pure arithmetic on the caller's clock.
#[derive(Clone, Debug)]
struct Pacer {
    interval_ns: u64,
    burst: u32,
    think_ns: u64,
    next_due: u64,
    in_burst: u32,
}

impl Pacer {
    /// `None` when the workload is not paced.
    fn new(spec: &WorkloadSpec, t0: u64) -> Option<Pacer> {
        if !spec.paced() {
            return None;
        }
        Some(Pacer {
            interval_ns: spec.rate_interval_ns(),
            burst: spec.burst.max(1),
            think_ns: spec.think.as_nanos().min(u128::from(u64::MAX)) as u64,
            next_due: t0,
            in_burst: 0,
        })
    }

    /// When the next I/O may start.
    #[inline]
    fn due(&self) -> u64 {
        self.next_due
    }

    /// An I/O started at `now` (not before `due`).
    #[inline]
    fn issued(&mut self, now: u64) {
        if self.interval_ns > 0 {
            let floor = now.saturating_sub(MAX_CATCH_UP_NS);
            self.next_due = self.next_due.max(floor) + self.interval_ns;
        }
        if self.think_ns > 0 {
            self.in_burst += 1;
            if self.in_burst >= self.burst {
                self.in_burst = 0;
                self.next_due = self.next_due.max(now + self.think_ns);
            }
        }
    }
}

/// One interval being merged: messages received, longest duration, the total and per target.
struct OpenInterval {
    received: usize,
    duration_ns: u64,
    total: RwStats,
    per_target: Vec<RwStats>,
}

/// Merges interval messages across threads into the time series.
///
/// Only intervals still waiting for some thread hold histograms; a closed
/// interval keeps nothing but its summary point, so memory does not grow
/// with the length of the run.
struct IntervalAgg {
    workers: usize,
    ntargets: usize,
    /// Per interval index: `None` once closed (or not yet opened).
    slots: Vec<Option<OpenInterval>>,
    total: Vec<SeriesPoint>,
    targets: Vec<Vec<SeriesPoint>>,
    elapsed_ns: u64,
    done_upto: usize,
}

impl IntervalAgg {
    fn new(ntargets: usize, workers: usize) -> IntervalAgg {
        IntervalAgg {
            workers,
            ntargets,
            slots: Vec::new(),
            total: Vec::new(),
            targets: vec![Vec::new(); ntargets],
            elapsed_ns: 0,
            done_upto: 0,
        }
    }

    /// Adds one worker's interval; returns the total point when an interval is complete.
    fn add(&mut self, m: IntervalMsg) -> Option<SeriesPoint> {
        while self.slots.len() <= m.index {
            self.slots.push(None);
        }
        let ntargets = self.ntargets;
        let s = self.slots[m.index].get_or_insert_with(|| OpenInterval {
            received: 0,
            duration_ns: 0,
            total: RwStats::default(),
            per_target: (0..ntargets).map(|_| RwStats::default()).collect(),
        });
        s.received += 1;
        s.duration_ns = s.duration_ns.max(m.duration_ns);
        s.total.merge(&m.stats);
        s.per_target[m.target].merge(&m.stats);
        let mut last = None;
        while self.done_upto < self.slots.len()
            && self.slots[self.done_upto]
                .as_ref()
                .is_some_and(|s| s.received == self.workers)
        {
            last = self.close(self.done_upto);
            self.done_upto += 1;
        }
        last
    }

    fn close(&mut self, i: usize) -> Option<SeriesPoint> {
        let OpenInterval {
            duration_ns: dur,
            total,
            per_target: per,
            ..
        } = self.slots[i].take()?;
        self.elapsed_ns += dur;
        let secs = dur as f64 / 1e9;
        let t_s = self.elapsed_ns as f64 / 1e9;
        let point = |s: &RwStats| SeriesPoint {
            t_s,
            duration_s: secs,
            read: PointStats::from_dir(&s.read, secs),
            write: PointStats::from_dir(&s.write, secs),
            total: PointStats::from_dir(&s.total(), secs),
        };
        let p = point(&total);
        for (ti, s) in per.iter().enumerate() {
            self.targets[ti].push(point(s));
        }
        self.total.push(p.clone());
        Some(p)
    }

    fn finish(mut self, interval_s: f64) -> Series {
        // Intervals that some threads never reached (they stopped earlier) close with what arrived.
        for i in self.done_upto..self.slots.len() {
            self.close(i);
        }
        Series {
            interval_s,
            total: self.total,
            targets: self.targets,
        }
    }
}

/// The live progress line.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    warmup_s: f64,
}

impl Progress {
    fn new(show: bool, spec: &WorkloadSpec) -> Progress {
        let total_s = (spec.duration + spec.warmup).as_secs_f64();
        let warmup_s = spec.warmup.as_secs_f64();
        if !show {
            return Progress {
                bar: None,
                warmup_s,
            };
        }
        let bar = indicatif::ProgressBar::new((total_s * 10.0) as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{elapsed:>4} [{bar:20}] {msg} (eta {eta})")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_message(format!("{} warming up", spec.describe()));
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar: Some(bar),
            warmup_s,
        }
    }

    fn update(&self, p: &SeriesPoint) {
        if let Some(b) = &self.bar {
            b.set_position(((self.warmup_s + p.t_s) * 10.0) as u64);
            b.set_message(format!(
                "{:>10.0} IOPS {:>9.1} MiB/s p99 {:>9.1} us",
                p.total.iops, p.total.mib_per_sec, p.total.lat_p99_us
            ));
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Checks the results against the device counters, once per device: the
/// counters are per device, so the I/O of every target on it is added up.
#[allow(clippy::too_many_arguments)]
fn self_checks(
    spec: &WorkloadSpec,
    targets: &[PreparedTarget],
    resolutions: &[Resolution],
    per_target: &[RwStats],
    content: &[(bool, bool)],
    mon: &MonitorReport,
    max_core: f64,
    env: &crate::sysmon::host::HostInfo,
) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    let mut done: Vec<String> = Vec::new();
    let busiest = mon.busiest_core().map(|(c, _)| c);
    for (i, t) in targets.iter().enumerate() {
        if t.kind == TargetKind::Null {
            continue;
        }
        let key = match &resolutions[i] {
            Resolution::Device(d) => d.name.clone(),
            Resolution::NoDevice { .. } => format!("nodev:{}", t.path.display()),
        };
        if done.contains(&key) {
            continue;
        }
        done.push(key.clone());
        // Every target on this device together.
        let mut issued = RwStats::default();
        let mut size = 0;
        let (mut sparse, mut zero) = (false, false);
        for (j, u) in targets.iter().enumerate() {
            let same = match (&resolutions[j], &resolutions[i]) {
                (Resolution::Device(a), Resolution::Device(b)) => a.name == b.name,
                _ => i == j,
            };
            if same {
                issued.merge(&per_target[j]);
                size += u.region_len;
                sparse |= content[j].0;
                zero |= content[j].1;
            }
        }
        let (device_name, device, no_device_reason) = match &resolutions[i] {
            Resolution::Device(d) => (Some(d.name.clone()), mon.device(&d.name).cloned(), None),
            Resolution::NoDevice { reason, .. } => (None, None, Some(reason.clone())),
        };
        let input = CheckInput {
            target: t.path.display().to_string(),
            kind: t.kind,
            cache: spec.cache,
            issued_reads: issued.read.ios,
            issued_read_bytes: issued.read.bytes,
            issued_writes: issued.write.ios,
            issued_write_bytes: issued.write.bytes,
            device_name,
            device,
            no_device_reason,
            target_size: size,
            mem_total_bytes: env.mem_total_bytes,
            max_core_busy_pct: max_core,
            busiest_core: busiest,
            file_sparse: sparse,
            zero_filled: zero,
            direct_unavailable: false,
        };
        for w in check::self_check(&input) {
            if !out
                .iter()
                .any(|x| x.code == w.code && x.message == w.message)
            {
                out.push(w);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacer_spaces_starts_and_thinks_after_bursts() {
        let spec = WorkloadSpec {
            rate_iops: Some(1000),
            ..WorkloadSpec::default()
        };
        let mut p = Pacer::new(&spec, 5_000).unwrap();
        assert_eq!(p.due(), 5_000);
        p.issued(5_000);
        assert_eq!(p.due(), 1_005_000);
        // Late by 0.5 ms: the schedule is kept, not shifted.
        p.issued(1_505_000);
        assert_eq!(p.due(), 2_005_000);
        // Late by far more than the catch-up limit: the backlog is dropped.
        p.issued(1_000_000_000);
        assert_eq!(p.due(), 1_000_000_000 - MAX_CATCH_UP_NS + 1_000_000);

        let spec = WorkloadSpec {
            burst: 3,
            think: Duration::from_millis(10),
            ..WorkloadSpec::default()
        };
        let mut p = Pacer::new(&spec, 0).unwrap();
        for t in [0, 1, 2] {
            assert!(p.due() <= t);
            p.issued(t);
        }
        assert_eq!(p.due(), 2 + 10_000_000);
        let t = p.due();
        p.issued(t);
        assert_eq!(p.due(), 2 + 10_000_000);

        let spec = WorkloadSpec {
            rate_bytes: Some(4096 * 100),
            bs: 4096,
            ..WorkloadSpec::default()
        };
        assert_eq!(Pacer::new(&spec, 0).unwrap().interval_ns, 10_000_000);
        assert!(Pacer::new(&WorkloadSpec::default(), 0).is_none());
    }
}
