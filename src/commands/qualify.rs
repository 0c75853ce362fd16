//! `iosim qualify`: every stage in one time budget, one verdict per role.

use std::time::Duration;

use super::{run_options, save, Ctx};
use crate::cli::{OutputFormat, QualifyArgs};
use crate::outcome::Outcome;
use crate::qualify::{self, RoleArg};
use crate::verdict::Role;

/// Resolves the baseline, runs the qualification, prints, writes the HTML, saves.
pub fn run(a: &QualifyArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if a.out.output == OutputFormat::Csv {
        anyhow::bail!("iosim qualify prints text or json: use -o text or -o json (and --html FILE for the report)");
    }
    if a.time < Duration::from_secs(10) {
        anyhow::bail!(
            "--time {}: give the qualification at least 10s (10m, 30m or 2h are the usual budgets)",
            crate::units::format_duration_arg(a.time)
        );
    }
    // The baseline first: a missing one fails before anything is measured.
    let baseline = match &a.baseline {
        Some(r) => Some(qualify::resolve_baseline(&a.save.db.open_existing()?, r)?),
        None => None,
    };
    if let Some(p) = &a.html {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                return Err(crate::Error::MissingDirectory(dir.to_path_buf()).into());
            }
        }
    }
    let mut roles = vec![RoleArg {
        role: Role::Data,
        path: a.data.clone(),
    }];
    for (role, p) in [
        (Role::Log, &a.log),
        (Role::Tempdb, &a.tempdb),
        (Role::Backup, &a.backup),
    ] {
        if let Some(p) = p {
            roles.push(RoleArg {
                role,
                path: p.clone(),
            });
        }
    }
    let opts = run_options(&a.out, ctx.stop.clone(), Duration::from_secs(1));
    let cfg = qualify::QualifyConfig {
        roles,
        time: a.time,
        size: a.size,
        engine: a.engine,
        allow_destroy: a.allow_destroy,
        keep_files: a.keep_files,
        progress: !a.out.quiet,
    };
    let mut res = qualify::run(&cfg, &opts)?;
    if let Some((id, then)) = &baseline {
        res.baseline = Some(qualify::compare(*id, then, &res));
    }
    let text = match a.out.output {
        OutputFormat::Json => serde_json::to_string_pretty(&res)? + "\n",
        _ => qualify::render::text(&res),
    };
    let printed = ctx.out.write_all(text.as_bytes());
    let html = match &a.html {
        Some(p) => std::fs::write(p, qualify::render::html(&res))
            .map(|()| {
                if !a.out.quiet {
                    eprintln!("HTML report written to {}", p.display());
                }
            })
            .map_err(|e| anyhow::anyhow!("cannot write the HTML report '{}': {e}", p.display())),
        None => Ok(()),
    };
    save::save_result(&a.save, "qualify", &serde_json::to_value(&res)?);
    html?;
    printed?;
    let errors: u64 = res.sim.as_ref().map_or(0, |s| s.errors)
        + res
            .verdicts
            .iter()
            .flat_map(|v| &v.reasons)
            .filter(|r| r.rule == "io-errors")
            .count() as u64;
    Ok(Outcome::of_run(res.interrupted, errors))
}
