//! Property tests (proptest) for the offset generators, pacing and histogram
//! merging, and the fuzz targets (src/fuzzing.rs) driven on stable over the
//! seed corpus plus a fixed number of deterministic mutations of each seed.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use iosim::stats::DirStats;
use iosim::workload::{OffsetGen, WorkloadSpec};

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every I/O lies inside the region, aligned, and whole.
    #[test]
    fn offsets_stay_inside_the_region(
        base_blocks in 0u64..1 << 20,
        len in 1u64..1 << 34,
        bs_shift in 9u32..21,
        align_shift in 9u32..21,
        random in any::<bool>(),
        random_pct in proptest::option::of(0u8..=100),
        start in any::<u64>(),
        write_pct in 0u8..=100,
        seed in any::<u64>(),
    ) {
        let (bs, align) = (1u64 << bs_shift, 1u64 << align_shift);
        let base = base_blocks * 512;
        prop_assume!(len >= bs);
        let mut g = OffsetGen::new(base, len, bs, align, random, start, write_pct, seed);
        if let Some(p) = random_pct {
            g = g.mixed(p);
        }
        for _ in 0..200 {
            let (off, _) = g.next_io();
            prop_assert!(off >= base, "offset {off} below the region start {base}");
            prop_assert!(off + bs <= base + len, "I/O [{off}, +{bs}) past the region end {}", base + len);
            prop_assert_eq!((off - base) % bs.min(align), 0, "offset {} misaligned", off);
        }
    }

    /// The share of writes follows --write-pct (exact at 0 and 100).
    #[test]
    fn write_share_follows_write_pct(write_pct in 0u8..=100, seed in any::<u64>()) {
        let mut g = OffsetGen::new(0, 1 << 30, 4096, 4096, true, 0, write_pct, seed);
        let n = 4000;
        let writes = (0..n).filter(|_| g.next_io().1).count();
        match write_pct {
            0 => prop_assert_eq!(writes, 0),
            100 => prop_assert_eq!(writes, n),
            p => {
                let share = writes as f64 / n as f64 * 100.0;
                prop_assert!((share - f64::from(p)).abs() < 5.0, "{share}% writes for {p}%");
            }
        }
    }

    /// A sequential stream visits consecutive blocks and wraps at the end.
    #[test]
    fn sequential_offsets_advance_by_one_block(blocks in 1u64..64, bs_shift in 9u32..17, seed in any::<u64>()) {
        let bs = 1u64 << bs_shift;
        let mut g = OffsetGen::new(0, blocks * bs, bs, bs, false, 0, 0, seed);
        for i in 0..3 * blocks {
            prop_assert_eq!(g.next_io().0, (i % blocks) * bs);
        }
    }

    /// Pacing: the gap between I/O starts is the cap's inverse in whole
    /// nanoseconds (never zero), and a higher cap never gives a longer gap.
    #[test]
    fn pacing_interval_matches_the_cap(iops in 1u64..u64::MAX, bytes in 1u64..u64::MAX, bs_shift in 9u32..27) {
        let bs = 1u64 << bs_shift;
        let by_iops = WorkloadSpec { rate_iops: Some(iops), bs, ..WorkloadSpec::default() };
        let gap = by_iops.rate_interval_ns();
        prop_assert!(gap >= 1);
        if iops <= 1_000_000_000 {
            // Integer division: at most one I/O per second above the cap.
            prop_assert!(gap * iops <= 1_000_000_000 && (gap + 1) * iops > 1_000_000_000);
        }
        let faster = WorkloadSpec { rate_iops: Some(iops.saturating_add(1)), bs, ..WorkloadSpec::default() };
        prop_assert!(faster.rate_interval_ns() <= gap);
        let by_bytes = WorkloadSpec { rate_bytes: Some(bytes), bs, ..WorkloadSpec::default() };
        let gap = u128::from(by_bytes.rate_interval_ns());
        prop_assert!(gap >= 1);
        if gap > 1 {
            // bytes per second never above the cap.
            prop_assert!(u128::from(bs) * 1_000_000_000 / gap <= u128::from(bytes) * 2);
            prop_assert!(u128::from(bs) * 1_000_000_000 >= gap * u128::from(bytes));
        }
        prop_assert_eq!(WorkloadSpec { bs, ..WorkloadSpec::default() }.rate_interval_ns(), 0);
    }

    /// Merging statistics is exact and does not depend on how the samples
    /// were split between threads or intervals, nor on the merge order.
    #[test]
    fn histogram_merge_is_exact_and_order_free(
        lats in proptest::collection::vec(1u64..10_000_000_000, 1..400),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let mut whole = DirStats::new();
        for &l in &lats {
            whole.record(l, 4096);
        }
        let mut idx: Vec<usize> = cuts.iter().map(|c| c.index(lats.len() + 1)).collect();
        idx.push(0);
        idx.push(lats.len());
        idx.sort_unstable();
        let parts: Vec<DirStats> = idx
            .windows(2)
            .map(|w| {
                let mut s = DirStats::new();
                for &l in &lats[w[0]..w[1]] {
                    s.record(l, 4096);
                }
                s
            })
            .collect();
        let mut fwd = DirStats::new();
        for p in &parts {
            fwd.merge(p);
        }
        let mut rev = DirStats::new();
        for p in parts.iter().rev() {
            rev.merge(p);
        }
        for m in [&fwd, &rev] {
            prop_assert_eq!(m.ios, whole.ios);
            prop_assert_eq!(m.bytes, whole.bytes);
            prop_assert_eq!(m.lat_sum_ns, whole.lat_sum_ns);
            prop_assert_eq!(m.lat_min_ns, whole.lat_min_ns);
            prop_assert_eq!(m.lat_max_ns, whole.lat_max_ns);
            prop_assert_eq!(m.ms_hist, whole.ms_hist);
            prop_assert_eq!(&m.hist, &whole.hist);
        }
    }
}

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Seeds of a fuzz target: its corpus directory plus the repository's own
/// examples, profiles and snapshot command lines that fit it.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = Path::new(ROOT);
    let mut files: Vec<PathBuf> = Vec::new();
    let mut add_dir = |dir: PathBuf, ext: Option<&str>| {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_file() && ext.is_none_or(|x| p.extension().is_some_and(|e| e == x)) {
                    files.push(p);
                }
            }
        }
    };
    add_dir(root.join("fuzz/corpus").join(target), None);
    match target {
        "sim_ini" => add_dir(root.join("examples"), Some("ini")),
        "sim_toml" => add_dir(root.join("examples"), Some("toml")),
        "profile_toml" => add_dir(root.join("profiles"), Some("toml")),
        _ => {}
    }
    files.sort();
    let mut out: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    if target == "diskspd_cmdline" || target == "sqlio_cmdline" {
        let tool = if target == "diskspd_cmdline" {
            "diskspd "
        } else {
            "sqlio "
        };
        let mut snaps: Vec<PathBuf> = std::fs::read_dir(root.join("tests/snapshots"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        snaps.sort();
        for p in snaps {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            for line in text.lines() {
                if let Some(i) = line.find(tool) {
                    out.push(line.as_bytes()[i + tool.len()..].to_vec());
                }
            }
        }
    }
    out
}

/// Values that break parsers: limits, signs, huge and odd numbers.
const TOKENS: [&[u8]; 19] = [
    b"0",
    b"-1",
    b"4294967296",
    b"9223372036854775807",
    b"18446744073709551616",
    b"1e309",
    b"NaN",
    b"99999999999999999999T",
    b"0x",
    b"=",
    b"[",
    b"]",
    b"\"",
    b"\n[File1]\n",
    b"inf",
    b"-inf",
    b"nan",
    b"-0",
    b"1e30",
];

/// Numbers that replace a run of digits: limits, signs, non-finite values
/// (INI spellings and TOML's `nan` / `inf`), -0 and huge values.
const NUMBERS: [&[u8]; 11] = [
    b"0",
    b"-1",
    b"4294967296",
    b"9223372036854775807",
    b"18446744073709551616",
    b"NaN",
    b"inf",
    b"-inf",
    b"nan",
    b"-0",
    b"1e30",
];

/// A small deterministic generator (xorshift64*): the same mutations every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(seed: &[u8], others: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(v.len());
                v.drain(at.min(end)..end);
            }
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
            3 => {
                // Replace a run of digits with a token.
                if let Some(i) = v
                    .iter()
                    .skip(at)
                    .position(u8::is_ascii_digit)
                    .map(|i| i + at)
                {
                    let end = v[i..]
                        .iter()
                        .position(|c| !c.is_ascii_digit())
                        .map_or(v.len(), |e| e + i);
                    let t = NUMBERS[rng.below(NUMBERS.len())];
                    v.splice(i..end, t.iter().copied());
                }
            }
            4 if !others.is_empty() => {
                let o = &others[rng.below(others.len())];
                let from = rng.below(o.len());
                let to = (from + rng.below(64)).min(o.len());
                v.splice(at..at, o[from..to].iter().copied());
            }
            5 => v.truncate(at),
            _ => {
                let b = rng.next() as u8;
                v.insert(at, b);
            }
        }
    }
    v
}

/// Mutations per seed; the whole test stays in seconds.
const MUTATIONS: usize = 300;

#[test]
fn fuzz_targets_survive_the_corpus_and_its_mutations() {
    let mut failures = Vec::new();
    let mut runs = 0usize;
    for (name, body) in iosim::fuzzing::TARGETS {
        let seeds = seeds(name);
        assert!(!seeds.is_empty(), "no seeds for fuzz target {name}");
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
        let mut inputs: Vec<Vec<u8>> = seeds.clone();
        for s in &seeds {
            for _ in 0..MUTATIONS {
                inputs.push(mutate(s, &seeds, &mut rng));
            }
        }
        for input in inputs {
            runs += 1;
            let r = std::panic::catch_unwind(|| body(&input));
            if r.is_err() {
                failures.push(format!("{name}: {:?}", String::from_utf8_lossy(&input)));
            }
        }
    }
    println!("{runs} fuzz inputs run");
    assert!(
        failures.is_empty(),
        "fuzz targets panicked on:\n{}",
        failures.join("\n")
    );
}
