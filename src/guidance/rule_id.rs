//! The ids of the verdict rules, as documents and reports hold them.

use serde::{Deserialize, Serialize};

/// The id of a verdict rule (the table in `crate::qualify::rules`);
/// documents and reports hold its text ([`RuleId::as_str`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RuleId {
    /// `log-latency`: mean write latency of the log workloads.
    #[serde(rename = "log-latency")]
    LogLatency,
    /// `data-latency`: mean latency of the latency-bound data and tempdb workloads.
    #[serde(rename = "data-latency")]
    DataLatency,
    /// `knee-latency`: mean latency at the queue-depth sweep's knee.
    #[serde(rename = "knee-latency")]
    KneeLatency,
    /// `deep-throughput`: throughput of a deep-queue workload against the location's sequential corner.
    #[serde(rename = "deep-throughput")]
    DeepThroughput,
    /// `tail-p99`: p99 latency of a latency-bound workload.
    #[serde(rename = "tail-p99")]
    TailP99,
    /// `tail-p99.9`: p99.9 latency of a latency-bound workload.
    #[serde(rename = "tail-p99.9")]
    TailP99_9,
    /// `tail-max`: maximum latency of a latency-bound workload.
    #[serde(rename = "tail-max")]
    TailMax,
    /// `slow-io`: i/Os over 1 s in the measurements.
    #[serde(rename = "slow-io")]
    SlowIo,
    /// `stalled-io`: i/Os over 15 s in the measurements.
    #[serde(rename = "stalled-io")]
    StalledIo,
    /// `sim-slow-io`: simulator I/Os over 1 s.
    #[serde(rename = "sim-slow-io")]
    SimSlowIo,
    /// `sim-long-io`: simulator I/Os over 15 s, or its long-I/O warnings.
    #[serde(rename = "sim-long-io")]
    SimLongIo,
    /// `io-errors`: any I/O error.
    #[serde(rename = "io-errors")]
    IoErrors,
    /// `sim-errors`: any error the simulator's page and log checks found.
    #[serde(rename = "sim-errors")]
    SimErrors,
    /// `sim-missing`: the simulator did not complete a cycle.
    #[serde(rename = "sim-missing")]
    SimMissing,
    /// `cache-sized-test`: a test file or device no larger than the cache in front of the disks.
    #[serde(rename = "cache-sized-test")]
    CacheSizedTest,
    /// `untrusted`: a self-check says the numbers measure something else.
    #[serde(rename = "untrusted")]
    Untrusted,
    /// `flush-latency`: mean latency of the log's commit flushes.
    #[serde(rename = "flush-latency")]
    FlushLatency,
    /// `etcd-wal-fsync`: p99 of etcd's WAL fdatasync.
    #[serde(rename = "etcd-wal-fsync")]
    EtcdWalFsync,
    /// `etcd-backend-commit`: p99 of etcd's backend commit flush.
    #[serde(rename = "etcd-backend-commit")]
    EtcdBackendCommit,
    /// `flush-not-measured`: flushes a rule judges were not timed.
    #[serde(rename = "flush-not-measured")]
    FlushNotMeasured,
    /// `rate-limited`: a rate limit in front of the device held a measurement.
    #[serde(rename = "rate-limited")]
    RateLimited,
    /// `neighbour-impact`: a background workload made page reads' p99 grow.
    #[serde(rename = "neighbour-impact")]
    NeighbourImpact,
    /// A rule this iosim does not know (from a document of another
    /// version), kept as it was read.
    #[serde(untagged)]
    Other(String),
}

impl RuleId {
    /// Its text: `log-latency`.
    pub fn as_str(&self) -> &str {
        match self {
            RuleId::LogLatency => "log-latency",
            RuleId::DataLatency => "data-latency",
            RuleId::KneeLatency => "knee-latency",
            RuleId::DeepThroughput => "deep-throughput",
            RuleId::TailP99 => "tail-p99",
            RuleId::TailP99_9 => "tail-p99.9",
            RuleId::TailMax => "tail-max",
            RuleId::SlowIo => "slow-io",
            RuleId::StalledIo => "stalled-io",
            RuleId::SimSlowIo => "sim-slow-io",
            RuleId::SimLongIo => "sim-long-io",
            RuleId::IoErrors => "io-errors",
            RuleId::SimErrors => "sim-errors",
            RuleId::SimMissing => "sim-missing",
            RuleId::CacheSizedTest => "cache-sized-test",
            RuleId::Untrusted => "untrusted",
            RuleId::FlushLatency => "flush-latency",
            RuleId::EtcdWalFsync => "etcd-wal-fsync",
            RuleId::EtcdBackendCommit => "etcd-backend-commit",
            RuleId::FlushNotMeasured => "flush-not-measured",
            RuleId::RateLimited => "rate-limited",
            RuleId::NeighbourImpact => "neighbour-impact",
            RuleId::Other(s) => s,
        }
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_read_and_write_their_text() {
        for (id, text) in [
            (RuleId::LogLatency, "log-latency"),
            (RuleId::TailP99_9, "tail-p99.9"),
            (RuleId::CacheSizedTest, "cache-sized-test"),
            (RuleId::EtcdWalFsync, "etcd-wal-fsync"),
            (RuleId::FlushNotMeasured, "flush-not-measured"),
            (RuleId::Other("retired-rule".into()), "retired-rule"),
        ] {
            assert_eq!(id.as_str(), text);
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<RuleId>(&json).unwrap(), id);
        }
    }
}
