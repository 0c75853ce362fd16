//! The limits on the memory this process may take, as the kernel applies
//! them: what the machine has available (`MemAvailable`), the memory
//! cgroup the process is in (v2 `memory.max`, v1 `memory.limit_in_bytes`,
//! each ancestor's included: past it the OOM killer ends the process), and
//! the address-space limit (`RLIMIT_AS`, `ulimit -v`: past it an allocation
//! fails and the process aborts). A run is checked against each before it
//! starts (`engine::check_memory`), so it is refused with a message instead
//! of killed (exit 137) or aborted (exit 134) half-way.
//!
//! Parsers are pure functions over the text of `/proc/self/cgroup`,
//! `/proc/self/mountinfo` and the cgroup files, tested on fixtures.

use std::path::{Path, PathBuf};

use super::mounts::{parse_mountinfo, MountInfo};

/// Which limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LimitKind {
    /// Physical memory the kernel says is available (`MemAvailable`).
    Available,
    /// The limit of a memory cgroup the process is in: the file that sets it.
    Cgroup(PathBuf),
    /// `RLIMIT_AS`: the process's address space (every mapping, reserved or not).
    AddressSpace,
}

/// One limit on the memory a run may take, and how much of it is left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Which limit.
    pub kind: LimitKind,
    /// The limit itself, bytes (MemAvailable: the same as `left`).
    pub limit: u64,
    /// What is left of it for the run, bytes.
    pub left: u64,
}

impl MemoryLimit {
    /// Whose memory `left` is, for messages: "the 1GiB {whose}".
    pub fn whose(&self) -> String {
        let f = crate::units::format_size;
        match &self.kind {
            LimitKind::Available => {
                "this machine has available (MemAvailable in /proc/meminfo)".into()
            }
            LimitKind::Cgroup(file) => format!(
                "left under the {} limit of this process's memory cgroup ({}; past it the OOM killer ends the run)",
                f(self.limit),
                file.display()
            ),
            LimitKind::AddressSpace => format!(
                "of address space left under this process's limit of {} (RLIMIT_AS, ulimit -v; past it an allocation fails and the run aborts)",
                f(self.limit)
            ),
        }
    }

    /// Address space, not memory: reserved mappings (thread stacks, malloc
    /// arenas) count in full.
    pub fn counts_reservations(&self) -> bool {
        self.kind == LimitKind::AddressSpace
    }
}

/// Every limit that applies to this process now (none where the system
/// says nothing: Windows, or no limit set).
pub fn memory_limits() -> Vec<MemoryLimit> {
    let mut out = Vec::new();
    if let Some(avail) = super::host::mem_available_bytes() {
        out.push(MemoryLimit {
            kind: LimitKind::Available,
            limit: avail,
            left: avail,
        });
    }
    if let Some(l) = cgroup_limit() {
        out.push(l);
    }
    if let Some(limit) = crate::platform::memory::address_space_limit() {
        let used = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| status_kib(&s, "VmSize"))
            .unwrap_or(0);
        out.push(MemoryLimit {
            kind: LimitKind::AddressSpace,
            limit,
            left: limit.saturating_sub(used),
        });
    }
    out
}

/// One `Key:   N kB` line of `/proc/self/status`, in bytes.
pub fn status_kib(status: &str, key: &str) -> Option<u64> {
    super::host::meminfo_bytes(status, key)
}

/// The tightest memory cgroup limit over this process's cgroup and its
/// ancestors, with what is left of it.
fn cgroup_limit() -> Option<MemoryLimit> {
    if crate::platform::IS_WINDOWS {
        return None;
    }
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").ok()?);
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    memory_cgroups(&groups, &mounts)
        .into_iter()
        .filter_map(|(v, dir)| cgroup_dir_limit(v, &dir, &read))
        .min_by_key(|l| l.left)
}

/// The two cgroup hierarchies' memory controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupVersion {
    /// cgroup v1's `memory` hierarchy.
    V1,
    /// The unified hierarchy (cgroup v2).
    V2,
}

/// The directories of this process's memory cgroups, from
/// `/proc/self/cgroup` and the cgroup mounts of `/proc/self/mountinfo`:
/// the v1 `memory` hierarchy's and the v2 unified one's, where mounted.
pub fn memory_cgroups(proc_cgroup: &str, mounts: &[MountInfo]) -> Vec<(CgroupVersion, PathBuf)> {
    let mut out = Vec::new();
    for line in proc_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(ctrl), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (version, mount) = if ctrl.is_empty() {
            let m = mounts.iter().find(|m| m.fs_type == "cgroup2");
            (CgroupVersion::V2, m)
        } else if ctrl.split(',').any(|c| c == "memory") {
            let m = mounts.iter().find(|m| {
                m.fs_type == "cgroup" && m.super_options.split(',').any(|o| o == "memory")
            });
            (CgroupVersion::V1, m)
        } else {
            continue;
        };
        let Some(m) = mount else { continue };
        // The mount shows the hierarchy from its root on (a container's
        // cgroup namespace mounts its own cgroup as the root).
        let root = m.root.trim_end_matches('/');
        let rel = path.strip_prefix(root).unwrap_or(path);
        let dir = Path::new(&m.mount_point).join(rel.trim_start_matches('/'));
        out.push((version, dir));
    }
    out
}

/// A limit file's value: `max` (v2) and v1's page-rounded `i64::MAX` are no limit.
pub fn parse_limit(text: &str) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    // v1 writes "no limit" as 9223372036854771712; nothing real is that large.
    (v < 1 << 62).then_some(v)
}

/// The limit of the memory cgroup at `dir` (and its ancestors'), with
/// what is left of it; `read` reads a file of it. `None`: no limit.
pub fn cgroup_dir_limit(
    version: CgroupVersion,
    dir: &Path,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Option<MemoryLimit> {
    let number = |p: PathBuf| read(&p).and_then(|t| t.trim().parse::<u64>().ok());
    let stat = read(&dir.join("memory.stat")).unwrap_or_default();
    let stat_value = |key: &str| {
        stat.lines().find_map(|l| {
            l.strip_prefix(key)?
                .strip_prefix(' ')?
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    let (file, limit, usage, reclaimable) = match version {
        CgroupVersion::V1 => {
            let file = dir.join("memory.limit_in_bytes");
            let own = read(&file).as_deref().and_then(parse_limit);
            // With use_hierarchy an ancestor's tighter limit applies too.
            let inherited =
                stat_value("hierarchical_memory_limit").and_then(|v| parse_limit(&v.to_string()));
            let limit = own.into_iter().chain(inherited).min()?;
            let usage = number(dir.join("memory.usage_in_bytes")).unwrap_or(0);
            (
                file,
                limit,
                usage,
                stat_value("total_inactive_file").unwrap_or(0),
            )
        }
        CgroupVersion::V2 => {
            // The tightest memory.max from this cgroup up to the mount's root.
            let (file, limit) = dir
                .ancestors()
                .map_while(|d| Some((d.join("memory.max"), read(&d.join("memory.max"))?)))
                .filter_map(|(f, t)| Some((f, parse_limit(&t)?)))
                .min_by_key(|(_, l)| *l)?;
            let usage = number(dir.join("memory.current")).unwrap_or(0);
            (file, limit, usage, stat_value("inactive_file").unwrap_or(0))
        }
    };
    // The page cache the kernel can drop before it kills counts as free.
    let used = usage.saturating_sub(reclaimable);
    Some(MemoryLimit {
        kind: LimitKind::Cgroup(file),
        limit,
        left: limit.saturating_sub(used),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const MOUNTS: &str = "\
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn the_process_cgroups_are_found_through_the_mounts() {
        let mounts = parse_mountinfo(MOUNTS);
        let groups = "9:name=systemd:/\n4:memory:/batch/job7\n1:cpu:/\n0::/user.slice\n";
        assert_eq!(
            memory_cgroups(groups, &mounts),
            [
                (
                    CgroupVersion::V1,
                    PathBuf::from("/sys/fs/cgroup/memory/batch/job7")
                ),
                (
                    CgroupVersion::V2,
                    PathBuf::from("/sys/fs/cgroup/unified/user.slice")
                ),
            ]
        );
        // A container's namespace: the mount's root is the cgroup itself.
        let ns =
            parse_mountinfo("50 40 0:40 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
        assert_eq!(
            memory_cgroups("0::/kubepods/pod1\n", &ns),
            [(CgroupVersion::V2, PathBuf::from("/sys/fs/cgroup"))]
        );
        assert!(memory_cgroups("0::/\n", &[]).is_empty());
    }

    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let m: HashMap<PathBuf, String> = entries
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        move |p: &Path| m.get(p).cloned()
    }

    #[test]
    fn limits_are_read_with_what_is_left() {
        let g = 1u64 << 30;
        let v1 = files(&[
            ("/m/a/memory.limit_in_bytes", "1073741824\n"),
            ("/m/a/memory.usage_in_bytes", "209715200\n"),
            (
                "/m/a/memory.stat",
                "cache 104857600\nhierarchical_memory_limit 9223372036854771712\ntotal_inactive_file 104857600\n",
            ),
        ]);
        let l = cgroup_dir_limit(CgroupVersion::V1, Path::new("/m/a"), &v1).unwrap();
        assert_eq!((l.limit, l.left), (g, g - (100 << 20)));
        assert!(l.whose().contains("1GiB limit") && l.whose().contains("OOM killer"));
        // An ancestor's tighter limit, through hierarchical_memory_limit.
        let tight = files(&[
            ("/m/a/memory.limit_in_bytes", "9223372036854771712\n"),
            ("/m/a/memory.stat", "hierarchical_memory_limit 536870912\n"),
        ]);
        let l = cgroup_dir_limit(CgroupVersion::V1, Path::new("/m/a"), &tight).unwrap();
        assert_eq!(l.limit, g / 2);
        // No limit anywhere.
        let none = files(&[("/m/a/memory.limit_in_bytes", "9223372036854771712\n")]);
        assert_eq!(
            cgroup_dir_limit(CgroupVersion::V1, Path::new("/m/a"), &none),
            None
        );
        // v2: the tightest memory.max up the tree.
        let v2 = files(&[
            ("/u/a/b/memory.max", "max\n"),
            ("/u/a/memory.max", "2147483648\n"),
            ("/u/a/b/memory.current", "1073741824\n"),
            ("/u/a/b/memory.stat", "anon 1\ninactive_file 0\n"),
        ]);
        let l = cgroup_dir_limit(CgroupVersion::V2, Path::new("/u/a/b"), &v2).unwrap();
        assert_eq!((l.limit, l.left), (2 * g, g));
        assert_eq!(l.kind, LimitKind::Cgroup(PathBuf::from("/u/a/memory.max")));
    }

    #[test]
    fn this_process_limits_are_read() {
        // Whatever this machine sets, each limit leaves no more than it allows.
        for l in memory_limits() {
            assert!(l.left <= l.limit, "{l:?}");
        }
        assert_eq!(status_kib("VmSize:\t  2048 kB\n", "VmSize"), Some(2 << 20));
    }
}
