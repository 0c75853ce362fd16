//! The per-participant part of a joint run (the ranks of an MPI job, see
//! [`super::RunSync`]): what [`super::run_joint`] returns beside each merged
//! result, and what a document keeps of it (`ranks` in the JSON). Types
//! only: the merge and the text are `mpi`'s.

use serde::{Deserialize, Serialize};

use super::result::{HistogramSet, RunResult};
use crate::stats::RwResult;
use crate::sysmon::cpu::CoreUtil;
use crate::sysmon::sampler::DeviceSeries;

/// Start and stop spread across ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skew {
    /// Latest minus earliest window start, ms (wall clocks: across hosts this
    /// includes their clock offset).
    pub start_ms: f64,
    /// Latest minus earliest window end, ms.
    pub stop_ms: f64,
    /// Shortest rank window, s.
    pub min_duration_s: f64,
    /// Longest rank window, s (the aggregate's window).
    pub max_duration_s: f64,
}

/// One rank's line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    /// Rank.
    pub rank: usize,
    /// Host.
    pub host: String,
    /// Rank on its host.
    pub local_rank: usize,
    /// Its measured window, s.
    pub duration_s: f64,
    /// Window start after the earliest rank's, ms.
    pub start_offset_ms: f64,
    /// Window end after the earliest rank's, ms.
    pub stop_offset_ms: f64,
    /// I/O errors.
    pub errors: u64,
    /// Whether it was interrupted.
    pub interrupted: bool,
    /// Its targets (expanded paths).
    pub targets: Vec<String>,
    /// Reads, writes and both, over its own window.
    pub result: RwResult,
    /// Its latency histograms (HDR V2 + deflate, base64), to re-merge later.
    pub histograms: HistogramSet,
}

/// One host's line: the sums of its ranks, and its device and CPU monitor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostRow {
    /// Host.
    pub host: String,
    /// Its ranks.
    pub ranks: Vec<usize>,
    /// I/Os.
    pub ios: u64,
    /// I/Os per second over the common window.
    pub iops: f64,
    /// MiB/s over the common window.
    pub mib_per_sec: f64,
    /// I/O errors.
    pub errors: u64,
    /// Its CPUs as a whole over the window (from its lowest rank's monitor).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu: Option<CoreUtil>,
    /// Its watched block devices over the window (from its lowest rank's monitor).
    pub devices: Vec<DeviceSeries>,
}

/// The per-rank part of a collective result (`ranks` in the JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RanksReport {
    /// Ranks in the job.
    pub count: usize,
    /// Distinct hosts.
    pub hosts_count: usize,
    /// Whether the window ended at the first rank's finish (`--stonewall`).
    pub stonewall: bool,
    /// The aggregate's window, s (the longest rank window).
    pub window_s: f64,
    /// Start/stop spread.
    pub skew: Skew,
    /// One line a rank, by rank.
    pub per_rank: Vec<RankRow>,
    /// One line a host, in order of first rank.
    pub per_host: Vec<HostRow>,
    /// Ranks far from the others, in words.
    pub stragglers: Vec<String>,
    /// Cost of the collective machinery, measured on rank 0.
    pub overhead: Overhead,
}

/// Seconds rank 0 spent in the collective machinery.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// From MPI start-up to the window-start barrier's exit (start-up,
    /// agreement, target preparation included).
    pub startup_s: f64,
    /// Of the start-up: MPI_Init, learning ranks and hosts, and the ranks'
    /// agreement on build and options (the rest is target preparation and
    /// the barriers).
    #[serde(default)]
    pub init_s: f64,
    /// From the end of its window to the merged result (end barrier, gather, merge).
    pub gather_s: f64,
}

/// One workload's result of a run: with other participants ([`super::RunSync`]),
/// every participant's result merged, and their part.
#[derive(Clone, Debug)]
pub struct Joint {
    /// The result (a plain run's own).
    pub result: RunResult,
    /// The participants: ranks, per-rank and per-host results, skew and
    /// stragglers (None for a plain run).
    pub ranks: Option<RanksReport>,
}

impl From<RunResult> for Joint {
    fn from(result: RunResult) -> Joint {
        Joint {
            result,
            ranks: None,
        }
    }
}
