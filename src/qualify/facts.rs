//! What the rules look at: the facts measured on each role ([`RoleFacts`])
//! and on the whole qualification ([`Facts`]).

use super::thresholds::{RuleSet, CACHE_MULTIPLE, HOST_MEMORY_MULTIPLE};
use crate::dbms::Dbms;
use crate::sysmon::check::WarningCode;
use crate::verdict::{Direction, Role};
use crate::workload::FlushKind;

/// A latency-bound measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyFact {
    /// What ran (`oltp-with-log data-8k`).
    pub what: String,
    /// Direction judged.
    pub direction: Direction,
    /// Mean latency, µs.
    pub mean_us: f64,
}

/// The knee of a role's queue-depth sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct KneeFact {
    /// Swept parameter (`qd`).
    pub param: crate::sweep::Param,
    /// Its value at the knee.
    pub at: f64,
    /// IOPS at the knee.
    pub iops: f64,
    /// Mean latency at the knee, µs.
    pub mean_us: f64,
    /// Best IOPS of the sweep.
    pub max_iops: f64,
    /// Latency growth from the knee to the last point.
    pub growth_after: f64,
    /// The knee is not the last point (more load was tried).
    pub before_last: bool,
    /// Repetitions prove the plateau after it (advice needs it): see
    /// [`crate::sweep::analysis::plateau_proven`].
    pub proven: bool,
}

/// A deep-queue throughput measurement against the location's sequential corner.
#[derive(Clone, Debug, PartialEq)]
pub struct ThroughputFact {
    /// What ran.
    pub what: String,
    /// MiB/s.
    pub mib_s: f64,
    /// The corner it is held against (`seq read 1M QD8`).
    pub reference: String,
    /// Its MiB/s.
    pub reference_mib_s: f64,
}

/// The tail of a latency-bound workload (reads and writes together).
#[derive(Clone, Debug, PartialEq)]
pub struct TailFact {
    /// What ran (`oltp-with-log data-8k`).
    pub what: String,
    /// I/Os it completed.
    pub ios: u64,
    /// p99 latency, µs.
    pub p99_us: f64,
    /// p99.9 latency, µs.
    pub p999_us: f64,
    /// Maximum latency, µs.
    pub max_us: f64,
}

/// The flushes of a workload, timed.
#[derive(Clone, Debug, PartialEq)]
pub struct FlushFact {
    /// What ran (`etcd-wal wal-append`).
    pub what: String,
    /// `fsync` or `fdatasync`.
    pub kind: FlushKind,
    /// Flushes timed.
    pub ios: u64,
    /// Mean, µs.
    pub mean_us: f64,
    /// p99, µs.
    pub p99_us: f64,
    /// p99.9, µs.
    pub p999_us: f64,
    /// The slowest, µs.
    pub max_us: f64,
}

/// Slow I/Os on a location, over every measurement (quick corners, sweeps, profiles).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlowFact {
    /// I/Os over 1 s.
    pub over_1s: u64,
    /// I/Os over 15 s.
    pub over_15s: u64,
    /// The slowest I/O, µs.
    pub max_us: f64,
    /// The measurement it was in.
    pub max_in: String,
}

/// What the simulator saw of slow I/O on a location's file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimSlowFact {
    /// Completed I/Os over 1 s.
    pub over_1s: u64,
    /// Completed I/Os over 15 s.
    pub over_15s: u64,
    /// The long-I/O monitor's warnings (I/Os outstanding over 15 s, whichever file).
    pub long_io_warnings: u64,
    /// The slowest completed I/O, µs.
    pub max_us: f64,
}

/// A location's test file (or device) against the cache in front of the disks.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheFact {
    /// Size of the file or device measured, bytes.
    pub size: u64,
    /// A device used whole, not a test file.
    pub device: bool,
    /// The cache the user gave (`--cache-size`), bytes.
    pub given: Option<u64>,
    /// This host's memory, bytes (held against without `given`).
    pub host_memory: u64,
}

impl CacheFact {
    /// The size under which the numbers may describe a cache, and what it is,
    /// in words (None when nothing is known to hold it against).
    pub fn limit(&self) -> Option<(u64, String)> {
        let size = crate::units::format_size;
        match self.given {
            Some(c) if c > 0 => Some((
                c.saturating_mul(CACHE_MULTIPLE),
                format!(
                    "{CACHE_MULTIPLE}x the {} cache given with --cache-size",
                    size(c)
                ),
            )),
            Some(_) => None,
            None if self.host_memory > 0 => Some((
                self.host_memory.saturating_mul(HOST_MEMORY_MULTIPLE),
                format!(
                    "this host's memory ({}; no --cache-size given)",
                    size(self.host_memory)
                ),
            )),
            None => None,
        }
    }

    /// The size under which it fires, when it fires.
    pub fn fires(&self) -> Option<(u64, String)> {
        self.limit()
            .filter(|(l, _)| self.size > 0 && self.size < *l)
    }
}

/// What the rules look at for one role.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleFacts {
    /// Role.
    pub role: Role,
    /// Latency-bound workloads.
    pub latency: Vec<LatencyFact>,
    /// Queue-depth sweep knee.
    pub knee: Option<KneeFact>,
    /// Deep-queue workloads.
    pub throughput: Vec<ThroughputFact>,
    /// I/O errors in every run on this location.
    pub io_errors: u64,
    /// Self-check findings (code, message) on this location that make the numbers untrustworthy.
    pub untrusted: Vec<(WarningCode, String)>,
    /// Simulator errors on this location's files.
    pub sim_errors: u64,
    /// Tails of the latency-bound workloads.
    pub tails: Vec<TailFact>,
    /// Slow I/Os in the measurements.
    pub slow: SlowFact,
    /// Slow I/Os the simulator saw.
    pub sim_slow: SimSlowFact,
    /// The test file against the cache (None: its size is not known).
    pub cache: Option<CacheFact>,
    /// The flushes of the profiles' workloads on this location, timed.
    pub flushes: Vec<FlushFact>,
    /// Workloads on this location that asked for flushes the runner did not time.
    pub flush_untimed: Vec<String>,
    /// A rate limit held a measurement on this location (the `rate_limited`
    /// self-check's message, or a sweep's flat ceiling), in words.
    pub rate_limit: Option<String>,
    /// `--neighbour`: how the background workload changed this location's
    /// page reads.
    pub neighbour: Option<NeighbourFact>,
}

/// The noisy-neighbour stage on one location.
#[derive(Clone, Debug, PartialEq)]
pub struct NeighbourFact {
    /// The background workload as given.
    pub spec: String,
    /// p99 latency alone, µs.
    pub alone_p99_us: f64,
    /// p99 beside the neighbour, µs.
    pub together_p99_us: f64,
    /// IOPS beside the neighbour against alone, %.
    pub iops_pct: f64,
}

/// Everything the rules look at.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    /// Per role.
    pub roles: Vec<RoleFacts>,
    /// The simulator completed a cycle (None: it did not run).
    pub sim_completed: Option<bool>,
    /// Simulator errors by class.
    pub sim_errors_by_class: Vec<(String, u64)>,
    /// The log shares the data's device.
    pub log_shares_data: bool,
    /// Commit latency alone (log-writer), µs.
    pub commit_alone_us: Option<f64>,
    /// Commit latency beside data I/O (oltp-with-log), µs.
    pub commit_with_data_us: Option<f64>,
    /// The latency table.
    pub rules: RuleSet,
    /// The database qualified for.
    pub dbms: Dbms,
}
