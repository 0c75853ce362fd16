//! DiskSpd's XML report (`-Rxml`) and XML profile (`-Rpxml`).

use std::fmt::Write as _;

use super::plan::Plan;
use super::text::{
    cpu_averages, cpu_split, diskspd_time, iops_stddev, profile_text, thread_series,
};
use crate::compat::diskspd_args::{Format, SwCache, Throughput, WriteData};
use crate::compat::sysinfo::SystemInfo;
use crate::runner::RunResult;
use crate::stats::DirResult;
use crate::workload::{SeqLayout, TargetSpec};

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
        target_xml(x, p, t);
    }
    x.close("Targets");
    x.close("TimeSpan");
    x.close("TimeSpans");
    x.close("Profile");
}

/// One `<Target>`: every target of a command line has the same settings.
fn target_xml(x: &mut Xml, p: &Plan, t: &TargetSpec) {
    let s_ = &p.spec;
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
    cpu_xml(&mut x, r, sys);
    if p.latency {
        latency_xml(&mut x, r);
    }
    if let Some(ms) = p.args.iops_interval_ms {
        iops_xml(&mut x, &r.series.total, ms);
    }
    for t in &r.threads {
        thread_xml(&mut x, p, r, t);
    }
    x.close("TimeSpan");
    x.indent -= 2;
    x.s.push_str("</Results>\n");
    x.s
}

/// `<CpuUtilization>`: each core's use and the average, placed in the machine's topology.
fn cpu_xml(x: &mut Xml, r: &RunResult, sys: &SystemInfo) {
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
}

/// `<Latency>` (`-L`): mean and deviation, and the percentile buckets DiskSpd writes.
fn latency_xml(x: &mut Xml, r: &RunResult) {
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
        x,
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
            x,
            &label,
            [
                quantile_ms(&rh, &t.read, q),
                quantile_ms(&wh, &t.write, q),
                quantile_ms(&th, &t.total, q),
            ],
        );
    }
    bucket(
        x,
        "100",
        [
            ms(&t.read, t.read.latency_us.max),
            ms(&t.write, t.write.latency_us.max),
            ms(&t.total, t.total.latency_us.max),
        ],
    );
    x.close("Latency");
}

/// One `<Thread>` and its `<Target>`.
fn thread_xml(x: &mut Xml, p: &Plan, r: &RunResult, t: &crate::runner::ThreadResult) {
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
            Some(pts) => iops_xml(x, pts, ms),
            None => {
                x.open("Iops");
                x.close("Iops");
            }
        }
    }
    x.close("Target");
    x.close("Thread");
}
