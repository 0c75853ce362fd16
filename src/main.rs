//! The `iosim` binary: parse the command line, run the command, map its
//! outcome to the exit status. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser;
use iosim::cli::Cli;
use iosim::commands::{self, Ctx};
use iosim::outcome::Outcome;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = commands::install_signal_handlers().and_then(|stop| {
        let mut stdout = std::io::stdout();
        let mut ctx = Ctx {
            stop,
            out: &mut stdout,
        };
        commands::dispatch(cli, &mut ctx)
    });
    match outcome {
        Ok(o) => ExitCode::from(o.code()),
        Err(e) => {
            eprintln!("iosim: error: {e:#}");
            ExitCode::from(Outcome::Failed.code())
        }
    }
}
