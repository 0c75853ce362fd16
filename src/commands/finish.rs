//! How every command that made a result document ends: [`finish`] prints it,
//! writes the files beside it, applies `--baseline`, saves it and maps the
//! outcome, in that order, and the same way for every kind.

use std::path::PathBuf;

use super::save::{self, Baseline};
use super::Ctx;
use crate::cli::{OutputFormat, SaveArgs};
use crate::document::Document;
use crate::outcome::Outcome;
use crate::outfile::{self, Existing};

/// A file written beside the printed output (a CSV table, a time series, an
/// HTML report, ORION's files).
pub struct OutFile {
    /// Where.
    pub path: PathBuf,
    /// What it is, for an error message ("CSV table").
    pub what: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Said on stderr once it is written, if anything.
    pub said: Option<String>,
}

impl OutFile {
    /// `bytes` to `path`, said nowhere.
    pub fn new(path: PathBuf, what: &'static str, bytes: impl Into<Vec<u8>>) -> OutFile {
        OutFile {
            path,
            what,
            bytes: bytes.into(),
            said: None,
        }
    }
}

/// What a command tells [`finish`] besides the document.
pub struct Ending<'a> {
    /// The output format (`-o`).
    pub format: OutputFormat,
    /// How the measurement itself ended (`Outcome::of_run(interrupted,
    /// errors)`, or a check's verdict), before any regression.
    pub outcome: Outcome,
    /// Where the document is stored (None: never, e.g. `compare`).
    pub save: Option<&'a SaveArgs>,
    /// `--baseline`, resolved before the measurement.
    pub baseline: Option<&'a Baseline>,
    /// A regression the command found itself (qualify's baseline, compare's
    /// threshold).
    pub regressed: bool,
    /// Printed after the rendered document.
    pub trailer: String,
    /// The beginning of the rendered document that the command printed
    /// itself while it ran, which is not printed again: SQLIO's header and
    /// its files' preparation, which `iosim sqlio` prints as they happen
    /// (the front end's text is those lines, then the results, by
    /// construction). Empty for every other command.
    pub streamed: String,
    /// Files written beside the output.
    pub files: Vec<OutFile>,
    /// Said on stderr once the document is printed.
    pub notes: Vec<String>,
}

impl<'a> Ending<'a> {
    /// A measurement that ended as `outcome`, printed as `format`, stored
    /// by `save`; nothing else.
    pub fn new(format: OutputFormat, outcome: Outcome, save: Option<&'a SaveArgs>) -> Ending<'a> {
        Ending {
            format,
            outcome,
            save,
            baseline: None,
            regressed: false,
            trailer: String::new(),
            streamed: String::new(),
            files: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// Ends a command with its document: prints it to `ctx.out` (rendered in
/// `end.format`, less the `end.streamed` beginning the command printed as
/// it ran), writes `end.files`, checks `end.baseline`, saves it and
/// returns the outcome: interrupted beats I/O errors beats a regression
/// beats success.
///
/// Nothing lost on the way: a reader that went away (`| head`) or a file
/// that cannot be written does not keep the others from being written nor
/// the result from being saved; the first of those errors is returned after.
///
/// Under mpirun/srun every rank has the job's result and calls this; rank 0
/// alone prints, writes, checks and saves, and every rank returns the
/// measurement's outcome (rank 0's may add the regression).
pub fn finish(doc: Document, ctx: &mut Ctx, end: Ending) -> anyhow::Result<Outcome> {
    if !ctx.is_root() {
        return Ok(outcome(end.outcome, end.regressed));
    }
    let mut text = crate::document::render(&doc, end.format)?;
    text.push_str(&end.trailer);
    // A beginning that is not the rendering's own (it cannot be) is left
    // alone: the whole document is printed rather than a cut one.
    let rest = text.strip_prefix(end.streamed.as_str()).unwrap_or(&text);
    let printed = ctx
        .out
        .write_all(rest.as_bytes())
        .and_then(|()| ctx.out.flush());
    let mut written = Ok(());
    for f in &end.files {
        match outfile::write(&f.path, f.what, &f.bytes, Existing::Replace) {
            Ok(()) => {
                if let Some(s) = &f.said {
                    crate::say!("{s}");
                }
            }
            Err(e) => {
                if written.is_ok() {
                    written = Err(e);
                }
            }
        }
    }
    for n in &end.notes {
        crate::say!("{n}");
    }
    let regressed = end.baseline.is_some_and(|b| b.check(&doc)) || end.regressed;
    if let Some(s) = end.save {
        save::save_result(s, &doc);
    }
    written?;
    printed?;
    Ok(outcome(end.outcome, regressed))
}

/// A measurement's outcome with a regression: only a success becomes one.
fn outcome(measured: Outcome, regressed: bool) -> Outcome {
    match measured {
        Outcome::Success if regressed => Outcome::Regressed,
        o => o,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use super::*;
    use crate::cli::{BaselineArgs, DbArgs};
    use crate::document::{Headed, Header};

    /// A sweep of one point (`qd=1`) at `iops`.
    fn sweep(iops: f64) -> Document {
        let stat = |mean: f64| serde_json::json!({"mean": mean, "sd": 0.0, "ci95": 0.0, "cv": 0.0, "n": 3});
        let body = serde_json::json!({
            "study": null,
            "base": crate::workload::WorkloadSpec::default(),
            "axes": [],
            "combine": crate::sweep::Combine::Grid,
            "repeat": 3,
            "points": [{
                "params": {"qd": "1"},
                "outstanding": 1,
                "iops": stat(iops),
                "mib_per_sec": stat(iops / 256.0),
                "lat_mean_us": stat(1e6 / iops),
                "lat_p99_us": stat(2e6 / iops),
                "lat_max_us": stat(4e6 / iops),
                "cpu_bound_runs": 0,
                "max_core_busy_pct": 10.0,
                "noisy": false,
                "suggested_repeats": null,
                "warnings": [],
            }],
            "knee": null,
            "max_latency_us": null,
            "latency_metric": "mean",
            "recommended": null,
            "findings": [],
            "interrupted": false,
        });
        Document::Sweep(Headed::new(
            Header::now(),
            serde_json::from_value(body).expect("a sweep result"),
        ))
    }

    /// The sweep's tail once dropped the baseline check's result: a sweep
    /// that regressed against its baseline ended 0. Every command's tail
    /// is this one now.
    #[test]
    fn a_sweep_that_regresses_against_its_baseline_ends_regressed() {
        let dir = tempfile::tempdir().unwrap();
        let save = SaveArgs {
            db: DbArgs {
                db: Some(dir.path().join("h.db")),
            },
            no_save: false,
            label: Some("fast".into()),
        };
        save::save_result(&save, &sweep(100_000.0));
        let guard = BaselineArgs {
            baseline: Some("label:fast".into()),
            threshold: 5.0,
        };
        let baseline = Baseline::resolve_sweep(&save.db, &guard, true)
            .unwrap()
            .expect("a baseline");
        let mut out = Vec::new();
        let mut ctx = Ctx::new(Arc::new(AtomicBool::new(false)), &mut out);
        let end = |b| Ending {
            baseline: Some(b),
            ..Ending::new(OutputFormat::Json, Outcome::Success, None)
        };
        let slower = finish(sweep(1_000.0), &mut ctx, end(&baseline)).unwrap();
        assert_eq!(slower, Outcome::Regressed);
        assert_eq!(Outcome::Regressed.code(), 4);
        let same = finish(sweep(100_000.0), &mut ctx, end(&baseline)).unwrap();
        assert_eq!(same, Outcome::Success);
        // Interrupted and I/O errors come first; the sweep was printed each time.
        let interrupted = Ending::new(OutputFormat::Json, Outcome::Interrupted, None);
        let o = finish(
            sweep(1_000.0),
            &mut ctx,
            Ending {
                baseline: Some(&baseline),
                ..interrupted
            },
        );
        assert_eq!(o.unwrap(), Outcome::Interrupted);
        drop(ctx);
        assert_eq!(
            String::from_utf8(out)
                .unwrap()
                .matches("\"kind\": \"sweep\"")
                .count(),
            3
        );
        // Under mpirun/srun rank 0 alone checks: without a baseline, no regression.
        assert_eq!(outcome(Outcome::Success, false), Outcome::Success);
        assert_eq!(outcome(Outcome::IoErrors, true), Outcome::IoErrors);
    }

    /// A command that printed the beginning of its document while it ran
    /// (SQLIO's header and file lines) gets the rest printed, once: the
    /// output is the document's rendering, byte for byte.
    #[test]
    fn what_a_command_streamed_is_not_printed_again() {
        let doc = sweep(1_000.0);
        let whole = crate::document::render(&doc, OutputFormat::Json).unwrap();
        let (head, _) = whole.split_at(40);
        let mut out = head.as_bytes().to_vec();
        let mut ctx = Ctx::new(Arc::new(AtomicBool::new(false)), &mut out);
        let end = Ending {
            streamed: head.to_string(),
            ..Ending::new(OutputFormat::Json, Outcome::Success, None)
        };
        assert_eq!(finish(doc, &mut ctx, end).unwrap(), Outcome::Success);
        drop(ctx);
        assert_eq!(String::from_utf8(out).unwrap(), whole);
    }
}
