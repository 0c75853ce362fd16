//! `iosim precondition`: bring a target to steady state (SNIA PTS).

use std::path::PathBuf;

use clap::Args;

use super::values::size_arg;

/// `iosim precondition`.
#[derive(Debug, Clone, Args)]
pub struct PreconditionArgs {
    /// The file or block device (missing files are created with --size).
    pub target: PathBuf,

    /// Size of a file to create.
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,

    /// Block size of the random writes that follow the two sequential passes.
    #[arg(long, value_parser = size_arg, default_value = "4K")]
    pub bs: u64,

    /// Outstanding I/Os.
    #[arg(long, default_value_t = 32)]
    pub qd: u32,

    /// Steady-state criterion for the random writes (see iosim run --steady-state).
    #[arg(long, value_name = "CRITERION", value_parser = crate::workload::steady::steady_arg, default_value = "iops:10%,20%")]
    pub steady_state: crate::workload::steady::SteadySpec,

    /// Allow writing to block devices and to files iosim did not create.
    #[arg(long)]
    pub allow_destroy: bool,

    /// No progress on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
