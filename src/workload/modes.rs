//! The workload's modes: the access pattern and mix, how files are opened,
//! which engine issues the I/O, and what new test files are filled with.

use serde::{Deserialize, Serialize};

use super::data;

/// The access pattern and read/write mix, named as fio names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential mixed reads and writes (`--write-pct`, default 50).
    Readwrite,
    /// Random mixed reads and writes (`--write-pct`, default 50).
    Randrw,
}

impl RwMode {
    /// Every mode, in the order the command line lists them.
    pub const ALL: [RwMode; 6] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::Randread,
        RwMode::Randwrite,
        RwMode::Readwrite,
        RwMode::Randrw,
    ];

    /// The mode with this command-line name (any case).
    pub fn from_name(name: &str) -> Option<RwMode> {
        RwMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }

    /// True for the random patterns.
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::Randread | RwMode::Randwrite | RwMode::Randrw)
    }

    /// True for the mixed patterns, which take `--write-pct`.
    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::Readwrite | RwMode::Randrw)
    }

    /// The share of writes this mode implies when no `--write-pct` is given.
    pub fn default_write_pct(self) -> u8 {
        match self {
            RwMode::Read | RwMode::Randread => 0,
            RwMode::Write | RwMode::Randwrite => 100,
            RwMode::Readwrite | RwMode::Randrw => 50,
        }
    }

    /// The mode for a given pattern and write share (as DiskSpd's `-r` and `-w` combine).
    pub fn from_parts(random: bool, write_pct: u8) -> RwMode {
        match (random, write_pct) {
            (false, 0) => RwMode::Read,
            (false, 100) => RwMode::Write,
            (false, _) => RwMode::Readwrite,
            (true, 0) => RwMode::Randread,
            (true, 100) => RwMode::Randwrite,
            (true, _) => RwMode::Randrw,
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Randread => "randread",
            RwMode::Randwrite => "randwrite",
            RwMode::Readwrite => "readwrite",
            RwMode::Randrw => "randrw",
        }
    }
}

/// How I/O meets the page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// O_DIRECT: bypass the page cache (DiskSpd -Su, SQLIO's default unbuffered I/O).
    Direct,
    /// Through the page cache (SQLIO -BY, DiskSpd -Sb).
    Buffered,
    /// Page cache with O_DSYNC: each write returns once stable (DiskSpd -Sw).
    Writethrough,
    /// O_DIRECT and O_DSYNC together, as SQL Server opens its files (DiskSpd -Sh).
    DirectWritethrough,
}

impl CacheMode {
    /// Every mode, in the order the command line lists them.
    pub const ALL: [CacheMode; 4] = [
        CacheMode::Direct,
        CacheMode::Buffered,
        CacheMode::Writethrough,
        CacheMode::DirectWritethrough,
    ];

    /// True when O_DIRECT is used.
    pub fn is_direct(self) -> bool {
        matches!(self, CacheMode::Direct | CacheMode::DirectWritethrough)
    }

    /// True when O_DSYNC is used.
    pub fn is_sync(self) -> bool {
        matches!(
            self,
            CacheMode::Writethrough | CacheMode::DirectWritethrough
        )
    }

    /// True when each write must reach the device before it completes
    /// (O_DIRECT or O_DSYNC); otherwise it may wait in the page cache.
    pub fn writes_reach_device(self) -> bool {
        self.is_direct() || self.is_sync()
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Direct => "direct",
            CacheMode::Buffered => "buffered",
            CacheMode::Writethrough => "writethrough",
            CacheMode::DirectWritethrough => "direct-writethrough",
        }
    }
}

/// Which I/O engine carries the I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// The fastest engine for the request (default): sync through the page cache at queue depth 1, io_uring otherwise.
    Auto,
    /// io_uring with registered files and buffers and batched submission.
    Uring,
    /// pread/pwrite, one I/O at a time per thread (queue depth is 1 whatever --qd says).
    Sync,
    /// No storage at all: every I/O completes at once. Measures iosim's own overhead.
    Null,
    /// Memory-mapped I/O through the page cache (DiskSpd -Sm, fio ioengine=mmap); needs --cache buffered or writethrough. Linux only.
    Mmap,
    /// Windows: overlapped I/O on an I/O completion port per thread, as DiskSpd does (the default there).
    Iocp,
}

impl EngineKind {
    /// Every engine, in the order the command line lists them.
    pub const ALL: [EngineKind; 6] = [
        EngineKind::Auto,
        EngineKind::Uring,
        EngineKind::Sync,
        EngineKind::Null,
        EngineKind::Mmap,
        EngineKind::Iocp,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Uring => "uring",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
            EngineKind::Mmap => "mmap",
            EngineKind::Iocp => "iocp",
        }
    }

    /// This system's engine for queued, asynchronous I/O: io_uring on
    /// Linux, I/O completion ports on Windows.
    pub const fn native() -> EngineKind {
        if crate::platform::IS_WINDOWS {
            EngineKind::Iocp
        } else {
            EngineKind::Uring
        }
    }

    /// The operating system an engine exists on, when it is not every one.
    pub const fn only_on(self) -> Option<&'static str> {
        match self {
            EngineKind::Uring | EngineKind::Mmap => Some("Linux"),
            EngineKind::Iocp => Some("Windows"),
            _ => None,
        }
    }
}

/// What a write carries, and what new test files are filled with.
///
/// Written on the command line and in JSON as `random`, `zero`, `sparse`,
/// `allocated`, `pattern:HEX` or `compressible:N`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FillMode {
    /// Incompressible random data (default): no compression or zero-detection artefacts.
    #[default]
    Random,
    /// Zeros, as SQLIO and `fsutil` create files. Arrays that compress or detect zeros will flatter.
    Zero,
    /// New test files are left sparse (not written at all); writes still carry random data.
    /// Reads of holes never reach the device, so only use this for write tests.
    Sparse,
    /// New test files are allocated but not written (`fallocate`: unwritten
    /// extents), and an iosim test file is made so again before each run that
    /// writes it: the layout fio gives the file of a write job, and etcd a
    /// new WAL segment. The first write into each block makes the file system
    /// record it as written, which the next fdatasync commits (a journal
    /// transaction); writes carry random data. Reads return zeros without
    /// device I/O, so only use this for write tests.
    Allocated,
    /// A file that grows as it is written: new test files are made empty,
    /// and an iosim test file is emptied again (truncated to 0 bytes)
    /// before each run that writes it. Each write past the end moves the
    /// end on, so the next fdatasync commits the file's new size (a journal
    /// transaction), as for a log file that is appended to without being
    /// preallocated (InnoDB's binary log, a new SQLite WAL). `--size` is
    /// how far it may grow: sequential writes that reach it start again at
    /// the beginning and then overwrite. Writes only.
    Grow,
    /// A byte pattern (1 to 16 bytes, e.g. `pattern:DEADBEEF`) repeated over every block.
    Pattern(data::PatternBytes),
    /// Random data of which N percent of every 4 KiB block compresses away (fio's
    /// `buffer_compress_percentage`); `compressible:50` is a 2:1 array.
    Compressible(u8),
}

impl FillMode {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> String {
        match self {
            FillMode::Random => "random".into(),
            FillMode::Zero => "zero".into(),
            FillMode::Sparse => "sparse".into(),
            FillMode::Allocated => "allocated".into(),
            FillMode::Grow => "grow".into(),
            FillMode::Pattern(p) => format!("pattern:{p}"),
            FillMode::Compressible(n) => format!("compressible:{n}"),
        }
    }

    /// True when writes need the data generator rather than one fill per buffer
    /// and a stamp per write.
    pub fn is_generated(self) -> bool {
        matches!(self, FillMode::Compressible(_))
    }
}

impl std::str::FromStr for FillMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let usage = || {
            format!(
                "invalid fill '{s}': use random, zero, sparse, allocated, grow, pattern:HEX (1-16 bytes, e.g. pattern:DEADBEEF) or compressible:N (0-100)"
            )
        };
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n.to_ascii_lowercase(), Some(a)),
            None => (t.to_ascii_lowercase(), None),
        };
        Ok(match (name.as_str(), arg) {
            ("random", None) => FillMode::Random,
            ("zero", None) => FillMode::Zero,
            ("sparse", None) => FillMode::Sparse,
            ("allocated", None) => FillMode::Allocated,
            ("grow", None) => FillMode::Grow,
            ("pattern", Some(h)) => FillMode::Pattern(h.parse().map_err(|_| usage())?),
            ("compressible", Some(n)) => {
                let n: u8 = n.trim_end_matches('%').parse().map_err(|_| usage())?;
                if n > 100 {
                    return Err(usage());
                }
                FillMode::Compressible(n)
            }
            _ => return Err(usage()),
        })
    }
}

impl std::fmt::Display for FillMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for FillMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FillMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Parses a fill for clap.
pub fn fill_arg(s: &str) -> Result<FillMode, String> {
    s.parse()
}
