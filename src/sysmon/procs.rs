//! Who used the CPU during the measured window: iosim's own threads, the
//! kernel's work on the I/O path, and other processes, by name.
//!
//! Every process's and kernel thread's CPU time comes from
//! `/proc/[pid]/stat` (utime + stime, and cutime + cstime for children that
//! exited), iosim's threads from `/proc/self/task/*/stat`, interrupts from
//! `/proc/stat`, and a worker thread's wait for a core from
//! `/proc/thread-self/schedstat`. The monitor reads `/proc` this way only at
//! the window's start and end (never per interval, never on the workers' hot
//! path); [`attribute`] is a pure function of the two readings.
//!
//! Which part a task counts in:
//! - **iosim**: this process's threads (workers, the main and monitor
//!   threads), except its io_uring threads;
//! - **I/O path**: hard and soft interrupts (`irq` + `softirq` of
//!   `/proc/stat`), kernel threads that serve I/O ([`is_io_path_thread`]:
//!   kworkers, ksoftirqd, threaded interrupts, loop, kblockd, jbd2, dm, md,
//!   nvme, scsi, xfs, ext4, writeback...) and this process's io_uring threads
//!   (`iou-wrk-*`, `iou-sqp-*`): the kernel doing I/O on iosim's behalf,
//!   part of the storage's cost, as a database on the same storage would pay
//!   it;
//! - **others**: every other process and kernel thread, and the time a
//!   hypervisor gave to other virtual machines (steal).

use serde::{Deserialize, Serialize};

use super::cpu::CpuTimes;

/// `PF_KTHREAD` in the `flags` field of `/proc/[pid]/stat`: a kernel thread.
pub const PF_KTHREAD: u64 = 0x0020_0000;

/// How many other processes (and I/O path threads) a result names.
pub const TOP: usize = 5;

/// One task's CPU time, from its `/proc/[pid]/stat` line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTimes {
    /// Process (or thread) id.
    pub pid: u32,
    /// Its name (`comm`, at most 15 bytes).
    pub comm: String,
    /// Parent process id.
    pub ppid: u32,
    /// A kernel thread (`PF_KTHREAD`, or a child of `kthreadd`).
    pub kernel: bool,
    /// utime + stime, clock ticks.
    pub ticks: u64,
    /// cutime + cstime: children that exited and were waited for, clock ticks.
    pub child_ticks: u64,
}

/// Parses one `/proc/[pid]/stat` (or `/proc/[pid]/task/[tid]/stat`) line.
/// The name is taken between the first `(` and the last `)`, since it may
/// hold spaces and parentheses itself.
pub fn parse_task_stat(text: &str) -> Option<TaskTimes> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    // After the name: state ppid pgrp session tty_nr tpgid flags minflt
    // cminflt majflt cmajflt utime stime cutime cstime ...
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
    let ppid = num(1)? as u32;
    let flags = num(6)?;
    Some(TaskTimes {
        pid,
        comm,
        ppid,
        kernel: flags & PF_KTHREAD != 0 || ppid == 2 || pid == 2,
        ticks: num(11)? + num(12)?,
        child_ticks: num(13)? + num(14)?,
    })
}

/// The run-queue wait (`run_delay`, ns: time runnable but not running) of a
/// `/proc/.../schedstat` line: `on-cpu-ns run-delay-ns timeslices`.
pub fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

/// The calling thread's run-queue wait so far, ns; `None` where the kernel
/// does not keep it (built without `CONFIG_SCHED_INFO`). Workers call it
/// when their window opens and closes: it reads into a stack buffer and
/// allocates nothing.
pub fn thread_run_delay_ns() -> Option<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open("/proc/thread-self/schedstat").ok()?;
    let mut buf = [0u8; 96];
    let n = f.read(&mut buf).ok()?;
    parse_schedstat(std::str::from_utf8(&buf[..n]).ok()?)
}

/// Every task's CPU time at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcSample {
    /// This process's id.
    pub own_pid: u32,
    /// Every process and kernel thread (this process included).
    pub tasks: Vec<TaskTimes>,
    /// This process's threads.
    pub own_threads: Vec<TaskTimes>,
}

impl ProcSample {
    /// Reads `/proc/[pid]/stat` of every process and `/proc/self/task/*/stat`
    /// now: two directory scans and one small read per task. Tasks that end
    /// during the scan are skipped.
    pub fn take() -> ProcSample {
        ProcSample {
            own_pid: std::process::id(),
            tasks: read_stats("/proc"),
            own_threads: read_stats("/proc/self/task"),
        }
    }
}

/// The `stat` of every numbered entry of `dir`.
fn read_stats(dir: &str) -> Vec<TaskTimes> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut path = std::path::PathBuf::from(dir);
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(n) = name.to_str() else { continue };
        if !n.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        path.push(n);
        path.push("stat");
        if let Some(t) = std::fs::read_to_string(&path)
            .ok()
            .as_deref()
            .and_then(parse_task_stat)
        {
            out.push(t);
        }
        path.pop();
        path.pop();
    }
    out.shrink_to_fit();
    out
}

/// Kernel thread names (prefixes) that serve block I/O: workqueue workers
/// (the loop driver, kblockd, dio completion, writeback run there),
/// softirq and threaded-interrupt threads, and the threads of the block,
/// journal, RAID, device-mapper and storage drivers. A kworker's name says
/// what it ran last, not all it did, so every kworker counts.
pub const IO_PATH_PREFIXES: &[&str] = &[
    "kworker/",
    "ksoftirqd/",
    "irq/",
    "loop",
    "kblockd",
    "jbd2/",
    "dio/",
    "kdmflush",
    "kcryptd",
    "dmcrypt",
    "dm-",
    "dm_",
    "md",
    "raid",
    "nvme",
    "scsi_",
    "xfs",
    "ext4",
    "blkcg",
    "writeback",
    "flush-",
    "nfsiod",
    "rpciod",
    "virtio",
];

/// A kernel thread on the I/O path (by name, see [`IO_PATH_PREFIXES`]).
pub fn is_io_path_thread(comm: &str) -> bool {
    IO_PATH_PREFIXES.iter().any(|p| comm.starts_with(p))
}

/// One of iosim's own io_uring threads: `iou-wrk-*` (io-wq workers doing
/// blocking I/O for a ring) or `iou-sqp-*` (the `--sqpoll` submission thread).
pub fn is_io_uring_thread(comm: &str) -> bool {
    comm.starts_with("iou-")
}

/// The name a task is grouped under: kernel threads of one kind together
/// (`kworker/u8:3-events` and `kworker/1:1H-kblockd` are `kworker`,
/// `iou-wrk-1234` is `iou-wrk`), processes by their own name.
pub fn group_name(comm: &str, kernel: bool) -> String {
    if let Some(rest) = comm.strip_prefix("iou-") {
        let kind = rest.split('-').next().unwrap_or(rest);
        return format!("iou-{kind}");
    }
    if kernel {
        if let Some((kind, _)) = comm.split_once('/') {
            return kind.to_string();
        }
    }
    comm.to_string()
}

/// The name another process's CPU time is shown under: its group name, but
/// another iosim (another user's, or a second run) by its PID, so that it
/// does not read as this run's own threads.
fn other_name(t: &TaskTimes) -> String {
    if !t.kernel && t.comm == "iosim" {
        return format!("another iosim process (PID {})", t.pid);
    }
    group_name(&t.comm, t.kernel)
}

/// Some tasks' share of the machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskShare {
    /// Name (`comm`; kernel threads of one kind together, see [`group_name`]).
    pub name: String,
    /// How many tasks of that name used CPU in the window.
    pub tasks: usize,
    /// Kernel threads.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kernel: bool,
    /// Their CPU time, % of the machine (100 = every core for the whole window).
    pub pct: f64,
}

/// Who used the CPU during the measured window. Shares are % of the
/// machine: 100 is every core busy for the whole window. They come from
/// tick-sampled kernel counters, so they are approximate (a tick that lands
/// in an interrupt counts both as interrupt and to the task it interrupted)
/// and need not add up exactly to `busy_pct`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuAttribution {
    /// Length of the window, seconds.
    pub window_s: f64,
    /// Cores (the `cpuN` lines of `/proc/stat`).
    pub cores: usize,
    /// The machine busy: user + system + irq + steal.
    pub busy_pct: f64,
    /// iosim's own threads (workers, main and monitor threads; not its
    /// io_uring threads, which are the I/O path).
    pub iosim_pct: f64,
    /// The kernel's work on the I/O path: the threads in `io_path`, plus
    /// `irq_pct` as far as the three parts still fit in the machine (a
    /// kernel without `CONFIG_IRQ_TIME_ACCOUNTING` also charges an
    /// interrupt to the task it interrupted).
    pub io_path_pct: f64,
    /// Hard and soft interrupts (`/proc/stat`).
    pub irq_pct: f64,
    /// Other processes and kernel threads, and `steal_pct`.
    pub others_pct: f64,
    /// Of it, time the hypervisor gave to other virtual machines.
    pub steal_pct: f64,
    /// The busiest I/O path threads, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_path: Vec<TaskShare>,
    /// The busiest other processes and kernel threads, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<TaskShare>,
    /// iosim's worker threads.
    pub workers: usize,
    /// Time the workers were runnable but waiting for a core, % of their
    /// measured time; absent where the kernel does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_wait_pct: Option<f64>,
}

impl CpuAttribution {
    /// `pct` of the machine in cores (1.0 = one core for the whole window).
    pub fn cores_of(&self, pct: f64) -> f64 {
        pct / 100.0 * self.cores as f64
    }

    /// One line: `iosim 10%, kernel I/O path 3% (interrupts 2%), others 86%
    /// (rustc 30%, yes 25%) of 2 cores; iosim's threads waited for a core 40%
    /// of the time`.
    pub fn summary(&self) -> String {
        let list = |v: &[TaskShare]| shares_text(v, TOP);
        let mut s = format!(
            "iosim {:.0}%, kernel I/O path {:.0}% (interrupts {:.0}%), others {:.0}%",
            self.iosim_pct, self.io_path_pct, self.irq_pct, self.others_pct
        );
        let others = list(&self.others);
        if !others.is_empty() {
            s.push_str(&format!(" ({others})"));
        }
        s.push_str(&format!(" of {} core(s)", self.cores));
        if let Some(w) = self.worker_wait_pct {
            s.push_str(&format!(
                "; iosim's threads waited for a core {w:.0}% of the time"
            ));
        }
        s
    }

    /// Sets the workers and their run-queue wait: `waits` holds each worker's
    /// (wait ns, measured ns), `None` for a worker whose wait is unknown.
    pub fn set_workers(&mut self, waits: &[Option<(u64, u64)>]) {
        self.workers = waits.len();
        let known: Option<Vec<(u64, u64)>> = waits.iter().copied().collect();
        self.worker_wait_pct = known.and_then(|v| {
            let (w, d) = v.iter().fold((0u64, 0u64), |(a, b), (w, d)| (a + w, b + d));
            (d > 0).then(|| (100.0 * w as f64 / d as f64).min(100.0))
        });
    }
}

/// Up to `n` names with their shares, `yes 48%, rustc 12%`, leaving out
/// those under 1%.
pub fn shares_text(list: &[TaskShare], n: usize) -> String {
    list.iter()
        .filter(|s| s.pct >= 1.0)
        .take(n)
        .map(|s| format!("{} {:.0}%", s.name, s.pct))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Adds `ticks` under `name` in `groups`.
fn add(groups: &mut Vec<(String, usize, bool, u64)>, name: String, kernel: bool, ticks: u64) {
    if ticks == 0 {
        return;
    }
    match groups.iter_mut().find(|g| g.0 == name) {
        Some(g) => {
            g.1 += 1;
            g.3 += ticks;
        }
        None => groups.push((name, 1, kernel, ticks)),
    }
}

/// The `TOP` largest groups, as shares of `total` ticks.
fn top(mut groups: Vec<(String, usize, bool, u64)>, total: u64) -> Vec<TaskShare> {
    groups.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| a.0.cmp(&b.0)));
    groups
        .into_iter()
        .take(TOP)
        .map(|(name, tasks, kernel, t)| TaskShare {
            name,
            tasks,
            kernel,
            // Per-task times are truncated to ticks at both ends: in a short
            // window a group can come out above the whole machine.
            pct: (100.0 * t as f64 / total as f64).min(100.0),
        })
        .collect()
}

/// Who used the CPU between samples `a` and `b` (with `cpu_a`/`cpu_b`, the
/// `/proc/stat` lines read with them, over `window_s` seconds). `None`
/// without the machine's `cpu` line or when no tick passed. Workers are
/// left unset (see [`CpuAttribution::set_workers`]).
///
/// A task's time in the window is its ticks at `b` less those at `a` (all of
/// them if it started in the window). A process that ended in the window is
/// gone from `b`, but its parent's cutime/cstime took its whole time when
/// it was waited for: the parent is charged that gain less what the child
/// had used at `a`, so a short-lived compiler counts under its parent
/// (`make`, `cargo`). Threads of this process that ended in the window count
/// as iosim's (its io_uring threads live as long as their rings, which end
/// after the window).
pub fn attribute(
    a: &ProcSample,
    b: &ProcSample,
    cpu_a: &[CpuTimes],
    cpu_b: &[CpuTimes],
    window_s: f64,
) -> Option<CpuAttribution> {
    let x = cpu_a.iter().find(|c| c.cpu.is_none())?;
    let y = cpu_b.iter().find(|c| c.cpu.is_none())?;
    let total = y.total().saturating_sub(x.total());
    if total == 0 {
        return None;
    }
    let pct = |t: u64| 100.0 * t as f64 / total as f64;
    let d = |y: u64, x: u64| y.saturating_sub(x);
    let busy = d(y.user, x.user) + d(y.system, x.system) + d(y.irq, x.irq) + d(y.steal, x.steal);
    let irq = d(y.irq, x.irq);
    let steal = d(y.steal, x.steal);

    let mut io_groups = Vec::new();
    let (iosim, uring) = own_ticks(a, b, &mut io_groups);
    let mut other_groups = Vec::new();
    let (kernel_io, others) = other_ticks(a, b, total, &mut io_groups, &mut other_groups);
    let io_threads = uring + kernel_io;
    if steal > 0 {
        add(
            &mut other_groups,
            "other virtual machines (steal)".into(),
            false,
            steal,
        );
    }
    // Without CONFIG_IRQ_TIME_ACCOUNTING the kernel also charges an
    // interrupt to the task it interrupted: interrupt time counts in the I/O
    // path only as far as the three parts still fit in the machine.
    let others = (others + steal).min(total);
    let irq_counted = irq.min(total.saturating_sub(iosim + io_threads + others));
    Some(CpuAttribution {
        window_s,
        cores: cpu_b.iter().filter(|c| c.cpu.is_some()).count(),
        busy_pct: pct(busy),
        iosim_pct: pct(iosim),
        io_path_pct: pct(irq_counted + io_threads),
        irq_pct: pct(irq),
        others_pct: pct(others),
        steal_pct: pct(steal),
        io_path: top(io_groups, total),
        others: top(other_groups, total),
        workers: 0,
        worker_wait_pct: None,
    })
}

/// Ticks of task `t` in the window: at `b` less those in `list_a` (all of
/// them if it is new).
fn ticks_in_window(list_a: &[TaskTimes], t: &TaskTimes) -> u64 {
    match list_a.iter().find(|o| o.pid == t.pid) {
        Some(o) => t.ticks.saturating_sub(o.ticks),
        None => t.ticks,
    }
}

/// What the processes under `ppid` that ended in the window had used by
/// `a`: a child's exit hands the parent its own time and that of the
/// descendants it waited for, so the whole ended subtree counts.
fn ended_before(a: &ProcSample, b: &ProcSample, ppid: u32) -> u64 {
    let gone = |t: &TaskTimes| !b.tasks.iter().any(|u| u.pid == t.pid);
    let mut sum = 0;
    let mut parents = vec![ppid];
    while let Some(p) = parents.pop() {
        for t in a.tasks.iter().filter(|t| t.ppid == p && gone(t)) {
            sum += t.ticks + t.child_ticks;
            parents.push(t.pid);
        }
    }
    sum
}

/// iosim: the process (its ended threads included) less its io_uring
/// threads, which go to `io_groups`. Returns (iosim, io_uring threads).
fn own_ticks(
    a: &ProcSample,
    b: &ProcSample,
    io_groups: &mut Vec<(String, usize, bool, u64)>,
) -> (u64, u64) {
    let own = b.tasks.iter().find(|t| t.pid == b.own_pid);
    let own_ticks = own.map_or(0, |t| ticks_in_window(&a.tasks, t));
    let mut uring = 0;
    for t in b.own_threads.iter().filter(|t| is_io_uring_thread(&t.comm)) {
        let n = ticks_in_window(&a.own_threads, t);
        uring += n;
        add(io_groups, group_name(&t.comm, true), true, n);
    }
    (own_ticks.saturating_sub(uring), uring)
}

/// The other tasks: kernel I/O-path threads go to `io_groups`, the rest
/// (with the time of their children that ended in the window) to
/// `other_groups`. Returns (I/O-path kernel threads, others).
fn other_ticks(
    a: &ProcSample,
    b: &ProcSample,
    total: u64,
    io_groups: &mut Vec<(String, usize, bool, u64)>,
    other_groups: &mut Vec<(String, usize, bool, u64)>,
) -> (u64, u64) {
    let mut io_threads = 0;
    let mut others = 0;
    for t in b.tasks.iter().filter(|t| t.pid != b.own_pid) {
        if t.kernel && is_io_path_thread(&t.comm) {
            let n = ticks_in_window(&a.tasks, t);
            io_threads += n;
            add(io_groups, group_name(&t.comm, true), true, n);
            continue;
        }
        let mut n = ticks_in_window(&a.tasks, t);
        if !t.kernel {
            let kids = match a.tasks.iter().find(|o| o.pid == t.pid) {
                Some(o) => t.child_ticks.saturating_sub(o.child_ticks),
                None => t.child_ticks,
            };
            n += kids.saturating_sub(ended_before(a, b, t.pid));
        }
        // No task can have used more than the whole machine (a parent's
        // child time can, when a child it waited for was reparented to it).
        let n = n.min(total);
        others += n;
        add(other_groups, other_name(t), t.kernel, n);
    }
    (io_threads, others)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysmon::cpu::parse_proc_stat;

    fn task(pid: u32, comm: &str, ppid: u32, kernel: bool, ticks: u64, kids: u64) -> TaskTimes {
        TaskTimes {
            pid,
            comm: comm.into(),
            ppid,
            kernel,
            ticks,
            child_ticks: kids,
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn parses_stat_lines_with_odd_names() {
        let line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 1 0 100 0 0";
        let t = parse_task_stat(line).unwrap();
        assert_eq!(t.pid, 4242);
        assert_eq!(t.comm, "my (odd) name");
        assert_eq!(t.ppid, 1);
        assert!(!t.kernel);
        assert_eq!(t.ticks, 300);
        assert_eq!(t.child_ticks, 50);
        let k =
            "54 (kworker/1:1H-kblockd) I 2 0 0 0 -1 69238880 0 0 0 0 0 171 0 0 0 -20 1 0 250 0 0";
        let k = parse_task_stat(k).unwrap();
        assert!(k.kernel, "PF_KTHREAD is set in 69238880");
        assert_eq!(k.ticks, 171);
        assert!(parse_task_stat("garbage").is_none());
        assert!(parse_task_stat("1 (x) S 0").is_none());
        // This process reads itself.
        let me = parse_task_stat(&std::fs::read_to_string("/proc/self/stat").unwrap()).unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(!me.kernel);
    }

    #[test]
    fn schedstat_run_delay() {
        assert_eq!(
            parse_schedstat("191929782 29902829 601\n"),
            Some(29_902_829)
        );
        assert_eq!(parse_schedstat("1"), None);
        // Where the kernel keeps it, it is readable for this thread.
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            assert!(thread_run_delay_ns().is_some());
        }
    }

    #[test]
    fn names_and_groups() {
        assert!(is_io_path_thread("kworker/u8:22-events_unbound"));
        assert!(is_io_path_thread("jbd2/vda-8"));
        assert!(is_io_path_thread("loop0"));
        assert!(is_io_path_thread("ksoftirqd/1"));
        assert!(!is_io_path_thread("rcu_preempt"));
        assert!(!is_io_path_thread("kdamond.0"));
        assert!(is_io_uring_thread("iou-wrk-1234"));
        assert!(is_io_uring_thread("iou-sqp-99"));
        assert_eq!(group_name("kworker/1:1H-kblockd", true), "kworker");
        assert_eq!(group_name("iou-wrk-1234", true), "iou-wrk");
        assert_eq!(group_name("jbd2/vda-8", true), "jbd2");
        assert_eq!(group_name("rustc", false), "rustc");
        assert_eq!(group_name("a/b", false), "a/b");
    }

    /// Two samples one second apart on a 2-core machine (200 ticks in all).
    fn machine(user: u64, system: u64, irq: u64, steal: u64) -> (Vec<CpuTimes>, Vec<CpuTimes>) {
        let a = parse_proc_stat(
            "cpu  0 0 0 1000 0 0 0 0 0 0\ncpu0 0 0 0 500 0 0 0 0 0 0\ncpu1 0 0 0 500 0 0 0 0 0 0\n",
        );
        let idle = 200 - user - system - irq - steal;
        let b = parse_proc_stat(&format!(
            "cpu  {user} 0 {system} {} 0 {irq} 0 {steal} 0 0\ncpu0 0 0 0 600 0 0 0 0 0 0\ncpu1 0 0 0 600 0 0 0 0 0 0\n",
            1000 + idle
        ));
        (a, b)
    }

    #[test]
    fn splits_iosim_io_path_and_others() {
        let own = 500;
        let a = ProcSample {
            own_pid: own,
            tasks: vec![
                task(own, "iosim", 1, false, 1000, 0),
                task(2, "kthreadd", 0, true, 0, 0),
                task(54, "kworker/1:1H-kblockd", 2, true, 10, 0),
                task(22, "ksoftirqd/1", 2, true, 5, 0),
                task(15, "rcu_preempt", 2, true, 3, 0),
                task(700, "yes", 600, false, 400, 0),
                task(600, "bash", 1, false, 20, 0),
                task(800, "make", 1, false, 10, 100),
                // A compiler driver and the compiler it runs end in the
                // window, after 30 and 200 ticks.
                task(801, "cc", 800, false, 30, 0),
                task(802, "cc1", 801, false, 200, 0),
            ],
            own_threads: vec![
                task(own, "iosim", 1, false, 500, 0),
                task(501, "iosim-w0", 1, false, 400, 0),
                task(502, "iou-wrk-501", 1, false, 50, 0),
            ],
        };
        let b = ProcSample {
            own_pid: own,
            tasks: vec![
                task(own, "iosim", 1, false, 1000 + 70, 0),
                task(2, "kthreadd", 0, true, 0, 0),
                task(54, "kworker/1:1H-kblockd", 2, true, 10 + 12, 0),
                task(23, "kworker/u8:3-loop0", 2, true, 6, 0),
                task(22, "ksoftirqd/1", 2, true, 5 + 2, 0),
                task(15, "rcu_preempt", 2, true, 3 + 1, 0),
                task(700, "yes", 600, false, 400 + 60, 0),
                task(600, "bash", 1, false, 20, 0),
                // cc ended with 30 + 5 ticks, cc1 with 200 + 20, all waited for.
                task(800, "make", 1, false, 10 + 1, 100 + 35 + 220),
            ],
            own_threads: vec![
                task(own, "iosim", 1, false, 505, 0),
                task(501, "iosim-w0", 1, false, 450, 0),
                task(502, "iou-wrk-501", 1, false, 50 + 10, 0),
                task(503, "iou-sqp-501", 1, false, 4, 0),
            ],
        };
        let (ca, cb) = machine(100, 60, 8, 4);
        let r = attribute(&a, &b, &ca, &cb, 1.0).unwrap();
        assert_eq!(r.cores, 2);
        // 200 ticks in all: 1 tick = 0.5%.
        assert!((r.busy_pct - 86.0).abs() < 1e-9, "{}", r.busy_pct);
        assert!((r.irq_pct - 4.0).abs() < 1e-9);
        assert!((r.steal_pct - 2.0).abs() < 1e-9);
        // iosim: 70 ticks of the process less 14 of its io_uring threads.
        assert!((r.iosim_pct - 28.0).abs() < 1e-9, "{}", r.iosim_pct);
        // I/O path: irq 8 + kworkers 18 + ksoftirqd 2 + io_uring 14 = 42 ticks.
        assert!((r.io_path_pct - 21.0).abs() < 1e-9, "{}", r.io_path_pct);
        let io: Vec<(&str, usize)> = r
            .io_path
            .iter()
            .map(|s| (s.name.as_str(), s.tasks))
            .collect();
        assert_eq!(
            io,
            vec![
                ("kworker", 2),
                ("iou-wrk", 1),
                ("iou-sqp", 1),
                ("ksoftirqd", 1)
            ]
        );
        // Others: yes 60, make 1 + cc's 5 + cc1's 20 in the window, rcu 1, steal 4 = 91.
        assert!((r.others_pct - 45.5).abs() < 1e-9, "{}", r.others_pct);
        let names: Vec<(&str, f64)> = r.others.iter().map(|s| (s.name.as_str(), s.pct)).collect();
        assert_eq!(
            names,
            vec![
                ("yes", 30.0),
                ("make", 13.0),
                ("other virtual machines (steal)", 2.0),
                ("rcu_preempt", 0.5)
            ]
        );
        assert!(r.others[3].kernel);
        assert!((r.cores_of(r.others_pct) - 0.91).abs() < 1e-9);
        assert_eq!(
            r.summary(),
            "iosim 28%, kernel I/O path 21% (interrupts 4%), others 46% (yes 30%, make 13%, other virtual machines (steal) 2%) of 2 core(s)"
        );
    }

    #[test]
    fn another_iosim_is_named_by_its_pid() {
        let own = 9;
        let a = ProcSample {
            own_pid: own,
            tasks: vec![
                task(own, "iosim", 1, false, 0, 0),
                task(4242, "iosim", 1, false, 0, 0),
            ],
            own_threads: vec![],
        };
        let b = ProcSample {
            own_pid: own,
            tasks: vec![
                task(own, "iosim", 1, false, 50, 0),
                task(4242, "iosim", 1, false, 100, 0),
            ],
            own_threads: vec![],
        };
        let (ca, cb) = machine(150, 50, 0, 0);
        let r = attribute(&a, &b, &ca, &cb, 1.0).unwrap();
        assert_eq!(r.others[0].name, "another iosim process (PID 4242)");
        assert!(
            r.summary().contains("another iosim process (PID 4242) 50%"),
            "{}",
            r.summary()
        );
    }

    #[test]
    fn interrupts_charged_twice_are_counted_once() {
        // iosim used 150 of 200 ticks, a kworker 40, and /proc/stat says 20
        // were interrupts (also charged to those tasks): 10 fit.
        let own = 9;
        let a = ProcSample {
            own_pid: own,
            tasks: vec![
                task(own, "iosim", 1, false, 0, 0),
                task(30, "kworker/0:1", 2, true, 0, 0),
            ],
            own_threads: vec![],
        };
        let b = ProcSample {
            own_pid: own,
            tasks: vec![
                task(own, "iosim", 1, false, 150, 0),
                task(30, "kworker/0:1", 2, true, 40, 0),
            ],
            own_threads: vec![],
        };
        let (ca, cb) = machine(100, 80, 20, 0);
        let r = attribute(&a, &b, &ca, &cb, 1.0).unwrap();
        assert!((r.irq_pct - 10.0).abs() < 1e-9);
        assert!((r.io_path_pct - 25.0).abs() < 1e-9, "{}", r.io_path_pct);
        assert!(r.iosim_pct + r.io_path_pct + r.others_pct <= 100.0 + 1e-9);
    }

    #[test]
    fn no_ticks_no_attribution() {
        let (ca, _) = machine(0, 0, 0, 0);
        let s = ProcSample::default();
        assert!(attribute(&s, &s, &ca, &ca, 1.0).is_none());
        assert!(attribute(&s, &s, &[], &ca, 1.0).is_none());
    }

    #[test]
    fn worker_waits() {
        let mut r = CpuAttribution::default();
        r.set_workers(&[Some((100, 1000)), Some((300, 1000))]);
        assert_eq!(r.workers, 2);
        assert_eq!(r.worker_wait_pct, Some(20.0));
        r.set_workers(&[Some((100, 1000)), None]);
        assert_eq!(r.worker_wait_pct, None);
        r.set_workers(&[]);
        assert_eq!((r.workers, r.worker_wait_pct), (0, None));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn live_sample_sees_this_process() {
        let s = ProcSample::take();
        assert!(s.tasks.iter().any(|t| t.pid == s.own_pid));
        assert!(!s.own_threads.is_empty());
        assert!(
            s.tasks.iter().any(|t| t.kernel),
            "kernel threads are listed"
        );
    }
}
