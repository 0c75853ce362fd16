//! `iosim fsync`: the sync methods compared, with advice for the databases.

use std::time::Duration;

use super::finish::{finish, Ending};
use super::Ctx;
use crate::cli::FsyncArgs;
use crate::document::{Document, Headed, Header};
use crate::outcome::Outcome;

/// Runs the tests, prints them, saves them; removes the test file it created.
pub fn run(a: &FsyncArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let given = a.path.clone().unwrap_or_else(|| ".".into());
    // A path that does not exist is a new test file only when it looks like
    // one (a name with an extension): `/mnt/dtaa` is a mistyped directory.
    let looks_like_dir =
        given.as_os_str().to_string_lossy().ends_with('/') || given.extension().is_none();
    if !given.exists() && looks_like_dir {
        return Err(crate::Error::FsyncPathMissing(given).into());
    }
    let path = crate::fsync::test_file(&given);
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => {
            return Err(crate::Error::MissingDirectory(dir.to_path_buf()).into())
        }
        _ => {}
    }
    let existed = path.exists();
    let cfg = crate::fsync::FsyncConfig {
        path: path.clone(),
        sizes: a.bs.clone(),
        duration: a.duration,
        allow_destroy: a.allow_destroy,
    };
    let opts = ctx.run_options(&a.out, Duration::from_secs(1));
    let header = Header::now();
    let res = crate::fsync::run(&cfg, &opts);
    // The file is iosim's own when it did not exist before: remove it, also after a failure.
    let remove = !existed && !a.keep_file;
    if remove {
        let _ = crate::targetlock::remove_file(&path);
    }
    let res = res?;
    let errors = res
        .tests
        .iter()
        .filter_map(|t| t.result.as_ref())
        .map(|r| r.errors.count)
        .sum();
    let mut end = Ending::new(
        a.out.output,
        Outcome::of_run(res.interrupted, errors),
        Some(&a.save),
    );
    if a.out.output == crate::cli::OutputFormat::Text && !remove {
        end.notes
            .push(format!("(test file kept: {})", path.display()));
    }
    finish(Document::Fsync(Headed::new(header, res)), ctx, end)
}
