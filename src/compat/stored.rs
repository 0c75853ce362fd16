//! What a legacy front end printed a run from, stored with the run in the
//! history, so that `iosim show` prints SQLIO's or DiskSpd's output again
//! with the same renderers the command used.

use serde::{Deserialize, Serialize};

use crate::runner::RunResult;

/// The front end that measured a stored run, with what it printed it from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "lowercase")]
pub enum FrontEnd {
    /// `iosim sqlio`.
    Sqlio(Box<super::sqlio::Printed>),
    /// `iosim diskspd`.
    Diskspd(Box<super::diskspd::Printed>),
}

impl FrontEnd {
    /// What the front end printed on stdout for the run `r`.
    pub fn text(&self, r: &RunResult) -> String {
        match self {
            FrontEnd::Sqlio(p) => p.text(r),
            FrontEnd::Diskspd(p) => p.text(r),
        }
    }

    /// The front end's name (`sqlio`, `diskspd`).
    pub fn tool(&self) -> &'static str {
        match self {
            FrontEnd::Sqlio(_) => "sqlio",
            FrontEnd::Diskspd(_) => "diskspd",
        }
    }
}
