//! A background thread that samples `/proc/diskstats` and `/proc/stat` every
//! interval, like Performance Monitor beside a test.
//!
//! One thread, started before the measured time and stopped after it; it
//! never touches the workers. Whole-run numbers come from the first and last
//! sample (exact deltas of the kernel's counters), the series from each pair
//! of consecutive samples, so the series telescopes to the whole.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::cpu::{self, CoreUtil, CpuTimes};
use super::diskstats::{self, DeviceCounters, DiskStat, DISKSTATS_SECTOR};
use super::procs::{self, CpuAttribution, ProcSample};

/// One reading of the kernel's counters.
#[derive(Clone, Debug)]
pub struct Sample {
    /// When it was taken.
    pub at: Instant,
    /// The watched devices' lines (others dropped).
    pub disks: Vec<DiskStat>,
    /// Every `cpu`/`cpuN` line.
    pub cpu: Vec<CpuTimes>,
    /// Every task's CPU time: only in the baseline and the final sample.
    pub procs: Option<ProcSample>,
}

impl Sample {
    /// Reads `/proc/diskstats` and `/proc/stat` now, keeping only `devices`.
    pub fn take(devices: &[String]) -> Sample {
        let at = Instant::now();
        let mut disks = diskstats::read_diskstats();
        disks.retain(|d| devices.contains(&d.name));
        // Kept for the whole run (one sample per interval): without this each
        // one holds the capacity of every line of /proc/diskstats, ~3 KiB a
        // sample, which bench/soak.py saw as RSS growing with the run.
        disks.shrink_to_fit();
        let mut cpu = cpu::read_proc_stat();
        cpu.shrink_to_fit();
        Sample {
            at,
            disks,
            cpu,
            procs: None,
        }
    }

    /// As [`Sample::take`], with every task's CPU time (a scan of `/proc`):
    /// for the baseline and the final sample, which bound the window
    /// [`procs::attribute`] splits.
    pub fn take_with_procs(devices: &[String]) -> Sample {
        let procs = ProcSample::take();
        Sample {
            procs: Some(procs),
            ..Sample::take(devices)
        }
    }
}

/// A device's whole-run counters and its per-interval series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSeries {
    /// Kernel name (`vda1`, `dm-0`).
    pub name: String,
    /// From the baseline to the final sample.
    pub whole: DeviceCounters,
    /// One entry per interval (`t_s`, `duration_s` set).
    pub series: Vec<DeviceCounters>,
}

/// CPU use during one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuPoint {
    /// Start of the interval, seconds after the baseline.
    pub t_s: f64,
    /// Length, seconds.
    pub duration_s: f64,
    /// The machine (`cpu: None`) first, then each core.
    pub cores: Vec<CoreUtil>,
}

/// What the monitor saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MonitorReport {
    /// Requested sampling interval, seconds.
    pub interval_s: f64,
    /// Baseline to final sample, seconds.
    pub duration_s: f64,
    /// Watched devices found in `/proc/diskstats`, in the order asked.
    pub devices: Vec<DeviceSeries>,
    /// Devices asked for but absent from `/proc/diskstats`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub missing: Vec<String>,
    /// Whole-run CPU use: the machine first, then each core.
    pub cpu_whole: Vec<CoreUtil>,
    /// CPU use per interval.
    pub cpu_series: Vec<CpuPoint>,
    /// Who used the CPU from the baseline to the final sample (the runner
    /// moves it into the result's `cpu.attribution`, with the workers' waits).
    #[serde(skip)]
    pub attribution: Option<CpuAttribution>,
}

impl MonitorReport {
    /// The whole-run counters of device `name`.
    pub fn device(&self, name: &str) -> Option<&DeviceCounters> {
        self.devices
            .iter()
            .find(|d| d.name == name)
            .map(|d| &d.whole)
    }

    /// Whole-run device and per-core CPU lines for the text report, e.g.
    /// `vda1: 1500 transfers/s (r 1000, w 500), 7.81 MiB/s, 5.3 KiB/transfer, await r 1.50 ms w 5.00 ms, queue 4.50, busy 90%`
    /// and `cpu1: busy 59% (user 22, system 32, irq 4, iowait 0, steal 0)`.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        for d in &self.devices {
            out.push_str(&format!("{}: {}\n", d.name, d.whole.summary()));
        }
        for m in &self.missing {
            out.push_str(&format!("{m}: not in /proc/diskstats\n"));
        }
        for c in &self.cpu_whole {
            let name = c
                .cpu
                .map_or_else(|| "cpu (all)".to_string(), |n| format!("cpu{n}"));
            out.push_str(&format!(
                "{name}: busy {:.0}% (user {:.0}, system {:.0}, irq {:.0}, iowait {:.0}, steal {:.0})\n",
                c.busy_pct, c.user_pct, c.system_pct, c.irq_pct, c.iowait_pct, c.steal_pct
            ));
        }
        out
    }

    /// The busiest core over the whole run: (core, busy %).
    pub fn busiest_core(&self) -> Option<(usize, f64)> {
        self.cpu_whole
            .iter()
            .filter_map(|c| c.cpu.map(|n| (n, c.busy_pct)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Intervals shorter than this (the tail between the last periodic sample and
/// `stop`) are folded out of the series: their rates are mostly noise. They
/// still count in the whole-run numbers.
pub const MIN_TAIL: Duration = Duration::from_millis(1);

/// Builds the report from samples in time order (first = baseline).
pub fn build_report(samples: &[Sample], devices: &[String], interval: Duration) -> MonitorReport {
    let mut rep = MonitorReport {
        interval_s: interval.as_secs_f64(),
        ..Default::default()
    };
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        rep.missing = devices.to_vec();
        return rep;
    };
    let t0 = first.at;
    let secs = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64();
    rep.duration_s = secs(t0, last.at);
    let pairs: Vec<(&Sample, &Sample)> = samples
        .windows(2)
        .map(|w| (&w[0], &w[1]))
        .filter(|(a, b)| b.at.saturating_duration_since(a.at) >= MIN_TAIL)
        .collect();
    for name in devices {
        let find = |s: &Sample| s.disks.iter().find(|d| d.name == *name).cloned();
        let (Some(a), Some(b)) = (find(first), find(last)) else {
            rep.missing.push(name.clone());
            continue;
        };
        let whole = diskstats::device_counters(&a, &b, rep.duration_s, DISKSTATS_SECTOR);
        let mut series = Vec::new();
        for (x, y) in &pairs {
            if let (Some(dx), Some(dy)) = (find(x), find(y)) {
                let mut c =
                    diskstats::device_counters(&dx, &dy, secs(x.at, y.at), DISKSTATS_SECTOR);
                c.t_s = secs(t0, x.at);
                series.push(c);
            }
        }
        rep.devices.push(DeviceSeries {
            name: name.clone(),
            whole,
            series,
        });
    }
    rep.cpu_whole = cpu::utilisation(&first.cpu, &last.cpu);
    if let (Some(a), Some(b)) = (&first.procs, &last.procs) {
        rep.attribution = procs::attribute(a, b, &first.cpu, &last.cpu, rep.duration_s);
    }
    rep.cpu_series = pairs
        .iter()
        .map(|(x, y)| CpuPoint {
            t_s: secs(t0, x.at),
            duration_s: secs(x.at, y.at),
            cores: cpu::utilisation(&x.cpu, &y.cpu),
        })
        .collect();
    rep
}

/// What the sampling thread and the owner share.
struct State {
    /// Samples since the baseline, in time order.
    samples: Vec<Sample>,
    /// When the thread takes its next sample.
    next: Instant,
    /// Set by `stop`/drop.
    stop: bool,
    /// Baseline resets so far: a sample the thread was taking across one
    /// belongs to the old grid and is dropped.
    resets: u64,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// A running monitor. Stop it with [`Monitor::stop`]; dropping it without
/// stopping also ends the thread (and discards the data).
pub struct Monitor {
    devices: Vec<String>,
    interval: Duration,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Monitor {
    /// Takes the baseline sample now and starts one thread sampling every
    /// `interval` (clamped to at least 10 ms). `devices` are kernel names
    /// (`vda1`, `dm-0`; see `mounts::DeviceInfo::monitor_names`); CPU is
    /// always sampled. Should the thread fail to start, the report still has
    /// exact whole-run numbers (baseline and final sample), just no series.
    pub fn start(devices: Vec<String>, interval: Duration) -> Monitor {
        let interval = interval.max(Duration::from_millis(10));
        let mut devices = devices;
        let mut seen = std::collections::HashSet::new();
        devices.retain(|d| seen.insert(d.clone()));
        let first = Sample::take_with_procs(&devices);
        let next = first.at + interval;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                samples: vec![first],
                next,
                stop: false,
                resets: 0,
            }),
            wake: Condvar::new(),
        });
        let thread = {
            let shared = Arc::clone(&shared);
            let devices = devices.clone();
            std::thread::Builder::new()
                .name("iosim-sysmon".into())
                .spawn(move || sampler_loop(&shared, &devices, interval))
                .ok()
        };
        Monitor {
            devices,
            interval,
            shared,
            thread,
        }
    }

    /// A monitor that samples nothing, because another process watches this
    /// host (the lowest MPI rank on it): no thread, and an empty report.
    pub fn off() -> Monitor {
        Monitor {
            devices: Vec::new(),
            interval: Duration::ZERO,
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    samples: Vec::new(),
                    next: Instant::now(),
                    stop: true,
                    resets: 0,
                }),
                wake: Condvar::new(),
            }),
            thread: None,
        }
    }

    /// Restarts the baseline now: everything sampled so far (warmup) is
    /// dropped, and whole-run numbers and the series start here, with the
    /// next sample one full interval later.
    pub fn reset_baseline(&self) {
        if self.interval.is_zero() {
            return;
        }
        let s = Sample::take_with_procs(&self.devices);
        if let Ok(mut st) = self.shared.state.lock() {
            st.next = s.at + self.interval;
            st.samples.clear();
            st.samples.push(s);
            st.resets += 1;
        }
        self.shared.wake.notify_all();
    }

    /// Time since the baseline.
    pub fn elapsed(&self) -> Duration {
        self.shared
            .state
            .lock()
            .ok()
            .and_then(|st| st.samples.first().map(|s| s.at.elapsed()))
            .unwrap_or_default()
    }

    /// Stops the thread, takes the final sample and builds the report.
    pub fn stop(mut self) -> MonitorReport {
        self.halt();
        if self.interval.is_zero() {
            return MonitorReport::default();
        }
        let last = Sample::take_with_procs(&self.devices);
        let mut v = self
            .shared
            .state
            .lock()
            .map(|mut st| std::mem::take(&mut st.samples))
            .unwrap_or_default();
        v.push(last);
        build_report(&v, &self.devices, self.interval)
    }

    fn halt(&mut self) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.stop = true;
        }
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The sampling thread: sleep until the next deadline (on a fixed grid, so
/// intervals do not drift), read `/proc`, append.
fn sampler_loop(shared: &Shared, devices: &[String], interval: Duration) {
    loop {
        let resets = {
            let Ok(mut st) = shared.state.lock() else {
                return;
            };
            loop {
                if st.stop {
                    return;
                }
                let now = Instant::now();
                if now >= st.next {
                    break;
                }
                let wait = st.next - now;
                st = match shared.wake.wait_timeout(st, wait) {
                    Ok((g, _)) => g,
                    Err(_) => return,
                };
            }
            st.resets
        };
        // Read /proc without holding the lock.
        let s = Sample::take(devices);
        let Ok(mut st) = shared.state.lock() else {
            return;
        };
        // A baseline reset happened while sampling: this sample was due on
        // the old grid (under Wine one landed 1.6 ms after the new baseline),
        // so it is dropped and the thread waits for the new grid.
        if st.resets == resets && st.samples.last().is_none_or(|l| s.at > l.at) {
            let at = s.at;
            st.samples.push(s);
            st.next += interval;
            if st.next <= at {
                // Fell behind (machine overloaded): skip the missed ticks.
                st.next = at + interval;
            }
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/proc")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn sample(at: Instant, disks: &str, stat: &str) -> Sample {
        Sample {
            at,
            disks: diskstats::parse_diskstats(&fixture(disks)),
            cpu: cpu::parse_proc_stat(&fixture(stat)),
            procs: None,
        }
    }

    #[test]
    fn report_from_fixture_samples() {
        let t0 = Instant::now();
        let s = vec![
            sample(t0, "diskstats_20.txt", "stat_a.txt"),
            sample(
                t0 + Duration::from_secs(1),
                "diskstats_20.txt",
                "stat_b.txt",
            ),
            sample(
                t0 + Duration::from_secs(2),
                "diskstats_20_later.txt",
                "stat_c.txt",
            ),
        ];
        let devs = vec!["vda".to_string(), "vda1".to_string(), "sdz".to_string()];
        let r = build_report(&s, &devs, Duration::from_secs(1));
        assert!(r.attribution.is_none(), "no /proc scan in these samples");
        assert_eq!(r.interval_s, 1.0);
        assert!((r.duration_s - 2.0).abs() < 1e-9);
        assert_eq!(r.missing, vec!["sdz".to_string()]);
        assert_eq!(r.devices.len(), 2);
        let vda = &r.devices[0];
        assert_eq!(vda.name, "vda");
        // Whole run from first and last: +2000 reads over 2 s.
        assert_eq!(vda.whole.reads, 2000);
        assert!((vda.whole.reads_per_sec - 1000.0).abs() < 1e-9);
        assert!((vda.whole.avg_queue_len - 4.5).abs() < 1e-9);
        // Series: an idle second, then the busy one.
        assert_eq!(vda.series.len(), 2);
        assert_eq!(vda.series[0].reads, 0);
        assert_eq!(vda.series[1].reads, 2000);
        assert!((vda.series[1].t_s - 1.0).abs() < 1e-9);
        assert!((vda.series[1].duration_s - 1.0).abs() < 1e-9);
        assert!((vda.series[1].reads_per_sec - 2000.0).abs() < 1e-9);
        assert!((vda.series[1].avg_queue_len - 9.0).abs() < 1e-9);
        // The series telescopes to the whole.
        let sum: u64 = vda.series.iter().map(|c| c.reads + c.writes).sum();
        assert_eq!(sum, vda.whole.reads + vda.whole.writes);
        assert_eq!(r.device("vda1").unwrap().reads, 2000);
        // CPU: stat_a -> stat_c; cpu1 is the busy one.
        assert_eq!(r.cpu_whole.len(), 3);
        assert_eq!(r.cpu_whole[0].cpu, None);
        assert_eq!(r.cpu_series.len(), 2);
        assert_eq!(r.cpu_series[1].cores.len(), 3);
        let (core, busy) = r.busiest_core().unwrap();
        assert_eq!(core, 1);
        // cpu1: 100 ticks each second; second 1: 20 busy, second 2: 98 busy.
        assert!((busy - 59.0).abs() < 1e-9, "{busy}");
        assert!((r.cpu_series[1].cores[2].busy_pct - 98.0).abs() < 1e-9);
        assert!((r.cpu_series[1].cores[2].system_pct - 60.0).abs() < 1e-9);
        assert!((r.cpu_series[1].cores[2].irq_pct - 8.0).abs() < 1e-9);
        let text = r.render_text();
        let expected = "vda: 1500 transfers/s (r 1000, w 500), 7.81 MiB/s, 5.3 KiB/transfer, await r 1.50 ms w 5.00 ms, queue 4.50, busy 90%, flushes 5/s\n\
            vda1: 1500 transfers/s (r 1000, w 500), 7.81 MiB/s, 5.3 KiB/transfer, await r 1.50 ms w 5.00 ms, queue 4.50, busy 90%\n\
            sdz: not in /proc/diskstats\n\
            cpu (all): busy 33% (user 15, system 16, irq 2, iowait 0, steal 0)\n\
            cpu0: busy 8% (user 8, system 0, irq 0, iowait 0, steal 0)\n\
            cpu1: busy 59% (user 22, system 32, irq 4, iowait 0, steal 0)\n";
        assert_eq!(text, expected);
        let json = serde_json::to_string(&r).unwrap();
        let back: MonitorReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn empty_and_tiny_tails() {
        let r = build_report(&[], &["vda".to_string()], Duration::from_secs(1));
        assert_eq!(r.missing, vec!["vda".to_string()]);
        let t0 = Instant::now();
        let s = vec![
            sample(t0, "diskstats_20.txt", "stat_a.txt"),
            sample(
                t0 + Duration::from_secs(1),
                "diskstats_20_later.txt",
                "stat_b.txt",
            ),
            sample(
                t0 + Duration::from_secs(1) + Duration::from_micros(100),
                "diskstats_20_later.txt",
                "stat_b.txt",
            ),
        ];
        let r = build_report(&s, &["vda".to_string()], Duration::from_secs(1));
        assert_eq!(
            r.devices[0].series.len(),
            1,
            "a 100 µs tail is not an interval"
        );
        assert_eq!(r.devices[0].whole.reads, 2000);
    }

    #[test]
    fn reset_restarts_the_sampling_grid() {
        let m = Monitor::start(Vec::new(), Duration::from_millis(40));
        std::thread::sleep(Duration::from_millis(30));
        m.reset_baseline();
        std::thread::sleep(Duration::from_millis(130));
        let r = m.stop();
        assert!(r.cpu_series.len() >= 2, "{}", r.cpu_series.len());
        // Without the restart the first interval would end ~10 ms after the reset.
        assert!(
            r.cpu_series[0].duration_s >= 0.039,
            "first interval after reset: {} s",
            r.cpu_series[0].duration_s
        );
        assert!(r.cpu_series[0].t_s == 0.0);
        assert!(r.devices.is_empty() && r.missing.is_empty());
    }

    #[test]
    fn live_monitor_samples_and_resets() {
        let dev = diskstats::read_diskstats()
            .into_iter()
            .next()
            .map(|d| d.name);
        let devices: Vec<String> = dev.into_iter().collect();
        let m = Monitor::start(devices.clone(), Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(70));
        let before = std::time::Instant::now();
        m.reset_baseline();
        // Counted from the reset, not from the start 70 ms earlier.
        assert!(m.elapsed() <= before.elapsed());
        std::thread::sleep(Duration::from_millis(110));
        let r = m.stop();
        assert!(
            r.duration_s >= 0.1 && r.duration_s < 5.0,
            "{}",
            r.duration_s
        );
        assert!(!r.cpu_whole.is_empty(), "/proc/stat sampled");
        // Who used the CPU, from the baseline's and the final sample's /proc scans.
        let a = r.attribution.as_ref().expect("attribution");
        assert_eq!(a.cores, r.cpu_whole.len() - 1);
        assert!((a.window_s - r.duration_s).abs() < 1e-9);
        // ~5 intervals after the reset (loose: the machine is shared).
        assert!(
            !r.cpu_series.is_empty() && r.cpu_series.len() <= 8,
            "{}",
            r.cpu_series.len()
        );
        let first_t = r.cpu_series[0].t_s;
        assert!(
            first_t < 0.05,
            "series restarts at the new baseline: {first_t}"
        );
        assert_eq!(r.devices.len(), devices.len());
        for p in &r.cpu_series {
            assert!(p.duration_s > 0.0);
        }
    }

    #[cfg(target_os = "linux")]
    use crate::sysmon::test_loop::LoopGuard;

    /// End to end on a real block device: a loop device over a 64 MiB temp
    /// file, N direct 4 KiB writes then N direct reads with plain pwrite/pread,
    /// and the monitor must count N of each.
    #[cfg(target_os = "linux")]
    #[test]
    fn loop_device_counters_match_direct_io() {
        use crate::platform::fs::{read_at, write_all_at};
        if !crate::platform::process::is_root() {
            crate::testkit::skip("loop_device_counters_match_direct_io: needs root for losetup");
            return;
        }
        if std::process::Command::new("losetup")
            .arg("--version")
            .output()
            .is_err()
        {
            crate::testkit::skip("loop_device_counters_match_direct_io: losetup not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("loop.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .unwrap();
        if !out.status.success() {
            crate::testkit::skip(&format!(
                "loop_device_counters_match_direct_io: losetup -f failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return;
        }
        let devpath = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let _guard = LoopGuard(devpath.clone());

        let info = match crate::sysmon::mounts::resolve_target(std::path::Path::new(&devpath)) {
            crate::sysmon::mounts::Resolution::Device(d) => d,
            other => panic!("{devpath} did not resolve to a device: {other:?}"),
        };
        let kname = devpath.trim_start_matches("/dev/").to_string();
        assert_eq!(info.name, kname);
        assert_eq!(info.disk, kname);
        assert!(!info.partition);
        assert_eq!(info.size_bytes, 64 << 20);
        let backing = info
            .backing_file
            .clone()
            .expect("loop device names its backing file");
        assert!(backing.ends_with("loop.img"), "{backing}");

        let how = crate::platform::fs::OpenHow {
            write: true,
            direct: true,
            ..Default::default()
        };
        let f = crate::platform::fs::open(std::path::Path::new(&devpath), how).unwrap();
        const N: u64 = 256;
        const BS: usize = 4096;
        let mut buf = crate::buf::AlignedBuf::new(BS);
        let m = Monitor::start(info.monitor_names(), Duration::from_millis(20));
        m.reset_baseline();
        for i in 0..N {
            buf.as_mut_slice().fill((i % 251) as u8 + 1);
            // Every other 4 KiB block, so no two requests are adjacent.
            write_all_at(&f, buf.as_slice(), i * 2 * BS as u64).unwrap();
        }
        for i in 0..N {
            read_at(&f, buf.as_mut_slice(), i * 2 * BS as u64).unwrap();
            assert!(buf.as_slice().iter().all(|&b| b == (i % 251) as u8 + 1));
        }
        let r = m.stop();
        let d = r.device(&kname).expect("loop device in /proc/diskstats");
        // Tolerance: a few requests from anything else probing a new loop device.
        const TOL: u64 = 8;
        assert!(
            d.writes >= N && d.writes <= N + TOL,
            "writes {} vs {N}",
            d.writes
        );
        assert!(
            d.reads >= N && d.reads <= N + TOL,
            "reads {} vs {N}",
            d.reads
        );
        assert!(d.write_bytes >= N * BS as u64 && d.write_bytes <= (N + TOL) * BS as u64);
        assert!(d.read_bytes >= N * BS as u64 && d.read_bytes <= (N + TOL) * BS as u64);
        assert!(d.avg_bytes_per_transfer >= 4000.0 && d.avg_bytes_per_transfer <= 4096.0 * 1.01);
        assert!(d.duration_s > 0.0 && d.transfers_per_sec > 0.0);
        // io_ticks advances in whole jiffies and only when a tick lands while
        // a request is in flight; 512 fast requests on a quick host can all
        // fall between ticks, so "busy" may honestly read 0 here.
        assert!((0.0..=100.0).contains(&d.busy_pct), "busy {}", d.busy_pct);
        let series = &r.devices[0].series;
        let sum: u64 = series.iter().map(|c| c.reads + c.writes).sum();
        assert_eq!(sum, d.reads + d.writes, "the series adds up to the whole");
        crate::say!(
            "loop test: {kname}: {} reads, {} writes in {:.3} s; {:.0} IOPS, await r {:.3} ms w {:.3} ms, queue {:.2}, busy {:.0}%",
            d.reads, d.writes, d.duration_s, d.transfers_per_sec, d.avg_read_ms, d.avg_write_ms, d.avg_queue_len, d.busy_pct
        );
        // The checker agrees: direct I/O, the device saw what was issued.
        let warnings = crate::sysmon::check::self_check(&crate::sysmon::check::CheckInput {
            target: devpath.clone(),
            kind: crate::sysmon::content::TargetKind::BlockDevice,
            cache: crate::workload::CacheMode::Direct,
            issued_reads: N,
            issued_read_bytes: N * BS as u64,
            issued_writes: N,
            issued_write_bytes: N * BS as u64,
            lingering_writes: 0,
            lingering_write_bytes: 0,
            device_name: Some(kname.clone()),
            device: Some(d.clone()),
            no_device_reason: None,
            target_size: 64 << 20,
            mem_total_bytes: crate::sysmon::host::host_info().mem_total_bytes,
            file_sparse: false,
            zero_filled: false,
            direct_unavailable: false,
            loop_backing: None,
            unwritten: None,
            flushes: None,
        });
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    /// Unmounts a test mount when the test ends.
    #[cfg(target_os = "linux")]
    struct MountGuard(std::path::PathBuf);

    #[cfg(target_os = "linux")]
    impl Drop for MountGuard {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }

    /// A file on ext4 on a loop device resolves to that loop device, and
    /// buffered re-reads of a cached file are caught: the device sees none.
    #[cfg(target_os = "linux")]
    #[test]
    fn cached_reads_on_loop_filesystem_are_caught() {
        use crate::platform::fs::read_at;
        use std::io::Write;
        use std::process::Command;
        if !crate::platform::process::is_root() {
            crate::testkit::skip("cached_reads_on_loop_filesystem_are_caught: needs root");
            return;
        }
        let have = |tool: &str| Command::new(tool).arg("-V").output().is_ok();
        if !have("losetup") || !have("mkfs.ext4") || !have("mount") {
            crate::testkit::skip(
                "cached_reads_on_loop_filesystem_are_caught: losetup, mkfs.ext4 or mount missing",
            );
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("fs.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .unwrap();
        if !out.status.success() {
            crate::testkit::skip("cached_reads_on_loop_filesystem_are_caught: losetup -f failed");
            return;
        }
        let devpath = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let _loop = LoopGuard(devpath.clone());
        let ok = Command::new("mkfs.ext4")
            .args(["-q", "-F", &devpath])
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "mkfs.ext4: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
        let mnt = dir.path().join("mnt point");
        std::fs::create_dir(&mnt).unwrap();
        let ok = Command::new("mount")
            .arg(&devpath)
            .arg(&mnt)
            .output()
            .unwrap();
        if !ok.status.success() {
            crate::testkit::skip(&format!(
                "cached_reads_on_loop_filesystem_are_caught: mount failed: {}",
                String::from_utf8_lossy(&ok.stderr).trim()
            ));
            return;
        }
        let _mount = MountGuard(mnt.clone());

        let file = mnt.join("test.dat");
        const SIZE: usize = 8 << 20;
        let data: Vec<u8> = (0..SIZE as u32)
            .map(|x| (x.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut f = std::fs::File::create(&file).unwrap();
        f.write_all(&data).unwrap();
        f.sync_all().unwrap();
        drop(f);

        let kname = devpath.trim_start_matches("/dev/").to_string();
        let info = crate::sysmon::mounts::resolve_target(&file);
        let info = info.device().unwrap_or_else(|| panic!("{info:?}"));
        assert_eq!(info.name, kname);
        assert_eq!(info.fs_type.as_deref(), Some("ext4"));
        assert_eq!(info.mount_point.as_deref(), Some(mnt.to_str().unwrap()));
        assert!(!crate::sysmon::content::file_is_sparse(&file).unwrap());
        assert!(!crate::sysmon::content::looks_zero_filled(&file, 8).unwrap());

        // Warm the page cache, then measure buffered re-reads.
        let f = std::fs::File::open(&file).unwrap();
        let mut buf = vec![0u8; 4096];
        for off in (0..SIZE as u64).step_by(4096) {
            read_at(&f, &mut buf, off).unwrap();
        }
        let m = Monitor::start(info.monitor_names(), Duration::from_millis(50));
        m.reset_baseline();
        let n = (SIZE / 4096) as u64;
        for off in (0..SIZE as u64).step_by(4096) {
            read_at(&f, &mut buf, off).unwrap();
        }
        let r = m.stop();
        let d = r.device(&kname).unwrap().clone();
        assert!(
            d.read_bytes < (SIZE as u64) / 10,
            "the device saw {} bytes of cached reads",
            d.read_bytes
        );
        let w = crate::sysmon::check::self_check(&crate::sysmon::check::CheckInput {
            target: file.display().to_string(),
            kind: crate::sysmon::content::TargetKind::File,
            cache: crate::workload::CacheMode::Buffered,
            issued_reads: n,
            issued_read_bytes: SIZE as u64,
            issued_writes: 0,
            issued_write_bytes: 0,
            lingering_writes: 0,
            lingering_write_bytes: 0,
            device_name: Some(kname.clone()),
            device: Some(d),
            no_device_reason: None,
            target_size: SIZE as u64,
            mem_total_bytes: crate::sysmon::host::host_info().mem_total_bytes,
            file_sparse: false,
            zero_filled: false,
            direct_unavailable: false,
            loop_backing: None,
            unwritten: None,
            flushes: None,
        });
        let codes: Vec<&str> = w.iter().map(|w| w.code.as_str()).collect();
        assert!(codes.contains(&"cache_answered_reads"), "{w:?}");
        assert!(codes.contains(&"buffered_fits_in_memory"), "{w:?}");
    }
}
