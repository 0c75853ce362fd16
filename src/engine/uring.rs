//! The `uring` engine: io_uring with registered files and buffers, batched
//! submission and completion, optional SQPOLL and IOPOLL.

use std::io;

use io_uring::{opcode, squeue, types, IoUring};

use super::slots::Slots;
use super::{Completion, EngineConfig, IoEngine, IoReq, Op};

/// io_uring engine.
pub struct UringEngine {
    ring: IoUring,
    /// Declared after `ring`, so the ring is dropped before its registered buffers.
    slots: Slots,
    fds: Vec<i32>,
    fixed_files: bool,
    fixed_bufs: bool,
    /// SQEs pushed but not yet submitted.
    unsubmitted: usize,
    notes: Vec<String>,
    /// iovec arrays of vectored requests, one per completion slot; each
    /// stays untouched while its request is in flight.
    iovs: Vec<Vec<libc::iovec>>,
}

// SAFETY: the iovec arrays only ever point into `buf`, owned by the engine.
unsafe impl Send for UringEngine {}

impl UringEngine {
    /// Sets up the ring, registers the files and the buffers.
    pub fn new(cfg: &EngineConfig) -> io::Result<UringEngine> {
        let slots = cfg.slots.max(1);
        let entries = (slots as u32).next_power_of_two().max(2);
        let mut builder = IoUring::builder();
        if cfg.sqpoll {
            builder.setup_sqpoll(2000);
        }
        if cfg.hipri {
            builder.setup_iopoll();
        }
        // Completions are only ever reaped by this thread.
        builder.setup_single_issuer();
        let ring = match builder.build(entries) {
            Ok(r) => r,
            // Kernels before 6.0 lack SINGLE_ISSUER: retry without it.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                let mut b = IoUring::builder();
                if cfg.sqpoll {
                    b.setup_sqpoll(2000);
                }
                if cfg.hipri {
                    b.setup_iopoll();
                }
                b.build(entries)?
            }
            Err(e) => return Err(e),
        };
        let slot_bufs = Slots::new(cfg);
        let mut notes = Vec::new();

        let fixed_files = if cfg.fds.iter().all(|&fd| fd >= 0) && !cfg.fds.is_empty() {
            match ring.submitter().register_files(&cfg.fds) {
                Ok(()) => true,
                Err(e) => {
                    notes.push(format!(
                        "io_uring: files not registered ({e}); using plain descriptors"
                    ));
                    false
                }
            }
        } else {
            false
        };

        let iovecs: Vec<libc::iovec> = (0..slots)
            .map(|i| libc::iovec {
                iov_base: slot_bufs.ptr(i).cast(),
                iov_len: slot_bufs.size(),
            })
            .collect();
        // SAFETY: the buffers live in `slots`, which the engine owns and drops
        // after the ring (field order), so they stay valid while registered.
        let fixed_bufs = match unsafe { ring.submitter().register_buffers(&iovecs) } {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!(
                    "io_uring: buffers not registered ({e}); using plain buffers"
                ));
                false
            }
        };

        Ok(UringEngine {
            ring,
            slots: slot_bufs,
            fds: cfg.fds.clone(),
            fixed_files,
            fixed_bufs,
            unsubmitted: 0,
            notes,
            iovs: (0..slots).map(|_| Vec::new()).collect(),
        })
    }

    #[inline]
    fn sqe(&self, req: &IoReq) -> squeue::Entry {
        let ptr = self.slots.ptr(req.slot as usize);
        let idx = req.slot as u16;
        macro_rules! build {
            ($fd:expr) => {
                match (req.op, self.fixed_bufs) {
                    (Op::Read, true) => opcode::ReadFixed::new($fd, ptr, req.len, idx)
                        .offset(req.offset)
                        .build(),
                    (Op::Write, true) => opcode::WriteFixed::new($fd, ptr, req.len, idx)
                        .offset(req.offset)
                        .build(),
                    (Op::Read, false) => opcode::Read::new($fd, ptr, req.len)
                        .offset(req.offset)
                        .build(),
                    (Op::Write, false) => opcode::Write::new($fd, ptr, req.len)
                        .offset(req.offset)
                        .build(),
                }
            };
        }
        let e = if self.fixed_files {
            build!(types::Fixed(req.file))
        } else {
            build!(types::Fd(self.fds[req.file as usize]))
        };
        e.user_data(u64::from(req.slot))
    }

    #[inline]
    fn drain(&mut self, out: &mut [Completion], mut n: usize) -> usize {
        let mut cq = self.ring.completion();
        while n < out.len() {
            match cq.next() {
                Some(cqe) => {
                    out[n] = Completion {
                        slot: cqe.user_data() as u32,
                        result: cqe.result(),
                    };
                    n += 1;
                }
                None => break,
            }
        }
        n
    }

    fn submit_and_wait(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => {
                    self.unsubmitted = 0;
                    return Ok(());
                }
                Err(e)
                    if e.raw_os_error() == Some(libc::EINTR)
                        || e.raw_os_error() == Some(libc::EAGAIN) =>
                {
                    continue
                }
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    // Completion queue full: the caller reaps, then retries.
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // Ring teardown after close is asynchronous and keeps registered files
        // referenced until it finishes, so a filesystem could not be unmounted
        // right after iosim exits. Unregistering is synchronous: do it first.
        if self.fixed_files {
            let _ = self.ring.submitter().unregister_files();
        }
        if self.fixed_bufs {
            let _ = self.ring.submitter().unregister_buffers();
        }
    }
}

impl IoEngine for UringEngine {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn is_sync(&self) -> bool {
        false
    }

    fn slots(&self) -> usize {
        self.slots.count()
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.slots.buffer(slot)
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> io::Result<()> {
        debug_assert!(
            (req.slot as usize) < self.slots.count() && req.len as usize <= self.slots.size()
        );
        let sqe = self.sqe(&req);
        // SAFETY: the buffer belongs to this engine and stays valid until the
        // completion is reaped; the caller does not reuse the slot before then.
        while unsafe { self.ring.submission().push(&sqe) }.is_err() {
            // Submission queue full: hand what we have to the kernel first.
            self.submit_and_wait(0)?;
        }
        self.unsubmitted += 1;
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        if self.unsubmitted > 0 {
            self.submit_and_wait(0)?;
        }
        Ok(())
    }

    fn commit_submits(&self) -> bool {
        true
    }

    #[inline]
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        let min = min.min(out.len());
        let mut n = self.drain(out, 0);
        if self.unsubmitted > 0 || n < min {
            self.submit_and_wait(min - n.min(min))?;
            n = self.drain(out, n);
            while n < min {
                self.submit_and_wait(min - n)?;
                n = self.drain(out, n);
            }
        }
        Ok(n)
    }

    fn reap_timeout(
        &mut self,
        min: usize,
        out: &mut [Completion],
        timeout_ns: u64,
    ) -> io::Result<usize> {
        let min = min.min(out.len());
        if self.unsubmitted > 0 {
            self.submit_and_wait(0)?;
        }
        let n = self.drain(out, 0);
        if n >= min || timeout_ns == 0 {
            return Ok(n);
        }
        let ts = types::Timespec::from(std::time::Duration::from_nanos(timeout_ns));
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(min - n, &args) {
            Ok(_) => {}
            // ETIME: the time is up; EINTR/EAGAIN/EBUSY: reap what there is.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) => {}
            // Kernels before 5.11 have no timed wait: wait for a completion instead.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => self.submit_and_wait(min - n)?,
            Err(e) => return Err(e),
        }
        Ok(self.drain(out, n))
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn queue_vectored(
        &mut self,
        slot: u32,
        file: u32,
        op: Op,
        offset: u64,
        iov: &[(usize, usize)],
    ) -> io::Result<()> {
        let v = &mut self.iovs[slot as usize];
        v.clear();
        for &(s, len) in iov {
            if s >= self.slots.count() || len > self.slots.size() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "bad iovec slot",
                ));
            }
            v.push(libc::iovec {
                iov_base: self.slots.ptr(s).cast(),
                iov_len: len,
            });
        }
        let (ptr, n) = (v.as_ptr(), v.len() as u32);
        macro_rules! build {
            ($fd:expr) => {
                match op {
                    Op::Read => opcode::Readv::new($fd, ptr, n).offset(offset).build(),
                    Op::Write => opcode::Writev::new($fd, ptr, n).offset(offset).build(),
                }
            };
        }
        let sqe = if self.fixed_files {
            build!(types::Fixed(file))
        } else {
            build!(types::Fd(self.fds[file as usize]))
        }
        .user_data(u64::from(slot));
        // SAFETY: the buffers and the iovec array belong to this engine and
        // stay valid and unchanged until the completion is reaped.
        while unsafe { self.ring.submission().push(&sqe) }.is_err() {
            self.submit_and_wait(0)?;
        }
        self.unsubmitted += 1;
        Ok(())
    }
}
