//! What the measuring commands (run, quick, sweep, matrix, qualify) share:
//! their runner options. Its own file, below the dispatcher, so a command
//! does not call back into `commands/mod.rs` (an import loop).

use std::io::IsTerminal;
use std::time::Duration;

use super::Ctx;
use crate::cli::output::OutputArgs;
use crate::runner::{RunOptions, RunSync};

impl Ctx<'_> {
    /// Runner options for a measuring command: progress on a terminal
    /// unless --quiet, the command's stop flag, and under mpirun/srun the job
    /// as the run's [`RunSync`] hook (so every run is collective).
    pub fn run_options(&self, out: &OutputArgs, interval: Duration) -> RunOptions {
        RunOptions {
            progress: !out.quiet && std::io::stderr().is_terminal(),
            stop: self.stop.clone(),
            interval,
            sync: self.job.clone().map(|j| j as std::sync::Arc<dyn RunSync>),
            thread_series: false,
            verify: None,
            metrics: None,
            hist_log: None,
        }
    }
}
