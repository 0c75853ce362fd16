//! What judging gives out: the three verdicts, how bad a reason is, one
//! reason (figure, limit, rule and source) and a role's verdict.

use serde::{Deserialize, Serialize};

pub use crate::guidance::Level;
use crate::guidance::{RuleId, Source};
use crate::verdict::Role;

/// The three answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Verdict {
    /// Every rule passed.
    #[serde(rename = "FIT")]
    Fit,
    /// Only warnings.
    #[serde(rename = "FIT WITH WARNINGS")]
    FitWithWarnings,
    /// At least one rule failed.
    #[serde(rename = "NOT FIT")]
    NotFit,
}

impl Verdict {
    /// As printed.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Fit => "FIT",
            Verdict::FitWithWarnings => "FIT WITH WARNINGS",
            Verdict::NotFit => "NOT FIT",
        }
    }
}

/// One reason of a verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    /// The role it concerns.
    pub role: Role,
    /// Warning or failure.
    pub level: Level,
    /// Rule id (`log-latency`).
    pub rule: RuleId,
    /// The measured figure, in words (`log-writer commit-4k write mean 19.8 ms`).
    pub measured: String,
    /// The rule it broke (`above 4 ms`).
    pub limit: String,
    /// Source tag.
    pub source_tag: String,
    /// Source title.
    pub source: String,
    /// Source address.
    pub url: String,
}

impl Reason {
    pub(super) fn new(
        role: Role,
        level: Level,
        rule: RuleId,
        measured: String,
        limit: String,
        s: Source,
    ) -> Reason {
        Reason {
            role,
            level,
            rule,
            measured,
            limit,
            source_tag: s.tag.into(),
            source: s.title.into(),
            url: s.url.into(),
        }
    }

    /// One line: figure, limit, rule and the source's tag; the source's
    /// title and address are given once, in the references section.
    pub fn line(&self) -> String {
        format!(
            "{}: {} ({} {})",
            self.measured, self.limit, self.rule, self.source_tag
        )
    }

    /// `FAIL`, `warn` or `pass`: the level as the text report marks it.
    pub fn mark(&self) -> &'static str {
        match self.level {
            Level::Fail => "FAIL",
            Level::Warning => "warn",
            Level::Pass => "pass",
        }
    }
}

/// A role's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleVerdict {
    /// Role.
    pub role: Role,
    /// Verdict.
    pub verdict: Verdict,
    /// Why (empty for FIT).
    pub reasons: Vec<Reason>,
    /// The rules the role's measurements passed, each with its figure and
    /// limit ([`Level::Pass`]): what the verdict judged when nothing broke
    /// a rule (empty in qualifications stored before iosim kept them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed: Vec<Reason>,
}
