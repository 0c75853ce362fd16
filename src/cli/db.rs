//! The history-database options every measuring or reading command shares:
//! `--db`, `--no-save`, `--label`, `--baseline`, `--threshold`.

use std::path::PathBuf;

use clap::Args;

use crate::store::{Store, StoreError};

/// Where the history is.
#[derive(Debug, Clone, Default, Args)]
pub struct DbArgs {
    /// History database (default: $XDG_DATA_HOME/iosim/history.db, else ~/.local/share/iosim/history.db; on Windows %LOCALAPPDATA%\iosim\history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database path.
    pub fn path(&self) -> PathBuf {
        self.db.clone().unwrap_or_else(crate::store::default_path)
    }

    /// Opens the database, creating it if needed (for saving).
    pub fn open(&self) -> Result<Store, StoreError> {
        Store::open(&self.path())
    }

    /// Opens the database for reading: a missing one is an error, not created.
    pub fn open_existing(&self) -> Result<Store, StoreError> {
        let path = self.path();
        if !path.exists() {
            return Err(StoreError::Missing(path));
        }
        Store::open(&path)
    }
}

/// Saving options of measuring commands.
#[derive(Debug, Clone, Default, Args)]
pub struct SaveArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,

    /// Do not store this run in the history database.
    #[arg(long)]
    pub no_save: bool,

    /// Label stored with the run (for `iosim history --label` and `compare label:NAME`).
    #[arg(long)]
    pub label: Option<String>,
}

/// Regression guard of `iosim run`.
#[derive(Debug, Clone, Default, Args)]
pub struct BaselineArgs {
    /// Compare with this stored run (id, `last`, `label:NAME`, `group:N`; for a sweep: an earlier
    /// sweep, point by point) and exit 4 if IOPS, MiB/s or p99 latency regressed beyond --threshold.
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,

    /// Allowed regression for --baseline, percent.
    #[arg(long, value_name = "PCT", default_value_t = 10.0, value_parser = super::values::non_negative_arg)]
    pub threshold: f64,
}
