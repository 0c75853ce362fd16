//! `iosim profile list|show`.

use clap::{Args, Subcommand};

/// `iosim profile`.
#[derive(Debug, Clone, Args)]
pub struct ProfileArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ProfileAction,
}

/// `iosim profile list|show`.
#[derive(Debug, Clone, Subcommand)]
pub enum ProfileAction {
    /// List the built-in profiles: name, description, source.
    List,
    /// Print a profile's TOML (copy it, edit it, run it with --profile FILE.toml).
    Show {
        /// Built-in name or path to a .toml file.
        name: String,
    },
}
