//! What the measuring commands (run, quick, sweep, matrix) share: their
//! runner options. Its own file, below the dispatcher, so a command does not
//! call back into `commands/mod.rs` (an import loop).

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::output::OutputArgs;
use crate::runner::RunOptions;

/// Runner options for a measuring command: progress on a terminal unless --quiet.
pub fn run_options(out: &OutputArgs, stop: Arc<AtomicBool>, interval: Duration) -> RunOptions {
    RunOptions {
        progress: !out.quiet && std::io::stderr().is_terminal(),
        stop,
        interval,
        sync: None,
        thread_series: false,
        verify: None,
    }
}
