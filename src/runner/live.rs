//! A run's part in the live metrics (`--metrics-listen`): the main thread
//! folds every interval message into [`Live`] as it merges it (never the
//! workers), and the run's end and self-checks after.

use std::sync::Arc;

use crate::metrics::{Live, ScopeId};
use crate::sysmon::mounts::Resolution;

use super::result::{RunResult, SeriesPoint};
use super::series::IntervalMsg;

/// The scopes of one run in [`Live`].
pub(super) struct LiveRun {
    live: Arc<Live>,
    /// Per workload: its label, and one scope per target.
    workloads: Vec<(String, Vec<ScopeId>)>,
}

impl LiveRun {
    /// The run's workloads (each a description and its target paths) and
    /// the devices under them, as scopes of `live`.
    pub fn new<'a>(
        live: Arc<Live>,
        workloads: impl Iterator<Item = (String, Vec<String>)>,
        devices: impl Iterator<Item = &'a Resolution>,
    ) -> LiveRun {
        live.watch_devices(
            devices
                .filter_map(|r| r.device())
                .flat_map(|d| d.monitor_names()),
        );
        let workloads = workloads
            .map(|(w, targets)| {
                let scopes = targets.iter().map(|t| live.scope(&w, t)).collect();
                (w, scopes)
            })
            .collect();
        LiveRun { live, workloads }
    }

    /// One worker's interval message, before it is merged into the series.
    pub fn interval(&self, m: &IntervalMsg) {
        if let Some(&s) = self
            .workloads
            .get(m.workload)
            .and_then(|(_, t)| t.get(m.target))
        {
            self.live.add(s, m.thread, &m.stats, m.errors, m.in_flight);
        }
    }

    /// Workload `wi`'s interval `p` closed (every thread's part merged).
    pub fn closed(&self, wi: usize, p: &SeriesPoint) {
        if let Some((w, _)) = self.workloads.get(wi) {
            self.live
                .set_rate(w, [p.read.iops, p.write.iops, p.total.iops]);
        }
    }

    /// The workers have finished.
    pub fn ended(&self) {
        for s in self.workloads.iter().flat_map(|(_, t)| t) {
            self.live.end_run(*s);
        }
    }

    /// The results are assembled: their self-checks are in.
    pub fn checked(&self, results: &[RunResult]) {
        for r in results {
            self.live.checked(r.warnings.iter().map(|w| &w.code));
        }
    }
}
