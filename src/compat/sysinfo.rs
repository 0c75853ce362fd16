//! The machine facts DiskSpd 2.2 reports in its system section and XML
//! `<System>`: processor topology (CPU, core, socket, NUMA node) and the power
//! scheme. On Linux they come from sysfs: `devices/system/cpu/cpuN/topology/`
//! (`core_id`, `physical_package_id`), `devices/system/node/nodeN/cpulist`, and
//! the cpufreq governor, which is what Linux has in place of a power scheme.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One logical processor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    /// Logical CPU number (DiskSpd's group-relative processor number; Linux has one group).
    pub id: usize,
    /// Core number, counted from 0 in the order cores first appear (as DiskSpd numbers them).
    pub core: usize,
    /// Socket (physical package).
    pub socket: usize,
    /// NUMA node.
    pub node: usize,
}

/// What DiskSpd's `SystemInformation` holds, read from Linux.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemInfo {
    /// Online logical processors, in order.
    pub cpus: Vec<Cpu>,
    /// The cpufreq governor (`performance`, `powersave`, ...), or `<unknown>` as DiskSpd prints
    /// when it cannot read the scheme.
    pub power_scheme: String,
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Parses a sysfs CPU list such as `0-3,8,10-11`.
pub fn parse_cpulist(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => {
                if let Ok(n) = part.trim().parse() {
                    out.push(n);
                }
            }
        }
    }
    out
}

impl SystemInfo {
    /// Reads this machine.
    pub fn read() -> SystemInfo {
        Self::read_from(Path::new("/sys"))
    }

    /// Reads a sysfs tree rooted at `sys` (tests pass a fixture).
    pub fn read_from(sys: &Path) -> SystemInfo {
        let cpu_dir = sys.join("devices/system/cpu");
        let mut ids = read_trim(&cpu_dir.join("online"))
            .map(|s| parse_cpulist(&s))
            .unwrap_or_default();
        if ids.is_empty() {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            ids = (0..n).collect();
        }
        let node_dir = sys.join("devices/system/node");
        let mut node_of = std::collections::BTreeMap::new();
        if let Ok(rd) = std::fs::read_dir(&node_dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(n) = name
                    .strip_prefix("node")
                    .and_then(|n| n.parse::<usize>().ok())
                else {
                    continue;
                };
                if let Some(list) = read_trim(&e.path().join("cpulist")) {
                    for c in parse_cpulist(&list) {
                        node_of.insert(c, n);
                    }
                }
            }
        }
        let mut seen_cores: Vec<(usize, usize)> = Vec::new();
        let mut cpus = Vec::new();
        for id in ids {
            let topo = cpu_dir.join(format!("cpu{id}/topology"));
            let num = |f: &str| {
                read_trim(&topo.join(f))
                    .and_then(|s| s.parse::<i64>().ok())
                    .map_or(0, |v| v.max(0) as usize)
            };
            let socket = num("physical_package_id");
            let core_id = if topo.join("core_id").exists() {
                num("core_id")
            } else {
                id
            };
            let key = (socket, core_id);
            let core = match seen_cores.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    seen_cores.push(key);
                    seen_cores.len() - 1
                }
            };
            cpus.push(Cpu {
                id,
                core,
                socket,
                node: node_of.get(&id).copied().unwrap_or(0),
            });
        }
        let power_scheme = cpus
            .first()
            .and_then(|c| read_trim(&cpu_dir.join(format!("cpu{}/cpufreq/scaling_governor", c.id))))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "<unknown>".to_string());
        SystemInfo { cpus, power_scheme }
    }

    /// A fixed machine for snapshots: `n` CPUs, one per core, one socket, one node.
    pub fn simple(n: usize) -> SystemInfo {
        SystemInfo {
            cpus: (0..n)
                .map(|id| Cpu {
                    id,
                    core: id,
                    socket: 0,
                    node: 0,
                })
                .collect(),
            power_scheme: "<unknown>".to_string(),
        }
    }

    /// Distinct cores.
    pub fn core_count(&self) -> usize {
        self.cpus
            .iter()
            .map(|c| c.core)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// Distinct sockets.
    pub fn socket_count(&self) -> usize {
        self.cpus
            .iter()
            .map(|c| c.socket)
            .collect::<BTreeSet<_>>()
            .len()
            .max(1)
    }

    /// Distinct NUMA nodes.
    pub fn node_count(&self) -> usize {
        self.cpus
            .iter()
            .map(|c| c.node)
            .collect::<BTreeSet<_>>()
            .len()
            .max(1)
    }

    /// More logical processors than cores (DiskSpd then adds a `Core` column).
    pub fn smt(&self) -> bool {
        self.core_count() < self.cpus.len()
    }

    /// The processor `id`, when known.
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.id == id)
    }

    /// Bit mask of the given CPUs (DiskSpd's `0x...` masks).
    pub fn mask(ids: impl Iterator<Item = usize>) -> u64 {
        ids.filter(|&i| i < 64).fold(0, |m, i| m | (1u64 << i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists() {
        assert_eq!(parse_cpulist("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpulist(""), Vec::<usize>::new());
    }

    #[test]
    fn sysfs_tree_is_read() {
        let d = tempfile::tempdir().unwrap();
        let cpu = d.path().join("devices/system/cpu");
        std::fs::create_dir_all(&cpu).unwrap();
        std::fs::write(cpu.join("online"), "0-3\n").unwrap();
        // Two cores with two threads each, on two sockets and two nodes.
        for (id, core, pkg) in [(0, 0, 0), (1, 0, 0), (2, 5, 1), (3, 5, 1)] {
            let t = cpu.join(format!("cpu{id}/topology"));
            std::fs::create_dir_all(&t).unwrap();
            std::fs::write(t.join("core_id"), format!("{core}\n")).unwrap();
            std::fs::write(t.join("physical_package_id"), format!("{pkg}\n")).unwrap();
        }
        std::fs::create_dir_all(cpu.join("cpu0/cpufreq")).unwrap();
        std::fs::write(cpu.join("cpu0/cpufreq/scaling_governor"), "performance\n").unwrap();
        for (n, list) in [(0, "0-1"), (1, "2-3")] {
            let nd = d.path().join(format!("devices/system/node/node{n}"));
            std::fs::create_dir_all(&nd).unwrap();
            std::fs::write(nd.join("cpulist"), list).unwrap();
        }
        let s = SystemInfo::read_from(d.path());
        assert_eq!(s.cpus.len(), 4);
        assert_eq!(s.core_count(), 2);
        assert_eq!(s.socket_count(), 2);
        assert_eq!(s.node_count(), 2);
        assert!(s.smt());
        assert_eq!(
            s.cpu(3).unwrap(),
            &Cpu {
                id: 3,
                core: 1,
                socket: 1,
                node: 1
            }
        );
        assert_eq!(s.power_scheme, "performance");
        assert_eq!(SystemInfo::mask([0usize, 2].into_iter()), 5);
        // No sysfs at all: still a machine.
        let s = SystemInfo::read_from(&d.path().join("nothing"));
        assert!(!s.cpus.is_empty());
        assert_eq!(s.power_scheme, "<unknown>");
    }
}
