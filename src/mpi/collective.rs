//! What a collective command asks of the job (`--stonewall`,
//! `--share-target`: `cli::MpiArgs` on the command line). Below both the
//! facade (`mpi`) and the MPI world.

/// Options that only matter when several ranks run together. A singleton
/// ignores them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobOptions {
    /// The measured window ends for every rank as soon as the first rank
    /// finishes its work, or any rank is interrupted (IOR's stonewalling).
    pub stonewall: bool,
    /// Each target that several ranks name is split into disjoint, equal
    /// per-rank regions.
    pub share_target: bool,
}
