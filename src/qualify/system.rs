//! The system under test, as the report names it: the host (kernel, CPU,
//! memory), the iosim that measured, the test files and how they were
//! opened, and each location's storage from sysfs, the mount table and
//! `statvfs` ([`crate::sysmon::storage`]). Gathered once, before the test
//! files are created, so a report says what was qualified wherever it is read.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::stage_id::StageId;
use super::Location;
use crate::dbms::Dbms;
use crate::sysmon::host::HostInfo;
use crate::sysmon::mounts::{DeviceInfo, Resolution};
use crate::sysmon::storage::{vendor_words, StorageFacts, Underlying};
use crate::text::escape_xml as esc;
use crate::units::format_size;
use crate::verdict::Role;
use crate::workload::{CacheMode, EngineKind};

/// How one stage opened its files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageCache {
    /// The stage (its name as in the stages table).
    pub stage: StageId,
    /// The cache modes its I/O used.
    pub cache: Vec<CacheMode>,
}

/// One location's storage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocationSystem {
    /// Role.
    pub role: Role,
    /// The file or device measured.
    pub target: String,
    /// A block device used whole.
    pub device: bool,
    /// Placed beside the data (no location given for it).
    pub derived: bool,
    /// Size of the test file, or of the device, bytes.
    pub test_bytes: u64,
    /// Its storage.
    pub storage: StorageFacts,
}

/// What was qualified, on what (every field defaults: a document stored
/// before iosim kept it loads with an empty one).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SystemUnderTest {
    /// iosim's version.
    pub iosim_version: String,
    /// The machine: host name, kernel, CPU model and count, memory.
    pub host: HostInfo,
    /// Engine asked for (`auto` picks io_uring, or sync at queue depth 1).
    pub engine: Option<EngineKind>,
    /// `--size`: the test file created in each directory, bytes.
    pub test_file_bytes: u64,
    /// How each stage opened its files.
    pub cache: Vec<StageCache>,
    /// Each location.
    pub locations: Vec<LocationSystem>,
}

/// Gathers the facts for `locs`, whose test files are `size` bytes each
/// (devices are measured whole), and `cache` per stage.
pub fn gather(
    locs: &[Location],
    size: u64,
    engine: EngineKind,
    cache: Vec<StageCache>,
) -> SystemUnderTest {
    let locations = locs
        .iter()
        .map(|l| {
            let storage = crate::sysmon::storage::describe(&l.target);
            let test_bytes = if l.device {
                std::fs::File::open(&l.target)
                    .and_then(|f| crate::target::device_size(&f))
                    .unwrap_or(0)
            } else {
                size
            };
            LocationSystem {
                role: l.role,
                target: l.target.display().to_string(),
                device: l.device,
                derived: l.derived,
                test_bytes,
                storage,
            }
        })
        .collect();
    SystemUnderTest {
        iosim_version: env!("CARGO_PKG_VERSION").to_string(),
        host: crate::sysmon::host::host_info(),
        engine: Some(engine),
        test_file_bytes: size,
        cache,
        locations,
    }
}

fn cache_words(c: CacheMode) -> &'static str {
    match c {
        CacheMode::Direct => "direct (O_DIRECT: past the page cache)",
        CacheMode::Buffered => "buffered (through the page cache)",
        CacheMode::Writethrough => "writethrough (page cache, O_DSYNC writes)",
        CacheMode::DirectWritethrough => {
            "direct-writethrough (O_DIRECT and O_DSYNC, as SQL Server opens its files)"
        }
    }
}

/// One device in words: name and what it is, model, vendor, driver, size,
/// rotational or not, scheduler, block sizes.
pub fn device_words(d: &DeviceInfo) -> String {
    let mut parts = vec![format!("/dev/{}", d.name)];
    if d.partition && d.disk != d.name {
        parts.push(format!("partition of {}", d.disk));
    }
    if let Some(n) = &d.dm_name {
        parts.push(format!("device-mapper {n}"));
    }
    parts.push(match &d.model {
        Some(m) => format!("model {m}"),
        None => "no model given".into(),
    });
    if let Some(v) = &d.vendor {
        parts.push(format!("vendor {}", vendor_words(v)));
    }
    if let Some(dr) = &d.driver {
        parts.push(format!("driver {dr}"));
    }
    parts.push(format_size(d.size_bytes));
    parts.push(
        if d.rotational {
            "rotational"
        } else {
            "not rotational"
        }
        .into(),
    );
    if let Some(s) = &d.scheduler {
        parts.push(format!("scheduler {s}"));
    }
    if d.logical_block_size > 0 {
        parts.push(format!(
            "sectors {}/{} B logical/physical",
            d.logical_block_size, d.physical_block_size
        ));
    }
    if let Some(b) = &d.backing_file {
        if !d.partition {
            parts.push(format!("loop device over {b}"));
        }
    }
    parts.join(", ")
}

fn resolution_words(r: &Resolution) -> String {
    match r {
        Resolution::Device(d) => device_words(d),
        Resolution::NoDevice { fs_type, reason } => {
            if fs_type.is_empty() {
                format!("no block device: {reason}")
            } else {
                format!("no block device ({fs_type}): {reason}")
            }
        }
    }
}

fn underlying_words(u: &Underlying) -> String {
    match &u.backing_file {
        Some(f) => format!(
            "{f}, the backing file of {}, is on {}{}",
            u.above,
            match u.device.device() {
                Some(DeviceInfo {
                    fs_type: Some(t),
                    mount_point: Some(m),
                    mount_options,
                    ..
                }) => format!(
                    "{t} on {m} (options {}), on ",
                    mount_options.as_deref().unwrap_or("?")
                ),
                _ => String::new(),
            },
            resolution_words(&u.device)
        ),
        None => format!(
            "{} {}: {}",
            u.layer.words(),
            u.above,
            resolution_words(&u.device)
        ),
    }
}

/// The rows (label, value) of one location, its role named as `dbms` names it.
pub fn location_rows(
    l: &LocationSystem,
    earlier: &[LocationSystem],
    dbms: Dbms,
) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let what = if l.device {
        format!(
            "{} (a block device, used whole: {})",
            l.target,
            format_size(l.test_bytes)
        )
    } else {
        format!(
            "{} ({} test file{})",
            l.target,
            format_size(l.test_bytes),
            if l.derived {
                ", beside the data: no location given for it"
            } else {
                ""
            }
        )
    };
    rows.push((dbms.role_name(l.role).to_string(), what));
    if let Some(e) = earlier
        .iter()
        .find(|e| e.storage.device == l.storage.device && e.storage.mount == l.storage.mount)
    {
        rows.push((
            "storage".into(),
            format!("the same as {}'s", dbms.role_name(e.role)),
        ));
        return rows;
    }
    rows.push(("device".into(), resolution_words(&l.storage.device)));
    if let Some(v) = l.storage.device.volume() {
        rows.push(("volume".into(), v.hint()));
    }
    for u in &l.storage.underlying {
        rows.push(("under it".into(), underlying_words(u)));
    }
    let fs = match (&l.storage.mount, l.storage.device.device()) {
        (Some(m), _) => Some(format!(
            "{} on {} from {}, options {}",
            m.fs_type,
            m.mount_point,
            m.source,
            m.options()
        )),
        (None, Some(d)) => d.fs_type.as_ref().map(|t| {
            format!(
                "{t} on {} (the device is mounted), options {}",
                d.mount_point.as_deref().unwrap_or("?"),
                d.mount_options.as_deref().unwrap_or("?")
            )
        }),
        (None, None) => None,
    };
    if let Some(f) = fs {
        rows.push(("filesystem".into(), f));
    }
    if let Some(s) = &l.storage.space {
        rows.push((
            "space".into(),
            format!(
                "{} in all, {} free ({} available to users), {} B blocks, {} inodes free{}",
                format_size(s.size_bytes),
                format_size(s.free_bytes),
                format_size(s.available_bytes),
                s.block_size,
                s.inodes_free,
                if s.read_only { ", read-only" } else { "" }
            ),
        ));
    }
    rows
}

/// The rows (label, value) of the host and the run: host, kernel, CPU,
/// memory, iosim, engine, test files, cache modes, budget.
pub fn host_rows(s: &SystemUnderTest, budget_s: f64) -> Vec<(String, String)> {
    let h = &s.host;
    let mut rows = vec![
        ("host".to_string(), h.host.clone()),
        ("kernel".to_string(), format!("Linux {}", h.kernel)),
        (
            "CPU".to_string(),
            format!(
                "{} ({} logical CPUs online)",
                if h.cpu_model.is_empty() {
                    "model not given"
                } else {
                    &h.cpu_model
                },
                h.cpus
            ),
        ),
        ("memory".to_string(), format_size(h.mem_total_bytes)),
        (
            "iosim".to_string(),
            format!(
                "{}{}",
                s.iosim_version,
                s.engine
                    .map(|e| format!(", engine {}", e.name()))
                    .unwrap_or_default()
            ),
        ),
        (
            "test files".to_string(),
            if s.locations.iter().all(|l| l.device) {
                "none: every location is a block device, measured whole".to_string()
            } else {
                format!(
                    "{} in each directory (--size); a block device is measured whole",
                    format_size(s.test_file_bytes)
                )
            },
        ),
    ];
    for c in &s.cache {
        let modes: Vec<&str> = c.cache.iter().map(|m| cache_words(*m)).collect();
        rows.push((
            "cache".to_string(),
            format!("{}: {}", c.stage, modes.join("; ")),
        ));
    }
    rows.push((
        "budget".to_string(),
        format!("{budget_s:.0} s (--time); each stage's share and time are in the stages table"),
    ));
    rows
}

/// Every row: the host's, then each location's.
fn all_rows(s: &SystemUnderTest, budget_s: f64, dbms: Dbms) -> Vec<Vec<(String, String)>> {
    let mut out = vec![host_rows(s, budget_s)];
    for (i, l) in s.locations.iter().enumerate() {
        out.push(location_rows(l, &s.locations[..i], dbms));
    }
    out
}

/// The text section (empty for a qualification stored before iosim kept it).
pub fn text(s: &SystemUnderTest, budget_s: f64, dbms: Dbms) -> String {
    if s.locations.is_empty() && s.host.kernel.is_empty() {
        return String::new();
    }
    let mut out = String::from("System under test:\n");
    for group in all_rows(s, budget_s, dbms) {
        for (k, v) in group {
            let _ = writeln!(out, "  {k:<12} {v}");
        }
    }
    out
}

/// The HTML section (`id="system"`).
pub fn html(s: &SystemUnderTest, budget_s: f64, dbms: Dbms) -> String {
    let mut out = String::from("<section id=\"system\"><h2>System under test</h2>\n");
    if s.locations.is_empty() && s.host.kernel.is_empty() {
        out.push_str("<p class=\"note\">Not recorded: this qualification was stored by an iosim that did not keep it.</p></section>\n");
        return out;
    }
    for (i, group) in all_rows(s, budget_s, dbms).into_iter().enumerate() {
        let _ = write!(
            out,
            "<table class=\"sut\" data-sut=\"{}\">",
            if i == 0 {
                "host".to_string()
            } else {
                s.locations[i - 1].role.name().to_string()
            }
        );
        for (k, v) in group {
            let _ = write!(
                out,
                "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>",
                esc(&k),
                esc(&v)
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysmon::storage::{FsSpace, Layer};

    fn disk() -> DeviceInfo {
        DeviceInfo {
            name: "vda1".into(),
            disk: "vda".into(),
            partition: true,
            vendor: Some("0x1af4".into()),
            driver: Some("virtio_blk".into()),
            size_bytes: 20 << 30,
            scheduler: Some("mq-deadline".into()),
            logical_block_size: 512,
            physical_block_size: 512,
            ..DeviceInfo::default()
        }
    }

    fn loc(role: Role, storage: StorageFacts) -> LocationSystem {
        LocationSystem {
            role,
            target: format!("/srv/iosim-qualify-{}.dat", role.name()),
            device: false,
            derived: role == Role::Log,
            test_bytes: 64 << 20,
            storage,
        }
    }

    fn storage() -> StorageFacts {
        let mount = crate::sysmon::mounts::parse_mountinfo(
            "25 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n",
        )
        .remove(0);
        StorageFacts {
            path: "/srv".into(),
            device: Resolution::Device(disk()),
            underlying: vec![Underlying {
                layer: Layer::WholeDisk,
                above: "vda1".into(),
                backing_file: None,
                device: Resolution::Device(DeviceInfo {
                    name: "vda".into(),
                    disk: "vda".into(),
                    size_bytes: 40 << 30,
                    rotational: true,
                    ..DeviceInfo::default()
                }),
            }],
            mount: Some(mount),
            space: Some(FsSpace {
                block_size: 4096,
                size_bytes: 20 << 30,
                free_bytes: 5 << 30,
                available_bytes: 4 << 30,
                inodes: 100,
                inodes_free: 50,
                read_only: false,
            }),
        }
    }

    #[test]
    fn a_location_is_described_from_its_device_down_to_its_filesystem() {
        let s = SystemUnderTest {
            iosim_version: "9.9.9".into(),
            host: HostInfo {
                host: "db1".into(),
                kernel: "6.1.0".into(),
                cpu_model: "AMD EPYC".into(),
                cpus: 2,
                mem_total_bytes: 24 << 30,
                clocksource: "tsc".into(),
            },
            engine: Some(EngineKind::Auto),
            test_file_bytes: 64 << 20,
            cache: vec![StageCache {
                stage: StageId::Sweeps,
                cache: vec![CacheMode::DirectWritethrough],
            }],
            locations: vec![loc(Role::Data, storage()), loc(Role::Log, storage())],
        };
        let t = text(&s, 600.0, Dbms::SQLSERVER);
        for want in [
            "  kernel       Linux 6.1.0\n",
            "  CPU          AMD EPYC (2 logical CPUs online)\n",
            "  memory       24GiB\n",
            "  iosim        9.9.9, engine auto\n",
            "  cache        sweeps: direct-writethrough (O_DIRECT and O_DSYNC",
            "  budget       600 s (--time)",
            "  data         /srv/iosim-qualify-data.dat (64MiB test file)\n",
            "  device       /dev/vda1, partition of vda, no model given, vendor 0x1af4 (virtio: the paravirtual disk of KVM/QEMU), driver virtio_blk, 20GiB, not rotational, scheduler mq-deadline, sectors 512/512 B logical/physical\n",
            "  under it     whole disk of vda1: /dev/vda, no model given, 40GiB, rotational\n",
            "  filesystem   ext4 on / from /dev/vda1, options rw,relatime,errors=remount-ro\n",
            "  space        20GiB in all, 5GiB free (4GiB available to users), 4096 B blocks, 50 inodes free\n",
            "  log          /srv/iosim-qualify-log.dat (64MiB test file, beside the data: no location given for it)\n  storage      the same as data's\n",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
        let h = html(&s, 600.0, Dbms::SQLSERVER);
        assert!(h.starts_with("<section id=\"system\">"));
        assert!(h.contains("data-sut=\"data\""), "{h}");
        assert!(h.contains("<th class=\"l\">under it</th>"), "{h}");
    }

    #[test]
    fn a_loop_backing_file_and_a_missing_device_are_said_in_words() {
        let u = Underlying {
            layer: Layer::BackingFile,
            above: "loop3".into(),
            backing_file: Some("/dev/shm/img".into()),
            device: Resolution::NoDevice {
                fs_type: "tmpfs".into(),
                reason: "in memory".into(),
            },
        };
        assert_eq!(
            underlying_words(&u),
            "/dev/shm/img, the backing file of loop3, is on no block device (tmpfs): in memory"
        );
        let on_disk = Underlying {
            device: Resolution::Device(DeviceInfo {
                fs_type: Some("ext4".into()),
                mount_point: Some("/".into()),
                mount_options: Some("rw,relatime".into()),
                ..disk()
            }),
            ..u
        };
        assert!(
            underlying_words(&on_disk).starts_with(
                "/dev/shm/img, the backing file of loop3, is on ext4 on / (options rw,relatime), on /dev/vda1, partition of vda,"
            ),
            "{}",
            underlying_words(&on_disk)
        );
    }

    #[test]
    fn an_old_document_without_the_section_loads_and_says_so() {
        let s: SystemUnderTest = serde_json::from_str("{}").unwrap();
        assert_eq!(text(&s, 60.0, Dbms::SQLSERVER), "");
        assert!(html(&s, 60.0, Dbms::SQLSERVER).contains("Not recorded"));
    }
}
