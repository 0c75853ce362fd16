//! Under mpirun/srun: which commands run on every rank, and by which rule
//! their target paths become each rank's. [`Ctx::for_rank`] is the one place
//! a command's target path is expanded (`%r`, `%n`, `%h`, `%l`), through
//! [`crate::mpi::for_rank`], with the rule [`under_launcher`] gives the
//! command; the runner's hook takes the paths as they come.

use std::path::{Path, PathBuf};

use super::Ctx;
use crate::cli::crash::CrashAction;
use crate::cli::Command;
use crate::mpi::RankFiles;

/// What a command does under a launcher with several ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnderLauncher {
    /// It runs on every rank, collectively; its target paths become each
    /// rank's by this rule ([`Ctx::for_rank`]).
    Collective(RankFiles),
    /// It names no target: it runs on every rank as it is (reading the
    /// history, printing help, translating a command line).
    NoTargets,
    /// Not collective yet: refused before anything runs (`mpi::single_only`),
    /// under this name.
    Refused(&'static str),
}

/// The table: every command, what it does under a launcher.
pub fn under_launcher(command: Option<&Command>) -> UnderLauncher {
    use UnderLauncher::{Collective, NoTargets, Refused};
    let Some(command) = command else {
        // `iosim` alone is `iosim quick`.
        return Collective(RankFiles::Own);
    };
    match command {
        Command::Run(a) if a.profile.is_some() => Collective(RankFiles::Own),
        Command::Run(_) | Command::Sweep(_) => Collective(RankFiles::AsNamed),
        Command::Quick(_) | Command::Sim(_) => Collective(RankFiles::Own),
        // `--plan` measures nothing: rank 0 prints it.
        Command::Qualify(a) if a.plan => NoTargets,
        Command::Qualify(_) => Refused("qualify"),
        Command::Create(_) => Refused("create"),
        Command::Sqlio(_) => Refused("sqlio"),
        Command::Diskspd(_) => Refused("diskspd"),
        Command::Matrix(_) => Refused("matrix"),
        Command::Precondition(_) => Refused("precondition"),
        Command::Crash(a) => match a.action {
            CrashAction::Write(_) => Refused("crash write"),
            CrashAction::Verify(_) => Refused("crash verify"),
        },
        Command::Replay(_) => Refused("replay"),
        Command::Capture(_) => Refused("capture"),
        Command::Fsync(_) => Refused("fsync"),
        Command::Translate(_)
        | Command::History(_)
        | Command::Show(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Profile(_)
        | Command::Fingerprint(_)
        | Command::Completions(_)
        | Command::Manpages(_) => NoTargets,
    }
}

impl Ctx<'_> {
    /// A target path of the command as this rank uses it: under a launcher,
    /// expanded by the command's rule ([`under_launcher`], which
    /// [`super::dispatch`] puts in `ctx.rank_files`); a process on its own
    /// uses the path as given, `%` and all.
    pub fn for_rank(&self, path: &Path) -> PathBuf {
        match &self.job {
            Some(_) => crate::mpi::for_rank(path, self.rank_files),
            None => path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn of(line: &str) -> UnderLauncher {
        let cli = Cli::try_parse_from(line.split_whitespace()).expect(line);
        under_launcher(cli.command.as_ref())
    }

    /// Every command that names a target path either resolves it through
    /// [`Ctx::for_rank`] with its rule, or is refused under a launcher: none
    /// runs on several ranks with a path no rule made the rank's.
    #[test]
    fn every_command_with_a_target_resolves_it_or_is_refused() {
        use UnderLauncher::{Collective, NoTargets, Refused};
        let own = Collective(RankFiles::Own);
        let named = Collective(RankFiles::AsNamed);
        for (line, want) in [
            ("iosim", own),
            ("iosim quick /m", own),
            ("iosim run /m/t-%r.dat", named),
            ("iosim run --profile oltp /m/d.dat", own),
            ("iosim sweep /m/t.dat --vary qd=1,2", named),
            ("iosim sim --dir /m", own),
            ("iosim qualify --data /m", Refused("qualify")),
            ("iosim qualify --data /m --plan", NoTargets),
            ("iosim create /m/t.dat --size 1M", Refused("create")),
            ("iosim sqlio -kR /m/t.dat", Refused("sqlio")),
            ("iosim diskspd -c1M /m/t.dat", Refused("diskspd")),
            ("iosim matrix /m/t.dat", Refused("matrix")),
            (
                "iosim precondition /m/t.dat --size 1M",
                Refused("precondition"),
            ),
            (
                "iosim crash write /m/t.dat --acks /m/a",
                Refused("crash write"),
            ),
            (
                "iosim crash verify /m/t.dat --acks /m/a",
                Refused("crash verify"),
            ),
            ("iosim replay /m/trace /m/t.dat", Refused("replay")),
            ("iosim capture /dev/sdb -o /m/out", Refused("capture")),
            ("iosim fsync /m", Refused("fsync")),
            ("iosim history", NoTargets),
        ] {
            assert_eq!(of(line), want, "{line}");
        }
    }

    /// A process on its own uses its paths as given; the rule is the
    /// command's, put in the context by `dispatch`.
    #[test]
    fn a_process_on_its_own_keeps_its_paths() {
        let mut out = Vec::new();
        let ctx = Ctx::new(
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
            &mut out,
        );
        assert_eq!(
            ctx.for_rank(Path::new("/m/t-%r.dat")),
            Path::new("/m/t-%r.dat")
        );
    }
}
