//! The seeds' studies as built-in sweeps, one command each
//! (`iosim sweep FILE --study NAME`).
//!
//! Seed 000 (mssqltips, "Benchmarking SQL Server IO with SQLIO") runs four
//! series on a RAID 5 set with `-BH` (direct I/O, disk cache on), 64 KiB
//! blocks except the last: threads 1, 2, 4, 8 at one outstanding I/O, then 8
//! threads with 2..128 outstanding. Seed 001 (josebda, "SQLIO, PowerShell and
//! storage performance") sweeps 8 KiB random reads over queue depth 1..64 on
//! one thread, then trades threads against queue depth at 32 outstanding.

use super::{Param, Point, Value};
use crate::workload::RwMode;

/// A built-in study.
#[derive(Clone, Debug)]
pub struct Study {
    /// Name for `--study`.
    pub name: &'static str,
    /// What it answers.
    pub about: &'static str,
    /// The equivalent `iosim sweep` options.
    pub sweep_line: &'static str,
    /// Pattern.
    pub rw: RwMode,
    /// Block size.
    pub bs: u64,
    /// Points as (threads, qd).
    pub points: Vec<(u64, u64)>,
}

impl Study {
    /// The points as sweep points.
    pub fn to_points(&self) -> Vec<Point> {
        self.points
            .iter()
            .map(|&(t, q)| {
                [(Param::Threads, Value::Num(t)), (Param::Qd, Value::Num(q))]
                    .into_iter()
                    .collect()
            })
            .collect()
    }
}

/// Seed 000's pattern: threads 1,2,4,8 at QD1, then 8 threads at QD 2..128.
fn threads_then_qd() -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = [1, 2, 4, 8].iter().map(|&t| (t, 1)).collect();
    v.extend([2, 4, 8, 16, 32, 64, 128].iter().map(|&q| (8, q)));
    v
}

/// Every built-in study.
pub fn all() -> Vec<Study> {
    vec![
        Study {
            name: "seed000-randwrite",
            about: "seed 000: 64 KiB random writes over 1, 2, 4, 8 threads at one outstanding I/O",
            sweep_line: "--rw randwrite --bs 64K --qd 1 --vary threads=1..8x2",
            rw: RwMode::Randwrite,
            bs: 64 << 10,
            points: [1, 2, 4, 8].iter().map(|&t| (t, 1)).collect(),
        },
        Study {
            name: "seed000-randread",
            about: "seed 000: 64 KiB random reads over threads 1..8 (QD1), then 8 threads over QD 2..128",
            sweep_line: "--rw randread --bs 64K --qd 1 --vary threads=1..8x2, then --threads 8 --vary qd=2..128x2",
            rw: RwMode::Randread,
            bs: 64 << 10,
            points: threads_then_qd(),
        },
        Study {
            name: "seed000-seqread",
            about: "seed 000: 64 KiB sequential reads over threads 1..8 (QD1), then 8 threads over QD 2..128",
            sweep_line: "--rw read --bs 64K --qd 1 --vary threads=1..8x2, then --threads 8 --vary qd=2..128x2",
            rw: RwMode::Read,
            bs: 64 << 10,
            points: threads_then_qd(),
        },
        Study {
            name: "seed000-seqwrite-8k",
            about: "seed 000: 8 KiB sequential writes (the log pattern) over threads 1..8 (QD1), then 8 threads over QD 2..128",
            sweep_line: "--rw write --bs 8K --qd 1 --vary threads=1..8x2, then --threads 8 --vary qd=2..128x2",
            rw: RwMode::Write,
            bs: 8 << 10,
            points: threads_then_qd(),
        },
        Study {
            name: "seed001-qd",
            about: "seed 001: 8 KiB random reads on one thread over queue depth 1..64: where does it lose steam?",
            sweep_line: "--rw randread --bs 8K --threads 1 --vary qd=1..64",
            rw: RwMode::Randread,
            bs: 8 << 10,
            points: (1..=64).map(|q| (1, q)).collect(),
        },
        Study {
            name: "seed001-tradeoff",
            about: "seed 001: 8 KiB random reads, 32 outstanding in total: threads 1..32 against queue depth 32..1 (core-bound?)",
            sweep_line: "--rw randread --bs 8K --vary threads=1..32x2 --vary qd=32..1/2 --zip",
            rw: RwMode::Randread,
            bs: 8 << 10,
            points: (0..6).map(|i| (1u64 << i, 32u64 >> i)).collect(),
        },
    ]
}

/// A study by name.
pub fn find(name: &str) -> Option<Study> {
    all().into_iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn studies_match_the_seeds() {
        let s = find("seed000-randread").unwrap();
        assert_eq!(s.points.len(), 11);
        assert_eq!(s.points[3], (8, 1));
        assert_eq!(s.points[10], (8, 128));
        let q = find("seed001-qd").unwrap();
        assert_eq!(q.points.len(), 64);
        let t = find("seed001-tradeoff").unwrap();
        assert!(t.points.iter().all(|&(t, q)| t * q == 32));
        assert!(find("nope").is_none());
        for s in all() {
            assert!(!s.to_points().is_empty());
        }
    }
}
