//! The one measured window that every worker of a run shares.
//!
//! Workers set up, then arrive at a gate; once all have arrived the thread
//! that called the runner (the "main" thread) calls the [`RunSync`] hooks and
//! opens the gate. From then on the window is a pair of absolute clock times,
//! `start` and `end`, published through atomics: every worker counts exactly
//! the I/Os that complete inside `[start, end)`, however late the scheduler
//! lets it run, so the aggregate rate is the aggregate I/O over the common
//! window (as IOR does), never the sum of rates over windows that do not
//! overlap. A stop (Ctrl-C, a remote stop) lowers `end` to now.
//!
//! The gate uses per-thread park/unpark, not a mutex and condition variable:
//! with hundreds of runnable threads on a few cores, a condition variable's
//! mutex hand-off can stall the release for seconds.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::Duration;

use super::ranks::Joint;
use super::result::RunResult;
use crate::workload::WorkloadSpec;

/// A point at which every participant of a run waits for the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunPhase {
    /// Every worker has set up (engine, buffers, files) and waits to start.
    Prepared,
    /// Warm-up is about to begin (the workers are released right after).
    WarmupStart,
    /// The measured window is about to open.
    WindowStart,
    /// The measured window has closed and every local worker has stopped.
    WindowEnd,
}

/// Synchronises one run with other participants (e.g. the other ranks of an
/// MPI job). A plain run has none. Every method is called on the thread that
/// called the runner, in this order: [`RunSync::begin`], the phases'
/// [`RunSync::barrier`]s (with [`RunSync::stop_requested`] polled while the
/// window is open), then [`RunSync::end`].
pub trait RunSync: Send + Sync {
    /// First, before any target is prepared: adapts the run's workloads to
    /// this participant (e.g. an MPI rank's random stream and slice of a
    /// shared target; its paths are its own already, resolved by the command). `stop` is the user's stop flag (Ctrl-C).
    /// Returns the stop flag the run's own workers are to use instead of
    /// `stop` (`None`: `stop` itself), when the user's stop must reach every
    /// participant together through [`RunSync::stop_requested`].
    fn begin(
        &self,
        specs: &mut [WorkloadSpec],
        progress: bool,
        stop: &Arc<AtomicBool>,
    ) -> anyhow::Result<Option<Arc<AtomicBool>>> {
        let _ = (specs, progress, stop);
        Ok(None)
    }
    /// Last, with this participant's results in workload order: what the
    /// run returns, e.g. every participant's results merged with their part
    /// (on every participant, so that all take the same decisions after it).
    fn end(&self, results: Vec<RunResult>, stop: &Arc<AtomicBool>) -> anyhow::Result<Vec<Joint>> {
        let _ = stop;
        Ok(results.into_iter().map(Joint::from).collect())
    }
    /// Called on the thread that called the runner, once every local worker has reached `phase`
    /// and before any is released; returns when every participant (e.g. every MPI rank) has too.
    fn barrier(&self, phase: RunPhase) -> anyhow::Result<()>;
    /// Polled by that same thread about every 10-50 ms while the window is open;
    /// `true` ends the window for every local worker now (stonewalling, a remote stop).
    fn stop_requested(&self) -> bool {
        false
    }
    /// The block devices this participant's monitor watches, given those of
    /// its own targets (`own`); `None` runs no device or CPU monitor, when
    /// another participant on the same host watches it (one monitor per host,
    /// over every participant's devices there).
    fn monitor_devices(&self, own: Vec<String>) -> Option<Vec<String>> {
        Some(own)
    }
}

/// "Not known yet" for the window's times.
pub(super) const UNSET: u64 = u64::MAX;

/// The gate and the window's times, shared by the main thread and the workers.
pub(super) struct Window {
    workers: usize,
    arrived: AtomicUsize,
    /// Start of warm-up: the time the gate opened (0 while closed).
    released: AtomicU64,
    start: AtomicU64,
    end: AtomicU64,
    main: Thread,
}

impl Window {
    /// A closed gate for `workers` workers; the calling thread is the main thread.
    pub fn new(workers: usize) -> Window {
        Window {
            workers,
            arrived: AtomicUsize::new(0),
            released: AtomicU64::new(0),
            start: AtomicU64::new(UNSET),
            end: AtomicU64::new(UNSET),
            main: std::thread::current(),
        }
    }

    /// A worker has set up (or failed to): counts it, and the last one wakes the main thread.
    pub fn arrive(&self) {
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.workers {
            self.main.unpark();
        }
    }

    /// A worker waits for the gate to open; returns the time it opened.
    pub fn wait_open(&self) -> u64 {
        loop {
            let t = self.released.load(Ordering::Acquire);
            if t != 0 {
                return t;
            }
            std::thread::park();
        }
    }

    /// The main thread waits until every worker has arrived.
    pub fn wait_arrivals(&self) {
        while self.arrived.load(Ordering::Acquire) < self.workers {
            std::thread::park_timeout(Duration::from_millis(50));
        }
    }

    /// Opens the gate at `t0` and wakes every worker.
    pub fn open<'a>(&self, t0: u64, workers: impl Iterator<Item = &'a Thread>) {
        self.released.store(t0.max(1), Ordering::Release);
        for w in workers {
            w.unpark();
        }
    }

    /// Publishes the window `[start, end)`.
    pub fn set(&self, start: u64, end: u64) {
        // `end` first: a worker that sees the start sees the end too.
        self.end.store(end, Ordering::Release);
        self.start.store(start, Ordering::Release);
    }

    /// Ends the window at `t` (or now, if it is not open yet: an empty window).
    pub fn stop_at(&self, t: u64) {
        self.end.fetch_min(t, Ordering::AcqRel);
        self.start.fetch_min(t, Ordering::AcqRel);
    }

    /// Start of the window, or [`UNSET`].
    #[inline]
    pub fn start(&self) -> u64 {
        self.start.load(Ordering::Acquire)
    }

    /// End of the window, or [`UNSET`].
    #[inline]
    pub fn end(&self) -> u64 {
        self.end.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn gate_releases_every_worker_with_one_start_time() {
        let w = Arc::new(Window::new(8));
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let w = w.clone();
                std::thread::spawn(move || {
                    w.arrive();
                    w.wait_open()
                })
            })
            .collect();
        w.wait_arrivals();
        let threads: Vec<Thread> = hs.iter().map(|h| h.thread().clone()).collect();
        w.open(12345, threads.iter());
        for h in hs {
            assert_eq!(h.join().unwrap(), 12345);
        }
    }

    #[test]
    fn a_stop_ends_the_window_and_empties_an_unopened_one() {
        let w = Window::new(1);
        w.set(100, 200);
        w.stop_at(150);
        assert_eq!((w.start(), w.end()), (100, 150));
        w.stop_at(300);
        assert_eq!(w.end(), 150);
        let w = Window::new(1);
        w.stop_at(50);
        assert_eq!((w.start(), w.end()), (50, 50));
    }
}
