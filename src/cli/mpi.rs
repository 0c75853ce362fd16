//! The collective-run options (`iosim run`, `sweep`, `run --profile`).

/// Options that only matter when several ranks run together. A singleton
/// accepts and ignores them.
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

impl MpiArgs {
    /// The job's options.
    pub fn options(&self) -> crate::mpi::JobOptions {
        crate::mpi::JobOptions {
            stonewall: self.stonewall,
            share_target: self.share_target,
        }
    }
}
