//! The `iosim` binary: parse the command line, run the command, map its
//! outcome to the exit status. Everything else lives in the library.

use std::process::ExitCode;

use iosim::cli::Cli;
use iosim::commands::{self, Ctx};
use iosim::outcome::{self, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    // Under mpirun/srun: join the job (kept until the end; a singleton is a
    // plain process) and refuse the commands that are not collective yet.
    let mpi = iosim::mpi::init(&format!("{:?}", cli.command), cli.job_options());
    let ready = match &mpi {
        Ok(_) => check_command(cli.command.as_ref()),
        Err(e) => Err(anyhow::anyhow!("{e:#}")),
    };
    let outcome = ready
        .and_then(|_| commands::install_signal_handlers())
        .and_then(|stop| {
            let mut stdout = std::io::stdout();
            let mut ctx = Ctx::new(stop, &mut stdout);
            ctx.job = mpi.as_ref().ok().and_then(|s| s.job());
            let outcome = commands::dispatch(cli, &mut ctx)?;
            ctx.out.flush()?;
            Ok(outcome)
        });
    // A stderr whose reader went away (`2>&1 | head`) ends the process as
    // a closed stdout does: quietly, 141, as a tool killed by SIGPIPE.
    let reader_gone = ExitCode::from(Outcome::ReaderGone.code());
    match outcome {
        Ok(o) if o != Outcome::Interrupted && iosim::term::stderr_gone() => reader_gone,
        Ok(o) => ExitCode::from(o.code()),
        // `iosim ... | head`: the reader has what it wanted; stop quietly.
        Err(e) if outcome::is_broken_pipe(&e) => reader_gone,
        Err(e) => {
            iosim::mpi::report_error(&e);
            if iosim::target::is_interrupted(&e) {
                return ExitCode::from(Outcome::Interrupted.code());
            }
            if iosim::term::stderr_gone() {
                return reader_gone;
            }
            ExitCode::from(Outcome::Failed.code())
        }
    }
}

/// Refuses, under a launcher with several ranks, the commands that are not
/// collective yet (the table: `commands::ranks::under_launcher`).
fn check_command(command: Option<&iosim::cli::Command>) -> anyhow::Result<()> {
    match commands::ranks::under_launcher(command) {
        commands::ranks::UnderLauncher::Refused(name) => iosim::mpi::single_only(name),
        _ => Ok(()),
    }
}
