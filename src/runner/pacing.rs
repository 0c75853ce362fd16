//! Pacing of one worker's I/O starts: a rate cap and bursts with think time.
//!
//! The rate cap is an open-loop schedule: I/O number k of a thread is due at
//! `t0 + k x interval`, whatever happened before. A thread that falls behind
//! (a slow device, a stall, a descheduled process) issues its backlog as fast
//! as its queue depth allows, as clients arriving on schedule would queue up,
//! and each I/O's latency is also measured from its due time (the worker's
//! `intended_ts`). Dropping the backlog instead would hide the stall from
//! the latency (coordinated omission).

use crate::workload::WorkloadSpec;

/// Paces one thread's I/O starts: a rate cap (one start per interval) and
/// bursts followed by think time. Pure arithmetic on the caller's clock.
#[derive(Clone, Debug)]
pub(super) struct Pacer {
    interval_ns: u64,
    burst: u32,
    think_ns: u64,
    next_due: u64,
    in_burst: u32,
}

impl Pacer {
    /// `None` when the workload is not paced.
    pub(super) fn new(spec: &WorkloadSpec, t0: u64) -> Option<Pacer> {
        if !spec.paced() {
            return None;
        }
        Some(Pacer {
            interval_ns: spec.rate_interval_ns(),
            burst: spec.burst.max(1),
            think_ns: spec.think.as_nanos().min(u128::from(u64::MAX)) as u64,
            next_due: t0,
            in_burst: 0,
        })
    }

    /// When the next I/O may start.
    #[inline]
    pub(super) fn due(&self) -> u64 {
        self.next_due
    }

    /// An I/O due at [`Pacer::due`] started at `now` (not before).
    #[inline]
    pub(super) fn issued(&mut self, now: u64) {
        if self.interval_ns > 0 {
            // The schedule, not the late start, sets the next due time.
            self.next_due += self.interval_ns;
        }
        if self.think_ns > 0 {
            self.in_burst += 1;
            if self.in_burst >= self.burst {
                self.in_burst = 0;
                self.next_due = self.next_due.max(now + self.think_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn pacer_spaces_starts_and_thinks_after_bursts() {
        let spec = WorkloadSpec {
            rate_iops: Some(1000),
            ..WorkloadSpec::default()
        };
        let mut p = Pacer::new(&spec, 5_000).unwrap();
        assert_eq!(p.due(), 5_000);
        p.issued(5_000);
        assert_eq!(p.due(), 1_005_000);
        // Late by 0.5 ms: the schedule is kept, not shifted.
        p.issued(1_505_000);
        assert_eq!(p.due(), 2_005_000);
        // Late by far more (a stall): the backlog is kept, due at once, one
        // interval apart on the original schedule (open loop).
        p.issued(1_000_000_000);
        assert_eq!(p.due(), 3_005_000);

        let spec = WorkloadSpec {
            burst: 3,
            think: Duration::from_millis(10),
            ..WorkloadSpec::default()
        };
        let mut p = Pacer::new(&spec, 0).unwrap();
        for t in [0, 1, 2] {
            assert!(p.due() <= t);
            p.issued(t);
        }
        assert_eq!(p.due(), 2 + 10_000_000);
        let t = p.due();
        p.issued(t);
        assert_eq!(p.due(), 2 + 10_000_000);

        let spec = WorkloadSpec {
            rate_bytes: Some(4096 * 100),
            bs: 4096,
            ..WorkloadSpec::default()
        };
        assert_eq!(Pacer::new(&spec, 0).unwrap().interval_ns, 10_000_000);
        assert!(Pacer::new(&WorkloadSpec::default(), 0).is_none());
    }
}
