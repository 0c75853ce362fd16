//! The deep-queue throughput rule: a deep-queue workload against the
//! location's own sequential corner.

use super::super::facts::ThroughputFact;
use super::super::reason::{Level, Reason};
use super::super::sources::DISKSPD_SQL;
use super::super::thresholds::DEEP_SHARE;
use crate::guidance::RuleId;
use crate::verdict::Role;

/// The deep-queue throughput rule of each measurement (pass or warning).
pub(super) fn throughput_reasons(role: Role, throughput: &[ThroughputFact]) -> Vec<Reason> {
    let mut r = Vec::new();
    for t in throughput {
        if t.reference_mib_s <= 0.0 {
            continue;
        }
        let below = t.mib_s < DEEP_SHARE * t.reference_mib_s;
        r.push(Reason::new(
            role,
            if below { Level::Warning } else { Level::Pass },
            RuleId::DeepThroughput,
            format!("{} {:.1} MiB/s", t.what, t.mib_s),
            format!(
                "{} {:.0}% of this location's {} ({:.1} MiB/s){}",
                if below { "below" } else { "at or above" },
                DEEP_SHARE * 100.0,
                t.reference,
                t.reference_mib_s,
                if below {
                    ": the deep queue the database uses for this work loses throughput"
                } else {
                    ""
                }
            ),
            DISKSPD_SQL,
        ));
    }
    r
}
