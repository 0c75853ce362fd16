//! The ids of a qualification's stages, as documents and reports name them.

use serde::{Deserialize, Serialize};

/// A stage of a qualification (or the time outside the stages that the
/// budget accounts for: the set-up, the noisy-neighbour stage). Documents
/// and reports hold its name ([`StageId::name`]: `quick corners`,
/// `self-checks`...), the same words since qualifications were first stored;
/// code that reacts to a stage matches the variant, never the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StageId {
    /// `set-up`: creating the test files, paid from the budget.
    #[serde(rename = "set-up")]
    SetUp,
    /// `quick corners`: iosim quick's corners on each test target.
    #[serde(rename = "quick corners")]
    QuickCorners,
    /// `sweeps`: the queue-depth and thread sweeps, with repetitions.
    #[serde(rename = "sweeps")]
    Sweeps,
    /// `profiles`: the database's profiles on its roles.
    #[serde(rename = "profiles")]
    Profiles,
    /// `simulator`: one iosim sim cycle with page verification.
    #[serde(rename = "simulator")]
    Simulator,
    /// `self-checks`: the runs' self-checks and the test files' content.
    #[serde(rename = "self-checks")]
    SelfChecks,
    /// `neighbour`: `--neighbour`'s studies, after the budgeted stages.
    #[serde(rename = "neighbour")]
    Neighbour,
}

impl StageId {
    /// The name documents and reports hold.
    pub fn name(self) -> &'static str {
        match self {
            StageId::SetUp => "set-up",
            StageId::QuickCorners => "quick corners",
            StageId::Sweeps => "sweeps",
            StageId::Profiles => "profiles",
            StageId::Simulator => "simulator",
            StageId::SelfChecks => "self-checks",
            StageId::Neighbour => "neighbour",
        }
    }
}

impl std::fmt::Display for StageId {
    /// The name, padded as the format asks (`{:<14}` in the stages table).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::StageId;

    const ALL: [StageId; 7] = [
        StageId::SetUp,
        StageId::QuickCorners,
        StageId::Sweeps,
        StageId::Profiles,
        StageId::Simulator,
        StageId::SelfChecks,
        StageId::Neighbour,
    ];

    /// Serde, Display and `name` say the same words, and a stored name
    /// reads back as its stage.
    #[test]
    fn a_stage_is_named_alike_everywhere() {
        for s in ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.name()));
            assert_eq!(s.to_string(), s.name());
            assert_eq!(serde_json::from_str::<StageId>(&json).unwrap(), s);
        }
        assert_eq!(format!("{:<9}|", StageId::Sweeps), "sweeps   |");
    }
}
