//! Block-size mixes: `--bssplit 8K/70:64K/25:1M/5` in fio's notation, with
//! separate splits for reads and writes (`READS,WRITES`, as fio's
//! `bssplit=r,w`).
//!
//! A [`BsSplit`] is what the user asked; a [`SizeMix`] is its table for the
//! hot path: the distinct sizes (the *classes*, smallest first) and, per
//! direction, a cumulative threshold table on a 32-bit random number. Picking
//! a size is one random draw and a scan of at most [`MAX_SIZES`] entries; no
//! allocation, no division.

use std::fmt;
use std::str::FromStr;

use rand::rngs::SmallRng;
use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Most sizes one direction's split may list (fio allows 64; more than a
/// handful only multiplies the per-size histograms).
pub const MAX_SIZES: usize = 16;

/// One size and its share of a direction's I/O.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeShare {
    /// Block size in bytes.
    pub size: u64,
    /// Percentage of the direction's I/Os (the shares of a split add up to 100).
    pub pct: f64,
}

/// A block-size mix for reads and writes. An empty side uses `--bs`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BsSplit {
    /// Reads.
    pub read: Vec<SizeShare>,
    /// Writes.
    pub write: Vec<SizeShare>,
}

impl BsSplit {
    /// Every size named on either side, smallest first, without repeats.
    pub fn sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .read
            .iter()
            .chain(&self.write)
            .map(|s| s.size)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Fills an empty side with `bs` (100 %), so both sides name their sizes.
    pub fn resolved(&self, bs: u64) -> BsSplit {
        let one = || {
            vec![SizeShare {
                size: bs,
                pct: 100.0,
            }]
        };
        BsSplit {
            read: if self.read.is_empty() {
                one()
            } else {
                self.read.clone()
            },
            write: if self.write.is_empty() {
                one()
            } else {
                self.write.clone()
            },
        }
    }

    /// The sizes for `ratio` times the contents each I/O carried: a log's
    /// writes are its tail page again and what it adds, so each size over
    /// `page` becomes `page` plus `ratio` times the rest, its share split
    /// between the two multiples of `page` around that (the mean follows
    /// exactly). A WAL whose group commits put 2.2 commits into a write at
    /// 8 clients carries one at 2 (`--clients`). Sizes of a page or less
    /// are unchanged; past [`MAX_SIZES`] sizes the smallest shares go to
    /// their neighbour. Both directions alike (a log has no reads).
    pub fn scaled_past(&self, page: u64, ratio: f64) -> BsSplit {
        BsSplit {
            read: scale_side(&self.read, page, ratio),
            write: scale_side(&self.write, page, ratio),
        }
    }

    /// Mean bytes per I/O of one side (`bs` for an empty side).
    pub fn mean(&self, write: bool, bs: u64) -> f64 {
        let side = if write { &self.write } else { &self.read };
        if side.is_empty() {
            return bs as f64;
        }
        side.iter().map(|s| s.size as f64 * s.pct / 100.0).sum()
    }
}

/// Parses one side: `8K/70:64K/25:1M` (a size without a share takes an
/// equal part of what the others leave, as in fio).
fn parse_side(s: &str, whole: &str) -> Result<Vec<SizeShare>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut open = 0usize;
    for part in s.split(':') {
        let (size, pct) = match part.split_once('/') {
            Some((a, b)) => {
                let b = b.trim().trim_end_matches('%');
                let p: f64 = if b.is_empty() {
                    f64::NAN
                } else {
                    b.parse().map_err(|_| usage(whole))?
                };
                (a, p)
            }
            None => (part, f64::NAN),
        };
        let size = crate::units::parse_size(size.trim()).map_err(|_| usage(whole))?;
        if size == 0 || size > super::MAX_BS {
            return Err(format!(
                "--bssplit '{whole}': every size must be between 1 byte and 64M"
            ));
        }
        if pct.is_nan() {
            open += 1;
        } else if !(0.0..=100.0).contains(&pct) {
            return Err(usage(whole));
        }
        out.push(SizeShare { size, pct });
    }
    if out.len() > MAX_SIZES {
        return Err(format!(
            "--bssplit '{whole}': at most {MAX_SIZES} sizes per direction"
        ));
    }
    let given: f64 = out.iter().filter(|s| !s.pct.is_nan()).map(|s| s.pct).sum();
    if given > 100.0 + 1e-9 || (open == 0 && (given - 100.0).abs() > 1e-6) {
        return Err(format!(
            "--bssplit '{whole}': the shares add up to {given}%, not 100% \
             (leave a share out, e.g. 8K/70:64K, to give it the rest)"
        ));
    }
    let rest = (100.0 - given) / open.max(1) as f64;
    for s in out.iter_mut().filter(|s| s.pct.is_nan()) {
        s.pct = rest;
    }
    Ok(out)
}

fn usage(given: &str) -> String {
    format!(
        "invalid --bssplit '{given}': use SIZE/PCT:SIZE/PCT..., e.g. 8K/70:64K/25:1M/5 for every I/O, \
         or READS,WRITES, e.g. 8K/90:64K/10,64K/100 (an empty side uses --bs)"
    )
}

/// One direction of [`BsSplit::scaled_past`].
fn scale_side(side: &[SizeShare], page: u64, ratio: f64) -> Vec<SizeShare> {
    let mut by_size: std::collections::BTreeMap<u64, f64> = std::collections::BTreeMap::new();
    for s in side {
        if s.size <= page || page == 0 {
            *by_size.entry(s.size).or_default() += s.pct;
            continue;
        }
        let x = page as f64 + (s.size - page) as f64 * ratio.max(0.0);
        let lo = ((x / page as f64).floor() as u64).max(1) * page;
        let up = (x - lo as f64) / page as f64;
        *by_size.entry(lo).or_default() += s.pct * (1.0 - up);
        if up > 0.0 {
            *by_size.entry(lo + page).or_default() += s.pct * up;
        }
    }
    // Shares to a hundredth of a percent, the largest taking the rounding.
    let mut out: Vec<SizeShare> = by_size
        .into_iter()
        .map(|(size, pct)| SizeShare {
            size,
            pct: (pct * 100.0).round() / 100.0,
        })
        .filter(|s| s.pct > 0.0)
        .collect();
    while out.len() > MAX_SIZES {
        let i = out
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.pct.total_cmp(&b.1.pct))
            .map_or(0, |(i, _)| i);
        let gone = out.remove(i);
        let to = i.min(out.len() - 1);
        out[to].pct += gone.pct;
    }
    let total: f64 = side.iter().map(|s| s.pct).sum();
    let short = total - out.iter().map(|s| s.pct).sum::<f64>();
    if let Some(top) = out.iter_mut().max_by(|a, b| a.pct.total_cmp(&b.pct)) {
        top.pct = ((top.pct + short) * 100.0).round() / 100.0;
    }
    out
}

impl FromStr for BsSplit {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut sides = s.split(',');
        let r = parse_side(sides.next().unwrap_or(""), s)?;
        let w = match sides.next() {
            Some(w) => parse_side(w, s)?,
            None => r.clone(),
        };
        // fio's third part is for trims, which iosim does not issue.
        if sides.next().is_some_and(|t| !t.trim().is_empty()) || sides.next().is_some() {
            return Err(format!(
                "--bssplit '{s}': give one split for all I/O or READS,WRITES (iosim issues no trims)"
            ));
        }
        if r.is_empty() && w.is_empty() {
            return Err(usage(s));
        }
        Ok(BsSplit { read: r, write: w })
    }
}

fn fmt_side(f: &mut fmt::Formatter<'_>, side: &[SizeShare]) -> fmt::Result {
    for (i, s) in side.iter().enumerate() {
        if i > 0 {
            f.write_str(":")?;
        }
        write!(f, "{}/{}", crate::units::format_size_arg(s.size), s.pct)?;
    }
    Ok(())
}

impl fmt::Display for BsSplit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_side(f, &self.read)?;
        if self.write != self.read {
            f.write_str(",")?;
            fmt_side(f, &self.write)?;
        }
        Ok(())
    }
}

impl Serialize for BsSplit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for BsSplit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Parses a split for clap.
pub fn bssplit_arg(s: &str) -> Result<BsSplit, String> {
    s.parse()
}

/// One direction's cumulative table: the size class of entry `i` is taken
/// when a 32-bit random number is below `below[i]` (and not below an earlier one).
#[derive(Clone, Debug, Default)]
struct Side {
    below: Vec<u64>,
    class: Vec<u8>,
}

impl Side {
    fn new(side: &[SizeShare], classes: &[u64]) -> Side {
        let total: f64 = side.iter().map(|s| s.pct).sum::<f64>().max(1e-12);
        let mut acc = 0.0;
        let mut t = Side::default();
        for s in side.iter().filter(|s| s.pct > 0.0) {
            acc += s.pct / total;
            t.below
                .push((acc * 4_294_967_296.0).round().min(4_294_967_296.0) as u64);
            t.class
                .push(classes.iter().position(|&c| c == s.size).unwrap_or(0) as u8);
        }
        // The last entry catches everything, whatever the rounding.
        if let Some(l) = t.below.last_mut() {
            *l = 1 << 32;
        }
        t
    }

    #[inline]
    fn pick(&self, r: u32) -> u8 {
        let r = u64::from(r);
        for (i, &b) in self.below.iter().enumerate() {
            if r < b {
                return self.class[i];
            }
        }
        self.class.last().copied().unwrap_or(0)
    }
}

/// The prepared mix: size classes and one table per direction.
#[derive(Clone, Debug)]
pub struct SizeMix {
    classes: Vec<u64>,
    read: Side,
    write: Side,
}

impl SizeMix {
    /// Tables for `split`, an empty side taking `bs`.
    pub fn new(split: &BsSplit, bs: u64) -> SizeMix {
        let split = split.resolved(bs);
        let classes = split.sizes();
        SizeMix {
            read: Side::new(&split.read, &classes),
            write: Side::new(&split.write, &classes),
            classes,
        }
    }

    /// The distinct sizes, smallest first; class `i` is `classes()[i]`.
    pub fn classes(&self) -> &[u64] {
        &self.classes
    }

    /// The largest size (what buffers are sized for).
    pub fn max(&self) -> u64 {
        self.classes.last().copied().unwrap_or(0)
    }

    /// One I/O's size class and length: one random number, one short scan.
    #[inline]
    pub fn pick(&self, write: bool, rng: &mut SmallRng) -> (u8, u64) {
        let side = if write { &self.write } else { &self.read };
        let c = side.pick(rng.gen::<u32>());
        (c, self.classes[c as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// PostgreSQL's WAL at 8 clients (2.2 commits a write) run at 2 (one):
    /// each size over the 8 KiB page keeps its page and carries 1/2.2 of the
    /// rest, split between the page multiples around it; the mean follows.
    #[test]
    fn a_logs_sizes_follow_the_contents_each_write_carries() {
        let b: BsSplit = "8K/30:16K/27:24K/19:32K/11:40K/6:48K/4:56K/2:64K/1"
            .parse()
            .unwrap();
        let page = 8192;
        let ratio = 1.0 / 2.2;
        let s = b.scaled_past(page, ratio);
        let share = |k: u64| {
            s.write
                .iter()
                .find(|x| x.size == k << 10)
                .map_or(0.0, |x| x.pct)
        };
        assert!((share(8) - 46.4).abs() < 0.1, "{s}");
        assert!((share(16) - 37.7).abs() < 0.1, "{s}");
        assert!((share(24) - 12.4).abs() < 0.1, "{s}");
        assert!(
            (s.write.iter().map(|x| x.pct).sum::<f64>() - 100.0).abs() < 1e-9,
            "{s}"
        );
        let want = page as f64 + (b.mean(true, page) - page as f64) * ratio;
        assert!(
            (s.mean(true, page) - want).abs() < 0.01 * want,
            "{} against {want}",
            s.mean(true, page)
        );
        // Both directions alike; sizes of a page or less stay; a ratio of 1
        // changes nothing.
        assert_eq!(s.read, s.write);
        assert_eq!(
            s.to_string(),
            "8K/46.46:16K/37.64:24K/12.36:32K/3.36:40K/0.18"
        );
        let small: BsSplit = "4K/40:8K/60".parse().unwrap();
        assert_eq!(small.scaled_past(page, 0.5), small);
        assert_eq!(b.scaled_past(page, 1.0), b);
    }

    #[test]
    fn parses_fio_notation_and_prints_it_back() {
        let b: BsSplit = "8K/70:64K/25:1M/5".parse().unwrap();
        assert_eq!(b.read, b.write);
        assert_eq!(b.sizes(), vec![8192, 65536, 1 << 20]);
        assert_eq!(b.to_string(), "8K/70:64K/25:1M/5");
        let b: BsSplit = "4k/50:8k/50,64k/100".parse().unwrap();
        assert_eq!(
            b.write,
            vec![SizeShare {
                size: 65536,
                pct: 100.0
            }]
        );
        assert_eq!(b.to_string(), "4K/50:8K/50,64K/100");
        assert_eq!(b.to_string().parse::<BsSplit>().unwrap(), b);
        // A size without a share takes the rest, split equally.
        let b: BsSplit = "4k/40:8k:16k".parse().unwrap();
        assert_eq!(b.read[1].pct, 30.0);
        assert_eq!(b.read[2].pct, 30.0);
        // An empty side uses --bs.
        let b: BsSplit = ",64K/100".parse().unwrap();
        assert!(b.read.is_empty());
        assert_eq!(b.resolved(4096).read[0].size, 4096);
        assert_eq!((b.mean(false, 4096), b.mean(true, 4096)), (4096.0, 65536.0));
        for bad in [
            "",
            "8K/70:64K/20",
            "8K/170",
            "0/100",
            "x/100",
            "4K,4K,4K",
            "8K/60:1M/60",
        ] {
            assert!(bad.parse::<BsSplit>().is_err(), "{bad}");
        }
        let e = "8K/70:64K/20".parse::<BsSplit>().unwrap_err();
        assert!(e.contains("90"), "{e}");
    }

    #[test]
    fn shares_are_within_tolerance() {
        let mix = SizeMix::new(&"8K/70:64K/25:1M/5,4K/10:8K/90".parse().unwrap(), 4096);
        assert_eq!(mix.classes(), &[4096, 8192, 65536, 1 << 20]);
        assert_eq!(mix.max(), 1 << 20);
        let mut rng = SmallRng::seed_from_u64(17);
        let n = 200_000;
        for (write, want) in [
            (false, [0.0, 0.70, 0.25, 0.05]),
            (true, [0.10, 0.90, 0.0, 0.0]),
        ] {
            let mut counts = [0u32; 4];
            for _ in 0..n {
                let (c, len) = mix.pick(write, &mut rng);
                assert_eq!(len, mix.classes()[c as usize]);
                counts[c as usize] += 1;
            }
            for (got, want) in counts.iter().zip(want) {
                let share = f64::from(*got) / f64::from(n);
                // 200,000 draws: the standard error is at most 0.11 points.
                assert!((share - want).abs() < 0.005, "write={write}: {counts:?}");
            }
        }
    }
}
