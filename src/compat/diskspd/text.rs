//! DiskSpd's text report (`-Rtext`): the profile, the per-target tables, the
//! latency chart and the CPU tables, in 2.2's or 2.0.21a's layout.

use std::fmt::Write as _;

use super::plan::Plan;
use crate::compat::diskspd_args::{Layout, SwCache, Throughput, WriteData};
use crate::compat::sysinfo::SystemInfo;
use crate::runner::RunResult;
use crate::stats::{DirResult, Percentile, RwResult};
use crate::workload::{SeqLayout, TargetSpec};

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
    let mut s = String::new();
    let _ = writeln!(s, "\nCommand Line: {}\n", p.cmdline);
    s.push_str("Input parameters:\n\n");
    timespan_lines(&mut s, p);
    for t in &p.spec.targets {
        target_data_lines(&mut s, p, t);
        target_access_lines(&mut s, p, t);
    }
    s.push('\n');
    s
}

/// The timespan's lines: timing, affinity, seed, thread pool, write data.
fn timespan_lines(s: &mut String, p: &Plan) {
    let s_ = &p.spec;
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
}

/// A target's path, think time, bursts, caching, write data and direction.
fn target_data_lines(s: &mut String, p: &Plan, t: &TargetSpec) {
    let s_ = &p.spec;
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
}

/// A target's sizes, access pattern, queue depth, offsets, threads,
/// priority and rate limit.
fn target_access_lines(s: &mut String, p: &Plan, t: &TargetSpec) {
    let s_ = &p.spec;
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
        // DiskSpd's words: true of the iocp engine on Windows; on Linux
        // iosim's engine (io_uring) is named in the system section.
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

pub(super) fn iops_stddev(
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
pub(super) fn thread_series<'a>(
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
pub(super) fn cpu_split(c: &crate::sysmon::cpu::CoreUtil) -> [f64; 4] {
    let kernel = (c.busy_pct - c.user_pct).max(0.0);
    let idle = (100.0 - c.busy_pct).max(0.0);
    [c.busy_pct, c.user_pct, kernel, idle]
}

pub(super) fn cpu_averages(cores: &[&crate::sysmon::cpu::CoreUtil]) -> [f64; 4] {
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
