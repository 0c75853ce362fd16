//! `-U` / `-Up`: CPU counters before and after the run, and SQLIO's report of them.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// CPU times and interrupt counts at one moment (for `-U`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSample {
    /// `/proc/stat`'s cpu lines.
    pub cpus: Vec<crate::sysmon::cpu::CpuTimes>,
    /// Hardware interrupts per CPU so far, from `/proc/interrupts`.
    pub interrupts: Vec<u64>,
}

impl CpuSample {
    /// Reads /proc now.
    pub fn now() -> CpuSample {
        CpuSample {
            cpus: crate::sysmon::cpu::read_proc_stat(),
            interrupts: crate::sysmon::cpu::read_interrupts(),
        }
    }
}

/// SQLIO's `-U` / `-Up` report (readme: "ProcessorNumber:", "DPCTime(%):", ...): DPC time is
/// Linux's softirq time, interrupt time its irq time, privileged time system + irq + softirq,
/// processor time everything but idle and iowait, user time user + nice.
pub fn utilization(a: &CpuSample, b: &CpuSample, secs: f64, per_cpu: bool) -> String {
    let cols: Vec<Option<usize>> = std::iter::once(None)
        .chain(
            b.cpus
                .iter()
                .filter(|c| per_cpu && c.cpu.is_some())
                .map(|c| c.cpu),
        )
        .collect();
    let delta = |cpu: Option<usize>| {
        let x = a
            .cpus
            .iter()
            .find(|c| c.cpu == cpu)
            .copied()
            .unwrap_or_default();
        let y = b
            .cpus
            .iter()
            .find(|c| c.cpu == cpu)
            .copied()
            .unwrap_or_default();
        let d = |f: fn(&crate::sysmon::cpu::CpuTimes) -> u64| f(&y).saturating_sub(f(&x)) as f64;
        let total = d(|c| c.total()).max(1.0);
        let pct = |v: f64| 100.0 * v / total;
        let softirq = d(|c| c.softirq);
        let irq = d(|c| c.irq) - softirq;
        [
            pct(softirq),
            pct(irq),
            pct(d(|c| c.system) + irq + softirq),
            pct(total - d(|c| c.idle) - d(|c| c.iowait)),
            pct(d(|c| c.user)),
        ]
    };
    let ints = |cpu: Option<usize>| {
        let d = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        let n = match cpu {
            Some(i) => d(&b.interrupts, i).saturating_sub(d(&a.interrupts, i)),
            None => b
                .interrupts
                .iter()
                .sum::<u64>()
                .saturating_sub(a.interrupts.iter().sum()),
        };
        n as f64 / secs.max(1e-9)
    };
    let rows: Vec<[f64; 5]> = cols.iter().map(|&c| delta(c)).collect();
    let mut s = format!("{:<16}{:>12}", "ProcessorNumber:", "ALL");
    for c in cols.iter().flatten() {
        let _ = write!(s, "{c:>9}");
    }
    s.push('\n');
    for (i, label) in [
        "DPCTime(%):",
        "InterruptTime(%):",
        "PrivilegedTime(%):",
        "ProcessorTime(%):",
        "UserTime(%):",
    ]
    .iter()
    .enumerate()
    {
        let _ = write!(s, "{label:<20}");
        for r in &rows {
            let _ = write!(s, "{:9.2}", r[i]);
        }
        s.push('\n');
    }
    let _ = write!(s, "{:<20}", "Interrupts/sec:");
    for &c in &cols {
        let _ = write!(s, "{:9.2}", ints(c));
    }
    s.push('\n');
    s
}
