//! What writes carry: data that compresses and deduplicates by the amounts
//! asked, for arrays that do both, and a check of what was generated.
//!
//! The unit is a 4 KiB block, as arrays compress and deduplicate. A block is
//! random bytes followed by zeros: the zero tail (`compress_pct` of the block)
//! compresses away, the random head does not (fio's
//! `buffer_compress_percentage`). Each block carries an 8-byte identity at its
//! start; a deduplicated block takes the identity of an earlier block and so
//! repeats it byte for byte (fio's `dedupe_percentage`). Content depends on the
//! identity only: block `id` is a copy of bank entry `id % BANK` with the
//! identity stamped in, so generating a block is one 4 KiB copy, never a
//! random-number fill, and no history of earlier blocks is kept.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Compression and deduplication unit.
pub const UNIT: usize = 4096;
/// Distinct block bodies kept (1 MiB): far apart enough that no compressor
/// window (64 KiB for LZ4, at most a few MiB for array-side compressors) sees a repeat.
const BANK: usize = 256;

/// A fill pattern of 1 to 16 bytes (`pattern:DEADBEEF`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatternBytes {
    bytes: [u8; 16],
    len: u8,
}

impl PatternBytes {
    /// The pattern's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Fills `buf` with the pattern repeated.
    pub fn fill(&self, buf: &mut [u8]) {
        let p = self.as_slice();
        for (i, b) in buf.iter_mut().enumerate() {
            *b = p[i % p.len()];
        }
    }
}

impl FromStr for PatternBytes {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let h = s.trim().trim_start_matches("0x").trim_start_matches("0X");
        if h.is_empty() || h.len() % 2 != 0 || h.len() > 32 {
            return Err(format!(
                "pattern '{s}': give 1 to 16 bytes as an even number of hex digits"
            ));
        }
        let mut bytes = [0u8; 16];
        for (i, b) in bytes.iter_mut().take(h.len() / 2).enumerate() {
            *b = u8::from_str_radix(&h[2 * i..2 * i + 2], 16)
                .map_err(|_| format!("pattern '{s}': not hexadecimal"))?;
        }
        Ok(PatternBytes {
            bytes,
            len: (h.len() / 2) as u8,
        })
    }
}

impl fmt::Display for PatternBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.as_slice() {
            write!(f, "{b:02X}")?;
        }
        Ok(())
    }
}

/// Generates 4 KiB blocks with a given compressibility and duplicate share.
#[derive(Clone, Debug)]
pub struct DataGen {
    bank: Vec<u8>,
    /// Bytes of a block that are random (the rest are zeros).
    random_len: usize,
    /// A block repeats an earlier one when a random u32 is below this.
    dedupe_threshold: u64,
    /// Identities handed out fresh so far.
    fresh: u64,
    /// High bits that keep threads' identities apart.
    stream: u64,
    salt: u64,
    rng: SmallRng,
}

impl DataGen {
    /// A generator for one stream (a thread, or file creation). Streams made
    /// with the same `seed` share block bodies, so duplicates can match
    /// across streams; `stream` keeps their fresh identities distinct.
    pub fn new(compress_pct: u8, dedupe_pct: u8, seed: u64, stream: u64) -> DataGen {
        let random_len = UNIT - UNIT * usize::from(compress_pct.min(100)) / 100;
        let mut bank = vec![0u8; UNIT * BANK];
        for (i, unit) in bank.chunks_exact_mut(UNIT).enumerate() {
            crate::buf::fill_random(&mut unit[..random_len], seed ^ (i as u64) << 20);
        }
        DataGen {
            bank,
            random_len,
            dedupe_threshold: (u64::from(dedupe_pct.min(100)) << 32) / 100,
            fresh: 0,
            stream: stream << 40,
            salt: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            rng: SmallRng::seed_from_u64(seed ^ stream.rotate_left(17) ^ 0xDA7A),
        }
    }

    /// The generator `fill` and `dedupe_pct` call for, if any: `None` when
    /// the data is a fixed fill (random, zero, a pattern) and nothing repeats.
    pub fn for_fill(
        fill: super::FillMode,
        dedupe_pct: u8,
        seed: u64,
        stream: u64,
    ) -> Option<DataGen> {
        match fill {
            super::FillMode::Compressible(n) => Some(DataGen::new(n, dedupe_pct, seed, stream)),
            _ if dedupe_pct > 0 => Some(DataGen::new(0, dedupe_pct, seed, stream)),
            _ => None,
        }
    }

    /// The identity of the next block: fresh, or (dedupe) one this stream used before.
    #[inline]
    fn next_id(&mut self) -> u64 {
        let repeat = self.dedupe_threshold > 0
            && self.fresh > 0
            && u64::from(self.rng.gen::<u32>()) < self.dedupe_threshold;
        if repeat {
            self.stream | self.rng.gen_range(0..self.fresh)
        } else {
            self.fresh += 1;
            self.stream | (self.fresh - 1)
        }
    }

    /// Fills `buf` (any length; whole 4 KiB blocks and a tail) with the next blocks.
    /// One copy and one stamp per block; no allocation.
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8]) {
        for unit in buf.chunks_mut(UNIT) {
            let id = self.next_id();
            let b = (id as usize % BANK) * UNIT;
            unit.copy_from_slice(&self.bank[b..b + unit.len()]);
            // The stamp goes into the random head (or over the zeros when the
            // block is all compressible: 8 bytes do not change its ratio).
            if unit.len() >= 8 {
                unit[..8].copy_from_slice(&(id ^ self.salt).to_le_bytes());
            }
        }
    }

    /// Bytes of each block that are random.
    pub fn random_len(&self) -> usize {
        self.random_len
    }
}

/// Fills `buf` once for a fixed fill: zeros, the pattern, or random bytes.
pub fn fill_fixed(buf: &mut [u8], fill: super::FillMode) {
    match fill {
        super::FillMode::Zero => buf.fill(0),
        super::FillMode::Pattern(p) => p.fill(buf),
        _ => crate::buf::fill_random(buf, 0x5eed ^ buf.len() as u64),
    }
}

/// The data one worker thread writes: a fixed buffer, a random buffer with a
/// unique stamp per 4 KiB per write (so deduplicating storage cannot flatter),
/// or generated blocks (compressible, deduplicated).
#[derive(Debug)]
pub enum WriteData {
    /// Zeros or a pattern: the buffers are filled once and never change.
    Fixed,
    /// Random buffers, each write stamped with a unique word per 4 KiB.
    Stamped {
        /// Writes so far.
        seq: u64,
        /// Mixed into the stamp.
        seed: u64,
    },
    /// Every write generated block by block.
    Generated(Box<DataGen>),
}

impl WriteData {
    /// The data of thread `thread` of a run of `spec` (`seed` is the thread's seed).
    pub fn for_thread(spec: &super::WorkloadSpec, thread: u64, seed: u64) -> WriteData {
        match DataGen::for_fill(spec.fill, spec.shape.dedupe_pct, spec.seed, thread) {
            Some(g) => WriteData::Generated(Box::new(g)),
            None if matches!(
                spec.fill,
                super::FillMode::Zero | super::FillMode::Pattern(_)
            ) =>
            {
                WriteData::Fixed
            }
            None => WriteData::Stamped { seq: 0, seed },
        }
    }

    /// Fills a slot buffer before the run (outside the measured time).
    pub fn prepare(&self, buf: &mut [u8], fill: super::FillMode, seed: u64) {
        match self {
            WriteData::Fixed => fill_fixed(buf, fill),
            _ => crate::buf::fill_random(buf, seed),
        }
    }

    /// Makes `buf` (the bytes of one write) hold the next write's data. No allocation.
    #[inline]
    pub fn next(&mut self, buf: &mut [u8]) {
        match self {
            WriteData::Fixed => {}
            WriteData::Stamped { seq, seed } => {
                *seq += 1;
                let stamp = (*seq ^ *seed).to_le_bytes();
                for chunk in buf.chunks_mut(UNIT) {
                    if chunk.len() >= 8 {
                        chunk[..8].copy_from_slice(&stamp);
                    }
                }
            }
            WriteData::Generated(g) => g.fill(buf),
        }
    }
}

/// What a sample of a generated stream turned out to be.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DataReport {
    /// The fill asked for.
    pub fill: String,
    /// Percentage of each block asked to compress away.
    pub compress_pct_asked: u8,
    /// Percentage of blocks asked to repeat earlier ones.
    pub dedupe_pct_asked: u8,
    /// Bytes sampled.
    pub sample_bytes: u64,
    /// Percentage saved by LZ4 compressing each 4 KiB block on its own.
    pub compress_pct_achieved: f64,
    /// Percentage of 4 KiB blocks that repeat one earlier in the sample.
    pub dedupe_pct_achieved: f64,
    /// Compression ratio (original / compressed).
    pub compress_ratio: f64,
    /// Deduplication ratio (blocks / distinct blocks).
    pub dedupe_ratio: f64,
    /// CPU time to generate one GiB of this data on one thread, seconds.
    pub generate_s_per_gib: f64,
}

impl DataReport {
    /// One line for the text report.
    pub fn line(&self) -> String {
        format!(
            "data {} dedupe {}%: measured on {} generated: {:.1}% compresses away (LZ4 per 4 KiB, {:.2}:1), {:.1}% of blocks repeat ({:.2}:1); generation costs {:.2} CPU-s per GiB",
            self.fill,
            self.dedupe_pct_asked,
            crate::units::format_size(self.sample_bytes),
            self.compress_pct_achieved,
            self.compress_ratio,
            self.dedupe_pct_achieved,
            self.dedupe_ratio,
            self.generate_s_per_gib
        )
    }
}

/// Generates `sample` bytes as a run's writes would, then measures them: LZ4
/// on each 4 KiB block and a hash count of distinct blocks, and the time the
/// generation took per GiB.
pub fn measure(fill: super::FillMode, dedupe_pct: u8, seed: u64, sample: usize) -> DataReport {
    let compress_pct = match fill {
        super::FillMode::Compressible(n) => n,
        super::FillMode::Zero => 100,
        _ => 0,
    };
    let mut gen = DataGen::new(compress_pct, dedupe_pct, seed, 0);
    let sample = sample.max(UNIT) / UNIT * UNIT;
    let mut buf = vec![0u8; sample];
    let chunk = 256 << 10;
    let t0 = Instant::now();
    for c in buf.chunks_mut(chunk) {
        match fill {
            super::FillMode::Pattern(p) => p.fill(c),
            super::FillMode::Zero => c.fill(0),
            _ => gen.fill(c),
        }
    }
    let gen_s = t0.elapsed().as_secs_f64();
    let mut compressed = 0usize;
    let mut seen = HashSet::with_capacity(sample / UNIT);
    let mut dups = 0usize;
    let mut out = vec![0u8; lz4_flex::block::get_maximum_output_size(UNIT)];
    for unit in buf.chunks_exact(UNIT) {
        let n = lz4_flex::block::compress_into(unit, &mut out).unwrap_or(UNIT);
        // A block that does not shrink is stored as it is.
        compressed += n.min(UNIT);
        if !seen.insert(unit) {
            dups += 1;
        }
    }
    let blocks = sample / UNIT;
    let distinct = blocks - dups;
    DataReport {
        fill: fill.name(),
        compress_pct_asked: compress_pct,
        dedupe_pct_asked: dedupe_pct,
        sample_bytes: sample as u64,
        compress_pct_achieved: 100.0 * (1.0 - compressed as f64 / sample as f64),
        dedupe_pct_achieved: 100.0 * dups as f64 / blocks as f64,
        compress_ratio: sample as f64 / compressed.max(1) as f64,
        dedupe_ratio: blocks as f64 / distinct.max(1) as f64,
        generate_s_per_gib: gen_s * (1u64 << 30) as f64 / sample as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::FillMode;

    #[test]
    fn compression_is_within_five_points_of_the_ask() {
        for pct in [0u8, 25, 50, 75, 90] {
            let r = measure(FillMode::Compressible(pct), 0, 1, 8 << 20);
            assert!(
                (r.compress_pct_achieved - f64::from(pct)).abs() <= 5.0,
                "asked {pct}%, got {:.1}%",
                r.compress_pct_achieved
            );
            assert!(r.dedupe_pct_achieved < 0.1, "{r:?}");
        }
    }

    #[test]
    fn dedupe_is_within_five_points_of_the_ask() {
        for pct in [10u8, 30, 50, 80] {
            let r = measure(FillMode::Compressible(50), pct, 2, 8 << 20);
            assert!(
                (r.dedupe_pct_achieved - f64::from(pct)).abs() <= 5.0,
                "asked {pct}%, got {:.1}%",
                r.dedupe_pct_achieved
            );
            // Duplicates do not change how well each block compresses.
            assert!((r.compress_pct_achieved - 50.0).abs() <= 5.0, "{r:?}");
        }
    }

    #[test]
    fn random_does_not_compress_and_zero_and_patterns_do() {
        let r = measure(FillMode::Random, 0, 3, 4 << 20);
        assert!(r.compress_pct_achieved < 1.0, "{r:?}");
        let z = measure(FillMode::Zero, 0, 3, 4 << 20);
        assert!(z.compress_pct_achieved > 95.0, "{z:?}");
        let p = measure(
            FillMode::Pattern("DEADBEEF".parse().unwrap()),
            0,
            3,
            1 << 20,
        );
        assert!(p.compress_pct_achieved > 95.0);
        // Every block of a pattern is the same block.
        assert!(p.dedupe_pct_achieved > 99.0);
    }

    #[test]
    fn streams_with_one_seed_share_bodies_but_not_identities() {
        let mut a = DataGen::new(50, 0, 7, 0);
        let mut b = DataGen::new(50, 0, 7, 1);
        let (mut x, mut y) = (vec![0u8; UNIT], vec![0u8; UNIT]);
        a.fill(&mut x);
        b.fill(&mut y);
        assert_ne!(x[..8], y[..8]);
        assert_eq!(x[8..], y[8..]);
        assert!(x[a.random_len()..].iter().all(|&v| v == 0));
    }

    #[test]
    fn patterns_parse_and_print() {
        let p: PatternBytes = "0xdeadBEEF".parse().unwrap();
        assert_eq!(p.as_slice(), &[0xDE, 0xAD, 0xBE, 0xEF]);
        assert_eq!(p.to_string(), "DEADBEEF");
        for bad in ["", "abc", "zz", &"00".repeat(17)] {
            assert!(bad.parse::<PatternBytes>().is_err(), "{bad}");
        }
        for s in [
            "random",
            "zero",
            "sparse",
            "allocated",
            "grow",
            "pattern:A5",
            "compressible:50",
        ] {
            let f: FillMode = s.parse().unwrap();
            assert_eq!(f.to_string(), s);
            let j = serde_json::to_string(&f).unwrap();
            assert_eq!(serde_json::from_str::<FillMode>(&j).unwrap(), f);
        }
        assert!("compressible:101".parse::<FillMode>().is_err());
    }
}
