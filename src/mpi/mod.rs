//! Distributed runs: many processes (MPI ranks, on one host or many) load the
//! same storage over one synchronised window and report one result.
//!
//! The MPI part (barriers, gathers, `MPI_Abort`) is compiled only with the
//! cargo feature `mpi`; everything here that is plain logic (rank
//! placeholders in paths, per-rank regions of a shared target, merging the
//! ranks' results, the per-rank table, stragglers) is compiled in every build
//! and unit-tested without MPI. A process that is not under a launcher (or a
//! launcher with one rank) is a *singleton* and behaves exactly as the plain
//! binary: [`run`] then calls the runner directly.
//!
//! See docs/distributed.md for the user's side.

pub mod merge;
mod rank;
#[cfg(feature = "mpi")]
pub mod world;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use rank::WHO;
pub use rank::{hostname, is_collective, is_root, where_am_i, who, RankInfo};

use crate::runner::{RunOptions, RunResult};
use crate::workload::WorkloadSpec;

pub use merge::{RankReport, RanksReport, SoloReport, SoloRow};

/// Options that only matter when several ranks run together (`iosim run`,
/// `sweep`, `run --profile`). A singleton accepts and ignores them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MpiArgs {
    /// Under mpirun/srun: the measured window ends for every rank as soon as
    /// the first rank finishes its work (--io-limit, or its --duration), or any
    /// rank is interrupted, so the aggregate covers only time when all ranks
    /// were loading the storage (IOR's stonewalling).
    #[arg(long)]
    pub stonewall: bool,

    /// Under mpirun/srun: split each target that several ranks name into
    /// disjoint, equal per-rank regions (rank r gets the r-th slice of the
    /// region --offset/--length select), instead of every rank using the whole
    /// region.
    #[arg(long)]
    pub share_target: bool,
}

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

/// The version, build and options every rank must agree on before a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// iosim version and build profile.
    pub version: String,
    /// Hash of the parsed command line (placeholders unexpanded).
    pub options: u64,
}

impl Fingerprint {
    /// This build's fingerprint for the parsed options `options` (their `Debug` text).
    pub fn new(options: &str) -> Fingerprint {
        Fingerprint {
            version: build_id(),
            options: fnv1a(options.as_bytes()),
        }
    }
}

/// The version string ranks compare (a different build on one host is refused).
pub fn build_id() -> String {
    format!(
        "iosim {} ({}{})",
        env!("CARGO_PKG_VERSION"),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        if cfg!(feature = "mpi") { ", mpi" } else { "" }
    )
}

/// 64-bit FNV-1a: a stable hash (the same on every host and Rust version).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Compares every rank's fingerprint with rank 0's; `Err` names the ranks
/// (and hosts) that differ and how.
pub fn check_fingerprints(all: &[(RankInfo, Fingerprint)]) -> Result<(), String> {
    let Some((_, base)) = all.first() else {
        return Ok(());
    };
    let mut lines = Vec::new();
    for (who, fp) in all.iter().skip(1) {
        if fp.version != base.version {
            lines.push(format!(
                "rank {} on {} runs {}, rank 0 runs {}",
                who.rank, who.host, fp.version, base.version
            ));
        } else if fp.options != base.options {
            lines.push(format!(
                "rank {} on {} was given different options than rank 0",
                who.rank, who.host
            ));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the ranks do not agree, so the job was refused before touching any storage: {}. \
             Install the same iosim build on every host and start every rank with the same command line",
            lines.join("; ")
        ))
    }
}

/// An error every rank reached the same way (e.g. the ranks disagree on
/// options): rank 0 prints it and every rank exits normally, no abort needed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Agreed(pub String);

/// Refuses a command that does not run collectively yet, when started as
/// one of several ranks (every rank refuses alike; rank 0 says why).
pub fn single_only(command: &str) -> anyhow::Result<()> {
    if is_collective() {
        return Err(Agreed(format!(
            "`iosim {command}` does not run collectively yet: under mpirun/srun use `iosim run` (with or without --profile), `quick`, `sweep` or `sim`, or start {command} without a launcher"
        ))
        .into());
    }
    Ok(())
}

/// What [`init`] returns: keep it alive until the end of `main` (dropping it
/// finalises MPI).
pub struct Session {
    #[cfg(feature = "mpi")]
    _world: Option<world::World>,
}

/// The number of ranks a launcher says this process belongs to, from the
/// environment Open MPI, MPICH/Hydra and PMIx set (None: no launcher).
pub fn launcher_ranks() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_SIZE",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// Joins the MPI job if this process was started by a launcher. `options`
/// is the parsed command line's `Debug` text: every rank must have the same
/// (and the same iosim build), or the job is refused.
///
/// Without the `mpi` feature, a process started by a launcher with several
/// ranks is refused with a message saying how to build with MPI.
pub fn init(options: &str) -> anyhow::Result<Session> {
    #[cfg(feature = "mpi")]
    {
        if launcher_ranks().is_none() {
            // Not under a launcher: a plain process, no MPI start-up cost.
            let _ = WHO.set(RankInfo::single());
            return Ok(Session { _world: None });
        }
        let w = world::World::init(options)?;
        Ok(Session { _world: Some(w) })
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = options;
        if let Some(n) = launcher_ranks().filter(|&n| n > 1) {
            anyhow::bail!(
                "started as one of {n} MPI ranks, but this iosim was built without MPI: \
                 rebuild with `cargo build --release --features mpi` (needs libopenmpi-dev \
                 and libclang-dev) and start that binary under mpirun/srun"
            );
        }
        let _ = WHO.set(RankInfo::single());
        Ok(Session {})
    }
}

/// A run's result with, for a collective run, the per-rank part.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Collective {
    /// The merged result (a singleton's own result).
    #[serde(flatten)]
    pub result: RunResult,
    /// Ranks, per-rank and per-host results, skew and stragglers (None for a singleton).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ranks: Option<RanksReport>,
    /// `iosim sqlio` or `iosim diskspd`: what it printed the run from
    /// (stored in the history, so `iosim show` prints that output again).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub front_end: Option<crate::compat::stored::FrontEnd>,
}

impl Collective {
    /// The text report: the usual one, then the per-rank part.
    pub fn text(&self) -> String {
        let mut s = crate::report::text(&self.result);
        if let Some(r) = &self.ranks {
            s.push_str(&r.text());
        }
        s
    }

    /// The JSON document (the usual schema plus `ranks`).
    pub fn json(&self) -> String {
        match &self.ranks {
            None => crate::report::json(&self.result),
            Some(_) => serde_json::to_string_pretty(self).unwrap_or_default(),
        }
    }
}

/// Runs `spec` on every rank and merges the results on rank 0, which sends
/// the merged result to every rank (callers print only on rank 0,
/// [`is_root`]; every rank takes the same decisions and exits with the same
/// code). A singleton (or a build without MPI) calls the runner directly.
pub fn run(spec: &WorkloadSpec, opts: &RunOptions, args: &MpiArgs) -> anyhow::Result<Collective> {
    #[cfg(feature = "mpi")]
    if is_collective() {
        return world::run(spec, opts, args);
    }
    let _ = args;
    Ok(Collective {
        result: crate::runner::run(spec, opts)?,
        ranks: None,
        front_end: None,
    })
}

/// Runs several workloads at once in this process (`profile::run_concurrent`).
pub type LocalRuns = dyn Fn(&[WorkloadSpec], &RunOptions) -> anyhow::Result<Vec<RunResult>>;

/// Several workloads at once (a profile phase) on every rank, sharing one
/// synchronised window; `local` runs them in this process (e.g.
/// `profile::run_concurrent`) and must pass `opts.sync` to each run. Returns,
/// per workload, the merged result (on every rank). A singleton calls `local`.
pub fn run_group(
    specs: &[WorkloadSpec],
    opts: &RunOptions,
    local: &LocalRuns,
) -> anyhow::Result<Vec<Collective>> {
    #[cfg(feature = "mpi")]
    if is_collective() {
        return world::run_group(
            specs,
            opts,
            ARGS.get().unwrap_or(&MpiArgs::default()),
            local,
        );
    }
    Ok(local(specs, opts)?
        .into_iter()
        .map(|result| Collective {
            result,
            ranks: None,
            front_end: None,
        })
        .collect())
}

/// For a command that runs on its own on each rank and only reports together
/// (`sim`): every rank's summary line and the job's sums, on every rank (so
/// every rank exits with the job's code). None for a singleton.
pub fn solo_summary(row: merge::SoloRow) -> anyhow::Result<Option<merge::SoloReport>> {
    #[cfg(feature = "mpi")]
    if is_collective() {
        return Ok(Some(merge::SoloReport::new(world::all_rows(&row)?)));
    }
    let _ = row;
    Ok(None)
}

/// Waits for every rank (nothing for a singleton): e.g. so that every rank
/// starts a simulation together.
pub fn barrier() {
    #[cfg(feature = "mpi")]
    if is_collective() {
        world::barrier();
    }
}

/// A target path for this rank, for commands whose every rank uses its own
/// files (`run --profile`, `sim`): placeholders expanded; under a launcher
/// with several ranks a path without any gets `-%h-%l` (as [`rank_file`]),
/// unless it is a block device.
pub fn rank_path(path: &std::path::Path) -> PathBuf {
    let s = path.to_string_lossy();
    let is_device = std::fs::metadata(path)
        .map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
        .unwrap_or(false);
    if is_device || has_placeholders(&s) {
        return PathBuf::from(expand_path(&s, &who()));
    }
    match path.file_name() {
        Some(name) => path.with_file_name(rank_file(&name.to_string_lossy())),
        None => path.to_path_buf(),
    }
}

/// The collective options of this command, for [`run_point`].
static ARGS: std::sync::OnceLock<MpiArgs> = std::sync::OnceLock::new();

/// Records the command's collective options (`--stonewall`, `--share-target`)
/// for the commands that run many workloads ([`run_point`]).
pub fn configure(args: &MpiArgs) {
    let _ = ARGS.set(args.clone());
}

/// One workload of a command that runs several (a sweep point, a quick-suite
/// test): collective under a launcher, the plain runner otherwise. Returns
/// the merged result on every rank.
pub fn run_point(spec: &WorkloadSpec, opts: &RunOptions) -> anyhow::Result<RunResult> {
    Ok(run(spec, opts, ARGS.get().unwrap_or(&MpiArgs::default()))?.result)
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

/// Prints a command's error. In a collective run it names the rank and host
/// and ends the whole job (MPI_Abort), unless every rank reached the same
/// error (then rank 0 alone prints it).
pub fn report_error(e: &anyhow::Error) {
    #[cfg(feature = "mpi")]
    if is_collective() {
        world::fail(e);
        return;
    }
    eprintln!("iosim: error: {e:#}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(rank: usize, size: usize, host: &str, local: usize) -> RankInfo {
        RankInfo {
            rank,
            size,
            host: host.into(),
            local_rank: local,
            local_size: 2,
        }
    }

    #[test]
    fn placeholders_expand() {
        let w = who(3, 16, "db07", 1);
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

    #[test]
    fn fingerprints_name_the_differing_rank() {
        let a = Fingerprint::new("run x");
        let mut b = a.clone();
        b.options = fnv1a(b"run y");
        let mut c = a.clone();
        c.version = "iosim 9.9.9 (release, mpi)".into();
        let all = vec![
            (who(0, 3, "a", 0), a.clone()),
            (who(1, 3, "b", 0), b),
            (who(2, 3, "c", 0), c),
        ];
        let e = check_fingerprints(&all).unwrap_err();
        assert!(e.contains("rank 1 on b was given different options"), "{e}");
        assert!(e.contains("rank 2 on c runs iosim 9.9.9"), "{e}");
        assert!(check_fingerprints(&all[..1]).is_ok());
        assert_eq!(Fingerprint::new("same"), Fingerprint::new("same"));
    }
}
