//! The words of published storage guidance that the databases
//! ([`crate::dbms`]) and the qualification ([`crate::qualify`]) share: a
//! cited [`Source`], how bad a finding is ([`Level`]), a latency limit with
//! its source ([`Band`]) and a verdict rule's id ([`RuleId`]).
//!
//! It sits below both: a database's module names its sources and its own
//! rules in these words, and the qualification judges with them.

mod rule_id;

use serde::{Deserialize, Serialize};

pub use rule_id::RuleId;

/// A public source of a rule, a setting or a workload.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// Tag in docs/references.md.
    pub tag: &'static str,
    /// Title and author.
    pub title: &'static str,
    /// Address.
    pub url: &'static str,
}

/// True for an address that works wherever a report is read (`https://`,
/// `http://`); a relative one (`docs/sysmon.md`, stored by older iosim) is
/// never shown.
pub fn is_absolute(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// How bad a reason is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A rule the measurement passed: shown with its figure and limit
    /// (a role verdict's `passed`), it changes nothing.
    Pass,
    /// Makes the role FIT WITH WARNINGS.
    Warning,
    /// Makes the role NOT FIT.
    Fail,
}

/// A limit in ms: above it, a reason of this level citing this source.
pub type Band = (f64, Level, Source);
