//! DiskSpd's command line: sizes, numbers and every option into [`DiskspdArgs`].

use crate::compat::diskspd_args::{DiskspdArgs, Format, Size, SwCache, Throughput, WriteData};
use crate::compat::{bad_option, Warnings};

pub(super) const TOOL: &str = "diskspd";

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
        option(&mut a, w, arg)?;
    }
    check_combinations(&a)?;
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

/// One option, `arg` (a dash, the flag letter, the value glued to it).
fn option(a: &mut DiskspdArgs, w: &mut Warnings, arg: &str) -> anyhow::Result<()> {
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
        'S' => cache_modes(a, arg, v)?,
        'L' if v.is_empty() => a.latency = true,
        'o' => {
            a.outstanding = num(arg, v, "a number of outstanding I/Os")?;
            if a.outstanding == 0 || a.outstanding > crate::workload::MAX_QD {
                return Err(bad_option(TOOL, arg, format!("outstanding I/Os must be 1..{}", crate::workload::MAX_QD)));
            }
        }
        't' => a.threads_per_target = Some(threads(arg, v)?),
        'F' => a.total_threads = Some(threads(arg, v)?),
        'T' => a.thread_stride = Some(parse_size(arg, v)?),
        'r' => random(a, arg, v)?,
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
        'Z' => a.write_data = write_data(arg, v)?,
        'z' => a.seed = Some(if v.is_empty() { None } else { Some(num(arg, v, "a seed")?) }),
        'a' => affinity(a, w, arg, v)?,
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
        'R' => results(a, arg, v)?,
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
        'g' => a.throughput = Some(throughput(arg, v)?),
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
    Ok(())
}

/// `-S` and its letters: caching, write-through, memory mapping.
fn cache_modes(a: &mut DiskspdArgs, arg: &str, v: &str) -> anyhow::Result<()> {
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
    Ok(())
}

/// A thread count of `-t` or `-F`: at least 1.
fn threads(arg: &str, v: &str) -> anyhow::Result<u32> {
    let t: u32 = num(arg, v, "a number of threads")?;
    if t == 0 {
        return Err(bad_option(TOOL, arg, "at least 1 thread"));
    }
    Ok(t)
}

/// `-r<align>` and `-rs<pct>`.
fn random(a: &mut DiskspdArgs, arg: &str, v: &str) -> anyhow::Result<()> {
    if let Some(p) = v.strip_prefix('s') {
        let pct: u8 = num(arg, p, "a percentage")?;
        match pct {
            100 => a.random = Some(a.random.flatten()),
            0 => a.sequential = Some((false, None)),
            1..=99 => a.random_pct = Some(pct),
            _ => {
                return Err(bad_option(
                    TOOL,
                    arg,
                    "the random percentage must be 0..100",
                ))
            }
        }
    } else {
        // -r<align> also sets the alignment of an -rs mix, in either order.
        a.random = Some(if v.is_empty() {
            None
        } else {
            Some(parse_size(arg, v)?)
        });
    }
    Ok(())
}

/// `-Z`, `-Zr`, `-Z<size>`: what writes carry.
fn write_data(arg: &str, v: &str) -> anyhow::Result<WriteData> {
    Ok(match v {
        "" => WriteData::Zero,
        "r" => WriteData::RandomPerIo,
        s if s.contains(',') => {
            return Err(bad_option(
                TOOL,
                arg,
                "write data from a file (-Z<size>,<file>) is not supported; use -Zr or -Z<size>",
            ))
        }
        s => WriteData::RandomBuffer(parse_size(arg, s)?),
    })
}

/// `-ag` (warned) and `-a<cpu list>`.
fn affinity(a: &mut DiskspdArgs, w: &mut Warnings, arg: &str, v: &str) -> anyhow::Result<()> {
    if v == "g" || v.starts_with("g,") || v.starts_with('g') && v.len() == 1 {
        w.add(arg, "Linux has no processor groups: threads are placed round-robin on the CPUs this process may use, as without -ag");
    } else {
        let mut cpus = Vec::new();
        for part in v.split(',') {
            // DiskSpd 2.1 allows g:c for group:core.
            let core = match part.split_once(':') {
                Some(("0", c)) => c,
                Some((g, _)) => {
                    return Err(bad_option(
                        TOOL,
                        arg,
                        format!("processor group {g}: Linux has only one group (0)"),
                    ))
                }
                None => part,
            };
            cpus.push(num(arg, core, "a CPU list such as -a0,1,2")?);
        }
        a.affinity = Some(cpus);
    }
    Ok(())
}

/// `-R[p]<format>`: the results' format, and whether to print the profile only.
fn results(a: &mut DiskspdArgs, arg: &str, v: &str) -> anyhow::Result<()> {
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
    Ok(())
}

/// `-g<bytes per ms>` or `-g<I/Os per second>i`: more than 0.
fn throughput(arg: &str, v: &str) -> anyhow::Result<Throughput> {
    let (n, iops) = match v.strip_suffix('i') {
        Some(n) => (n, true),
        None => (v, false),
    };
    let n: u64 = num(
        arg,
        n,
        "a throughput (bytes per ms, or I/Os per second with a trailing i)",
    )?;
    if n == 0 {
        return Err(bad_option(
            TOOL,
            arg,
            "a throughput limit must be more than 0",
        ));
    }
    Ok(if iops {
        Throughput::Iops(n)
    } else {
        Throughput::BytesPerMs(n)
    })
}

/// Options that cannot go together, refused as DiskSpd refuses them.
fn check_combinations(a: &DiskspdArgs) -> anyhow::Result<()> {
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
    Ok(())
}
