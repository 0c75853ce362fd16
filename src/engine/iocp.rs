//! The `iocp` engine (Windows): overlapped `ReadFile`/`WriteFile` on the
//! thread's own handles, bound to one I/O completion port per thread, with
//! completions reaped in batches by `GetQueuedCompletionStatusEx`: DiskSpd's
//! engine, and the default on Windows.
//!
//! Each engine reopens the handles it is given (`ReOpenFile`, with the
//! caching mode the caller opened them with: `FILE_FLAG_NO_BUFFERING`,
//! `FILE_FLAG_WRITE_THROUGH`), so its port is the only one bound to them:
//! a handle can be bound to one port in its life, several engines may be
//! given the same file (the simulator's users), and the caller's own
//! synchronous reads on the original handle never post to a port.

use std::io;
use std::mem::ManuallyDrop;

use windows_sys::Wdk::Storage::FileSystem::{FileModeInformation, NtQueryInformationFile};
use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_HANDLE_EOF, ERROR_IO_PENDING, GENERIC_READ, GENERIC_WRITE,
    HANDLE, INVALID_HANDLE_VALUE, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{
    ReOpenFile, ReadFile, WriteFile, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED,
    FILE_FLAG_WRITE_THROUGH, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
};
use windows_sys::Win32::System::IO::{
    CancelIoEx, CreateIoCompletionPort, GetOverlappedResult, GetQueuedCompletionStatusEx,
    IO_STATUS_BLOCK, OVERLAPPED, OVERLAPPED_ENTRY,
};

use super::slots::{DoneQueue, Slots};
use super::{Capabilities, Completion, EngineConfig, IoEngine, IoReq, Op};
use crate::workload::EngineKind;

/// `FILE_MODE_INFORMATION` flags (ntifs.h) of the caller's handle.
const FILE_WRITE_THROUGH: u32 = 0x2;
const FILE_NO_INTERMEDIATE_BUFFERING: u32 = 0x8;

/// `FILE_MODE_INFORMATION` flags of a handle opened for synchronous I/O
/// (without `FILE_FLAG_OVERLAPPED`).
const FILE_SYNCHRONOUS_IO: u32 = 0x10 | 0x20;

/// The handle's `FILE_MODE_INFORMATION`; None when Windows does not say.
fn mode(h: HANDLE) -> Option<u32> {
    let mut mode = 0u32;
    // SAFETY: IO_STATUS_BLOCK is plain data; all zeros is a valid initial state.
    let mut iosb: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
    // SAFETY: `mode` is a live FILE_MODE_INFORMATION (one u32) for the call to fill.
    let st = unsafe {
        NtQueryInformationFile(
            h,
            &mut iosb,
            (&mut mode as *mut u32).cast(),
            4,
            FileModeInformation,
        )
    };
    (st >= 0).then_some(mode)
}

/// The caching flags the handle `h` was opened with; None when Windows does not say.
fn mode_flags(h: HANDLE) -> Option<u32> {
    let mode = mode(h)?;
    let mut flags = 0;
    if mode & FILE_NO_INTERMEDIATE_BUFFERING != 0 {
        flags |= FILE_FLAG_NO_BUFFERING;
    }
    if mode & FILE_WRITE_THROUGH != 0 {
        flags |= FILE_FLAG_WRITE_THROUGH;
    }
    Some(flags)
}

/// A handle of this engine's own on the file `h`, for overlapped I/O.
fn reopen(h: HANDLE, cfg: &EngineConfig) -> io::Result<HANDLE> {
    let fallback = if cfg.sync_writes {
        FILE_FLAG_WRITE_THROUGH
    } else {
        0
    };
    let flags = mode_flags(h).unwrap_or(fallback) | FILE_FLAG_OVERLAPPED;
    let share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    for access in [GENERIC_READ | GENERIC_WRITE, GENERIC_READ] {
        // SAFETY: `h` is a live handle the caller keeps open for the call.
        let r = unsafe { ReOpenFile(h, access, share, flags) };
        if r != INVALID_HANDLE_VALUE && !r.is_null() {
            return Ok(r);
        }
    }
    Err(io::Error::last_os_error())
}

/// No leader: a slot's own request.
const NONE: u32 = u32::MAX;

/// IOCP engine.
pub struct IocpEngine {
    port: HANDLE,
    /// The handles the I/O goes through, one per file of the config: the
    /// engine's own (reopened), or the caller's where it could not be reopened.
    files: Vec<HANDLE>,
    /// Whether each of `files` is the engine's own, to close.
    owned: Vec<bool>,
    /// One OVERLAPPED per slot, at a fixed address while I/O is in flight.
    ovl: Box<[OVERLAPPED]>,
    /// Completions taken from the port in one call.
    entries: Box<[OVERLAPPED_ENTRY]>,
    /// Requests handed to Windows whose packets have not been taken yet.
    inflight: usize,
    /// Requests that failed as they were issued (no packet comes for them).
    failed: DoneQueue,
    /// A vectored request is one overlapped request per piece; per slot, the
    /// slot its request completes as (`NONE` for a plain request), and at
    /// that slot the pieces still in flight and the bytes (or the first
    /// error) so far.
    leader: Box<[u32]>,
    pieces_left: Box<[u32]>,
    sum: Box<[i32]>,
    /// Dropped after every I/O is complete (see Drop).
    slots: ManuallyDrop<Slots>,
}

// SAFETY: the handles and the OVERLAPPEDs are owned by the engine and used
// only by the thread that owns it at a time.
unsafe impl Send for IocpEngine {}

impl IocpEngine {
    /// Creates the port, reopens and binds the files, and allocates the buffers.
    pub fn new(cfg: &EngineConfig) -> io::Result<IocpEngine> {
        let slots = cfg.slots.max(1);
        // SAFETY: a new port, bound to no file yet, for one thread.
        let port =
            unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, std::ptr::null_mut(), 0, 1) };
        if port.is_null() {
            return Err(io::Error::last_os_error());
        }
        let mut e = IocpEngine {
            port,
            files: Vec::with_capacity(cfg.fds.len()),
            owned: Vec::with_capacity(cfg.fds.len()),
            // SAFETY: OVERLAPPED is plain data; zeroed is its initial state.
            ovl: (0..slots).map(|_| unsafe { std::mem::zeroed() }).collect(),
            // SAFETY: OVERLAPPED_ENTRY is plain data.
            entries: (0..slots).map(|_| unsafe { std::mem::zeroed() }).collect(),
            inflight: 0,
            failed: DoneQueue::new(slots),
            leader: vec![NONE; slots].into_boxed_slice(),
            pieces_left: vec![0; slots].into_boxed_slice(),
            sum: vec![0; slots].into_boxed_slice(),
            slots: ManuallyDrop::new(Slots::new(cfg)?),
        };
        for (i, &fd) in cfg.fds.iter().enumerate() {
            let given = crate::platform::io::handle(fd);
            // A file opened without sharing cannot be reopened: its own
            // handle is bound instead (it must then be overlapped, and bound
            // to no other port).
            let (h, own) = match reopen(given, cfg) {
                Ok(h) => (h, true),
                Err(e) if mode(given).is_some_and(|m| m & FILE_SYNCHRONOUS_IO != 0) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("a file opened for synchronous I/O without sharing cannot be reopened for overlapped I/O ({e})"),
                    ))
                }
                Err(_) => (given, false),
            };
            e.files.push(h);
            e.owned.push(own);
            // SAFETY: binds the handle to our port; the key is the file's index.
            let r = unsafe { CreateIoCompletionPort(h, e.port, i, 0) };
            if r.is_null() {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(e)
    }

    fn take(&mut self, out: &mut [Completion], n: usize, removed: usize) -> usize {
        let base = self.ovl.as_ptr() as usize;
        let size = std::mem::size_of::<OVERLAPPED>();
        let mut k = n;
        for e in 0..removed {
            let (at, status, bytes, key) = {
                let ent = &self.entries[e];
                (
                    ent.lpOverlapped as usize,
                    ent.Internal,
                    ent.dwNumberOfBytesTransferred,
                    ent.lpCompletionKey,
                )
            };
            // A packet that is not one of our OVERLAPPEDs: ignore it.
            if at < base || (at - base) % size != 0 || (at - base) / size >= self.ovl.len() {
                continue;
            }
            let slot = (at - base) / size;
            self.inflight -= 1;
            let result = if status == 0 {
                bytes as i32
            } else {
                let file = self.files.get(key).copied();
                let mut got = 0u32;
                // SAFETY: the I/O of this OVERLAPPED is complete; this only
                // converts its status into a Win32 error (no wait).
                let ok = file.is_some_and(|f| unsafe {
                    GetOverlappedResult(f, &self.ovl[slot], &mut got, 0) != 0
                });
                if ok {
                    got as i32
                } else {
                    // SAFETY: reads the calling thread's last error.
                    match unsafe { GetLastError() } {
                        ERROR_HANDLE_EOF => 0,
                        err => -(err as i32),
                    }
                }
            };
            let lead = self.leader[slot];
            if lead == NONE {
                out[k] = Completion {
                    slot: slot as u32,
                    result,
                };
                k += 1;
                continue;
            }
            self.leader[slot] = NONE;
            let l = lead as usize;
            if let Some(done) = self.piece_done(l, result) {
                out[k] = Completion {
                    slot: lead,
                    result: done,
                };
                k += 1;
            }
        }
        k
    }

    /// Counts a piece of the vectored request completing as `lead`; its
    /// result once the last piece is in.
    fn piece_done(&mut self, lead: usize, result: i32) -> Option<i32> {
        if self.sum[lead] >= 0 {
            self.sum[lead] = if result < 0 {
                result
            } else {
                self.sum[lead] + result
            };
        }
        self.pieces_left[lead] -= 1;
        (self.pieces_left[lead] == 0).then_some(self.sum[lead])
    }

    /// Issues one overlapped request; false (with `err` set) when Windows refused it.
    fn issue(&mut self, slot: usize, file: u32, op: Op, offset: u64, len: u32) -> Result<(), i32> {
        let ptr = self.slots.ptr_mut(slot);
        let h = self.files[file as usize];
        let ov = &mut self.ovl[slot];
        ov.Internal = 0;
        ov.InternalHigh = 0;
        ov.Anonymous.Anonymous.Offset = offset as u32;
        ov.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
        ov.hEvent = std::ptr::null_mut();
        // SAFETY: the slot's buffer (len bytes) and its OVERLAPPED belong to
        // this engine and stay put until the packet is taken (or Drop waits).
        let ok = unsafe {
            match op {
                Op::Read => ReadFile(h, ptr, len, std::ptr::null_mut(), ov),
                Op::Write => WriteFile(h, ptr, len, std::ptr::null_mut(), ov),
                Op::Fsync | Op::Fdatasync => unreachable!("queue flushes synchronously"),
            }
        };
        // SAFETY: reads the calling thread's last error.
        if ok != 0 || unsafe { GetLastError() } == ERROR_IO_PENDING {
            // Done at once or pending, a packet comes either way.
            self.inflight += 1;
            return Ok(());
        }
        // SAFETY: as above.
        Err(match unsafe { GetLastError() } {
            ERROR_HANDLE_EOF => 0,
            err => -(err as i32),
        })
    }

    /// Takes completions until `min` are in `out` (or the wait of
    /// `timeout_ms` ends: `u32::MAX` waits for ever).
    fn wait(&mut self, min: usize, out: &mut [Completion], timeout_ms: u32) -> io::Result<usize> {
        let mut n = self.failed.reap(out);
        while n < out.len() && self.inflight > 0 && (n < min || n == 0) {
            let room = (out.len() - n).min(self.entries.len()) as u32;
            let mut removed = 0u32;
            let wait = if n >= min { 0 } else { timeout_ms };
            // SAFETY: `entries` holds `room` entries for the call to fill.
            let ok = unsafe {
                GetQueuedCompletionStatusEx(
                    self.port,
                    self.entries.as_mut_ptr(),
                    room,
                    &mut removed,
                    wait,
                    0,
                )
            };
            if ok == 0 {
                // SAFETY: reads the calling thread's last error.
                if unsafe { GetLastError() } == WAIT_TIMEOUT {
                    break;
                }
                return Err(io::Error::last_os_error());
            }
            n = self.take(out, n, removed as usize);
            if timeout_ms != u32::MAX {
                break;
            }
        }
        Ok(n)
    }
}

impl IoEngine for IocpEngine {
    fn name(&self) -> &'static str {
        "iocp"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::of(EngineKind::Iocp)
    }

    fn slots(&self) -> usize {
        self.slots.count()
    }

    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.slots.buffer(slot)
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> io::Result<()> {
        if req.op.is_flush() {
            // FlushFileBuffers cannot be overlapped: it runs here, and its
            // result comes from the next reap (as an immediate failure would).
            let h = self.files[req.file as usize];
            // SAFETY: a flush touches no buffer; the handle is this engine's.
            let r = unsafe { crate::platform::io::pio(h as _, req.op, std::ptr::null_mut(), 0, 0) };
            self.failed.push(req.slot, r);
            return Ok(());
        }
        let len = (req.len as usize).min(self.slots.size()) as u32;
        if let Err(r) = self.issue(req.slot as usize, req.file, req.op, req.offset, len) {
            self.failed.push(req.slot, r);
        }
        Ok(())
    }

    /// One overlapped request per piece, in order from `offset`; the
    /// request completes as `slot` once every piece has (Windows'
    /// `ReadFileScatter`/`WriteFileGather` want one system page per piece,
    /// which a database page of 8 KiB is not).
    fn queue_vectored(
        &mut self,
        slot: u32,
        file: u32,
        op: Op,
        offset: u64,
        iov: &[(usize, usize)],
    ) -> io::Result<()> {
        self.slots.check_iov(iov)?;
        let lead = slot as usize;
        self.pieces_left[lead] = iov.len() as u32;
        self.sum[lead] = 0;
        let mut at = offset;
        for &(s, len) in iov {
            self.leader[s] = slot;
            if let Err(r) = self.issue(s, file, op, at, len as u32) {
                self.leader[s] = NONE;
                if let Some(done) = self.piece_done(lead, r) {
                    self.failed.push(slot, done);
                }
            }
            at += len as u64;
        }
        Ok(())
    }

    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        self.wait(min.min(out.len()), out, u32::MAX)
    }

    fn reap_timeout(
        &mut self,
        min: usize,
        out: &mut [Completion],
        timeout_ns: u64,
    ) -> io::Result<usize> {
        let ms = timeout_ns.div_ceil(1_000_000).min(u64::from(u32::MAX - 1)) as u32;
        self.wait(min.min(out.len()), out, ms)
    }
}

impl Drop for IocpEngine {
    fn drop(&mut self) {
        // Cancel what is in flight and wait for every packet before the
        // buffers and OVERLAPPEDs are freed.
        for &h in &self.files {
            // SAFETY: our own handle; cancelling with no OVERLAPPED cancels all its I/O.
            unsafe { CancelIoEx(h, std::ptr::null()) };
        }
        let mut out = vec![Completion::default(); self.entries.len()];
        while self.inflight > 0 {
            if self.wait(1, &mut out, u32::MAX).is_err() {
                // The port failed: leak the buffers rather than free them under the device.
                return;
            }
        }
        for (&h, &own) in self.files.iter().zip(&self.owned) {
            if own {
                // SAFETY: our own handles, closed once.
                unsafe { CloseHandle(h) };
            }
        }
        // SAFETY: our own port, closed once.
        unsafe { CloseHandle(self.port) };
        // SAFETY: no I/O is in flight any more.
        unsafe { ManuallyDrop::drop(&mut self.slots) };
    }
}
