//! `iosim completions` and `iosim manpages`: what a package installs besides
//! the binary, generated from these clap definitions (docs/install.md).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// A shell `iosim completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// Bash (bash-completion).
    Bash,
    /// Zsh (a `_iosim` function for a directory on `$fpath`).
    Zsh,
    /// Fish.
    Fish,
    /// Elvish.
    Elvish,
    /// PowerShell.
    Powershell,
}

/// `iosim completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `iosim manpages`.
#[derive(Debug, Clone, Args)]
pub struct ManpagesArgs {
    /// Directory to write iosim.1 and one iosim-COMMAND.1 per command into (created if missing).
    pub dir: PathBuf,
}
