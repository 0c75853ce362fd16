//! Typed result documents: every measuring command builds one [`Document`],
//! and every consumer (the JSON, text and CSV output, the history database,
//! `show`, `compare`, the HTML report) takes one.
//!
//! A document is serialised as one JSON object whose `kind` field names the
//! variant (`run`, `quick`, `sweep`, ...), followed by the shared [`Header`]
//! fields (`schema_version`, `iosim_version`, `started_at`, `host`,
//! `environment`) and the kind's own fields (docs/json-schema.md).
//!
//! Adding a result kind: give its result type `Serialize + Deserialize`
//! without header fields of its own, add a variant `Name(Headed<NameResult>)`
//! below, and a line to [`Document::kind`] and [`Document::header`]; the
//! compiler then lists every renderer that must say how to show it.

pub mod compare;
pub mod export;

use serde::{Deserialize, Serialize};

use crate::crash::check::CrashVerdict;
use crate::matrix::MatrixResult;
use crate::mpi::Collective;
use crate::profile::ProfileResult;
use crate::qualify::QualifyResult;
use crate::quick::QuickResult;
use crate::replay::ReplayResult;
use crate::runner::RunResult;
use crate::sim::summary::SimResult;
use crate::sweep::SweepResult;
use crate::sysmon::host::HostInfo;

pub use compare::Comparison;
pub use export::{exporter, render, Exporter};

/// What every document starts with: which schema, which iosim, when, where.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Schema version of this kind of document (docs/json-schema.md).
    #[serde(default = "one")]
    pub schema_version: u32,
    /// iosim's version.
    #[serde(default)]
    pub iosim_version: String,
    /// When the measurement started (RFC 3339, UTC).
    #[serde(default)]
    pub started_at: String,
    /// Host name.
    #[serde(default)]
    pub host: String,
    /// The machine.
    #[serde(default)]
    pub environment: HostInfo,
}

fn one() -> u32 {
    1
}

impl Header {
    /// A header for a measurement starting now on this machine.
    pub fn now() -> Header {
        let environment = crate::sysmon::host::host_info();
        Header {
            schema_version: 1,
            iosim_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: crate::clock::utc_now_rfc3339(),
            host: environment.host.clone(),
            environment,
        }
    }

    /// The header a run result carries in its own fields.
    pub fn of_run(r: &RunResult) -> Header {
        Header {
            schema_version: r.schema_version,
            iosim_version: r.iosim_version.clone(),
            started_at: r.started_at.clone(),
            host: r.host.clone(),
            environment: r.environment.clone(),
        }
    }
}

/// A result with the shared header in front of its own fields.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Headed<T> {
    /// Schema, version, time, host.
    #[serde(flatten)]
    pub header: Header,
    /// The kind's own fields.
    #[serde(flatten)]
    pub body: T,
}

impl<T> Headed<T> {
    /// `body` measured under `header`.
    pub fn new(header: Header, body: T) -> Headed<T> {
        Headed { header, body }
    }
}

/// Every kind of result iosim produces.
///
/// A run's document is the `iosim run` JSON schema itself (its header
/// fields are part of it, in their documented order), plus `kind`.
// One document is built per command and moved a few times: the variants'
// sizes do not matter, and unboxed bodies keep construction plain.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Document {
    /// `iosim run` (and a collective run under MPI).
    Run(Box<Collective>),
    /// `iosim quick`: the corner-case suite.
    Quick(Headed<QuickResult>),
    /// `iosim sweep`.
    Sweep(Headed<SweepResult>),
    /// `iosim run --profile`.
    Profile(Headed<ProfileResult>),
    /// `iosim matrix`.
    Matrix(Headed<MatrixResult>),
    /// `iosim sim`.
    Sim(Headed<SimResult>),
    /// `iosim compare`.
    Compare(Headed<Comparison>),
    /// `iosim qualify`: the verdicts and their evidence.
    Qualify(Headed<QualifyResult>),
    /// `iosim replay`.
    Replay(Headed<ReplayResult>),
    /// `iosim crash verify`: the verdict on what survived a crash.
    Crash(Headed<CrashVerdict>),
}

/// The kinds of [`Document`]: the `kind` tag of its JSON, the history's
/// kind column, and the values of `iosim history --kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `iosim run`, `sqlio`, `diskspd`.
    Run,
    /// `iosim quick`.
    Quick,
    /// `iosim sweep`.
    Sweep,
    /// `iosim run --profile`.
    Profile,
    /// `iosim matrix`.
    Matrix,
    /// `iosim sim`.
    Sim,
    /// `iosim compare`.
    Compare,
    /// `iosim qualify`.
    Qualify,
    /// `iosim replay`.
    Replay,
    /// `iosim crash verify`.
    Crash,
}

impl Kind {
    /// Every kind, in the order of [`Document`]'s variants.
    pub const ALL: [Kind; 10] = [
        Kind::Run,
        Kind::Quick,
        Kind::Sweep,
        Kind::Profile,
        Kind::Matrix,
        Kind::Sim,
        Kind::Compare,
        Kind::Qualify,
        Kind::Replay,
        Kind::Crash,
    ];

    /// Whether the history stores documents of this kind: every kind but a
    /// comparison, which `iosim compare` prints and never stores.
    pub fn is_stored(self) -> bool {
        self != Kind::Compare
    }

    /// The tag.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Quick => "quick",
            Kind::Sweep => "sweep",
            Kind::Profile => "profile",
            Kind::Matrix => "matrix",
            Kind::Sim => "sim",
            Kind::Compare => "compare",
            Kind::Qualify => "qualify",
            Kind::Replay => "replay",
            Kind::Crash => "crash",
        }
    }
}

impl Document {
    /// The `kind` tag (also the history's kind column).
    pub fn kind(&self) -> &'static str {
        self.kind_of().name()
    }

    /// The kind of document.
    pub fn kind_of(&self) -> Kind {
        match self {
            Document::Run(_) => Kind::Run,
            Document::Quick(_) => Kind::Quick,
            Document::Sweep(_) => Kind::Sweep,
            Document::Profile(_) => Kind::Profile,
            Document::Matrix(_) => Kind::Matrix,
            Document::Sim(_) => Kind::Sim,
            Document::Compare(_) => Kind::Compare,
            Document::Qualify(_) => Kind::Qualify,
            Document::Replay(_) => Kind::Replay,
            Document::Crash(_) => Kind::Crash,
        }
    }

    /// The shared header.
    pub fn header(&self) -> Header {
        match self {
            Document::Run(c) => Header::of_run(&c.result),
            Document::Quick(h) => h.header.clone(),
            Document::Sweep(h) => h.header.clone(),
            Document::Profile(h) => h.header.clone(),
            Document::Matrix(h) => h.header.clone(),
            Document::Sim(h) => h.header.clone(),
            Document::Compare(h) => h.header.clone(),
            Document::Qualify(h) => h.header.clone(),
            Document::Replay(h) => h.header.clone(),
            Document::Crash(h) => h.header.clone(),
        }
    }

    /// A single run's document.
    pub fn run(r: RunResult) -> Document {
        Document::Run(Box::new(Collective {
            result: r,
            ranks: None,
            front_end: None,
        }))
    }

    /// The files and devices it measured, as given on the command line.
    pub fn targets(&self) -> Vec<std::path::PathBuf> {
        let mut out: Vec<std::path::PathBuf> = match self {
            Document::Run(c) => c
                .result
                .config
                .targets
                .iter()
                .map(|t| t.path.clone())
                .collect(),
            Document::Quick(q) => vec![q.body.path.clone().into()],
            Document::Sweep(s) => s.body.base.targets.iter().map(|t| t.path.clone()).collect(),
            Document::Profile(p) => p.body.targets.iter().map(|t| t.path.clone()).collect(),
            Document::Matrix(m) => vec![m.body.path.clone()],
            Document::Sim(s) => s.body.config.files.iter().map(|f| f.name.clone()).collect(),
            Document::Compare(_) => Vec::new(),
            Document::Qualify(q) => q.body.locations.iter().map(|l| l.given.clone()).collect(),
            Document::Replay(r) => r.body.targets.iter().map(|t| t.path.clone()).collect(),
            Document::Crash(c) => c
                .body
                .targets
                .iter()
                .map(|t| t.path.clone().into())
                .collect(),
        };
        out.dedup();
        out
    }

    /// The database profile it ran, if any.
    pub fn profile(&self) -> Option<String> {
        match self {
            Document::Profile(p) => Some(p.body.profile.clone()),
            _ => None,
        }
    }

    /// The full run results it holds, by scope name: a run has one (""),
    /// a quick suite one per test, a profile one per workload.
    pub fn runs(&self) -> Vec<(String, &RunResult)> {
        match self {
            Document::Run(c) => vec![(String::new(), &c.result)],
            Document::Quick(q) => q
                .body
                .tests
                .iter()
                .map(|t| (t.name.clone(), &t.result))
                .collect(),
            Document::Profile(p) => p
                .body
                .results
                .iter()
                .map(|w| (w.name.clone(), &w.result))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The verdict it reached, when it is a kind that judges
    /// (a qualification: `FIT`, `FIT WITH WARNINGS`, `NOT FIT`).
    pub fn verdict(&self) -> Option<String> {
        match self {
            Document::Qualify(q) => Some(q.body.overall.label().to_string()),
            _ => None,
        }
    }

    /// The device model under the targets, when a run recorded one (for a
    /// qualification: the block devices under its locations).
    pub fn device(&self) -> Option<String> {
        let mut names: Vec<String> = Vec::new();
        if let Document::Qualify(q) = self {
            for d in q
                .body
                .locations
                .iter()
                .filter_map(|l| l.block_device.clone())
            {
                if !names.contains(&d) {
                    names.push(d);
                }
            }
        }
        for (_, r) in self.runs() {
            for d in &r.devices {
                if let crate::sysmon::mounts::Resolution::Device(info) = d {
                    let n = info.model.clone().unwrap_or_else(|| info.name.clone());
                    if !n.is_empty() && !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
        }
        (!names.is_empty()).then(|| names.join(", "))
    }

    /// The document as a JSON value (what the history stores).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a result document always serialises")
    }

    /// Reads a document back from its JSON value (as stored, after the
    /// history's migrations brought it to the current form).
    pub fn from_value(v: serde_json::Value) -> Result<Document, serde_json::Error> {
        serde_json::from_value(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_sit_beside_kind() {
        let d = Document::Compare(Headed::new(
            Header {
                started_at: "2026-01-01T00:00:00Z".into(),
                host: "h".into(),
                iosim_version: "9".into(),
                ..Header::default()
            },
            Comparison::default(),
        ));
        let v = d.to_value();
        assert_eq!(v["kind"], "compare");
        assert_eq!(v["host"], "h");
        assert_eq!(v["started_at"], "2026-01-01T00:00:00Z");
        let back = Document::from_value(v).unwrap();
        assert_eq!(back.kind(), "compare");
        assert_eq!(back.header().iosim_version, "9");
    }
}
