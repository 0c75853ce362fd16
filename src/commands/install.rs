//! `iosim completions SHELL` and `iosim manpages DIR`: shell completion
//! scripts and man pages generated from the clap definitions
//! ([`crate::cli::command`]), so they always list the real commands and options.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::Ctx;
use crate::cli::install::{CompletionsArgs, ManpagesArgs, Shell};
use crate::outcome::Outcome;

/// Writes the completion script for `a.shell` to `ctx.out`.
pub fn completions(a: &CompletionsArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    use clap_complete::shells;
    let mut cmd = crate::cli::command();
    let name = cmd.get_name().to_string();
    let out = &mut *ctx.out;
    // clap_complete's `generate` panics on a write error (a closed pipe);
    // generate into memory, then write and return any error.
    let mut buf = Vec::new();
    match a.shell {
        Shell::Bash => clap_complete::generate(shells::Bash, &mut cmd, &name, &mut buf),
        Shell::Zsh => clap_complete::generate(shells::Zsh, &mut cmd, &name, &mut buf),
        Shell::Fish => clap_complete::generate(shells::Fish, &mut cmd, &name, &mut buf),
        Shell::Elvish => clap_complete::generate(shells::Elvish, &mut cmd, &name, &mut buf),
        Shell::Powershell => clap_complete::generate(shells::PowerShell, &mut cmd, &name, &mut buf),
    }
    out.write_all(&buf)?;
    Ok(Outcome::Success)
}

/// Writes `iosim.1` and one `iosim-COMMAND.1` per (visible) command into `a.dir`;
/// lists the files written on stderr.
pub fn manpages(a: &ManpagesArgs, _ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    std::fs::create_dir_all(&a.dir).with_context(|| {
        format!(
            "cannot create '{}': choose a writable directory",
            a.dir.display()
        )
    })?;
    for path in write_manpages(&a.dir)? {
        crate::say!("wrote {}", path.display());
    }
    Ok(Outcome::Success)
}

/// The man pages for `iosim` and each of its commands (recursively, so
/// `iosim profile list` gets `iosim-profile-list.1`), written into `dir`.
pub fn write_manpages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut cmd = crate::cli::command();
    // Builds the full tree: subcommands get their `iosim-` qualified names
    // and inherited settings, as `iosim help` sees them.
    cmd.build();
    let mut written = Vec::new();
    write_page(&cmd, dir, &mut written)?;
    Ok(written)
}

/// Writes `cmd`'s page, named by its display name (`iosim-profile-list`,
/// set by `build`), then its visible subcommands' pages.
fn write_page(cmd: &clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render(&mut page)?;
    let path = dir.join(man.get_filename());
    crate::outfile::write(&path, "man page", &page, crate::outfile::Existing::Replace)?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() != "help" {
            write_page(sub, dir, written)?;
        }
    }
    Ok(())
}
