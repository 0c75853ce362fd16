//! What a test target holds before a run: a test file's holes and zeros,
//! a block device's never-written places ([`examine`]). Reads that such
//! places answer without the media make storage look faster than it is;
//! the self-checks ([`super::check`]) name them.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use super::mounts::Resolution;

/// How many places (4 KiB blocks spread evenly over the region used, first
/// and last included) of a block device are looked at for never-written
/// blocks before a run: 64 holes looked up, or 64 direct 4 KiB reads, take
/// milliseconds.
pub const DEVICE_SAMPLES: usize = 64;

/// A block device with at least this share of its sampled places never
/// written is named `unwritten_device`: a quarter of the reads answered
/// without the media already lifts IOPS by a third.
pub const UNWRITTEN_SHARE: f64 = 0.25;

/// How iosim saw that places of a block device were never written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnwrittenEvidence {
    /// A loop device: the places are holes (or unwritten extents) of this
    /// backing file, found with `SEEK_DATA` without reading anything.
    BackingHoles(String),
    /// The places read back as all-zero 4 KiB blocks (direct reads).
    ZeroBlocks,
}

/// What the sampled places of a block device's region showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unwritten {
    /// How it was seen.
    pub evidence: UnwrittenEvidence,
    /// Places looked at.
    pub sampled: usize,
    /// Of them, never written (holes or all zeros).
    pub unwritten: usize,
}

impl Unwritten {
    /// Share of the sampled places never written, 0 to 1.
    pub fn share(&self) -> f64 {
        if self.sampled == 0 {
            0.0
        } else {
            self.unwritten as f64 / self.sampled as f64
        }
    }
}

/// What a target holds, looked at before the run: sparse or zero-filled test
/// files and never-written devices make reads faster than storage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetContent {
    /// The test file has holes.
    pub sparse: bool,
    /// The test file reads back as zeros.
    pub zero_filled: bool,
    /// A block device: its sampled places never written.
    pub unwritten: Option<Unwritten>,
}

/// What a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A regular file.
    File,
    /// A block device.
    BlockDevice,
    /// No storage (the null engine).
    Null,
}

/// The part of a prepared target the checks look at
/// (`crate::target::PreparedTarget::region`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region<'a> {
    /// Path as given.
    pub path: &'a Path,
    /// File, block device or null.
    pub kind: TargetKind,
    /// First byte of the region used.
    pub start: u64,
    /// Length of the region used.
    pub len: u64,
}

/// True when `path` (a regular file) has fewer bytes allocated than its size:
/// it has holes (or the filesystem compresses it). Block devices are never sparse.
pub fn file_is_sparse(path: &Path) -> io::Result<bool> {
    let m = std::fs::metadata(path)?;
    if !m.file_type().is_file() {
        return Ok(false);
    }
    Ok(crate::platform::fs::allocated_bytes(&m) < m.len())
}

/// Size of the blocks looked at for zeros and holes.
const SAMPLE_BLOCK: u64 = 4096;

/// Offsets of `samples` 4 KiB blocks spread evenly over `[start, start +
/// len)`, the first and last block included; none when `len` is 0.
fn sample_offsets(start: u64, len: u64, samples: usize) -> impl Iterator<Item = u64> {
    let first = start / SAMPLE_BLOCK;
    let last = start.saturating_add(len).saturating_sub(1) / SAMPLE_BLOCK;
    let n = if len == 0 { 0 } else { samples.max(1) as u64 };
    (0..n).map(move |k| {
        let blk = if n == 1 {
            first
        } else {
            first + (last - first) * k / (n - 1)
        };
        blk * SAMPLE_BLOCK
    })
}

/// Reads `samples` 4 KiB blocks spread evenly over `path` (first and last
/// included) and says whether every one is all zeros. An empty file is not
/// zero-filled. Uses ordinary buffered `pread`s for files: a few pages,
/// negligible next to a run.
pub fn looks_zero_filled(path: &Path, samples: usize) -> io::Result<bool> {
    let size = target_size(path)?;
    let (zero, sampled) = zero_blocks(path, 0, size, samples)?;
    Ok(sampled > 0 && zero == sampled)
}

/// Size of a file or block device, bytes.
fn target_size(path: &Path) -> io::Result<u64> {
    let f = File::open(path)?;
    let m = f.metadata()?;
    if crate::platform::fs::is_device(path, &m) {
        crate::platform::fs::device_size(&f)
    } else {
        Ok(m.len())
    }
}

/// Of `samples` 4 KiB blocks spread evenly over `[start, start + len)` of
/// `path`, how many read back all zeros: (zero, sampled). Only reads. A block
/// device is read with O_DIRECT (nothing enters or comes from its page cache,
/// no readahead), falling back to buffered reads where O_DIRECT is refused;
/// a block past the end reads as nothing, which counts as zeros.
pub fn zero_blocks(
    path: &Path,
    start: u64,
    len: u64,
    samples: usize,
) -> io::Result<(usize, usize)> {
    let device = crate::platform::fs::path_is_device(path);
    let direct = device
        .then(|| {
            let how = crate::platform::fs::OpenHow {
                direct: true,
                ..Default::default()
            };
            crate::platform::fs::open(path, how).ok()
        })
        .flatten();
    let (f, direct) = match direct {
        Some(f) => (f, true),
        None => (File::open(path)?, false),
    };
    let mut aligned = crate::buf::AlignedBuf::new(SAMPLE_BLOCK as usize);
    let mut plain = vec![0u8; SAMPLE_BLOCK as usize];
    let buf = if direct {
        &mut aligned.as_mut_slice()[..SAMPLE_BLOCK as usize]
    } else {
        &mut plain[..]
    };
    let (mut zero, mut sampled) = (0, 0);
    for off in sample_offsets(start, len, samples) {
        let n = crate::platform::fs::read_at(&f, buf, off)?;
        sampled += 1;
        if buf[..n].iter().all(|&b| b == 0) {
            zero += 1;
        }
    }
    Ok((zero, sampled))
}

/// Of `samples` places (4 KiB blocks spread evenly over `[start, start +
/// len)` of the file `path`, first and last included), how many are holes,
/// unwritten extents or past its end: places that read as zeros without any
/// device I/O: (holes, sampled). Found with `lseek(SEEK_DATA)`, reading nothing; a filesystem
/// without it reports every place as data.
pub fn count_holes(
    path: &Path,
    start: u64,
    len: u64,
    samples: usize,
) -> io::Result<(usize, usize)> {
    let f = File::open(path)?;
    let (mut holes, mut sampled) = (0, 0);
    for off in sample_offsets(start, len, samples) {
        sampled += 1;
        holes += usize::from(crate::platform::fs::is_hole(&f, off)?);
    }
    Ok((holes, sampled))
}

/// Regions of block devices (path, start, length) whose sampled places
/// were found written (under [`UNWRITTEN_SHARE`] zeros) by this process. iosim
/// never discards, so they stay written: the many short runs of a sweep or a
/// qualification on one device read its places once, not once per run (64
/// reads are half a second on a disk that seeks).
static WRITTEN_REGIONS: Mutex<Vec<(PathBuf, u64, u64, Unwritten)>> = Mutex::new(Vec::new());

/// Zero blocks at [`DEVICE_SAMPLES`] places of a block device target's
/// region, remembered once the region is found written.
fn sampled_zeros(t: &Region) -> Option<Unwritten> {
    let key = |w: &(PathBuf, u64, u64, Unwritten)| w.0 == t.path && w.1 == t.start && w.2 == t.len;
    if let Some(known) = WRITTEN_REGIONS
        .lock()
        .ok()
        .and_then(|v| v.iter().find(|w| key(w)).map(|w| w.3.clone()))
    {
        return Some(known);
    }
    let (zero, sampled) = zero_blocks(t.path, t.start, t.len, DEVICE_SAMPLES).ok()?;
    let u = Unwritten {
        evidence: UnwrittenEvidence::ZeroBlocks,
        sampled,
        unwritten: zero,
    };
    if u.share() < UNWRITTEN_SHARE {
        if let Ok(mut v) = WRITTEN_REGIONS.lock() {
            v.push((t.path.to_path_buf(), t.start, t.len, u.clone()));
        }
    }
    Some(u)
}

/// What `t` holds, looked at before a run: a test file's holes and zeros
/// ([`file_is_sparse`], [`looks_zero_filled`]); for a block device,
/// [`DEVICE_SAMPLES`] places of its region: holes of the backing file for a
/// loop device (no I/O on the device, whose counters the run compares), zero
/// blocks read directly for any other device. What cannot be looked at is
/// left out.
pub fn examine(t: &Region, res: &Resolution) -> TargetContent {
    match t.kind {
        TargetKind::File => TargetContent {
            sparse: file_is_sparse(t.path).unwrap_or(false),
            zero_filled: looks_zero_filled(t.path, 16).unwrap_or(false),
            unwritten: None,
        },
        TargetKind::BlockDevice => {
            let dev = res.device();
            let unwritten =
                match dev.and_then(|d| d.loop_backing.as_ref().zip(d.backing_file.as_ref())) {
                    // A deleted backing file cannot be opened by its name: not looked at.
                    Some((lb, file)) => count_holes(
                        Path::new(file),
                        lb.offset.saturating_add(t.start),
                        t.len,
                        DEVICE_SAMPLES,
                    )
                    .ok()
                    .map(|(holes, sampled)| Unwritten {
                        evidence: UnwrittenEvidence::BackingHoles(file.clone()),
                        sampled,
                        unwritten: holes,
                    }),
                    None => sampled_zeros(t),
                };
            TargetContent {
                unwritten,
                ..Default::default()
            }
        }
        TargetKind::Null => TargetContent::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_os = "linux")]
    use crate::sysmon::test_loop::LoopGuard;
    #[cfg(target_os = "linux")]
    use std::io::Write;

    const MIB: u64 = 1 << 20;

    #[cfg(target_os = "linux")]
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

    #[test]
    fn sample_places_cover_the_region() {
        let v: Vec<u64> = sample_offsets(0, 1 << 20, 4).collect();
        assert_eq!(v, vec![0, 85 * 4096, 170 * 4096, 255 * 4096]);
        // A region that starts inside: its first and last blocks.
        let v: Vec<u64> = sample_offsets(64 << 10, 128 << 10, 2).collect();
        assert_eq!(v, vec![64 << 10, (192 << 10) - 4096]);
        assert_eq!(sample_offsets(0, 4096, 8).count(), 8);
        assert_eq!(sample_offsets(0, 0, 8).count(), 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn holes_and_zero_blocks_in_a_region() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("half");
        let f = File::create(&p).unwrap();
        f.set_len(16 * MIB).unwrap();
        // Random data in the first half only.
        let data: Vec<u8> = (0..(8 * MIB) as u32)
            .map(|x| (x.wrapping_mul(2_654_435_761) >> 24) as u8 | 1)
            .collect();
        crate::platform::fs::write_all_at(&f, &data, 0).unwrap();
        f.sync_all().unwrap();
        let (holes, n) = count_holes(&p, 0, 16 * MIB, 16).unwrap();
        assert_eq!(n, 16);
        // Places 0..=7 lie in the first 8 MiB (place k at k * 16 MiB / 15).
        assert_eq!(holes, 8, "places in the unwritten half");
        assert_eq!(count_holes(&p, 0, 8 * MIB, 16).unwrap(), (0, 16));
        // Past the end reads as zeros without the device: a hole.
        assert_eq!(count_holes(&p, 16 * MIB, MIB, 4).unwrap(), (4, 4));
        assert_eq!(zero_blocks(&p, 0, 16 * MIB, 16).unwrap(), (8, 16));
        assert_eq!(zero_blocks(&p, 8 * MIB, 8 * MIB, 8).unwrap(), (8, 8));
        assert!(count_holes(&dir.path().join("none"), 0, 1, 1).is_err());
    }

    fn device_target(path: &Path, len: u64) -> Region<'_> {
        Region {
            path,
            kind: TargetKind::BlockDevice,
            start: 0,
            len,
        }
    }

    #[test]
    fn a_region_found_written_is_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("dev");
        std::fs::write(&p, vec![0u8; MIB as usize]).unwrap();
        let t = device_target(&p, MIB);
        // All zeros: not remembered, read again next time.
        assert_eq!(sampled_zeros(&t).unwrap().unwritten, DEVICE_SAMPLES);
        let data: Vec<u8> = (0..MIB as u32).map(|x| (x % 251) as u8 + 1).collect();
        std::fs::write(&p, &data).unwrap();
        assert_eq!(sampled_zeros(&t).unwrap().unwritten, 0);
        // Written: remembered, so zeros written since are not seen.
        std::fs::write(&p, vec![0u8; MIB as usize]).unwrap();
        assert_eq!(sampled_zeros(&t).unwrap().unwritten, 0);
        // Another region of the same path is read.
        let mut half = t;
        half.len = MIB / 2;
        assert_eq!(sampled_zeros(&half).unwrap().unwritten, DEVICE_SAMPLES);
    }

    /// `examine` on a real loop device over a sparse file: holes found in
    /// the backing file; the same device taken for one that is not a loop
    /// device is read (O_DIRECT) and reads back as zeros; once written, neither.
    #[cfg(target_os = "linux")]
    #[test]
    fn examine_finds_a_never_written_loop_device() {
        use std::process::Command;
        if !crate::platform::process::is_root()
            || Command::new("losetup").arg("--version").output().is_err()
        {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "examine_finds_a_never_written_loop_device needs root and losetup in CI"
            );
            crate::testkit::skip(
                "examine_finds_a_never_written_loop_device: needs root and losetup",
            );
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("loop.img");
        File::create(&img).unwrap().set_len(16 * MIB).unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let devpath = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let _guard = LoopGuard(devpath.clone());
        let res = crate::sysmon::mounts::resolve_target(Path::new(&devpath));
        let lb = res.device().and_then(|d| d.loop_backing.clone()).unwrap();
        assert!(!lb.direct_io, "losetup's default");
        assert!(lb.holder_device().is_some() || lb.in_memory(), "{lb:?}");
        let t = device_target(Path::new(&devpath), 16 * MIB);
        let c = examine(&t, &res);
        let u = c.unwritten.expect("looked at");
        assert_eq!(
            u.evidence,
            UnwrittenEvidence::BackingHoles(img.display().to_string())
        );
        assert_eq!((u.unwritten, u.sampled), (DEVICE_SAMPLES, DEVICE_SAMPLES));
        let other = Resolution::NoDevice {
            fs_type: String::new(),
            reason: "taken for another device".into(),
        };
        let u = examine(&t, &other).unwritten.unwrap();
        assert_eq!(u.evidence, UnwrittenEvidence::ZeroBlocks);
        assert_eq!((u.unwritten, u.sampled), (DEVICE_SAMPLES, DEVICE_SAMPLES));
        // Written whole through the device.
        let data: Vec<u8> = (0..(16 * MIB) as u32)
            .map(|x| (x.wrapping_mul(2_654_435_761) >> 24) as u8 | 1)
            .collect();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&devpath)
            .unwrap();
        crate::platform::fs::write_all_at(&f, &data, 0).unwrap();
        f.sync_all().unwrap();
        drop(f);
        assert_eq!(examine(&t, &res).unwritten.unwrap().unwritten, 0);
        assert_eq!(examine(&t, &other).unwritten.unwrap().unwritten, 0);
    }
}
