//! Pacing of one worker's I/O starts: a rate cap, bursts with think time,
//! and periodic bursts over the rate cap.
//!
//! The rate cap is an open-loop schedule: I/O number k of a thread is due at
//! `t0 + k x interval`, whatever happened before. A thread that falls behind
//! (a slow device, a stall, a descheduled process) issues its backlog as fast
//! as its queue depth allows, as clients arriving on schedule would queue up,
//! and each I/O's latency is also measured from its due time (the worker's
//! `intended_ts`). Dropping the backlog instead would hide the stall from
//! the latency (coordinated omission).

use crate::workload::WorkloadSpec;

/// Paces one thread's I/O starts: a rate cap (one start per interval),
/// bursts followed by think time, or periodic bursts. Pure arithmetic on
/// the caller's clock.
#[derive(Clone, Debug)]
pub(super) struct Pacer {
    interval_ns: u64,
    burst: u32,
    think_ns: u64,
    next_due: u64,
    in_burst: u32,
    cycle: Option<Cycle>,
}

/// Periodic bursts (`burst_every`): each period starts with the burst, its
/// I/Os `burst_interval_ns` apart; the rest of the period runs at the rate
/// cap, or idles without one. Periods follow the schedule, not the I/Os.
#[derive(Clone, Debug)]
struct Cycle {
    every_ns: u64,
    burst_interval_ns: u64,
    start: u64,
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
            cycle: (!spec.burst_every.is_zero()).then(|| Cycle {
                every_ns: spec.burst_every.as_nanos().min(u128::from(u64::MAX)) as u64,
                burst_interval_ns: 1_000_000_000 / spec.burst_rate_iops.unwrap_or(1).max(1),
                start: t0,
            }),
        })
    }

    /// When the next I/O may start.
    #[inline]
    pub(super) fn due(&self) -> u64 {
        self.next_due
    }

    /// An I/O due at [`Pacer::due`] started at `now` (not before); returns
    /// whether it is one of a periodic burst's.
    #[inline]
    pub(super) fn issued(&mut self, now: u64) -> bool {
        if let Some(c) = self.cycle.as_mut() {
            let end = c.start + c.every_ns;
            let in_burst = self.in_burst < self.burst;
            if in_burst {
                self.in_burst += 1;
            }
            if in_burst && self.in_burst < self.burst {
                self.next_due += c.burst_interval_ns;
            } else if self.interval_ns > 0 {
                self.next_due += self.interval_ns;
            } else {
                self.next_due = end;
            }
            if self.next_due >= end {
                // The next period, on the schedule (a thread behind it
                // catches up one period at a time, bursts included).
                c.start = end;
                self.next_due = end;
                self.in_burst = 0;
            }
            return in_burst;
        }
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
        false
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

    /// Starts of a pacer's first `n` I/Os, each issued when due.
    fn starts(spec: &WorkloadSpec, n: usize) -> Vec<u64> {
        let mut p = Pacer::new(spec, 0).unwrap();
        (0..n)
            .map(|_| {
                let t = p.due();
                p.issued(t);
                t
            })
            .collect()
    }

    #[test]
    fn periodic_bursts_start_each_period_over_the_rate_cap() {
        let ms = 1_000_000;
        // A burst of 3 at 1,000/s every 100 ms over 20 a second (50 ms apart).
        let spec = WorkloadSpec {
            rate_iops: Some(20),
            burst: 3,
            burst_rate_iops: Some(1000),
            burst_every: Duration::from_millis(100),
            ..WorkloadSpec::default()
        };
        let t = starts(&spec, 12);
        assert_eq!(
            t,
            [0, 1, 2, 52, 100, 101, 102, 152, 200, 201, 202, 252].map(|x| x * ms),
            "the burst, then the rate cap until the period ends"
        );
        // Without a rate cap: the burst, then nothing until the next period.
        let spec = WorkloadSpec {
            rate_iops: None,
            ..spec
        };
        assert_eq!(
            starts(&spec, 7),
            [0, 1, 2, 100, 101, 102, 200].map(|x| x * ms)
        );
        // Each I/O says whether it is a burst's.
        let mut p = Pacer::new(&spec, 0).unwrap();
        let flags: Vec<bool> = (0..5)
            .map(|_| {
                let t = p.due();
                p.issued(t)
            })
            .collect();
        assert_eq!(flags, [true, true, true, true, true]);
        let spec20 = WorkloadSpec {
            rate_iops: Some(20),
            ..spec.clone()
        };
        let mut p = Pacer::new(&spec20, 0).unwrap();
        let flags: Vec<bool> = (0..6)
            .map(|_| {
                let t = p.due();
                p.issued(t)
            })
            .collect();
        assert_eq!(flags, [true, true, true, false, true, true]);
        // A thread behind the schedule keeps it: the late I/Os are due at
        // once, and the next period starts where the schedule says.
        let mut p = Pacer::new(&spec, 0).unwrap();
        p.issued(0);
        p.issued(250 * ms);
        assert_eq!(p.due(), 2 * ms);
        p.issued(250 * ms);
        assert_eq!(p.due(), 100 * ms);
        p.issued(251 * ms);
        assert_eq!(p.due(), 101 * ms);
    }
}
