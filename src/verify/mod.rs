//! Page and log-block formats of the simulator, and the checks that classify
//! what a read returned. Everything here is pure: bytes in, verdict out.
//!
//! # Data page (8 KiB)
//!
//! ```text
//! offset  size  field
//!      0     4  magic "IOSP"
//!      4     4  crc32c of bytes 8..8192 (everything but magic and crc)
//!      8     4  file id
//!     12     4  format version (1)
//!     16     8  page id (page number in the file)
//!     24     8  write generation (1 = first write)
//!     32     8  seed of the payload (derived from run seed, file, page, generation)
//!     40     8  timestamp: ms since the Unix epoch when the image was built
//!     48    16  reserved, zero
//!     64     .  payload: pseudo-random bytes from the seed
//! ```
//!
//! The last 8 bytes of every 512-byte sector hold a *sector stamp*: the
//! generation (u32) and a check word that depends only on the generation and
//! the sector index. A page whose sectors carry valid stamps of different
//! generations was torn: part of it is an older image.
//!
//! Read buffers are *pre-stamped* with a "not read" marker in every sector
//! before the read is issued, so a read that claims success but did not
//! transfer some sectors is caught (SQLIOSim's Bytes-Not-Read check).
//!
//! # Log block (a multiple of 512 bytes, at most 60 KiB)
//!
//! ```text
//!      0     4  magic "IOSL"
//!      4     4  crc32c of bytes 8..len
//!      8     8  sequence number (1, 2, ...)
//!     16     4  length in bytes
//!     20     4  number of log records in the block
//!     24     8  seed of the payload
//!     32    32  reserved, zero
//!     64     .  payload
//! ```

pub mod run;
pub mod table;

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::buf::{fill_random, wyrand};

/// Size of a data page.
pub const PAGE_SIZE: usize = 8192;
/// Size of a sector (the unit of torn-write detection and of log alignment).
pub const SECTOR: usize = 512;
/// Sectors per page.
pub const SECTORS: usize = PAGE_SIZE / SECTOR;
/// Bytes of the page header.
pub const HEADER: usize = 64;
/// Page magic, "IOSP" little-endian.
pub const PAGE_MAGIC: u32 = u32::from_le_bytes(*b"IOSP");
/// Log block magic, "IOSL".
pub const LOG_MAGIC: u32 = u32::from_le_bytes(*b"IOSL");
/// Magic of a pre-stamped (not yet read) buffer, "NRD!".
pub const NOT_READ_MAGIC: u32 = u32::from_le_bytes(*b"NRD!");
/// Largest log block.
pub const MAX_LOG_BLOCK: usize = 60 * 1024;
const VERSION: u32 = 1;
const STAMP: usize = 8;
/// Generation field of a "not read" sector stamp.
const NOT_READ_GEN: u32 = 0xFFFF_FFFF;
const NOT_READ_CHECK: u32 = 0xB17E_5BAD;

/// What went wrong, as the report names it. A read that failed a check is
/// re-read (SQLIOSim's read-retry); the class says what the re-reads
/// showed: when one returned the expected image the class is
/// [`ErrorClass::ReadRetry`] whatever the first read looked like (a fault
/// in the read path: the storage holds the right data), otherwise the class
/// of the first read (the fault is on the storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The bytes changed after they were written (bit rot, a bad DMA, a bad cable).
    ChecksumMismatch,
    /// Part of the page is a newer image and part an older one: a write was not atomic.
    TornPage,
    /// The page holds another page's image (a write or read went to the wrong place).
    Misdirected,
    /// The page does not hold the last acknowledged write (an older generation,
    /// zeros, another run's image), and re-reading it does not change that: the
    /// write was lost.
    StaleRead,
    /// The read transferred fewer bytes than asked (or claimed success without transferring).
    ShortRead,
    /// The operating system reported an error.
    IoError,
    /// A read returned wrong data (or failed) and a re-read returned the
    /// expected image: a fault in the read path, not on the storage (SQL
    /// Server's error 825, "read-retry").
    ReadRetry,
}

impl ErrorClass {
    /// All classes, in report order.
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::ChecksumMismatch,
        ErrorClass::TornPage,
        ErrorClass::Misdirected,
        ErrorClass::StaleRead,
        ErrorClass::ShortRead,
        ErrorClass::IoError,
        ErrorClass::ReadRetry,
    ];

    /// The name used in reports (`checksum_mismatch`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::ChecksumMismatch => "checksum_mismatch",
            ErrorClass::TornPage => "torn_page",
            ErrorClass::Misdirected => "misdirected",
            ErrorClass::StaleRead => "stale_read",
            ErrorClass::ShortRead => "short_read",
            ErrorClass::IoError => "io_error",
            ErrorClass::ReadRetry => "read_retry",
        }
    }

    /// What a failure of this class means for the storage, in words (the
    /// second half of every message; see [`Finding::settle`]).
    fn meaning(self, retried: bool) -> &'static str {
        match self {
            ErrorClass::ChecksumMismatch => "corruption, the data changed after it was written",
            ErrorClass::TornPage => "torn write, part of it is an older image",
            ErrorClass::Misdirected => "misdirected I/O, a write or a read went to the wrong place",
            ErrorClass::StaleRead if retried => {
                "lost write, the storage does not return the last acknowledged write"
            }
            ErrorClass::StaleRead => {
                "lost write or stale read, the last acknowledged write was not returned"
            }
            ErrorClass::ShortRead => "the storage reported success without delivering the data",
            ErrorClass::IoError => "the device or a layer below it failed the request",
            ErrorClass::ReadRetry => "read returned wrong data, recovered on retry",
        }
    }
}

/// What retrying a read that failed a check (or a failed write) showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retried {
    /// Not retried (retries off, or the block was written again before it
    /// could be re-read).
    No,
    /// Retried this many times; every retry failed too.
    Failed(u64),
    /// This retry (from 1) returned the expected image.
    Recovered(u64),
}

/// Retries up to `times` times: `again(attempt)` is `Some(true)` when that
/// retry returned the expected image, `Some(false)` when it failed too, and
/// `None` when it cannot tell (retrying stops there).
pub fn retry(times: u64, mut again: impl FnMut(u64) -> Option<bool>) -> Retried {
    let mut done = 0;
    for attempt in 1..=times {
        match again(attempt) {
            Some(true) => return Retried::Recovered(attempt),
            Some(false) => done = attempt,
            None => break,
        }
    }
    if done == 0 {
        Retried::No
    } else {
        Retried::Failed(done)
    }
}

/// A failed check once retried: the class a report counts and the words it
/// prints. Every report (the simulator's text, JSON, XML log and dump files,
/// `iosim run --verify`'s table and JSON) takes both from here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// The class ([`ErrorClass::ReadRetry`] when a retry returned the expected image).
    pub class: ErrorClass,
    /// What the first read looked like (the class before retrying).
    pub first_read: ErrorClass,
    /// Retries done.
    pub retries: u64,
    /// What was seen and what it means.
    pub detail: String,
}

impl Settled {
    /// A retry returned the expected image.
    pub fn recovered(&self) -> bool {
        self.class == ErrorClass::ReadRetry
    }
}

/// Identity of the image a page should hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageId {
    /// File id (its index in the configuration, from 1).
    pub file_id: u32,
    /// Page number in the file.
    pub page: u64,
    /// Write generation.
    pub generation: u64,
}

/// Header fields as read from a page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageHeader {
    /// Magic (PAGE_MAGIC on a valid page).
    pub magic: u32,
    /// Stored crc32c.
    pub crc: u32,
    /// File id.
    pub file_id: u32,
    /// Page id.
    pub page: u64,
    /// Generation.
    pub generation: u64,
    /// Payload seed.
    pub seed: u64,
    /// Timestamp (ms since the epoch).
    pub timestamp_ms: u64,
}

/// The verdict on a page or log block that failed a check, before it is
/// retried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Class of the failure.
    pub class: ErrorClass,
    /// What was seen (what it means is added by [`Finding::settle`]).
    pub detail: String,
}

impl Finding {
    /// The report of this finding once `retried`: a retry that returned
    /// the expected image makes it a [`ErrorClass::ReadRetry`] (the fault is
    /// in the read path), otherwise it keeps its class.
    pub fn settle(self, retried: Retried) -> Settled {
        let first = self.class;
        let (class, retries, meaning) = match retried {
            Retried::Recovered(n) => {
                let what = if first == ErrorClass::IoError {
                    "read failed, recovered on retry"
                } else {
                    ErrorClass::ReadRetry.meaning(true)
                };
                (
                    ErrorClass::ReadRetry,
                    n,
                    format!("{what} {n} (the storage holds the expected image: a fault in the read path)"),
                )
            }
            Retried::Failed(n) => (
                first,
                n,
                format!(
                    "{} (every one of {n} retries failed too)",
                    first.meaning(true)
                ),
            ),
            Retried::No => (first, 0, format!("{} (not retried)", first.meaning(false))),
        };
        Settled {
            class,
            first_read: first,
            retries,
            detail: format!("{}: {meaning}", self.detail),
        }
    }
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn wr32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn wr64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Mixes numbers into one well-spread 64-bit value.
pub fn mix(parts: &[u64]) -> u64 {
    let mut s = 0x51_7CC1_B727_220A_u64;
    for &p in parts {
        s ^= p;
        s = wyrand(&mut s);
    }
    s
}

/// The payload seed of a page image.
pub fn page_seed(run_seed: u64, id: PageId) -> u64 {
    mix(&[run_seed, u64::from(id.file_id), id.page, id.generation])
}

#[inline]
fn stamp_check(generation: u32, sector: usize) -> u32 {
    let x = (u64::from(generation) ^ 0x5EC7_0000_0000).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (sector as u64 + 1).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) as u32 ^ (x >> 32) as u32
}

/// The generation each sector's stamp names (None where the stamp is not
/// valid): which write each 512-byte sector of a page came from.
pub fn sector_generations(page: &[u8]) -> [Option<u32>; SECTORS] {
    let mut out = [None; SECTORS];
    for (s, o) in out.iter_mut().enumerate() {
        let at = s * SECTOR + SECTOR - STAMP;
        let g = rd32(page, at);
        if rd32(page, at + 4) == stamp_check(g, s) {
            *o = Some(g);
        }
    }
    out
}

/// [`sector_generations`] of a block of any multiple of [`SECTOR`] bytes.
pub fn block_sector_generations(block: &[u8]) -> Vec<Option<u32>> {
    block
        .chunks_exact(SECTOR)
        .enumerate()
        .map(|(s, sector)| {
            let g = rd32(sector, SECTOR - STAMP);
            (rd32(sector, SECTOR - STAMP + 4) == stamp_check(g, s)).then_some(g)
        })
        .collect()
}

/// Reads the header of `page`.
pub fn read_header(page: &[u8]) -> PageHeader {
    PageHeader {
        magic: rd32(page, 0),
        crc: rd32(page, 4),
        file_id: rd32(page, 8),
        page: rd64(page, 16),
        generation: rd64(page, 24),
        seed: rd64(page, 32),
        timestamp_ms: rd64(page, 40),
    }
}

/// Payload blocks a page image is taken from (as SQLIOSim's static random
/// buffers): block `seed % POOL_BLOCKS` of a pool filled once from a fixed
/// seed. Copying is much cheaper than generating 8 KiB per write; identity,
/// generation and sector stamps keep every image distinct.
pub const POOL_BLOCKS: usize = 256;

fn pool() -> &'static [u8] {
    static POOL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let mut v = vec![0u8; POOL_BLOCKS * PAGE_SIZE];
        fill_random(&mut v, 0x1051_5EED);
        v
    })
}

/// Builds the image of page `id` into `buf` (PAGE_SIZE bytes).
pub fn build_page(buf: &mut [u8], run_seed: u64, id: PageId, timestamp_ms: u64) {
    let buf = &mut buf[..PAGE_SIZE];
    let seed = page_seed(run_seed, id);
    let block = (seed % POOL_BLOCKS as u64) as usize * PAGE_SIZE;
    buf[HEADER..].copy_from_slice(&pool()[block + HEADER..block + PAGE_SIZE]);
    stamp_block(buf, run_seed, id, timestamp_ms);
}

/// Fills `buf` with payload from the pool (distinct per `salt`), once, before
/// a buffer is first stamped with [`stamp_block`].
pub fn fill_payload(buf: &mut [u8], salt: u64) {
    let pool = pool();
    let mut at = (salt % POOL_BLOCKS as u64) as usize * PAGE_SIZE;
    for chunk in buf.chunks_mut(PAGE_SIZE) {
        chunk.copy_from_slice(&pool[at..at + chunk.len()]);
        at = (at + PAGE_SIZE) % pool.len();
    }
}

/// Turns `buf` (a block of any multiple of [`SECTOR`] bytes) into the image
/// of `id` in place: header, a stamp in every sector and the checksum over
/// the whole block. The payload is whatever the buffer holds (the checksum
/// covers it), so `iosim run --verify` stamps a block with one pass of
/// crc32c instead of generating its bytes. An 8 KiB block is exactly the
/// simulator's page.
pub fn stamp_block(buf: &mut [u8], run_seed: u64, id: PageId, timestamp_ms: u64) {
    debug_assert!(buf.len() % SECTOR == 0 && buf.len() >= SECTOR);
    let seed = page_seed(run_seed, id);
    wr32(buf, 0, PAGE_MAGIC);
    wr32(buf, 8, id.file_id);
    wr32(buf, 12, VERSION);
    wr64(buf, 16, id.page);
    wr64(buf, 24, id.generation);
    wr64(buf, 32, seed);
    wr64(buf, 40, timestamp_ms);
    buf[48..HEADER].fill(0);
    let g = id.generation as u32;
    for (s, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        wr32(sector, SECTOR - STAMP, g);
        wr32(sector, SECTOR - STAMP + 4, stamp_check(g, s));
    }
    let crc = crc32c::crc32c(&buf[8..]);
    wr32(buf, 4, crc);
}

/// A cheap page for runs without verification: only the header identity is
/// set; the payload is whatever the buffer held.
pub fn build_page_unverified(buf: &mut [u8], id: PageId) {
    wr32(buf, 0, PAGE_MAGIC);
    wr32(buf, 8, id.file_id);
    wr64(buf, 16, id.page);
    wr64(buf, 24, id.generation);
}

/// Marks every sector of `buf` (a multiple of SECTOR bytes) as "not read".
pub fn prestamp(buf: &mut [u8]) {
    for (i, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        if i % SECTORS == 0 {
            wr32(sector, 0, NOT_READ_MAGIC);
        }
        wr32(sector, SECTOR - STAMP, NOT_READ_GEN);
        wr32(sector, SECTOR - STAMP + 4, NOT_READ_CHECK);
    }
}

fn not_read(sector: &[u8]) -> bool {
    rd32(sector, SECTOR - STAMP) == NOT_READ_GEN
        && rd32(sector, SECTOR - STAMP + 4) == NOT_READ_CHECK
}

/// Formats a list of sector numbers as ranges: `0-3, 7`.
fn ranges(v: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push_str(", ");
        }
        if i == j {
            let _ = write!(out, "{}", v[i]);
        } else {
            let _ = write!(out, "{}-{}", v[i], v[j]);
        }
        i = j + 1;
    }
    out
}

/// Checks a page read back against what it should hold. `run_seed` is the
/// run's seed (the payload seed is derived from it).
pub fn check_page(page: &[u8], run_seed: u64, want: PageId) -> Result<(), Finding> {
    check_block(&page[..PAGE_SIZE], run_seed, want)
}

/// Checks a block of any multiple of [`SECTOR`] bytes written by
/// [`stamp_block`] (a page is the 8 KiB case).
pub fn check_block(page: &[u8], run_seed: u64, want: PageId) -> Result<(), Finding> {
    // Fast path, no allocation: a good page has the magic, the checksum, the
    // identity and the same valid stamp in every sector.
    let h = read_header(page);
    if h.magic == PAGE_MAGIC
        && h.file_id == want.file_id
        && h.page == want.page
        && h.generation == want.generation
        && crc32c::crc32c(&page[8..]) == h.crc
        && h.seed == page_seed(run_seed, want)
    {
        let g = want.generation as u32;
        let stamps_ok = page.chunks_exact(SECTOR).enumerate().all(|(s, sector)| {
            rd32(sector, SECTOR - STAMP) == g
                && rd32(sector, SECTOR - STAMP + 4) == stamp_check(g, s)
        });
        if stamps_ok {
            return Ok(());
        }
    }
    classify(page, run_seed, want)
}

/// The slow path of [`check_page`]: says what is wrong with a page.
fn classify(page: &[u8], run_seed: u64, want: PageId) -> Result<(), Finding> {
    let sectors = page.len() / SECTOR;
    // 1. Bytes not read: sectors still carrying the pre-stamp.
    let unread: Vec<usize> = (0..sectors)
        .filter(|&s| not_read(&page[s * SECTOR..(s + 1) * SECTOR]))
        .collect();
    if !unread.is_empty() {
        return Err(Finding {
            class: ErrorClass::ShortRead,
            detail: format!(
                "bytes not read: sector(s) {} of the page still hold the pre-read marker although the read reported success",
                ranges(&unread)
            ),
        });
    }
    // 2. Torn: sectors with valid stamps of different generations.
    let h = read_header(page);
    let stamps = block_sector_generations(page);
    let mut gens: Vec<u32> = stamps.iter().flatten().copied().collect();
    gens.sort_unstable();
    gens.dedup();
    if gens.len() > 1 {
        let mut parts = Vec::new();
        for g in &gens {
            let secs: Vec<usize> = (0..sectors).filter(|&s| stamps[s] == Some(*g)).collect();
            parts.push(format!("generation {g} in sector(s) {}", ranges(&secs)));
        }
        return Err(Finding {
            class: ErrorClass::TornPage,
            detail: format!(
                "the page mixes images of different writes ({}); expected generation {} in all {sectors} sectors",
                parts.join("; "),
                want.generation
            ),
        });
    }
    // 3. Magic and checksum.
    if h.magic != PAGE_MAGIC {
        if page.iter().all(|&b| b == 0) {
            return Err(Finding {
                class: ErrorClass::StaleRead,
                detail: format!(
                    "the page reads as all zeros, but generation {} was written and acknowledged",
                    want.generation
                ),
            });
        }
        return Err(Finding {
            class: ErrorClass::ChecksumMismatch,
            detail: format!(
                "the page header is damaged (magic {:#010x}, expected {:#010x})",
                h.magic, PAGE_MAGIC
            ),
        });
    }
    let crc = crc32c::crc32c(&page[8..]);
    if crc != h.crc {
        return Err(Finding {
            class: ErrorClass::ChecksumMismatch,
            detail: format!("stored checksum {:#010x}, calculated {:#010x}", h.crc, crc),
        });
    }
    // 4. Identity.
    if h.file_id != want.file_id || h.page != want.page {
        return Err(Finding {
            class: ErrorClass::Misdirected,
            detail: format!(
                "the page holds file {} page {} (generation {}), expected file {} page {}",
                h.file_id, h.page, h.generation, want.file_id, want.page
            ),
        });
    }
    if h.generation != want.generation {
        let what = if h.generation < want.generation {
            "an older image"
        } else {
            "a newer image than any acknowledged write"
        };
        return Err(Finding {
            class: ErrorClass::StaleRead,
            detail: format!(
                "generation {} read, generation {} was the last acknowledged write ({what})",
                h.generation, want.generation
            ),
        });
    }
    if h.seed != page_seed(run_seed, want) {
        return Err(Finding {
            class: ErrorClass::StaleRead,
            detail: format!(
                "the page holds generation {} written by another run (payload seed {:#x}, expected {:#x})",
                h.generation,
                h.seed,
                page_seed(run_seed, want)
            ),
        });
    }
    Ok(())
}

/// Header of a log block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogHeader {
    /// Magic (LOG_MAGIC).
    pub magic: u32,
    /// Stored crc32c.
    pub crc: u32,
    /// Sequence number.
    pub seq: u64,
    /// Length in bytes.
    pub len: u32,
    /// Records in the block.
    pub records: u32,
    /// Payload seed.
    pub seed: u64,
}

/// Reads a log block header.
pub fn read_log_header(b: &[u8]) -> LogHeader {
    LogHeader {
        magic: rd32(b, 0),
        crc: rd32(b, 4),
        seq: rd64(b, 8),
        len: rd32(b, 16),
        records: rd32(b, 20),
        seed: rd64(b, 24),
    }
}

/// Builds log block `seq` of `len` bytes (a multiple of SECTOR) into `buf`.
pub fn build_log_block(buf: &mut [u8], run_seed: u64, seq: u64, len: usize, records: u32) {
    debug_assert!(len % SECTOR == 0 && (SECTOR..=MAX_LOG_BLOCK).contains(&len));
    let buf = &mut buf[..len];
    let seed = mix(&[run_seed, seq, 0x106]);
    // Payload from the pool (a 60 KiB block spans consecutive pool blocks).
    let start = (seed % (POOL_BLOCKS as u64 - 8)) as usize * PAGE_SIZE;
    buf[HEADER..].copy_from_slice(&pool()[start + HEADER..start + len]);
    wr32(buf, 0, LOG_MAGIC);
    wr64(buf, 8, seq);
    wr32(buf, 16, len as u32);
    wr32(buf, 20, records);
    wr64(buf, 24, seed);
    buf[32..HEADER].fill(0);
    let crc = crc32c::crc32c(&buf[8..]);
    wr32(buf, 4, crc);
}

/// Checks a log block read back: sequence `seq`, `len` bytes. The
/// finding's detail says what was seen; the caller names the block.
pub fn check_log_block(b: &[u8], run_seed: u64, seq: u64, len: usize) -> Result<(), Finding> {
    let b = &b[..len];
    let unread: Vec<usize> = (0..len / SECTOR)
        .filter(|&s| not_read(&b[s * SECTOR..(s + 1) * SECTOR]))
        .collect();
    if !unread.is_empty() {
        return Err(Finding {
            class: ErrorClass::ShortRead,
            detail: format!(
                "bytes not read: sector(s) {} of the log block still hold the pre-read marker",
                ranges(&unread)
            ),
        });
    }
    let h = read_log_header(b);
    if h.magic != LOG_MAGIC {
        let class = if b.iter().all(|&x| x == 0) {
            ErrorClass::StaleRead
        } else {
            ErrorClass::ChecksumMismatch
        };
        return Err(Finding {
            class,
            detail: format!("no log block header here (magic {:#010x})", h.magic),
        });
    }
    if h.len as usize > MAX_LOG_BLOCK || (h.len as usize) < SECTOR || h.len as usize % SECTOR != 0 {
        return Err(Finding {
            class: ErrorClass::ChecksumMismatch,
            detail: format!("impossible length {} in the header", h.len),
        });
    }
    let crc_len = (h.len as usize).min(len);
    let crc = crc32c::crc32c(&b[8..crc_len]);
    if crc != h.crc || h.len as usize != len && h.seq == seq {
        return Err(Finding {
            class: ErrorClass::ChecksumMismatch,
            detail: format!("stored checksum {:#010x}, calculated {:#010x}", h.crc, crc),
        });
    }
    if h.seq != seq {
        let class = if h.seq < seq {
            ErrorClass::StaleRead
        } else {
            ErrorClass::Misdirected
        };
        return Err(Finding {
            class,
            detail: format!(
                "it holds log block {} (written elsewhere or earlier)",
                h.seq
            ),
        });
    }
    if h.seed != mix(&[run_seed, seq, 0x106]) {
        return Err(Finding {
            class: ErrorClass::Misdirected,
            detail: "it carries another run's seed".to_string(),
        });
    }
    Ok(())
}

/// Byte ranges where `a` and `b` differ, as (start, end exclusive).
pub fn diff_ranges(a: &[u8], b: &[u8]) -> Vec<(usize, usize)> {
    let n = a.len().min(b.len());
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if a[i] != b[i] {
            let start = i;
            while i < n && a[i] != b[i] {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    if a.len() != b.len() {
        out.push((n, a.len().max(b.len())));
    }
    out
}

/// A hex dump, 32 bytes per line, with offsets.
pub fn hexdump(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 3);
    for (i, line) in b.chunks(32).enumerate() {
        let _ = write!(s, "{:06x}:", i * 32);
        for (j, x) in line.iter().enumerate() {
            if j % 8 == 0 {
                s.push(' ');
            }
            let _ = write!(s, "{x:02x}");
        }
        s.push('\n');
    }
    s
}

/// The text of a dump file: expected image, received image and their difference.
pub fn dump_text(title: &str, expected: &[u8], received: &[u8]) -> String {
    let d = diff_ranges(expected, received);
    let differing: usize = d.iter().map(|(a, b)| b - a).sum();
    let mut s = String::new();
    let _ = writeln!(s, "{title}");
    let _ = writeln!(
        s,
        "\n== DIFFERENCE: {differing} byte(s) differ in {} range(s) ==",
        d.len()
    );
    for (a, b) in d.iter().take(256) {
        let _ = writeln!(
            s,
            "  bytes {a:#06x}..{b:#06x} ({} bytes, sector {}{})",
            b - a,
            a / SECTOR,
            if (b - 1) / SECTOR != a / SECTOR {
                format!("-{}", (b - 1) / SECTOR)
            } else {
                String::new()
            }
        );
    }
    if d.len() > 256 {
        let _ = writeln!(s, "  ... {} more ranges", d.len() - 256);
    }
    let _ = writeln!(s, "\n== EXPECTED (WRITE) IMAGE ==");
    s.push_str(&hexdump(expected));
    let _ = writeln!(s, "\n== RECEIVED (READ) IMAGE ==");
    s.push_str(&hexdump(received));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: u64 = 42;

    fn id(page: u64, generation: u64) -> PageId {
        PageId {
            file_id: 1,
            page,
            generation,
        }
    }

    fn page(p: u64, g: u64) -> Vec<u8> {
        let mut b = vec![0u8; PAGE_SIZE];
        build_page(&mut b, SEED, id(p, g), 1234);
        b
    }

    #[test]
    fn good_page_passes_and_header_reads_back() {
        let b = page(7, 3);
        assert_eq!(check_page(&b, SEED, id(7, 3)), Ok(()));
        let h = read_header(&b);
        assert_eq!(
            (h.file_id, h.page, h.generation, h.timestamp_ms),
            (1, 7, 3, 1234)
        );
        assert_eq!(h.magic, PAGE_MAGIC);
    }

    #[test]
    fn every_single_bit_flip_is_a_checksum_mismatch_or_caught() {
        let good = page(9, 5);
        // Flip one bit in each of a spread of positions, including header and stamps.
        for pos in (0..PAGE_SIZE * 8).step_by(61) {
            let mut b = good.clone();
            b[pos / 8] ^= 1 << (pos % 8);
            let f = check_page(&b, SEED, id(9, 5)).unwrap_err();
            assert_eq!(f.class, ErrorClass::ChecksumMismatch, "bit {pos}: {f:?}");
        }
    }

    #[test]
    fn torn_page_is_classified_with_its_sectors() {
        let old = page(4, 1);
        let mut b = page(4, 2);
        b[8 * SECTOR..].copy_from_slice(&old[8 * SECTOR..]);
        let f = check_page(&b, SEED, id(4, 2)).unwrap_err();
        assert_eq!(f.class, ErrorClass::TornPage);
        assert!(
            f.detail.contains("generation 1 in sector(s) 8-15"),
            "{}",
            f.detail
        );
        assert!(
            f.detail.contains("generation 2 in sector(s) 0-7"),
            "{}",
            f.detail
        );
        let g = sector_generations(&b);
        assert_eq!(g[0], Some(2));
        assert_eq!(g[15], Some(1));
        b[SECTOR - 1] ^= 1;
        assert_eq!(sector_generations(&b)[0], None);
    }

    #[test]
    fn misdirected_page_names_the_page_found() {
        let b = page(11, 2);
        let f = check_page(&b, SEED, id(12, 2)).unwrap_err();
        assert_eq!(f.class, ErrorClass::Misdirected);
        assert!(f.detail.contains("page 11"));
        let mut other_file = vec![0u8; PAGE_SIZE];
        build_page(
            &mut other_file,
            SEED,
            PageId {
                file_id: 2,
                page: 12,
                generation: 2,
            },
            0,
        );
        assert_eq!(
            check_page(&other_file, SEED, id(12, 2)).unwrap_err().class,
            ErrorClass::Misdirected
        );
        // Another run's image of the same page: that run's data survived, this run's write did not.
        let mut b = vec![0u8; PAGE_SIZE];
        build_page(&mut b, SEED + 1, id(12, 2), 0);
        assert_eq!(
            check_page(&b, SEED, id(12, 2)).unwrap_err().class,
            ErrorClass::StaleRead
        );
    }

    #[test]
    fn older_generation_is_a_stale_read() {
        let b = page(3, 6);
        let f = check_page(&b, SEED, id(3, 7)).unwrap_err();
        assert_eq!(f.class, ErrorClass::StaleRead);
        assert!(f.detail.contains("generation 6 read"));
        let z = vec![0u8; PAGE_SIZE];
        assert_eq!(
            check_page(&z, SEED, id(3, 1)).unwrap_err().class,
            ErrorClass::StaleRead
        );
    }

    #[test]
    fn retries_decide_the_class_and_the_words() {
        let zeros = check_page(&vec![0u8; PAGE_SIZE], SEED, id(3, 1)).unwrap_err();
        assert_eq!(zeros.class, ErrorClass::StaleRead);
        // Every retry read zeros too: the write was lost.
        let lost = zeros.clone().settle(Retried::Failed(15));
        assert_eq!((lost.class, lost.retries), (ErrorClass::StaleRead, 15));
        assert!(!lost.recovered());
        assert_eq!(lost.detail, "the page reads as all zeros, but generation 1 was written and acknowledged: lost write, the storage does not return the last acknowledged write (every one of 15 retries failed too)");
        // A retry read the page: the read path returned wrong data, nothing was lost.
        let retry = zeros.clone().settle(Retried::Recovered(1));
        assert_eq!(
            (retry.class, retry.first_read, retry.retries),
            (ErrorClass::ReadRetry, ErrorClass::StaleRead, 1)
        );
        assert!(retry.recovered());
        assert_eq!(retry.detail, "the page reads as all zeros, but generation 1 was written and acknowledged: read returned wrong data, recovered on retry 1 (the storage holds the expected image: a fault in the read path)");
        assert!(!retry.detail.contains("lost"));
        // Not retried: it cannot say which.
        let unsure = zeros.settle(Retried::No);
        assert!(
            unsure.detail.ends_with(": lost write or stale read, the last acknowledged write was not returned (not retried)"),
            "{}",
            unsure.detail
        );
        // A failed read that a retry reads is a read-path fault too.
        let eio = Finding {
            class: ErrorClass::IoError,
            detail: "the read failed: Input/output error (os error 5)".into(),
        }
        .settle(Retried::Recovered(2));
        assert_eq!(eio.class, ErrorClass::ReadRetry);
        assert!(eio
            .detail
            .contains("(os error 5): read failed, recovered on retry 2"));
    }

    #[test]
    fn retry_stops_at_the_first_good_read_or_when_it_cannot_tell() {
        let mut tries = Vec::new();
        assert_eq!(
            retry(5, |a| {
                tries.push(a);
                Some(a == 3)
            }),
            Retried::Recovered(3)
        );
        assert_eq!(tries, [1, 2, 3]);
        assert_eq!(retry(2, |_| Some(false)), Retried::Failed(2));
        assert_eq!(retry(0, |_| Some(true)), Retried::No);
        assert_eq!(retry(4, |a| (a < 3).then_some(false)), Retried::Failed(2));
        assert_eq!(retry(4, |_| None), Retried::No);
    }

    #[test]
    fn prestamped_sectors_are_bytes_not_read() {
        let mut b = vec![0u8; PAGE_SIZE];
        prestamp(&mut b);
        let f = check_page(&b, SEED, id(0, 1)).unwrap_err();
        assert_eq!(f.class, ErrorClass::ShortRead);
        assert!(f.detail.contains("0-15"));
        // Half transferred.
        let good = page(0, 1);
        b[..4096].copy_from_slice(&good[..4096]);
        let f = check_page(&b, SEED, id(0, 1)).unwrap_err();
        assert_eq!(f.class, ErrorClass::ShortRead);
        assert!(f.detail.contains("8-15"), "{}", f.detail);
        // A real read overwrites the pre-stamp completely.
        let mut b = vec![0u8; PAGE_SIZE];
        prestamp(&mut b);
        b.copy_from_slice(&good);
        assert_eq!(check_page(&b, SEED, id(0, 1)), Ok(()));
    }

    #[test]
    fn log_blocks() {
        let mut b = vec![0u8; 4096];
        build_log_block(&mut b, SEED, 17, 4096, 3);
        assert_eq!(check_log_block(&b, SEED, 17, 4096), Ok(()));
        assert_eq!(read_log_header(&b).records, 3);
        let mut bad = b.clone();
        bad[1000] ^= 4;
        assert_eq!(
            check_log_block(&bad, SEED, 17, 4096).unwrap_err().class,
            ErrorClass::ChecksumMismatch
        );
        assert_eq!(
            check_log_block(&b, SEED, 18, 4096).unwrap_err().class,
            ErrorClass::StaleRead
        );
        assert_eq!(
            check_log_block(&b, SEED, 16, 4096).unwrap_err().class,
            ErrorClass::Misdirected
        );
        let mut p = vec![0u8; 4096];
        prestamp(&mut p);
        assert_eq!(
            check_log_block(&p, SEED, 17, 4096).unwrap_err().class,
            ErrorClass::ShortRead
        );
        // The caller names the block ("log block 17 (4096 bytes): ..."), so
        // the detail says only what was seen (it once said "log block 17:" twice).
        for (buf, seq) in [(&bad, 17), (&b, 18), (&b, 16), (&p, 17)] {
            let detail = check_log_block(buf, SEED, seq, 4096).unwrap_err().detail;
            assert!(!detail.starts_with("log block"), "{detail}");
        }
    }

    #[test]
    fn dump_shows_difference() {
        let a = page(1, 1);
        let mut b = a.clone();
        b[100] ^= 1;
        b[5000] ^= 0x80;
        assert_eq!(diff_ranges(&a, &b), vec![(100, 101), (5000, 5001)]);
        let t = dump_text("x", &a, &b);
        assert!(t.contains("2 byte(s) differ in 2 range(s)"));
        assert!(t.contains("EXPECTED (WRITE) IMAGE"));
        assert!(t.contains("RECEIVED (READ) IMAGE"));
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
    }
}
