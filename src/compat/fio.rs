//! fio's job options as an iosim workload, for `iosim translate fio`.
//!
//! Takes fio's command-line form (`--name=j --rw=randread --bs=8k ...`) or a
//! job file (`[global]` and job sections of `key=value` lines; the first job
//! is translated, with `[global]` under it). Each option iosim has maps to
//! its native counterpart (docs/workloads.md has the table); options that only
//! shape fio's own output are dropped silently; anything else is returned as
//! a note, so nothing is lost without saying so.

use std::time::Duration;

use crate::units::{parse_duration, parse_size};
use crate::workload::{
    BsSplit, CacheMode, Distribution, EngineKind, FillMode, RwMode, TargetSpec, WorkloadSpec,
};

/// fio options that change only fio's reporting or bookkeeping: dropped without a note.
const QUIET: &[&str] = &[
    "description",
    "group_reporting",
    "output-format",
    "output",
    "lat_percentiles",
    "clat_percentiles",
    "percentile_list",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "invalidate",
    "norandommap",
    "randrepeat",
    "stonewall",
    "new_group",
    "eta",
    "minimal",
    "thread",
    "kb_base",
    "unit_base",
];

/// A workload and what it could not carry over.
#[derive(Debug)]
pub struct Translated {
    /// The workload.
    pub spec: WorkloadSpec,
    /// fio's `size` (creation size of the files).
    pub size: Option<u64>,
    /// What was not translated, or translated approximately.
    pub notes: Vec<String>,
}

/// Translates fio's arguments: options, or the path of a job file.
pub fn translate(args: &[String]) -> anyhow::Result<Translated> {
    let pairs = match args {
        [one] if !one.starts_with('-') => {
            let text = std::fs::read_to_string(one)
                .map_err(|e| anyhow::anyhow!("cannot read the fio job file '{one}': {e}"))?;
            job_file_options(&text)?
        }
        _ => command_line_options(args)?,
    };
    Ok(from_options(&pairs.0, pairs.1))
}

/// `--key=value` and `--key value` words (fio's own form is `--key=value`).
/// Options as (key, value) pairs, and notes on what was left out reading them.
type Options = (Vec<(String, String)>, Vec<String>);

fn command_line_options(args: &[String]) -> anyhow::Result<Options> {
    let mut out = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let Some(opt) = a.strip_prefix("--") else {
            anyhow::bail!(crate::Error::BadWorkload(format!(
                "'{a}' is not a fio option: give fio's options (--rw=randread --bs=8k ...) or one job file"
            )));
        };
        match opt.split_once('=') {
            Some((k, v)) => out.push((k.to_string(), v.to_string())),
            None => {
                let v = match it.peek() {
                    Some(n) if !n.starts_with("--") => it.next().cloned().unwrap_or_default(),
                    _ => "1".to_string(),
                };
                out.push((opt.to_string(), v));
            }
        }
    }
    Ok((out, Vec::new()))
}

/// The options of the first job of a job file, `[global]` first.
fn job_file_options(text: &str) -> anyhow::Result<Options> {
    let mut global = Vec::new();
    let mut job: Vec<(String, String)> = Vec::new();
    let mut jobs: Vec<String> = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            section = name.trim().to_string();
            if section != "global" {
                jobs.push(section.clone());
            }
            continue;
        }
        let (k, v) = match l.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (l.to_string(), "1".to_string()),
        };
        if section == "global" {
            global.push((k, v));
        } else if jobs.len() == 1 {
            job.push((k, v));
        }
    }
    if jobs.is_empty() {
        anyhow::bail!(crate::Error::BadWorkload(
            "the fio job file has no job section ([name] after [global])".into()
        ));
    }
    let mut notes = Vec::new();
    if jobs.len() > 1 {
        notes.push(format!(
            "the job file has {} jobs ({}): only '{}' is translated; a profile (docs/profiles.md) runs several workloads together",
            jobs.len(),
            jobs.join(", "),
            jobs[0]
        ));
    }
    global.extend(job);
    Ok((global, notes))
}

/// fio's `random_distribution` as iosim's: zipf, pareto and normal map
/// directly; `zoned` with two zones is a hot/cold split.
fn distribution(v: &str, notes: &mut Vec<String>) -> Option<Distribution> {
    let (name, arg) = v.split_once(':').unwrap_or((v, ""));
    match name.trim() {
        "random" => Some(Distribution::Uniform),
        "zipf" | "pareto" | "normal" => {
            // fio's optional second value (the hot spot's centre) has no counterpart.
            let first = arg.split(':').next().unwrap_or("");
            if arg.contains(':') {
                notes.push(format!(
                    "random_distribution={v}: the centre of the hot spot is not translated (iosim places it with --hot-placement)"
                ));
            }
            match format!("{name}:{first}").parse() {
                Ok(d) => Some(d),
                Err(e) => {
                    notes.push(format!("random_distribution={v}: {e}"));
                    None
                }
            }
        }
        "zoned" => {
            // zoned:ACCESS/SIZE:ACCESS/SIZE...; two zones are a hot/cold split.
            let zones: Vec<(f64, f64)> = arg
                .split(':')
                .filter_map(|z| {
                    let (a, s) = z.split_once('/')?;
                    Some((a.trim().parse().ok()?, s.trim().parse().ok()?))
                })
                .collect();
            match zones.as_slice() {
                [(access, size), _] => {
                    let d = Distribution::HotCold {
                        hot: *size,
                        access: *access,
                    };
                    if d.validate().is_ok() {
                        notes.push(format!(
                            "random_distribution={v}: fio's first zone is at the start of the region; add --hot-placement start to keep it there"
                        ));
                        return Some(d);
                    }
                    notes.push(format!(
                        "random_distribution={v}: not a usable hot/cold split"
                    ));
                    None
                }
                _ => {
                    notes.push(format!(
                        "random_distribution={v}: iosim has two zones (hotcold:HOT/ACCESS); more are not translated"
                    ));
                    None
                }
            }
        }
        _ => {
            notes.push(format!("random_distribution={v} has no iosim counterpart"));
            None
        }
    }
}

/// fio's time values: plain numbers are in `unit` (seconds, or microseconds for thinktime).
fn fio_time(v: &str, plain_us: bool) -> Option<Duration> {
    let t = v.trim().to_ascii_lowercase();
    if let Ok(n) = t.parse::<u64>() {
        return Some(if plain_us {
            Duration::from_micros(n)
        } else {
            Duration::from_secs(n)
        });
    }
    if let Some(us) = t.strip_suffix("us").and_then(|n| n.parse::<u64>().ok()) {
        return Some(Duration::from_micros(us));
    }
    parse_duration(&t).ok()
}

fn from_options(pairs: &[(String, String)], notes: Vec<String>) -> Translated {
    let mut job = Job {
        spec: WorkloadSpec {
            // fio's defaults where they differ from iosim's.
            duration: Duration::from_secs(10),
            cache: CacheMode::Buffered,
            engine: EngineKind::Sync,
            ..WorkloadSpec::default()
        },
        size: None,
        files: Vec::new(),
        offset: 0,
        rwmix_write: None,
        direct: false,
        sync: false,
        bs_pair: None,
        ends: Ends::default(),
        notes,
    };
    for (k, v) in pairs {
        job.option(k.trim(), v.trim());
    }
    job.finish()
}

/// A job as its options are read: the workload, and what is settled only
/// when all are read.
struct Job {
    spec: WorkloadSpec,
    size: Option<u64>,
    files: Vec<String>,
    offset: u64,
    rwmix_write: Option<u8>,
    direct: bool,
    sync: bool,
    /// `bs=READ,WRITE`.
    bs_pair: Option<(u64, u64)>,
    ends: Ends,
    notes: Vec<String>,
}

/// What ends a fio job and how its file is laid out: read with every option,
/// settled in [`Job::finish`].
#[derive(Default)]
struct Ends {
    /// `time_based`: run for `runtime`, going over the file again and again.
    time_based: bool,
    /// `runtime` given: a cap on a job that is not time-based.
    runtime: bool,
    /// `loops=N`: go over the file N times (1).
    loops: Option<u32>,
    /// `overwrite=1`: the file is written in full before the job.
    overwrite: bool,
    /// `fallocate=none`: the file is only extended (holes).
    no_fallocate: bool,
    /// `name=`, which names fio's own files.
    name: Option<String>,
    /// `directory=`, where fio makes its own files.
    directory: Option<String>,
}

impl Ends {
    /// fio's ending and layout on the workload: a job that is not
    /// time-based stops once it has gone over its file `loops` times, with
    /// no time cap unless `runtime` gives one; a write-only job's new file
    /// is allocated and left unwritten (fio's `fallocate=native`, the
    /// default), or sparse with `fallocate=none`, unless `overwrite=1`
    /// writes it first. What the writes carry (zero_buffers...) stays.
    fn apply(&self, spec: &mut WorkloadSpec) {
        if !self.time_based {
            spec.passes = Some(self.loops.unwrap_or(1).max(1));
            if !self.runtime {
                spec.duration = Duration::ZERO;
            }
        }
        let write_only = spec.write_pct == 100;
        if write_only && !self.overwrite && spec.fill == FillMode::Random {
            spec.fill = if self.no_fallocate {
                FillMode::Sparse
            } else {
                FillMode::Allocated
            };
        }
    }

    /// The file fio would make for the job in `directory` (`NAME.0.0`).
    fn own_file(&self) -> Option<String> {
        let dir = self.directory.as_deref()?;
        let name = self.name.as_deref().unwrap_or("job");
        Some(format!("{}/{name}.0.0", dir.trim_end_matches('/')))
    }
}

/// A whole number, if `v` is one.
fn num(v: &str) -> Option<u64> {
    v.trim().parse::<u64>().ok()
}

impl Job {
    /// One option, `k=v`; what is not translated becomes a note.
    fn option(&mut self, k: &str, v: &str) {
        let Job {
            spec,
            size,
            files,
            offset,
            rwmix_write,
            direct,
            sync,
            bs_pair,
            ends,
            notes,
        } = self;
        let mut bad = |what: &str| notes.push(format!("{k}={v}: {what}"));
        match k {
            "name" => ends.name = Some(v.to_string()),
            "directory" => ends.directory = Some(v.split(':').next().unwrap_or(v).to_string()),
            "time_based" => ends.time_based = v != "0",
            "loops" => ends.loops = num(v).map(|n| n.min(u64::from(u32::MAX)) as u32),
            "overwrite" => ends.overwrite = v != "0",
            "fallocate" => ends.no_fallocate = v == "none" || v == "0",
            "filename" => files.extend(v.split(':').map(str::to_string)),
            "size" => match parse_size(v) {
                Ok(s) => *size = Some(s),
                Err(_) => bad("not a size iosim reads (percentages are not translated)"),
            },
            "offset" => *offset = parse_size(v).unwrap_or(0),
            "rw" | "readwrite" => rw(spec, v, &mut bad),
            "rwmixread" => *rwmix_write = num(v).map(|r| 100 - r.min(100) as u8),
            "rwmixwrite" => *rwmix_write = num(v).map(|w| w.min(100) as u8),
            "bs" | "blocksize" => {
                let mut it = v.split(',').map(|s| parse_size(s.trim()).ok());
                match (it.next().flatten(), it.next()) {
                    (Some(r), None) => spec.bs = r,
                    (Some(r), Some(w)) => *bs_pair = Some((r, w.unwrap_or(r))),
                    _ => bad("not a block size"),
                }
            }
            "bssplit" => match v.parse::<BsSplit>() {
                Ok(b) => spec.shape.bssplit = Some(b),
                Err(e) => bad(&e),
            },
            "blockalign" | "ba" => spec.align = parse_size(v.split(',').next().unwrap_or(v)).ok(),
            "iodepth" => spec.qd = num(v).unwrap_or(1) as u32,
            "numjobs" => spec.threads = num(v).unwrap_or(1) as u32,
            "runtime" => match fio_time(v, false) {
                Some(d) => {
                    spec.duration = d;
                    ends.runtime = true;
                }
                None => bad("not a time"),
            },
            "ramp_time" => spec.warmup = fio_time(v, false).unwrap_or_default(),
            "direct" => *direct = v == "1",
            "buffered" => *direct = v == "0",
            "sync" | "dsync" => *sync = v != "0" && v != "none",
            "ioengine" => spec.engine = engine(v, &mut bad),
            "random_distribution"
            | "buffer_compress_percentage"
            | "buffer_compress_chunk"
            | "dedupe_percentage"
            | "zero_buffers"
            | "buffer_pattern" => data_option(spec, notes, k, v),
            "percentage_random" => spec.random_pct = num(v).map(|p| p.min(100) as u8),
            "rate_iops" => spec.rate_iops = num(v.split(',').next().unwrap_or(v)),
            "rate" => spec.rate_bytes = parse_size(v.split(',').next().unwrap_or(v)).ok(),
            "thinktime" => spec.think = fio_time(v, true).unwrap_or_default(),
            "thinktime_blocks" => spec.burst = num(v).unwrap_or(0) as u32,
            "number_ios" => spec.io_limit = num(v),
            "fsync" | "fdatasync" => flush(spec, k, v, &mut bad),
            "sync_file_range" => writeback(spec, v, &mut bad),
            "randseed" => spec.seed = num(v).unwrap_or(spec.seed),
            "iodepth_batch_submit" | "iodepth_batch" => {
                spec.submit_batch = num(v).unwrap_or(1) as u32
            }
            q if QUIET.contains(&q) => {}
            _ => bad("not translated (no iosim counterpart)"),
        }
    }

    /// The workload once every option is read: the block sizes per
    /// direction, the write share, the cache mode and the targets.
    fn finish(self) -> Translated {
        let Job {
            mut spec,
            mut size,
            mut files,
            offset,
            rwmix_write,
            direct,
            sync,
            bs_pair,
            ends,
            mut notes,
        } = self;
        if let Some((r, w)) = bs_pair {
            // fio's bs=READ,WRITE is a split of one size per direction.
            spec.shape.bssplit = format!(
                "{}/100,{}/100",
                crate::units::format_size_arg(r),
                crate::units::format_size_arg(w)
            )
            .parse()
            .ok();
        }
        if spec.rw.is_mixed() {
            spec.write_pct = rwmix_write.unwrap_or(50);
        } else {
            spec.write_pct = spec.rw.default_write_pct();
        }
        spec.cache = match (direct, sync) {
            (true, true) => CacheMode::DirectWritethrough,
            (true, false) => CacheMode::Direct,
            (false, true) => CacheMode::Writethrough,
            (false, false) => CacheMode::Buffered,
        };
        ends.apply(&mut spec);
        if spec.engine == EngineKind::Null {
            size = size.or(Some(1 << 30));
        } else if let (true, Some(own)) = (files.is_empty(), ends.own_file()) {
            files.push(own);
        } else if files.is_empty() {
            notes.push(
                "no filename=: fio names its own files; give the target path in its place".into(),
            );
            files.push("FILE".into());
        }
        if spec.engine != EngineKind::Null {
            spec.targets = files
                .iter()
                .map(|f| TargetSpec {
                    offset,
                    ..TargetSpec::new(f.clone(), size)
                })
                .collect();
        }
        Translated { spec, size, notes }
    }
}

/// `rw=MODE[:modifier]`.
fn rw(spec: &mut WorkloadSpec, v: &str, bad: &mut dyn FnMut(&str)) {
    let (mode, rest) = v.split_once(':').unwrap_or((v, ""));
    let m = match mode {
        "read" => Some(RwMode::Read),
        "write" => Some(RwMode::Write),
        "randread" => Some(RwMode::Randread),
        "randwrite" => Some(RwMode::Randwrite),
        "rw" | "readwrite" => Some(RwMode::Readwrite),
        "randrw" => Some(RwMode::Randrw),
        _ => None,
    };
    match m {
        Some(m) => spec.rw = m,
        None => bad("iosim does not issue this pattern (trims are not supported)"),
    }
    if !rest.is_empty() {
        bad("the offset modifier after ':' is not translated");
    }
}

/// `ioengine=`: iosim's engine of the same kind.
fn engine(v: &str, bad: &mut dyn FnMut(&str)) -> EngineKind {
    match v {
        "io_uring" => EngineKind::Uring,
        "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => EngineKind::Sync,
        "null" => EngineKind::Null,
        "mmap" => EngineKind::Mmap,
        "libaio" | "posixaio" => {
            bad("iosim uses io_uring for asynchronous I/O");
            EngineKind::Uring
        }
        _ => {
            bad("no iosim engine of that kind; iosim chooses one");
            EngineKind::Auto
        }
    }
}

/// fio's fsync=N / fdatasync=N: a flush after every N writes (0: none).
fn flush(spec: &mut WorkloadSpec, k: &str, v: &str, bad: &mut dyn FnMut(&str)) {
    match num(v) {
        Some(0) => spec.flush = None,
        Some(n) => {
            spec.flush = Some(crate::workload::Flush {
                kind: if k == "fsync" {
                    crate::workload::FlushKind::Fsync
                } else {
                    crate::workload::FlushKind::Fdatasync
                },
                every: u32::try_from(n).unwrap_or(u32::MAX),
            })
        }
        None => bad("give the number of writes between flushes"),
    }
}

/// fio's `sync_file_range=write:N`: writeback started every N writes. Its
/// other flags (`wait_before`, `wait_after`) wait for writeback, which
/// `--sync-file-range` does not.
fn writeback(spec: &mut WorkloadSpec, v: &str, bad: &mut dyn FnMut(&str)) {
    match v.split_once(':') {
        Some(("write", n)) => match num(n) {
            Some(n) if n > 0 => spec.sync_file_range = Some(u32::try_from(n).unwrap_or(u32::MAX)),
            _ => bad("give the number of writes between two calls, e.g. sync_file_range=write:32"),
        },
        _ => bad("only write:N (start writeback, wait for nothing) has an iosim counterpart: --sync-file-range N"),
    }
}

/// The options of the data written and of the offsets' distribution.
fn data_option(spec: &mut WorkloadSpec, notes: &mut Vec<String>, k: &str, v: &str) {
    let mut bad = |what: &str| notes.push(format!("{k}={v}: {what}"));
    match k {
        "random_distribution" => {
            if let Some(d) = distribution(v, notes) {
                spec.shape.distribution = d;
            }
        }
        "buffer_compress_percentage" => match num(v).filter(|&p| p <= 100) {
            Some(p) => spec.fill = FillMode::Compressible(p as u8),
            None => bad("give 0 to 100"),
        },
        "buffer_compress_chunk" => {
            bad("iosim compresses in 4 KiB blocks (the zero tail of each 4 KiB block)")
        }
        "dedupe_percentage" => match num(v).filter(|&p| p <= 100) {
            Some(p) => spec.shape.dedupe_pct = p as u8,
            None => bad("give 0 to 100"),
        },
        "zero_buffers" => {
            if v != "0" {
                spec.fill = FillMode::Zero;
            }
        }
        "buffer_pattern" => match v.parse() {
            Ok(p) => spec.fill = FillMode::Pattern(p),
            Err(_) => bad("iosim takes a hex pattern of 1 to 16 bytes (0xDEADBEEF)"),
        },
        _ => bad("not translated (no iosim counterpart)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(args: &[&str]) -> Translated {
        translate(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn etcds_fio_recipe_flushes_every_write() {
        // etcd's documented disk check: 2300-byte writes, fdatasync after each.
        let x = t(&[
            "--rw=write",
            "--ioengine=sync",
            "--fdatasync=1",
            "--directory=/var/lib/etcd",
            "--size=22m",
            "--bs=2300",
            "--name=etcd-check",
        ]);
        let s = &x.spec;
        assert_eq!(
            s.flush,
            Some(crate::workload::Flush {
                kind: crate::workload::FlushKind::Fdatasync,
                every: 1
            })
        );
        assert_eq!((s.bs, s.engine), (2300, EngineKind::Sync));
        assert!(
            x.notes.iter().all(|n| !n.contains("fdatasync")),
            "{:?}",
            x.notes
        );
        assert_eq!(t(&["--fsync=0", "--rw=write"]).spec.flush, None);
        // fio's own file in the directory, laid out as fio does: allocated,
        // unwritten; one pass over it (10,029 writes), no time cap.
        assert_eq!(
            s.targets[0].path,
            std::path::PathBuf::from("/var/lib/etcd/etcd-check.0.0")
        );
        assert_eq!(s.fill, FillMode::Allocated);
        assert_eq!((s.passes, s.duration), (Some(1), Duration::ZERO));
        assert!(x.notes.is_empty(), "{:?}", x.notes);
    }

    #[test]
    fn sync_file_range_write_is_started_writeback() {
        let x = t(&[
            "--rw=randwrite",
            "--sync_file_range=write:32",
            "--filename=f",
        ]);
        assert_eq!(x.spec.sync_file_range, Some(32));
        assert!(x.notes.is_empty(), "{:?}", x.notes);
        let x = t(&[
            "--rw=randwrite",
            "--sync_file_range=wait_before,write:8",
            "--filename=f",
        ]);
        assert_eq!(x.spec.sync_file_range, None);
        assert!(
            x.notes.iter().any(|n| n.contains("--sync-file-range")),
            "{:?}",
            x.notes
        );
    }

    #[test]
    fn a_job_ends_and_lays_out_its_file_as_fio_does() {
        // time_based: the runtime, over and over the file.
        let x = t(&["--rw=write", "--runtime=30", "--time_based", "--filename=f"]);
        assert_eq!(
            (x.spec.passes, x.spec.duration),
            (None, Duration::from_secs(30))
        );
        // Not time-based with a runtime: loops passes, capped by the runtime.
        let x = t(&[
            "--rw=randwrite",
            "--runtime=30",
            "--loops=3",
            "--filename=f",
        ]);
        assert_eq!(
            (x.spec.passes, x.spec.duration),
            (Some(3), Duration::from_secs(30))
        );
        // A job that reads has its file written first; so has overwrite=1.
        assert_eq!(
            t(&["--rw=randrw", "--filename=f"]).spec.fill,
            FillMode::Random
        );
        let x = t(&["--rw=write", "--overwrite=1", "--filename=f"]);
        assert_eq!(x.spec.fill, FillMode::Random);
        // fallocate=none only extends the file: holes.
        let x = t(&["--rw=write", "--fallocate=none", "--filename=f"]);
        assert_eq!(x.spec.fill, FillMode::Sparse);
        // What the writes carry stays what was asked.
        let x = t(&["--rw=write", "--zero_buffers=1", "--filename=f"]);
        assert_eq!(x.spec.fill, FillMode::Zero);
        // The command line says it all again.
        let x = t(&[
            "--name=etcd",
            "--rw=write",
            "--ioengine=sync",
            "--fdatasync=1",
            "--directory=/mnt/etcd/",
            "--size=22m",
            "--bs=2300",
        ]);
        let (c, _) = crate::compat::translate::run_command(&x.spec, &[x.size]);
        assert!(
            c.starts_with("iosim run /mnt/etcd/etcd.0.0 --rw write --bs 2300")
                && c.contains("--duration 0s")
                && c.contains("--fill allocated")
                && c.contains("--passes 1"),
            "{c}"
        );
    }

    #[test]
    fn skew_sizes_and_data_options_map() {
        let x = t(&[
            "--name=oltp",
            "--filename=/mnt/d/f.dat",
            "--size=10g",
            "--rw=randrw",
            "--rwmixread=70",
            "--bssplit=8k/70:64k/25:1m/5",
            "--random_distribution=zipf:1.1",
            "--buffer_compress_percentage=50",
            "--dedupe_percentage=20",
            "--iodepth=16",
            "--numjobs=4",
            "--direct=1",
            "--ioengine=io_uring",
            "--runtime=60",
            "--time_based",
        ]);
        let s = &x.spec;
        assert!(x.notes.is_empty(), "{:?}", x.notes);
        assert_eq!((s.rw, s.write_pct), (RwMode::Randrw, 30));
        assert_eq!(
            s.shape.bssplit.as_ref().unwrap().to_string(),
            "8K/70:64K/25:1M/5"
        );
        assert_eq!(s.shape.distribution, Distribution::Zipf(1.1));
        assert_eq!(s.fill, FillMode::Compressible(50));
        assert_eq!(s.shape.dedupe_pct, 20);
        assert_eq!((s.qd, s.threads, s.cache), (16, 4, CacheMode::Direct));
        assert_eq!(s.engine, EngineKind::Uring);
        assert_eq!(s.duration, Duration::from_secs(60));
        assert_eq!(x.size, Some(10 << 30));
        assert_eq!(s.targets[0].path.to_str(), Some("/mnt/d/f.dat"));
        s.validate().unwrap();
    }

    #[test]
    fn distributions_map_or_say_why_not() {
        let one = |d: &str| {
            let mut n = Vec::new();
            (distribution(d, &mut n), n)
        };
        assert_eq!(one("pareto:0.2").0, Some(Distribution::Pareto(0.2)));
        assert_eq!(one("normal:5").0, Some(Distribution::Normal(5.0)));
        assert_eq!(one("random").0, Some(Distribution::Uniform));
        let (d, n) = one("zoned:90/10:10/90");
        assert_eq!(d.unwrap().to_string(), "hotcold:10/90");
        assert!(n[0].contains("--hot-placement start"), "{n:?}");
        let (d, n) = one("zoned:60/10:30/20:10/70");
        assert!(d.is_none() && n[0].contains("two zones"), "{n:?}");
        let (d, n) = one("zipf:1.2:0.3");
        assert_eq!(d, Some(Distribution::Zipf(1.2)));
        assert!(n[0].contains("centre"));
        assert!(one("gauss").0.is_none());
    }

    #[test]
    fn job_files_bs_pairs_zero_buffers_and_unknown_options() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("j.fio");
        std::fs::write(
            &f,
            "; a comment\n[global]\nioengine=libaio\ndirect=1\nsync=1\nbs=4k,64k\nzero_buffers\n\
             [a]\nfilename=/dev/nvme0n1\nrw=randwrite\nthinktime=500\nthinktime_blocks=8\nverify=crc32c\n[b]\nrw=read\n",
        )
        .unwrap();
        let x = t(&[f.to_str().unwrap()]);
        let s = &x.spec;
        assert_eq!(s.rw, RwMode::Randwrite);
        assert_eq!(s.cache, CacheMode::DirectWritethrough);
        assert_eq!(s.fill, FillMode::Zero);
        assert_eq!(
            s.shape.bssplit.as_ref().unwrap().to_string(),
            "4K/100,64K/100"
        );
        assert_eq!((s.burst, s.think), (8, Duration::from_micros(500)));
        let notes = x.notes.join("\n");
        for want in ["only 'a'", "io_uring", "verify=crc32c"] {
            assert!(notes.contains(want), "{want}: {notes}");
        }
        assert!(translate(&["x.fio".into()]).is_err());
        assert!(translate(&["-x".into()]).is_err());
    }
}
