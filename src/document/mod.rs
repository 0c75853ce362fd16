//! Typed result documents: every measuring command builds one [`Document`],
//! and every consumer (the JSON, text and CSV output, the history database,
//! `show`, `compare`, the HTML report) takes one.
//!
//! A document is serialised as one JSON object whose `kind` field names the
//! variant (`run`, `quick`, `sweep`, ...), followed by the shared [`Header`]
//! fields (`schema_version`, `iosim_version`, `started_at`, `host`,
//! `environment`) and the kind's own fields (docs/json-schema.md).
//!
//! Every kind is a [`Headed`] body: the header, the kind's own fields, and,
//! under mpirun/srun, `ranks` (the per-rank part, [`Ranks`]) last.
//!
//! Adding a result kind: give its result type `Serialize + Deserialize`
//! without header fields of its own and an empty [`Body`] impl below, add a
//! variant `Name(Headed<NameResult>)`, and a line to [`Document::kind_of`];
//! the compiler then lists every renderer that must say how to show it.

pub mod compare;
pub mod export;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::compat::stored::FrontEnd;
use crate::crash::check::CrashVerdict;
use crate::fsync::FsyncResult;
use crate::matrix::MatrixResult;
use crate::mpi::SoloReport;
use crate::profile::ProfileResult;
use crate::qualify::QualifyResult;
use crate::quick::QuickResult;
use crate::replay::ReplayResult;
use crate::runner::{RanksReport, RunResult};
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

/// A result with the shared header in front of its own fields and, under
/// mpirun/srun, the ranks after them.
#[derive(Clone, Debug)]
pub struct Headed<T> {
    /// Schema, version, time, host.
    pub header: Header,
    /// The kind's own fields.
    pub body: T,
    /// Under mpirun/srun: the ranks (`ranks` in the JSON; None for a process
    /// on its own).
    pub ranks: Option<Ranks>,
}

impl<T> Headed<T> {
    /// `body` measured under `header` by a process on its own.
    pub fn new(header: Header, body: T) -> Headed<T> {
        Headed {
            header,
            body,
            ranks: None,
        }
    }

    /// The same, with the ranks' part.
    pub fn with_ranks(self, ranks: Option<Ranks>) -> Headed<T> {
        Headed { ranks, ..self }
    }
}

/// The fields of a kind of document (the body of a [`Headed`]).
pub trait Body: Serialize + DeserializeOwned {
    /// The header, when the body's own fields carry it: a run result's
    /// header fields are part of the run schema, in their documented order,
    /// so its document writes no header of its own in front.
    fn own_header(&self) -> Option<Header> {
        None
    }
}

/// The JSON of a [`Headed`]: the header (unless the body carries it), the
/// body's fields, then `ranks` if any.
#[derive(Serialize)]
struct Flat<'a, T> {
    #[serde(flatten)]
    header: Option<&'a Header>,
    #[serde(flatten)]
    body: &'a T,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranks: Option<&'a Ranks>,
}

impl<T: Body> Serialize for Headed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let own = self.body.own_header().is_some();
        Flat {
            header: (!own).then_some(&self.header),
            body: &self.body,
            ranks: self.ranks.as_ref(),
        }
        .serialize(s)
    }
}

impl<'de, T: Body> Deserialize<'de> for Headed<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut v = serde_json::Value::deserialize(d)?;
        let ranks = match v.as_object_mut().and_then(|m| m.remove("ranks")) {
            Some(r) => Some(Ranks::deserialize(r).map_err(D::Error::custom)?),
            None => None,
        };
        let body = T::deserialize(&v).map_err(D::Error::custom)?;
        let header = match body.own_header() {
            Some(h) => h,
            None => Header::deserialize(&v).map_err(D::Error::custom)?,
        };
        Ok(Headed {
            header,
            body,
            ranks,
        })
    }
}

/// The per-rank part of a document made under mpirun/srun (`ranks` in the
/// JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Ranks {
    /// A collective run's: the ranks shared one window and their results
    /// were merged (ranks, per-rank and per-host results, skew, stragglers).
    Merged(RanksReport),
    /// A command each rank ran on its own (`sim`): every rank's line and the
    /// job's sums.
    Solo(SoloReport),
}

impl Ranks {
    /// The per-rank part of the text report.
    pub fn text(&self) -> String {
        match self {
            Ranks::Merged(r) => r.text(),
            Ranks::Solo(r) => r.text(),
        }
    }
}

/// A run's own fields: the run result (the `iosim run` JSON schema, header
/// fields included) and what a legacy front end printed it from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunBody {
    /// The result (the job's merged one under mpirun/srun).
    #[serde(flatten)]
    pub result: RunResult,
    /// `iosim sqlio` or `iosim diskspd`: what it printed the run from
    /// (stored in the history, so `iosim show` prints that output again).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub front_end: Option<FrontEnd>,
}

impl Body for RunBody {
    fn own_header(&self) -> Option<Header> {
        Some(Header::of_run(&self.result))
    }
}

impl Body for QuickResult {}
impl Body for SweepResult {}
impl Body for ProfileResult {}
impl Body for MatrixResult {}
impl Body for SimResult {}
impl Body for Comparison {}
impl Body for QualifyResult {}
impl Body for ReplayResult {}
impl Body for CrashVerdict {}
impl Body for FsyncResult {}

/// What `-o json` prints of a run: the run schema as documented (its fields,
/// then `ranks`), without `kind` and the history's `front_end`, byte for
/// byte as before documents had kinds (docs/json-schema.md).
#[derive(Serialize)]
struct RunSchema<'a> {
    #[serde(flatten)]
    result: &'a RunResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    ranks: Option<&'a Ranks>,
}

/// Every kind of result iosim produces.
///
/// A run's document is the `iosim run` JSON schema itself (its header
/// fields are part of it, in their documented order, [`RunBody`]), plus
/// `kind`.
// One document is built per command and moved a few times: the variants'
// sizes do not matter, and unboxed bodies keep construction plain.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Document {
    /// `iosim run` (and a collective run under MPI), `sqlio`, `diskspd`.
    Run(Headed<RunBody>),
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
    /// `iosim fsync`: the sync methods compared, and the advice.
    Fsync(Headed<FsyncResult>),
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
    /// `iosim fsync`.
    Fsync,
}

impl Kind {
    /// The kind tagged `name` (a stored row's kind column), if this iosim
    /// knows it (None: a kind stored by a newer one).
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Every kind, in the order of [`Document`]'s variants.
    pub const ALL: [Kind; 11] = [
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
        Kind::Fsync,
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
            Kind::Fsync => "fsync",
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
            Document::Fsync(_) => Kind::Fsync,
        }
    }

    /// The shared header.
    pub fn header(&self) -> Header {
        self.envelope().0.clone()
    }

    /// The per-rank part (under mpirun/srun).
    pub fn ranks(&self) -> Option<&Ranks> {
        self.envelope().1.as_ref()
    }

    /// The envelope's fields, whatever the kind.
    fn envelope(&self) -> (&Header, &Option<Ranks>) {
        match self {
            Document::Run(h) => (&h.header, &h.ranks),
            Document::Quick(h) => (&h.header, &h.ranks),
            Document::Sweep(h) => (&h.header, &h.ranks),
            Document::Profile(h) => (&h.header, &h.ranks),
            Document::Matrix(h) => (&h.header, &h.ranks),
            Document::Sim(h) => (&h.header, &h.ranks),
            Document::Compare(h) => (&h.header, &h.ranks),
            Document::Qualify(h) => (&h.header, &h.ranks),
            Document::Replay(h) => (&h.header, &h.ranks),
            Document::Crash(h) => (&h.header, &h.ranks),
            Document::Fsync(h) => (&h.header, &h.ranks),
        }
    }

    /// The document with the ranks' part (under mpirun/srun).
    pub fn with_ranks(mut self, ranks: Option<Ranks>) -> Document {
        let slot = match &mut self {
            Document::Run(h) => &mut h.ranks,
            Document::Quick(h) => &mut h.ranks,
            Document::Sweep(h) => &mut h.ranks,
            Document::Profile(h) => &mut h.ranks,
            Document::Matrix(h) => &mut h.ranks,
            Document::Sim(h) => &mut h.ranks,
            Document::Compare(h) => &mut h.ranks,
            Document::Qualify(h) => &mut h.ranks,
            Document::Replay(h) => &mut h.ranks,
            Document::Crash(h) => &mut h.ranks,
            Document::Fsync(h) => &mut h.ranks,
        };
        *slot = ranks;
        self
    }

    /// A single run's document.
    pub fn run(result: RunResult) -> Document {
        Document::run_from(result, None)
    }

    /// A run's document, with what a front end printed it from.
    pub fn run_from(result: RunResult, front_end: Option<FrontEnd>) -> Document {
        Document::Run(Headed::new(
            Header::of_run(&result),
            RunBody { result, front_end },
        ))
    }

    /// The files and devices it measured, as given on the command line.
    pub fn targets(&self) -> Vec<std::path::PathBuf> {
        let mut out: Vec<std::path::PathBuf> = match self {
            Document::Run(c) => c
                .body
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
            Document::Fsync(f) => vec![f.body.path.clone().into()],
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
            Document::Run(c) => vec![(String::new(), &c.body.result)],
            Document::Quick(q) => q
                .body
                .tests
                .iter()
                .map(|t| (t.id.name().to_string(), &t.result))
                .collect(),
            Document::Profile(p) => p
                .body
                .results
                .iter()
                .map(|w| (w.name.clone(), &w.result))
                .collect(),
            Document::Fsync(f) => f
                .body
                .tests
                .iter()
                .filter_map(|t| {
                    t.result
                        .as_ref()
                        .map(|r| (format!("{} {}x{}", t.name.trim(), t.writes_per_op, t.bs), r))
                })
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

    /// The JSON `-o json` prints: the whole document, except a run's, which
    /// is the run schema as documented ([`RunSchema`]).
    pub fn json(&self) -> serde_json::Result<String> {
        match self {
            Document::Run(h) => serde_json::to_string_pretty(&RunSchema {
                result: &h.body.result,
                ranks: h.ranks.as_ref(),
            }),
            _ => serde_json::to_string_pretty(self),
        }
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
    fn every_kind_reads_back_from_its_name() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("qualified"), None);
    }

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
        assert!(back.ranks().is_none());
    }

    fn null_run() -> RunResult {
        let spec = crate::workload::WorkloadSpec {
            engine: crate::workload::EngineKind::Null,
            duration: std::time::Duration::from_millis(20),
            ..Default::default()
        };
        crate::runner::run(&spec, &Default::default()).unwrap()
    }

    fn ranks() -> RanksReport {
        RanksReport {
            count: 2,
            hosts_count: 1,
            stonewall: true,
            window_s: 1.5,
            skew: Default::default(),
            per_rank: Vec::new(),
            per_host: Vec::new(),
            stragglers: vec!["rank 1 on h: slow".into()],
            overhead: Default::default(),
        }
    }

    /// A run is an ordinary kind (the shared header, `ranks` in the
    /// envelope), and still prints the run schema byte for byte as before
    /// documents had kinds: the result's fields, then `ranks`, no `kind`.
    #[test]
    fn a_run_prints_the_run_schema_and_stores_kind_and_ranks() {
        let r = null_run();
        let doc = Document::run(r.clone());
        assert_eq!(doc.json().unwrap(), crate::report::json(&r));
        assert_eq!(doc.header(), Header::of_run(&r));

        /// The JSON a collective run printed before (`mpi::Collective`).
        #[derive(Serialize)]
        struct Before<'a> {
            #[serde(flatten)]
            result: &'a RunResult,
            ranks: &'a RanksReport,
        }
        let doc = doc.with_ranks(Some(Ranks::Merged(ranks())));
        assert_eq!(
            doc.json().unwrap(),
            serde_json::to_string_pretty(&Before {
                result: &r,
                ranks: &ranks()
            })
            .unwrap()
        );
        let v = doc.to_value();
        assert_eq!(v["kind"], "run");
        assert_eq!(v["ranks"]["window_s"], 1.5);
        assert_eq!(v["schema_version"], r.schema_version);
        assert!(v.get("front_end").is_none());
        let back = Document::from_value(v).unwrap();
        assert_eq!(back.ranks(), Some(&Ranks::Merged(ranks())));
        assert_eq!(back.header(), Header::of_run(&r));
        assert_eq!(back.json().unwrap(), doc.json().unwrap());
        let text = render(&back, crate::report::OutputFormat::Text).unwrap();
        assert!(text.starts_with(&crate::report::text(&r)), "{text}");
        assert!(text.ends_with("Straggler: rank 1 on h: slow\n"), "{text}");
    }

    /// Per-rank lines of a command each rank ran on its own come back as such.
    #[test]
    fn solo_ranks_sit_last_and_read_back() {
        let solo = SoloReport::new(Vec::new());
        let d = Document::Compare(Headed::new(Header::default(), Comparison::default()))
            .with_ranks(Some(Ranks::Solo(solo.clone())));
        let printed = d.json().unwrap();
        let last_key = printed.rfind("\n  \"").unwrap();
        assert!(
            printed[last_key..].starts_with("\n  \"ranks\""),
            "{printed}"
        );
        let back = Document::from_value(d.to_value()).unwrap();
        assert_eq!(back.ranks(), Some(&Ranks::Solo(solo)));
    }
}
