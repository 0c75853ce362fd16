//! The command line: every clap argument struct, one file per command or
//! shared option group. Nothing outside `cli` and `commands` depends on clap
//! or on these types; commands turn them into the library's plain
//! configurations (a `WorkloadSpec`, a `MatrixConfig`, a `SimConfig`...).
//!
//! Shared groups: [`output::OutputArgs`] (`--output`, `--quiet`),
//! [`db`] (`--db`, `--no-save`, `--label`, `--baseline`, `--threshold`) and
//! the value parsers in [`values`] (sizes, durations, CPU lists, latencies).

pub mod capture;
pub mod compat;
pub mod crash;
pub mod create;
pub mod db;
pub mod fingerprint;
pub mod fsync;
pub mod hints;
pub mod history;
pub mod install;
pub mod matrix;
pub mod metrics;
pub mod mpi;
pub mod output;
pub mod precondition;
pub mod profile;
pub mod qualify;
pub mod quick;
pub mod replay;
pub mod report;
pub mod run;
pub mod sim;
pub mod sweep;
pub mod values;
pub mod verify;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub use compat::CompatArgs;
pub use create::CreateArgs;
pub use db::{BaselineArgs, DbArgs, SaveArgs};
pub use fsync::FsyncArgs;
pub use history::{CompareArgs, HistoryArgs, ShowArgs};
pub use matrix::MatrixArgs;
pub use mpi::MpiArgs;
pub use output::{OutputArgs, OutputFormat};
pub use precondition::PreconditionArgs;
pub use profile::{ProfileAction, ProfileArgs};
pub use qualify::QualifyArgs;
pub use quick::QuickArgs;
pub use report::ReportArgs;
pub use run::RunArgs;
pub use sim::SimArgs;
pub use sweep::SweepArgs;

/// iosim: storage benchmark and database I/O simulator.
///
/// With no command, runs the default benchmark (`iosim quick`) in the
/// current directory: a 1 GiB test file and five corner tests.
#[derive(Debug, Parser)]
#[command(name = "iosim", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do; the default benchmark when absent.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Options of the default benchmark.
    #[command(flatten)]
    pub quick: QuickArgs,
}

impl Cli {
    /// Parses the process's arguments (exiting with the usage on an error),
    /// keeping what only clap's value sources tell: which options were given
    /// explicitly rather than left at their defaults.
    pub fn parse_args() -> Cli {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        match Cli::try_parse_args(args) {
            Ok(cli) => cli,
            Err(e) => e.exit(),
        }
    }

    /// Like [`Cli::parse_args`] for a given argument list (tests).
    pub fn try_parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        typo_check(&args)?;
        let full = command();
        hints::unit_split(&full, &args)?;
        let m = full
            .clone()
            .try_get_matches_from(&args)
            .map_err(|e| hints::refine(e, &full, &args))?;
        Ok(Cli::parse_from_matches(m))
    }

    /// The command's collective options (under mpirun/srun), for `mpi::init`.
    pub fn job_options(&self) -> crate::mpi::JobOptions {
        match &self.command {
            Some(Command::Run(r)) => r.mpi.options(),
            Some(Command::Sweep(s)) => s.run.mpi.options(),
            _ => crate::mpi::JobOptions::default(),
        }
    }

    fn parse_from_matches(m: clap::ArgMatches) -> Cli {
        let mut cli = Cli::from_arg_matches(&m).unwrap_or_else(|e| e.exit());
        if let (Some(Command::Run(r)), Some(("run", sub))) = (&mut cli.command, m.subcommand()) {
            r.note_sources(sub);
        }
        cli
    }
}

/// The whole command line as clap sees it: the derived [`Cli`] with the
/// help that is written once for many options (the units of every
/// duration). Parsing, completions and man pages all start here.
pub fn command() -> clap::Command {
    values::document_durations(Cli::command())
}

/// `iosim rn x.dat`: the default benchmark's optional DIR would take `rn`
/// for a directory, so clap never says "did you mean". When the first
/// argument is neither an option, a command nor an existing path, and clap
/// finds a command like it, that is the error (with clap's tip).
fn typo_check(args: &[std::ffi::OsString]) -> Result<(), clap::Error> {
    use clap::error::{ContextKind, ErrorKind};
    let Some(first) = args.get(1).and_then(|a| a.to_str()) else {
        return Ok(());
    };
    let full = command();
    if first.starts_with('-')
        || std::path::Path::new(first).exists()
        || full.find_subcommand(first).is_some()
    {
        return Ok(());
    }
    let commands_only = clap::Command::new("iosim").subcommands(full.get_subcommands().cloned());
    match commands_only.try_get_matches_from(&args[..2]) {
        Err(e)
            if e.kind() == ErrorKind::InvalidSubcommand
                && e.get(ContextKind::SuggestedSubcommand).is_some() =>
        {
            Err(e)
        }
        _ => Ok(()),
    }
}

/// Commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The default benchmark: sequential 1 MiB read/write, random 4 KiB read/write, 4 KiB QD1 latency.
    Quick(QuickArgs),
    /// Run one workload against one or more files or block devices.
    Run(RunArgs),
    /// Is this storage fit for a database? Every stage in one time budget, one verdict per role.
    Qualify(QualifyArgs),
    /// Create a test file (preallocated, filled with random data) without running anything.
    Create(CreateArgs),
    /// Run a SQLIO 1.5 command line and print SQLIO's output (docs/sqlio.md).
    Sqlio(CompatArgs),
    /// Run a DiskSpd command line and print DiskSpd's report (docs/diskspd.md).
    Diskspd(CompatArgs),
    /// Print the native `iosim run` command for a SQLIO, DiskSpd or fio command line (or fio job file).
    Translate(CompatArgs),
    /// List stored runs (filters: target, device, profile, label, date).
    History(HistoryArgs),
    /// Reprint a stored run in any output format.
    Show(ShowArgs),
    /// Compare stored runs side by side, with Welch's t-test on repetitions.
    Compare(CompareArgs),
    /// Write an HTML report with charts (or one chart as SVG/PNG).
    Report(ReportArgs),
    /// Simulate a database engine's I/O (SQLIOSim) and verify every page read back.
    Sim(SimArgs),
    /// Vary qd, threads, bs, write-pct or rw; repeat; find the knee and the best setting.
    Sweep(SweepArgs),
    /// List or print the database workload profiles (run one with iosim run --profile NAME).
    Profile(ProfileArgs),
    /// ORION-style matrix: small random and large sequential I/O at increasing loads, alone and combined.
    Matrix(MatrixArgs),
    /// Bring a target to steady state (SNIA PTS): write it twice sequentially, then random writes until steady.
    Precondition(PreconditionArgs),
    /// Crash consistency: write with acknowledgements, cut the power, verify (docs/crash.md).
    Crash(crash::CrashArgs),
    /// Replay a captured block trace (blktrace, blkparse text, fio iolog) onto a file or device (docs/workloads.md).
    Replay(replay::ReplayArgs),
    /// Record a block device's I/O as blktrace files for iosim replay (docs/workloads.md).
    Capture(capture::CaptureArgs),
    /// A captured trace's statistics per layer and stream, a profile that reproduces them, or two compared (docs/fingerprint.md).
    Fingerprint(fingerprint::FingerprintArgs),
    /// How fast each sync method makes a WAL write durable (pg_test_fsync's tests), with advice for PostgreSQL and MySQL (docs/fsync.md).
    Fsync(FsyncArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell; docs/install.md).
    Completions(install::CompletionsArgs),
    /// Write one man page per command into a directory (docs/install.md).
    Manpages(install::ManpagesArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::CacheMode;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).unwrap()
    }

    #[test]
    fn no_arguments_is_quick() {
        let c = parse(&["iosim"]);
        assert!(c.command.is_none());
        assert_eq!(c.quick.size, 1 << 30);
    }

    #[test]
    fn run_builds_a_spec() {
        let c = parse(&[
            "iosim",
            "run",
            "/tmp/a",
            "/tmp/b",
            "--rw",
            "randrw",
            "--write-pct",
            "30",
            "--bs",
            "8K",
            "--qd",
            "16",
            "--threads",
            "4",
            "--size",
            "2G",
            "--cache",
            "direct-writethrough",
            "--cpus",
            "0-1",
        ]);
        let Some(Command::Run(r)) = c.command else {
            panic!()
        };
        let s = r.to_spec().unwrap();
        assert_eq!(s.targets.len(), 2);
        assert_eq!(s.write_pct, 30);
        assert_eq!(s.bs, 8192);
        assert_eq!(s.qd, 16);
        assert_eq!(s.threads, 4);
        assert_eq!(s.targets[1].size, Some(2 << 30));
        assert_eq!(s.cache, CacheMode::DirectWritethrough);
        assert_eq!(s.cpus, vec![0, 1]);
    }

    #[test]
    fn write_pct_needs_a_mix() {
        let c = parse(&[
            "iosim",
            "run",
            "/tmp/a",
            "--rw",
            "randread",
            "--write-pct",
            "30",
        ]);
        let Some(Command::Run(r)) = c.command else {
            panic!()
        };
        assert!(r.to_spec().unwrap_err().to_string().contains("randrw"));
    }

    #[test]
    fn explicit_options_are_known_from_their_source() {
        let c = Cli::try_parse_args(["iosim", "run", "/x", "--bs", "4K", "--qd", "1"]).unwrap();
        let Some(Command::Run(r)) = c.command else {
            panic!()
        };
        // Equal to the defaults, but given: a profile must refuse them.
        assert_eq!(r.conflicting_options(), vec!["--bs", "--qd"]);
        let c =
            Cli::try_parse_args(["iosim", "run", "/x", "--profile", "oltp", "-d", "2s"]).unwrap();
        let Some(Command::Run(r)) = c.command else {
            panic!()
        };
        assert!(r.conflicting_options().is_empty());
    }

    #[test]
    fn run_defaults_are_the_workload_defaults() {
        // One set of defaults: `iosim run X` with no options is WorkloadSpec::default().
        let Some(Command::Run(r)) = parse(&["iosim", "run", "/x"]).command else {
            panic!()
        };
        let mut spec = r.to_spec().unwrap();
        spec.targets.clear();
        assert_eq!(spec, crate::workload::WorkloadSpec::default());
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(Cli::try_parse_from(["iosim", "run", "x", "--bs", "4Q"]).is_err());
        // A typo of a command gets clap's "did you mean"; a plain new
        // directory name is still the default benchmark's DIR.
        let e = Cli::try_parse_args(["iosim", "runn", "x.dat"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidSubcommand);
        let tip = e.get(clap::error::ContextKind::SuggestedSubcommand);
        assert!(tip.is_some_and(|v| v.to_string().contains("run")), "{e}");
        // Too far from any command for clap to name one, but still refused.
        let e = Cli::try_parse_args(["iosim", "rn", "x.dat"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidSubcommand);
        assert!(Cli::try_parse_args(["iosim", "/no/such/dir-xyz"]).is_ok());
        assert!(Cli::try_parse_from(["iosim", "run", "x", "--frobnicate"]).is_err());
        assert!(Cli::try_parse_from(["iosim", "run", "x", "--duration", "forever"]).is_err());
    }

    /// Every option that takes a duration says which units it accepts, in
    /// every command down to the nested ones (`crash write`).
    #[test]
    fn every_duration_option_documents_its_units() {
        fn walk(cmd: &clap::Command, path: &str, found: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                if a.get_value_parser().type_id() == std::any::TypeId::of::<std::time::Duration>() {
                    let name = format!("{path} --{}", a.get_id());
                    for h in [a.get_help(), a.get_long_help()].into_iter().flatten() {
                        assert!(
                            h.to_string().contains(values::DURATION_UNITS),
                            "{name}: {h}"
                        );
                    }
                    assert!(a.get_help().is_some(), "{name}");
                    found.push(name);
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), found);
            }
        }
        let mut found = Vec::new();
        walk(&command(), "iosim", &mut found);
        for want in [
            "iosim --duration",
            "iosim run --duration",
            "iosim run --think",
            "iosim qualify --time",
            "iosim sim --duration",
            "iosim crash write --duration",
        ] {
            assert!(found.iter().any(|f| f == want), "{want} not in {found:?}");
        }
        // And the units said are the ones parsed.
        for (text, secs) in [
            ("500ms", 0.5),
            ("90s", 90.0),
            ("5min", 300.0),
            ("2h", 7200.0),
            ("7", 7.0),
        ] {
            assert_eq!(values::duration_arg(text).unwrap().as_secs_f64(), secs);
        }
    }
}
