//! Typed errors. Each message says what went wrong and what to do next.

use std::path::PathBuf;

use thiserror::Error;

/// Errors that iosim reports to the user. The binary adds context with anyhow.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// A size could not be parsed.
    #[error("invalid size '{0}': use a number with an optional K, M, G or T suffix (powers of two), e.g. 4K or 1G")]
    BadSize(String),

    /// A duration could not be parsed.
    #[error(
        "invalid duration '{0}': use a number of seconds or add ms, s, m or h, e.g. 30s or 5m"
    )]
    BadDuration(String),

    /// A workload parameter is out of range or contradicts another (the
    /// message says which and what to give); the mistakes a caller or a
    /// test tells apart have variants of their own below.
    #[error("{0}")]
    BadWorkload(String),

    /// Workloads run at the same time (a profile's phase) asked for
    /// different measured windows.
    #[error("workloads run at the same time share one measured window, but one asks for --duration {duration:?} --warmup {warmup:?} and another for --duration {other_duration:?} --warmup {other_warmup:?}: give them the same")]
    WindowsDiffer {
        /// The first workload's `--duration`.
        duration: std::time::Duration,
        /// The first workload's `--warmup`.
        warmup: std::time::Duration,
        /// The other workload's `--duration`.
        other_duration: std::time::Duration,
        /// The other workload's `--warmup`.
        other_warmup: std::time::Duration,
    },

    /// `iosim quick PATH` on a path that exists and is not a directory
    /// (most likely the test file itself).
    #[error("'{0}' is not a directory: iosim quick takes the DIRECTORY for its test file (named by --file, default iosim-testfile.dat); to measure a file of your own use iosim quick DIR --file NAME, or iosim run FILE")]
    QuickNeedsDirectory(PathBuf),

    /// `iosim replay --trace-offset` past an I/O of the trace.
    #[error("the trace has an I/O at byte {lowest}, below --trace-offset {trace_offset}: give the start of the traced partition (iosim capture prints it), or 0")]
    TraceBelowOffset {
        /// The offset of the first I/O found below it.
        lowest: u64,
        /// `--trace-offset`.
        trace_offset: u64,
    },

    /// A traced I/O whose size or offset direct I/O on the target cannot do.
    #[error("the trace holds an I/O {what}, which direct I/O on '{}' cannot do (it needs multiples of {align} bytes): replay with --cache buffered", target.display())]
    TraceUnaligned {
        /// The I/O: `of 1000 bytes`, `at byte 4100`.
        what: String,
        /// The replay's target.
        target: PathBuf,
        /// The alignment direct I/O needs there.
        align: u64,
    },

    /// A `--drive` mapping (or an `IOSIM_DRIVES` item) that is not `L=PATH`.
    #[error("--drive '{0}': use a drive letter and a Linux path, e.g. --drive L=/mnt/data")]
    BadDriveMapping(String),

    /// A `--disk` mapping (or an `IOSIM_DISKS` item) that is not `N=DEVICE`.
    #[error("--disk '{0}': use a disk number and a block device, e.g. --disk 1=/dev/sdb")]
    BadDiskMapping(String),

    /// A Windows UNC path as a legacy front end's target.
    #[error("'{0}' is a Windows UNC path: mount the share on Linux (mount -t cifs or nfs) and give the Linux path of the file")]
    UncPath(String),

    /// `#X` as a legacy front end's target, X not a number.
    #[error("'{0}' is not a physical disk number: use #1, #2, ...")]
    NotADiskNumber(String),

    /// `\dir\file` (rooted on the current drive) with no drive to root it on.
    #[error("'{0}' is rooted on the current Windows drive: map it with --drive C=/mnt/data (or IOSIM_DRIVES=\"C=/mnt/data\"), or give a Linux path")]
    RootedOnCurrentDrive(String),

    /// A `--` option the legacy front ends do not take.
    #[error("unknown iosim option '{0}': the compatibility front ends take --drive L=PATH, --disk N=DEVICE, --allow-destroy, --engine, --size, --json FILE, --quiet, --db PATH, --label NAME, --no-save and (DiskSpd) --layout 2.0|2.2 besides the legacy options")]
    UnknownCompatOption(String),

    /// `--hipri` (polled completions) on a target whose device has no poll queues.
    #[error("--hipri polls for completions, and {device} (under '{path}') has no poll queues (/sys/block/{device}/queue/io_poll is 0), so every I/O would fail: drop --hipri, or give the device poll queues (NVMe: the nvme.poll_queues module parameter)")]
    NoPolling {
        /// The target.
        path: PathBuf,
        /// The kernel name of its disk.
        device: String,
    },

    /// `iosim fsync PATH` on a path that does not exist and names no file
    /// (no extension): most likely a mistyped directory.
    #[error("'{0}' does not exist: iosim fsync would create a file of that name and measure the file system of its parent directory. If it is the directory to test, fix the path or create it (mkdir -p {0}); to test a new file there, give it a name with an extension (e.g. {0}.dat)")]
    FsyncPathMissing(PathBuf),

    /// The directory that should hold a test file does not exist.
    #[error("directory '{0}' does not exist: create it first or choose another with a full path")]
    MissingDirectory(PathBuf),

    /// A path given as a directory exists but is something else (a file, a device).
    #[error("'{path}' is a {kind}, not a directory: give the directory that should hold the files, such as '{parent}'")]
    NotADirectory {
        /// The path given.
        path: PathBuf,
        /// What it is: `regular file`, `block device`, ...
        kind: &'static str,
        /// Its directory, to suggest.
        parent: PathBuf,
    },

    /// A target file does not exist and no size was given to create it.
    #[error("'{0}' does not exist: give --size to create it (for example --size 1G)")]
    NoSizeToCreate(PathBuf),

    /// A test file or region is too small for the workload.
    #[error("'{path}' holds {have} bytes in the region used, but one block of {need} bytes does not fit: use a larger --size or --length, or a smaller --bs")]
    TooSmall {
        /// The target.
        path: PathBuf,
        /// Bytes available.
        have: u64,
        /// Bytes needed.
        need: u64,
    },

    /// Writing would destroy data iosim did not create.
    #[error("refusing to write to '{0}': {1}. iosim only overwrites test files it created itself; pass --allow-destroy if the data on it may be destroyed")]
    WouldDestroy(PathBuf, String),

    /// The device is mounted or otherwise in use.
    #[error(
        "refusing to write to '{0}': {1}. Unmount it first; iosim never writes to a device in use"
    )]
    DeviceInUse(PathBuf, String),

    /// Ctrl-C or SIGTERM came after the test files were ready but before
    /// measuring began: nothing was measured (exits 130).
    #[error("interrupted before the run started: nothing was measured")]
    InterruptedBeforeStart,

    /// O_DIRECT is not supported where the target lives.
    #[error("direct I/O (O_DIRECT) is not supported for '{0}' (the filesystem refused it): use --cache buffered, or put the test file on a filesystem that supports direct I/O such as ext4 or xfs")]
    DirectUnsupported(PathBuf),

    /// A block size or offset is not aligned for direct I/O.
    #[error("{what} {value} is not a multiple of {align} bytes, which direct I/O on '{path}' requires: choose a multiple of {align}, or use --cache buffered")]
    Misaligned {
        /// Which value.
        what: &'static str,
        /// The value.
        value: u64,
        /// The alignment needed.
        align: u64,
        /// The target.
        path: PathBuf,
    },

    /// A worker thread panicked: the run was stopped and failed.
    #[error("worker thread {thread} failed: it panicked with \"{message}\"; the run was stopped. This is a bug in iosim: please report it with the command line")]
    WorkerPanicked {
        /// The thread's name (`iosim-w3`).
        thread: String,
        /// What it said.
        message: String,
    },

    /// An option of a legacy command line (SQLIO, DiskSpd, fio) that iosim
    /// cannot take as given.
    #[error("{tool} option '{option}': {why}")]
    BadOption {
        /// `sqlio`, `diskspd`, ...
        tool: String,
        /// The option as written (`-b3`, `-Xprofile.xml`).
        option: String,
        /// What is wrong and what to give.
        why: String,
    },

    /// A Windows drive letter that no `--drive` / `IOSIM_DRIVES` maps.
    #[error("drive {letter}: means nothing on Linux: map it with --drive {letter}=/mnt/data (or IOSIM_DRIVES=\"{letter}=/mnt/data\"), or give a Linux path")]
    UnmappedDrive {
        /// The letter, upper case.
        letter: char,
    },

    /// A Windows physical disk number that no `--disk` / `IOSIM_DISKS` maps.
    #[error("physical disk {disk} means nothing on Linux: map it with --disk {disk}=/dev/sdX (or IOSIM_DISKS=\"{disk}=/dev/sdX\")")]
    UnmappedDisk {
        /// The number.
        disk: u32,
    },

    /// A target that is neither a regular file nor a block device.
    #[error("'{}' is neither a regular file nor a block device: name a file (it will be created) or a device", path.display())]
    NotFileOrDevice {
        /// The target.
        path: PathBuf,
    },
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn errors_with_fields_say_what_the_strings_said() {
        let e = Error::BadOption {
            tool: "sqlio".into(),
            option: "-b3".into(),
            why: "give a power of two".into(),
        };
        assert_eq!(e.to_string(), "sqlio option '-b3': give a power of two");
        assert_eq!(
            Error::UnmappedDrive { letter: 'F' }.to_string(),
            "drive F: means nothing on Linux: map it with --drive F=/mnt/data (or IOSIM_DRIVES=\"F=/mnt/data\"), or give a Linux path"
        );
        assert_eq!(
            Error::UnmappedDisk { disk: 2 }.to_string(),
            "physical disk 2 means nothing on Linux: map it with --disk 2=/dev/sdX (or IOSIM_DISKS=\"2=/dev/sdX\")"
        );
        // The variants that were `BadWorkload` strings say what those said.
        let d = std::time::Duration::from_secs;
        let raw = "\\\\srv\\share\\x";
        for (e, said) in [
            (
                Error::WindowsDiffer {
                    duration: d(1),
                    warmup: d(0),
                    other_duration: d(120),
                    other_warmup: d(5),
                },
                format!(
                    "workloads run at the same time share one measured window, but one asks for --duration {:?} --warmup {:?} and another for --duration {:?} --warmup {:?}: give them the same",
                    d(1), d(0), d(120), d(5)
                ),
            ),
            (
                Error::QuickNeedsDirectory("/m/t.dat".into()),
                "'/m/t.dat' is not a directory: iosim quick takes the DIRECTORY for its test file (named by --file, default iosim-testfile.dat); to measure a file of your own use iosim quick DIR --file NAME, or iosim run FILE".into(),
            ),
            (
                Error::TraceBelowOffset { lowest: 512, trace_offset: 2 << 20 },
                "the trace has an I/O at byte 512, below --trace-offset 2097152: give the start of the traced partition (iosim capture prints it), or 0".into(),
            ),
            (
                Error::TraceUnaligned { what: "of 1000 bytes".into(), target: "/dev/sdb".into(), align: 512 },
                "the trace holds an I/O of 1000 bytes, which direct I/O on '/dev/sdb' cannot do (it needs multiples of 512 bytes): replay with --cache buffered".into(),
            ),
            (
                Error::BadDriveMapping("LL=/x".into()),
                "--drive 'LL=/x': use a drive letter and a Linux path, e.g. --drive L=/mnt/data".into(),
            ),
            (
                Error::BadDiskMapping("x=/dev/sdb".into()),
                "--disk 'x=/dev/sdb': use a disk number and a block device, e.g. --disk 1=/dev/sdb".into(),
            ),
            (
                Error::UncPath(raw.into()),
                format!("'{raw}' is a Windows UNC path: mount the share on Linux (mount -t cifs or nfs) and give the Linux path of the file"),
            ),
            (
                Error::NotADiskNumber("#x".into()),
                "'#x' is not a physical disk number: use #1, #2, ...".into(),
            ),
            (
                Error::RootedOnCurrentDrive("\\t.dat".into()),
                "'\\t.dat' is rooted on the current Windows drive: map it with --drive C=/mnt/data (or IOSIM_DRIVES=\"C=/mnt/data\"), or give a Linux path".into(),
            ),
            (
                Error::UnknownCompatOption("--bogus".into()),
                "unknown iosim option '--bogus': the compatibility front ends take --drive L=PATH, --disk N=DEVICE, --allow-destroy, --engine, --size, --json FILE, --quiet, --db PATH, --label NAME, --no-save and (DiskSpd) --layout 2.0|2.2 besides the legacy options".into(),
            ),
        ] {
            assert_eq!(e.to_string(), said);
        }
        assert_eq!(
            Error::NotFileOrDevice { path: "/dev/null".into() }.to_string(),
            "'/dev/null' is neither a regular file nor a block device: name a file (it will be created) or a device"
        );
    }
}
