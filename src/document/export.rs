//! One rendering trait over [`Document`]: each output format is an
//! [`Exporter`] (in the spirit of hyperfine's exporters), and every command,
//! `show` and the history use the same ones, so a stored result prints
//! exactly as the command that measured it printed it.

use super::Document;
use crate::report::OutputFormat;

/// Turns a document into the bytes of one output format.
pub trait Exporter {
    /// The document in this format (ends with a newline).
    fn export(&self, doc: &Document) -> anyhow::Result<String>;
}

/// The readable report each command prints by default.
pub struct TextExporter;
/// The versioned JSON document (docs/json-schema.md).
pub struct JsonExporter;
/// CSV rows (one per target, test, point, workload or measurement of a qualification).
pub struct CsvExporter;

/// The exporter of an output format.
pub fn exporter(f: OutputFormat) -> &'static dyn Exporter {
    match f {
        OutputFormat::Text => &TextExporter,
        OutputFormat::Json => &JsonExporter,
        OutputFormat::Csv => &CsvExporter,
    }
}

/// Renders a document in a format.
pub fn render(doc: &Document, f: OutputFormat) -> anyhow::Result<String> {
    exporter(f).export(doc)
}

impl Exporter for TextExporter {
    fn export(&self, doc: &Document) -> anyhow::Result<String> {
        let mut text = match doc {
            // `iosim sqlio`/`iosim diskspd`: their own output, as printed.
            Document::Run(r) => match &r.body.front_end {
                Some(f) => f.text(&r.body.result),
                None => crate::report::text(&r.body.result),
            },
            Document::Quick(q) => crate::quick::table(&q.body),
            Document::Sweep(s) => crate::sweep::text(&s.body),
            Document::Profile(p) => crate::profile::text(&p.body),
            Document::Matrix(m) => crate::matrix::summary_text(&m.body),
            Document::Sim(s) => crate::sim::summary::text(&s.body),
            Document::Compare(c) => super::compare::text(&c.body),
            Document::Qualify(q) => crate::qualify::render::text(&q.body),
            Document::Replay(r) => r.body.text(),
            Document::Crash(c) => crate::crash::check::text(&c.body),
            Document::Fsync(f) => crate::fsync::text(&f.body),
        };
        if let Some(r) = doc.ranks() {
            text.push_str(&r.text());
        }
        Ok(text)
    }
}

impl Exporter for JsonExporter {
    fn export(&self, doc: &Document) -> anyhow::Result<String> {
        Ok(doc.json()? + "\n")
    }
}

impl Exporter for CsvExporter {
    fn export(&self, doc: &Document) -> anyhow::Result<String> {
        Ok(match doc {
            Document::Run(r) => crate::report::csv(&r.body.result),
            Document::Quick(q) => crate::quick::csv(&q.body),
            Document::Sweep(s) => crate::sweep::csv(&s.body),
            Document::Profile(p) => crate::profile::csv(&p.body),
            Document::Matrix(m) => {
                crate::matrix::grid_csv(&m.body, crate::matrix::Metric::SmallIops)
            }
            Document::Replay(r) => r.body.csv(),
            Document::Fsync(f) => crate::fsync::csv(&f.body),
            Document::Qualify(q) => crate::qualify::csv::csv(&q.body),
            Document::Sim(_) | Document::Compare(_) | Document::Crash(_) => {
                anyhow::bail!(
                    "a '{}' result prints as text or JSON: use -o text or -o json",
                    doc.kind()
                )
            }
        })
    }
}
