//! Self-checks: does what the kernel saw match what iosim issued, and is
//! anything making the result measure something other than storage?
//!
//! [`self_check`] is pure: the runner gathers a [`CheckInput`] (issued I/O,
//! the device's whole-run counters for the same window, CPU, file facts) and
//! gets back plain-words [`Warning`]s. [`file_is_sparse`] and
//! [`looks_zero_filled`] gather the file facts.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::diskstats::DeviceCounters;
use super::host::HostInfo;
use super::mounts::Resolution;
use super::sampler::MonitorReport;
use crate::stats::RwStats;
use crate::target::{PreparedTarget, TargetKind};
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

/// Comparisons need enough I/O to mean anything: below this many issued I/Os
/// in a direction, the device/issued comparisons are skipped.
pub const MIN_IOS_TO_COMPARE: u64 = 64;

/// A core at or above this busy percentage (user + system + irq + steal over
/// the whole run) is saturated: the run may measure the CPU, not storage.
pub const CPU_BOUND_PCT: f64 = 95.0;

/// A buffered test file smaller than this multiple of physical memory can sit
/// wholly in the page cache.
pub const BUFFERED_MEMORY_FACTOR: f64 = 1.0;

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
    /// Busiest core's busy percentage over the run.
    pub max_core_busy_pct: f64,
    /// That core's number.
    pub busiest_core: Option<usize>,
    /// The test file has holes.
    pub file_sparse: bool,
    /// The test file reads back as zeros.
    pub zero_filled: bool,
    /// O_DIRECT was asked for but the filesystem refused it.
    pub direct_unavailable: bool,
}

/// A finding, in plain words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Stable identifier (snake_case), for scripts.
    pub code: String,
    /// What it means and what to do.
    pub message: String,
}

fn warn(code: &str, message: String) -> Warning {
    Warning {
        code: code.to_string(),
        message,
    }
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// Runs every check. The order of the result is fixed: device-level findings,
/// then cache, CPU, file content, and missing counters.
pub fn self_check(i: &CheckInput) -> Vec<Warning> {
    let mut out = Vec::new();
    let dev_name = i.device_name.as_deref().unwrap_or("the device");
    let direct = i.cache.is_direct() && !i.direct_unavailable;
    let writes_must_reach = direct || i.cache.is_sync();

    if let Some(d) = &i.device {
        // (a) Reads: a cache answered.
        if i.issued_reads >= MIN_IOS_TO_COMPARE
            && (d.read_bytes as f64) < DEVICE_SHORTFALL_FRACTION * i.issued_read_bytes as f64
        {
            out.push(warn(
                "cache_answered_reads",
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
                "device_extra_reads",
                format!(
                    "{dev_name} read {} while iosim read {}: {}other processes using {dev_name} count too, so device numbers are not iosim's alone.",
                    format_size(d.read_bytes),
                    format_size(i.issued_read_bytes),
                    if direct { "" } else { "readahead fetched data iosim never asked for, and " }
                ),
            ));
        }
        // (c) Writes beyond what was issued.
        if d.write_bytes as f64
            > (1.0 + DEVICE_EXCESS_FRACTION) * i.issued_write_bytes as f64
                + DEVICE_EXCESS_SLACK_BYTES as f64
        {
            out.push(warn(
                "device_extra_writes",
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
        // Writes that did not reach the device.
        if i.issued_writes >= MIN_IOS_TO_COMPARE
            && (d.write_bytes as f64) < DEVICE_SHORTFALL_FRACTION * i.issued_write_bytes as f64
        {
            if writes_must_reach {
                out.push(warn(
                    "writes_missed_device",
                    format!(
                        "{dev_name} wrote {} while iosim wrote {} with {}: writes that must reach stable storage did not reach this device. Something between them absorbed them (a loop device over a cached file, a filesystem that silently buffers O_DIRECT); write results do not show the device.",
                        format_size(d.write_bytes),
                        format_size(i.issued_write_bytes),
                        if direct { "O_DIRECT" } else { "O_DSYNC" },
                    ),
                ));
            } else {
                out.push(warn(
                    "writes_still_cached",
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

    // (b) Buffered mode, file fits in memory.
    if !direct
        && i.mem_total_bytes > 0
        && i.target_size > 0
        && (i.target_size as f64) < BUFFERED_MEMORY_FACTOR * i.mem_total_bytes as f64
        && i.issued_reads + i.issued_writes > 0
    {
        out.push(warn(
            "buffered_fits_in_memory",
            format!(
                "buffered I/O ({}) on a {} target with {} of memory: the whole target can sit in the page cache, so results can show memory speed, not storage. Use --cache direct, or a target larger than memory.",
                i.cache.name(),
                format_size(i.target_size),
                format_size(i.mem_total_bytes)
            ),
        ));
    }

    // (d) CPU-bound.
    if i.max_core_busy_pct >= CPU_BOUND_PCT {
        let core = i
            .busiest_core
            .map(|c| format!("core {c}"))
            .unwrap_or_else(|| "a core".into());
        out.push(warn(
            "cpu_bound",
            format!(
                "{core} was {:.0}% busy (iosim and any other processes together): the run may be limited by the CPU, not storage. Stop other CPU-heavy work, or use fewer threads or a smaller queue depth per core, larger blocks, the io_uring engine with fewer system calls (--submit-batch 0 submits all free slots at once), or more cores (--cpus); check which interrupts land on {core}.",
                i.max_core_busy_pct
            ),
        ));
    }

    // (e) File content.
    if i.kind == TargetKind::File && i.file_sparse {
        out.push(warn(
            "sparse_test_file",
            format!(
                "{} has holes (fewer blocks allocated than its size): reads of holes return zeros without touching the device, and first writes allocate blocks. Recreate it with --fill random (or check whether the filesystem compresses it).",
                i.target
            ),
        ));
    }
    if i.zero_filled {
        out.push(warn(
            "zero_filled_test_file",
            format!(
                "{} reads back as zeros: unwritten extents are answered by the filesystem without device I/O, and devices or hypervisors that compress, deduplicate or thin-provision can shortcut zeros. Recreate it with --fill random.",
                i.target
            ),
        ));
    }

    // (f) Direct requested, not possible.
    if i.direct_unavailable {
        out.push(warn(
            "direct_io_unavailable",
            format!(
                "direct I/O (O_DIRECT) was asked for but the filesystem holding {} does not support it, so I/O went through the page cache: results show memory speed, not the device. Put the test file on a filesystem that supports O_DIRECT (ext4, xfs) or use a block device.",
                i.target
            ),
        ));
    }

    // (g) No device counters.
    if i.device.is_none() && i.kind != TargetKind::Null {
        out.push(warn(
            "no_device_counters",
            format!(
                "no block device counters for {}: {}. Device-side numbers (transfers, queue length, await, busy) are missing and iosim could not check that the device saw its I/O.",
                i.target,
                i.no_device_reason
                    .as_deref()
                    .unwrap_or("the device was not found in /proc/diskstats")
            ),
        ));
    }
    out
}

/// True when `path` (a regular file) has fewer bytes allocated than its size:
/// it has holes (or the filesystem compresses it). Block devices are never sparse.
pub fn file_is_sparse(path: &Path) -> io::Result<bool> {
    let m = std::fs::metadata(path)?;
    if !m.file_type().is_file() {
        return Ok(false);
    }
    Ok(m.blocks().saturating_mul(512) < m.size())
}

/// Reads `samples` 4 KiB blocks spread evenly over `path` (first and last
/// included) and says whether every one is all zeros. An empty file is not
/// zero-filled. Uses ordinary buffered `pread`s: a few pages, negligible next
/// to a run.
pub fn looks_zero_filled(path: &Path, samples: usize) -> io::Result<bool> {
    const BLOCK: u64 = 4096;
    let f = File::open(path)?;
    let m = f.metadata()?;
    let size = if m.file_type().is_block_device() {
        crate::target::device_size(&f)?
    } else {
        m.len()
    };
    if size == 0 {
        return Ok(false);
    }
    let samples = samples.max(1) as u64;
    let last = size.saturating_sub(1) / BLOCK * BLOCK;
    let mut buf = vec![0u8; BLOCK as usize];
    for k in 0..samples {
        let off = if samples == 1 {
            0
        } else {
            (last / BLOCK * k / (samples - 1)) * BLOCK
        };
        let n = f.read_at(&mut buf, off)?;
        if buf[..n].iter().any(|&b| b != 0) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Checks the results of a run against the device counters, once per device:
/// the counters are per device, so the I/O of every target on it is added up,
/// with what other workloads run at the same time issued to it (`elsewhere`:
/// device name and their I/O), so that a device two workloads share is
/// compared with both workloads' I/O, not flagged for the other's.
#[allow(clippy::too_many_arguments)]
pub fn self_checks(
    spec: &WorkloadSpec,
    targets: &[PreparedTarget],
    resolutions: &[Resolution],
    per_target: &[RwStats],
    content: &[(bool, bool)],
    elsewhere: &[(String, RwStats)],
    mon: &MonitorReport,
    max_core: f64,
    env: &HostInfo,
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
        // Other workloads of the run on the same device: its counters hold their I/O too.
        for (_, s) in elsewhere.iter().filter(|(d, _)| *d == key) {
            issued.merge(s);
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
    use std::io::Write;

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
            max_core_busy_pct: 40.0,
            busiest_core: Some(1),
            file_sparse: false,
            zero_filled: false,
            direct_unavailable: false,
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
    fn cpu_bound_names_the_core() {
        let mut i = clean();
        i.max_core_busy_pct = 97.2;
        i.busiest_core = Some(1);
        let w = self_check(&i);
        assert_eq!(codes(&w), vec!["cpu_bound"]);
        assert!(
            w[0].message.starts_with("core 1 was 97% busy"),
            "{}",
            w[0].message
        );
        i.max_core_busy_pct = 94.9;
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
        i.max_core_busy_pct = 99.0;
        let w = self_check(&i);
        let s = serde_json::to_string(&w).unwrap();
        assert_eq!(serde_json::from_str::<Vec<Warning>>(&s).unwrap(), w);
    }

    #[test]
    fn sparse_file_detection() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sparse");
        let f = File::create(&p).unwrap();
        f.set_len(16 * MIB).unwrap();
        assert!(file_is_sparse(&p).unwrap());
        let q = dir.path().join("dense");
        let mut f = File::create(&q).unwrap();
        f.write_all(&vec![7u8; 256 * 1024]).unwrap();
        f.sync_all().unwrap();
        assert!(!file_is_sparse(&q).unwrap());
        assert!(file_is_sparse(&dir.path().join("none")).is_err());
    }

    #[test]
    fn zero_fill_detection() {
        let dir = tempfile::tempdir().unwrap();
        let z = dir.path().join("zeros");
        std::fs::write(&z, vec![0u8; 1 << 20]).unwrap();
        assert!(looks_zero_filled(&z, 8).unwrap());
        assert!(looks_zero_filled(&z, 1).unwrap());
        // Data only in the last block is found: the last block is sampled.
        let mut v = vec![0u8; (1 << 20) + 100];
        *v.last_mut().unwrap() = 1;
        let t = dir.path().join("tail");
        std::fs::write(&t, &v).unwrap();
        assert!(!looks_zero_filled(&t, 4).unwrap());
        let r = dir.path().join("random");
        let data: Vec<u8> = (0..(1u32 << 20))
            .map(|x| (x.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        std::fs::write(&r, data).unwrap();
        assert!(!looks_zero_filled(&r, 8).unwrap());
        let e = dir.path().join("empty");
        std::fs::write(&e, b"").unwrap();
        assert!(!looks_zero_filled(&e, 8).unwrap());
    }
}
