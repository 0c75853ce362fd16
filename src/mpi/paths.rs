//! Where each rank's I/O goes: rank placeholders in target paths, per-rank
//! file names, and the per-rank slices of a shared target (`--share-target`).
//! Plain logic, compiled in every build; below both the facade (`mpi`) and
//! the MPI world, which use it.

use std::path::{Path, PathBuf};

use super::rank::{who, RankInfo};

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

/// How a command's ranks use the target paths it names (the rule
/// [`for_rank`] applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankFiles {
    /// As `iosim run` and `iosim sweep`: the path as named, its placeholders
    /// expanded; ranks naming one path share it (`--share-target`, reads, or
    /// `--allow-destroy`), or the runner refuses them.
    AsNamed,
    /// As `iosim run --profile`, `quick` and `sim`: every rank its own files;
    /// a file path without a placeholder gets `-%h-%l` before its
    /// extension, so ranks never share a file by accident (a block device is
    /// kept, for `--share-target`).
    Own,
}

/// The one rule by which a target path becomes rank `who`'s: its
/// placeholders expanded, and under [`RankFiles::Own`] a file path without
/// any named for this host and local rank (with several ranks).
pub fn for_rank_of(path: &Path, files: RankFiles, who: &RankInfo) -> PathBuf {
    let s = path.to_string_lossy();
    let own_name = files == RankFiles::Own
        && who.size > 1
        && !has_placeholders(&s)
        && !crate::platform::fs::path_is_device(path);
    let template = match path.file_name().filter(|_| own_name) {
        Some(name) => {
            let p = Path::new(name);
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy())
                .unwrap_or_default();
            let with = match p.extension() {
                Some(e) => format!("{stem}-%h-%l.{}", e.to_string_lossy()),
                None => format!("{stem}-%h-%l"),
            };
            path.with_file_name(with)
        }
        None => path.to_path_buf(),
    };
    PathBuf::from(expand_path(&template.to_string_lossy(), who))
}

/// [`for_rank_of`] this process's rank.
pub fn for_rank(path: &Path, files: RankFiles) -> PathBuf {
    for_rank_of(path, files, &who())
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

    /// Both rules expand the placeholders; a rank's own file without any
    /// gets the host and local rank, and only with several ranks.
    #[test]
    fn a_path_becomes_the_ranks_by_one_rule() {
        let w = RankInfo::test(3, 4, "db07", 1);
        let of = |p: &str, f| for_rank_of(Path::new(p), f, &w);
        assert_eq!(
            of("/m/t-%r.dat", RankFiles::AsNamed),
            Path::new("/m/t-3.dat")
        );
        assert_eq!(of("/m/t-%r.dat", RankFiles::Own), Path::new("/m/t-3.dat"));
        assert_eq!(of("/m/t.dat", RankFiles::AsNamed), Path::new("/m/t.dat"));
        assert_eq!(of("/m/t.dat", RankFiles::Own), Path::new("/m/t-db07-1.dat"));
        assert_eq!(of("/m/log", RankFiles::Own), Path::new("/m/log-db07-1"));
        assert_eq!(
            of("/m/%h/t.dat", RankFiles::Own),
            Path::new("/m/db07/t.dat")
        );
        // A name with a literal %: expanded once, `%%` a single %.
        assert_eq!(
            of("/m/100%%-%r", RankFiles::AsNamed),
            Path::new("/m/100%-3")
        );
        let alone = RankInfo::test(0, 1, "db07", 0);
        assert_eq!(
            for_rank_of(Path::new("/m/t.dat"), RankFiles::Own, &alone),
            Path::new("/m/t.dat")
        );
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
