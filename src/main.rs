//! The `iosim` binary: parse the command line, run the command, map its
//! outcome to the exit status. Everything else lives in the library.

use std::process::ExitCode;

use iosim::cli::Cli;
use iosim::commands::{self, Ctx};
use iosim::outcome::{self, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    let outcome = commands::install_signal_handlers().and_then(|stop| {
        let mut stdout = std::io::stdout();
        let mut ctx = Ctx {
            stop,
            out: &mut stdout,
        };
        let outcome = commands::dispatch(cli, &mut ctx)?;
        ctx.out.flush()?;
        Ok(outcome)
    });
    match outcome {
        Ok(o) => ExitCode::from(o.code()),
        // `iosim ... | head`: the reader has what it wanted; stop quietly.
        Err(e) if outcome::is_broken_pipe(&e) => ExitCode::from(Outcome::ReaderGone.code()),
        Err(e) => {
            eprintln!("iosim: error: {e:#}");
            if iosim::target::is_interrupted(&e) {
                return ExitCode::from(Outcome::Interrupted.code());
            }
            ExitCode::from(Outcome::Failed.code())
        }
    }
}
