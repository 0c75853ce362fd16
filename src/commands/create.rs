//! `iosim create`: a test file, nothing run.

use std::io::IsTerminal;

use super::Ctx;
use crate::cli::CreateArgs;
use crate::outcome::Outcome;

/// Creates the file; the summary goes to stderr.
pub fn run(c: &CreateArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if c.path.exists() {
        anyhow::bail!(
            "'{}' already exists: iosim create only makes new files",
            c.path.display()
        );
    }
    let t0 = std::time::Instant::now();
    let opts = crate::target::PrepareOptions {
        progress: !c.quiet && std::io::stderr().is_terminal(),
        stop: Some(&ctx.stop),
    };
    crate::target::create_test_file(&c.path, c.size, c.fill, opts)?;
    let secs = t0.elapsed().as_secs_f64();
    crate::say!(
        "created {} ({}) in {:.2} s, {:.0} MiB/s",
        c.path.display(),
        crate::units::format_size(c.size),
        secs,
        c.size as f64 / 1_048_576.0 / secs.max(1e-9)
    );
    Ok(Outcome::Success)
}
