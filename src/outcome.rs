//! How a command ended, and the one table that maps each ending to the
//! process exit status (documented in the README).

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It did what was asked.
    Success,
    /// An error stopped it; the message on stderr says what to do next.
    Failed,
    /// The command line was not understood (clap prints the usage).
    Usage,
    /// A run completed but saw I/O errors.
    IoErrors,
    /// `--baseline` (or `compare --threshold`) found a regression beyond `--threshold`.
    Regressed,
    /// A check could not judge all it was given and found no failure in the
    /// rest (`crash verify` with a damaged acknowledgement log): not a pass.
    Incomplete,
    /// Ctrl-C or SIGTERM stopped it; what was measured was still printed.
    Interrupted,
    /// The reader of stdout went away (`| head`): output stopped quietly,
    /// and a measured result was still saved to the history.
    ReaderGone,
}

/// Every outcome with its exit status and meaning: the only place exit codes are defined.
pub const EXIT_CODES: [(Outcome, u8, &str); 8] = [
    (Outcome::Success, 0, "success"),
    (
        Outcome::Failed,
        1,
        "error: the message on stderr says what to do next",
    ),
    (Outcome::Usage, 2, "the command line was not understood"),
    (Outcome::IoErrors, 3, "the run completed but saw I/O errors"),
    (
        Outcome::Regressed,
        4,
        "--baseline (run, sweep, qualify) or compare --threshold found a regression beyond the threshold",
    ),
    (
        Outcome::Incomplete,
        5,
        "incomplete: part of what was to be checked could not be judged (crash verify: a damaged acknowledgement log) and the rest passed",
    ),
    (
        Outcome::Interrupted,
        130,
        "interrupted by Ctrl-C or SIGTERM (results so far were printed)",
    ),
    (
        Outcome::ReaderGone,
        141,
        "stdout or stderr was closed early (| head): output stopped quietly, as a tool killed by SIGPIPE",
    ),
];

/// True when `e` (or an error it wraps) is a write to a pipe whose reader went away.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

impl Outcome {
    /// The process exit status.
    pub fn code(self) -> u8 {
        EXIT_CODES
            .iter()
            .find(|(o, _, _)| *o == self)
            .map(|(_, c, _)| *c)
            .expect("every outcome is in EXIT_CODES")
    }

    /// The outcome of a measurement checked against `--baseline`:
    /// interrupted beats I/O errors beats a regression beats success.
    pub fn of_checked_run(interrupted: bool, errors: u64, regressed: bool) -> Outcome {
        match Outcome::of_run(interrupted, errors) {
            Outcome::Success if regressed => Outcome::Regressed,
            o => o,
        }
    }

    /// The outcome of a measurement: interrupted beats I/O errors beats success.
    pub fn of_run(interrupted: bool, errors: u64) -> Outcome {
        if interrupted {
            Outcome::Interrupted
        } else if errors > 0 {
            Outcome::IoErrors
        } else {
            Outcome::Success
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_has_one_distinct_code() {
        let codes: Vec<u8> = EXIT_CODES.iter().map(|e| e.1).collect();
        let mut uniq = codes.clone();
        uniq.sort_unstable();
        uniq.dedup();
        assert_eq!(uniq.len(), codes.len());
        assert_eq!(Outcome::Interrupted.code(), 130);
        assert_eq!(Outcome::of_run(true, 5), Outcome::Interrupted);
        assert_eq!(Outcome::of_run(false, 5).code(), 3);
        assert_eq!(Outcome::of_run(false, 0), Outcome::Success);
        assert_eq!(Outcome::of_checked_run(false, 0, true).code(), 4);
        assert_eq!(Outcome::of_checked_run(false, 2, true).code(), 3);
        assert_eq!(Outcome::of_checked_run(true, 0, true).code(), 130);
        assert_eq!(Outcome::of_checked_run(false, 0, false).code(), 0);
        let pipe = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&pipe.context("writing the report")));
        assert!(!is_broken_pipe(&anyhow::anyhow!("broken pipe")));
        for (o, c, _) in EXIT_CODES {
            assert_eq!(o.code(), c);
        }
    }
}
