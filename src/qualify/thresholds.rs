//! The rules' limits: the latency tables ([`RuleSet`], [`CLASSIC`],
//! [`FLASH`]) and the fixed thresholds of the other rules.

use serde::{Deserialize, Serialize};

use super::reason::Level;
use super::sources::{AZURE_PV2, DELL_FLASH, DISKSPD_SQL, LOG_VS_DATA, MS_2012, RANDAL};

/// A test file under this many times the cache the user gave (`--cache-size`)
/// may be measuring the cache ("at least several times" [Marks-cache]).
pub const CACHE_MULTIPLE: u64 = 3;
/// Without `--cache-size`, a test file under this many times the host's
/// memory (the one cache size iosim can read) gets the same warning.
pub const HOST_MEMORY_MULTIPLE: u64 = 1;

/// Data-file latency: warning above (ms).
pub const DATA_WARN_MS: f64 = 10.0;
/// Data-file latency: NOT FIT above (ms).
pub const DATA_FAIL_MS: f64 = 20.0;
/// Log-write latency: warning above (ms).
pub const LOG_WARN_MS: f64 = 2.0;
/// Log-write latency: NOT FIT above (ms).
pub const LOG_FAIL_MS: f64 = 4.0;
/// Deep-queue throughput below this share of the location's sequential corner: warning.
pub const DEEP_SHARE: f64 = 0.5;
/// Commit latencies alone and beside data I/O that differ by more than this ratio differ measurably.
pub const SHARED_LOG_RATIO: f64 = 1.2;
/// p99 is judged on a workload with at least this many I/Os.
pub const MIN_IOS_P99: u64 = 100;
/// p99.9 is judged on a workload with at least this many I/Os (with fewer it is the maximum).
pub const MIN_IOS_P999: u64 = 1000;
pub use crate::guidance::Band;

/// Which latency table judges the measurements (`iosim qualify --rules`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSet {
    /// The table of the SQL Server guidance of the disk-array era: limits any
    /// healthy array meets, disk or flash (the default).
    #[default]
    Classic,
    /// Flash-era storage: millisecond means, short tails.
    Flash,
}

impl RuleSet {
    /// Every table.
    pub const ALL: [RuleSet; 2] = [RuleSet::Classic, RuleSet::Flash];

    /// Its name (`--rules NAME`, JSON).
    pub fn name(self) -> &'static str {
        match self {
            RuleSet::Classic => "classic",
            RuleSet::Flash => "flash",
        }
    }

    /// Its limits.
    pub fn table(self) -> &'static RuleTable {
        match self {
            RuleSet::Classic => &CLASSIC,
            RuleSet::Flash => &FLASH,
        }
    }
}

/// One table of latency limits; each list worst first (highest limit first).
#[derive(Debug)]
pub struct RuleTable {
    /// Mean latency of the latency-bound data and tempdb workloads, and at the sweep's knee.
    pub data_mean: &'static [Band],
    /// Mean write latency of the log workloads.
    pub log_mean: &'static [Band],
    /// p99 of the latency-bound data and tempdb workloads.
    pub data_p99: &'static [Band],
    /// p99.9 of the latency-bound data and tempdb workloads.
    pub data_p999: &'static [Band],
    /// p99 of the log workloads.
    pub log_p99: &'static [Band],
    /// p99.9 of the log workloads.
    pub log_p999: &'static [Band],
    /// Maximum latency of any latency-bound workload.
    pub max: &'static [Band],
}

/// The classic table: Randal's and the DiskSpd paper's bands; a tail is
/// judged by the band its 1-in-100 or 1-in-1000 I/O falls in.
pub const CLASSIC: RuleTable = RuleTable {
    data_mean: &[
        (DATA_FAIL_MS, Level::Fail, DISKSPD_SQL),
        (DATA_WARN_MS, Level::Warning, RANDAL),
    ],
    log_mean: &[
        (LOG_FAIL_MS, Level::Fail, MS_2012),
        (LOG_WARN_MS, Level::Warning, LOG_VS_DATA),
    ],
    data_p99: &[
        (500.0, Level::Fail, RANDAL),
        (100.0, Level::Warning, RANDAL),
    ],
    data_p999: &[(500.0, Level::Warning, RANDAL)],
    log_p99: &[
        (100.0, Level::Fail, RANDAL),
        (20.0, Level::Warning, DISKSPD_SQL),
    ],
    log_p999: &[(100.0, Level::Warning, RANDAL)],
    max: &[(500.0, Level::Warning, RANDAL)],
};

/// The flash table: a 1 ms mean (all-flash arrays, Azure's flash disks),
/// tails a band or two stricter than the classic table's.
pub const FLASH: RuleTable = RuleTable {
    data_mean: &[
        (5.0, Level::Fail, RANDAL),
        (1.0, Level::Warning, DELL_FLASH),
    ],
    log_mean: &[
        (2.0, Level::Fail, MS_2012),
        (1.0, Level::Warning, AZURE_PV2),
    ],
    data_p99: &[(100.0, Level::Fail, RANDAL), (10.0, Level::Warning, RANDAL)],
    data_p999: &[(20.0, Level::Warning, DISKSPD_SQL)],
    log_p99: &[
        (20.0, Level::Fail, DISKSPD_SQL),
        (5.0, Level::Warning, RANDAL),
    ],
    log_p999: &[(10.0, Level::Warning, RANDAL)],
    max: &[(100.0, Level::Warning, RANDAL)],
};

/// A page read's p99 growing by this factor or more beside the neighbour is
/// a warning (`neighbour-impact`).
pub const NEIGHBOUR_P99_FACTOR: f64 = 2.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_tables_list_limits_worst_first() {
        for set in RuleSet::ALL {
            let t = set.table();
            for bands in [
                t.data_mean,
                t.log_mean,
                t.data_p99,
                t.data_p999,
                t.log_p99,
                t.log_p999,
                t.max,
            ] {
                assert!(!bands.is_empty());
                assert!(bands
                    .windows(2)
                    .all(|w| w[0].0 > w[1].0 && w[0].1 >= w[1].1));
            }
            // The flash table is never laxer than the classic one.
            let c = RuleSet::Classic.table();
            if set == RuleSet::Flash {
                for (f, c) in [
                    (t.data_mean, c.data_mean),
                    (t.log_mean, c.log_mean),
                    (t.data_p99, c.data_p99),
                    (t.data_p999, c.data_p999),
                    (t.log_p99, c.log_p99),
                    (t.log_p999, c.log_p999),
                    (t.max, c.max),
                ] {
                    assert!(f.last().unwrap().0 <= c.last().unwrap().0);
                }
            }
        }
        assert_eq!(serde_json::to_string(&RuleSet::Flash).unwrap(), "\"flash\"");
    }
}
