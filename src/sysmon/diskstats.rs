//! Block device counters from `/proc/diskstats` (on Windows, each physical
//! disk's `IOCTL_DISK_PERFORMANCE`, as the same lines), and the rates PerfMon's
//! PhysicalDisk object shows (Disk Transfers/sec, Disk Bytes/sec, Avg. Disk
//! Bytes/Transfer, Avg. Disk sec/Transfer, Avg. Disk Queue Length) computed
//! from two samples.
//!
//! The line format is the kernel's `Documentation/admin-guide/iostats.rst`:
//! `major minor name` then 11 fields (kernels before 4.18), 15 (4.18+: discards)
//! or 17 (5.5+: flushes), so 14, 18 or 20 whitespace-separated fields in all.

use serde::{Deserialize, Serialize};

use crate::platform::counters::DiskPerformance;

/// `/proc/diskstats` counts sectors of 512 bytes whatever the device's
/// logical block size (a 4Kn disk still reports 512-byte units).
pub const DISKSTATS_SECTOR: u64 = 512;

/// One line of `/proc/diskstats`: cumulative counters since boot (or since the
/// device appeared).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStat {
    /// Major device number.
    pub major: u32,
    /// Minor device number.
    pub minor: u32,
    /// Kernel name (`sda`, `sda1`, `nvme0n1`, `dm-0`, `loop3`).
    pub name: String,
    /// Reads completed.
    pub reads: u64,
    /// Adjacent reads merged into one request before reaching the device.
    pub reads_merged: u64,
    /// 512-byte sectors read.
    pub sectors_read: u64,
    /// Milliseconds spent by all reads (sum of each read's time).
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Writes merged.
    pub writes_merged: u64,
    /// 512-byte sectors written.
    pub sectors_written: u64,
    /// Milliseconds spent by all writes.
    pub write_ms: u64,
    /// I/Os in flight right now (not cumulative).
    pub in_flight: u64,
    /// Milliseconds during which at least one I/O was in flight.
    pub io_ticks_ms: u64,
    /// Weighted milliseconds: the sum of every I/O's time, i.e. the integral
    /// of the queue length over time.
    pub time_in_queue_ms: u64,
    /// Discards completed (4.18+; 0 before).
    pub discards: u64,
    /// Discards merged.
    pub discards_merged: u64,
    /// Sectors discarded.
    pub sectors_discarded: u64,
    /// Milliseconds spent discarding.
    pub discard_ms: u64,
    /// Flush requests completed (5.5+; 0 before).
    pub flushes: u64,
    /// Milliseconds spent flushing.
    pub flush_ms: u64,
    /// How many fields the line had (14, 18 or 20), so a reader knows which
    /// of the later counters are real zeros.
    pub fields: u8,
}

/// Parses `/proc/diskstats`. Lines with fewer than 14 fields or non-numeric
/// counters are skipped; extra trailing fields from future kernels are ignored.
pub fn parse_diskstats(text: &str) -> Vec<DiskStat> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let (Ok(major), Ok(minor)) = (f[0].parse::<u32>(), f[1].parse::<u32>()) else {
            continue;
        };
        let mut v = [0u64; 17];
        let n = (f.len() - 3).min(17);
        let mut ok = true;
        for i in 0..n {
            match f[3 + i].parse::<u64>() {
                Ok(x) => v[i] = x,
                Err(_) => {
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        out.push(DiskStat {
            major,
            minor,
            name: f[2].to_string(),
            reads: v[0],
            reads_merged: v[1],
            sectors_read: v[2],
            read_ms: v[3],
            writes: v[4],
            writes_merged: v[5],
            sectors_written: v[6],
            write_ms: v[7],
            in_flight: v[8],
            io_ticks_ms: v[9],
            time_in_queue_ms: v[10],
            discards: v[11],
            discards_merged: v[12],
            sectors_discarded: v[13],
            discard_ms: v[14],
            flushes: v[15],
            flush_ms: v[16],
            fields: (n + 3) as u8,
        });
    }
    out
}

/// Reads `/proc/diskstats` now (empty if unreadable); on Windows, every
/// physical disk's counters ([`crate::platform::counters::disks`]) as the
/// same lines.
pub fn read_diskstats() -> Vec<DiskStat> {
    if let Some(d) = crate::platform::counters::disks() {
        return d.iter().map(from_disk_performance).collect();
    }
    std::fs::read_to_string("/proc/diskstats")
        .map(|t| parse_diskstats(&t))
        .unwrap_or_default()
}

/// The name Windows gives physical disk `n`, as `\\.\PhysicalDriveN`
/// opens it and Performance Monitor's PhysicalDisk instances number it.
pub fn physical_drive_name(n: u32) -> String {
    format!("PhysicalDrive{n}")
}

/// Windows counts disk time in 100 ns units.
const HUNDRED_NS_PER_MS: u64 = 10_000;

/// One Windows disk's counters as a `/proc/diskstats` line (14 fields):
/// bytes as 512-byte sectors, read and write time in ms, the requests in
/// flight now, `time_in_queue_ms` = read + write time (the integral of the
/// queue length: "Avg. Disk Queue Length"), and `io_ticks_ms` = query time
/// − idle time, whose change between two samples is the busy time
/// (100 − "% Idle Time"). No merges, discards or flushes (0), no device
/// numbers (0:0). Windows' read and write counts are 32-bit: a wrap between
/// two samples reads as a reset (0 for that interval).
pub fn from_disk_performance(p: &DiskPerformance) -> DiskStat {
    let ms = |v: u64| v / HUNDRED_NS_PER_MS;
    let (read_ms, write_ms) = (ms(p.read_time), ms(p.write_time));
    DiskStat {
        name: physical_drive_name(p.number),
        reads: u64::from(p.read_count),
        sectors_read: p.bytes_read / DISKSTATS_SECTOR,
        read_ms,
        writes: u64::from(p.write_count),
        sectors_written: p.bytes_written / DISKSTATS_SECTOR,
        write_ms,
        in_flight: u64::from(p.queue_depth),
        io_ticks_ms: ms(p.query_time.saturating_sub(p.idle_time)),
        time_in_queue_ms: read_ms + write_ms,
        fields: 14,
        ..Default::default()
    }
}

/// Difference of a 64-bit counter (`unsigned long` in the kernel). A counter
/// that went backwards (device removed and re-added) gives 0, not garbage.
fn delta64(a: u64, b: u64) -> u64 {
    b.saturating_sub(a)
}

/// Difference of a millisecond counter. The kernel prints the time fields as
/// `unsigned int` (`jiffies_to_msecs`), so they wrap at 2^32 ms (49.7 days of
/// busy time); a wrap between two samples is undone here.
fn delta_ms(a: u64, b: u64) -> u64 {
    if b >= a {
        b - a
    } else if a <= u32::MAX as u64 {
        b + (1u64 << 32) - a
    } else {
        0
    }
}

/// What a device did between two samples, as rates and averages.
///
/// Counts are requests as the device saw them, after the block layer merged
/// or split them, so they can differ from the I/Os iosim issued.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceCounters {
    /// Start of the interval, seconds after the monitor's baseline (0 for whole-run counters).
    pub t_s: f64,
    /// Length of the interval, seconds.
    pub duration_s: f64,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Reads merged into other requests by the block layer.
    pub reads_merged: u64,
    /// Writes merged.
    pub writes_merged: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Discards completed (0 on kernels before 4.18).
    pub discards: u64,
    /// Flushes completed (0 on kernels before 5.5).
    pub flushes: u64,
    /// (reads + writes) / s: PerfMon "Disk Transfers/sec".
    pub transfers_per_sec: f64,
    /// Reads / s: "Disk Reads/sec".
    pub reads_per_sec: f64,
    /// Writes / s: "Disk Writes/sec".
    pub writes_per_sec: f64,
    /// (read + write bytes) / s: "Disk Bytes/sec".
    pub bytes_per_sec: f64,
    /// "Disk Read Bytes/sec".
    pub read_bytes_per_sec: f64,
    /// "Disk Write Bytes/sec".
    pub write_bytes_per_sec: f64,
    /// Bytes per request: "Avg. Disk Bytes/Transfer".
    pub avg_bytes_per_transfer: f64,
    /// Bytes per read: "Avg. Disk Bytes/Read".
    pub avg_read_bytes: f64,
    /// Bytes per write: "Avg. Disk Bytes/Write".
    pub avg_write_bytes: f64,
    /// Milliseconds per read, queue time included (iostat `r_await`;
    /// "Avg. Disk sec/Read" × 1000).
    pub avg_read_ms: f64,
    /// Milliseconds per write (iostat `w_await`; "Avg. Disk sec/Write" × 1000).
    pub avg_write_ms: f64,
    /// Milliseconds per read or write ("Avg. Disk sec/Transfer" × 1000).
    pub avg_transfer_ms: f64,
    /// Mean requests in flight (iostat `aqu-sz`; "Avg. Disk Queue Length").
    pub avg_queue_len: f64,
    /// Percent of the interval with at least one request in flight (iostat
    /// `%util`; 100 − "% Idle Time"). Capped at 100.
    pub busy_pct: f64,
    /// Requests in flight when the interval ended.
    pub in_flight_end: u64,
}

impl DeviceCounters {
    /// One line for a text report: rates, sizes, await, queue and busy.
    pub fn summary(&self) -> String {
        let flushes = if self.flushes > 0 && self.duration_s > 0.0 {
            format!(", flushes {:.0}/s", self.flushes as f64 / self.duration_s)
        } else {
            String::new()
        };
        format!(
            "{:.0} transfers/s (r {:.0}, w {:.0}), {:.2} MiB/s, {:.1} KiB/transfer, await r {:.2} ms w {:.2} ms, queue {:.2}, busy {:.0}%{flushes}",
            self.transfers_per_sec,
            self.reads_per_sec,
            self.writes_per_sec,
            self.bytes_per_sec / (1u64 << 20) as f64,
            self.avg_bytes_per_transfer / 1024.0,
            self.avg_read_ms,
            self.avg_write_ms,
            self.avg_queue_len,
            self.busy_pct
        )
    }
}

/// Counters between samples `before` and `after` taken `secs` seconds apart.
/// `sector_size` is the unit of the sector fields: [`DISKSTATS_SECTOR`] (512)
/// for `/proc/diskstats`.
pub fn device_counters(
    before: &DiskStat,
    after: &DiskStat,
    secs: f64,
    sector_size: u64,
) -> DeviceCounters {
    let reads = delta64(before.reads, after.reads);
    let writes = delta64(before.writes, after.writes);
    let read_bytes = delta64(before.sectors_read, after.sectors_read) * sector_size;
    let write_bytes = delta64(before.sectors_written, after.sectors_written) * sector_size;
    let read_ms = delta_ms(before.read_ms, after.read_ms);
    let write_ms = delta_ms(before.write_ms, after.write_ms);
    let io_ticks = delta_ms(before.io_ticks_ms, after.io_ticks_ms);
    let in_queue = delta_ms(before.time_in_queue_ms, after.time_in_queue_ms);
    let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    let ratio = |a: f64, b: u64| if b > 0 { a / b as f64 } else { 0.0 };
    let transfers = reads + writes;
    let elapsed_ms = secs * 1000.0;
    DeviceCounters {
        t_s: 0.0,
        duration_s: secs,
        reads,
        writes,
        reads_merged: delta64(before.reads_merged, after.reads_merged),
        writes_merged: delta64(before.writes_merged, after.writes_merged),
        read_bytes,
        write_bytes,
        discards: delta64(before.discards, after.discards),
        flushes: delta64(before.flushes, after.flushes),
        transfers_per_sec: per_sec(transfers as f64),
        reads_per_sec: per_sec(reads as f64),
        writes_per_sec: per_sec(writes as f64),
        bytes_per_sec: per_sec((read_bytes + write_bytes) as f64),
        read_bytes_per_sec: per_sec(read_bytes as f64),
        write_bytes_per_sec: per_sec(write_bytes as f64),
        avg_bytes_per_transfer: ratio((read_bytes + write_bytes) as f64, transfers),
        avg_read_bytes: ratio(read_bytes as f64, reads),
        avg_write_bytes: ratio(write_bytes as f64, writes),
        avg_read_ms: ratio(read_ms as f64, reads),
        avg_write_ms: ratio(write_ms as f64, writes),
        avg_transfer_ms: ratio((read_ms + write_ms) as f64, transfers),
        avg_queue_len: if elapsed_ms > 0.0 {
            in_queue as f64 / elapsed_ms
        } else {
            0.0
        },
        busy_pct: if elapsed_ms > 0.0 {
            (100.0 * io_ticks as f64 / elapsed_ms).min(100.0)
        } else {
            0.0
        },
        in_flight_end: after.in_flight,
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

    #[test]
    fn parses_14_field_lines() {
        let v = parse_diskstats(&fixture("diskstats_14.txt"));
        let sda = v.iter().find(|d| d.name == "sda").unwrap();
        assert_eq!(sda.fields, 14);
        assert_eq!((sda.major, sda.minor), (8, 0));
        assert_eq!(sda.reads, 93_412);
        assert_eq!(sda.sectors_written, 9_018_560);
        assert_eq!(sda.time_in_queue_ms, 1_214_084);
        assert_eq!(sda.discards, 0);
        assert_eq!(sda.flushes, 0);
        assert!(v.iter().any(|d| d.name == "sda1"));
    }

    #[test]
    fn parses_18_field_lines() {
        let v = parse_diskstats(&fixture("diskstats_18.txt"));
        let d = v.iter().find(|d| d.name == "nvme0n1").unwrap();
        assert_eq!(d.fields, 18);
        assert_eq!(d.discards, 1_234);
        assert_eq!(d.sectors_discarded, 9_876_543);
        assert_eq!(d.discard_ms, 321);
        assert_eq!(d.flushes, 0);
    }

    #[test]
    fn parses_20_field_lines() {
        let v = parse_diskstats(&fixture("diskstats_20.txt"));
        let d = v.iter().find(|d| d.name == "vda").unwrap();
        assert_eq!(d.fields, 20);
        assert_eq!(d.reads, 405_724);
        assert_eq!(d.reads_merged, 6_947);
        assert_eq!(d.sectors_read, 7_219_330);
        assert_eq!(d.read_ms, 120_006);
        assert_eq!(d.writes, 13_418);
        assert_eq!(d.in_flight, 0);
        assert_eq!(d.io_ticks_ms, 20_120);
        assert_eq!(d.time_in_queue_ms, 286_832);
        assert_eq!(d.discards, 4_766);
        assert_eq!(d.discard_ms, 2_950);
        assert_eq!(d.flushes, 806);
        assert_eq!(d.flush_ms, 3_952);
        let dm = v.iter().find(|d| d.name == "dm-0").unwrap();
        assert_eq!((dm.major, dm.minor), (253, 0));
    }

    #[test]
    fn skips_garbage_and_short_lines() {
        let v = parse_diskstats(
            "\n 8 0 sda 1 2 3\nx y sdz 0 0 0 0 0 0 0 0 0 0 0\n 8 16 sdb 1 0 8 1 0 0 0 0 0 1 1 zz 0 0 0\n",
        );
        assert!(v.is_empty(), "{v:?}");
    }

    #[test]
    fn counters_between_two_samples() {
        let a = parse_diskstats(&fixture("diskstats_20.txt"));
        let b = parse_diskstats(&fixture("diskstats_20_later.txt"));
        let a = a.iter().find(|d| d.name == "vda").unwrap();
        let b = b.iter().find(|d| d.name == "vda").unwrap();
        // Fixture: +2000 reads of 8 sectors, +1000 writes of 16 sectors over 2 s;
        // +3000 ms read time, +5000 ms write time, +1800 io_ticks, +9000 weighted.
        let c = device_counters(a, b, 2.0, DISKSTATS_SECTOR);
        assert_eq!(c.reads, 2000);
        assert_eq!(c.writes, 1000);
        assert_eq!(c.read_bytes, 2000 * 8 * 512);
        assert_eq!(c.write_bytes, 1000 * 16 * 512);
        assert!((c.transfers_per_sec - 1500.0).abs() < 1e-9);
        assert!((c.reads_per_sec - 1000.0).abs() < 1e-9);
        assert!((c.writes_per_sec - 500.0).abs() < 1e-9);
        assert!((c.bytes_per_sec - (2000.0 * 4096.0 + 1000.0 * 8192.0) / 2.0).abs() < 1e-6);
        assert!((c.read_bytes_per_sec - 2000.0 * 4096.0 / 2.0).abs() < 1e-6);
        assert!(
            (c.avg_bytes_per_transfer - (2000.0 * 4096.0 + 1000.0 * 8192.0) / 3000.0).abs() < 1e-6
        );
        assert!((c.avg_read_bytes - 4096.0).abs() < 1e-9);
        assert!((c.avg_write_bytes - 8192.0).abs() < 1e-9);
        assert!((c.avg_read_ms - 1.5).abs() < 1e-9);
        assert!((c.avg_write_ms - 5.0).abs() < 1e-9);
        assert!((c.avg_transfer_ms - 8000.0 / 3000.0).abs() < 1e-9);
        assert!((c.avg_queue_len - 4.5).abs() < 1e-9);
        assert!((c.busy_pct - 90.0).abs() < 1e-9);
        assert_eq!(c.flushes, 10);
        assert_eq!(c.in_flight_end, 3);
        assert_eq!(
            c.summary(),
            "1500 transfers/s (r 1000, w 500), 7.81 MiB/s, 5.3 KiB/transfer, await r 1.50 ms w 5.00 ms, queue 4.50, busy 90%, flushes 5/s"
        );
    }

    #[test]
    fn idle_interval_has_no_nans() {
        let a = parse_diskstats(&fixture("diskstats_20.txt"));
        let c = device_counters(&a[0], &a[0], 1.0, DISKSTATS_SECTOR);
        assert_eq!(c.transfers_per_sec, 0.0);
        assert_eq!(c.avg_read_ms, 0.0);
        assert_eq!(c.avg_bytes_per_transfer, 0.0);
        let z = device_counters(&a[0], &a[0], 0.0, DISKSTATS_SECTOR);
        assert_eq!(z.bytes_per_sec, 0.0);
        assert_eq!(z.busy_pct, 0.0);
    }

    #[test]
    fn millisecond_counters_wrap_at_32_bits() {
        let a = DiskStat {
            reads: 10,
            read_ms: u32::MAX as u64 - 99,
            io_ticks_ms: u32::MAX as u64 - 9,
            ..Default::default()
        };
        let b = DiskStat {
            reads: 20,
            read_ms: 100,
            io_ticks_ms: 490,
            ..Default::default()
        };
        let c = device_counters(&a, &b, 1.0, 512);
        assert!((c.avg_read_ms - 20.0).abs() < 1e-9); // 200 ms / 10 reads
        assert!((c.busy_pct - 50.0).abs() < 1e-9); // 500 ms of 1000
    }

    #[test]
    fn counter_reset_gives_zero_not_garbage() {
        let a = DiskStat {
            reads: 1000,
            sectors_read: 8000,
            ..Default::default()
        };
        let b = DiskStat {
            reads: 5,
            sectors_read: 40,
            ..Default::default()
        };
        let c = device_counters(&a, &b, 1.0, 512);
        assert_eq!(c.reads, 0);
        assert_eq!(c.read_bytes, 0);
    }

    #[test]
    fn sector_size_scales_bytes() {
        let a = DiskStat::default();
        let b = DiskStat {
            writes: 1,
            sectors_written: 2,
            ..Default::default()
        };
        assert_eq!(device_counters(&a, &b, 1.0, 4096).write_bytes, 8192);
    }

    #[test]
    fn windows_counters_become_diskstats_lines() {
        // 100 ns units per millisecond.
        const MS: u64 = 10_000;
        let a = DiskPerformance {
            number: 2,
            bytes_read: 4096 * 1000,
            bytes_written: 8192 * 500,
            read_time: 1500 * MS,
            write_time: 2500 * MS,
            idle_time: 50_000 * MS,
            read_count: 1000,
            write_count: 500,
            queue_depth: 3,
            query_time: 130_000_000 * MS,
        };
        let d = from_disk_performance(&a);
        assert_eq!(d.name, "PhysicalDrive2");
        assert_eq!((d.major, d.minor, d.fields), (0, 0, 14));
        assert_eq!((d.reads, d.sectors_read, d.read_ms), (1000, 8000, 1500));
        assert_eq!((d.writes, d.sectors_written, d.write_ms), (500, 8000, 2500));
        assert_eq!((d.in_flight, d.time_in_queue_ms), (3, 4000));
        assert_eq!(d.io_ticks_ms, 130_000_000 - 50_000);
        assert_eq!((d.reads_merged, d.discards, d.flushes), (0, 0, 0));
        // Two seconds later: 2000 more 4 KiB reads taking 3 s in all, 1.2 s
        // of the 2 idle, 1 request in flight.
        let b = DiskPerformance {
            bytes_read: a.bytes_read + 2000 * 4096,
            read_time: a.read_time + 3000 * MS,
            idle_time: a.idle_time + 1200 * MS,
            read_count: a.read_count + 2000,
            queue_depth: 1,
            query_time: a.query_time + 2000 * MS,
            ..a
        };
        let c = device_counters(&d, &from_disk_performance(&b), 2.0, DISKSTATS_SECTOR);
        assert_eq!((c.reads, c.writes, c.read_bytes), (2000, 0, 2000 * 4096));
        assert!((c.reads_per_sec - 1000.0).abs() < 1e-9);
        assert!((c.avg_read_ms - 1.5).abs() < 1e-9);
        // Avg. Disk Queue Length: 3 s of request time over 2 s.
        assert!((c.avg_queue_len - 1.5).abs() < 1e-9);
        // % Idle Time 60: busy 40.
        assert!((c.busy_pct - 40.0).abs() < 1e-9, "{}", c.busy_pct);
        assert_eq!(c.in_flight_end, 1);
    }

    #[test]
    fn read_diskstats_reads_this_system() {
        let raw = crate::platform::counters::disks();
        let v = read_diskstats();
        if crate::platform::IS_WINDOWS {
            // Whatever Windows (or Wine) gives reaches read_diskstats.
            let names: Vec<String> = raw
                .unwrap_or_default()
                .iter()
                .map(|p| physical_drive_name(p.number))
                .collect();
            assert_eq!(v.iter().map(|d| d.name.clone()).collect::<Vec<_>>(), names);
            assert!(v.iter().all(|d| d.fields == 14), "{v:?}");
        } else {
            assert_eq!(raw, None);
        }
    }

    #[test]
    fn round_trips_through_json() {
        let v = parse_diskstats(&fixture("diskstats_18.txt"));
        let s = serde_json::to_string(&v).unwrap();
        let back: Vec<DiskStat> = serde_json::from_str(&s).unwrap();
        assert_eq!(v, back);
        let c = device_counters(&v[0], &v[0], 1.0, 512);
        let s = serde_json::to_string(&c).unwrap();
        let back: DeviceCounters = serde_json::from_str(&s).unwrap();
        assert_eq!(c, back);
    }
}
