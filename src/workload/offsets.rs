//! The offset generators that turn a workload into one thread's stream of I/Os.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::spec::{Stripe, WorkloadSpec};
use super::Placement;
use super::{bssplit, distribution};

#[derive(Clone, Debug)]
struct StripeWalk {
    factor: u64,
    rows: u64,
    first_col: u64,
    end_col: u64,
    col: u64,
    row: u64,
}

impl StripeWalk {
    /// The next block number, then one step on.
    #[inline]
    fn next_block(&mut self) -> u64 {
        let block = self.row * self.factor + self.col;
        self.row += 1;
        if self.row == self.rows {
            self.row = 0;
            self.col += 1;
            if self.col == self.end_col {
                self.col = self.first_col;
            }
        }
        block
    }
}

/// A percentage as a threshold on a random u32: a draw below it happens
/// `pct`% of the time (exact at 0 and 100: 100 is above every u32).
fn pct_threshold(pct: u8) -> u64 {
    (u64::from(pct.min(100)) << 32) / 100
}

/// Generates the offsets and directions of one thread's I/Os over a region.
///
/// Pure and seeded, so it can be tested without any I/O. Random offsets are
/// uniform over the aligned blocks of the region; sequential offsets advance by
/// the block size and wrap at the end of the region.
#[derive(Clone, Debug)]
pub struct OffsetGen {
    base: u64,
    len: u64,
    bs: u64,
    align: u64,
    random: bool,
    /// Number of aligned start positions for random I/O.
    slots: u64,
    /// Next sequential position, relative to `base`.
    next: u64,
    /// A write happens when a random u32 is below this (0 = never, 2^32 = always).
    write_threshold: u64,
    /// Mixed random/sequential: an I/O is random when a random u32 is below this.
    random_threshold: Option<u64>,
    /// One offset shared by all threads of the target (interlocked sequential).
    shared: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Skewed random positions (`None`: uniform).
    skew: Option<distribution::SkewGen>,
    /// SQLIO's stripe pattern instead of a plain sequential stream.
    stripe: Option<StripeWalk>,
    /// Block-size mix (`None`: every I/O is `bs`, which is then the largest size).
    sizes: Option<bssplit::SizeMix>,
    /// A log's tail page written again: (page, threshold on a random u32).
    tail: Option<(u64, u64)>,
    /// Periodic bursts of writes (`burst_writes`): the write threshold
    /// between bursts (inside one, every I/O writes).
    burst_writes: Option<u64>,
    /// The database's cache (`--db-cache`): random reads at a rank below
    /// this are hits (0: no cache).
    cached: u64,
    /// The rank (hottest first) of the last skewed position drawn.
    rank: u64,
    rng: SmallRng,
}

/// One generated I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextIo {
    /// Absolute byte offset.
    pub offset: u64,
    /// Write (else read).
    pub write: bool,
    /// Length in bytes.
    pub len: u64,
    /// Size class (index into [`bssplit::SizeMix::classes`]; 0 without a mix).
    pub class: u8,
}

impl OffsetGen {
    /// A generator for one thread.
    ///
    /// `base..base+len` is the region; `start` is where a sequential stream begins
    /// (relative to `base`, wrapped into the region). `write_pct` is the share of writes.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        base: u64,
        len: u64,
        bs: u64,
        align: u64,
        random: bool,
        start: u64,
        write_pct: u8,
        seed: u64,
    ) -> OffsetGen {
        let align = align.max(1);
        let slots = if len >= bs { (len - bs) / align + 1 } else { 0 };
        // Sequential streams advance in whole blocks and restart at 0 when the next
        // block would not fit.
        let seq_end = if len >= bs { (len / bs) * bs } else { 0 };
        let next = if seq_end == 0 {
            0
        } else {
            crate::units::align_down(start % seq_end, bs.min(align).max(1)) % seq_end
        };
        // A start aligned to less than a block can leave too little room for
        // one (4 KiB blocks at 512-byte alignment, 512 bytes before the end):
        // the stream starts at the beginning then, as it wraps there later.
        let next = if next + bs > len { 0 } else { next };
        // write_pct as a threshold on a 32-bit random number; exact at 0 and 100.
        let write_threshold = pct_threshold(write_pct);
        OffsetGen {
            base,
            len,
            bs,
            align,
            random,
            slots,
            next,
            write_threshold,
            random_threshold: None,
            shared: None,
            skew: None,
            stripe: None,
            sizes: None,
            tail: None,
            burst_writes: None,
            cached: 0,
            rank: 0,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Walks SQLIO's stripe pattern instead of a plain sequential stream:
    /// thread `thread` of `threads` on the target takes its share of the
    /// columns (at least one). Offsets past the region's end wrap around it.
    pub fn striped(mut self, s: Stripe, thread: usize, threads: usize) -> OffsetGen {
        let factor = s.factor.max(1);
        let threads = threads.max(1) as u64;
        let t = (thread as u64).min(threads - 1);
        let first_col = (factor * t / threads).min(factor - 1);
        let end_col = (factor * (t + 1) / threads).clamp(first_col + 1, factor);
        self.stripe = Some(StripeWalk {
            factor,
            rows: s.ios_per_run.max(1),
            first_col,
            end_col,
            col: first_col,
            row: 0,
        });
        self
    }

    /// Makes `random_pct` percent of the I/Os random and the others continue
    /// sequentially from the previous I/O, random or not (DiskSpd's `-rs`).
    pub fn mixed(mut self, random_pct: u8) -> OffsetGen {
        self.random_threshold = Some(pct_threshold(random_pct));
        self
    }

    /// Takes sequential offsets from `counter`, shared with the target's other
    /// threads, so that together they issue one sequential stream (DiskSpd's
    /// `-si`). One atomic add per I/O; no lock.
    pub fn shared(mut self, counter: std::sync::Arc<std::sync::atomic::AtomicU64>) -> OffsetGen {
        self.shared = Some(counter);
        self
    }

    /// Applies target `target`'s access skew from `spec` (nothing for uniform).
    /// The tables are built here, before the run; the hot set is placed with a
    /// seed shared by all threads of the target, so they agree on which blocks are hot.
    pub fn shaped(mut self, spec: &WorkloadSpec, target: usize) -> OffsetGen {
        let d = spec.distribution_for(target);
        if d.is_uniform() || self.slots == 0 {
            return self;
        }
        let sampler = std::sync::Arc::new(distribution::RankSampler::new(d, self.slots));
        let scatter = match spec.shape.placement {
            Placement::Random => {
                Some(spec.seed ^ (target as u64).wrapping_mul(0xA24B_AED4_963E_E407))
            }
            Placement::Start => None,
        };
        self.skew = Some(distribution::SkewGen::new(sampler, scatter));
        self
    }

    /// Draws each I/O's size from `spec`'s block-size mix (nothing without
    /// one). `bs` given to [`OffsetGen::new`] must be the mix's largest size,
    /// so random offsets keep every size inside the region.
    pub fn sized(mut self, spec: &WorkloadSpec) -> OffsetGen {
        if let Some(b) = &spec.shape.bssplit {
            self.sizes = Some(bssplit::SizeMix::new(b, self.bs));
        }
        self
    }

    /// Writes a log's partly filled tail page again (`spec`'s
    /// `--tail-rewrite`; nothing without one): after a sequential write, the
    /// stream steps back one page `pct`% of the time, so the next write
    /// starts in the page this one ended in. Validated for one plain
    /// sequential stream of writes at QD 1 ([`WorkloadSpec::validate`]).
    pub fn tail_rewrite(mut self, spec: &WorkloadSpec) -> OffsetGen {
        if let Some(t) = spec.shape.tail_rewrite {
            self.tail = Some((t.page, pct_threshold(t.pct)));
        }
        self
    }

    /// Serves the reads of the hottest ranks from the database's cache
    /// (`spec`'s `--db-cache`; nothing without one): see
    /// [`OffsetGen::cached_read`]. Validated for all-random patterns.
    pub fn db_cache(mut self, spec: &WorkloadSpec) -> OffsetGen {
        if let Some(c) = spec.shape.db_cache {
            self.cached = c.cached_ranks(self.slots, self.len);
        }
        self
    }

    /// True when a database cache serves some reads (`--db-cache`).
    #[inline(always)]
    pub fn caches_reads(&self) -> bool {
        self.cached != 0
    }

    /// True when the read at `offset`, just drawn, is a hit of the database's
    /// cache: its position is among the cached (hottest) ranks.
    #[inline]
    pub fn cached_read(&self, offset: u64) -> bool {
        // Uniform positions are their own ranks (the first ones are cached).
        let rank = match &self.skew {
            Some(_) => self.rank,
            None => (offset - self.base) / self.align,
        };
        rank < self.cached
    }

    /// Hits on the hottest 1% and 10% and all skewed draws since the last
    /// [`OffsetGen::reset_counts`] (zeros when uniform).
    pub fn skew_counts(&self) -> (u64, u64, u64) {
        self.skew
            .as_ref()
            .map_or((0, 0, 0), |s| (s.hits1, s.hits10, s.draws))
    }

    /// Clears the skew counters (the end of the warmup).
    pub fn reset_counts(&mut self) {
        if let Some(s) = &mut self.skew {
            s.reset_counts();
        }
    }

    /// Number of distinct random block positions (0 when no block fits).
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The next offset (absolute) and whether it is a write.
    #[inline]
    pub fn next_io(&mut self) -> (u64, bool) {
        let io = self.next_sized();
        (io.offset, io.write)
    }

    /// The next I/O: offset, direction, length and size class.
    #[inline(always)]
    pub fn next_sized(&mut self) -> NextIo {
        if self.sizes.is_none() {
            // Draw order kept from before size mixes: same seed, same stream.
            let random = self.pick_random();
            let offset = self.offset(random, self.bs);
            let write = self.pick_write();
            return NextIo {
                offset,
                write,
                len: self.bs,
                class: 0,
            };
        }
        let write = self.pick_write();
        let (class, len) = match &self.sizes {
            Some(m) => m.pick(write, &mut self.rng),
            None => (0, self.bs),
        };
        let random = self.pick_random();
        NextIo {
            offset: self.offset(random, len),
            write,
            len,
            class,
        }
    }

    #[inline(always)]
    fn pick_random(&mut self) -> bool {
        match self.random_threshold {
            None => self.random,
            Some(t) => u64::from(self.rng.gen::<u32>()) < t,
        }
    }

    /// `burst_writes`: the write share between the bursts, from the spec
    /// ([`WorkloadSpec::write_share_between_bursts`]); the generator starts
    /// between bursts.
    pub fn burst_writes(mut self, spec: &WorkloadSpec) -> OffsetGen {
        if let Some(share) = spec.write_share_between_bursts() {
            let t = (share.clamp(0.0, 1.0) * (1u64 << 32) as f64) as u64;
            self.burst_writes = Some(t);
            self.write_threshold = t;
        }
        self
    }

    /// The pacer says whether the next I/O belongs to a burst: all writes
    /// inside one with `burst_writes`, the share between bursts outside;
    /// nothing otherwise.
    #[inline]
    pub fn in_burst(&mut self, yes: bool) {
        if let Some(t) = self.burst_writes {
            self.write_threshold = if yes { 1 << 32 } else { t };
        }
    }

    #[inline(always)]
    fn pick_write(&mut self) -> bool {
        match self.write_threshold {
            0 => false,
            t if t > u64::from(u32::MAX) => true,
            t => u64::from(self.rng.gen::<u32>()) < t,
        }
    }

    /// After a write that left its last page partly filled (`pct`% of
    /// them), the next sequential position is that page: one page back
    /// from where the write ended (the same page again after a one-page
    /// write). Every I/O of such a stream is a write (`--rw write`,
    /// validated). Out of line, and only on the plain sequential path: no
    /// other run pays for it.
    #[cold]
    #[inline(never)]
    fn step_back(&mut self, len: u64) {
        let Some((page, threshold)) = self.tail else {
            return;
        };
        let partly_filled =
            threshold > u64::from(u32::MAX) || u64::from(self.rng.gen::<u32>()) < threshold;
        if len >= page && partly_filled {
            self.next -= page;
        }
    }

    /// The offset of an I/O of `len` bytes (at most `bs`, the largest size).
    #[inline(always)]
    fn offset(&mut self, random: bool, len: u64) -> u64 {
        if random {
            let i = if let Some(s) = &mut self.skew {
                let (rank, at) = s.next_ranked(&mut self.rng);
                self.rank = rank;
                at
            } else if self.slots <= 1 {
                0
            } else {
                self.rng.gen_range(0..self.slots)
            };
            let off = i * self.align;
            if self.random_threshold.is_some() {
                // The next sequential I/O continues from here.
                self.next = off + len;
                if self.next + self.bs > self.len {
                    self.next = 0;
                }
            }
            self.base + off
        } else if let Some(c) = &self.shared {
            let seq_end = if self.len >= self.bs {
                (self.len / self.bs) * self.bs
            } else {
                0
            };
            let n = c.fetch_add(len, std::sync::atomic::Ordering::Relaxed);
            let mut off = if seq_end == 0 { 0 } else { n % seq_end };
            if off + len > self.len {
                // A mix's large block does not fit before the wrap.
                off = 0;
            }
            self.base + off
        } else if let Some(st) = &mut self.stripe {
            let seq_end = if self.len >= self.bs {
                (self.len / self.bs) * self.bs
            } else {
                0
            };
            let off = st.next_block().saturating_mul(self.bs);
            self.base + if seq_end == 0 { 0 } else { off % seq_end }
        } else {
            let off = self.next;
            self.next += len;
            if self.tail.is_some() {
                self.step_back(len);
            }
            if self.next + self.bs > self.len {
                self.next = 0;
            }
            self.base + off
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A periodic burst of 20 writes (10 ms at 2,000 a second) every second
    /// over 50 I/Os a second, 60% writes overall: 69.5 I/Os a period (49.5
    /// between bursts), 41.7 writes, 20 of them the burst's, so 21.7 of the
    /// 49.5 between (0.44). A burst of 100 writes more than 60% of its
    /// period: none between. Inside a burst every I/O writes.
    #[test]
    fn a_burst_of_writes_leaves_the_rest_of_the_write_share_between_bursts() {
        let spec = WorkloadSpec {
            rw: crate::workload::RwMode::Randrw,
            write_pct: 60,
            rate_iops: Some(50),
            burst: 20,
            burst_rate_iops: Some(2000),
            burst_every: std::time::Duration::from_secs(1),
            burst_writes: true,
            ..WorkloadSpec::default()
        };
        let between = spec.write_share_between_bursts().unwrap();
        assert!((between - (41.7 - 20.0) / 49.5).abs() < 1e-9, "{between}");
        let burst100 = WorkloadSpec {
            burst: 100,
            ..spec.clone()
        };
        assert_eq!(burst100.write_share_between_bursts(), Some(0.0));
        let plain = WorkloadSpec {
            burst_writes: false,
            ..spec.clone()
        };
        assert_eq!(plain.write_share_between_bursts(), None);
        let mut g = OffsetGen::new(0, 1 << 30, 8192, 8192, true, 0, 60, 7).burst_writes(&spec);
        let share = |g: &mut OffsetGen, burst: bool| {
            g.in_burst(burst);
            (0..10_000).filter(|_| g.next_io().1).count() as f64 / 10_000.0
        };
        assert_eq!(share(&mut g, true), 1.0);
        assert!((share(&mut g, false) - between).abs() < 0.02);
        // Without burst_writes, the pacer's word changes nothing.
        let mut g = OffsetGen::new(0, 1 << 30, 8192, 8192, true, 0, 60, 7);
        assert!((share(&mut g, true) - 0.6).abs() < 0.02);
    }

    /// A sequential start aligned to less than a block, less than a block
    /// before the end (proptest's shrunk case: 4 KiB blocks at 512-byte
    /// alignment in 256 KiB): the stream starts at 0, never past the end.
    #[test]
    fn a_start_too_near_the_end_for_one_block_starts_at_zero() {
        let (len, bs) = (262_144u64, 4096u64);
        let mut g = OffsetGen::new(0, len, bs, 512, false, 3_528_122_522_324_955_648, 0, 0);
        let first = g.next_io().0;
        assert_eq!(first, 0);
        for _ in 0..200 {
            let (off, _) = g.next_io();
            assert!(off + bs <= len, "{off}");
        }
        // A start with room for a block is kept.
        let mut g = OffsetGen::new(0, len, bs, 512, false, 512, 0, 0);
        assert_eq!(g.next_io().0, 512);
    }

    fn tail_spec(t: &str, bssplit: Option<&str>) -> WorkloadSpec {
        WorkloadSpec {
            rw: crate::workload::RwMode::Write,
            write_pct: 100,
            bs: 16384,
            qd: 1,
            shape: crate::workload::Shape {
                tail_rewrite: Some(crate::workload::TailRewrite::parse(t).unwrap()),
                bssplit: bssplit.map(|b| b.parse().unwrap()),
                ..Default::default()
            },
            ..WorkloadSpec::default()
        }
    }

    /// `--tail-rewrite 4k`: every 16 KiB write starts in the last page of
    /// the one before, so the stream advances 12 KiB a write and wraps as
    /// a plain one does.
    #[test]
    fn a_tail_rewrite_starts_each_write_in_the_last_page_of_the_one_before() {
        let spec = tail_spec("4k", None);
        let mut g =
            OffsetGen::new(1 << 20, 64 << 10, 16384, 4096, false, 0, 100, 3).tail_rewrite(&spec);
        let offs: Vec<u64> = (0..6).map(|_| g.next_sized().offset - (1 << 20)).collect();
        assert_eq!(offs, [0, 12288, 24576, 36864, 49152, 0]);
        // One-page writes rewrite the same page.
        let mut one = OffsetGen::new(0, 64 << 10, 4096, 4096, false, 0, 100, 3)
            .tail_rewrite(&tail_spec("4k", None));
        assert!((0..5).all(|_| one.next_sized().offset == 0));
    }

    /// `4k:30`: about 30% of the writes leave their tail page to the next,
    /// and each write's length stays the mix's.
    #[test]
    fn a_tail_rewrite_share_is_kept_and_sizes_are_the_mixs() {
        let spec = tail_spec("4k:30", Some("8K/50:16K/50"));
        let mut g = OffsetGen::new(0, 1 << 30, 16384, 8192, false, 0, 100, 11)
            .sized(&spec)
            .tail_rewrite(&spec);
        let (mut prev_end, mut rewrites, mut sizes) = (0u64, 0u32, [0u32; 2]);
        let n = 20_000;
        for i in 0..n {
            let io = g.next_sized();
            sizes[usize::from(io.len == 16384)] += 1;
            if i > 0 {
                if io.offset + 4096 == prev_end {
                    rewrites += 1;
                } else {
                    assert_eq!(io.offset, prev_end, "at {i}");
                }
            }
            prev_end = io.offset + io.len;
        }
        let share = f64::from(rewrites) / f64::from(n - 1);
        assert!((share - 0.30).abs() < 0.02, "{share}");
        assert!(
            sizes
                .iter()
                .all(|&c| (c as f64 / n as f64 - 0.5).abs() < 0.02),
            "{sizes:?}"
        );
    }

    /// `--db-cache 25%` over a uniform region: the cache holds the first
    /// quarter of the positions; a quarter of the reads hit it, and no miss
    /// lands there. Writes are never hits.
    #[test]
    fn the_database_cache_serves_the_reads_of_its_share_and_no_other() {
        let spec = WorkloadSpec {
            shape: crate::workload::Shape {
                db_cache: Some(crate::workload::DbCache::Share(0.25)),
                ..Default::default()
            },
            ..WorkloadSpec::default()
        };
        let len = 4096 * 1000;
        let mut g = OffsetGen::new(0, len, 4096, 4096, true, 0, 30, 7).db_cache(&spec);
        let (mut reads, mut hits) = (0u32, 0u32);
        for _ in 0..20_000 {
            let io = g.next_sized();
            let hit = !io.write && g.caches_reads() && g.cached_read(io.offset);
            assert!(!(hit && io.write), "a write was a hit");
            if !io.write {
                reads += 1;
                if hit {
                    hits += 1;
                    assert!(io.offset < len / 4, "a hit at {}", io.offset);
                } else {
                    assert!(io.offset >= len / 4, "a miss in the cache at {}", io.offset);
                }
            }
        }
        let share = f64::from(hits) / f64::from(reads);
        assert!((share - 0.25).abs() < 0.02, "{share}");
    }
}
