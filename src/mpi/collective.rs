//! What a collective command takes (its options) and gives (a run's result
//! with the per-rank part). Below both the facade (`mpi`) and the MPI world.

use serde::{Deserialize, Serialize};

use super::merge::RanksReport;
use crate::runner::RunResult;

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
