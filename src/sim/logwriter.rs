//! The log writer: users append log records and wait until they are hard
//! (write-ahead logging); one thread packs pending records into
//! sector-aligned log blocks (at most 60 KiB, SQL Server's largest log
//! write) and writes them sequentially, wrapping around the log file(s).
//! Every block written is remembered so the end-of-cycle audit can read the
//! log back and check each block's sequence number and checksum.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};

use super::io::UserIo;
use super::{ErrorRecord, Shared, UserKind};
use crate::verify::{self, ErrorClass, Retried, HEADER, MAX_LOG_BLOCK};

/// Log state shared by users and the writer.
#[derive(Default)]
pub struct LogShared {
    q: Mutex<LogQueue>,
    writer_cv: Condvar,
    user_cv: Condvar,
    /// Blocks on disk per log file: offset -> (sequence, length).
    pub blocks: Mutex<Vec<BTreeMap<u64, (u64, usize)>>>,
}

#[derive(Default)]
struct LogQueue {
    /// Bytes appended (the next LSN).
    appended: u64,
    /// Bytes hard on disk (or given up on after an error).
    hardened: u64,
    /// Records appended but not yet written.
    records: u32,
    stopping: bool,
}

impl LogShared {
    /// Appends a record of `bytes` and waits until it is hard. Returns false
    /// when the log writer has stopped.
    pub fn append_and_wait(&self, bytes: u64) -> bool {
        let mut q = self.q.lock().expect("log lock");
        if q.stopping {
            return false;
        }
        q.appended += bytes;
        q.records += 1;
        let lsn = q.appended;
        self.writer_cv.notify_one();
        while q.hardened < lsn && !q.stopping {
            q = self.user_cv.wait(q).expect("log lock");
        }
        q.hardened >= lsn
    }

    /// Tells the writer to finish what is queued and exit.
    pub fn stop(&self) {
        let mut q = self.q.lock().expect("log lock");
        q.stopping = true;
        self.writer_cv.notify_all();
        self.user_cv.notify_all();
    }
}

/// The log writer thread's body.
pub fn run(sh: Arc<Shared>) -> anyhow::Result<()> {
    let mut io = UserIo::new(&sh, UserKind::LogWriter, 1, 1, MAX_LOG_BLOCK)?;
    let logs = sh.logs.clone();
    let mut seq = 0u64;
    let mut cur = 0usize; // which log file
    let mut pos = 0u64; // offset in it
    loop {
        let (take, records) = {
            let mut q = sh.log.q.lock().expect("log lock");
            while q.appended == q.hardened && !q.stopping {
                q = sh.log.writer_cv.wait(q).expect("log lock");
            }
            if q.appended == q.hardened && q.stopping {
                return Ok(());
            }
            let pending = q.appended - q.hardened;
            let take = pending.min((MAX_LOG_BLOCK - HEADER) as u64);
            let r = q.records;
            q.records = 0;
            (take, r)
        };
        let fi = logs[cur];
        let f = &sh.files[fi];
        let align = f.align.max(512) as usize;
        let len = (HEADER + take as usize).div_ceil(align) * align;
        let len = len.min(MAX_LOG_BLOCK / align * align);
        let size = f.page_count() * verify::PAGE_SIZE as u64;
        if pos + len as u64 > size {
            // Wrap to the next log file (or the start of this one).
            cur = (cur + 1) % logs.len();
            pos = 0;
            continue;
        }
        seq += 1;
        verify::build_log_block(io.engine.buffer(0), sh.cfg.seed, seq, len, records);
        let r = io.write_raw(fi, pos, len);
        {
            let mut blocks = sh.log.blocks.lock().expect("log blocks lock");
            let map = &mut blocks[cur];
            // Forget blocks this one overwrites.
            let end = pos + len as u64;
            let stale: Vec<u64> = map
                .range(..end)
                .filter(|(&o, &(_, l))| o + l as u64 > pos)
                .map(|(&o, _)| o)
                .collect();
            for o in stale {
                map.remove(&o);
            }
            if r == len as i32 {
                map.insert(pos, (seq, len));
            }
        }
        if r == len as i32 {
            sh.log_blocks_written.fetch_add(1, Ordering::Relaxed);
        } else {
            let detail = if r < 0 {
                format!(
                    "log write failed: {}",
                    std::io::Error::from_raw_os_error(-r)
                )
            } else {
                format!("short log write: {r} of {len} bytes")
            };
            let fnd = verify::Finding {
                class: ErrorClass::IoError,
                detail,
            };
            let page = pos / verify::SECTOR as u64;
            let rec = ErrorRecord::new(&io.name, f, page, pos, "write", fnd.settle(Retried::No));
            sh.report(rec, None);
        }
        pos += len as u64;
        let mut q = sh.log.q.lock().expect("log lock");
        q.hardened += take;
        sh.log.user_cv.notify_all();
    }
}

/// Reads back every log block remembered and checks it. Returns blocks checked.
pub fn audit(io: &mut UserIo) -> u64 {
    let sh = io.sh.clone();
    let blocks: Vec<(usize, u64, u64, usize)> = {
        let b = sh.log.blocks.lock().expect("log blocks lock");
        b.iter()
            .enumerate()
            .flat_map(|(i, m)| m.iter().map(move |(&o, &(s, l))| (i, o, s, l)))
            .collect()
    };
    let mut n = 0;
    for (li, off, seq, len) in blocks {
        if sh.stop.load(Ordering::Relaxed) {
            break;
        }
        let fi = sh.logs[li];
        n += 1;
        let Some(fnd) = read_log_block(io, fi, off, seq, len) else {
            sh.log_blocks_verified.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let received = io.engine.buffer(0)[..len].to_vec();
        // Re-read as a page is (ReadRetries), so a read that returned wrong
        // data once is told from a block damaged on the storage.
        let retried = verify::retry(sh.cfg.read_retries, |_| {
            Some(read_log_block(io, fi, off, seq, len).is_none())
        });
        let mut expected = vec![0u8; len];
        verify::build_log_block(
            &mut expected,
            sh.cfg.seed,
            seq,
            len,
            verify::read_log_header(&received).records,
        );
        let fnd = verify::Finding {
            detail: format!("log block {seq} ({len} bytes): {}", fnd.detail),
            ..fnd
        };
        let page = off / verify::SECTOR as u64;
        let rec = ErrorRecord::new(
            &io.name,
            &sh.files[fi],
            page,
            off,
            "read",
            fnd.settle(retried),
        );
        sh.report(rec, Some((&expected, &received)));
    }
    n
}

/// Reads log block `seq` (`len` bytes at `off` of file `fi`) into slot 0 and
/// checks it: what is wrong with it, if anything.
fn read_log_block(
    io: &mut UserIo,
    fi: usize,
    off: u64,
    seq: u64,
    len: usize,
) -> Option<verify::Finding> {
    verify::prestamp(&mut io.engine.buffer(0)[..len]);
    let r = io.read_raw(fi, off, len);
    if r < 0 {
        Some(verify::Finding {
            class: ErrorClass::IoError,
            detail: format!("log read failed: {}", std::io::Error::from_raw_os_error(-r)),
        })
    } else if (r as usize) < len {
        Some(verify::Finding {
            class: ErrorClass::ShortRead,
            detail: format!("log read returned {r} of {len} bytes"),
        })
    } else if io.sh.cfg.verify {
        let seed = io.sh.cfg.seed;
        verify::check_log_block(&io.engine.buffer(0)[..len], seed, seq, len).err()
    } else {
        None
    }
}
