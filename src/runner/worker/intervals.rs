//! A worker's measured window, interval by interval: it opens the window,
//! closes each interval as time passes, and hands the interval's statistics
//! to the main thread, once per interval and never per I/O.

use std::sync::atomic::Ordering;
use std::sync::mpsc;

use super::Worker;
use crate::runner::series::IntervalMsg;
use crate::sysmon::{cpu, procs};

impl Worker<'_> {
    /// The window has opened at `start`: measure from there.
    pub(super) fn start_measuring(&mut self, start: u64) {
        self.win.measuring = true;
        self.win.start = start;
        self.win.next_boundary = start.saturating_add(self.ctx.interval_ns);
        self.win.interval_index = 0;
        self.cur.reset();
        self.gen.reset_counts();
        self.win.ru0 = cpu::rusage(true);
        self.win.wait0 = procs::thread_run_delay_ns();
    }

    /// Hands the current interval to the main thread (once per interval) and
    /// folds it into the whole run. Intervals this thread slept through are
    /// reported empty in the same message; at the end of the window (or after
    /// `--number-ios`) the last interval closes and this thread stops.
    pub(super) fn close_intervals(&mut self, now: u64) {
        let iv = self.ctx.interval_ns;
        let at_end = now >= self.win.end;
        let last = at_end || self.measured_ios >= self.io_limit;
        let first = self.win.interval_index;
        // Offsets from the window's start.
        let (through, end_rel) = if last {
            let stop = if at_end { self.win.end } else { now };
            self.win.measure_end = stop.max(self.win.start);
            if at_end {
                self.win.noticed_end_ts = now;
            }
            let rel = self.win.measure_end - self.win.start;
            ((rel.saturating_sub(1) / iv) as usize, rel)
        } else {
            // `now` is in interval `cur`; those before it are closed.
            let cur = ((now - self.win.start) / iv) as usize;
            (cur - 1, cur as u64 * iv)
        };
        let through = through.max(first);
        self.hand_over(first, through, end_rel, last);
        self.whole.merge(&self.cur);
        self.cur.reset();
        self.win.interval_index = through + 1;
        self.win.next_boundary = self
            .win
            .start
            .saturating_add((through as u64 + 2).saturating_mul(iv));
        if last {
            self.stopping = true;
            // Once, at the end of the window: what follows (draining, a
            // verify pass) is not measured.
            self.win.wait1 = procs::thread_run_delay_ns();
        }
    }

    /// Hands intervals `first ..= through` (this interval's statistics in
    /// `cur`) to the main thread, folded into the intervals held back before
    /// them. They are held back in turn until the end of a multiple of the
    /// run's stride, or when the channel is full (the main thread is
    /// behind), except the `last` message, which waits for room: the series
    /// gets every interval, the channel never more than its capacity.
    fn hand_over(&mut self, first: usize, through: usize, end_ns: u64, last: bool) {
        let in_flight = u32::try_from(self.io.inflight).unwrap_or(u32::MAX);
        let msg = match self.held.take() {
            Some(mut h) => {
                h.stats.merge(&self.cur);
                h.through = through;
                h.end_ns = end_ns;
                h.folded = true;
                h.errors = self.errors;
                h.in_flight = in_flight;
                h
            }
            None => IntervalMsg {
                workload: self.plan.workload,
                target: self.plan.target,
                thread: self.plan.thread,
                first,
                through,
                end_ns,
                stats: self.cur.clone(),
                folded: false,
                full: false,
                errors: self.errors,
                in_flight,
            },
        };
        let stride = self.ctx.stride.load(Ordering::Relaxed).max(1) as usize;
        if last {
            let _ = self.ctx.tx.send(msg);
        } else if (through + 1) % stride != 0 {
            self.held = Some(msg);
        } else if let Err(mpsc::TrySendError::Full(mut m)) = self.ctx.tx.try_send(msg) {
            m.full = true;
            self.held = Some(m);
        }
    }
}
