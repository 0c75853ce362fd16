//! `--verify` and its companions (`iosim run`): fio's `verify=crc32c`,
//! `do_verify`, `verify_backlog`, `verify_only` and `verify_state_save/load`.

use std::path::PathBuf;

use clap::Args;

use crate::verify::run::VerifyOptions;

/// Data verification of `iosim run` (docs/verify.md).
#[derive(Debug, Clone, Default, Args)]
pub struct VerifyArgs {
    /// Write iosim's verifiable block format (id, generation, crc32c, a stamp
    /// per 512-byte sector) and check every block read back (fio's verify=crc32c).
    #[arg(long)]
    pub verify: bool,

    /// After the measured time, read back every block written (fio's do_verify). Implies --verify.
    #[arg(long)]
    pub verify_pass: bool,

    /// Every N writes of a thread, re-read those N blocks (fio's verify_backlog). Implies --verify.
    /// Each thread keeps the last N block numbers (8 bytes each), checked against available memory.
    #[arg(long, value_name = "N")]
    pub verify_backlog: Option<u64>,

    /// Keep the per-block generations in FILE: loaded when it exists, saved
    /// at the end, so a later run continues them or checks them (fio's
    /// verify_state_save/verify_state_load). Implies --verify.
    #[arg(long, value_name = "FILE")]
    pub verify_state: Option<PathBuf>,

    /// Run no workload: only read back and check every block the
    /// --verify-state file names (fio's verify_only).
    #[arg(long, requires = "verify_state")]
    pub verify_only: bool,
}

impl VerifyArgs {
    /// The library's options (`None`: no verification asked).
    pub fn options(&self) -> Option<VerifyOptions> {
        let on = self.verify
            || self.verify_pass
            || self.verify_backlog.is_some()
            || self.verify_state.is_some()
            || self.verify_only;
        on.then(|| VerifyOptions {
            pass: self.verify_pass,
            backlog: self.verify_backlog.unwrap_or(0),
            only: self.verify_only,
            state: self.verify_state.clone(),
        })
    }
}
