//! The generation table of `iosim run --verify`: per target, one `u32` per
//! block of the written region (not a copy of the data), and the judgement
//! of a block read back against it.
//!
//! Each entry holds the block's newest generation (31 bits; 0 = not written
//! in this run) and a *busy* bit set while a write to the block is in
//! flight. Several workers of a target may touch the same block (every
//! thread of a random workload draws from the whole region), so entries are
//! atomics: a write claims its block with one compare-and-swap (the next
//! generation, busy), its completion stores the generation with the busy bit clear;
//! a read loads the entry when it is issued and when it completes. No lock,
//! no allocation, and an uncontended compare-and-swap costs about what a
//! plain store does. At most one write per block is in flight, so the order
//! in which the storage applies two writes to a block never matters: a
//! worker whose block is busy draws another offset (fio's
//! `serialize_overlap`).

use std::sync::atomic::{AtomicU32, Ordering};

use super::{
    block_sector_generations, check_block, read_header, ErrorClass, Finding, PageId, PAGE_MAGIC,
};

/// Busy bit: a write to the block is in flight.
const BUSY: u32 = 1 << 31;
/// Generation bits.
const GEN: u32 = BUSY - 1;

/// One target's generation table.
#[derive(Debug)]
pub struct GenTable {
    gens: Box<[AtomicU32]>,
    /// File id written into every block (target index + 1).
    pub file_id: u32,
    /// First byte of the region (block 0).
    pub region_start: u64,
    /// Block size (every I/O is one block).
    pub bs: u64,
    /// Seed of the page images (the payload seed in each header).
    pub seed: u64,
    /// log2(bs) when bs is a power of two: [`GenTable::block_of`] shifts
    /// instead of dividing (a division costs tens of cycles, and a verified
    /// write takes the block of its offset three times).
    shift: Option<u32>,
}

/// The generation of a table entry.
#[inline]
pub fn generation(entry: u32) -> u32 {
    entry & GEN
}

/// True when a write to the block was in flight.
#[inline]
pub fn busy(entry: u32) -> bool {
    entry & BUSY != 0
}

/// What a block read back turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    /// The expected generation (or a newer one in flight), intact.
    Good,
    /// Not written in this run: nothing to compare with (skipped, counted).
    Unwritten,
    /// A write to the block was in flight during the read and the image is
    /// part old, part new, or older than that write: allowed, counted.
    Raced,
    /// A data error.
    Bad {
        /// What was wrong.
        finding: Finding,
        /// The generation the block must hold (at least).
        expected: u32,
        /// The generation in the header that was read (0 when there was no valid header).
        found: u64,
    },
}

impl GenTable {
    /// A table of `region_len / bs` blocks, none written.
    pub fn new(file_id: u32, region_start: u64, region_len: u64, bs: u64, seed: u64) -> GenTable {
        let n = region_len.checked_div(bs).unwrap_or(0) as usize;
        GenTable {
            gens: (0..n).map(|_| AtomicU32::new(0)).collect(),
            file_id,
            region_start,
            bs,
            seed,
            shift: bs.is_power_of_two().then(|| bs.trailing_zeros()),
        }
    }

    /// Bytes a table for `region_len` with blocks of `bs` takes.
    pub fn bytes_for(region_len: u64, bs: u64) -> u64 {
        region_len.checked_div(bs).unwrap_or(0).saturating_mul(4)
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.gens.len()
    }

    /// The block at byte offset `off` (offsets are region start + k x bs).
    #[inline]
    pub fn block_of(&self, off: u64) -> usize {
        let rel = off - self.region_start;
        match self.shift {
            Some(s) => (rel >> s) as usize,
            None => (rel / self.bs) as usize,
        }
    }

    /// Byte offset of block `b`.
    pub fn offset_of(&self, b: usize) -> u64 {
        self.region_start + b as u64 * self.bs
    }

    /// The identity block `b` of generation `g` carries.
    #[inline]
    pub fn id(&self, b: usize, g: u32) -> PageId {
        PageId {
            file_id: self.file_id,
            page: b as u64,
            generation: u64::from(g),
        }
    }

    /// Claims block `b` for a write: its new generation, or `None` while
    /// another write to it is in flight.
    #[inline]
    pub fn claim(&self, b: usize) -> Option<u32> {
        let e = &self.gens[b];
        let mut cur = e.load(Ordering::Relaxed);
        loop {
            if busy(cur) {
                return None;
            }
            // 2^31 writes to one block wrap to 1 (never 0: "not written").
            let g = (generation(cur) % GEN) + 1;
            match e.compare_exchange_weak(cur, g | BUSY, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(g),
                Err(now) => cur = now,
            }
        }
    }

    /// The write of generation `g` to block `b` completed. (A failed write
    /// leaves the block busy for good: what it holds is unknown, and reads
    /// of it are judged as racing a write.)
    #[inline]
    pub fn complete(&self, b: usize, g: u32) {
        self.gens[b].store(g, Ordering::Release);
    }

    /// The entry of block `b` now.
    #[inline]
    pub fn entry(&self, b: usize) -> u32 {
        self.gens[b].load(Ordering::Acquire)
    }

    /// Blocks written in this run (generation above 0).
    pub fn written(&self) -> u64 {
        self.gens
            .iter()
            .filter(|e| generation(e.load(Ordering::Relaxed)) > 0)
            .count() as u64
    }

    /// All entries (for the state file).
    pub fn entries(&self) -> Vec<u32> {
        self.gens
            .iter()
            .map(|e| e.load(Ordering::Relaxed))
            .collect()
    }

    /// Replaces the entries (from a state file of the same shape).
    pub fn load_entries(&self, v: &[u32]) {
        for (e, &x) in self.gens.iter().zip(v) {
            e.store(x, Ordering::Relaxed);
        }
    }

    /// Judges `buf`, block `b` read back; `e0` and `e1` are the block's
    /// entry when the read was issued and when it completed. The block must
    /// hold the newest generation completed before the read was issued, or
    /// a newer one written while it was in flight.
    pub fn judge(&self, buf: &[u8], b: usize, e0: u32, e1: u32) -> Judged {
        let hi = generation(e1);
        // A write in flight when the read was issued may not have landed yet.
        let lo = generation(e0).saturating_sub(u32::from(busy(e0)));
        let racing = busy(e0) || e1 != e0;
        if hi == 0 {
            return Judged::Unwritten;
        }
        if lo == 0 {
            // The first write of the block was in flight: it may still hold
            // whatever was there before this run.
            return Judged::Raced;
        }
        let h = read_header(buf);
        let in_range = h.magic == PAGE_MAGIC
            && h.file_id == self.file_id
            && h.page == b as u64
            && (u64::from(lo)..=u64::from(hi)).contains(&h.generation);
        let want = if in_range {
            h.generation as u32
        } else if racing {
            hi
        } else {
            lo
        };
        match check_block(buf, self.seed, self.id(b, want)) {
            Ok(()) => Judged::Good,
            // A read racing a write may see part of each image.
            Err(f) if racing && f.class == ErrorClass::TornPage => Judged::Raced,
            Err(f) => Judged::Bad {
                finding: foreign(f, buf, h.magic, lo),
                expected: lo,
                found: if h.magic == PAGE_MAGIC {
                    h.generation
                } else {
                    0
                },
            },
        }
    }
}

/// A block that holds no trace of the format at all (no header, no valid
/// sector stamp) most likely holds what was there before iosim wrote it:
/// its writes were lost (as `iosim crash verify` judges the file's earlier
/// contents). Damage to a written block leaves the stamps of the sectors it
/// did not touch, and stays a checksum mismatch.
#[cold]
fn foreign(f: Finding, buf: &[u8], magic: u32, lo: u32) -> Finding {
    if f.class != ErrorClass::ChecksumMismatch
        || magic == PAGE_MAGIC
        || block_sector_generations(buf).iter().any(Option::is_some)
    {
        return f;
    }
    Finding {
        class: ErrorClass::StaleRead,
        detail: format!("the block holds no block iosim wrote (no header, no sector stamp: its contents before iosim wrote it, or foreign data over all of it), but generation {lo} was written and completed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{fill_payload, stamp_block};

    fn table() -> GenTable {
        GenTable::new(1, 4096, 64 * 4096, 4096, 99)
    }

    fn image(t: &GenTable, b: usize, g: u32) -> Vec<u8> {
        let mut v = vec![0u8; 4096];
        fill_payload(&mut v, b as u64);
        stamp_block(&mut v, t.seed, t.id(b, g), 0);
        v
    }

    #[test]
    fn claims_serialise_writes_to_a_block() {
        let t = table();
        assert_eq!(t.blocks(), 64);
        assert_eq!(t.block_of(4096 + 3 * 4096), 3);
        assert_eq!(t.offset_of(3), 4096 + 3 * 4096);
        // A block size that is not a power of two divides.
        let odd = GenTable::new(1, 512, 12 * 3072, 3072, 7);
        assert_eq!(odd.block_of(512 + 5 * 3072), 5);
        assert_eq!(
            odd.offset_of(odd.block_of(512 + 11 * 3072)),
            512 + 11 * 3072
        );
        assert_eq!(t.claim(3), Some(1));
        assert_eq!(t.claim(3), None, "one write per block in flight");
        t.complete(3, 1);
        assert_eq!(t.claim(3), Some(2));
        t.complete(3, 2);
        assert_eq!(t.entry(3), 2);
        assert_eq!(t.written(), 1);
    }

    #[test]
    fn a_quiet_block_must_hold_its_last_generation() {
        let t = table();
        let e = 5;
        assert_eq!(t.judge(&image(&t, 7, 5), 7, e, e), Judged::Good);
        match t.judge(&image(&t, 7, 4), 7, e, e) {
            Judged::Bad {
                finding,
                expected,
                found,
            } => {
                assert_eq!(finding.class, ErrorClass::StaleRead);
                assert_eq!((expected, found), (5, 4));
            }
            j => panic!("{j:?}"),
        }
        // Another block's image: misdirected.
        match t.judge(&image(&t, 8, 5), 7, e, e) {
            Judged::Bad { finding, .. } => assert_eq!(finding.class, ErrorClass::Misdirected),
            j => panic!("{j:?}"),
        }
        // A flipped bit: corruption.
        let mut b = image(&t, 7, 5);
        b[2000] ^= 1;
        match t.judge(&b, 7, e, e) {
            Judged::Bad { finding, .. } => {
                assert_eq!(finding.class, ErrorClass::ChecksumMismatch)
            }
            j => panic!("{j:?}"),
        }
        assert_eq!(t.judge(&b, 9, 0, 0), Judged::Unwritten);
    }

    #[test]
    fn reads_racing_a_write_accept_old_new_or_torn() {
        let t = table();
        let busy6 = 6 | BUSY;
        // Issued while generation 6 was being written: 5 or 6 are fine.
        assert_eq!(t.judge(&image(&t, 2, 5), 2, busy6, 6), Judged::Good);
        assert_eq!(t.judge(&image(&t, 2, 6), 2, busy6, 6), Judged::Good);
        let mut torn = image(&t, 2, 6);
        torn[2048..].copy_from_slice(&image(&t, 2, 5)[2048..]);
        assert_eq!(t.judge(&torn, 2, busy6, 6), Judged::Raced);
        // Older than the generation before the write: lost.
        match t.judge(&image(&t, 2, 3), 2, busy6, 6) {
            Judged::Bad { finding, .. } => assert_eq!(finding.class, ErrorClass::StaleRead),
            j => panic!("{j:?}"),
        }
        // Torn without a write in flight is a failure.
        match t.judge(&torn, 2, 6, 6) {
            Judged::Bad { finding, .. } => assert_eq!(finding.class, ErrorClass::TornPage),
            j => panic!("{j:?}"),
        }
        // The first write in flight: anything may be there.
        assert_eq!(t.judge(&[0u8; 4096], 2, 1 | BUSY, 1), Judged::Raced);
    }
}
