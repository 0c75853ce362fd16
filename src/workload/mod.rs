//! What to run: the workload specification shared by every front end
//! (native `iosim run`, SQLIO, DiskSpd, profiles, sweeps), and the offset
//! generators that turn it into a stream of I/Os.
//!
//! Front ends build a [`WorkloadSpec`]; [`WorkloadSpec::validate`] checks it;
//! the runner executes it. The spec serialises into the JSON results as the
//! resolved configuration.
//!
//! By job: `modes` (pattern, cache, engine, fill), `spec` (targets and the
//! workload), `offsets` (the generators); block-size mixes, distributions,
//! data, measured and steady-state workloads in their own files.

pub mod bssplit;
pub mod data;
pub mod dbcache;
pub mod distribution;
mod durability;
pub mod measured;
mod modes;
pub mod neighbour;
mod offsets;
mod spec;
pub mod steady;

pub use bssplit::BsSplit;
pub use dbcache::DbCache;
pub use distribution::{Distribution, Placement};
pub use durability::{
    flush_refused, is_refusal, sync_method_arg, Flush, FlushKind, OpenSync, SyncMethod,
};
pub use modes::{fill_arg, CacheMode, EngineKind, FillMode, RwMode};
pub use offsets::{NextIo, OffsetGen};
pub use spec::{
    duration_secs, stripe_arg, SeqLayout, Shape, Stripe, TailRewrite, TargetSpec, WorkloadSpec,
    MAX_BS, MAX_QD, MAX_THREADS,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The readme's example: `-f64 -i64` with 2 KiB blocks; one thread reads
    /// blocks 0, 64, ..., 4032, then 1, 65, ...; with two threads the second
    /// starts at block 32 and both wrap within their half of the columns.
    #[test]
    fn sqlio_stripe_pattern_follows_the_readme() {
        let s = Stripe {
            factor: 64,
            ios_per_run: 64,
        };
        let bs = 2048;
        let blocks = |g: &mut OffsetGen, n: usize| -> Vec<u64> {
            (0..n).map(|_| g.next_io().0 / bs).collect()
        };
        let mut one = OffsetGen::new(0, s.span(bs), bs, bs, false, 0, 0, 1).striped(s, 0, 1);
        let first: Vec<u64> = blocks(&mut one, 65);
        assert_eq!(&first[..3], &[0, 64, 128]);
        assert_eq!(first[63], 4032);
        assert_eq!(first[64], 1);
        // The whole strip, then again from block 0.
        let rest = blocks(&mut one, 64 * 64 - 65);
        assert_eq!(*rest.last().unwrap(), 4095);
        assert_eq!(blocks(&mut one, 1), vec![0]);

        let mut t0 = OffsetGen::new(0, s.span(bs), bs, bs, false, 0, 0, 1).striped(s, 0, 2);
        let mut t1 = OffsetGen::new(0, s.span(bs), bs, bs, false, 0, 0, 2).striped(s, 1, 2);
        assert_eq!(blocks(&mut t1, 2), vec![32, 96]);
        let half: Vec<u64> = blocks(&mut t0, 32 * 64);
        assert_eq!(*half.last().unwrap(), 31 + 63 * 64);
        assert!(half.iter().all(|b| b % 64 < 32));
        assert_eq!(blocks(&mut t0, 1), vec![0]);
        // -f1 is sequential.
        let f1 = Stripe {
            factor: 1,
            ios_per_run: 64,
        };
        let mut seq = OffsetGen::new(0, 1 << 20, bs, bs, false, 0, 0, 1).striped(f1, 0, 1);
        assert_eq!(blocks(&mut seq, 4), vec![0, 1, 2, 3]);
    }

    #[test]
    fn random_offsets_stay_in_range_and_aligned() {
        let base = 1 << 20;
        let len = 10 << 20;
        let mut g = OffsetGen::new(base, len, 8192, 4096, true, 0, 0, 7);
        for _ in 0..100_000 {
            let (off, w) = g.next_io();
            assert!(!w);
            assert!(off >= base);
            assert!(off + 8192 <= base + len);
            assert_eq!(off % 4096, 0);
        }
    }

    #[test]
    fn mixed_stream_is_partly_random_and_continues_from_the_last_io() {
        let len = 1 << 30;
        let mut g = OffsetGen::new(0, len, 8192, 8192, true, 0, 0, 3).mixed(30);
        let mut prev = g.next_io().0;
        let (mut seq, n) = (0u32, 100_000u32);
        for _ in 0..n {
            let (off, _) = g.next_io();
            assert_eq!(off % 8192, 0);
            assert!(off + 8192 <= len);
            if off == prev + 8192 {
                seq += 1;
            }
            prev = off;
        }
        // 70% continue from the previous I/O (random jumps that happen to land
        // right after it are too rare to matter in a 1 GiB region).
        let share = f64::from(seq) / f64::from(n);
        assert!((share - 0.70).abs() < 0.01, "sequential share {share}");
        // 0 and 100 are the pure patterns.
        let mut g = OffsetGen::new(0, len, 4096, 4096, true, 0, 0, 3).mixed(0);
        let offs: Vec<u64> = (0..4).map(|_| g.next_io().0).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 12288]);
    }

    #[test]
    fn shared_offset_makes_one_stream_of_all_threads() {
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut gens: Vec<OffsetGen> = (0..4)
            .map(|t| {
                OffsetGen::new(1 << 20, 64 * 4096, 4096, 4096, false, t * 999, 0, t)
                    .shared(counter.clone())
            })
            .collect();
        let mut seen = Vec::new();
        for round in 0..32 {
            for g in gens.iter_mut() {
                let _ = round;
                seen.push(g.next_io().0);
            }
        }
        // Interleaved threads take consecutive blocks, then wrap at the end.
        let want: Vec<u64> = (0..128u64).map(|i| (1 << 20) + (i % 64) * 4096).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn random_offsets_cover_the_region() {
        let len = 256 * 4096;
        let mut g = OffsetGen::new(0, len, 4096, 4096, true, 0, 0, 1);
        let mut seen = vec![false; 256];
        for _ in 0..10_000 {
            seen[(g.next_io().0 / 4096) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "every block should be hit");
    }

    #[test]
    fn sequential_offsets_advance_and_wrap() {
        let mut g = OffsetGen::new(4096, 4 * 4096, 4096, 4096, false, 0, 100, 1);
        let offs: Vec<_> = (0..6).map(|_| g.next_io()).collect();
        let expect = [4096, 8192, 12288, 16384, 4096, 8192];
        for (i, (off, w)) in offs.iter().enumerate() {
            assert_eq!(*off, expect[i]);
            assert!(*w);
        }
    }

    #[test]
    fn sequential_start_is_wrapped_into_region() {
        let mut g = OffsetGen::new(0, 8 * 4096, 4096, 4096, false, 9 * 4096, 0, 1);
        assert_eq!(g.next_io().0, 4096);
    }

    #[test]
    fn write_share_is_close_to_requested() {
        let mut g = OffsetGen::new(0, 1 << 30, 4096, 4096, true, 0, 30, 3);
        let n = 200_000;
        let w = (0..n).filter(|_| g.next_io().1).count();
        let share = w as f64 / n as f64;
        assert!((share - 0.30).abs() < 0.01, "share {share}");
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = OffsetGen::new(0, 1 << 30, 4096, 4096, true, 0, 50, 42);
        let mut b = OffsetGen::new(0, 1 << 30, 4096, 4096, true, 0, 50, 42);
        for _ in 0..1000 {
            assert_eq!(a.next_io(), b.next_io());
        }
    }

    #[test]
    fn skewed_offsets_stay_aligned_in_range_and_hot() {
        let base = 1 << 20;
        let len = 64 << 20;
        for placement in [Placement::Random, Placement::Start] {
            let spec = WorkloadSpec {
                shape: Shape {
                    distribution: "hotcold:10/90".parse().unwrap(),
                    placement,
                    ..Default::default()
                },
                ..Default::default()
            };
            let mut g = OffsetGen::new(base, len, 8192, 4096, true, 0, 0, 7).shaped(&spec, 0);
            let slots = g.slots();
            let mut hits = vec![0u32; slots as usize];
            for _ in 0..200_000 {
                let (off, _) = g.next_io();
                assert!(off >= base && off + 8192 <= base + len);
                assert_eq!(off % 4096, 0);
                hits[((off - base) / 4096) as usize] += 1;
            }
            // The hottest 10% of the positions, whichever they are, take about 90%.
            hits.sort_unstable_by(|a, b| b.cmp(a));
            let top: u32 = hits[..(slots as usize).div_ceil(10)].iter().sum();
            let share = f64::from(top) / 200_000.0;
            assert!((share - 0.9).abs() < 0.01, "{placement:?}: {share}");
            let (_, h10, n) = g.skew_counts();
            assert!((h10 as f64 / n as f64 - 0.9).abs() < 0.01);
            if placement == Placement::Start {
                // Packed at the front: nothing hot beyond the first 10%.
                let mut g = OffsetGen::new(0, len, 4096, 4096, true, 0, 0, 1).shaped(&spec, 0);
                let front = (0..10_000).filter(|_| g.next_io().0 < len / 10).count();
                assert!((8800..9200).contains(&front), "{front}");
            }
        }
    }

    #[test]
    fn size_mixes_keep_offsets_in_range_and_sequential_streams_contiguous() {
        let mut spec = WorkloadSpec {
            shape: Shape {
                bssplit: Some("4K/50:64K/30:1M/20".parse().unwrap()),
                ..Default::default()
            },
            ..Default::default()
        };
        spec.resolve_sizes();
        assert_eq!(spec.bs, 1 << 20);
        assert_eq!(spec.effective_align(), 4096);
        let len = 8 << 20;
        let mut g = OffsetGen::new(0, len, spec.bs, 4096, true, 0, 0, 5).sized(&spec);
        let mut seen = [0u32; 3];
        for _ in 0..50_000 {
            let io = g.next_sized();
            assert!(io.offset + io.len <= len && io.offset % 4096 == 0, "{io:?}");
            assert_eq!(io.len, [4096, 65536, 1 << 20][io.class as usize]);
            seen[io.class as usize] += 1;
        }
        assert!(
            (f64::from(seen[2]) / 50_000.0 - 0.2).abs() < 0.01,
            "{seen:?}"
        );
        // Sequential: each I/O starts where the previous one ended, until the wrap.
        let mut g = OffsetGen::new(0, len, spec.bs, 4096, false, 0, 0, 5).sized(&spec);
        let mut prev = g.next_sized();
        for _ in 0..1000 {
            let io = g.next_sized();
            assert!(
                io.offset == prev.offset + prev.len || io.offset == 0,
                "{prev:?} {io:?}"
            );
            assert!(io.offset + io.len <= len);
            prev = io;
        }
        // --rate in bytes paces by the mean size: 0.5*4K + 0.3*64K + 0.2*1M.
        spec.rate_bytes = Some(1 << 20);
        let mean = 0.5 * 4096.0 + 0.3 * 65536.0 + 0.2 * 1048576.0;
        assert_eq!(spec.mean_io_bytes(), mean);
        assert_eq!(spec.rate_interval_ns(), (mean * 1e9 / 1048576.0) as u64);
        // A size direct I/O cannot use is refused before the run.
        spec.targets = vec![TargetSpec::new("/tmp/x", Some(1 << 20))];
        spec.shape.bssplit = Some("4K/50:1000/50".parse().unwrap());
        assert!(spec.validate().unwrap_err().to_string().contains("512"));
    }

    #[test]
    fn mode_parts_round_trip() {
        for m in [
            RwMode::Read,
            RwMode::Write,
            RwMode::Randread,
            RwMode::Randwrite,
            RwMode::Readwrite,
            RwMode::Randrw,
        ] {
            assert_eq!(RwMode::from_parts(m.is_random(), m.default_write_pct()), m);
        }
    }

    #[test]
    fn validation_catches_nonsense() {
        let mut s = WorkloadSpec {
            targets: vec![TargetSpec::new("/tmp/x", Some(1 << 20))],
            ..Default::default()
        };
        assert!(s.validate().is_ok());
        s.threads = 0;
        assert!(s.validate().is_err());
        s.threads = 1;
        s.qd = 0;
        assert!(s.validate().is_err());
        s.qd = 1;
        s.bs = 0;
        assert!(s.validate().is_err());
        s.bs = 4096;
        s.targets.clear();
        assert!(s.validate().is_err());
    }

    /// `--tail-rewrite PAGE[:PCT]`: parsed, written back, and refused where
    /// a log could not write that way, each saying what to change.
    #[test]
    fn tail_rewrite_parses_and_is_refused_where_no_log_writes_so() {
        use super::TailRewrite;
        let t = TailRewrite::parse("8k:70").unwrap();
        assert_eq!((t.page, t.pct, t.arg()), (8192, 70, "8K:70".to_string()));
        assert_eq!(TailRewrite::parse("4K").unwrap().arg(), "4K");
        for (bad, says) in [
            ("8k:0", "from 1 to 100"),
            ("8k:101", "from 1 to 100"),
            ("1000", "multiple of 512"),
            ("x", "e.g. --tail-rewrite 8k:70"),
        ] {
            let e = TailRewrite::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let ok = WorkloadSpec {
            targets: vec![TargetSpec::new("/x/wal", None)],
            rw: RwMode::Write,
            write_pct: 100,
            bs: 8192,
            qd: 1,
            shape: Shape {
                tail_rewrite: Some(t),
                ..Default::default()
            },
            ..WorkloadSpec::default()
        };
        ok.validate().unwrap();
        let refused = |edit: &dyn Fn(&mut WorkloadSpec), says: &str| {
            let mut s = ok.clone();
            edit(&mut s);
            let e = s.validate().unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        };
        refused(&|s| s.qd = 4, "needs --qd 1");
        refused(&|s| s.rw = RwMode::Randwrite, "use it with --rw write");
        refused(
            &|s| {
                s.rw = RwMode::Readwrite;
                s.write_pct = 90;
            },
            "use it with --rw write",
        );
        refused(&|s| s.random_pct = Some(10), "use it with --rw write");
        refused(
            &|s| s.seq_layout = SeqLayout::Shared,
            "leave out --shared-offset",
        );
        refused(&|s| s.bs = 4096, "give a page of at most 4K");
    }

    /// `--fill grow` takes writes only: a read past the growing file's end
    /// finds nothing.
    #[test]
    fn a_growing_file_takes_writes_only() {
        let ok = WorkloadSpec {
            targets: vec![TargetSpec::new("/x/binlog", None)],
            rw: RwMode::Write,
            write_pct: 100,
            fill: FillMode::Grow,
            ..WorkloadSpec::default()
        };
        ok.validate().unwrap();
        WorkloadSpec {
            rw: RwMode::Randwrite,
            ..ok.clone()
        }
        .validate()
        .unwrap();
        for (rw, pct) in [
            (RwMode::Randrw, 30),
            (RwMode::Read, 0),
            (RwMode::Readwrite, 99),
        ] {
            let e = WorkloadSpec {
                rw,
                write_pct: pct,
                ..ok.clone()
            }
            .validate()
            .unwrap_err()
            .to_string();
            assert!(e.contains("use it with writes only"), "{rw:?}: {e}");
        }
    }

    /// `--sync-file-range N` starts writeback of dirty pages: buffered
    /// writes only, N at least 1.
    #[test]
    fn sync_file_range_needs_buffered_writes() {
        let ok = WorkloadSpec {
            targets: vec![TargetSpec::new("/x/data", None)],
            rw: RwMode::Randwrite,
            write_pct: 100,
            cache: CacheMode::Buffered,
            sync_file_range: Some(32),
            ..WorkloadSpec::default()
        };
        ok.validate().unwrap();
        assert!(
            ok.describe().contains(" sync_file_range/32"),
            "{}",
            ok.describe()
        );
        let refused = |s: WorkloadSpec, says: &str| {
            let e = s.validate().unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        };
        refused(
            WorkloadSpec {
                sync_file_range: Some(0),
                ..ok.clone()
            },
            "--sync-file-range 0",
        );
        refused(
            WorkloadSpec {
                cache: CacheMode::Direct,
                ..ok.clone()
            },
            "use --cache buffered",
        );
        refused(
            WorkloadSpec {
                rw: RwMode::Randread,
                write_pct: 0,
                ..ok.clone()
            },
            "nothing to write back",
        );
    }
}
