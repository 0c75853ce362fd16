//! The `mmap` engine: memory-mapped I/O (DiskSpd `-Sm`, fio `ioengine=mmap`).
//!
//! Each target is mapped `MAP_SHARED` once; a read copies from the mapping
//! into the slot buffer and a write copies the other way, with no system call
//! per I/O once the pages are mapped. It goes through the page cache, so it
//! cannot be combined with direct I/O; with write-through, every write is
//! followed by `msync(MS_SYNC)` of the pages it touched.
//!
//! A file truncated under a mapping raises SIGBUS on access: do not shrink a
//! target while the mmap engine runs on it.

use std::io;
use std::os::fd::RawFd;

use super::slots::{DoneQueue, Slots};
use super::{Completion, EngineConfig, IoEngine, IoReq, Op};

struct Map {
    ptr: *mut u8,
    len: usize,
}

/// Memory-mapped I/O engine.
pub struct MmapEngine {
    maps: Vec<Map>,
    slots: Slots,
    done: DoneQueue,
    sync_writes: bool,
}

// SAFETY: the mappings are private to this engine, which one thread owns.
unsafe impl Send for MmapEngine {}

impl MmapEngine {
    /// Maps every file of `cfg` whole. `writable` maps them for writing; `sync_writes` msyncs each write.
    pub fn new(cfg: &EngineConfig, writable: bool, sync_writes: bool) -> io::Result<MmapEngine> {
        let mut maps = Vec::new();
        for &fd in &cfg.fds {
            let len = fd_size(fd)? as usize;
            if len == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "cannot map an empty file",
                ));
            }
            let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
            // SAFETY: a fresh shared mapping of an open descriptor; checked for MAP_FAILED.
            let ptr =
                unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            // Random access: no read-ahead around each touched page.
            // SAFETY: advising our own mapping.
            unsafe { libc::madvise(ptr, len, libc::MADV_RANDOM) };
            maps.push(Map {
                ptr: ptr.cast(),
                len,
            });
        }
        Ok(MmapEngine {
            maps,
            slots: Slots::new(cfg),
            done: DoneQueue::new(cfg.slots),
            sync_writes,
        })
    }
}

fn fd_size(fd: RawFd) -> io::Result<u64> {
    // SAFETY: zeroed stat is a valid output buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and buffer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
        return crate::blockdev::device_size_fd(fd);
    }
    Ok(st.st_size as u64)
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for m in &self.maps {
            // SAFETY: unmapping what new() mapped.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }
}

impl IoEngine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
    }

    fn is_sync(&self) -> bool {
        true
    }

    fn slots(&self) -> usize {
        self.slots.count()
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.slots.buffer(slot)
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> io::Result<()> {
        let Some(m) = self.maps.get(req.file as usize) else {
            self.done.push(req.slot, -libc::EBADF);
            return Ok(());
        };
        let len = req.len as usize;
        let off = req.offset as usize;
        let result =
            if off.checked_add(len).is_none_or(|end| end > m.len) || len > self.slots.size() {
                -libc::EINVAL
            } else {
                // SAFETY: off+len is inside the mapping and len fits the slot buffer.
                unsafe {
                    let map = m.ptr.add(off);
                    let buf = self.slots.ptr(req.slot as usize);
                    match req.op {
                        Op::Read => std::ptr::copy_nonoverlapping(map, buf, len),
                        Op::Write => {
                            std::ptr::copy_nonoverlapping(buf, map, len);
                            if self.sync_writes {
                                let page = 4096usize;
                                let start = off - off % page;
                                let r = libc::msync(
                                    m.ptr.add(start).cast(),
                                    off + len - start,
                                    libc::MS_SYNC,
                                );
                                if r != 0 {
                                    let e = io::Error::last_os_error()
                                        .raw_os_error()
                                        .unwrap_or(libc::EIO);
                                    self.done.push(req.slot, -e);
                                    return Ok(());
                                }
                            }
                        }
                    }
                }
                req.len as i32
            };
        self.done.push(req.slot, result);
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> io::Result<usize> {
        Ok(self.done.reap(out))
    }
}
