//! CPU accounting: per-core times from `/proc/stat` (on Windows, from
//! `NtQuerySystemInformation`, converted to the same lines), and this
//! process's and threads' user/system time from `getrusage`.

use serde::{Deserialize, Serialize};

use crate::platform::counters::ProcessorTimes;

/// One `cpuN` line of `/proc/stat`, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    /// Core number, or `None` for the aggregate `cpu` line.
    pub cpu: Option<usize>,
    /// user + nice.
    pub user: u64,
    /// system.
    pub system: u64,
    /// idle.
    pub idle: u64,
    /// iowait.
    pub iowait: u64,
    /// irq + softirq.
    pub irq: u64,
    /// Of `irq`, the softirq part (Windows' "DPC time").
    pub softirq: u64,
    /// steal (time a hypervisor gave to others).
    pub steal: u64,
}

impl CpuTimes {
    /// All ticks.
    pub fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.iowait + self.irq + self.steal
    }
}

/// Parses every `cpu` and `cpuN` line of `/proc/stat`.
pub fn parse_proc_stat(text: &str) -> Vec<CpuTimes> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(name) = f.next() else { continue };
        let Some(rest) = name.strip_prefix("cpu") else {
            continue;
        };
        let cpu = if rest.is_empty() {
            None
        } else {
            match rest.parse() {
                Ok(n) => Some(n),
                Err(_) => continue,
            }
        };
        let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
        let g = |i: usize| v.get(i).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal guest guest_nice
        out.push(CpuTimes {
            cpu,
            user: g(0) + g(1),
            system: g(2),
            idle: g(3),
            iowait: g(4),
            irq: g(5) + g(6),
            softirq: g(6),
            steal: g(7),
        });
    }
    out
}

/// Reads `/proc/stat` now; on Windows, the processors' times
/// ([`crate::platform::counters::cpu_times`]) in the same unit and order.
pub fn read_proc_stat() -> Vec<CpuTimes> {
    if let Some(p) = crate::platform::counters::cpu_times() {
        return from_processor_times(&p);
    }
    std::fs::read_to_string("/proc/stat")
        .map(|t| parse_proc_stat(&t))
        .unwrap_or_default()
}

/// Windows counts CPU time in 100 ns units; `/proc/stat` in ticks of
/// 1/100 s (`USER_HZ`).
const HUNDRED_NS_PER_TICK: u64 = 100_000;

/// Windows' processor times as `/proc/stat` lines: the machine as a whole
/// first (`cpu: None`: the machine-wide entry when there is one, else the
/// sum of the processors), then each processor, in ticks of 1/100 s.
/// Windows' kernel time holds idle, DPC and interrupt time: `system` is
/// what is left of it, `irq` is DPC + interrupt time, `softirq` the DPC
/// part; Windows has no iowait or steal (0).
pub fn from_processor_times(p: &[ProcessorTimes]) -> Vec<CpuTimes> {
    if p.is_empty() {
        return Vec::new();
    }
    let whole = p
        .iter()
        .find(|x| x.cpu.is_none())
        .copied()
        .unwrap_or_else(|| {
            p.iter()
                .fold(ProcessorTimes::default(), |a, x| ProcessorTimes {
                    cpu: None,
                    idle: a.idle + x.idle,
                    kernel: a.kernel + x.kernel,
                    user: a.user + x.user,
                    dpc: a.dpc + x.dpc,
                    interrupt: a.interrupt + x.interrupt,
                })
        });
    std::iter::once(&whole)
        .chain(p.iter().filter(|x| x.cpu.is_some()))
        .map(processor_ticks)
        .collect()
}

fn processor_ticks(x: &ProcessorTimes) -> CpuTimes {
    let t = |v: u64| v / HUNDRED_NS_PER_TICK;
    let system = x
        .kernel
        .saturating_sub(x.idle)
        .saturating_sub(x.dpc)
        .saturating_sub(x.interrupt);
    CpuTimes {
        cpu: x.cpu,
        user: t(x.user),
        system: t(system),
        idle: t(x.idle),
        iowait: 0,
        irq: t(x.dpc + x.interrupt),
        softirq: t(x.dpc),
        steal: 0,
    }
}

/// Utilisation of one core (or all, `cpu: None`) between two samples, in percent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoreUtil {
    /// Core number; absent for the machine as a whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Not idle and not iowait: user + system + irq + steal (% Processor Time).
    pub busy_pct: f64,
    /// User (and nice).
    pub user_pct: f64,
    /// System (% Privileged Time).
    pub system_pct: f64,
    /// Hard and soft interrupts (% Interrupt Time).
    pub irq_pct: f64,
    /// Waiting for I/O while idle.
    pub iowait_pct: f64,
    /// Taken by the hypervisor.
    pub steal_pct: f64,
}

/// Utilisation per core (and overall first) between samples `a` and `b`.
pub fn utilisation(a: &[CpuTimes], b: &[CpuTimes]) -> Vec<CoreUtil> {
    let mut out = Vec::new();
    for y in b {
        let Some(x) = a.iter().find(|x| x.cpu == y.cpu) else {
            continue;
        };
        let dt = y.total().saturating_sub(x.total());
        let pct = |v1: u64, v0: u64| {
            if dt == 0 {
                0.0
            } else {
                100.0 * v1.saturating_sub(v0) as f64 / dt as f64
            }
        };
        let user_pct = pct(y.user, x.user);
        let system_pct = pct(y.system, x.system);
        let irq_pct = pct(y.irq, x.irq);
        let steal_pct = pct(y.steal, x.steal);
        out.push(CoreUtil {
            cpu: y.cpu,
            busy_pct: user_pct + system_pct + irq_pct + steal_pct,
            user_pct,
            system_pct,
            irq_pct,
            iowait_pct: pct(y.iowait, x.iowait),
            steal_pct,
        });
    }
    out
}

/// Hardware interrupts per CPU so far (`/proc/interrupts`); empty where it
/// cannot be read.
pub fn read_interrupts() -> Vec<u64> {
    std::fs::read_to_string("/proc/interrupts")
        .map(|t| parse_interrupts(&t))
        .unwrap_or_default()
}

/// Interrupts per CPU: the sum of each CPU's column of `/proc/interrupts`.
pub fn parse_interrupts(text: &str) -> Vec<u64> {
    let mut lines = text.lines();
    let ncpu = lines.next().map_or(0, |h| h.split_whitespace().count());
    let mut sums = vec![0u64; ncpu];
    for l in lines {
        let Some((_, rest)) = l.split_once(':') else {
            continue;
        };
        let counts: Vec<u64> = rest
            .split_whitespace()
            .take(ncpu)
            .map_while(|v| v.parse().ok())
            .collect();
        // Lines such as ERR: and MIS: hold one machine-wide count: not per CPU.
        if counts.len() == ncpu {
            for (s, c) in sums.iter_mut().zip(counts) {
                *s += c;
            }
        }
    }
    sums
}

/// User and system CPU seconds of this thread (`RUSAGE_THREAD`) or process (`RUSAGE_SELF`).
pub fn rusage(thread: bool) -> (f64, f64) {
    crate::platform::process::cpu_times(thread)
}

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    pin_to_cpus(&[cpu])
}

/// Restricts the calling thread to a set of CPUs.
pub fn pin_to_cpus(cpus: &[usize]) -> std::io::Result<()> {
    crate::platform::process::pin_to_cpus(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "cpu  100 0 50 800 10 5 5 0 0 0\ncpu0 60 0 30 400 5 3 2 0 0 0\ncpu1 40 0 20 400 5 2 3 0 0 0\nintr 1 2 3\nctxt 99\n";
    const B: &str = "cpu  200 0 100 1000 20 10 10 0 0 0\ncpu0 150 0 60 430 5 3 2 0 0 0\ncpu1 50 0 40 570 15 7 8 0 0 0\n";

    #[test]
    fn parses_every_cpu_line() {
        let v = parse_proc_stat(A);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].cpu, None);
        assert_eq!(v[1].cpu, Some(0));
        assert_eq!(v[1].irq, 5);
        assert_eq!(v[2].total(), 40 + 20 + 400 + 5 + 5);
    }

    #[test]
    fn utilisation_between_samples() {
        let u = utilisation(&parse_proc_stat(A), &parse_proc_stat(B));
        assert_eq!(u.len(), 3);
        // cpu0: dt = 150 ticks; busy = 90 user + 30 system = 120 -> 80%.
        let c0 = &u[1];
        assert_eq!(c0.cpu, Some(0));
        assert!((c0.busy_pct - 80.0).abs() < 1e-9);
        assert!((c0.user_pct - 60.0).abs() < 1e-9);
        // cpu1: dt = 10+20+170+10+10 = 220; irq 10.
        let c1 = &u[2];
        assert!((c1.irq_pct - 100.0 * 10.0 / 220.0).abs() < 1e-9);
        assert!((c1.iowait_pct - 100.0 * 10.0 / 220.0).abs() < 1e-9);
    }

    #[test]
    fn rusage_is_readable() {
        let (u, s) = rusage(true);
        assert!(u >= 0.0 && s >= 0.0);
    }

    /// 100 ns units per second.
    const S: u64 = 10_000_000;

    #[test]
    fn windows_times_become_proc_stat_lines() {
        // Core 0: 10 s idle, 30 s kernel (idle, 2 s DPC and 1 s interrupt
        // included), 5 s user. Core 1: 20 s idle, 24 s kernel, 1 s user.
        let p = [
            ProcessorTimes {
                cpu: Some(0),
                idle: 10 * S,
                kernel: 30 * S,
                user: 5 * S,
                dpc: 2 * S,
                interrupt: S,
            },
            ProcessorTimes {
                cpu: Some(1),
                idle: 20 * S,
                kernel: 24 * S,
                user: S,
                dpc: 0,
                interrupt: S / 2,
            },
        ];
        let v = from_processor_times(&p);
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[1],
            CpuTimes {
                cpu: Some(0),
                user: 500,
                system: 1700,
                idle: 1000,
                iowait: 0,
                irq: 300,
                softirq: 200,
                steal: 0,
            }
        );
        assert_eq!(
            (v[2].cpu, v[2].system, v[2].irq, v[2].softirq),
            (Some(1), 350, 50, 0)
        );
        // The machine: the sum of the cores, first.
        assert_eq!(
            v[0],
            CpuTimes {
                cpu: None,
                user: 600,
                system: 2050,
                idle: 3000,
                iowait: 0,
                irq: 350,
                softirq: 200,
                steal: 0,
            }
        );
        // Kernel time holds idle time: total() is kernel + user.
        assert_eq!(v[1].total(), (30 + 5) * 100);
        // Half a tick is dropped, never rounded up.
        let z = from_processor_times(&[ProcessorTimes {
            cpu: Some(0),
            user: 149_999,
            ..Default::default()
        }]);
        assert_eq!(z[1].user, 1);
        assert!(from_processor_times(&[]).is_empty());
    }

    #[test]
    fn windows_machine_total_stands_alone() {
        // GetSystemTimes' answer: one machine-wide entry, no DPC or interrupt time.
        let v = from_processor_times(&[ProcessorTimes {
            cpu: None,
            idle: 300 * S,
            kernel: 340 * S,
            user: 60 * S,
            dpc: 0,
            interrupt: 0,
        }]);
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].cpu, v[0].idle, v[0].system, v[0].user),
            (None, 30_000, 4_000, 6_000)
        );
        // Busy between two such samples is kernel - idle + user.
        let w = from_processor_times(&[ProcessorTimes {
            cpu: None,
            idle: 309 * S,
            kernel: 350 * S,
            user: 60 * S,
            dpc: 0,
            interrupt: 0,
        }]);
        let u = utilisation(&v, &w);
        assert!((u[0].busy_pct - 10.0).abs() < 1e-9, "{:?}", u[0]);
    }

    #[test]
    fn read_proc_stat_gives_the_machine_first() {
        // Linux: /proc/stat; Windows: the processors' times converted.
        let v = read_proc_stat();
        if let Some(first) = v.first() {
            assert_eq!(first.cpu, None, "{v:?}");
            assert!(v[1..].iter().all(|c| c.cpu.is_some()), "{v:?}");
        }
        let raw = crate::platform::counters::cpu_times();
        if crate::platform::IS_WINDOWS {
            // Whatever Windows (or Wine) gives reaches read_proc_stat: the
            // same lines (the two reads are moments apart: ids only).
            let ids = |v: &[CpuTimes]| v.iter().map(|c| c.cpu).collect::<Vec<_>>();
            let want = raw.map(|r| from_processor_times(&r)).unwrap_or_default();
            assert_eq!(ids(&v), ids(&want));
        } else {
            assert_eq!(raw, None);
            assert!(v.len() >= 2, "/proc/stat read: {v:?}");
        }
    }

    #[test]
    fn interrupts_add_up_per_cpu() {
        let t = "           CPU0       CPU1\n  1:         10          2   IO-APIC   1-edge      i8042\n 24:        100        300   PCI-MSI  nvme0q0\nERR:          0\nMIS:          0\n";
        assert_eq!(parse_interrupts(t), vec![110, 302]);
        assert!(parse_interrupts("").is_empty());
    }
}
