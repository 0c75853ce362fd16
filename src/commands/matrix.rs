//! `iosim matrix`: ORION's load matrix.

use std::time::Duration;

use super::finish::{finish, Ending, OutFile};
use super::Ctx;
use crate::cli::{MatrixArgs, OutputFormat};
use crate::document::{Document, Headed, Header};
use crate::matrix::{self, grid_csv, output_path, summary_text, Metric};
use crate::outcome::Outcome;

/// Runs the matrix, writes ORION's files, prints the summary, saves it.
pub fn run(a: &MatrixArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let opts = ctx.run_options(&a.output, Duration::from_secs(1));
    let quiet = a.output.quiet;
    let header = Header::now();
    let r = matrix::run(&a.to_config(), &opts, |i, n, p| {
        if quiet {
            return;
        }
        let mut line = format!("point {}/{}: small={} large={}", i + 1, n, p.small, p.large);
        if let (Some(iops), Some(lat)) = (p.small_iops, p.small_mean_us) {
            line.push_str(&format!("  small {iops:.0} IOPS {lat:.1} us"));
        }
        if let Some(m) = p.large_mib_s {
            line.push_str(&format!("  large {m:.2} MiB/s"));
        }
        crate::say!("{line}");
    })?;
    let files = [
        ("iops.csv", grid_csv(&r, Metric::SmallIops)),
        ("mbps.csv", grid_csv(&r, Metric::LargeMbps)),
        ("lat.csv", grid_csv(&r, Metric::SmallLatency)),
        ("summary.txt", summary_text(&r)),
    ];
    let outcome = Outcome::of_run(r.interrupted, r.points.iter().map(|p| p.errors).sum());
    let mut end = Ending::new(a.output.output, outcome, Some(&a.save));
    // ORION's files, the printed summary and the saved result are independent:
    // a failure of one (a full disk, a closed pipe) does not lose the others.
    end.files = files
        .into_iter()
        .map(|(name, text)| OutFile::new(output_path(&a.out, name), "matrix file", text))
        .collect();
    if a.output.output == OutputFormat::Text {
        end.trailer = format!(
            "Wrote {}_{{iops,mbps,lat}}.csv and {}_summary.txt\n",
            a.out.display(),
            a.out.display()
        );
    }
    finish(Document::Matrix(Headed::new(header, r)), ctx, end)
}
