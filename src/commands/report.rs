//! `iosim report`: the HTML report, or one chart as SVG or PNG.

use super::Ctx;
use crate::cli::report::ReportFormat;
use crate::cli::{OutputFormat, ReportArgs};
use crate::html::{charts, entries, html, png};
use crate::outcome::Outcome;
use crate::outfile::{self, Existing};
use crate::store::StoredRun;

/// `iosim report`.
pub fn run(a: &ReportArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    if let Some(p) = &a.hist_log {
        if a.output != ReportFormat::Html {
            anyhow::bail!("iosim report --hist-log writes HTML: leave out -o (or use iosim show --hist-log FILE -o json)");
        }
        let page = crate::html::hist_log_html(&crate::histlog::read(p)?.summary);
        return write_page(a, ctx, &page);
    }
    let store = a.db.open_existing()?;
    let mut runs: Vec<StoredRun> = Vec::new();
    for r in &a.runs {
        for run in store.resolve(r)? {
            if !runs.iter().any(|x| x.row.id == run.row.id) {
                runs.push(run);
            }
        }
    }
    if a.svg.is_some() || a.png.is_some() {
        let typed = crate::html::kinds::typed(&runs);
        let es = entries(&typed);
        let doc_sweeps = crate::html::document_sweeps(&typed, es.len());
        let cs = charts(
            &es,
            doc_sweeps,
            a.width as f64,
            a.height as f64,
            crate::html::LegendPlace::InChart,
        );
        let Some(svg) = cs.iter().find(|c| c.id == a.chart).map(|c| &c.svg) else {
            let have: Vec<&str> = cs.iter().map(|c| c.id.as_str()).collect();
            anyhow::bail!(
                "no '{}' chart for these runs: choose --chart from {}",
                a.chart,
                if have.is_empty() {
                    "(none: these runs hold no run results)".to_string()
                } else {
                    have.join(", ")
                }
            );
        };
        let doc = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{svg}\n");
        if let Some(p) = &a.svg {
            outfile::write(p, "SVG chart", doc.as_bytes(), Existing::Replace)?;
            crate::say!("wrote {} ({} chart)", p.display(), a.chart);
        }
        if let Some(p) = &a.png {
            outfile::write(p, "PNG chart", &png(&doc, 2.0)?, Existing::Replace)?;
            crate::say!("wrote {} ({} chart)", p.display(), a.chart);
        }
    }
    let page = match a.output {
        ReportFormat::Html => html(&runs),
        // The stored documents themselves (with their kind), always an array.
        ReportFormat::Doc(OutputFormat::Json) => {
            let docs: Vec<&serde_json::Value> = runs.iter().map(|r| &r.doc).collect();
            serde_json::to_string_pretty(&docs)? + "\n"
        }
        ReportFormat::Doc(f) => crate::store::render::render_many(&runs, f)?,
    };
    write_page(a, ctx, &page)
}

/// The page to `--out`, or to stdout unless only `--svg`/`--png` were asked for.
fn write_page(a: &ReportArgs, ctx: &mut Ctx, page: &str) -> anyhow::Result<Outcome> {
    match &a.out {
        Some(p) => {
            outfile::write(p, "report", page.as_bytes(), Existing::Replace)?;
            crate::say!("wrote {}", p.display());
        }
        None if a.svg.is_none() && a.png.is_none() => ctx.out.write_all(page.as_bytes())?,
        None => {}
    }
    Ok(Outcome::Success)
}
