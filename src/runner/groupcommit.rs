//! Group commit (`--group-commit`): the threads of a target are a
//! database's committers, and one flush at a time serves all of them.
//!
//! Each committer writes its log record and then needs it durable. When no
//! flush is in flight, it becomes the leader: it notes how many writes have
//! completed and flushes the file; every one of those writes is durable when
//! the flush returns. A committer whose write completed while a flush was in
//! flight waits for it to end and then looks again: a later flush (its own
//! or another leader's) covers it. So at most one flush is in flight per
//! target, and under load each covers several commits, as PostgreSQL's
//! `XLogFlush` (one backend holds `WALWriteLock` and flushes for all),
//! InnoDB's redo log and MySQL's binary log group commit do. Without it, N
//! threads each flushing after their own write send N flushes at once,
//! which the kernel may merge: the block layer then sees a pattern no
//! database makes (issue 38).
//!
//! The waiting is a mutex and a condition variable, taken once per commit:
//! the commit is a wait for another thread by definition, off the path of
//! reads and of workloads without it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The commit state of one target, shared by its threads.
#[derive(Debug, Default)]
pub(super) struct GroupCommit {
    state: Mutex<State>,
    turn: Condvar,
    /// Writes completed and handed to the commit (numbered from 1).
    written: AtomicU64,
    /// Commits and flushes in the measured window, for the run's note.
    pub commits: AtomicU64,
    pub flushes: AtomicU64,
    /// Threads of the target done: the last one writes the note.
    pub finished: AtomicUsize,
}

#[derive(Debug, Default)]
struct State {
    /// A leader's flush is in flight.
    flushing: bool,
    /// Every write numbered up to this one is durable.
    durable: u64,
}

/// How a commit ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Commit {
    /// This committer flushed (for itself and every write before it):
    /// the flush's result (0, or a negative error).
    Led(i32),
    /// Another committer's flush covered this one's write.
    Joined,
}

impl GroupCommit {
    /// Makes the write that just completed durable: returns once a flush
    /// that began after it completed has returned. `flush` performs a
    /// flush of the file and returns 0 or a negative error; a failed flush
    /// covers nothing (the next leader flushes again).
    pub fn commit(&self, flush: impl FnOnce() -> i32) -> Commit {
        let mine = self.written.fetch_add(1, Ordering::AcqRel) + 1;
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if s.durable >= mine {
                return Commit::Joined;
            }
            if !s.flushing {
                s.flushing = true;
                // Every write counted here has completed: the flush covers it.
                let upto = self.written.load(Ordering::Acquire);
                drop(s);
                let r = flush();
                let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                s.flushing = false;
                if r >= 0 {
                    s.durable = s.durable.max(upto);
                }
                drop(s);
                self.turn.notify_all();
                return Commit::Led(r);
            }
            s = self.turn.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The run's note, written by the last of `threads` threads to finish
    /// (`None` for the others, and when no commit was measured).
    pub fn note(&self, threads: usize, flush: &str) -> Option<String> {
        let done = self.finished.fetch_add(1, Ordering::AcqRel) + 1;
        let commits = self.commits.load(Ordering::Acquire);
        let flushes = self.flushes.load(Ordering::Acquire);
        if done != threads || commits == 0 {
            return None;
        }
        Some(format!(
            "group commit: {commits} commits of {threads} thread{} shared {flushes} {flush} calls ({:.2} commits a flush, one flush in flight at a time); each commit's flush latency is its wait from its write's completion until a flush covered it",
            if threads == 1 { "" } else { "s" },
            commits as f64 / flushes.max(1) as f64
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// Eight committers, each flush slow: never two flushes at once, every
    /// commit returns only after a flush that began after its write, and
    /// the flushes are fewer than the commits.
    #[test]
    fn one_flush_at_a_time_covers_every_write_before_it() {
        let g = Arc::new(GroupCommit::default());
        let in_flight = Arc::new(AtomicBool::new(false));
        // Flushes started, and the writes each one covers (the count when it began).
        let flushes = Arc::new(AtomicU64::new(0));
        let completed = Arc::new(AtomicU64::new(0));
        let started_at = Arc::new(Mutex::new(Vec::<u64>::new()));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (g, in_flight, flushes, completed, started_at) = (
                    g.clone(),
                    in_flight.clone(),
                    flushes.clone(),
                    completed.clone(),
                    started_at.clone(),
                );
                std::thread::spawn(move || {
                    let mut led = 0;
                    for _ in 0..50 {
                        // The write completes, then the commit.
                        let my = completed.fetch_add(1, Ordering::AcqRel) + 1;
                        let flushes_before = flushes.load(Ordering::Acquire);
                        let c = g.commit(|| {
                            assert!(
                                !in_flight.swap(true, Ordering::AcqRel),
                                "two flushes at once"
                            );
                            flushes.fetch_add(1, Ordering::AcqRel);
                            started_at
                                .lock()
                                .unwrap()
                                .push(completed.load(Ordering::Acquire));
                            std::thread::sleep(std::time::Duration::from_micros(300));
                            in_flight.store(false, Ordering::Release);
                            0
                        });
                        // A flush that began after this write covers it.
                        assert!(flushes.load(Ordering::Acquire) > flushes_before);
                        let starts = started_at.lock().unwrap();
                        assert!(
                            starts.iter().any(|&n| n >= my),
                            "no flush began after write {my}"
                        );
                        led += u64::from(c != Commit::Joined);
                    }
                    led
                })
            })
            .collect();
        let led: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        let n = flushes.load(Ordering::Acquire);
        assert_eq!(led, n);
        assert!(n < 400, "{n} flushes for 400 commits");
    }

    /// A failed flush covers nothing: the next committer flushes again.
    #[test]
    fn a_failed_flush_covers_nothing() {
        let g = GroupCommit::default();
        assert_eq!(g.commit(|| -5), Commit::Led(-5));
        assert_eq!(g.commit(|| 0), Commit::Led(0));
        assert_eq!(g.state.lock().unwrap().durable, 2);
    }

    #[test]
    fn the_last_thread_writes_the_note() {
        let g = GroupCommit::default();
        g.commits.store(30, Ordering::Release);
        g.flushes.store(10, Ordering::Release);
        assert_eq!(g.note(2, "fdatasync"), None);
        let n = g.note(2, "fdatasync").unwrap();
        assert!(
            n.contains("30 commits of 2 threads shared 10 fdatasync calls (3.00 commits a flush"),
            "{n}"
        );
    }
}
