//! Where each rank's I/O goes: rank placeholders in target paths, per-rank
//! file names, and the per-rank slices of a shared target (`--share-target`).
//! Plain logic, compiled in every build; below both the facade (`mpi`) and
//! the MPI world, which use it.

use std::path::PathBuf;

use super::rank::{who, RankInfo};
use crate::workload::WorkloadSpec;

/// Expands the rank placeholders in a target path: `%r` rank, `%n` number of
/// ranks, `%h` host name, `%l` rank on its host, `%%` a literal `%`. Any other
/// `%x` is kept as written (file names may contain `%`).
pub fn expand_path(template: &str, who: &RankInfo) -> String {
    let mut out = String::with_capacity(template.len() + 8);
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('r') => out.push_str(&who.rank.to_string()),
            Some('n') => out.push_str(&who.size.to_string()),
            Some('h') => out.push_str(&who.host),
            Some('l') => out.push_str(&who.local_rank.to_string()),
            Some('%') => out.push('%'),
            _ => {
                out.push('%');
                continue;
            }
        }
        chars.next();
    }
    out
}

/// Whether a path names rank placeholders, i.e. differs between ranks.
pub fn has_placeholders(template: &str) -> bool {
    ["%r", "%h", "%l"].iter().any(|p| template.contains(p))
}

/// The slice of a region of `len` bytes starting at `start` that rank `rank`
/// of `size` gets under `--share-target`: equal slices, each a whole number of
/// `unit`s (the block size or alignment), so no two ranks touch the same block.
/// Returns `(offset, length)`; the remainder after the last whole slice is unused.
pub fn share_region(start: u64, len: u64, unit: u64, rank: usize, size: usize) -> (u64, u64) {
    let unit = unit.max(1);
    let per = (len / size.max(1) as u64) / unit * unit;
    (start + per * rank as u64, per)
}

/// A target path for this rank, for commands whose every rank uses its own
/// files (`run --profile`, `sim`): placeholders expanded; under a launcher
/// with several ranks a path without any gets `-%h-%l` (as [`rank_file`]),
/// unless it is a block device.
pub fn rank_path(path: &std::path::Path) -> PathBuf {
    let s = path.to_string_lossy();
    let is_device = crate::platform::fs::path_is_device(path);
    if is_device || has_placeholders(&s) {
        return PathBuf::from(expand_path(&s, &who()));
    }
    match path.file_name() {
        Some(name) => path.with_file_name(rank_file(&name.to_string_lossy())),
        None => path.to_path_buf(),
    }
}

/// A test file name for this rank: placeholders expanded; under a launcher a
/// name without any gets `-%h-%l` before its extension, so ranks never share
/// a file by accident (`iosim quick --file`).
pub fn rank_file(name: &str) -> String {
    let who = who();
    if who.size > 1 && !has_placeholders(name) {
        let p = std::path::Path::new(name);
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default();
        let with = match p.extension() {
            Some(e) => format!("{stem}-%h-%l.{}", e.to_string_lossy()),
            None => format!("{stem}-%h-%l"),
        };
        return expand_path(&with, &who);
    }
    expand_path(name, &who)
}

/// Expands the placeholders of every target path of `spec` for `who`.
pub fn expand_targets(spec: &mut WorkloadSpec, who: &RankInfo) {
    for t in &mut spec.targets {
        if let Some(s) = t.path.to_str() {
            t.path = PathBuf::from(expand_path(s, who));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_expand() {
        let w = RankInfo::test(3, 16, "db07", 1);
        assert_eq!(expand_path("/mnt/t-%r.dat", &w), "/mnt/t-3.dat");
        assert_eq!(expand_path("/m/%h/%l-of-%n", &w), "/m/db07/1-of-16");
        assert_eq!(expand_path("100%%-%r", &w), "100%-3");
        assert_eq!(expand_path("odd%x%", &w), "odd%x%");
        assert_eq!(expand_path("plain", &w), "plain");
        assert!(has_placeholders("/a/%r"));
        assert!(!has_placeholders("/a/%n-b"));
    }

    #[test]
    fn shared_regions_are_disjoint_and_aligned() {
        let (start, len, unit, n) = (4096u64, 10 * 1024 * 1024 + 123, 8192u64, 3usize);
        let mut prev_end = start;
        for r in 0..n {
            let (o, l) = share_region(start, len, unit, r, n);
            assert_eq!(o, prev_end, "slices follow each other");
            assert_eq!(l % unit, 0);
            assert_eq!((o - start) % unit, 0);
            prev_end = o + l;
        }
        assert!(prev_end <= start + len);
        assert_eq!(share_region(0, 1 << 20, 4096, 0, 1), (0, 1 << 20));
    }
}
