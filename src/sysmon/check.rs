//! Self-checks: does what the kernel saw match what iosim issued, and is
//! anything making the result measure something other than storage?
//!
//! [`self_check`] is pure: the runner gathers a [`CheckInput`] (issued I/O,
//! the device's whole-run counters for the same window, those of the device
//! under a loop device's backing file, CPU, content facts) and gets back
//! plain-words [`Warning`]s. [`super::content::examine`] gathers the
//! content facts before a run.

use serde::{Deserialize, Serialize};

use super::content::{
    Region, TargetContent, TargetKind, Unwritten, UnwrittenEvidence, UNWRITTEN_SHARE,
};
use super::diskstats::DeviceCounters;
use super::host::HostInfo;
use super::mounts::{DeviceInfo, Resolution};
use super::procs::CpuAttribution;
use super::sampler::MonitorReport;
use crate::stats::RwStats;
use crate::units::format_size;
use crate::workload::{CacheMode, WorkloadSpec};

/// The device must see at least this fraction of the bytes iosim read (or,
/// for writes that must reach it, wrote). Below it, something above the
/// device answered: with 10% slack, block-layer rounding and a few I/Os still
/// in flight at the sampling edges never trip it, while a page cache serving
/// even a fifth of the reads does.
pub const DEVICE_SHORTFALL_FRACTION: f64 = 0.90;

/// The device may see up to this fraction more bytes than iosim issued before
/// iosim says so: filesystem journal and metadata writes, readahead, and other
/// processes on the same device are expected to add a little.
pub const DEVICE_EXCESS_FRACTION: f64 = 0.10;

/// Plus this many bytes of excess, so a short run's journal commits (a few
/// hundred KiB per commit interval) and a `blkid` probe do not trip it.
pub const DEVICE_EXCESS_SLACK_BYTES: u64 = 4 << 20;

/// Other processes used the device when it moved more than this many bytes
/// beyond iosim's own, and more than [`OTHERS_FACTOR`] times iosim's own:
/// a file system's journal and metadata add a fraction of what iosim
/// writes (extent conversion of unwritten blocks about as much again), not
/// twice it.
pub const OTHERS_SLACK_BYTES: u64 = 16 << 20;

/// See [`OTHERS_SLACK_BYTES`].
pub const OTHERS_FACTOR: u64 = 2;

/// Comparisons need enough I/O to mean anything: below this many issued I/Os
/// in a direction, the device/issued comparisons are skipped.
pub const MIN_IOS_TO_COMPARE: u64 = 64;

/// A core at or above this busy percentage (user + system + irq + steal over
/// the whole run) is saturated. On its own it says nothing about who used
/// it: [`cpu_cause`] decides that.
pub const CPU_BOUND_PCT: f64 = 95.0;

/// iosim's own threads using at least this fraction of the cores they could
/// use (one per worker thread, at most the machine's cores) issued I/O as
/// fast as the CPU let them: the load generator set the numbers.
pub const IOSIM_SATURATED_FRACTION: f64 = 0.90;

/// iosim's workers waiting for a core (runnable, not running) at least this
/// percentage of their measured time needed CPU they did not get. Measured
/// on a 2-vCPU VM: alone, one to four workers waited 0% to 12%; beside a
/// busy loop pinned to the worker's core, 19% to 20% (IOPS down 20% to 26%);
/// beside compilers using 1.5 cores and more, 25% to 50% (IOPS down 40% to
/// 50%). Table in docs/sysmon.md.
pub const WORKER_WAIT_PCT: f64 = 15.0;

/// As [`WORKER_WAIT_PCT`] when there are more workers than cores: they also
/// wait for each other (eight on two cores waited 16% to 19% with the
/// machine otherwise quiet), which is iosim's own doing, not the others'.
pub const WORKER_WAIT_OVERSUBSCRIBED_PCT: f64 = 25.0;

/// Other processes using at least this many cores' worth of the window
/// (together) are enough to be the ones that took it.
pub const OTHERS_MIN_CORES: f64 = 0.25;

/// The kernel's I/O path using at least this many cores' worth is worth
/// saying so when a core was saturated.
pub const IO_PATH_MIN_CORES: f64 = 0.25;

/// A buffered test file smaller than this multiple of physical memory can sit
/// wholly in the page cache.
pub const BUFFERED_MEMORY_FACTOR: f64 = 1.0;

/// A loop device's backing file, as the checks see it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoopCheck {
    /// The loop device (`loop0`, also for its partitions), for `losetup`.
    pub loop_device: String,
    /// Its backing file.
    pub file: String,
    /// `loop/dio`: the backing file is opened with O_DIRECT.
    pub direct_io: bool,
    /// The backing file lives in memory (tmpfs).
    pub in_memory: bool,
    /// Kernel name of the block device holding the backing file.
    pub holder_name: Option<String>,
    /// That device's counters over the same window as the loop device's.
    pub holder: Option<DeviceCounters>,
}

impl LoopCheck {
    /// The loop facts of `d`, with the holder's counters from `mon`; None
    /// for a device that is not a loop device.
    pub fn of(d: &DeviceInfo, mon: &MonitorReport) -> Option<LoopCheck> {
        let lb = d.loop_backing.as_ref()?;
        let holder = lb.holder_device();
        Some(LoopCheck {
            loop_device: d.disk.clone(),
            file: d.backing_file.clone().unwrap_or_default(),
            direct_io: lb.direct_io,
            in_memory: lb.in_memory(),
            holder_name: holder.map(|h| h.name.clone()),
            holder: holder.and_then(|h| mon.device(&h.name)).cloned(),
        })
    }
}

/// Everything the checks look at. Issued counts and device counters must
/// cover the same window (the measured time, warmup excluded).
#[derive(Clone, Debug)]
pub struct CheckInput {
    /// Target path, named in messages.
    pub target: String,
    /// Regular file or block device.
    pub kind: TargetKind,
    /// How I/O met the page cache.
    pub cache: CacheMode,
    /// Reads iosim completed.
    pub issued_reads: u64,
    /// Bytes iosim read.
    pub issued_read_bytes: u64,
    /// Writes iosim completed.
    pub issued_writes: u64,
    /// Bytes iosim wrote.
    pub issued_write_bytes: u64,
    /// Of those, writes other workloads on the device issued through the
    /// page cache ([`IssuedElsewhere::buffered`]): they may not have
    /// reached it yet.
    pub lingering_writes: u64,
    /// Their bytes.
    pub lingering_write_bytes: u64,
    /// Kernel name of the watched device (`vda1`), for messages.
    pub device_name: Option<String>,
    /// The device's whole-run counters; `None` when there is no device.
    pub device: Option<DeviceCounters>,
    /// Why there is no device (from `mounts::Resolution::NoDevice`).
    pub no_device_reason: Option<String>,
    /// Bytes of the target iosim used (file size or device region).
    pub target_size: u64,
    /// Physical memory, bytes.
    pub mem_total_bytes: u64,
    /// The test file has holes.
    pub file_sparse: bool,
    /// The test file reads back as zeros.
    pub zero_filled: bool,
    /// O_DIRECT was asked for but the filesystem refused it.
    pub direct_unavailable: bool,
    /// The device is a loop device: its backing file and what reached the
    /// device under it.
    pub loop_backing: Option<LoopCheck>,
    /// A block device target: its sampled places never written.
    pub unwritten: Option<Unwritten>,
    /// The workload flushed (`--fsync`, `--fdatasync`, `--sync-method`).
    pub flushes: Option<FlushCheck>,
}

/// What another workload of the same run issued to a block device this
/// workload's targets are on: the device's counters hold it too.
#[derive(Clone, Debug, Default)]
pub struct IssuedElsewhere {
    /// The device's kernel name.
    pub device: String,
    /// What that workload issued to it.
    pub issued: RwStats,
    /// Its writes went through the page cache without O_DSYNC: they may
    /// still be there when the run ends, so no workload's shortfall check
    /// counts them as writes that must have reached the device.
    pub buffered: bool,
}

/// What the flush check needs: iosim's flushes and what the device says of
/// flushes (the kernel drops them for a device without a volatile cache).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlushCheck {
    /// Flushes iosim completed.
    pub issued: u64,
    /// The disk declares a volatile write cache (`queue/write_cache` is
    /// `write back`); `None` when unknown.
    pub volatile_cache: Option<bool>,
    /// The kernel counts flushes in /proc/diskstats (Linux 5.5 and later).
    pub device_counts_flushes: bool,
}

/// A finding, in plain words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Stable identifier (snake_case), for scripts.
    pub code: WarningCode,
    /// What it means and what to do.
    pub message: String,
}

/// The stable identifier of a [`Warning`]; documents hold its snake_case
/// text ([`WarningCode::as_str`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// The device read fewer bytes than iosim did: a cache answered.
    CacheAnsweredReads,
    /// The device read more than iosim did.
    DeviceExtraReads,
    /// The device wrote more than iosim did.
    DeviceExtraWrites,
    /// The device moved far more than iosim's I/O and a file system's
    /// overhead explain: other processes used it during the run.
    DeviceUsedByOthers,
    /// Writes that had to reach the device did not.
    WritesMissedDevice,
    /// Buffered writes were still in the page cache at the end.
    WritesStillCached,
    /// A buffered test file fits in memory.
    BufferedFitsInMemory,
    /// The test file has holes.
    SparseTestFile,
    /// The test file reads back as zeros.
    ZeroFilledTestFile,
    /// Places of a block device were never written.
    UnwrittenDevice,
    /// O_DIRECT was asked for and refused.
    DirectIoUnavailable,
    /// The device's counters could not be read.
    NoDeviceCounters,
    /// A loop device's backing file answered from the page cache.
    LoopBackingCached,
    /// iosim's own threads were the limit ([`CpuCause::Iosim`]).
    CpuBoundIosim,
    /// Other processes took CPU iosim needed ([`CpuCause::Others`]).
    CpuTakenByOthers,
    /// The kernel's I/O path kept the CPU busy ([`CpuCause::IoPath`]).
    CpuBusyIoPath,
    /// The one CPU warning of results stored before the causes were told
    /// apart (a core >= 95% busy, by anyone); read back, it still counts as
    /// CPU-bound.
    CpuBound,
    /// Workers started measuring late.
    WorkersStartedLate,
    /// Workers stopped measuring late.
    WorkersStoppedLate,
    /// iosim's flushes did not reach a device that has a volatile cache.
    FlushesMissedDevice,
    /// Throughput sat at a ceiling with the latency a queue in front of it
    /// (`crate::changes::RateLimit`).
    RateLimited,
    /// Many more threads than CPUs the process may use.
    ThreadsExceedCpus,
    /// A code this iosim does not know (from a document of another
    /// version), kept as it was read.
    #[serde(untagged)]
    Other(String),
}

impl WarningCode {
    /// Its text in documents and reports: `cache_answered_reads`.
    pub fn as_str(&self) -> &str {
        match self {
            WarningCode::CacheAnsweredReads => "cache_answered_reads",
            WarningCode::DeviceExtraReads => "device_extra_reads",
            WarningCode::DeviceExtraWrites => "device_extra_writes",
            WarningCode::DeviceUsedByOthers => "device_used_by_others",
            WarningCode::WritesMissedDevice => "writes_missed_device",
            WarningCode::WritesStillCached => "writes_still_cached",
            WarningCode::BufferedFitsInMemory => "buffered_fits_in_memory",
            WarningCode::SparseTestFile => "sparse_test_file",
            WarningCode::ZeroFilledTestFile => "zero_filled_test_file",
            WarningCode::UnwrittenDevice => "unwritten_device",
            WarningCode::DirectIoUnavailable => "direct_io_unavailable",
            WarningCode::NoDeviceCounters => "no_device_counters",
            WarningCode::LoopBackingCached => "loop_backing_cached",
            WarningCode::CpuBoundIosim => "cpu_bound_iosim",
            WarningCode::CpuTakenByOthers => "cpu_taken_by_others",
            WarningCode::CpuBusyIoPath => "cpu_busy_io_path",
            WarningCode::CpuBound => "cpu_bound",
            WarningCode::WorkersStartedLate => "workers_started_late",
            WarningCode::WorkersStoppedLate => "workers_stopped_late",
            WarningCode::FlushesMissedDevice => "flushes_missed_device",
            WarningCode::RateLimited => "rate_limited",
            WarningCode::ThreadsExceedCpus => "threads_exceed_cpus",
            WarningCode::Other(s) => s,
        }
    }
}

impl std::fmt::Display for WarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Fewer flushes than this are not compared with the device's count.
const MIN_FLUSHES_TO_COMPARE: u64 = 20;

fn warn(code: WarningCode, message: String) -> Warning {
    Warning { code, message }
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// Runs every check of one device. The order of the result is fixed:
/// device-level findings, then cache, file content, and missing counters.
/// The CPU is the machine's, not the device's: [`cpu_cause`] judges it once
/// per run.
pub fn self_check(i: &CheckInput) -> Vec<Warning> {
    let mut out = Vec::new();
    let dev_name = i.device_name.as_deref().unwrap_or("the device");
    let direct = i.cache.is_direct() && !i.direct_unavailable;
    let writes_must_reach = direct || i.cache.is_sync();

    if let Some(d) = &i.device {
        device_read_checks(i, d, dev_name, direct, &mut out);
        device_write_checks(i, d, dev_name, direct, writes_must_reach, &mut out);
        out.extend(others_check(i, d, dev_name));
    }
    flush_check(i, dev_name, &mut out);

    // (h) A loop device whose backing file is cached by the host, or in memory.
    if let Some(w) = loop_backing_cached(i, writes_must_reach) {
        out.push(w);
    }
    buffered_fits_in_memory(i, direct, &mut out);
    file_content_checks(i, &mut out);
    unwritten_check(i, &mut out);
    direct_unavailable_check(i, &mut out);
    no_device_counters_check(i, &mut out);
    out
}

/// (a) Reads: a cache answered; or the device read more than iosim did.
fn device_read_checks(
    i: &CheckInput,
    d: &DeviceCounters,
    dev_name: &str,
    direct: bool,
    out: &mut Vec<Warning>,
) {
    if i.issued_reads >= MIN_IOS_TO_COMPARE
        && (d.read_bytes as f64) < DEVICE_SHORTFALL_FRACTION * i.issued_read_bytes as f64
    {
        out.push(warn(
            WarningCode::CacheAnsweredReads,
            format!(
                "{dev_name} read {} in {} requests while iosim read {} in {} ({:.0}% of the bytes): a cache answered instead of the device, so read results show cache speed. {}",
                format_size(d.read_bytes),
                d.reads,
                format_size(i.issued_read_bytes),
                i.issued_reads,
                pct(d.read_bytes, i.issued_read_bytes),
                if direct {
                    "With O_DIRECT this points at a layer above the device (a loop device's backing file, a filesystem that ignores O_DIRECT); test the underlying device or a different filesystem."
                } else {
                    "Use --cache direct, or a test file several times larger than memory."
                }
            ),
        ));
    }
    if i.issued_reads >= MIN_IOS_TO_COMPARE
        && d.read_bytes as f64
            > (1.0 + DEVICE_EXCESS_FRACTION) * i.issued_read_bytes as f64
                + DEVICE_EXCESS_SLACK_BYTES as f64
    {
        out.push(warn(
            WarningCode::DeviceExtraReads,
            format!(
                "{dev_name} read {} while iosim read {}: {}other processes using {dev_name} count too, so device numbers are not iosim's alone.",
                format_size(d.read_bytes),
                format_size(i.issued_read_bytes),
                if direct { "" } else { "readahead fetched data iosim never asked for, and " }
            ),
        ));
    }
}

/// (i) Other processes' I/O on the device: it moved more than twice
/// iosim's bytes beyond them, and over 16 MiB. Its figures then measure the
/// device shared, and a comparison does not call their change a regression
/// of the storage (`qualify --baseline`, `compare`).
fn others_check(i: &CheckInput, d: &DeviceCounters, dev_name: &str) -> Option<Warning> {
    let ours = i.issued_read_bytes + i.issued_write_bytes;
    let other = (d.read_bytes + d.write_bytes).saturating_sub(ours);
    (other > OTHERS_FACTOR * ours + OTHERS_SLACK_BYTES).then(|| {
        warn(
            WarningCode::DeviceUsedByOthers,
            format!(
                "{dev_name} moved {} beyond iosim's own {} during the run (read {}, wrote {}): other processes used it (or the writeback of earlier buffered writes reached it), so these figures measure the device shared with them. Run again when it is idle, or on a device nothing else uses.",
                format_size(other),
                format_size(ours),
                format_size(d.read_bytes),
                format_size(d.write_bytes),
            ),
        )
    })
}

/// (c) Writes beyond what was issued, and writes that did not reach the device.
fn device_write_checks(
    i: &CheckInput,
    d: &DeviceCounters,
    dev_name: &str,
    direct: bool,
    writes_must_reach: bool,
    out: &mut Vec<Warning>,
) {
    if d.write_bytes as f64
        > (1.0 + DEVICE_EXCESS_FRACTION) * i.issued_write_bytes as f64
            + DEVICE_EXCESS_SLACK_BYTES as f64
    {
        out.push(warn(
            WarningCode::DeviceExtraWrites,
            format!(
                "{dev_name} wrote {} in {} requests while iosim wrote {} in {}: the extra is filesystem journal and metadata{}, or other processes writing to {dev_name} (they count too). Device-side rates include it; if it is large, look for other activity or test on a block device.",
                format_size(d.write_bytes),
                d.writes,
                format_size(i.issued_write_bytes),
                i.issued_writes,
                if i.issued_writes == 0 {
                    " (e.g. access-time updates)"
                } else {
                    " (e.g. extent conversion of newly written blocks)"
                }
            ),
        ));
    }
    // Writes that did not reach the device: of those that must have, when
    // they must (other workloads' buffered writes may still be cached).
    let (writes, bytes) = if writes_must_reach {
        (
            i.issued_writes.saturating_sub(i.lingering_writes),
            i.issued_write_bytes.saturating_sub(i.lingering_write_bytes),
        )
    } else {
        (i.issued_writes, i.issued_write_bytes)
    };
    if writes >= MIN_IOS_TO_COMPARE
        && (d.write_bytes as f64) < DEVICE_SHORTFALL_FRACTION * bytes as f64
    {
        if writes_must_reach {
            out.push(warn(
                WarningCode::WritesMissedDevice,
                format!(
                    "{dev_name} wrote {} while iosim wrote {} with {}: writes that must reach stable storage did not reach this device. Something between them absorbed them (a loop device over a cached file, a filesystem that silently buffers O_DIRECT); write results do not show the device.",
                    format_size(d.write_bytes),
                    format_size(bytes),
                    if direct { "O_DIRECT" } else { "O_DSYNC" },
                ),
            ));
        } else {
            out.push(warn(
                WarningCode::WritesStillCached,
                format!(
                    "{dev_name} wrote {} while iosim wrote {} ({:.0}%): buffered writes were still in the page cache when the run ended, so write results show memory speed and the device will write them later. Use --cache direct or --cache writethrough to measure the device.",
                    format_size(d.write_bytes),
                    format_size(i.issued_write_bytes),
                    pct(d.write_bytes, i.issued_write_bytes),
                ),
            ));
        }
    }
}

/// Flushes that a device with a volatile cache never saw.
fn flush_check(i: &CheckInput, dev_name: &str, out: &mut Vec<Warning>) {
    if let (Some(d), Some(f)) = (&i.device, &i.flushes) {
        if f.issued >= MIN_FLUSHES_TO_COMPARE
            && f.device_counts_flushes
            && f.volatile_cache == Some(true)
            && d.flushes == 0
        {
            out.push(warn(
                WarningCode::FlushesMissedDevice,
                format!(
                    "iosim completed {} flushes ({}) and {dev_name}, which declares a volatile write cache, completed none: something above the device acknowledged them (a filesystem mounted with nobarrier, a loop device whose backing file is cached, a layer that ignores flushes), so flush latencies do not show the device making data durable. Test the device itself, or mount without nobarrier.",
                    f.issued,
                    i.target
                ),
            ));
        }
    }
}

/// (b) Buffered mode, file fits in memory.
fn buffered_fits_in_memory(i: &CheckInput, direct: bool, out: &mut Vec<Warning>) {
    if !direct
        && i.mem_total_bytes > 0
        && i.target_size > 0
        && (i.target_size as f64) < BUFFERED_MEMORY_FACTOR * i.mem_total_bytes as f64
        && i.issued_reads + i.issued_writes > 0
    {
        out.push(warn(
            WarningCode::BufferedFitsInMemory,
            format!(
                "buffered I/O ({}) on a {} target with {} of memory: the whole target can sit in the page cache, so results can show memory speed, not storage. Use --cache direct, or a target larger than memory.",
                i.cache.name(),
                format_size(i.target_size),
                format_size(i.mem_total_bytes)
            ),
        ));
    }
}

/// (e) File content: holes, or zeros.
fn file_content_checks(i: &CheckInput, out: &mut Vec<Warning>) {
    if i.kind == TargetKind::File && i.file_sparse {
        out.push(warn(
            WarningCode::SparseTestFile,
            format!(
                "{} has holes (fewer blocks allocated than its size): reads of holes return zeros without touching the device, and first writes allocate blocks. Recreate it with --fill random (or check whether the filesystem compresses it).",
                i.target
            ),
        ));
    }
    if i.zero_filled {
        out.push(warn(
            WarningCode::ZeroFilledTestFile,
            format!(
                "{} reads back as zeros: unwritten extents are answered by the filesystem without device I/O, and devices or hypervisors that compress, deduplicate or thin-provision can shortcut zeros. Recreate it with --fill random.",
                i.target
            ),
        ));
    }
}

/// (i) A block device read where it was never written.
fn unwritten_check(i: &CheckInput, out: &mut Vec<Warning>) {
    if let Some(u) = &i.unwritten {
        if i.kind == TargetKind::BlockDevice
            && i.issued_reads >= MIN_IOS_TO_COMPARE
            && u.share() >= UNWRITTEN_SHARE
        {
            let (places, why) = match &u.evidence {
                UnwrittenEvidence::BackingHoles(file) => (
                    format!("are holes in its backing file {file}"),
                    "holes read as zeros without touching storage, so read results show holes, not the device",
                ),
                UnwrittenEvidence::ZeroBlocks => (
                    "read back as zeros".to_string(),
                    "a thin-provisioned, sparse or trimmed device answers never-written blocks without reading media, so read results may show holes",
                ),
            };
            out.push(warn(
                WarningCode::UnwrittenDevice,
                format!(
                    "{}: {} of {} places sampled across the {} iosim used {places}: {why}. Write it whole first (`iosim precondition {} --allow-destroy`) and measure again.",
                    i.target,
                    u.unwritten,
                    u.sampled,
                    format_size(i.target_size),
                    i.target
                ),
            ));
        }
    }
}

/// (f) Direct requested, not possible.
fn direct_unavailable_check(i: &CheckInput, out: &mut Vec<Warning>) {
    if i.direct_unavailable {
        out.push(warn(
            WarningCode::DirectIoUnavailable,
            format!(
                "direct I/O (O_DIRECT) was asked for but the filesystem holding {} does not support it, so I/O went through the page cache: results show memory speed, not the device. Put the test file on a filesystem that supports O_DIRECT (ext4, xfs) or use a block device.",
                i.target
            ),
        ));
    }
}

/// (g) No device counters.
fn no_device_counters_check(i: &CheckInput, out: &mut Vec<Warning>) {
    if i.device.is_none() && i.kind != TargetKind::Null {
        out.push(warn(
            WarningCode::NoDeviceCounters,
            format!(
                "no block device counters for {}: {}. Device-side numbers (transfers, queue length, await, busy) are missing and iosim could not check that the device saw its I/O.",
                i.target,
                i.no_device_reason
                    .as_deref()
                    .unwrap_or("the device was not found in /proc/diskstats")
            ),
        ));
    }
}

/// `loop_backing_cached`: the loop device served reads (or writes that must
/// reach storage) that the device holding its backing file did not see,
/// because the loop driver goes through the host's page cache (`loop/dio` 0),
/// or the backing file is in memory.
fn loop_backing_cached(i: &CheckInput, writes_must_reach: bool) -> Option<Warning> {
    let lb = i.loop_backing.as_ref()?;
    let d = i.device.as_ref()?;
    let dev = format!("/dev/{}", lb.loop_device);
    if lb.in_memory {
        if i.issued_reads + i.issued_writes < MIN_IOS_TO_COMPARE {
            return None;
        }
        return Some(warn(
            WarningCode::LoopBackingCached,
            format!(
                "{} is a loop device over {}, which is in memory (tmpfs): its I/O never reaches storage, so results show memory speed. Put the backing file on a disk filesystem (`losetup --direct-io=on`) or test a real device.",
                lb.loop_device, lb.file
            ),
        ));
    }
    if lb.direct_io {
        return None;
    }
    let (holder_name, h) = (lb.holder_name.as_deref()?, lb.holder.as_ref()?);
    let short = |served: u64, seen: u64| (seen as f64) < DEVICE_SHORTFALL_FRACTION * served as f64;
    let (mut served, mut seen) = (Vec::new(), Vec::new());
    let reads_short = i.issued_reads >= MIN_IOS_TO_COMPARE
        && d.reads >= MIN_IOS_TO_COMPARE
        && short(d.read_bytes, h.read_bytes);
    if reads_short {
        served.push(format!("served {} of reads", format_size(d.read_bytes)));
        seen.push(format!(
            "read {} ({:.0}%)",
            format_size(h.read_bytes),
            pct(h.read_bytes, d.read_bytes)
        ));
    }
    if writes_must_reach
        && i.issued_writes >= MIN_IOS_TO_COMPARE
        && d.writes >= MIN_IOS_TO_COMPARE
        && short(d.write_bytes, h.write_bytes)
    {
        served.push(format!("wrote {}", format_size(d.write_bytes)));
        seen.push(format!(
            "wrote {} ({:.0}%)",
            format_size(h.write_bytes),
            pct(h.write_bytes, d.write_bytes)
        ));
    }
    if served.is_empty() {
        return None;
    }
    // Holes of a sparse backing file read without the device too.
    let holes = if reads_short {
        i.unwritten
            .as_ref()
            .filter(|u| u.share() >= UNWRITTEN_SHARE)
            .map_or("", |_| " (or holes in the file: see unwritten_device)")
    } else {
        ""
    };
    Some(warn(
        WarningCode::LoopBackingCached,
        format!(
            "{} goes through the host's page cache to its backing file {} (loop/dio is 0): it {}, and {holder_name}, which holds the file, {}; the rest was the host's memory{holes}, so results show memory speed. Run `losetup --direct-io=on {dev}` and measure again.",
            lb.loop_device,
            lb.file,
            served.join(" and "),
            seen.join(" and ")
        ),
    ))
}

/// What kept the CPU busy during a run, when it matters ([`cpu_cause`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuCause {
    /// iosim's own threads saturated the cores they could use: the numbers
    /// show the load generator's limit, not the storage's.
    Iosim,
    /// Other processes took CPU iosim needed.
    Others,
    /// The kernel's work on the I/O path (interrupts, kworkers, io_uring
    /// threads) kept a core busy: part of the storage's cost, not an artefact.
    IoPath,
}

impl CpuCause {
    /// The warning code.
    pub const fn code(self) -> WarningCode {
        match self {
            CpuCause::Iosim => WarningCode::CpuBoundIosim,
            CpuCause::Others => WarningCode::CpuTakenByOthers,
            CpuCause::IoPath => WarningCode::CpuBusyIoPath,
        }
    }

    /// The numbers do not measure the storage alone.
    pub const fn untrusted(self) -> bool {
        !matches!(self, CpuCause::IoPath)
    }
}

/// Warning codes that say a run was limited by the CPU (iosim's or taken by
/// others), the stored results' `cpu_bound` included.
pub const CPU_LIMITED_CODES: [WarningCode; 3] = [
    CpuCause::Iosim.code(),
    CpuCause::Others.code(),
    WarningCode::CpuBound,
];

/// Who limited the CPU, if anyone, from who used it (`a`) and the busiest
/// core's busy percentage:
///
/// 1. iosim's own threads used at least [`IOSIM_SATURATED_FRACTION`] of the
///    cores they could use (one per worker, at most the machine's):
///    [`CpuCause::Iosim`].
/// 2. iosim's workers needed CPU they did not get (they waited for a core at
///    least [`WORKER_WAIT_PCT`] of their time, [`WORKER_WAIT_OVERSUBSCRIBED_PCT`]
///    with more workers than cores; where the kernel does not keep that, a
///    core at least [`CPU_BOUND_PCT`] busy stands for it) and
///    other processes used at least [`OTHERS_MIN_CORES`]: [`CpuCause::Others`].
/// 3. Otherwise, iosim's threads were on a core or waiting for one at least
///    [`IOSIM_SATURATED_FRACTION`] of the time (their share of the cores
///    they could use plus the workers' wait): they never waited for the
///    storage, so they were the limit: [`CpuCause::Iosim`].
/// 4. The workers needed CPU, or a core was saturated, and the kernel's I/O
///    path used at least [`IO_PATH_MIN_CORES`] and more than the others:
///    [`CpuCause::IoPath`] (informational).
///
/// A saturated core that iosim's workers did not wait for is no finding: it
/// did not limit them.
pub fn cpu_cause(a: &CpuAttribution, max_core_busy_pct: f64) -> Option<CpuCause> {
    let cores = a.cores.max(1);
    let could_use = if a.workers == 0 {
        cores
    } else {
        a.workers.min(cores)
    } as f64;
    let busy = a.cores_of(a.iosim_pct) / could_use;
    if busy >= IOSIM_SATURATED_FRACTION {
        return Some(CpuCause::Iosim);
    }
    let saturated = max_core_busy_pct >= CPU_BOUND_PCT;
    let wait_limit = if a.workers > cores {
        WORKER_WAIT_OVERSUBSCRIBED_PCT
    } else {
        WORKER_WAIT_PCT
    };
    // Time the hypervisor gave other machines while a worker wanted its
    // core counts as waiting too: the guest's scheduler sees neither.
    let wait = a
        .worker_wait_pct
        .map(|w| w + stolen_pct(busy + w / 100.0, a.steal_pct));
    let needed = wait.map_or(saturated, |w| w >= wait_limit);
    let others = a.cores_of(a.others_pct);
    let io = a.cores_of(a.io_path_pct);
    if needed && others >= OTHERS_MIN_CORES {
        return Some(CpuCause::Others);
    }
    if busy + wait.unwrap_or(0.0) / 100.0 >= IOSIM_SATURATED_FRACTION {
        return Some(CpuCause::Iosim);
    }
    if (needed || saturated) && io >= IO_PATH_MIN_CORES && io > others {
        return Some(CpuCause::IoPath);
    }
    None
}

/// The share of a thread's window (%) lost to the hypervisor (steal), for
/// a thread on a core or waiting for one `runnable` of the window (0 to 1)
/// while the machine's cores were stolen `steal_pct` of the time: steal
/// takes the same share of every moment the thread wanted a core, and
/// neither its run time nor its wait for a core counts it.
fn stolen_pct(runnable: f64, steal_pct: f64) -> f64 {
    let s = (steal_pct / 100.0).clamp(0.0, 0.9);
    runnable.clamp(0.0, 1.0) * s / (1.0 - s) * 100.0
}

/// Up to three names with their shares: `yes 48%, rustc 12%`.
fn shares(list: &[super::procs::TaskShare]) -> String {
    super::procs::shares_text(list, 3)
}

/// The one-line warning of `cause` (the detail is in the result's `cpu.attribution`).
pub fn cpu_warning(cause: CpuCause, a: &CpuAttribution) -> Warning {
    let message = match cause {
        CpuCause::Iosim => {
            let could_use = a.workers.clamp(1, a.cores.max(1));
            format!(
                "iosim's own threads kept {:.1} of the {could_use} core(s) they could use busy{}: the numbers show the load generator's limit, not the storage's",
                a.cores_of(a.iosim_pct),
                match a.worker_wait_pct {
                    Some(w) if w >= 5.0 => format!(" and waited for one {w:.0}% of the time"),
                    _ => String::new(),
                }
            )
        }
        CpuCause::Others => format!(
            "other processes took CPU iosim needed ({} of the machine{}): stop them and measure again",
            shares(&a.others),
            a.worker_wait_pct
                .map(|w| format!("; iosim's threads waited for a core {w:.0}% of the time"))
                .unwrap_or_default()
        ),
        CpuCause::IoPath => {
            let threads = shares(&a.io_path);
            format!(
                "the busy CPU was the kernel's I/O path ({:.0}% of the machine: interrupts {:.0}%{}{threads}): part of the storage's cost, not an artefact",
                a.io_path_pct,
                a.irq_pct,
                if threads.is_empty() { "" } else { ", " },
            )
        }
    };
    warn(cause.code(), message)
}

/// More threads than this many per CPU the process may use is warned of.
pub const THREADS_PER_CPU: usize = 4;

/// `--threads 64` on 2 CPUs: the threads wait for a core, so latency and
/// IOPS show CPU contention as much as the storage. `cpus` are those the
/// process may run on (its affinity and cgroup quota, as
/// `available_parallelism` gives them). The null engine is left alone: its
/// runs measure iosim's CPU cost, which is what oversubscribing shows.
pub fn oversubscribed(spec: &WorkloadSpec, cpus: usize) -> Option<Warning> {
    if spec.engine == crate::workload::EngineKind::Null || cpus == 0 {
        return None;
    }
    let threads: usize = spec
        .targets
        .iter()
        .map(|t| t.threads.unwrap_or(spec.threads) as usize)
        .sum();
    (threads > THREADS_PER_CPU * cpus).then(|| Warning {
        code: WarningCode::ThreadsExceedCpus,
        message: format!(
            "{threads} threads on {cpus} CPU(s) this process may use (more than {THREADS_PER_CPU} per CPU): the threads waited for a core, so latency and IOPS measure CPU contention as much as the storage. Use fewer threads and a deeper queue (--threads {cpus} --qd {}) for the same I/Os in flight",
            (threads * spec.qd as usize).div_ceil(cpus).max(1)
        ),
    })
}

/// Adds to `issued` what the run's other workloads issued to device `key`
/// (its counters hold their I/O too); returns their writes through the page
/// cache (count, bytes), which may not have reached it yet.
fn add_elsewhere(issued: &mut RwStats, elsewhere: &[IssuedElsewhere], key: &str) -> (u64, u64) {
    let mut lingering = (0, 0);
    for e in elsewhere.iter().filter(|e| e.device == key) {
        issued.merge(&e.issued);
        if e.buffered {
            lingering.0 += e.issued.write.ios;
            lingering.1 += e.issued.write.bytes;
        }
    }
    lingering
}

/// Checks the results of a run against the device counters, once per device:
/// the counters are per device, so the I/O of every target on it is added up,
/// with what other workloads run at the same time issued to it (`elsewhere`:
/// device name and their I/O), so that a device two workloads share is
/// compared with both workloads' I/O, not flagged for the other's.
#[allow(clippy::too_many_arguments)]
pub fn self_checks(
    spec: &WorkloadSpec,
    targets: &[Region],
    resolutions: &[Resolution],
    per_target: &[RwStats],
    content: &[TargetContent],
    elsewhere: &[IssuedElsewhere],
    mon: &MonitorReport,
    env: &HostInfo,
) -> Vec<Warning> {
    let mut out: Vec<Warning> = oversubscribed(spec, env.cpus).into_iter().collect();
    let mut done: Vec<String> = Vec::new();
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
        let mut unwritten: Option<Unwritten> = None;
        for (j, u) in targets.iter().enumerate() {
            let same = match (&resolutions[j], &resolutions[i]) {
                (Resolution::Device(a), Resolution::Device(b)) => a.name == b.name,
                _ => i == j,
            };
            if same {
                issued.merge(&per_target[j]);
                size += u.len;
                sparse |= content[j].sparse;
                zero |= content[j].zero_filled;
                // The target with the most never-written places speaks for the device.
                if let Some(u) = &content[j].unwritten {
                    if unwritten.as_ref().is_none_or(|w| u.share() > w.share()) {
                        unwritten = Some(u.clone());
                    }
                }
            }
        }
        let (lingering_writes, lingering_write_bytes) = add_elsewhere(&mut issued, elsewhere, &key);
        let (device_name, device, no_device_reason) = match &resolutions[i] {
            Resolution::Device(d) => (Some(d.name.clone()), mon.device(&d.name).cloned(), None),
            Resolution::NoDevice { reason, .. } => (None, None, Some(reason.clone())),
        };
        let loop_backing = resolutions[i].device().and_then(|d| LoopCheck::of(d, mon));
        let input = CheckInput {
            target: t.path.display().to_string(),
            kind: t.kind,
            cache: spec.cache,
            issued_reads: issued.read.ios,
            issued_read_bytes: issued.read.bytes,
            issued_writes: issued.write.ios,
            issued_write_bytes: issued.write.bytes,
            lingering_writes,
            lingering_write_bytes,
            device_name,
            device,
            no_device_reason,
            target_size: size,
            mem_total_bytes: env.mem_total_bytes,
            file_sparse: sparse,
            // Unwritten on purpose (--fill allocated) and never read: no read was shortcut.
            zero_filled: zero
                && !(spec.fill == crate::workload::FillMode::Allocated && issued.read.ios == 0),
            direct_unavailable: false,
            loop_backing,
            unwritten,
            flushes: (issued.flush.ios > 0).then(|| FlushCheck {
                issued: issued.flush.ios,
                volatile_cache: resolutions[i]
                    .device()
                    .and_then(|d| super::mounts::volatile_write_cache(&d.disk)),
                device_counts_flushes: super::host::kernel_version().is_some_and(|v| v >= (5, 5)),
            }),
        };
        for w in self_check(&input) {
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

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    fn dev(reads: u64, read_bytes: u64, writes: u64, write_bytes: u64) -> DeviceCounters {
        DeviceCounters {
            reads,
            read_bytes,
            writes,
            write_bytes,
            ..Default::default()
        }
    }

    /// A clean direct run: 10 000 reads and 10 000 writes of 4 KiB, seen exactly.
    fn clean() -> CheckInput {
        CheckInput {
            target: "/data/iosim.dat".into(),
            kind: TargetKind::File,
            cache: CacheMode::Direct,
            issued_reads: 10_000,
            issued_read_bytes: 10_000 * 4096,
            issued_writes: 10_000,
            issued_write_bytes: 10_000 * 4096,
            lingering_writes: 0,
            lingering_write_bytes: 0,
            device_name: Some("vda1".into()),
            device: Some(dev(
                10_000,
                10_000 * 4096,
                10_020,
                10_000 * 4096 + 80 * 4096,
            )),
            no_device_reason: None,
            target_size: 64 * GIB,
            mem_total_bytes: 16 * GIB,
            file_sparse: false,
            zero_filled: false,
            direct_unavailable: false,
            loop_backing: None,
            unwritten: None,
            flushes: None,
        }
    }

    fn codes(w: &[Warning]) -> Vec<&str> {
        w.iter().map(|w| w.code.as_str()).collect()
    }

    #[test]
    fn clean_run_has_no_warnings() {
        assert!(
            self_check(&clean()).is_empty(),
            "{:?}",
            self_check(&clean())
        );
    }

    #[test]
    fn cache_answering_reads_is_flagged() {
        let mut i = clean();
        i.cache = CacheMode::Buffered;
        i.issued_writes = 0;
        i.issued_write_bytes = 0;
        i.device = Some(dev(800, 800 * 4096, 0, 0));
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["cache_answered_reads"]);
        assert!(w[0]
            .message
            .contains("a cache answered instead of the device"));
        assert!(w[0].message.contains("--cache direct"));
        // 89% of bytes trips it, 91% does not.
        i.device = Some(dev(8900, 8900 * 4096, 0, 0));
        assert_eq!(codes(&self_check(&i)), vec!["cache_answered_reads"]);
        i.device = Some(dev(9100, 9100 * 4096, 0, 0));
        assert!(self_check(&i).is_empty());
    }

    #[test]
    fn merged_requests_are_not_a_cache() {
        // Sequential reads merged 4:1 by the block layer: fewer requests, same bytes.
        let mut i = clean();
        i.device = Some(dev(2_500, 10_000 * 4096, 10_000, 10_000 * 4096));
        assert!(self_check(&i).is_empty());
    }

    #[test]
    fn too_few_ios_are_not_compared() {
        let mut i = clean();
        i.issued_reads = 10;
        i.issued_read_bytes = 40960;
        i.issued_writes = 10;
        i.issued_write_bytes = 40960;
        i.device = Some(dev(0, 0, 0, 0));
        assert!(self_check(&i).is_empty());
    }

    #[test]
    fn extra_device_writes_are_flagged() {
        let mut i = clean();
        // 39 MiB issued; device wrote 60 MiB (> 43 MiB + 4 MiB).
        i.device = Some(dev(10_000, 10_000 * 4096, 15_000, 60 * MIB));
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["device_extra_writes"]);
        assert!(w[0].message.contains("other processes"));
        // Within tolerance: 39 MiB + 10% + 4 MiB slack = 46.97 MiB.
        i.device = Some(dev(10_000, 10_000 * 4096, 11_000, 46 * MIB));
        assert!(self_check(&i).is_empty());
        // A read-only run with writes on the device.
        let mut r = clean();
        r.issued_writes = 0;
        r.issued_write_bytes = 0;
        r.device = Some(dev(10_000, 10_000 * 4096, 3_000, 12 * MIB));
        assert_eq!(codes(&self_check(&r)), vec!["device_extra_writes"]);
    }

    #[test]
    fn another_process_on_the_device_is_named() {
        // A read corner that completed nothing while another process wrote
        // 300 MiB to the device (a loaded CI run: 0 IOPS against 425).
        let mut i = clean();
        i.issued_reads = 0;
        i.issued_read_bytes = 0;
        i.issued_writes = 0;
        i.issued_write_bytes = 0;
        i.device = Some(dev(0, 0, 2_400, 300 * MIB));
        let w = self_check(&i);
        assert!(codes(&w).contains(&"device_used_by_others"), "{w:?}");
        let m = &w
            .iter()
            .find(|w| w.code == WarningCode::DeviceUsedByOthers)
            .unwrap()
            .message;
        assert!(m.contains("moved 300MiB beyond iosim's own 0B"), "{m}");
        // iosim's 78 MiB and a journal's 40% more: its own.
        let mut j = clean();
        j.device = Some(dev(10_000, 10_000 * 4096, 15_000, 56 * MIB));
        assert!(!codes(&self_check(&j)).contains(&"device_used_by_others"));
        // Unwritten extents converted: about twice iosim's writes, still its own.
        j.device = Some(dev(10_000, 10_000 * 4096, 20_000, 80 * MIB));
        assert!(!codes(&self_check(&j)).contains(&"device_used_by_others"));
        // Three times iosim's bytes beyond them: others.
        j.device = Some(dev(40_000, 160 * MIB, 40_000, 160 * MIB));
        assert!(codes(&self_check(&j)).contains(&"device_used_by_others"));
    }

    #[test]
    fn extra_device_reads_are_flagged() {
        let mut i = clean();
        i.device = Some(dev(30_000, 120 * MIB, 10_000, 10_000 * 4096));
        assert_eq!(codes(&self_check(&i)), vec!["device_extra_reads"]);
    }

    #[test]
    fn buffered_writes_left_in_cache() {
        let mut i = clean();
        i.cache = CacheMode::Buffered;
        i.target_size = 64 * GIB;
        i.issued_reads = 0;
        i.issued_read_bytes = 0;
        i.device = Some(dev(0, 0, 100, 100 * 4096));
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["writes_still_cached"]);
        // With O_DIRECT the same numbers mean something absorbed the writes.
        i.cache = CacheMode::Direct;
        assert_eq!(codes(&self_check(&i)), vec!["writes_missed_device"]);
        i.cache = CacheMode::Writethrough;
        assert_eq!(codes(&self_check(&i)), vec!["writes_missed_device"]);
    }

    #[test]
    fn another_workloads_buffered_writes_may_still_be_cached() {
        // A direct reader beside a buffered writer on one device (a
        // profile's phase): the writer's 40 MiB were still cached at the end.
        let mut i = clean();
        i.issued_writes = 10_240;
        i.issued_write_bytes = 40 * MIB;
        i.lingering_writes = 10_240;
        i.lingering_write_bytes = 40 * MIB;
        i.device = Some(dev(10_000, 10_000 * 4096, 20, 80 * 4096));
        assert!(self_check(&i).is_empty(), "{:?}", self_check(&i));
        // The reader's own direct writes still must reach the device.
        i.issued_writes += 10_000;
        i.issued_write_bytes += 10_000 * 4096;
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["writes_missed_device"]);
        assert!(
            w[0].message.contains("iosim wrote 39.06MiB with O_DIRECT"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn buffered_small_file_is_flagged() {
        let mut i = clean();
        i.cache = CacheMode::Buffered;
        i.target_size = GIB;
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["buffered_fits_in_memory"]);
        assert!(w[0].message.contains("1GiB target"), "{}", w[0].message);
        // Direct with the same size is fine.
        i.cache = CacheMode::Direct;
        assert!(self_check(&i).is_empty());
        // Larger than memory is fine.
        i.cache = CacheMode::Buffered;
        i.target_size = 32 * GIB;
        assert!(self_check(&i).is_empty());
    }

    #[test]
    fn sparse_and_zero_files_are_flagged() {
        let mut i = clean();
        i.file_sparse = true;
        i.zero_filled = true;
        assert_eq!(
            codes(&self_check(&i)),
            vec!["sparse_test_file", "zero_filled_test_file"]
        );
        i.kind = TargetKind::BlockDevice;
        assert_eq!(codes(&self_check(&i)), vec!["zero_filled_test_file"]);
    }

    #[test]
    fn direct_unavailable_is_flagged_and_treated_as_buffered() {
        let mut i = clean();
        i.direct_unavailable = true;
        i.target_size = GIB;
        let c = codes(&self_check(&i))
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>();
        assert_eq!(c, vec!["buffered_fits_in_memory", "direct_io_unavailable"]);
    }

    #[test]
    fn missing_device_is_explained() {
        let mut i = clean();
        i.device = None;
        i.device_name = None;
        i.no_device_reason = Some("in memory, no block device".into());
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["no_device_counters"]);
        assert!(w[0].message.contains("in memory, no block device"));
        i.kind = TargetKind::Null;
        assert!(self_check(&i).is_empty());
    }

    #[test]
    fn warnings_round_trip_through_json() {
        let mut i = clean();
        i.file_sparse = true;
        let w = self_check(&i);
        let s = serde_json::to_string(&w).unwrap();
        assert_eq!(serde_json::from_str::<Vec<Warning>>(&s).unwrap(), w);
    }

    /// Who used the CPU on a 2-core machine (shares of the machine, %).
    fn att(iosim: f64, io: f64, others: f64, wait: Option<f64>, workers: usize) -> CpuAttribution {
        use crate::sysmon::procs::TaskShare;
        CpuAttribution {
            window_s: 5.0,
            cores: 2,
            busy_pct: iosim + io + others,
            iosim_pct: iosim,
            io_path_pct: io,
            irq_pct: io / 2.0,
            others_pct: others,
            steal_pct: 0.0,
            io_path: vec![TaskShare {
                name: "kworker".into(),
                tasks: 3,
                kernel: true,
                pct: io / 2.0,
            }],
            others: vec![
                TaskShare {
                    name: "rustc".into(),
                    tasks: 2,
                    kernel: false,
                    pct: others * 0.6,
                },
                TaskShare {
                    name: "clippy-driver".into(),
                    tasks: 1,
                    kernel: false,
                    pct: others * 0.3,
                },
            ],
            workers,
            worker_wait_pct: wait,
        }
    }

    /// Recorded on a 2-vCPU VM (iosim 4 KiB random reads on a file on a
    /// virtio disk, 5 s): what each case looked like and what it is.
    #[test]
    fn cpu_causes_on_a_small_vm() {
        // Quiet machine, QD 32, one thread: 78% of a core busy, nobody waited.
        assert_eq!(cpu_cause(&att(19.6, 2.8, 2.3, Some(4.5), 1), 77.0), None);
        // Eight threads on two cores: they wait for each other, nobody else is there.
        assert_eq!(cpu_cause(&att(29.4, 3.0, 4.9, Some(18.7), 8), 45.0), None);
        // ... and beside a compiler using a core they waited a little more: still their own doing.
        assert_eq!(cpu_cause(&att(18.0, 0.4, 48.5, Some(19.2), 8), 85.0), None);
        // One worker beside a busy loop pinned to its core: IOPS fell by 20%.
        assert_eq!(
            cpu_cause(&att(16.5, 4.0, 83.6, Some(19.5), 1), 100.0),
            Some(CpuCause::Others)
        );
        // One worker at QD 1 beside compilers: it waited 12%, IOPS fell 10%.
        assert_eq!(cpu_cause(&att(19.8, 7.0, 79.9, Some(11.9), 1), 100.0), None);
        // Two compilers beside it: IOPS fell from 80k to 50k.
        let busy = att(14.5, 3.6, 85.1, Some(39.7), 1);
        assert_eq!(cpu_cause(&busy, 100.0), Some(CpuCause::Others));
        // A saturated core the workers did not wait for limited nothing.
        assert_eq!(cpu_cause(&att(14.5, 3.6, 85.1, Some(2.0), 1), 100.0), None);
        // Without the kernel's run-queue figures a saturated core stands for the need.
        assert_eq!(
            cpu_cause(&att(14.5, 3.6, 85.1, None, 1), 100.0),
            Some(CpuCause::Others)
        );
        assert_eq!(cpu_cause(&att(14.5, 3.6, 85.1, None, 1), 90.0), None);
        // One worker thread using a whole core: the load generator is the limit.
        assert_eq!(
            cpu_cause(&att(48.0, 2.0, 1.0, Some(3.0), 1), 100.0),
            Some(CpuCause::Iosim)
        );
        assert_eq!(cpu_cause(&att(40.0, 2.0, 1.0, Some(3.0), 1), 100.0), None);
        // 0.88 of its core, and waiting for it 14% of the time: never waiting
        // for the storage, with too little taken by others to blame them.
        let runnable = att(43.8, 11.8, 41.4, Some(13.6), 1);
        assert_eq!(cpu_cause(&runnable, 93.0), Some(CpuCause::Iosim));
        assert!(
            cpu_warning(CpuCause::Iosim, &runnable)
                .message
                .starts_with("iosim's own threads kept 0.9 of the 1 core(s) they could use busy and waited for one 14% of the time: "),
            "{}",
            cpu_warning(CpuCause::Iosim, &runnable).message
        );
        // Four threads can use both cores: 1.8 of 2 is saturated, 1.7 not.
        assert_eq!(
            cpu_cause(&att(90.0, 5.0, 1.0, Some(20.0), 4), 100.0),
            Some(CpuCause::Iosim)
        );
        assert_eq!(cpu_cause(&att(80.0, 5.0, 1.0, Some(5.0), 4), 100.0), None);
        // CI on a loaded host: the null engine's one worker ran 0.76 of a
        // core and waited 1.8% for it, while the hypervisor stole 18% of the
        // machine: the stolen time was the worker's too, so others (a test
        // beside it 34%, the other virtual machines 18%) took what it needed.
        let mut stolen = att(38.2, 2.2, 54.5, Some(1.76), 1);
        stolen.steal_pct = 17.8;
        assert_eq!(cpu_cause(&stolen, 94.0), Some(CpuCause::Others));
        // The same without steal is nobody's limit.
        stolen.steal_pct = 0.0;
        assert_eq!(cpu_cause(&stolen, 94.0), None);
        // A thread that mostly sleeps loses little to steal.
        assert!(stolen_pct(0.1, 20.0) < 3.0);
        // A loop device's kworkers and interrupts kept a core busy: informational.
        let io = att(20.0, 45.0, 2.0, Some(15.0), 1);
        let c = cpu_cause(&io, 100.0);
        assert_eq!(c, Some(CpuCause::IoPath));
        assert!(!CpuCause::IoPath.untrusted());
        assert!(CpuCause::Iosim.untrusted() && CpuCause::Others.untrusted());
        // Others below a quarter core are not blamed, even when the workers waited.
        assert_eq!(cpu_cause(&att(30.0, 3.0, 10.0, Some(30.0), 8), 100.0), None);
    }

    #[test]
    fn cpu_warnings_are_one_short_line() {
        let cases = [
            (CpuCause::Iosim, att(90.0, 5.0, 1.0, Some(20.0), 4)),
            (CpuCause::Others, att(14.5, 3.6, 85.1, Some(39.7), 1)),
            (CpuCause::Others, att(14.5, 3.6, 85.1, None, 1)),
            (CpuCause::IoPath, att(20.0, 45.0, 2.0, Some(15.0), 1)),
        ];
        for (cause, a) in &cases {
            let w = cpu_warning(*cause, a);
            assert_eq!(w.code, cause.code());
            assert!(
                w.message.len() <= 170,
                "{} chars: {}",
                w.message.len(),
                w.message
            );
            assert!(!w.message.contains('\n'));
        }
        let w = cpu_warning(CpuCause::Others, &cases[1].1);
        assert!(
            w.message.starts_with("other processes took CPU iosim needed (rustc 51%, clippy-driver 26% of the machine; iosim's threads waited for a core 40% of the time)"),
            "{}",
            w.message
        );
        let w = cpu_warning(CpuCause::Iosim, &cases[0].1);
        assert!(
            w.message
                .starts_with("iosim's own threads kept 1.8 of the 2 core(s) they could use busy"),
            "{}",
            w.message
        );
        let w = cpu_warning(CpuCause::IoPath, &cases[3].1);
        assert!(
            w.message
                .contains("kernel's I/O path (45% of the machine: interrupts 22%, kworker 22%)"),
            "{}",
            w.message
        );
        assert!(CPU_LIMITED_CODES.contains(&WarningCode::CpuBound));
    }

    /// A direct random-read run on loop0, whose backing file is on vda.
    fn on_loop(direct_io: bool, holder: Option<DeviceCounters>) -> CheckInput {
        let mut i = clean();
        i.target = "/dev/loop0".into();
        i.kind = TargetKind::BlockDevice;
        i.issued_writes = 0;
        i.issued_write_bytes = 0;
        i.device_name = Some("loop0".into());
        i.device = Some(dev(10_000, 10_000 * 4096, 0, 0));
        i.loop_backing = Some(LoopCheck {
            loop_device: "loop0".into(),
            file: "/var/tmp/disk.img".into(),
            direct_io,
            in_memory: false,
            holder_name: Some("vda".into()),
            holder,
        });
        i
    }

    #[test]
    fn flushes_a_volatile_cache_never_saw_are_named() {
        let mut i = clean();
        i.flushes = Some(FlushCheck {
            issued: 500,
            volatile_cache: Some(true),
            device_counts_flushes: true,
        });
        // The device counted none: named, with the count.
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["flushes_missed_device"]);
        assert!(
            w[0].message.starts_with("iosim completed 500 flushes"),
            "{}",
            w[0].message
        );
        // It counted some (fewer is fine: concurrent flushes share one).
        let mut seen = i.clone();
        seen.device.as_mut().unwrap().flushes = 40;
        assert!(self_check(&seen).is_empty());
        // A write-through device gets no flushes from the kernel; an old
        // kernel counts none; a handful of flushes is not compared.
        for f in [
            FlushCheck {
                volatile_cache: Some(false),
                ..i.flushes.clone().unwrap()
            },
            FlushCheck {
                volatile_cache: None,
                ..i.flushes.clone().unwrap()
            },
            FlushCheck {
                device_counts_flushes: false,
                ..i.flushes.clone().unwrap()
            },
            FlushCheck {
                issued: 5,
                ..i.flushes.clone().unwrap()
            },
        ] {
            let mut j = i.clone();
            j.flushes = Some(f);
            assert!(self_check(&j).is_empty());
        }
    }

    #[test]
    fn loop_over_a_cached_file_is_named() {
        // The DBA's case: the loop device saw every read, vda almost none.
        let i = on_loop(false, Some(dev(40, 40 * 4096, 12, 48 * 4096)));
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["loop_backing_cached"]);
        let m = &w[0].message;
        assert!(m.starts_with("loop0 goes through the host's page cache to its backing file /var/tmp/disk.img (loop/dio is 0): it served 39.06MiB of reads, and vda, which holds the file, read 160KiB (0%)"), "{m}");
        assert!(m.contains("`losetup --direct-io=on /dev/loop0`"), "{m}");
        // 89% of the bytes reached vda: still named; 91%: not.
        let i = on_loop(false, Some(dev(8_900, 8_900 * 4096, 0, 0)));
        assert_eq!(codes(&self_check(&i)), vec!["loop_backing_cached"]);
        let i = on_loop(false, Some(dev(9_100, 9_100 * 4096, 0, 0)));
        assert!(self_check(&i).is_empty());
        // With direct I/O the loop driver bypasses the cache: not judged.
        let i = on_loop(true, Some(dev(0, 0, 0, 0)));
        assert!(self_check(&i).is_empty());
        // No counters for the holder, or too few reads: nothing to compare.
        assert!(self_check(&on_loop(false, None)).is_empty());
        let mut i = on_loop(false, Some(dev(0, 0, 0, 0)));
        i.issued_reads = 10;
        i.issued_read_bytes = 40960;
        i.device = Some(dev(10, 40960, 0, 0));
        assert!(self_check(&i).is_empty());
    }

    #[test]
    fn loop_writes_that_stay_in_the_host_cache_are_named() {
        let mut i = on_loop(false, Some(dev(10_000, 10_000 * 4096, 0, 0)));
        i.issued_writes = 5_000;
        i.issued_write_bytes = 5_000 * 4096;
        i.device = Some(dev(10_000, 10_000 * 4096, 5_000, 5_000 * 4096));
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["loop_backing_cached"]);
        assert!(
            w[0].message
                .contains("it wrote 19.53MiB, and vda, which holds the file, wrote 0B (0%)"),
            "{}",
            w[0].message
        );
        // Buffered writes may stay in memory: writes_still_cached's business.
        i.cache = CacheMode::Buffered;
        i.target_size = 64 * GIB;
        assert!(!codes(&self_check(&i)).contains(&"loop_backing_cached"));
    }

    #[test]
    fn loop_over_a_file_in_memory_is_named_whatever_dio_says() {
        for dio in [false, true] {
            let mut i = on_loop(dio, None);
            let lb = i.loop_backing.as_mut().unwrap();
            lb.in_memory = true;
            lb.holder_name = None;
            let w = self_check(&i);
            assert_eq!(codes(&w), vec!["loop_backing_cached"]);
            assert!(
                w[0].message.contains("in memory (tmpfs)"),
                "{}",
                w[0].message
            );
        }
    }

    #[test]
    fn never_written_device_is_named() {
        let mut i = on_loop(true, Some(dev(10_000, 10_000 * 4096, 0, 0)));
        i.target_size = 64 * MIB;
        i.unwritten = Some(Unwritten {
            evidence: UnwrittenEvidence::BackingHoles("/var/tmp/disk.img".into()),
            sampled: 64,
            unwritten: 64,
        });
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["unwritten_device"]);
        assert_eq!(
            w[0].message,
            "/dev/loop0: 64 of 64 places sampled across the 64MiB iosim used are holes in its backing file /var/tmp/disk.img: holes read as zeros without touching storage, so read results show holes, not the device. Write it whole first (`iosim precondition /dev/loop0 --allow-destroy`) and measure again."
        );
        // Zeros read back from a device that is not a loop device.
        i.loop_backing = None;
        i.unwritten = Some(Unwritten {
            evidence: UnwrittenEvidence::ZeroBlocks,
            sampled: 64,
            unwritten: 16,
        });
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["unwritten_device"]);
        assert!(w[0].message.contains("16 of 64 places"), "{}", w[0].message);
        assert!(
            w[0].message.contains("read back as zeros"),
            "{}",
            w[0].message
        );
        // Under a quarter: not named.
        i.unwritten.as_mut().unwrap().unwritten = 15;
        assert!(self_check(&i).is_empty());
        // A run that only writes reads no holes.
        i.unwritten.as_mut().unwrap().unwritten = 64;
        i.issued_reads = 0;
        i.issued_read_bytes = 0;
        i.issued_writes = 10_000;
        i.issued_write_bytes = 10_000 * 4096;
        i.device = Some(dev(0, 0, 10_000, 10_000 * 4096));
        assert!(self_check(&i).is_empty());
    }

    #[test]
    fn cached_loop_over_holes_says_both() {
        let mut i = on_loop(false, Some(dev(0, 0, 0, 0)));
        i.unwritten = Some(Unwritten {
            evidence: UnwrittenEvidence::BackingHoles("/var/tmp/disk.img".into()),
            sampled: 64,
            unwritten: 64,
        });
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["loop_backing_cached", "unwritten_device"]);
        assert!(w[0].message.contains(
            "the rest was the host's memory (or holes in the file: see unwritten_device)"
        ));
    }

    #[test]
    fn warning_codes_read_and_write_their_text() {
        use WarningCode::*;
        let all = [
            CacheAnsweredReads,
            DeviceExtraReads,
            DeviceExtraWrites,
            DeviceUsedByOthers,
            WritesMissedDevice,
            WritesStillCached,
            BufferedFitsInMemory,
            SparseTestFile,
            ZeroFilledTestFile,
            UnwrittenDevice,
            DirectIoUnavailable,
            NoDeviceCounters,
            LoopBackingCached,
            CpuBoundIosim,
            CpuTakenByOthers,
            CpuBusyIoPath,
            CpuBound,
            WorkersStartedLate,
            WorkersStoppedLate,
            Other("from_another_version".into()),
        ];
        for c in all {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<WarningCode>(&json).unwrap(), c);
        }
        // A known text never reads back as `Other`.
        let known: WarningCode = serde_json::from_str("\"cpu_bound\"").unwrap();
        assert_eq!(known, CpuBound);
    }

    #[test]
    fn many_more_threads_than_cpus_are_warned_of_but_not_on_the_null_engine() {
        let mut spec = WorkloadSpec {
            threads: 64,
            qd: 1,
            ..WorkloadSpec::default()
        };
        spec.targets = vec![crate::workload::TargetSpec::new("/data/t.dat", None)];
        let w = oversubscribed(&spec, 2).expect("64 threads on 2 CPUs");
        assert_eq!(w.code, WarningCode::ThreadsExceedCpus);
        assert!(
            w.message.contains("64 threads on 2 CPU(s)"),
            "{}",
            w.message
        );
        assert!(w.message.contains("--threads 2 --qd 32"), "{}", w.message);
        spec.threads = 8;
        assert!(oversubscribed(&spec, 2).is_none());
        spec.threads = 64;
        spec.engine = crate::workload::EngineKind::Null;
        assert!(oversubscribed(&spec, 2).is_none());
    }
}
