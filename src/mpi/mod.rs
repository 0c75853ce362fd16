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

mod agree;
mod collective;
pub mod merge;
mod paths;
mod rank;
#[cfg(feature = "mpi")]
pub mod world;

pub use agree::{build_id, check_fingerprints, Agreed, Fingerprint};
pub use collective::{Collective, MpiArgs};
pub use paths::{
    expand_path, expand_targets, has_placeholders, rank_file, rank_path, share_region,
};
use rank::WHO;
pub use rank::{hostname, is_collective, is_root, where_am_i, who, RankInfo};

use crate::runner::{RunOptions, RunResult};
use crate::workload::WorkloadSpec;

pub use merge::{RankReport, RanksReport, SoloReport, SoloRow};

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

/// Several workloads at once (a profile phase) on every rank: one run of the
/// runner per rank ([`crate::runner::run_many`]), all ranks sharing one
/// synchronised window. Returns, per workload, the merged result (on every
/// rank). A singleton calls `run_many` directly.
pub fn run_group(specs: &[WorkloadSpec], opts: &RunOptions) -> anyhow::Result<Vec<Collective>> {
    #[cfg(feature = "mpi")]
    if is_collective() {
        return world::run_group(specs, opts, ARGS.get().unwrap_or(&MpiArgs::default()));
    }
    Ok(crate::runner::run_many(specs, opts)?
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
