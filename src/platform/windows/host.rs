//! The machine on Windows: its version (`RtlGetVersion`, which reports the
//! real one, unlike `GetVersionEx`), physical memory
//! (`GlobalMemoryStatusEx`) and the CPU's name (the registry's
//! `ProcessorNameString`, as Task Manager shows it).

/// `Windows 10.0 (build 19045)`; None where Windows would not say.
pub fn os_release() -> Option<String> {
    use windows_sys::Win32::System::SystemInformation::OSVERSIONINFOW;
    // SAFETY: OSVERSIONINFOW is plain data; its size is set before the call.
    let mut v: OSVERSIONINFOW = unsafe { std::mem::zeroed() };
    v.dwOSVersionInfoSize = std::mem::size_of::<OSVERSIONINFOW>() as u32;
    // SAFETY: `v` is a live OSVERSIONINFOW with its size filled in.
    if unsafe { windows_sys::Wdk::System::SystemServices::RtlGetVersion(&mut v) } != 0 {
        return None;
    }
    Some(format!(
        "Windows {}.{} (build {})",
        v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber
    ))
}

/// (total, available) physical memory, bytes.
pub fn memory() -> Option<(u64, u64)> {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    // SAFETY: MEMORYSTATUSEX is plain data; its length is set before the call.
    let mut m: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: `m` is a live MEMORYSTATUSEX with its length filled in.
    if unsafe { GlobalMemoryStatusEx(&mut m) } == 0 {
        return None;
    }
    Some((m.ullTotalPhys, m.ullAvailPhys))
}

/// The first processor's name.
pub fn cpu_model() -> Option<String> {
    use windows_sys::Win32::System::Registry::{RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_SZ};
    let key = super::wide(std::ffi::OsStr::new(
        r"HARDWARE\DESCRIPTION\System\CentralProcessor\0",
    ));
    let name = super::wide(std::ffi::OsStr::new("ProcessorNameString"));
    let mut buf = [0u16; 256];
    let mut bytes = (buf.len() * 2) as u32;
    // SAFETY: key and value names are NUL-terminated UTF-16; `buf` holds
    // `bytes` bytes for the value.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            name.as_ptr(),
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            buf.as_mut_ptr().cast(),
            &mut bytes,
        )
    };
    if rc != 0 {
        return None;
    }
    let len = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    let s = String::from_utf16_lossy(&buf[..len]).trim().to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_machine_says_what_it_is() {
        assert!(super::os_release().unwrap().starts_with("Windows "));
        let (total, avail) = super::memory().unwrap();
        assert!(total > 0 && avail <= total, "{total} {avail}");
    }
}
