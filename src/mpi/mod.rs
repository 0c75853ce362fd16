//! Distributed runs: many processes (MPI ranks, on one host or many) load the
//! same storage over one synchronised window and report one result.
//!
//! The MPI part (barriers, gathers, `MPI_Abort`) is compiled only with the
//! cargo feature `mpi`; everything here that is plain logic (rank
//! placeholders in paths, per-rank regions of a shared target, merging the
//! ranks' results, the per-rank table, stragglers) is compiled in every build
//! and unit-tested without MPI. A process that is not under a launcher (or a
//! launcher with one rank) is a *singleton* and behaves exactly as the plain
//! binary: it has no [`Job`], and its runs are the runner's alone.
//!
//! See docs/distributed.md for the user's side.

mod agree;
mod collective;
pub mod merge;
mod paths;
mod rank;
#[cfg(feature = "mpi")]
pub mod world;

// Open MPI and MPICH are Linux's; MS-MPI is not supported (docs/windows.md).
#[cfg(all(feature = "mpi", not(target_os = "linux")))]
compile_error!("the mpi feature needs Open MPI or MPICH on Linux (MS-MPI is not supported): build without --features mpi");

pub use agree::{build_id, check_fingerprints, Agreed, Fingerprint};
pub use collective::JobOptions;
pub use paths::{expand_path, for_rank, for_rank_of, has_placeholders, share_region, RankFiles};
use rank::WHO;
pub use rank::{hostname, is_collective, is_root, where_am_i, who, RankInfo};

pub use merge::{RankReport, RanksReport, SoloReport, SoloRow};

/// The job a process belongs to under mpirun/srun: the runner's
/// [`crate::runner::RunSync`] hook, and what commands that do not use the
/// runner do together (`sim`). See `world::Job`.
#[cfg(feature = "mpi")]
pub use world::Job;

/// Without MPI there is never a job: this type has no value.
#[cfg(not(feature = "mpi"))]
pub enum Job {}

#[cfg(not(feature = "mpi"))]
impl Job {
    /// Every rank waits here for all the others.
    pub fn barrier(&self) {
        match *self {}
    }

    /// Every rank's summary line and the job's sums, on every rank.
    pub fn solo_summary(&self, _row: &SoloRow) -> anyhow::Result<SoloReport> {
        match *self {}
    }
}

#[cfg(not(feature = "mpi"))]
impl crate::runner::RunSync for Job {
    fn barrier(&self, _phase: crate::runner::RunPhase) -> anyhow::Result<()> {
        match *self {}
    }
}

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
    job: Option<std::sync::Arc<Job>>,
}

impl Session {
    /// The job, when this process is one of several ranks (None for a
    /// singleton): the hook that every run's options carry
    /// ([`crate::runner::RunOptions::sync`]).
    pub fn job(&self) -> Option<std::sync::Arc<Job>> {
        self.job.clone()
    }
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
/// (and the same iosim build), or the job is refused; `job` are the
/// command's collective options.
///
/// Without the `mpi` feature, a process started by a launcher with several
/// ranks is refused with a message saying how to build with MPI.
pub fn init(options: &str, job: JobOptions) -> anyhow::Result<Session> {
    #[cfg(feature = "mpi")]
    {
        if launcher_ranks().is_none() {
            // Not under a launcher: a plain process, no MPI start-up cost.
            let _ = WHO.set(RankInfo::single());
            return Ok(Session {
                _world: None,
                job: None,
            });
        }
        let w = world::World::init(options)?;
        // A launcher with one rank: a singleton, the plain runner.
        let job = is_collective().then(|| std::sync::Arc::new(Job::new(job)));
        Ok(Session {
            _world: Some(w),
            job,
        })
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (options, job);
        if let Some(n) = launcher_ranks().filter(|&n| n > 1) {
            anyhow::bail!(
                "started as one of {n} MPI ranks, but this iosim was built without MPI: \
                 rebuild with `cargo build --release --features mpi` (needs libopenmpi-dev \
                 and libclang-dev) and start that binary under mpirun/srun"
            );
        }
        let _ = WHO.set(RankInfo::single());
        Ok(Session { job: None })
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
    crate::say!("iosim: error: {e:#}");
}
