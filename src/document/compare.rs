//! The result of `iosim compare`: stored runs side by side, scope by scope.

use serde::{Deserialize, Serialize};

use crate::comparison::{Diff, Side};
use crate::qualify::BaselineComparison;

/// One compared scope (a run's whole result is scope "", a quick suite has
/// one scope per test, a sweep one per point).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ScopeComparison {
    /// Scope name ("" for a whole run).
    pub scope: String,
    /// One side per run reference, in the order given.
    pub sides: Vec<Side>,
    /// Each side against the first.
    pub diffs: Vec<Vec<Diff>>,
}

/// Everything `iosim compare` found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Comparison {
    /// The run references, as given.
    pub refs: Vec<String>,
    /// The compared scopes.
    pub scopes: Vec<ScopeComparison>,
    /// Stored runs without results that can be compared.
    pub not_comparable: Vec<i64>,
    /// What makes the comparison doubtful (different workloads, single runs).
    pub warnings: Vec<String>,
    /// Qualifications: each later one against the first (verdicts, workloads, regressions).
    #[serde(default)]
    pub qualifications: Vec<BaselineComparison>,
    /// The allowed regression (`--threshold`), percent.
    #[serde(default)]
    pub threshold_pct: Option<f64>,
    /// What regressed beyond the threshold in the run and sweep scopes (a
    /// qualification's regressions are in its comparison).
    #[serde(default)]
    pub regressions: Vec<String>,
    /// Worse beyond the threshold but within the figures' noise (the
    /// spread of their repetitions, or of a single run's per-interval
    /// series): not regressions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within_noise: Vec<String>,
}

impl Comparison {
    /// Anything regressed beyond `--threshold`.
    pub fn regressed(&self) -> bool {
        !self.regressions.is_empty()
            || self
                .qualifications
                .iter()
                .any(|q| !q.regressions.is_empty())
    }
}

/// The side-by-side tables `iosim compare` prints, one per scope.
pub fn text(c: &Comparison) -> String {
    let mut s = String::new();
    for w in &c.warnings {
        s.push_str(&format!("WARNING: {w}\n"));
    }
    for sc in &c.scopes {
        if !sc.scope.is_empty() {
            s.push_str(&format!("== {} ==\n", sc.scope));
        }
        s.push_str(&crate::comparison::table(&sc.sides));
        s.push('\n');
    }
    for q in &c.qualifications {
        s.push_str(&crate::qualify::compare::text(q));
        s.push('\n');
    }
    if let Some(t) = c.threshold_pct {
        if !c.scopes.is_empty() {
            for w in &c.within_noise {
                s.push_str(&format!("within noise: {w}\n"));
            }
            if c.regressions.is_empty() {
                s.push_str(&format!(
                    "No regression beyond {t}% and beyond the noise in IOPS, MiB/s or p99 latency.\n"
                ));
            } else {
                for r in &c.regressions {
                    s.push_str(&format!("REGRESSION: {r}\n"));
                }
            }
        }
    }
    for id in &c.not_comparable {
        s.push_str(&format!(
            "run {id} is a document without run results to compare (iosim show {id} prints it)\n"
        ));
    }
    s
}
