//! `iosim fingerprint TRACE...` and `iosim fingerprint --compare A B`.

use super::Ctx;
use crate::cli::fingerprint::FingerprintArgs;
use crate::fingerprint::{
    compare, profile_out, render, FileMap, FingerprintError, Region, StreamMap,
};
use crate::outcome::Outcome;
use crate::outfile::{self, Existing};

/// Fingerprints the traces (or compares two), prints, and writes `--out`.
pub fn run(a: &FingerprintArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let regions = a.regions();
    Region::check_all(&regions)?;
    let file_map = a.file_map.as_deref().map(FileMap::load).transpose()?;
    let map = StreamMap::new(&regions, file_map.as_ref());
    if let Some(pair) = &a.compare {
        let fa = compare::load(&pair[0], &map)?;
        let fb = compare::load(&pair[1], &map)?;
        let c = compare::compare(&fa, &fb);
        let text = if a.json {
            serde_json::to_string_pretty(&c)? + "\n"
        } else {
            compare::text(&c)
        };
        ctx.out.write_all(text.as_bytes())?;
        return Ok(Outcome::Success);
    }
    if a.out.is_some() && a.traces.len() != 1 {
        anyhow::bail!(
            "--out writes the profile of one trace, and {} are given: fingerprint them one at a time",
            a.traces.len()
        );
    }
    let prints = a
        .traces
        .iter()
        .map(|t| crate::fingerprint::of_trace(t, &map))
        .collect::<Result<Vec<_>, _>>()?;
    let text = if a.json {
        if prints.len() == 1 {
            serde_json::to_string_pretty(&prints[0])? + "\n"
        } else {
            serde_json::to_string_pretty(&prints)? + "\n"
        }
    } else {
        prints
            .iter()
            .map(render::text)
            .collect::<Vec<_>>()
            .join("\n")
    };
    ctx.out.write_all(text.as_bytes())?;
    if let (Some(path), Some(f)) = (&a.out, prints.first()) {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or("fingerprint");
        let toml = profile_out::profile_toml(f, name, a.dbms);
        crate::profile::Profile::parse(&toml, "written")
            .map_err(|e| FingerprintError::BadProfile(e.to_string()))?;
        outfile::write(path, "profile", toml.as_bytes(), Existing::Replace)?;
        crate::say!(
            "iosim: wrote the profile {} (run it: iosim run --profile {} PATH --size SIZE)",
            path.display(),
            path.display()
        );
    }
    Ok(Outcome::Success)
}
