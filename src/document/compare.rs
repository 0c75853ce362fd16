//! The result of `iosim compare`: stored runs side by side, scope by scope.

use serde::{Deserialize, Serialize};

use crate::store::compare::{Diff, Side};

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
        s.push_str(&crate::store::compare::table(&sc.sides));
        s.push('\n');
    }
    for id in &c.not_comparable {
        s.push_str(&format!(
            "run {id} is a document without run results to compare (iosim show {id} prints it)\n"
        ));
    }
    s
}
