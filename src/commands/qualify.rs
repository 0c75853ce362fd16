//! `iosim qualify`: every stage in one time budget, one verdict per role.

use std::time::Duration;

use super::finish::{finish, Ending, OutFile};
use super::Ctx;
use crate::cli::QualifyArgs;
use crate::dbms::Dbms;
use crate::document::{Document, Headed, Header, Kind};
use crate::outcome::Outcome;
use crate::qualify::{self, QualifyResult, RoleArg};
use crate::verdict::Role;

/// A stored qualification: its id, when it started, its body.
type Stored = (i64, String, QualifyResult);

/// Resolves `--baseline` (a run id or `latest`) to a stored qualification.
fn resolve_baseline(a: &QualifyArgs, reference: &str) -> anyhow::Result<Stored> {
    let store = a.save.db.open_existing()?;
    let run = if reference == "latest" || reference == "last" {
        let rows = store.list(&crate::store::Filter {
            kind: Some(Kind::Qualify),
            limit: 1,
            ..Default::default()
        })?;
        let Some(row) = rows.first() else {
            anyhow::bail!(
                "--baseline {reference}: no qualification is stored in {} yet: run iosim qualify without --baseline first",
                store.path().display()
            );
        };
        store.get(row.id)?
    } else {
        let mut runs = store.resolve(reference)?;
        if runs.len() != 1 {
            anyhow::bail!(
                "--baseline {reference} names {} runs: give one qualification's id (iosim history --kind qualify)",
                runs.len()
            );
        }
        runs.remove(0)
    };
    let id = run.row.id;
    match Document::from_value(run.doc) {
        Ok(Document::Qualify(h)) => Ok((id, h.header.started_at, h.body)),
        Ok(other) => anyhow::bail!(
            "--baseline {reference}: run {id} is a '{}' result, not a qualification: pick one from iosim history --kind qualify",
            other.kind()
        ),
        Err(e) => anyhow::bail!(
            "--baseline {reference}: run {id} cannot be read as a qualification ({e})"
        ),
    }
}

/// Resolves the baseline, runs the qualification, prints, writes the HTML, saves.
pub fn run(a: &QualifyArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if a.time < Duration::from_secs(10) {
        anyhow::bail!(
            "--time {}: give the qualification at least 10s (10m, 30m or 2h are the usual budgets)",
            crate::units::format_duration_arg(a.time)
        );
    }
    let cfg = config(a)?;
    if a.plan {
        // Nothing is created, measured or saved; rank 0 alone prints under a launcher.
        let text = qualify::render::plan_text(&cfg)?;
        if ctx.is_root() {
            write!(ctx.out, "{text}")?;
        }
        return Ok(Outcome::Success);
    }
    // The baseline first: a missing one fails before anything is measured.
    let baseline = baseline(a, cfg.dbms)?;
    check_html(a)?;
    let served = a.metrics.serve("qualify", a.out.quiet)?;
    let mut opts = ctx.run_options(&a.out, Duration::from_secs(1));
    opts.metrics = served.as_ref().map(crate::metrics::Server::live);
    let header = Header::now();
    let mut res = qualify::run(&cfg, &opts)?;
    if let Some((id, started_at, then)) = &baseline {
        let b = qualify::compare::compare(*id, started_at, then, None, &res, Some(a.threshold));
        // On stderr too, as `run --baseline` says it, whatever the output format.
        for r in &b.regressions {
            crate::say!("REGRESSION: {r}");
        }
        if b.regressions.is_empty() {
            crate::say!(
                "baseline check passed against qualification {id}: no role's verdict got worse, no IOPS or mean latency worse by more than {}%",
                a.threshold
            );
        }
        res.baseline = Some(b);
    }
    let regressed = res
        .baseline
        .as_ref()
        .is_some_and(|b| !b.regressions.is_empty());
    let errors: u64 = res.sim.as_ref().map_or(0, |s| s.errors)
        + res
            .verdicts
            .iter()
            .flat_map(|v| &v.reasons)
            .filter(|r| r.rule == crate::qualify::rules::RuleId::IoErrors)
            .count() as u64;
    let mut end = Ending::new(
        a.out.output,
        Outcome::of_run(res.interrupted, errors),
        Some(&a.save),
    );
    end.regressed = regressed;
    if let Some(p) = &a.html {
        end.files.push(OutFile {
            said: (!a.out.quiet).then(|| format!("HTML report written to {}", p.display())),
            ..OutFile::new(
                p.clone(),
                "HTML report",
                crate::html::qualify::html(&header, &res),
            )
        });
    }
    finish(Document::Qualify(Headed::new(header, res)), ctx, end)
}

/// The database a qualification is for: `--dbms`, else the first
/// `--profile`'s, else SQL Server.
fn dbms(a: &QualifyArgs) -> anyhow::Result<Dbms> {
    if let Some(d) = a.dbms {
        return Ok(d);
    }
    match a.profile.first() {
        Some(p) => Ok(crate::profile::Profile::load(p)
            .map_err(|e| anyhow::anyhow!("--profile {p}: {e:#}"))?
            .dbms),
        None => Ok(Dbms::SQLSERVER),
    }
}

/// The qualification the arguments ask for.
fn config(a: &QualifyArgs) -> anyhow::Result<qualify::QualifyConfig> {
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
    Ok(qualify::QualifyConfig {
        roles,
        time: a.time,
        size: a.size,
        engine: a.engine,
        allow_destroy: a.allow_destroy,
        keep_files: a.keep_files,
        progress: !a.out.quiet,
        rules: a.rules,
        cache_size: a.cache_size,
        dbms: dbms(a)?,
        profiles: a.profile.clone(),
        db_cache: a.db_cache,
        commit_rate: a.commit_rate,
        clients: a.clients,
        neighbour: a.neighbour.clone(),
    })
}

/// Resolves `--baseline`, refusing one qualified for another database.
fn baseline(a: &QualifyArgs, dbms: Dbms) -> anyhow::Result<Option<Stored>> {
    let baseline = match &a.baseline {
        Some(r) => Some(resolve_baseline(a, r)?),
        None => None,
    };
    if let Some((id, _, then)) = &baseline {
        if then.dbms != dbms {
            anyhow::bail!(
                "--baseline {id} qualified this storage for {} and this qualification is for {}: their workloads and rules differ; compare with a qualification for {} (iosim history --kind qualify)",
                then.dbms.title(),
                dbms.title(),
                dbms.title()
            );
        }
    }
    Ok(baseline)
}

/// `--html`: its folder must exist, and a file there iosim did not write is refused.
fn check_html(a: &QualifyArgs) -> anyhow::Result<()> {
    if let Some(p) = &a.html {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                return Err(crate::Error::MissingDirectory(dir.to_path_buf()).into());
            }
        }
        // A file there that iosim did not write is refused now, not after the run.
        crate::outfile::check(p, "HTML report")?;
    }
    Ok(())
}
