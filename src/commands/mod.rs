//! Command handlers: one file a command. Each takes its parsed arguments
//! (from [`crate::cli`]) and a [`Ctx`], builds the library's plain
//! configuration, runs it, and ends in [`finish::finish`], which prints the
//! result document to `ctx.out`, writes the files beside it, applies
//! `--baseline`, saves it and returns the [`Outcome`] that `main` maps to the
//! exit status through [`crate::outcome::EXIT_CODES`].
//!
//! Under mpirun/srun every rank runs the same command: its target paths
//! become the rank's in one place ([`Ctx::for_rank`], by the command's rule
//! in [`ranks::under_launcher`], which also refuses the commands that are
//! not collective yet), the runs are collective through `ctx.job` in their
//! options ([`Ctx::run_options`]), every rank gets the job's result, and
//! `finish` lets rank 0 alone print, check and save it.
//!
//! Results go to `ctx.out` (stdout in the binary) and write errors are
//! returned, never printed with `print!` (which panics on a closed pipe).
//! Progress, notes and warnings go to stderr.

pub mod capture;
pub mod compare;
pub mod compat;
pub mod crash;
pub mod create;
pub mod fingerprint;
pub mod finish;
pub mod fsync;
pub mod history;
pub mod install;
pub mod matrix;
pub mod options;
pub mod precondition;
pub mod profile;
pub mod qualify;
pub mod quick;
pub mod ranks;
pub mod replay;
pub mod report;
pub mod run;
pub mod save;
pub mod show;
pub mod sim;
pub mod sweep;

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::{Cli, Command};
use crate::outcome::Outcome;

/// What every command gets besides its arguments.
pub struct Ctx<'a> {
    /// Set by Ctrl-C or SIGTERM; measuring commands stop and print what they have.
    pub stop: Arc<AtomicBool>,
    /// Where results go (stdout in the binary).
    pub out: &'a mut dyn Write,
    /// Under mpirun/srun: the job (from `mpi::init`), which every run's
    /// options carry as their [`crate::runner::RunSync`] hook; None for a
    /// process on its own.
    pub job: Option<Arc<crate::mpi::Job>>,
    /// Under a launcher, how the command's ranks use its target paths
    /// ([`Ctx::for_rank`]), from [`ranks::under_launcher`] by `dispatch`.
    pub rank_files: crate::mpi::RankFiles,
}

impl Ctx<'_> {
    /// A context for a process on its own.
    pub fn new(stop: Arc<AtomicBool>, out: &mut dyn Write) -> Ctx<'_> {
        Ctx {
            stop,
            out,
            job: None,
            rank_files: crate::mpi::RankFiles::AsNamed,
        }
    }

    /// Whether this process prints, checks and saves results: a process on
    /// its own, or rank 0 of a job.
    pub fn is_root(&self) -> bool {
        self.job.is_none() || crate::mpi::is_root()
    }
}

/// Runs the command the command line names.
pub fn dispatch(cli: Cli, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if let ranks::UnderLauncher::Collective(files) = ranks::under_launcher(cli.command.as_ref()) {
        ctx.rank_files = files;
    }
    match cli.command {
        None => quick::run(&cli.quick, ctx),
        Some(Command::Quick(a)) => quick::run(&a, ctx),
        Some(Command::Run(a)) => run::run(&a, ctx),
        Some(Command::Qualify(a)) => qualify::run(&a, ctx),
        Some(Command::Create(a)) => create::run(&a, ctx),
        Some(Command::Sqlio(a)) => compat::sqlio(&a, ctx),
        Some(Command::Diskspd(a)) => compat::diskspd(&a, ctx),
        Some(Command::Translate(a)) => compat::translate(&a, ctx),
        Some(Command::History(a)) => history::run(&a, ctx),
        Some(Command::Show(a)) => show::run(&a, ctx),
        Some(Command::Compare(a)) => compare::run(&a, ctx),
        Some(Command::Report(a)) => report::run(&a, ctx),
        Some(Command::Sim(a)) => sim::run(&a, ctx),
        Some(Command::Sweep(a)) => sweep::run(&a, ctx),
        Some(Command::Profile(a)) => profile::run(&a, ctx),
        Some(Command::Matrix(a)) => matrix::run(&a, ctx),
        Some(Command::Precondition(a)) => precondition::run(&a, ctx),
        Some(Command::Crash(a)) => crash::run(&a, ctx),
        Some(Command::Replay(a)) => replay::run(&a, ctx),
        Some(Command::Capture(a)) => capture::run(&a, ctx),
        Some(Command::Fingerprint(a)) => fingerprint::run(&a, ctx),
        Some(Command::Fsync(a)) => fsync::run(&a, ctx),
        Some(Command::Completions(a)) => install::completions(&a, ctx),
        Some(Command::Manpages(a)) => install::manpages(&a, ctx),
    }
}

/// SIGINT/SIGTERM set the returned flag, which workers poll; a second one
/// exits at once with the interrupted status.
pub fn install_signal_handlers() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    crate::platform::signals::install_stop_handlers(&stop, i32::from(Outcome::Interrupted.code()))?;
    Ok(stop)
}
