//! Who this process is in an MPI job (or a process on its own): the facts
//! every other part of `mpi` reads, below both the facade and the MPI world.

use serde::{Deserialize, Serialize};

/// Who this process is in the job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankInfo {
    /// Rank in the job, 0-based.
    pub rank: usize,
    /// Ranks in the job.
    pub size: usize,
    /// Host name.
    pub host: String,
    /// Rank among the ranks on this host, 0-based.
    pub local_rank: usize,
    /// Ranks on this host.
    pub local_size: usize,
}

impl RankInfo {
    /// Rank `rank` of `size`, `local`-th of two on `host` (the tests' ranks).
    #[cfg(test)]
    pub(crate) fn test(rank: usize, size: usize, host: &str, local: usize) -> RankInfo {
        RankInfo {
            rank,
            size,
            host: host.into(),
            local_rank: local,
            local_size: 2,
        }
    }

    /// A process on its own.
    pub fn single() -> RankInfo {
        RankInfo {
            rank: 0,
            size: 1,
            host: hostname(),
            local_rank: 0,
            local_size: 1,
        }
    }
}

/// This machine's host name (`%h`).
pub use crate::sysmon::host::hostname;

/// The process's place in the job, set once by [`super::init`].
pub(super) static WHO: std::sync::OnceLock<RankInfo> = std::sync::OnceLock::new();

/// This process's rank information (a singleton's if `init` was not called).
pub fn who() -> RankInfo {
    WHO.get().cloned().unwrap_or_else(RankInfo::single)
}

/// Whether this process is one of several ranks.
pub fn is_collective() -> bool {
    WHO.get().is_some_and(|w| w.size > 1)
}

/// Whether this process prints results (rank 0, or a singleton).
pub fn is_root() -> bool {
    who().rank == 0
}

/// Where a rank's error is reported: "rank 2 on host db03".
pub fn where_am_i() -> String {
    let w = who();
    format!("rank {} of {} on {}", w.rank, w.size, w.host)
}
