//! The plan: DiskSpd's options as iosim's workload, and the layout of its report.

use serde::{Deserialize, Serialize};
use std::time::Duration;

use super::parse::{parse, TOOL};
use crate::compat::diskspd_args::{DiskspdArgs, Layout, SwCache, Throughput, WriteData};
use crate::compat::{bad_option, Extensions, Warnings};
use crate::workload::{
    CacheMode, EngineKind, FillMode, RwMode, SeqLayout, TargetSpec, WorkloadSpec,
};

/// What to run and how to report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The options.
    pub args: DiskspdArgs,
    /// The command line as typed (after `iosim diskspd`).
    pub cmdline: String,
    /// The workload.
    pub spec: WorkloadSpec,
    /// `-L`.
    pub latency: bool,
    /// Threads DiskSpd would report.
    pub thread_count: u32,
    /// Text layout.
    pub layout: Layout,
}

/// Builds the plan.
pub fn plan(
    args: &DiskspdArgs,
    ext: &Extensions,
    cmdline: &str,
    w: &mut Warnings,
) -> anyhow::Result<Plan> {
    if args.targets.is_empty() {
        anyhow::bail!(crate::Error::BadWorkload(
            "no target: name a file (e.g. /mnt/data/test.dat with -c1G to create it) or a physical disk #N mapped with --disk N=/dev/sdX".into()
        ));
    }
    let bs = args.block.bytes(0);
    if bs == 0 {
        return Err(bad_option(
            TOOL,
            "-b",
            "the block size must be given in bytes, K, M or G (not in blocks)",
        ));
    }
    let random = args.random.is_some() || args.random_pct.is_some();
    let align = alignment(args, bs)?;
    let (threads, thread_count) = threads(args, w);
    let interlocked = matches!(args.sequential, Some((true, _)));
    if interlocked && args.thread_stride.is_some() {
        w.add(
            "-T",
            "with -si the threads share one offset, so a thread stride has no effect (as in DiskSpd)",
        );
    }
    let cache = cache(args, w);
    let fill = fill(args, bs, w);
    let targets = targets(args, ext, bs)?;
    let write_pct = args.write_pct;
    let spec = WorkloadSpec {
        targets,
        rw: RwMode::from_parts(random, write_pct),
        write_pct,
        bs,
        align,
        threads,
        qd: args.outstanding,
        duration: Duration::from_secs(args.duration),
        warmup: Duration::from_secs(args.warmup),
        seed: seed(args),
        cache,
        engine: if args.mmap {
            EngineKind::Mmap
        } else {
            ext.engine.unwrap_or(EngineKind::Auto)
        },
        fill,
        seq_layout: if interlocked {
            SeqLayout::Shared
        } else {
            SeqLayout::Stride(args.thread_stride.map_or(0, |s| s.bytes(bs)))
        },
        allow_destroy: ext.allow_destroy,
        cpus: cpus(args),
        sqpoll: false,
        flush: None,
        sync_method: None,
        sync_file_range: None,
        group_commit: false,
        flush_barrier: false,
        doublewrite: None,
        submit_batch: 1,
        hipri: false,
        io_limit: None,
        passes: None,
        rate_iops: match args.throughput {
            Some(Throughput::Iops(n)) => Some(n),
            _ => None,
        },
        rate_bytes: match args.throughput {
            Some(Throughput::BytesPerMs(n)) => Some(n.saturating_mul(1000)),
            _ => None,
        },
        // -j alone pauses after every I/O; -i alone does nothing (warned above).
        burst: match args.think_ms {
            Some(ms) if ms > 0 => args.burst.unwrap_or(1),
            _ => 0,
        },
        think: Duration::from_millis(args.think_ms.unwrap_or(0)),
        burst_every: Duration::ZERO,
        burst_rate_iops: None,
        burst_writes: false,
        random_pct: args.random_pct,
        shape: Default::default(),
    };
    spec.validate()?;
    Ok(Plan {
        args: args.clone(),
        cmdline: cmdline.to_string(),
        spec,
        latency: args.latency,
        thread_count,
        layout: layout(ext)?,
    })
}

/// The alignment of random offsets (`-r<align>`); a sequential stride other
/// than the block size is refused.
fn alignment(args: &DiskspdArgs, bs: u64) -> anyhow::Result<Option<u64>> {
    Ok(match (args.random, args.sequential) {
        (Some(Some(al)), _) => Some(al.bytes(bs)),
        (_, Some((_, Some(st)))) => {
            let st = st.bytes(bs);
            if st != bs {
                return Err(bad_option(TOOL, "-s", format!("a sequential stride ({st}) other than the block size ({bs}) is not supported by iosim's engine")));
            }
            None
        }
        _ => None,
    })
}

/// (Threads per target, threads DiskSpd would report), from -t or -F.
fn threads(args: &DiskspdArgs, w: &mut Warnings) -> (u32, u32) {
    let ntargets = args.targets.len() as u32;
    match (args.threads_per_target, args.total_threads) {
        (Some(t), _) => (t, t * ntargets),
        (None, Some(f)) => {
            if ntargets > 1 {
                w.add(&format!("-F{f}"), format!("DiskSpd's {f} threads each work on all {ntargets} targets; iosim runs {f} threads per target instead ({} in all), with the same I/Os outstanding per target", f * ntargets));
            }
            (f, f)
        }
        (None, None) => (1, ntargets),
    }
}

/// The cache mode of -S and -h.
fn cache(args: &DiskspdArgs, w: &mut Warnings) -> CacheMode {
    let cache = match (args.sw_cache, args.writethrough) {
        (SwCache::Cached, false) => CacheMode::Buffered,
        (SwCache::Cached, true) => CacheMode::Writethrough,
        (_, false) => CacheMode::Direct,
        (_, true) => CacheMode::DirectWritethrough,
    };
    if args.sw_cache == SwCache::RemoteOnly {
        w.add("-Sr", "there is no remote cache to keep on Linux: the local page cache is bypassed (O_DIRECT), as -Su");
    }
    cache
}

/// What writes carry (-Z), with a warning where it differs from DiskSpd.
fn fill(args: &DiskspdArgs, bs: u64, w: &mut Warnings) -> FillMode {
    match args.write_data {
        WriteData::Pattern => {
            if args.write_pct > 0 {
                w.add("(default write data)", "DiskSpd writes a repeating byte pattern; iosim writes incompressible random data (add -Z for zeros)");
            }
            FillMode::Random
        }
        WriteData::Zero => FillMode::Zero,
        WriteData::RandomPerIo => {
            w.add("-Zr", "write data is random but not regenerated for each write (the CPU cost DiskSpd warns about is not paid)");
            FillMode::Random
        }
        WriteData::RandomBuffer(s) => {
            w.add(&format!("-Z{}", s.bytes(bs)), "writes carry random data from iosim's own buffers, not a separate buffer of that size");
            FillMode::Random
        }
    }
}

/// The targets: each path resolved, created at -c, from the base offset -B
/// up to the maximum size -f (or the created size).
fn targets(args: &DiskspdArgs, ext: &Extensions, bs: u64) -> anyhow::Result<Vec<TargetSpec>> {
    let base = args.base.map_or(0, |b| b.bytes(bs));
    let create = args.create.map(|c| c.bytes(bs));
    let length = match (args.max_size, create) {
        (Some(m), _) => {
            let m = m.bytes(bs);
            if m <= base {
                return Err(bad_option(
                    TOOL,
                    "-f",
                    format!("the maximum size ({m}) must be beyond the base offset ({base})"),
                ));
            }
            Some(m - base)
        }
        (None, Some(c)) => Some(c.saturating_sub(base)),
        (None, None) => None,
    };
    let mut targets = Vec::new();
    for t in &args.targets {
        targets.push(TargetSpec {
            path: ext.resolve(t)?,
            size: create,
            offset: base,
            length,
            threads: None,
            cpus: Vec::new(),
            distribution: None,
        });
    }
    Ok(targets)
}

/// The CPUs the threads run on: none with -n, -a's, or all this process may use.
fn cpus(args: &DiskspdArgs) -> Vec<usize> {
    if args.no_affinity {
        Vec::new()
    } else if let Some(a) = &args.affinity {
        a.clone()
    } else {
        crate::compat::allowed_cpus()
    }
}

/// The seed of -z: 0 without it, the time with -z alone.
fn seed(args: &DiskspdArgs) -> u64 {
    match args.seed {
        None => 0,
        Some(Some(s)) => s,
        Some(None) => crate::clock::now_ns(),
    }
}

/// The text layout of --layout.
fn layout(ext: &Extensions) -> anyhow::Result<Layout> {
    Ok(match ext.layout.as_deref() {
        None | Some("2.2") => Layout::V2_2,
        Some("2.0") | Some("2.0.21a") => Layout::V2_0,
        Some(other) => {
            return Err(anyhow::Error::new(crate::Error::BadWorkload(format!(
                "--layout {other}: use 2.2 (DiskSpd 2.2, the default) or 2.0 (DiskSpd 2.0.21a)"
            ))))
        }
    })
}

/// Parses and plans (no I/O): used by `translate` too.
pub fn plan_from_args(args: &[String], w: &mut Warnings) -> anyhow::Result<(Plan, Extensions)> {
    let mut ext = Extensions::from_env()?;
    let rest = ext.split_args(args)?;
    let a = match rest.iter().find_map(|a| a.strip_prefix("-X")) {
        Some(file) => {
            if rest.len() > 1 {
                return Err(bad_option(
                    TOOL,
                    &format!("-X{file}"),
                    "an XML profile holds the whole workload: give -X alone, as in DiskSpd",
                ));
            }
            let path = ext.resolve(file)?;
            let xml = std::fs::read_to_string(&path).map_err(|e| {
                anyhow::Error::new(e).context(format!(
                    "cannot read the XML profile '{file}' ({})",
                    path.display()
                ))
            })?;
            crate::compat::xmlprofile::parse_profile(&xml, file, w)?
        }
        None => parse(&rest, w)?,
    };
    let cmdline = format!("diskspd {}", rest.join(" "));
    let p = plan(&a, &ext, &cmdline, w)?;
    Ok((p, ext))
}
