//! `iosim diskspd`: DiskSpd's command line and its text (`-Rtext`) and XML
//! (`-Rxml`) reports on iosim's engine. See docs/diskspd.md for every option.

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::diskspd_args::{DiskspdArgs, Format, Layout, Size, SwCache, Throughput, WriteData};
use super::sysinfo::SystemInfo;
use super::{bad_option, Extensions, Warnings};
use crate::runner::RunResult;
use crate::stats::{DirResult, Percentile, RwResult};
use crate::workload::{
    CacheMode, EngineKind, FillMode, RwMode, SeqLayout, TargetSpec, WorkloadSpec,
};

const TOOL: &str = "diskspd";

/// Parses `64K`, `1M`, `200G`, `8b`, `4096`.
pub fn parse_size(opt: &str, v: &str) -> anyhow::Result<Size> {
    let bad = || {
        bad_option(
            TOOL,
            opt,
            format!("'{v}' is not a size: use a number with K, M, G, T or b (blocks), e.g. 64K"),
        )
    };
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (n, suf) = v.split_at(split);
    let n: u64 = n.parse().map_err(|_| bad())?;
    let shift = match suf {
        "" => 0,
        "K" | "k" => 10,
        "M" | "m" => 20,
        "G" | "g" => 30,
        "T" | "t" => 40,
        "b" => return Ok(Size::Blocks(n)),
        _ => return Err(bad()),
    };
    n.checked_mul(1u64 << shift)
        .map(Size::Bytes)
        .ok_or_else(bad)
}

fn num<T: std::str::FromStr>(opt: &str, v: &str, what: &str) -> anyhow::Result<T> {
    v.parse().map_err(|_| {
        bad_option(
            TOOL,
            opt,
            format!("'{v}' is not {what}; DiskSpd takes the value glued to the flag, e.g. -t4"),
        )
    })
}

/// Parses DiskSpd's options (case-sensitive, values glued to the flag).
pub fn parse(args: &[String], w: &mut Warnings) -> anyhow::Result<DiskspdArgs> {
    let mut a = DiskspdArgs::default();
    for arg in args {
        if !arg.starts_with('-') || arg.len() == 1 {
            a.targets.push(arg.clone());
            continue;
        }
        let body = &arg[1..];
        let flag = body.chars().next().unwrap_or('-');
        let v = &body[flag.len_utf8()..];
        match flag {
            'b' => a.block = parse_size(arg, v)?,
            'c' => a.create = Some(parse_size(arg, v)?),
            'd' => a.duration = num(arg, v, "a number of seconds")?,
            'W' => a.warmup = num(arg, v, "a number of seconds")?,
            'C' => a.cooldown = num(arg, v, "a number of seconds")?,
            'h' if v.is_empty() => {
                a.sw_cache = SwCache::Disabled;
                a.writethrough = true;
            }
            'S' => {
                if v.is_empty() {
                    a.sw_cache = SwCache::Disabled;
                }
                for c in v.chars() {
                    match c {
                        'b' => a.sw_cache = SwCache::Cached,
                        'u' => a.sw_cache = SwCache::Disabled,
                        'r' => a.sw_cache = SwCache::RemoteOnly,
                        'w' => a.writethrough = true,
                        'h' => {
                            a.sw_cache = SwCache::Disabled;
                            a.writethrough = true;
                        }
                        'm' => {
                            // Memory-mapped I/O goes through the page cache, as in DiskSpd.
                            a.mmap = true;
                            a.sw_cache = SwCache::Cached;
                        }
                        _ => return Err(bad_option(TOOL, arg, format!("unknown cache mode '{c}': use -S, -Sb, -Sh, -Sr, -Su, -Sw or combinations such as -Suw"))),
                    }
                }
            }
            'L' if v.is_empty() => a.latency = true,
            'o' => {
                a.outstanding = num(arg, v, "a number of outstanding I/Os")?;
                if a.outstanding == 0 || a.outstanding > crate::workload::MAX_QD {
                    return Err(bad_option(TOOL, arg, format!("outstanding I/Os must be 1..{}", crate::workload::MAX_QD)));
                }
            }
            't' => {
                let t: u32 = num(arg, v, "a number of threads")?;
                if t == 0 {
                    return Err(bad_option(TOOL, arg, "at least 1 thread"));
                }
                a.threads_per_target = Some(t);
            }
            'F' => {
                let t: u32 = num(arg, v, "a number of threads")?;
                if t == 0 {
                    return Err(bad_option(TOOL, arg, "at least 1 thread"));
                }
                a.total_threads = Some(t);
            }
            'T' => a.thread_stride = Some(parse_size(arg, v)?),
            'r' => {
                if let Some(p) = v.strip_prefix('s') {
                    let pct: u8 = num(arg, p, "a percentage")?;
                    match pct {
                        100 => a.random = Some(a.random.flatten()),
                        0 => a.sequential = Some((false, None)),
                        1..=99 => a.random_pct = Some(pct),
                        _ => return Err(bad_option(TOOL, arg, "the random percentage must be 0..100")),
                    }
                } else {
                    // -r<align> also sets the alignment of an -rs mix, in either order.
                    a.random = Some(if v.is_empty() { None } else { Some(parse_size(arg, v)?) });
                }
            }
            's' => {
                let (il, rest) = match v.strip_prefix('i') {
                    Some(r) => (true, r),
                    None => (false, v),
                };
                let stride = if rest.is_empty() { None } else { Some(parse_size(arg, rest)?) };
                a.sequential = Some((il, stride));
            }
            'w' => {
                a.write_pct = num(arg, v, "a percentage")?;
                if a.write_pct > 100 {
                    return Err(bad_option(TOOL, arg, "the write percentage must be 0..100"));
                }
            }
            'Z' => {
                a.write_data = match v {
                    "" => WriteData::Zero,
                    "r" => WriteData::RandomPerIo,
                    s if s.contains(',') => return Err(bad_option(TOOL, arg, "write data from a file (-Z<size>,<file>) is not supported; use -Zr or -Z<size>")),
                    s => WriteData::RandomBuffer(parse_size(arg, s)?),
                }
            }
            'z' => a.seed = Some(if v.is_empty() { None } else { Some(num(arg, v, "a seed")?) }),
            'a' => {
                if v == "g" || v.starts_with("g,") || v.starts_with('g') && v.len() == 1 {
                    w.add(arg, "Linux has no processor groups: threads are placed round-robin on the CPUs this process may use, as without -ag");
                } else {
                    let mut cpus = Vec::new();
                    for part in v.split(',') {
                        // DiskSpd 2.1 allows g:c for group:core.
                        let core = match part.split_once(':') {
                            Some(("0", c)) => c,
                            Some((g, _)) => return Err(bad_option(TOOL, arg, format!("processor group {g}: Linux has only one group (0)"))),
                            None => part,
                        };
                        cpus.push(num(arg, core, "a CPU list such as -a0,1,2")?);
                    }
                    a.affinity = Some(cpus);
                }
            }
            'n' if v.is_empty() => a.no_affinity = true,
            'B' => a.base = Some(parse_size(arg, v)?),
            'f' => {
                if !v.is_empty() && v.chars().all(|c| "rst".contains(c)) {
                    w.add(arg, "file access hints (FILE_FLAG_RANDOM_ACCESS / SEQUENTIAL_SCAN / TEMPORARY) are ignored: iosim gives the kernel no such hint");
                } else {
                    a.max_size = Some(parse_size(arg, v)?);
                }
            }
            'x' if v.is_empty() => w.add(arg, "completion routines are a Windows completion mechanism; iosim completes I/O through io_uring (or pread/pwrite)"),
            'D' => {
                a.iops_interval_ms = Some(if v.is_empty() { 1000 } else { num(arg, v, "milliseconds")? });
            }
            'R' => {
                let (p, f) = match v.strip_prefix('p') {
                    Some(f) => (true, f),
                    None => (false, v),
                };
                a.profile_only = p;
                a.format = match f {
                    "" | "text" => Format::Text,
                    "xml" => Format::Xml,
                    _ => return Err(bad_option(TOOL, arg, "use -Rtext or -Rxml")),
                };
            }
            'v' if v.is_empty() => a.verbose = true,
            'P' => w.add(arg, "progress dots are not printed (stderr shows a progress bar on a terminal instead)"),
            'l' if v.is_empty() => w.add(arg, "large pages are not used: iosim's buffers are page-aligned ordinary pages"),
            'I' => {
                a.priority = match v {
                    "1" => 1,
                    "2" => 2,
                    "3" => 3,
                    _ => return Err(bad_option(TOOL, arg, "use -I1 (very low), -I2 (low) or -I3 (normal)")),
                };
            }
            'e' => w.add(arg, "ETW tracing does not exist on Linux (use blktrace or perf)"),
            'g' => {
                let (n, iops) = match v.strip_suffix('i') {
                    Some(n) => (n, true),
                    None => (v, false),
                };
                let n: u64 = num(arg, n, "a throughput (bytes per ms, or I/Os per second with a trailing i)")?;
                if n == 0 {
                    return Err(bad_option(TOOL, arg, "a throughput limit must be more than 0"));
                }
                a.throughput = Some(if iops { Throughput::Iops(n) } else { Throughput::BytesPerMs(n) });
            }
            'i' => {
                let n: u32 = num(arg, v, "a number of I/Os per burst")?;
                if n == 0 {
                    return Err(bad_option(TOOL, arg, "a burst has at least 1 I/O"));
                }
                a.burst = Some(n);
            }
            'j' => a.think_ms = Some(num(arg, v, "a think time in milliseconds")?),
            'p' if v.is_empty() => return Err(bad_option(TOOL, arg, "parallel async I/O (several I/Os at the same offset) is not supported by iosim's engine")),
            'X' => return Err(bad_option(TOOL, arg, "an XML profile holds the whole workload: give -X alone, as in DiskSpd")),
            'O' => return Err(bad_option(TOOL, arg, "per-thread request counts (-O) are not supported; use -o")),
            _ => return Err(bad_option(TOOL, arg, "unknown or unsupported DiskSpd option (see docs/diskspd.md)")),
        }
    }
    if a.no_affinity && a.affinity.is_some() {
        // DiskSpd: "ERROR: -n and -a parameters cannot be used together".
        return Err(bad_option(
            TOOL,
            "-n/-a",
            "-n and -a parameters cannot be used together (as in DiskSpd)",
        ));
    }
    if a.random_pct.is_some() && a.sequential.is_some() {
        return Err(bad_option(
            TOOL,
            "-rs/-s",
            "-rs mixes random and sequential I/O by itself: leave out -s",
        ));
    }
    if a.random.is_some() && a.sequential.is_some() {
        return Err(bad_option(
            TOOL,
            "-r/-s",
            "give either -r (random) or -s (sequential), not both",
        ));
    }
    if a.threads_per_target.is_some() && a.total_threads.is_some() {
        return Err(bad_option(
            TOOL,
            "-t/-F",
            "give either -t (threads per target) or -F (total threads), not both",
        ));
    }
    match (a.burst, a.think_ms) {
        (Some(b), None) | (Some(b), Some(0)) => w.add(
            &format!("-i{b}"),
            "a burst size without think time (-j) changes nothing, as in DiskSpd",
        ),
        _ => {}
    }
    if a.cooldown > 0 {
        w.add(&format!("-C{}", a.cooldown), "cool-down time is not run: it is not measured in DiskSpd either, so the numbers are unaffected");
    }
    Ok(a)
}

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
    let align = match (args.random, args.sequential) {
        (Some(Some(al)), _) => Some(al.bytes(bs)),
        (_, Some((_, Some(st)))) => {
            let st = st.bytes(bs);
            if st != bs {
                return Err(bad_option(TOOL, "-s", format!("a sequential stride ({st}) other than the block size ({bs}) is not supported by iosim's engine")));
            }
            None
        }
        _ => None,
    };
    let ntargets = args.targets.len() as u32;
    let (threads, thread_count) = match (args.threads_per_target, args.total_threads) {
        (Some(t), _) => (t, t * ntargets),
        (None, Some(f)) => {
            if ntargets > 1 {
                w.add(&format!("-F{f}"), format!("DiskSpd's {f} threads each work on all {ntargets} targets; iosim runs {f} threads per target instead ({} in all), with the same I/Os outstanding per target", f * ntargets));
            }
            (f, f)
        }
        (None, None) => (1, ntargets),
    };
    let interlocked = matches!(args.sequential, Some((true, _)));
    if interlocked && args.thread_stride.is_some() {
        w.add(
            "-T",
            "with -si the threads share one offset, so a thread stride has no effect (as in DiskSpd)",
        );
    }
    let cache = match (args.sw_cache, args.writethrough) {
        (SwCache::Cached, false) => CacheMode::Buffered,
        (SwCache::Cached, true) => CacheMode::Writethrough,
        (_, false) => CacheMode::Direct,
        (_, true) => CacheMode::DirectWritethrough,
    };
    if args.sw_cache == SwCache::RemoteOnly {
        w.add("-Sr", "there is no remote cache to keep on Linux: the local page cache is bypassed (O_DIRECT), as -Su");
    }
    let fill = match args.write_data {
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
    };
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
    let cpus = if args.no_affinity {
        Vec::new()
    } else if let Some(a) = &args.affinity {
        a.clone()
    } else {
        super::allowed_cpus()
    };
    let seed = match args.seed {
        None => 0,
        Some(Some(s)) => s,
        Some(None) => crate::clock::now_ns(),
    };
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
        seed,
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
        cpus,
        sqpoll: false,
        submit_batch: 1,
        hipri: false,
        io_limit: None,
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
        layout: match ext.layout.as_deref() {
            None | Some("2.2") => Layout::V2_2,
            Some("2.0") | Some("2.0.21a") => Layout::V2_0,
            Some(other) => {
                return Err(anyhow::Error::new(crate::Error::BadWorkload(format!(
                    "--layout {other}: use 2.2 (DiskSpd 2.2, the default) or 2.0 (DiskSpd 2.0.21a)"
                ))))
            }
        },
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
            super::xmlprofile::parse_profile(&xml, file, w)?
        }
        None => parse(&rest, w)?,
    };
    let cmdline = format!("diskspd {}", rest.join(" "));
    let p = plan(&a, &ext, &cmdline, w)?;
    Ok((p, ext))
}

fn cache_lines(p: &Plan) -> [&'static str; 2] {
    let sw = match p.args.sw_cache {
        SwCache::Cached => "using software cache",
        SwCache::Disabled => "software cache disabled",
        SwCache::RemoteOnly => "local software cache disabled, remote cache enabled",
    };
    let hw = match (p.args.writethrough, p.args.sw_cache) {
        (false, _) => "using hardware write cache, writethrough off",
        (true, SwCache::Disabled) => "hardware write cache disabled, writethrough on",
        (true, _) => "hardware and software write caches disabled, writethrough on",
    };
    [sw, hw]
}

/// The `Command Line:` and `Input parameters:` sections.
pub fn profile_text(p: &Plan) -> String {
    let s_ = &p.spec;
    let mut s = String::new();
    let _ = writeln!(s, "\nCommand Line: {}\n", p.cmdline);
    s.push_str("Input parameters:\n\n");
    if p.args.verbose {
        s.push_str("\tusing verbose mode\n");
    }
    s.push_str("\ttimespan:   1\n\t-------------\n");
    let _ = writeln!(s, "\tduration: {}s", p.args.duration);
    let _ = writeln!(s, "\twarm up time: {}s", p.args.warmup);
    let _ = writeln!(s, "\tcool down time: {}s", p.args.cooldown);
    if p.args.no_affinity {
        s.push_str("\taffinity disabled\n");
    }
    if p.latency {
        s.push_str("\tmeasuring latency\n");
    }
    if let Some(ms) = p.args.iops_interval_ms {
        let _ = writeln!(s, "\tgathering IOPS at intervals of {ms}ms");
    }
    let _ = writeln!(s, "\trandom seed: {}", s_.seed);
    if let Some(n) = p.args.total_threads {
        // -F: DiskSpd's thread pool (no -O: 0 requests per thread at timespan level).
        let _ = writeln!(s, "\tthread pool with {n} threads");
        s.push_str("\tnumber of outstanding I/O operations per thread: 0\n");
    }
    if let Some(a) = &p.args.affinity {
        let list: Vec<String> = a.iter().map(|c| format!("0/{c}")).collect();
        let _ = writeln!(
            s,
            "\tadvanced affinity round robin (group/core): {}",
            list.join(", ")
        );
    }
    if p.args.write_data == WriteData::RandomPerIo {
        s.push_str("\tgenerating random data for each write IO\n");
        s.push_str("\t  WARNING: this increases the CPU cost of issuing writes and should only\n");
        s.push_str("\t           be compared to other results using the -Zr flag\n");
    }
    for t in &s_.targets {
        let _ = writeln!(s, "\tpath: '{}'", t.path.display());
        let _ = writeln!(s, "\t\tthink time: {}ms", p.args.think_ms.unwrap_or(0));
        let _ = writeln!(s, "\t\tburst size: {}", p.args.burst.unwrap_or(0));
        for l in cache_lines(p) {
            let _ = writeln!(s, "\t\t{l}");
        }
        if p.args.mmap {
            s.push_str("\t\tmemory mapped I/O enabled\n");
        }
        match p.args.write_data {
            WriteData::Zero => s.push_str("\t\tzeroing write buffers\n"),
            WriteData::RandomBuffer(size) => {
                let _ = writeln!(
                    s,
                    "\t\twrite buffer size: {}",
                    display_size(size.bytes(s_.bs))
                );
                s.push_str("\t\twrite buffer source: random fill\n");
            }
            WriteData::Pattern | WriteData::RandomPerIo => {}
        }
        match s_.write_pct {
            0 => s.push_str("\t\tperforming read test\n"),
            100 => s.push_str("\t\tperforming write test\n"),
            w => {
                let _ = writeln!(
                    s,
                    "\t\tperforming mix test (read/write ratio: {}/{w})",
                    100 - w
                );
            }
        }
        // DiskSpd 2.2 prints sizes with binary units (ResultParser's _DisplayFileSize),
        // 2.0.21a in bytes.
        let v22 = p.layout == Layout::V2_2;
        let size = |b: u64| {
            if v22 {
                display_size(b)
            } else {
                b.to_string()
            }
        };
        let _ = writeln!(s, "\t\tblock size: {}", size(s_.bs));
        if let Some(pct) = s_.random_pct {
            let _ = writeln!(
                s,
                "\t\tusing mixed random/sequential I/O ({pct}% random) (alignment/stride: {})",
                size(s_.effective_align())
            );
        } else if s_.rw.is_random() {
            let _ = writeln!(
                s,
                "\t\tusing random I/O (alignment: {})",
                size(s_.effective_align())
            );
        } else if matches!(p.args.sequential, Some((true, _))) {
            let _ = writeln!(
                s,
                "\t\tusing interlocked sequential I/O (stride: {})",
                size(s_.bs)
            );
        } else {
            let _ = writeln!(s, "\t\tusing sequential I/O (stride: {})", size(s_.bs));
        }
        if v22 {
            let _ = writeln!(
                s,
                "\t\tnumber of outstanding I/O operations per thread: {}",
                s_.qd
            );
        } else {
            let _ = writeln!(s, "\t\tnumber of outstanding I/O operations: {}", s_.qd);
        }
        if t.offset != 0 {
            let _ = writeln!(s, "\t\tbase file offset: {}", size(t.offset));
        }
        if let Some(m) = p.args.max_size {
            let _ = writeln!(s, "\t\tmax file size: {}", size(m.bytes(s_.bs)));
        }
        let stride = match s_.seq_layout {
            SeqLayout::Stride(b) => b,
            SeqLayout::Split | SeqLayout::Shared | SeqLayout::Stripe(_) => 0,
        };
        // 2.2 leaves the line out when the stride is 0.
        if !v22 || stride != 0 {
            let _ = writeln!(s, "\t\tthread stride size: {}", size(stride));
        }
        if p.args.total_threads.is_none() {
            let _ = writeln!(s, "\t\tthreads per file: {}", s_.threads);
        }
        if s_.qd > 1 && p.args.total_threads.is_none() {
            // DiskSpd's words; iosim's engine (io_uring) is named in the system section.
            s.push_str("\t\tusing I/O Completion Ports\n");
        }
        let _ = writeln!(
            s,
            "\t\tIO priority: {}",
            match p.args.priority {
                1 => "very low",
                2 => "low",
                _ => "normal",
            }
        );
        match p.args.throughput {
            Some(Throughput::Iops(n)) => {
                let _ = writeln!(s, "\t\tthroughput rate-limited to {n} IOPS");
            }
            Some(Throughput::BytesPerMs(n)) => {
                let _ = writeln!(s, "\t\tthroughput rate-limited to {n} B/ms");
            }
            None => {}
        }
    }
    s.push('\n');
    s
}

/// DiskSpd 2.2's size display (ResultParser.cpp `_DisplayFileSize`): the largest
/// of TiB, GiB, MiB, KiB the size reaches, whole when it divides evenly, else
/// with two decimals; plain bytes below 1 KiB.
pub fn display_size(b: u64) -> String {
    for (shift, name) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        let unit = 1u64 << shift;
        if b >= unit {
            return if b & (unit - 1) == 0 {
                format!("{}{name}", b >> shift)
            } else {
                format!("{:.2}{name}", b as f64 / unit as f64)
            };
        }
    }
    b.to_string()
}

/// DiskSpd's `start time` / `<RunTime>`: `yyyy/MM/dd HH:mm:ss UTC`, from iosim's RFC 3339 stamp.
pub fn diskspd_time(rfc3339: &str) -> String {
    let b = rfc3339.as_bytes();
    if b.len() >= 19 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' {
        format!(
            "{}/{}/{} {} UTC",
            &rfc3339[0..4],
            &rfc3339[5..7],
            &rfc3339[8..10],
            &rfc3339[11..19]
        )
    } else {
        rfc3339.to_string()
    }
}

fn file_size(b: u64) -> String {
    if b > 10 << 30 {
        format!("{}GiB", b >> 30)
    } else if b > 10 << 20 {
        format!("{}MiB", b >> 20)
    } else if b > 10 << 10 {
        format!("{}KiB", b >> 10)
    } else {
        format!("{b}B")
    }
}

fn iops_stddev(
    points: &[crate::runner::SeriesPoint],
    pick: fn(&crate::runner::SeriesPoint) -> f64,
) -> f64 {
    let xs: Vec<f64> = points
        .iter()
        .filter(|p| p.duration_s > 0.0)
        .map(pick)
        .collect();
    if xs.len() < 2 {
        return 0.0;
    }
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// One thread's interval buckets: its own series (kept when `-D` asks for
/// it), or its target's when it is that target's only thread (a stored result
/// from before per-thread series).
fn thread_series<'a>(
    r: &'a RunResult,
    t: &crate::runner::ThreadResult,
) -> Option<&'a [crate::runner::SeriesPoint]> {
    if let Some(own) = r.series.threads.get(t.thread) {
        return Some(own);
    }
    let alone = r.threads.iter().filter(|o| o.target == t.target).count() == 1;
    r.series
        .targets
        .get(t.target)
        .filter(|_| alone)
        .map(Vec::as_slice)
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Total,
    Read,
    Write,
}

fn series_pick(sec: Section) -> fn(&crate::runner::SeriesPoint) -> f64 {
    match sec {
        Section::Total => |p| p.total.iops,
        Section::Read => |p| p.read.iops,
        Section::Write => |p| p.write.iops,
    }
}

fn pick(r: &RwResult, s: Section) -> &DirResult {
    match s {
        Section::Total => &r.total,
        Section::Read => &r.read,
        Section::Write => &r.write,
    }
}

fn section(s: &mut String, p: &Plan, r: &RunResult, sec: Section) {
    let lat = p.latency;
    let sd = p.args.iops_interval_ms.is_some();
    let _ = writeln!(
        s,
        "thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s {}{}{}|  file",
        if lat { "|  AvgLat  " } else { "" },
        if sd { "| IopsStdDev " } else { "" },
        if lat { "| LatStdDev " } else { "" }
    );
    let border = format!(
        "{}{}{}{}{}",
        "-".repeat(66),
        if lat { "-".repeat(11) } else { String::new() },
        if sd { "-".repeat(13) } else { String::new() },
        if lat { "-".repeat(12) } else { String::new() },
        "-".repeat(12)
    );
    let _ = writeln!(s, "{border}");
    let secs = r.duration_s;
    let row_tail = |s: &mut String, d: &DirResult, stddev: Option<f64>| {
        if lat {
            let _ = write!(s, " | {:8.3}", d.latency_us.mean / 1000.0);
        }
        if sd {
            match stddev {
                Some(v) => {
                    let _ = write!(s, " | {v:10.2}");
                }
                None => s.push_str(" |        N/A"),
            }
        }
        if lat {
            if d.ios > 0 {
                let _ = write!(s, " |  {:8.3}", d.latency_us.stddev / 1000.0);
            } else {
                s.push_str(" |       N/A");
            }
        }
    };
    for t in &r.threads {
        let d = pick(&t.result, sec);
        let _ = write!(
            s,
            "{:6} | {:15} | {:12} | {:10.2} | {:10.2}",
            t.thread,
            d.bytes,
            d.ios,
            d.bytes as f64 / 1_048_576.0 / secs,
            d.ios as f64 / secs
        );
        let sd = thread_series(r, t).map(|pts| iops_stddev(pts, series_pick(sec)));
        row_tail(s, d, sd);
        let (path, size) = r
            .targets
            .get(t.target)
            .map(|x| (x.path.clone(), x.size))
            .unwrap_or_default();
        let size = if p.layout == Layout::V2_2 {
            display_size(size)
        } else {
            file_size(size)
        };
        let _ = writeln!(s, " | {path} ({size})");
    }
    let _ = writeln!(s, "{border}");
    let d = pick(&r.total, sec);
    let _ = write!(
        s,
        "total:   {:15} | {:12} | {:10.2} | {:10.2}",
        d.bytes,
        d.ios,
        d.bytes as f64 / 1_048_576.0 / secs,
        d.ios as f64 / secs
    );
    row_tail(s, d, Some(iops_stddev(&r.series.total, series_pick(sec))));
    s.push('\n');
}

/// DiskSpd's percentile names and iosim's labels.
pub const PERCENTILE_ROWS: [(&str, Percentile); 13] = [
    ("25th", Percentile::P25),
    ("50th", Percentile::P50),
    ("75th", Percentile::P75),
    ("90th", Percentile::P90),
    ("95th", Percentile::P95),
    ("99th", Percentile::P99),
    ("3-nines", Percentile::P99_9),
    ("4-nines", Percentile::P99_99),
    ("5-nines", Percentile::P99_999),
    ("6-nines", Percentile::P99_9999),
    ("7-nines", Percentile::P99_99999),
    ("8-nines", Percentile::P99_999999),
    ("9-nines", Percentile::P99_9999999),
];

fn latency_chart(s: &mut String, r: &RwResult) {
    s.push_str("  %-ile |  Read (ms) | Write (ms) | Total (ms)\n");
    s.push_str("----------------------------------------------\n");
    let cell = |d: &DirResult, us: f64| {
        if d.ios > 0 {
            format!("{:.3}", us / 1000.0)
        } else {
            "N/A".to_string()
        }
    };
    let row = |s: &mut String, name: &str, f: &dyn Fn(&DirResult) -> f64| {
        let _ = writeln!(
            s,
            "{name:>7} | {:>10} | {:>10} | {:>10.3}",
            cell(&r.read, f(&r.read)),
            cell(&r.write, f(&r.write)),
            f(&r.total) / 1000.0
        );
    };
    row(s, "min", &|d| d.latency_us.min);
    for (name, label) in PERCENTILE_ROWS {
        row(s, name, &|d| d.latency_us.p(label));
    }
    row(s, "max", &|d| d.latency_us.max);
}

/// DiskSpd's text report (`-Rtext`) in the plan's layout. `sys` is the machine
/// (topology and power scheme) for 2.2's system section and CPU table.
pub fn text(p: &Plan, r: &RunResult, sys: &SystemInfo) -> String {
    let mut s = profile_text(p);
    let cores: Vec<_> = r.cpu.machine.iter().filter(|c| c.cpu.is_some()).collect();
    let v22 = p.layout == Layout::V2_2;
    s.push_str("System information:\n\n");
    let _ = writeln!(s, "\tcomputer name: {}", r.host);
    let _ = writeln!(s, "\tstart time: {}", diskspd_time(&r.started_at));
    if v22 {
        // Common.h SystemInformation::GetText.
        let _ = writeln!(s, "\n\tcpu count:\t\t{}", sys.cpus.len());
        let _ = writeln!(s, "\tcore count:\t\t{}", sys.core_count());
        s.push_str("\tgroup count:\t\t1\n");
        let _ = writeln!(s, "\tnode count:\t\t{}", sys.node_count());
        let _ = writeln!(s, "\tsocket count:\t\t{}", sys.socket_count());
        s.push_str("\theterogeneous cores:\tn\n");
        let _ = writeln!(s, "\n\tactive power scheme:\t{}", sys.power_scheme);
    } else {
        let _ = writeln!(s, "\tengine: iosim {} ({})", r.iosim_version, r.engine);
    }
    s.push_str("\nResults for timespan 1:\n");
    s.push_str(
        "*******************************************************************************\n\n",
    );
    let _ = writeln!(s, "actual test time:\t{:.2}s", r.duration_s);
    let _ = writeln!(s, "thread count:\t\t{}", p.thread_count);
    if v22 {
        cpu_table_22(&mut s, &cores, sys);
    } else {
        let _ = writeln!(s, "proc count:\t\t{}", cores.len());
        cpu_table_20(&mut s, &cores);
    }
    for (title, sec) in [
        ("Total IO", Section::Total),
        ("Read IO", Section::Read),
        ("Write IO", Section::Write),
    ] {
        let _ = writeln!(s, "\n{title}");
        section(&mut s, p, r, sec);
    }
    if p.latency {
        if v22 {
            // ResultParser.cpp _PrintLatencyPercentiles: one chart per target when
            // there are several, then the total.
            if r.targets.len() > 1 {
                for t in &r.targets {
                    let _ = writeln!(s, "\nLatency distribution: {}", t.path);
                    latency_chart(&mut s, &t.result);
                }
            }
            s.push_str("\nTotal latency distribution:\n");
        } else {
            s.push_str("\n\n");
            if r.targets.len() > 1 {
                for t in &r.targets {
                    let _ = writeln!(s, "\n{}", t.path);
                    latency_chart(&mut s, &t.result);
                }
            }
            s.push_str("\ntotal:\n");
        }
        latency_chart(&mut s, &r.total);
    }
    s
}

/// (usage, user, kernel, idle) of one core, as DiskSpd computes them (kernel excludes idle).
fn cpu_split(c: &crate::sysmon::cpu::CoreUtil) -> [f64; 4] {
    let kernel = (c.busy_pct - c.user_pct).max(0.0);
    let idle = (100.0 - c.busy_pct).max(0.0);
    [c.busy_pct, c.user_pct, kernel, idle]
}

fn cpu_averages(cores: &[&crate::sysmon::cpu::CoreUtil]) -> [f64; 4] {
    let mut sum = [0.0; 4];
    for c in cores {
        for (a, v) in sum.iter_mut().zip(cpu_split(c)) {
            *a += v;
        }
    }
    let n = cores.len().max(1) as f64;
    sum.map(|v| v / n)
}

/// DiskSpd 2.0.21a's CPU table.
fn cpu_table_20(s: &mut String, cores: &[&crate::sysmon::cpu::CoreUtil]) {
    s.push_str("\nCPU |  Usage |  User  |  Kernel |  Idle\n");
    s.push_str("-------------------------------------------\n");
    for c in cores {
        let [u, us, k, i] = cpu_split(c);
        let _ = writeln!(
            s,
            "{:4}| {u:6.2}%| {us:6.2}%|  {k:6.2}%| {i:6.2}%",
            c.cpu.unwrap_or(0)
        );
    }
    s.push_str("-------------------------------------------\n");
    let [u, us, k, i] = cpu_averages(cores);
    let _ = writeln!(s, "avg.| {u:6.2}%| {us:6.2}%|  {k:6.2}%| {i:6.2}%");
}

/// DiskSpd 2.2's CPU table (ResultParser.cpp _PrintCpuUtilization): Socket, Node
/// and Core columns appear when the machine has several sockets, nodes, or more
/// logical processors than cores.
fn cpu_table_22(s: &mut String, cores: &[&crate::sysmon::cpu::CoreUtil], sys: &SystemInfo) {
    let (sock, node, smt) = (sys.socket_count() > 1, sys.node_count() > 1, sys.smt());
    let cols = |s: &mut String, a: &str, b: &str, c: &str| {
        if sock {
            s.push_str(a);
        }
        if node {
            s.push_str(b);
        }
        if smt {
            s.push_str(c);
        }
    };
    s.push('\n');
    cols(s, "Socket | ", "Node | ", "Core | ");
    s.push_str("CPU |  Usage |  User  | Kernel |  Idle\n");
    let border = |s: &mut String| {
        cols(s, "---------", "-------", "-------");
        s.push_str("----------------------------------------\n");
    };
    border(s);
    for c in cores {
        let id = c.cpu.unwrap_or(0);
        let topo = sys.cpu(id);
        if sock {
            let _ = write!(s, "{:7}| ", topo.map_or(0, |t| t.socket));
        }
        if node {
            let _ = write!(s, "{:5}| ", topo.map_or(0, |t| t.node));
        }
        if smt {
            let _ = write!(s, "{:5}| ", topo.map_or(id, |t| t.core));
        }
        let [u, us, k, i] = cpu_split(c);
        let _ = writeln!(s, "{id:4}| {u:6.2}%| {us:6.2}%| {k:6.2}%| {i:6.2}%");
    }
    border(s);
    cols(s, "         ", "       ", "       ");
    let [u, us, k, i] = cpu_averages(cores);
    let _ = writeln!(s, "avg.| {u:6.2}%| {us:6.2}%| {k:6.2}%| {i:6.2}%");
}

fn esc(t: &str) -> String {
    crate::text::escape_xml(t)
}

struct Xml {
    s: String,
    indent: usize,
}

impl Xml {
    fn open(&mut self, tag: &str) {
        let _ = writeln!(self.s, "{}<{tag}>", " ".repeat(self.indent));
        self.indent += 2;
    }
    fn close(&mut self, tag: &str) {
        self.indent -= 2;
        let _ = writeln!(self.s, "{}</{tag}>", " ".repeat(self.indent));
    }
    fn el(&mut self, tag: &str, v: impl std::fmt::Display) {
        let _ = writeln!(
            self.s,
            "{}<{tag}>{}</{tag}>",
            " ".repeat(self.indent),
            esc(&v.to_string())
        );
    }

    /// An element with attributes, written as given (already escaped).
    fn el_attr(&mut self, tag: &str, attrs: &str, v: impl std::fmt::Display) {
        let _ = writeln!(
            self.s,
            "{}<{tag} {attrs}>{}</{tag}>",
            " ".repeat(self.indent),
            esc(&v.to_string())
        );
    }
}

fn profile_xml(x: &mut Xml, p: &Plan) {
    let s_ = &p.spec;
    x.open("Profile");
    x.el("Progress", 0);
    x.el(
        "ResultFormat",
        if p.args.format == Format::Xml {
            "xml"
        } else {
            "text"
        },
    );
    x.el("Verbose", p.args.verbose);
    x.open("TimeSpans");
    x.open("TimeSpan");
    x.el("CompletionRoutines", "false");
    x.el("MeasureLatency", p.latency);
    x.el("CalculateIopsStdDev", p.args.iops_interval_ms.is_some());
    x.el("DisableAffinity", p.args.no_affinity);
    x.el("Duration", p.args.duration);
    x.el("Warmup", p.args.warmup);
    x.el("Cooldown", p.args.cooldown);
    x.el("ThreadCount", p.args.total_threads.unwrap_or(0));
    x.el("RequestCount", 0);
    x.el("IoBucketDuration", p.args.iops_interval_ms.unwrap_or(1000));
    x.el("RandSeed", s_.seed);
    if let Some(a) = &p.args.affinity {
        x.open("Affinity");
        for c in a {
            let _ = writeln!(
                x.s,
                "{}<AffinityGroupAssignment Group=\"0\" Processor=\"{c}\"/>",
                " ".repeat(x.indent)
            );
        }
        x.close("Affinity");
    }
    x.open("Targets");
    for t in &s_.targets {
        x.open("Target");
        x.el("Path", t.path.display());
        x.el("BlockSize", s_.bs);
        x.el("BaseFileOffset", t.offset);
        x.el("SequentialScan", "false");
        x.el("RandomAccess", "false");
        x.el("TemporaryFile", "false");
        x.el("UseLargePages", "false");
        // DiskSpd writes these only when they differ from the default (Common.cpp Target::GetXml).
        match p.args.sw_cache {
            SwCache::Disabled => x.el("DisableOSCache", "true"),
            SwCache::RemoteOnly => x.el("DisableLocalCache", "true"),
            SwCache::Cached => {}
        }
        if p.args.writethrough {
            x.el("WriteThrough", "true");
        }
        if p.args.mmap {
            x.el("MemoryMappedIo", "true");
        }
        x.open("WriteBufferContent");
        match p.args.write_data {
            WriteData::Zero => x.el("Pattern", "zero"),
            WriteData::RandomBuffer(size) => {
                x.el("Pattern", "random");
                x.open("RandomDataSource");
                x.el("SizeInBytes", size.bytes(s_.bs));
                x.close("RandomDataSource");
            }
            // -Zr is a timespan setting DiskSpd's profile XML does not carry: the
            // target keeps its default buffer.
            WriteData::Pattern | WriteData::RandomPerIo => x.el("Pattern", "sequential"),
        }
        x.close("WriteBufferContent");
        x.el("ParallelAsyncIO", "false");
        if let Some(b) = p.args.burst {
            x.el("BurstSize", b);
        }
        if let Some(ms) = p.args.think_ms {
            x.el("ThinkTime", ms);
        }
        if let Some(c) = t.size {
            x.el("FileSize", c);
        }
        if s_.any_random() {
            x.el("Random", s_.effective_align());
            if let Some(pct) = s_.random_pct {
                x.el("RandomRatio", pct);
            }
        } else {
            x.el("StrideSize", s_.bs);
            x.el(
                "InterlockedSequential",
                matches!(p.args.sequential, Some((true, _))),
            );
        }
        let stride = match s_.seq_layout {
            SeqLayout::Stride(b) => b,
            SeqLayout::Split | SeqLayout::Shared | SeqLayout::Stripe(_) => 0,
        };
        x.el("ThreadStride", stride);
        x.el("MaxFileSize", p.args.max_size.map_or(0, |m| m.bytes(s_.bs)));
        x.el("RequestCount", s_.qd);
        x.el("WriteRatio", s_.write_pct);
        match p.args.throughput {
            // DiskSpd keeps the unit the limit was given in.
            Some(Throughput::Iops(n)) => x.el_attr("Throughput", "unit=\"IOPS\"", n),
            Some(Throughput::BytesPerMs(n)) => x.el("Throughput", n),
            None => x.el("Throughput", 0),
        }
        x.el("ThreadsPerFile", s_.threads);
        x.el("IOPriority", p.args.priority);
        x.el("Weight", 1);
        x.close("Target");
    }
    x.close("Targets");
    x.close("TimeSpan");
    x.close("TimeSpans");
    x.close("Profile");
}

/// The profile alone (`-Rp`), text or XML.
pub fn profile_only(p: &Plan) -> String {
    match p.args.format {
        Format::Text => profile_text(p),
        Format::Xml => {
            let mut x = Xml {
                s: String::new(),
                indent: 0,
            };
            profile_xml(&mut x, p);
            x.s
        }
    }
}

/// Latency at quantile `q` in ms from the whole-run histograms, clamped to the exact min/max.
fn quantile_ms(h: &Option<hdrhistogram::Histogram<u64>>, d: &DirResult, q: f64) -> Option<f64> {
    if d.ios == 0 {
        return None;
    }
    let us = match h {
        Some(h) if !h.is_empty() => {
            (h.value_at_quantile(q) as f64 / 1000.0).clamp(d.latency_us.min, d.latency_us.max)
        }
        _ => return None,
    };
    Some(us / 1000.0)
}

/// DiskSpd 2.2's `<System>` (Common.h SystemInformation::GetXml), then iosim's own facts.
fn system_xml(x: &mut Xml, r: &RunResult, sys: &SystemInfo) {
    let pad = |x: &Xml| " ".repeat(x.indent);
    x.open("System");
    x.el("ComputerName", &r.host);
    x.open("Tool");
    x.el("Version", DISKSPD_VERSION);
    x.el("VersionDate", DISKSPD_VERSION_DATE);
    x.close("Tool");
    x.el("RunTime", diskspd_time(&r.started_at));
    let _ = writeln!(
        x.s,
        "{}<PowerScheme Name=\"{}\" Guid=\"\"/>",
        pad(x),
        esc(&sys.power_scheme)
    );
    let _ = writeln!(x.s, "{}<ProcessorTopology Heterogeneous=\"false\">", pad(x));
    x.indent += 2;
    let all = SystemInfo::mask(sys.cpus.iter().map(|c| c.id));
    let _ = writeln!(
        x.s,
        "{}<Group Group=\"0\" MaximumProcessors=\"{n}\" ActiveProcessors=\"{n}\" ActiveProcessorMask=\"0x{all:x}\"/>",
        pad(x),
        n = sys.cpus.len()
    );
    let mut nodes: Vec<usize> = sys.cpus.iter().map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    for n in nodes {
        let m = SystemInfo::mask(sys.cpus.iter().filter(|c| c.node == n).map(|c| c.id));
        let _ = writeln!(x.s, "{}<Node Node=\"{n}\">", pad(x));
        let _ = writeln!(x.s, "{}  <Group Group=\"0\" Mask=\"0x{m:x}\"/>", pad(x));
        let _ = writeln!(x.s, "{}</Node>", pad(x));
    }
    let mut sockets: Vec<usize> = sys.cpus.iter().map(|c| c.socket).collect();
    sockets.sort_unstable();
    sockets.dedup();
    for so in sockets {
        let m = SystemInfo::mask(sys.cpus.iter().filter(|c| c.socket == so).map(|c| c.id));
        let _ = writeln!(x.s, "{}<Socket Socket=\"{so}\">", pad(x));
        let _ = writeln!(x.s, "{}  <Group Group=\"0\" Mask=\"0x{m:x}\"/>", pad(x));
        let _ = writeln!(x.s, "{}</Socket>", pad(x));
    }
    for core in 0..sys.core_count() {
        let m = SystemInfo::mask(sys.cpus.iter().filter(|c| c.core == core).map(|c| c.id));
        let _ = writeln!(
            x.s,
            "{}<Core Group=\"0\" Core=\"{core}\" Mask=\"0x{m:x}\" EfficiencyClass=\"0\"/>",
            pad(x)
        );
    }
    x.close("ProcessorTopology");
    // iosim's facts, in an element of their own.
    x.open("Iosim");
    x.el("Version", &r.iosim_version);
    x.el("Engine", &r.engine);
    x.el("Kernel", &r.environment.kernel);
    x.el("CpuModel", &r.environment.cpu_model);
    x.close("Iosim");
    x.close("System");
}

/// An `<Iops>` block (XmlResultParser.cpp _PrintTargetIops / _PrintIops) from a series
/// sampled every `ms` milliseconds.
fn iops_xml(x: &mut Xml, pts: &[crate::runner::SeriesPoint], ms: u64) {
    x.open("Iops");
    if !pts.is_empty() {
        x.el(
            "ReadIopsStdDev",
            format!("{:.3}", iops_stddev(pts, |p| p.read.iops)),
        );
        x.el(
            "WriteIopsStdDev",
            format!("{:.3}", iops_stddev(pts, |p| p.write.iops)),
        );
        x.el(
            "IopsStdDev",
            format!("{:.3}", iops_stddev(pts, |p| p.total.iops)),
        );
    }
    for (i, pt) in pts.iter().enumerate() {
        let l = |v: f64| v / 1000.0;
        let _ = writeln!(
            x.s,
            "{}<Bucket SampleMillisecond=\"{}\" Read=\"{:.0}\" Write=\"{:.0}\" Total=\"{:.0}\" ReadMinLatencyMilliseconds=\"{:.3}\" ReadMaxLatencyMilliseconds=\"{:.3}\" ReadAvgLatencyMilliseconds=\"{:.3}\" ReadLatencyStdDev=\"{:.3}\" WriteMinLatencyMilliseconds=\"{:.3}\" WriteMaxLatencyMilliseconds=\"{:.3}\" WriteAvgLatencyMilliseconds=\"{:.3}\" WriteLatencyStdDev=\"{:.3}\"/>",
            " ".repeat(x.indent),
            ms * (i as u64 + 1),
            pt.read.iops,
            pt.write.iops,
            pt.total.iops,
            l(pt.read.lat_min_us),
            l(pt.read.lat_max_us),
            l(pt.read.lat_mean_us),
            l(pt.read.lat_stddev_us),
            l(pt.write.lat_min_us),
            l(pt.write.lat_max_us),
            l(pt.write.lat_mean_us),
            l(pt.write.lat_stddev_us)
        );
    }
    x.close("Iops");
}

/// The DiskSpd release whose output iosim reproduces (Common/Version.h).
pub const DISKSPD_VERSION: &str = "2.2.0";
/// Its date, as DiskSpd writes it in `<VersionDate>`.
pub const DISKSPD_VERSION_DATE: &str = "2024/6/3";

/// DiskSpd's XML report (`-Rxml`).
pub fn xml(p: &Plan, r: &RunResult, sys: &SystemInfo) -> String {
    let mut x = Xml {
        s: String::new(),
        indent: 0,
    };
    x.open("Results");
    system_xml(&mut x, r, sys);
    profile_xml(&mut x, p);
    x.open("TimeSpan");
    x.el("TestTimeSeconds", format!("{:.2}", r.duration_s));
    x.el("ThreadCount", p.thread_count);
    x.el("RequestCount", 0);
    let cores: Vec<_> = r.cpu.machine.iter().filter(|c| c.cpu.is_some()).collect();
    x.el("ProcCount", sys.cpus.len());
    x.open("CpuUtilization");
    for c in &cores {
        let id = c.cpu.unwrap_or(0);
        let topo = sys.cpu(id);
        let [u, us, k, i] = cpu_split(c);
        x.open("CPU");
        x.el("Socket", topo.map_or(0, |t| t.socket));
        x.el("Node", topo.map_or(0, |t| t.node));
        x.el("Group", 0);
        x.el("Core", topo.map_or(id, |t| t.core));
        x.el("EfficiencyClass", 0);
        x.el("Id", id);
        x.el("UsagePercent", format!("{u:.2}"));
        x.el("UserPercent", format!("{us:.2}"));
        x.el("KernelPercent", format!("{k:.2}"));
        x.el("IdlePercent", format!("{i:.2}"));
        x.close("CPU");
    }
    let [u, us, k, i] = cpu_averages(&cores);
    x.open("Average");
    x.el("UsagePercent", format!("{u:.2}"));
    x.el("UserPercent", format!("{us:.2}"));
    x.el("KernelPercent", format!("{k:.2}"));
    x.el("IdlePercent", format!("{i:.2}"));
    x.close("Average");
    x.close("CpuUtilization");
    if p.latency {
        let rh = crate::stats::decode_histogram(&r.histograms.read).ok();
        let wh = crate::stats::decode_histogram(&r.histograms.write).ok();
        let th = match (&rh, &wh) {
            (Some(a), Some(b)) => {
                let mut t = a.clone();
                t.add(b).ok().map(|_| t)
            }
            (Some(a), None) => Some(a.clone()),
            (None, Some(b)) => Some(b.clone()),
            _ => None,
        };
        let t = &r.total;
        // Distinct latency values recorded (DiskSpd's Histogram::GetSampleBuckets).
        let buckets = |h: &Option<hdrhistogram::Histogram<u64>>| {
            h.as_ref().map_or(0, |h| h.iter_recorded().count())
        };
        let _ = writeln!(
            x.s,
            "{}<Latency ReadHistoBuckets=\"{}\" WriteHistoBuckets=\"{}\" TotalHistoBuckets=\"{}\">",
            " ".repeat(x.indent),
            buckets(&rh),
            buckets(&wh),
            buckets(&th)
        );
        x.indent += 2;
        for (tag, sd_tag, d) in [
            ("AverageReadMilliseconds", "ReadLatencyStdev", &t.read),
            ("AverageWriteMilliseconds", "WriteLatencyStdev", &t.write),
            ("AverageTotalMilliseconds", "LatencyStdev", &t.total),
        ] {
            if d.ios > 0 {
                x.el(tag, format!("{:.3}", d.latency_us.mean / 1000.0));
                x.el(sd_tag, format!("{:.3}", d.latency_us.stddev / 1000.0));
            }
        }
        let bucket = |x: &mut Xml, label: &str, v: [Option<f64>; 3]| {
            x.open("Bucket");
            x.el("Percentile", label);
            for (tag, val) in ["ReadMilliseconds", "WriteMilliseconds", "TotalMilliseconds"]
                .iter()
                .zip(v)
            {
                if let Some(ms) = val {
                    x.el(tag, format!("{ms:.3}"));
                }
            }
            x.close("Bucket");
        };
        let ms = |d: &DirResult, us: f64| (d.ios > 0).then_some(us / 1000.0);
        bucket(
            &mut x,
            "0",
            [
                ms(&t.read, t.read.latency_us.min),
                ms(&t.write, t.write.latency_us.min),
                ms(&t.total, t.total.latency_us.min),
            ],
        );
        let mut pcts: Vec<(String, f64)> = (1..=99)
            .map(|p| (p.to_string(), p as f64 / 100.0))
            .collect();
        for (label, q) in [
            ("99.9", 0.999),
            ("99.99", 0.9999),
            ("99.999", 0.99999),
            ("99.9999", 0.999_999),
            ("99.99999", 0.999_999_9),
            ("99.999999", 0.999_999_99),
            ("99.9999999", 0.999_999_999),
        ] {
            pcts.push((label.to_string(), q));
        }
        for (label, q) in pcts {
            bucket(
                &mut x,
                &label,
                [
                    quantile_ms(&rh, &t.read, q),
                    quantile_ms(&wh, &t.write, q),
                    quantile_ms(&th, &t.total, q),
                ],
            );
        }
        bucket(
            &mut x,
            "100",
            [
                ms(&t.read, t.read.latency_us.max),
                ms(&t.write, t.write.latency_us.max),
                ms(&t.total, t.total.latency_us.max),
            ],
        );
        x.close("Latency");
    }
    if let Some(ms) = p.args.iops_interval_ms {
        iops_xml(&mut x, &r.series.total, ms);
    }
    for t in &r.threads {
        x.open("Thread");
        x.el("Id", t.thread);
        x.open("Target");
        let (path, size) = r
            .targets
            .get(t.target)
            .map(|x| (x.path.clone(), x.size))
            .unwrap_or_default();
        let d = &t.result;
        x.el("Path", path);
        x.el("BytesCount", d.total.bytes);
        x.el("FileSize", size);
        x.el("IOCount", d.total.ios);
        x.el("ReadBytes", d.read.bytes);
        x.el("ReadCount", d.read.ios);
        x.el("WriteBytes", d.write.bytes);
        x.el("WriteCount", d.write.ios);
        if p.latency {
            for (a, b, dd) in [
                (
                    "AverageReadLatencyMilliseconds",
                    "ReadLatencyStdev",
                    &d.read,
                ),
                (
                    "AverageWriteLatencyMilliseconds",
                    "WriteLatencyStdev",
                    &d.write,
                ),
                ("AverageLatencyMilliseconds", "LatencyStdev", &d.total),
            ] {
                if dd.ios > 0 {
                    x.el(a, format!("{:.3}", dd.latency_us.mean / 1000.0));
                    x.el(b, format!("{:.3}", dd.latency_us.stddev / 1000.0));
                }
            }
        }
        if let Some(ms) = p.args.iops_interval_ms {
            match thread_series(r, t) {
                Some(pts) => iops_xml(&mut x, pts, ms),
                None => {
                    x.open("Iops");
                    x.close("Iops");
                }
            }
        }
        x.close("Target");
        x.close("Thread");
    }
    x.close("TimeSpan");
    x.indent -= 2;
    x.s.push_str("</Results>\n");
    x.s
}

/// `iosim diskspd -?`.
pub const USAGE: &str = "Usage: iosim diskspd [options] target1 [ target2 [ target3 ...] ]
Targets: Linux paths, X:\\path with --drive X=/dir, or #N (physical disk) with --disk N=/dev/sdX.
Options (case-sensitive, values glued to the flag, as DiskSpd):
  -b<size>[K|M|G]    block size (default 64K)
  -c<size>[K|M|G|b]  create files of this size
  -d<s>              duration (default 10)      -W<s> warm-up (default 5)   -C<s> cool-down (not run)
  -o<n>              outstanding I/Os per thread per target (default 2)
  -t<n>              threads per target         -F<n> total threads (see docs)
  -r[align]          random I/O                 -s[stride] sequential (stride = block size only)
  -si                interlocked sequential: the threads of a target share one offset
  -rs<pct>           mixed: pct% random, the rest sequential from the last I/O (-r<align> aligns)
  -g<n> / -g<n>i     throughput limit per thread: n bytes per ms / n I/Os per second
  -i<n> -j<ms>       bursts of n I/Os with ms of think time between them
  -w<pct>            write percentage (default 0)
  -T<size>           stride between threads' start offsets (default 0)
  -B<size>           base offset                -f<size> maximum offset (end of region)
  -S[bhruw] / -h     caching: b=buffered (default) u=unbuffered w=writethrough h=u+w r=as u
  -L                 latency statistics         -D[ms] IOPS standard deviation
  -Z / -Zr / -Z<size> zero / random write data  -z[seed] random seed (default 0)
  -a#,#,..           pin threads round-robin    -n no affinity (default: round-robin on all CPUs)
  -Rtext / -Rxml     output format              -Rp<text|xml> print the profile only
Accepted and ignored, with a warning: -x -v -l -P -I -e -ag -fr -fs -ft
  -X<profile.xml>    run a DiskSpd XML profile (as written by -Rpxml); alone
Refused: -p -O -Z<size>,<file>
iosim options: --drive L=/path --disk N=/dev/x --allow-destroy --engine E --json FILE --quiet
               --layout 2.0 (DiskSpd 2.0.21a's text layout; default 2.2)
See docs/diskspd.md.
";

/// DiskSpd's `-I` levels as Linux I/O priorities: very low is the idle class,
/// low the lowest best-effort level, normal leaves the default alone.
fn io_priority(level: u8) -> Option<crate::engine::priority::IoPriority> {
    use crate::engine::priority::IoPriority;
    match level {
        1 => Some(IoPriority::Idle),
        2 => Some(IoPriority::BestEffort(7)),
        _ => None,
    }
}

/// `iosim diskspd ...`: runs and prints DiskSpd's report; returns the exit code.
pub fn main(
    args: &[String],
    stop: Arc<AtomicBool>,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<super::Measured<Printed>> {
    if args.iter().any(|a| a == "-?") {
        out.write_all(USAGE.as_bytes())?;
        return Ok(super::Measured::nothing(Extensions::default()));
    }
    let mut w = Warnings::default();
    let (p, ext) = plan_from_args(args, &mut w)?;
    w.print(TOOL);
    if p.args.profile_only {
        out.write_all(profile_only(&p).as_bytes())?;
        return Ok(super::Measured::nothing(ext));
    }
    let mut opts = super::run_options(ext.quiet, stop, p.args.iops_interval_ms.unwrap_or(1000));
    // `-D` prints every thread's IOPS deviation: keep a series per thread.
    opts.thread_series = p.args.iops_interval_ms.is_some();
    // `-I`: the workers inherit the I/O priority of the thread that starts them.
    if let Some(prio) = io_priority(p.args.priority) {
        if let Err(e) = crate::engine::priority::set_current_thread(prio) {
            eprintln!("{TOOL}: warning: -I{}: cannot set the I/O priority ({e}); running at the normal priority", p.args.priority);
        }
    }
    let res = crate::runner::run(&p.spec, &opts)?;
    let printed = Printed {
        plan: p,
        system: SystemInfo::read(),
    };
    out.write_all(printed.text(&res).as_bytes())?;
    let p = &printed.plan;
    out.flush()?;
    eprintln!(
        "iosim diskspd: note: I/O through iosim {} ({} engine){}",
        res.iosim_version,
        res.engine,
        if p.spec.qd > 1 {
            "; DiskSpd's \"I/O Completion Ports\" line stands for it"
        } else {
            ""
        }
    );
    for n in &res.notes {
        eprintln!("iosim diskspd: note: {n}");
    }
    if res.interrupted {
        eprintln!(
            "iosim diskspd: interrupted: the numbers cover {:.2} s",
            res.duration_s
        );
    }
    super::write_json(ext.json.as_deref(), &res)?;
    Ok(super::Measured::run(TOOL, args, res, printed, ext))
}

/// What `iosim diskspd` printed a run's report from, kept with its result
/// in the history so that `iosim show` prints the same report again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Printed {
    /// The plan (options, command line, workload, layout).
    pub plan: Plan,
    /// The machine's topology and power scheme when it ran.
    pub system: SystemInfo,
}

impl Printed {
    /// The report `iosim diskspd` printed for the run `r`: text or XML, as `-R` chose.
    pub fn text(&self, r: &RunResult) -> String {
        match self.plan.args.format {
            Format::Text => text(&self.plan, r, &self.system),
            Format::Xml => xml(&self.plan, r, &self.system),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn plan_of(s: &str) -> anyhow::Result<(Plan, Warnings)> {
        let mut w = Warnings::default();
        let mut ext = Extensions::default();
        ext.add_drive("F=/mnt/f").unwrap();
        ext.add_drive("H=/mnt/h").unwrap();
        let a = parse(&args(s), &mut w)?;
        let p = plan(&a, &ext, s, &mut w)?;
        Ok((p, w))
    }

    #[test]
    fn sizes_display_as_diskspd_2_2() {
        // ResultParser.cpp _DisplayFileSize.
        assert_eq!(display_size(8192), "8KiB");
        assert_eq!(display_size(512), "512");
        assert_eq!(display_size(1 << 30), "1GiB");
        assert_eq!(display_size(1536), "1.50KiB");
        assert_eq!(display_size(3 << 40), "3TiB");
        assert_eq!(
            diskspd_time("2026-11-22T04:05:06Z"),
            "2026/11/22 04:05:06 UTC"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("-b", "64k").unwrap(), Size::Bytes(65536));
        assert_eq!(parse_size("-c", "200G").unwrap(), Size::Bytes(200 << 30));
        assert_eq!(parse_size("-B", "8b").unwrap(), Size::Blocks(8));
        assert!(parse_size("-b", "4Q").is_err());
        assert!(parse_size("-b", "").is_err());
    }

    #[test]
    fn seed_004_lines_map() {
        let (p, _) = plan_of("-c200G -b64k -r -t16 -o1 -h -L -w40 -d60 f:Testdata.mdf").unwrap();
        let s = &p.spec;
        assert_eq!(s.rw, RwMode::Randrw);
        assert_eq!(s.write_pct, 40);
        assert_eq!(s.bs, 65536);
        assert_eq!(s.threads, 16);
        assert_eq!(s.qd, 1);
        assert_eq!(s.cache, CacheMode::DirectWritethrough);
        assert_eq!(s.duration, Duration::from_secs(60));
        assert_eq!(s.warmup, Duration::from_secs(5));
        assert_eq!(
            s.targets[0].path,
            std::path::PathBuf::from("/mnt/f/Testdata.mdf")
        );
        assert_eq!(s.targets[0].size, Some(200 << 30));
        assert!(p.latency);
        assert_eq!(p.thread_count, 16);
        let (p, _) = plan_of("-c20G -b4k -t2 -h -L -w100 -d60 h:Testdata.ldf").unwrap();
        assert_eq!(p.spec.rw, RwMode::Write);
        assert_eq!(p.spec.seq_layout, SeqLayout::Stride(0));
        assert_eq!(p.spec.qd, 2);
    }

    #[test]
    fn cache_modes() {
        let c = |s: &str| plan_of(&format!("{s} /tmp/x")).unwrap().0.spec.cache;
        assert_eq!(c(""), CacheMode::Buffered);
        assert_eq!(c("-Sb"), CacheMode::Buffered);
        assert_eq!(c("-S"), CacheMode::Direct);
        assert_eq!(c("-Su"), CacheMode::Direct);
        assert_eq!(c("-Sw"), CacheMode::Writethrough);
        assert_eq!(c("-Suw"), CacheMode::DirectWritethrough);
        assert_eq!(c("-Sh"), CacheMode::DirectWritethrough);
        let (p, _) = plan_of("-Sm /tmp/x").unwrap();
        assert_eq!(
            (p.spec.engine, p.spec.cache),
            (EngineKind::Mmap, CacheMode::Buffered)
        );
    }

    #[test]
    fn options_map_and_refusals_name_the_option() {
        let (p, w) = plan_of("-F4 -b8K -r4K -B1M -f9M -T64K -Z -z7 -a0,1 /tmp/a /tmp/b").unwrap();
        assert_eq!(p.spec.threads, 4);
        assert_eq!(p.thread_count, 4);
        assert_eq!(p.spec.align, Some(4096));
        assert_eq!(p.spec.targets[0].offset, 1 << 20);
        assert_eq!(p.spec.targets[0].length, Some(8 << 20));
        assert_eq!(p.spec.seq_layout, SeqLayout::Stride(65536));
        assert_eq!(p.spec.fill, FillMode::Zero);
        assert_eq!(p.spec.seed, 7);
        assert_eq!(p.spec.cpus, vec![0, 1]);
        assert_eq!(w.0.len(), 1, "{:?}", w.0);
        let (p, _) = plan_of("-n /tmp/a").unwrap();
        assert!(p.spec.cpus.is_empty());
        for (cmd, opt) in [
            ("-g0 /tmp/a", "-g0"),
            ("-gx /tmp/a", "-gx"),
            ("-rs101 /tmp/a", "-rs101"),
            ("-rs50 -s /tmp/a", "-rs/-s"),
            ("-i0 -j5 /tmp/a", "-i0"),
            ("-s8K -b4K /tmp/a", "-s"),
            ("-Q /tmp/a", "-Q"),
            ("-jx /tmp/a", "-jx"),
            ("-r -s /tmp/a", "-r/-s"),
            ("-t2 -F2 /tmp/a", "-t/-F"),
            ("-Rhtml /tmp/a", "-Rhtml"),
        ] {
            let e = plan_of(cmd).unwrap_err().to_string();
            assert!(e.contains(&format!("'{opt}'")), "{cmd}: {e}");
        }
        // Rate limits, bursts, mixed and interlocked patterns.
        let (p, w) = plan_of("-g100 -t2 -b8K /tmp/a").unwrap();
        assert_eq!(p.spec.rate_bytes, Some(100_000));
        assert_eq!(p.spec.rate_interval_ns(), 81_920_000);
        assert!(w.0.is_empty());
        let (p, _) = plan_of("-g500i /tmp/a").unwrap();
        assert_eq!(p.spec.rate_iops, Some(500));
        assert_eq!(p.spec.rate_interval_ns(), 2_000_000);
        let (p, _) = plan_of("-i10 -j5 /tmp/a").unwrap();
        assert_eq!((p.spec.burst, p.spec.think), (10, Duration::from_millis(5)));
        let (p, _) = plan_of("-j5 /tmp/a").unwrap();
        assert_eq!(p.spec.burst, 1, "-j alone thinks after every I/O");
        let (p, w) = plan_of("-i10 /tmp/a").unwrap();
        assert_eq!(p.spec.burst, 0);
        assert_eq!(w.0.len(), 1, "{:?}", w.0);
        let (p, _) = plan_of("-rs30 -r4K -b8K /tmp/a").unwrap();
        assert_eq!(p.spec.random_pct, Some(30));
        assert!(p.spec.rw.is_random());
        assert_eq!(p.spec.align, Some(4096));
        let (p, _) = plan_of("-r4K -rs100 /tmp/a").unwrap();
        assert_eq!((p.spec.random_pct, p.spec.align), (None, Some(4096)));
        let (p, _) = plan_of("-si -t4 /tmp/a").unwrap();
        assert_eq!(p.spec.seq_layout, SeqLayout::Shared);
        assert_eq!(p.spec.threads, 4);
        let (p, w) = plan_of("-x -v -l -P10 -I1 -ft -C5 /tmp/a").unwrap();
        assert_eq!(w.0.len(), 5, "{:?}", w.0);
        assert!(p.args.verbose);
        assert!(profile_text(&p).contains("\tusing verbose mode\n"));
        assert!(profile_text(&p).contains("\t\tIO priority: very low\n"));
        let e = plan_of("-n -a0,1 /tmp/a").unwrap_err().to_string();
        assert!(
            e.contains("'-n/-a'") && e.contains("cannot be used together"),
            "{e}"
        );
        assert!(plan_of("-I4 /tmp/a").is_err());
        let (p, _) = plan_of("-Sm -Zr -w50 /tmp/a").unwrap();
        let t = profile_text(&p);
        assert!(t.contains("\t\tmemory mapped I/O enabled\n"), "{t}");
        assert!(
            t.contains("\t  WARNING: this increases the CPU cost of issuing writes"),
            "{t}"
        );
        let x = profile_only(&Plan {
            args: DiskspdArgs {
                format: Format::Xml,
                ..p.args.clone()
            },
            ..p.clone()
        });
        assert!(x.contains("<MemoryMappedIo>true</MemoryMappedIo>"), "{x}");
        assert!(x.contains("<Pattern>sequential</Pattern>"), "{x}");
        assert!(
            !x.contains("<DisableOSCache>") && !x.contains("<WriteThrough>"),
            "{x}"
        );
        assert!(plan_of("g:x")
            .unwrap_err()
            .to_string()
            .contains("--drive G="));
    }
}
