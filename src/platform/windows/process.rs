//! The calling thread and process on Windows: CPU times, CPU affinity, I/O priority.

use std::io;

use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentThread, GetProcessAffinityMask, GetProcessTimes, GetThreadTimes,
    SetThreadAffinityMask,
};

fn secs(t: FILETIME) -> f64 {
    ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)) as f64 / 1e7
}

/// User and system (kernel) CPU seconds of the calling thread or of the process.
pub fn cpu_times(thread: bool) -> (f64, f64) {
    let z = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (z(), z(), z(), z());
    // SAFETY: pseudo-handles of this thread/process; the four outputs are live FILETIMEs.
    let ok = unsafe {
        if thread {
            GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u)
        } else {
            GetProcessTimes(GetCurrentProcess(), &mut c, &mut e, &mut k, &mut u)
        }
    };
    if ok == 0 {
        return (0.0, 0.0);
    }
    (secs(u), secs(k))
}

/// CPUs this process may run on (its affinity mask: the first 64), in order.
pub fn allowed_cpus() -> Vec<usize> {
    let (mut proc_mask, mut sys_mask) = (0usize, 0usize);
    // SAFETY: this process's pseudo-handle; both outputs are live usizes.
    if unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut proc_mask, &mut sys_mask) } == 0 {
        return Vec::new();
    }
    (0..usize::BITS as usize)
        .filter(|b| proc_mask & (1 << b) != 0)
        .collect()
}

/// Restricts the calling thread to a set of CPUs (the first 64).
pub fn pin_to_cpus(cpus: &[usize]) -> io::Result<()> {
    let mut mask = 0usize;
    for &c in cpus {
        if c >= usize::BITS as usize {
            return Err(io::Error::from_raw_os_error(super::errno::EINVAL));
        }
        mask |= 1 << c;
    }
    // SAFETY: this thread's pseudo-handle and a mask.
    if unsafe { SetThreadAffinityMask(GetCurrentThread(), mask) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// I/O priority classes are a Linux notion (DiskSpd's `-I` on Windows sets
/// a hint per file handle, which iosim does not do yet).
pub fn set_io_priority(_value: u32) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "I/O priorities (DiskSpd -I) are not applied on Windows yet: drop -I",
    ))
}

/// See [`set_io_priority`].
pub fn io_priority() -> io::Result<u32> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Never on Windows: the tests that need root (loop devices) are Linux's.
pub fn is_root() -> bool {
    false
}
