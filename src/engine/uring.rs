//! The `uring` engine: io_uring with registered files and buffers, batched
//! submission and completion, optional SQPOLL and IOPOLL.

use std::io;
use std::mem::ManuallyDrop;

use io_uring::{opcode, squeue, types, IoUring};

use super::slots::Slots;
use super::{Capabilities, Completion, EngineConfig, IoEngine, IoReq, Op};
use crate::workload::EngineKind;

/// user_data of the cancel requests that `Drop` issues (slot numbers are u32).
const CANCEL_TAG: u64 = u64::MAX;

/// io_uring engine.
///
/// Dropping it first cancels and then waits for every request still in
/// flight (see `Drop`), so the kernel never writes into freed buffers; if
/// the ring fails so that this cannot be confirmed, the buffers are leaked
/// instead of freed.
pub struct UringEngine {
    ring: IoUring,
    /// Freed by `Drop` only once nothing is in flight.
    slots: ManuallyDrop<Slots>,
    /// Requests handed to the ring (pushed) whose completion has not been reaped.
    inflight: usize,
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

/// How the ring was set up: the fastest way this kernel accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingSetup {
    /// One thread submits and reaps (SINGLE_ISSUER), and the kernel runs
    /// completion work only when that thread asks for completions
    /// (DEFER_TASKRUN, 6.1+): no interrupt of the thread per completion.
    Deferred,
    /// Completion work runs at the thread's next system call instead of
    /// interrupting it (COOP_TASKRUN, 5.19+), with SINGLE_ISSUER where the
    /// kernel has it (6.0+). `--sqpoll` always uses this: its submission
    /// thread is the issuer, so work cannot wait for this thread.
    Cooperative,
    /// None of the above (kernels before 5.19): the kernel interrupts the
    /// thread to run each completion's work, as io_uring first did.
    Plain,
}

impl RingSetup {
    /// What a user reads about how the ring ran: the kernel gave less than
    /// the fastest setup, or `--sqpoll`/`--hipri` changed who does the work.
    fn notes(self, cfg: &EngineConfig) -> Vec<String> {
        let mut notes = Vec::new();
        match self {
            RingSetup::Deferred => {}
            RingSetup::Cooperative if cfg.sqpoll => {}
            RingSetup::Cooperative => notes.push(
                "io_uring: this kernel has no deferred completion work (IORING_SETUP_DEFER_TASKRUN, Linux 6.1); \
                 completions run at the next system call instead, which costs CPU per I/O on fast devices"
                    .into(),
            ),
            RingSetup::Plain => notes.push(
                "io_uring: this kernel has neither deferred nor cooperative completion work (Linux 5.19/6.1); \
                 each completion interrupts the worker, which costs CPU per I/O on fast devices"
                    .into(),
            ),
        }
        if cfg.sqpoll {
            notes.push(
                "--sqpoll: a kernel thread per worker (iou-sqp-*) took the I/Os from the ring, polling while busy \
                 and sleeping after 2 s idle; it needs a core of its own, so on a machine with no spare core it slows the run"
                    .into(),
            );
        }
        if cfg.hipri {
            notes.push(
                "--hipri: completions were polled (IORING_SETUP_IOPOLL), not signalled by interrupts: each worker \
                 spins on its device while it waits, so a busy core per worker is by design, not a limit"
                    .into(),
            );
        }
        notes
    }
}

/// Builds the ring with the fastest setup the kernel accepts (older kernels
/// refuse newer flags with EINVAL: each refusal drops to the next setup).
fn build_ring(cfg: &EngineConfig, entries: u32) -> io::Result<(IoUring, RingSetup)> {
    // (setup, single issuer, deferred, cooperative)
    let tries: &[(RingSetup, bool, bool, bool)] = if cfg.sqpoll {
        &[
            (RingSetup::Cooperative, true, false, true),
            (RingSetup::Cooperative, false, false, true),
            (RingSetup::Plain, false, false, false),
        ]
    } else {
        &[
            (RingSetup::Deferred, true, true, true),
            (RingSetup::Cooperative, true, false, true),
            (RingSetup::Cooperative, false, false, true),
            (RingSetup::Plain, false, false, false),
        ]
    };
    let mut last = None;
    for &(setup, single, deferred, coop) in tries {
        let mut b = IoUring::builder();
        if cfg.sqpoll {
            b.setup_sqpoll(2000);
        }
        if cfg.hipri {
            b.setup_iopoll();
        }
        if single {
            b.setup_single_issuer();
        }
        if deferred {
            b.setup_defer_taskrun();
        }
        if coop {
            // TASKRUN_FLAG: the ring says when completion work is waiting,
            // so a submission also asks for it then (GETEVENTS) and the
            // completions are there to reap without another call.
            b.setup_coop_taskrun().setup_taskrun_flag();
        }
        match b.build(entries) {
            Ok(r) => return Ok((r, setup)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) if cfg.sqpoll && e.raw_os_error() == Some(libc::EPERM) => {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "--sqpoll needs CAP_SYS_NICE (root) on kernels before 5.11: drop --sqpoll or run as root",
                ))
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
}

impl UringEngine {
    /// Sets up the ring, registers the files and the buffers.
    pub fn new(cfg: &EngineConfig) -> io::Result<UringEngine> {
        let slots = cfg.slots.max(1);
        let entries = (slots as u32).next_power_of_two().max(2);
        let mut notes = Vec::new();
        let (ring, setup) = build_ring(cfg, entries)?;
        notes.extend(setup.notes(cfg));
        let mut slot_bufs = Slots::new(cfg)?;

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
                iov_base: slot_bufs.ptr_mut(i).cast(),
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
            slots: ManuallyDrop::new(slot_bufs),
            inflight: 0,
            fds: cfg.fds.clone(),
            fixed_files,
            fixed_bufs,
            unsubmitted: 0,
            notes,
            iovs: (0..slots).map(|_| Vec::new()).collect(),
        })
    }

    #[inline]
    fn sqe(&mut self, req: &IoReq) -> squeue::Entry {
        let ptr = self.slots.ptr_mut(req.slot as usize);
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
                    (Op::Fsync, _) => opcode::Fsync::new($fd).build(),
                    (Op::Fdatasync, _) => opcode::Fsync::new($fd)
                        .flags(types::FsyncFlags::DATASYNC)
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
                Some(cqe) if cqe.user_data() == CANCEL_TAG => {}
                Some(cqe) => {
                    self.inflight -= 1;
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

impl UringEngine {
    /// Cancels what can be cancelled and waits until every request handed
    /// to the ring has completed. False if the ring failed first (the
    /// kernel may then still own some buffers).
    fn quiesce(&mut self) -> bool {
        if self.inflight == 0 {
            return true;
        }
        // Hand anything still queued to the kernel, so that it can be cancelled and counted.
        if self.ring.submit().is_err() {
            return false;
        }
        // Ask the kernel to cancel every request (5.19+: one request for all);
        // reads from a device that has started them still complete normally.
        let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::any())
            .build()
            .user_data(CANCEL_TAG);
        // SAFETY: a cancel request points to no memory.
        if unsafe { self.ring.submission().push(&cancel) }.is_ok() {
            let _ = self.ring.submit();
        }
        let mut spare = [Completion::default(); 16];
        while self.inflight > 0 {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                    ) => {}
                Err(_) => return false,
            }
            self.drain(&mut spare, 0);
        }
        true
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // No request may outlive the buffers it reads into or writes from.
        let quiet = self.quiesce();
        // Ring teardown after close is asynchronous and keeps registered files
        // referenced until it finishes, so a filesystem could not be unmounted
        // right after iosim exits. Unregistering is synchronous: do it first.
        if self.fixed_files {
            let _ = self.ring.submitter().unregister_files();
        }
        if self.fixed_bufs {
            let _ = self.ring.submitter().unregister_buffers();
        }
        if quiet {
            // SAFETY: nothing is in flight, and `slots` is not used again.
            unsafe { ManuallyDrop::drop(&mut self.slots) };
        } else {
            // The kernel may still write into them: leak the buffers (and the
            // iovec arrays of vectored requests) rather than free them.
            std::mem::forget(std::mem::take(&mut self.iovs));
        }
    }
}

impl IoEngine for UringEngine {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::of(EngineKind::Uring)
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
        self.inflight += 1;
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        if self.unsubmitted > 0 {
            self.submit_and_wait(0)?;
        }
        Ok(())
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
        // Deferred completion work waiting (the ring's TASKRUN flag): the
        // enter below runs it, so its completions are there to drain.
        if self.unsubmitted > 0 || self.ring.submission().taskrun() {
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
        self.slots.check_iov(iov)?;
        self.iovs[slot as usize].clear();
        for &(s, len) in iov {
            let base = self.slots.ptr_mut(s);
            let v = &mut self.iovs[slot as usize];
            v.push(libc::iovec {
                iov_base: base.cast(),
                iov_len: len,
            });
        }
        let v = &self.iovs[slot as usize];
        let (ptr, n) = (v.as_ptr(), v.len() as u32);
        macro_rules! build {
            ($fd:expr) => {
                match op {
                    Op::Read => opcode::Readv::new($fd, ptr, n).offset(offset).build(),
                    Op::Write => opcode::Writev::new($fd, ptr, n).offset(offset).build(),
                    Op::Fsync => opcode::Fsync::new($fd).build(),
                    Op::Fdatasync => opcode::Fsync::new($fd)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build(),
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
        self.inflight += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::path::Path;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    fn cfg(fd: i32, slots: usize) -> EngineConfig {
        EngineConfig {
            fds: vec![fd],
            slots,
            slot_size: 4096,
            ..EngineConfig::default()
        }
    }

    fn read(slot: u32, offset: u64) -> IoReq {
        IoReq {
            slot,
            file: 0,
            op: Op::Read,
            offset,
            len: 4096,
        }
    }

    /// On a kernel that has it (6.1+), the ring runs completion work only
    /// when the worker asks (issue 25: without it every completion
    /// interrupted the worker, 0.69x fio's IOPS on a fast device), and says
    /// nothing about it; reads still complete.
    #[test]
    fn ring_defers_completion_work_where_the_kernel_can() {
        if let Err(e) = crate::engine::uring_available() {
            crate::testkit::skip(&format!("io_uring unavailable: {e}"));
            return;
        }
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().write_all(&[7u8; 8 * 4096]).unwrap();
        let mut e = UringEngine::new(&cfg(f.as_file().as_raw_fd(), 4)).unwrap();
        let kernel = crate::sysmon::host::kernel_version();
        if kernel >= Some((6, 1)) {
            // Anything less than the deferred setup leaves a note.
            assert!(e.notes().is_empty(), "{:?}", e.notes());
        } else {
            crate::say!("kernel {kernel:?} predates deferred completion work");
            assert!(!e.notes().is_empty());
        }
        for s in 0..4u32 {
            e.queue(read(s, u64::from(s) * 4096)).unwrap();
        }
        let mut out = [Completion::default(); 4];
        let mut got = 0;
        while got < 4 {
            got += e.reap(4 - got, &mut out[got..]).unwrap();
        }
        assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
        assert_eq!(e.buffer(0)[0], 7);
    }

    /// `--sqpoll` and `--hipri` say what they changed.
    #[test]
    fn sqpoll_and_hipri_say_what_they_did() {
        let mut c = cfg(-1, 1);
        c.sqpoll = true;
        let n = RingSetup::Cooperative.notes(&c);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].starts_with("--sqpoll: a kernel thread"), "{n:?}");
        c.sqpoll = false;
        c.hipri = true;
        let n = RingSetup::Deferred.notes(&c);
        assert!(
            n.len() == 1 && n[0].starts_with("--hipri: completions were polled"),
            "{n:?}"
        );
        assert!(RingSetup::Plain.notes(&cfg(-1, 1))[0].contains("interrupts the worker"));
    }

    /// Reads from an empty pipe would never complete: dropping the engine
    /// must cancel them (not hang waiting), and no cancelled read may take
    /// data written to the pipe afterwards.
    #[test]
    fn drop_cancels_reads_that_would_never_complete() {
        if let Err(e) = crate::engine::uring_available() {
            crate::testkit::skip(&format!("io_uring unavailable: {e}"));
            return;
        }
        let (mut r, mut w) = std::io::pipe().unwrap();
        let mut e = UringEngine::new(&cfg(r.as_raw_fd(), 4)).unwrap();
        for s in 0..4 {
            // Offset -1: "the current position", which a pipe needs.
            e.queue(read(s, u64::MAX)).unwrap();
        }
        e.commit().unwrap();
        assert_eq!(e.inflight, 4);
        drop(e);
        w.write_all(&[0x5a; 4 * 4096]).unwrap();
        drop(w);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), 4 * 4096, "a read completed after the drop");
    }

    /// A FUSE file whose reads take half a second each; a loop device over
    /// it is a slow block device whose requests cannot be cancelled once
    /// the device has them.
    const SLOWFS: &str = r#"
import errno, os, sys, threading, time
from fusepy import FUSE, FuseOSError, Operations
mnt, state = sys.argv[1], sys.argv[2]
SIZE = 1 << 20
class Slow(Operations):
    def __init__(self):
        self.mu = threading.Lock()
        self.started = 0
        self.answered = 0
    def save(self):
        with open(state + ".tmp", "w") as f:
            f.write("%d %d\n" % (self.started, self.answered))
        os.rename(state + ".tmp", state)
    def getattr(self, path, fh=None):
        if path == "/":
            return dict(st_mode=0o40755, st_nlink=2)
        if path == "/slow":
            return dict(st_mode=0o100644, st_nlink=1, st_size=SIZE)
        raise FuseOSError(errno.ENOENT)
    def readdir(self, path, fh):
        return [".", "..", "slow"]
    def open(self, path, flags):
        return 0
    def read(self, path, size, offset, fh):
        with self.mu:
            self.started += 1
            self.save()
        time.sleep(0.5)
        with self.mu:
            self.answered += 1
            self.save()
        return b"\x5a" * size
FUSE(Slow(), mnt, foreground=True, nothreads=False, direct_io=True)
"#;

    struct SlowFs {
        /// The loop device over the slow file, once attached.
        dev: Option<String>,
        child: Child,
        mnt: std::path::PathBuf,
        state: std::path::PathBuf,
        _dir: tempfile::TempDir,
    }

    impl SlowFs {
        fn start() -> Option<SlowFs> {
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 || !Path::new("/dev/fuse").exists() {
                crate::testkit::skip("needs root and /dev/fuse");
                return None;
            }
            let py = Command::new("/usr/bin/python3")
                .args(["-c", "import fusepy"])
                .status();
            if !py.is_ok_and(|s| s.success()) {
                crate::testkit::skip("needs python3-fusepy (Debian package)");
                return None;
            }
            let dir = tempfile::tempdir().unwrap();
            let mnt = dir.path().join("mnt");
            std::fs::create_dir(&mnt).unwrap();
            let script = dir.path().join("slowfs.py");
            std::fs::write(&script, SLOWFS).unwrap();
            let state = dir.path().join("state");
            let child = Command::new("/usr/bin/python3")
                .arg(&script)
                .arg(&mnt)
                .arg(&state)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut fs = SlowFs {
                dev: None,
                child,
                mnt,
                state,
                _dir: dir,
            };
            let t = Instant::now();
            while !fs.mnt.join("slow").exists() {
                assert!(
                    t.elapsed() < Duration::from_secs(20),
                    "the FUSE server did not come up"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            let out = Command::new("losetup")
                .args(["--read-only", "--find", "--show"])
                .arg(fs.mnt.join("slow"))
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    fs.dev = Some(String::from_utf8_lossy(&o.stdout).trim().to_string());
                }
                _ => {
                    crate::testkit::skip("cannot attach a loop device (losetup)");
                    return None;
                }
            }
            Some(fs)
        }

        /// (reads the server has started, reads it has answered).
        fn counts(&self) -> (u64, u64) {
            let s = std::fs::read_to_string(&self.state).unwrap_or_default();
            let mut it = s.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (it.next().unwrap_or(0), it.next().unwrap_or(0))
        }
    }

    impl Drop for SlowFs {
        fn drop(&mut self) {
            if let Some(d) = &self.dev {
                let _ = Command::new("losetup").arg("-d").arg(d).status();
            }
            let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Reads in flight on a slow device when the engine is dropped (as a
    /// worker's `?` does on an error): the drop returns only after the
    /// device has answered every one of them.
    #[test]
    fn drop_waits_for_reads_on_a_slow_device() {
        if let Err(e) = crate::engine::uring_available() {
            crate::testkit::skip(&format!("io_uring unavailable: {e}"));
            return;
        }
        let Some(fs) = SlowFs::start() else { return };
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(fs.dev.as_ref().unwrap())
            .unwrap();
        let mut e = UringEngine::new(&cfg(f.as_raw_fd(), 4)).unwrap();
        for s in 0..4u32 {
            e.buffer(s as usize).fill(0xee);
            e.queue(read(s, u64::from(s) * 65536)).unwrap();
        }
        e.commit().unwrap();
        assert_eq!(e.inflight, 4);
        // Wait until the server really holds a read.
        let t = Instant::now();
        while fs.counts().0 == 0 {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "no read reached the server"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(e);
        let (started, answered) = fs.counts();
        assert!(started >= 1);
        assert_eq!(
            started, answered,
            "the engine was dropped while the device still held reads"
        );
    }
}
