//! The calling thread and process on Linux: CPU times, CPU affinity, I/O priority.

use std::io;

/// User and system CPU seconds of the calling thread (`RUSAGE_THREAD`) or of
/// the whole process (`RUSAGE_SELF`): `getrusage`, which rustix does not wrap.
pub fn cpu_times(thread: bool) -> (f64, f64) {
    let who = if thread {
        libc::RUSAGE_THREAD
    } else {
        libc::RUSAGE_SELF
    };
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage for the call to fill; `who`
    // is one of the two values getrusage accepts for it, so it cannot fail
    // (and on failure the zeroed struct reads as 0 s).
    let ru = unsafe {
        libc::getrusage(who, ru.as_mut_ptr());
        ru.assume_init()
    };
    let s = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

/// CPUs this process may run on (its affinity), in order.
pub fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Restricts the calling thread to a set of CPUs.
pub fn pin_to_cpus(cpus: &[usize]) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for &c in cpus {
        if c >= rustix::thread::CpuSet::MAX_CPU {
            return Err(io::Error::from(rustix::io::Errno::INVAL));
        }
        set.set(c);
    }
    Ok(rustix::thread::sched_setaffinity(None, &set)?)
}

const IOPRIO_WHO_PROCESS: libc::c_int = 1;

/// Sets the calling thread's kernel I/O priority (ioprio_set(2)) to
/// `value`, the kernel's encoding (class in the top bits, level below).
pub fn set_io_priority(value: u32) -> io::Result<()> {
    // SAFETY: ioprio_set takes three integers and touches no memory of ours;
    // `who` 0 with IOPRIO_WHO_PROCESS names the calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_int,
            value as libc::c_int,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The calling thread's kernel I/O priority (ioprio_get(2)).
pub fn io_priority() -> io::Result<u32> {
    // SAFETY: ioprio_get takes two integers and touches no memory of ours.
    let got = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(got as u32)
}

/// True when the process runs as root (it may open devices, loop devices,
/// debugfs and cgroups).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}
