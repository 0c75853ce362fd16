//! The machine a run happened on: host, kernel, CPU, memory.

use serde::{Deserialize, Serialize};

/// Facts about the machine, recorded with every result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub host: String,
    /// Kernel release (`uname -r`; on Windows `Windows 10.0 (build N)`).
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cpus: usize,
    /// Physical memory, bytes.
    pub mem_total_bytes: u64,
    /// Kernel clocksource.
    pub clocksource: String,
}

/// Reads the host facts from `/proc` and `/sys`.
pub fn host_info() -> HostInfo {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    // Windows says these through its own calls (crate::platform::host).
    use crate::platform::host;
    HostInfo {
        host: hostname(),
        kernel: host::os_release().unwrap_or_else(|| read("/proc/sys/kernel/osrelease")),
        cpu_model: host::cpu_model().unwrap_or_else(|| parse_cpu_model(&read("/proc/cpuinfo"))),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        mem_total_bytes: host::memory().map_or_else(
            || parse_mem_total(&read("/proc/meminfo")),
            |(total, _)| total,
        ),
        clocksource: clocksource().unwrap_or_default(),
    }
}

/// (major, minor) of the running kernel, from `/proc/sys/kernel/osrelease`
/// (`6.18.44-fc-v669` is (6, 18)); None where it cannot be read.
pub fn kernel_version() -> Option<(u32, u32)> {
    if crate::platform::IS_WINDOWS {
        // Not Linux: no Linux kernel feature is there.
        return None;
    }
    parse_kernel_version(&std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?)
}

/// (major, minor) of a kernel release string.
pub fn parse_kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut it = release.trim().split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// The first `model name` of `/proc/cpuinfo`.
pub fn parse_cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default()
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn parse_mem_total(meminfo: &str) -> u64 {
    meminfo_bytes(meminfo, "MemTotal").unwrap_or(0)
}

/// One `Key: N kB` line of `/proc/meminfo`, in bytes.
pub fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    meminfo
        .lines()
        .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .and_then(|kib| kib.checked_mul(1024))
}

/// The kernel's current clocksource (`tsc`, `kvm-clock`, ...), if readable.
pub fn clocksource() -> Option<String> {
    if crate::platform::IS_WINDOWS {
        // Windows has no clocksource; iosim's clock there is QueryPerformanceCounter.
        return None;
    }
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
}

/// This machine's host name (`/proc/sys/kernel/hostname`; `COMPUTERNAME` on
/// Windows), `localhost` where it is empty or unreadable.
pub fn hostname() -> String {
    let h = if crate::platform::IS_WINDOWS {
        std::env::var("COMPUTERNAME").unwrap_or_default()
    } else {
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default()
    };
    let h = h.trim();
    if h.is_empty() {
        "localhost".into()
    } else {
        h.to_string()
    }
}

/// Memory the kernel estimates is available for a new workload without
/// swapping (`MemAvailable`), in bytes; None where it is not reported.
pub fn mem_available_bytes() -> Option<u64> {
    if let Some((_, available)) = crate::platform::host::memory() {
        return Some(available);
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_bytes(&meminfo, "MemAvailable")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_versions_parse() {
        assert_eq!(parse_kernel_version("6.18.44-fc-v669\n"), Some((6, 18)));
        assert_eq!(parse_kernel_version("5.10.0-28-amd64"), Some((5, 10)));
        assert_eq!(parse_kernel_version("6.1"), Some((6, 1)));
        assert_eq!(parse_kernel_version("weird"), None);
    }

    #[test]
    fn parses_fixtures() {
        assert_eq!(
            parse_cpu_model("processor\t: 0\nmodel name\t: AMD EPYC\n"),
            "AMD EPYC"
        );
        assert_eq!(
            parse_mem_total("MemTotal:       24683656 kB\nMemFree: 1 kB\n"),
            24_683_656 * 1024
        );
        assert_eq!(parse_mem_total(""), 0);
    }

    #[test]
    fn reads_this_machine() {
        let h = host_info();
        assert!(h.cpus >= 1);
        assert!(!h.kernel.is_empty());
    }
}
