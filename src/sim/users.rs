//! The simulated users: SQLIOSim's RandomUser, AuditUser, ReadAheadUser,
//! BulkUpdateUser and ShrinkUser, plus the engine's checkpoint, lazy writer,
//! initial update and the end-of-cycle full audit.
//!
//! The buffer pool is modelled by page state, not page images: a page is
//! *dirty* when its in-memory generation is newer than the last generation
//! acknowledged on disk. Images are rebuilt deterministically from (run seed,
//! file, page, generation) when written or when a mismatch is dumped, so the
//! pool costs a few bytes per page whatever MaxMemoryMB says; MaxMemoryMB
//! bounds the number of dirty pages (the lazy writer keeps them below it).

use std::sync::atomic::Ordering;
use std::time::Duration;

use rand::Rng;

use super::config::CHECKPOINT_RUN;
use super::files::{self, UNKNOWN_GEN};
use super::io::UserIo;
use crate::clock::now_ns;

/// Marks pages dirty with a new generation (the caller holds their latches).
fn dirty_pages(io: &UserIo, fi: usize, first: u64, n: u64) {
    let f = &io.sh.files[fi];
    for p in first..first + n {
        let p = p as usize;
        let d = f.dirty[p].load(Ordering::Acquire);
        let g = f.gens[p].load(Ordering::Acquire);
        let base = if g == UNKNOWN_GEN { d } else { d.max(g) };
        let next = base.wrapping_add(1).clamp(1, UNKNOWN_GEN - 1);
        if d == 0 {
            io.sh.dirty_count.fetch_add(1, Ordering::AcqRel);
        }
        f.dirty[p].store(next, Ordering::Release);
    }
}

/// Reads and verifies the pages of a latched range that need I/O: `want(p)`
/// says whether page p is to be read (cache misses). Contiguous pages go in one I/O.
fn read_range(
    io: &mut UserIo,
    fi: usize,
    first: u64,
    n: u64,
    mut want: impl FnMut(&mut UserIo, u64) -> bool,
) {
    let mut run: Vec<u32> = Vec::new();
    let mut run_start = first;
    for p in first..=first + n {
        let take = p < first + n && {
            let g = io.sh.files[fi].gens[p as usize].load(Ordering::Acquire);
            g != 0 && g != UNKNOWN_GEN && want(io, p)
        };
        if take {
            if run.is_empty() {
                run_start = p;
            }
            run.push(io.sh.files[fi].gens[p as usize].load(Ordering::Acquire));
        } else if !run.is_empty() {
            io.read_pages(fi, run_start, &run);
            run.clear();
        }
    }
}

/// RandomUser: OLTP. Picks a region (jumping to a new one with
/// JumpToNewRegionPercentage), reads the pages not in cache, updates
/// RandomUserReadWriteRatio of them (log record first, hardened before the
/// pages are dirtied), rolls back RollbackChance of transactions in memory,
/// sleeps SleepAfter.
pub fn random_user(mut io: UserIo) {
    let c = io.sh.cfg.random.clone();
    let ch = io.sh.choices.clone();
    let mut fi = io.random_data_file();
    let mut next = u64::MAX;
    while io.running() {
        let jump = next == u64::MAX || io.rng.sample(ch.jump);
        let (start, len) = if jump {
            fi = io.random_data_file();
            match io.random_run(fi, c.min_chain, c.max_chain) {
                Some(r) => r,
                None => {
                    io.nap(10);
                    continue;
                }
            }
        } else {
            let pages = io.sh.files[fi].page_count();
            let len = io.rng.gen_range(ch.chain.clone()).min(pages);
            let start = if next + len > pages { 0 } else { next };
            (start, len)
        };
        if len == 0 {
            io.nap(10);
            continue;
        }
        next = start + len;
        let sh = io.sh.clone();
        let f = &sh.files[fi];
        let Some(latch) = f.latch(start, len) else {
            continue;
        };
        // Dirty pages are in memory: no read. Others hit the cache at CacheHitRatio.
        read_range(&mut io, fi, start, len, |io, p| {
            f.dirty[p as usize].load(Ordering::Acquire) == 0 && !io.rng.sample(ch.cache_hit)
        });
        let update: Vec<u64> = (start..start + len)
            .filter(|_| io.rng.sample(ch.update))
            .collect();
        if !update.is_empty() && !io.rng.sample(ch.rollback) {
            let bytes = io.rng.gen_range(ch.log_bytes.clone());
            if !sh.log.append_and_wait(bytes) {
                break;
            }
            for p in update {
                dirty_pages(&io, fi, p, 1);
            }
        }
        drop(latch);
        io.nap(c.sleep_after_ms);
    }
}

/// AuditUser: DBCC-style validation of BuffersValidated pages per cycle,
/// walking the files in order; pauses AuditDelay every DelayAfterCycles.
pub fn audit_user(mut io: UserIo, n: usize) {
    let c = io.sh.cfg.audit.clone();
    let sh = io.sh.clone();
    let mut di = n % sh.data.len();
    let mut pos = 0u64;
    let mut cycles = 0u64;
    while io.running() {
        let fi = sh.data[di];
        let f = &sh.files[fi];
        let pages = f.page_count();
        if pos >= pages {
            pos = 0;
            di = (di + 1) % sh.data.len();
            continue;
        }
        let len = c.buffers_validated.min(pages - pos);
        if let Some(_latch) = f.latch(pos, len) {
            read_range(&mut io, fi, pos, len, |_, _| true);
        }
        pos += len;
        cycles += 1;
        if c.delay_after_cycles > 0 && cycles % c.delay_after_cycles == 0 {
            io.nap(c.delay_ms);
        }
    }
}

/// ReadAheadUser: scatter reads of BuffersRAMin..Max contiguous pages, even
/// when cached if ForceReadAhead.
pub fn read_ahead_user(mut io: UserIo) {
    let c = io.sh.cfg.read_ahead.clone();
    let force = io.sh.cfg.force_read_ahead;
    let hit = io.sh.choices.cache_hit;
    let sh = io.sh.clone();
    let mut cycles = 0u64;
    while io.running() {
        let fi = io.random_data_file();
        let Some((start, len)) = io.random_run(fi, c.min_pages, c.max_pages) else {
            io.nap(10);
            continue;
        };
        if let Some(_latch) = sh.files[fi].latch(start, len) {
            read_range(&mut io, fi, start, len, |io, _| {
                force || !io.rng.sample(hit)
            });
        }
        cycles += 1;
        if c.delay_after_cycles > 0 && cycles % c.delay_after_cycles == 0 {
            io.nap(c.delay_ms);
        }
    }
}

/// BulkUpdateUser: SELECT INTO / BULK INSERT: a minimally logged gather
/// write of BuffersBUMin..Max new page images.
pub fn bulk_update_user(mut io: UserIo) {
    let c = io.sh.cfg.bulk.clone();
    let sh = io.sh.clone();
    let mut cycles = 0u64;
    while io.running() {
        let fi = io.random_data_file();
        let Some((start, len)) = io.random_run(fi, c.min_pages, c.max_pages) else {
            io.nap(10);
            continue;
        };
        let f = &sh.files[fi];
        if let Some(_latch) = f.latch(start, len) {
            if !sh.log.append_and_wait(512) {
                break;
            }
            let gens: Vec<u32> = (start..start + len)
                .map(|p| {
                    let (g, d) = (
                        f.gens[p as usize].load(Ordering::Acquire),
                        f.dirty[p as usize].load(Ordering::Acquire),
                    );
                    let base = if g == UNKNOWN_GEN { d } else { g.max(d) };
                    base.wrapping_add(1).clamp(1, UNKNOWN_GEN - 1)
                })
                .collect();
            let ok = io.write_pages(fi, start, &gens);
            for (k, p) in (start..start + len).enumerate() {
                let p = p as usize;
                f.gens[p].store(if ok[k] { gens[k] } else { UNKNOWN_GEN }, Ordering::Release);
                if f.dirty[p].swap(0, Ordering::AcqRel) != 0 {
                    sh.dirty_count.fetch_sub(1, Ordering::AcqRel);
                }
            }
        }
        cycles += 1;
        if c.delay_after_cycles > 0 && cycles % c.delay_after_cycles == 0 {
            io.nap(c.delay_ms);
        }
    }
}

/// ShrinkUser: every MinShrinkInterval..MaxShrinkInterval seconds, grows
/// or shrinks a data file by MinExtends..MaxExtends x Increment MB.
pub fn shrink_user(mut io: UserIo) {
    let ch = io.sh.choices.clone();
    let sh = io.sh.clone();
    let candidates: Vec<usize> = sh
        .data
        .iter()
        .copied()
        .filter(|&i| sh.files[i].cfg.increment_mb > 0 && !sh.files[i].is_device)
        .collect();
    if candidates.is_empty() {
        return;
    }
    loop {
        let wait = io.rng.gen_range(ch.shrink_wait_ms.clone());
        io.nap(wait.max(1));
        if !io.running() {
            return;
        }
        let fi = candidates[io.rng.gen_range(0..candidates.len())];
        let f = &sh.files[fi];
        let cur = f.page_count();
        let step = io
            .rng
            .gen_range(ch.extends.clone())
            .saturating_mul(f.cfg.increment_mb)
            .saturating_mul(files::PAGES_PER_MB);
        let floor = f.cfg.initial_mb.saturating_mul(files::PAGES_PER_MB);
        let can_grow = cur < f.max_pages;
        let can_shrink = f.cfg.shrinkable && cur > floor;
        let grow = match (can_grow, can_shrink) {
            (true, true) => io.rng.gen_bool(0.5),
            (g, s) if g || s => g,
            _ => continue,
        };
        if grow {
            let new = cur.saturating_add(step).min(f.max_pages);
            match files::resize(f, cur, new, sh.cfg.stamp_files) {
                Ok(()) => sh.bump_resize(true),
                Err(e) => sh.warn(format!(
                    "ShrinkUser: growing {} failed: {e:#}",
                    f.path.display()
                )),
            }
        } else {
            let new = cur.saturating_sub(step).max(floor);
            // New users see the smaller size at once; wait for those inside the tail.
            f.pages.store(new, Ordering::Release);
            let held = f.latch_unchecked(new, cur - new);
            for p in new..cur {
                let p = p as usize;
                f.gens[p].store(0, Ordering::Release);
                if f.dirty[p].swap(0, Ordering::AcqRel) != 0 {
                    sh.dirty_count.fetch_sub(1, Ordering::AcqRel);
                }
            }
            if let Err(e) = files::resize(f, cur, new, false) {
                sh.warn(format!(
                    "ShrinkUser: shrinking {} failed: {e:#}",
                    f.path.display()
                ));
            } else {
                sh.bump_resize(false);
            }
            drop(held);
        }
    }
}

/// Writes dirty pages of data file `fi` in [from, to), in gather writes of
/// up to CHECKPOINT_RUN pages, until `enough()` says stop. Returns pages written.
pub fn flush_file(
    io: &mut UserIo,
    fi: usize,
    from: u64,
    to: u64,
    enough: &dyn Fn() -> bool,
) -> u64 {
    let sh = io.sh.clone();
    let f = &sh.files[fi];
    let mut written = 0;
    let mut p = from;
    while p < to.min(f.page_count()) {
        if enough() {
            break;
        }
        if f.dirty[p as usize].load(Ordering::Acquire) == 0 {
            p += 1;
            continue;
        }
        let mut end = p;
        while end < to.min(f.page_count())
            && end - p < CHECKPOINT_RUN
            && f.dirty[end as usize].load(Ordering::Acquire) != 0
        {
            end += 1;
        }
        if let Some(_latch) = f.latch(p, end - p) {
            // Under the latches: write the pages still dirty, run by run.
            let mut q = p;
            while q < end {
                if f.dirty[q as usize].load(Ordering::Acquire) == 0 {
                    q += 1;
                    continue;
                }
                let mut e = q;
                let mut gens = Vec::new();
                while e < end && f.dirty[e as usize].load(Ordering::Acquire) != 0 {
                    gens.push(f.dirty[e as usize].load(Ordering::Acquire));
                    e += 1;
                }
                let ok = io.write_pages(fi, q, &gens);
                for (k, page) in (q..e).enumerate() {
                    let page = page as usize;
                    f.gens[page]
                        .store(if ok[k] { gens[k] } else { UNKNOWN_GEN }, Ordering::Release);
                    f.dirty[page].store(0, Ordering::Release);
                    sh.dirty_count.fetch_sub(1, Ordering::AcqRel);
                }
                written += gens.len() as u64;
                q = e;
            }
        }
        p = end;
    }
    written
}

/// Checkpoint: writes every dirty page of every data file.
pub fn checkpoint_all(io: &mut UserIo) -> u64 {
    let sh = io.sh.clone();
    let mut n = 0;
    for &fi in &sh.data {
        let stop = || sh.stop.load(Ordering::Relaxed);
        n += flush_file(io, fi, 0, u64::MAX, &stop);
    }
    n
}

/// The checkpoint thread of the timed run: a checkpoint every `every`.
pub fn checkpoint_thread(mut io: UserIo, every: Duration) {
    while io.running() {
        io.nap(every.as_millis() as u64);
        if !io.running() {
            break;
        }
        checkpoint_all(&mut io);
    }
}

/// The lazy writer: keeps dirty pages below half the buffer pool once they
/// pass three quarters of it, writing from a rotating position.
pub fn lazy_writer(mut io: UserIo) {
    let sh = io.sh.clone();
    let hi = sh.pool_pages * 3 / 4;
    let lo = sh.pool_pages / 2;
    let mut di = 0usize;
    let mut pos = 0u64;
    while io.running() {
        if sh.dirty_count.load(Ordering::Acquire) <= hi {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        let fi = sh.data[di % sh.data.len()];
        let enough =
            || sh.dirty_count.load(Ordering::Acquire) <= lo || sh.stop.load(Ordering::Relaxed);
        let end = (pos + 4096).min(sh.files[fi].page_count());
        flush_file(&mut io, fi, pos, end, &enough);
        pos = end;
        if pos >= sh.files[fi].page_count() {
            pos = 0;
            di += 1;
        }
    }
}

/// Initial update: every page of every data file gets a new generation
/// (logged first), flushed whenever half the buffer pool is dirty.
pub fn initial_update(cp: &mut UserIo) {
    let sh = cp.sh.clone();
    for &fi in &sh.data {
        let f = &sh.files[fi];
        let mut p = 0;
        while p < f.page_count() && !sh.stop.load(Ordering::Relaxed) {
            let n = CHECKPOINT_RUN.min(f.page_count() - p);
            if let Some(_l) = f.latch(p, n) {
                if !sh.log.append_and_wait(n * 64) {
                    return;
                }
                dirty_pages(cp, fi, p, n);
            }
            p += n;
            if sh.dirty_count.load(Ordering::Acquire) >= sh.pool_pages / 2 {
                checkpoint_all(cp);
            }
        }
    }
}

/// Full audit: reads and verifies every page of every data file.
pub fn full_audit(io: &mut UserIo) -> u64 {
    let sh = io.sh.clone();
    let mut pages = 0;
    for &fi in &sh.data {
        let f = &sh.files[fi];
        let mut p = 0;
        while p < f.page_count() && !sh.stop.load(Ordering::Relaxed) {
            let n = 64.min(f.page_count() - p);
            if let Some(_l) = f.latch(p, n) {
                read_range(io, fi, p, n, |_, _| true);
            }
            pages += n;
            p += n;
        }
    }
    pages
}

/// The display monitor: every second, warns about I/Os in flight for more
/// than `threshold` (SQLIOSim: "N IO requests are outstanding for more than 15 sec").
pub fn monitor(
    sh: std::sync::Arc<super::Shared>,
    threshold: Duration,
    done: &std::sync::atomic::AtomicBool,
) {
    let mut last_warn = 0u64;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
        let now = now_ns();
        let list = sh.inflight.lock().expect("inflight lock").clone();
        let stuck = stuck_ios(
            now,
            u64::try_from(threshold.as_nanos()).unwrap_or(u64::MAX),
            list.iter().map(|i| {
                (
                    i.since_ns.load(Ordering::Relaxed),
                    i.count.load(Ordering::Relaxed),
                )
            }),
        );
        if stuck > 0 && now - last_warn >= 1_000_000_000 {
            last_warn = now;
            sh.long_io_warnings.fetch_add(1, Ordering::Relaxed);
            sh.warn(format!(
                "{stuck} IO requests are outstanding for more than {} sec.",
                threshold.as_secs()
            ));
        }
    }
}

/// I/Os started more than `threshold_ns` before `now`, from (start, count) pairs.
pub fn stuck_ios(now: u64, threshold_ns: u64, inflight: impl Iterator<Item = (u64, u64)>) -> u64 {
    inflight
        .filter(|&(since, n)| since != 0 && n > 0 && now.saturating_sub(since) > threshold_ns)
        .map(|(_, n)| n)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stuck_ios_counts_old_batches_only() {
        let s = 1_000_000_000u64;
        let v = vec![(100 * s, 3), (0, 5), (120 * s, 2), (90 * s, 0)];
        assert_eq!(stuck_ios(116 * s, 15 * s, v.into_iter()), 3);
    }
}
