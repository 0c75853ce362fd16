//! `iosim sqlio`: SQLIO 1.5's command line and output on iosim's engine.
//!
//! The output keeps SQLIO's lines, in SQLIO's order, so scripts that pick
//! numbers by line (seed 001's PowerShell takes lines 10, 11 and 14) keep
//! working. See docs/sqlio.md for the mapping of every option.

use std::fmt::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{bad_option, Extensions, Warnings};
use crate::runner::RunResult;
use crate::workload::{
    CacheMode, EngineKind, FillMode, RwMode, SeqLayout, Stripe, TargetSpec, WorkloadSpec,
};

const TOOL: &str = "sqlio";
/// SQLIO's limit on threads (per file) and on files.
pub const MAX_THREADS: u32 = 256;
/// SQLIO's limit on the number of files (including -d and -R).
pub const MAX_FILES: usize = 256;
/// The largest `-b` (KB): iosim's largest block (64 MiB).
pub const MAX_BLOCK_KB: u64 = crate::workload::MAX_BS >> 10;
/// SQLIO's limit on a file name's length.
pub const MAX_NAME: usize = 256;
/// Size a missing test file is created with when nothing else gives one (256 MiB).
pub const DEFAULT_CREATE_SIZE: u64 = 256 << 20;

/// SQLIO's `-f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pattern {
    /// `-frandom`.
    Random,
    /// `-fsequential`.
    Sequential,
    /// `-f<N>`: SQLIO's stripe pattern (the default, `-f64`).
    Stripe(u64),
}

/// SQLIO's `-B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Buffering {
    /// `-BN`: neither file nor disk cache (NO_BUFFERING + WRITE_THROUGH).
    None,
    /// `-BY`: both caches.
    All,
    /// `-BH`: hardware (disk) cache only: NO_BUFFERING.
    Hardware,
    /// `-BS`: software (file) cache only: WRITE_THROUGH.
    Software,
}

impl Buffering {
    /// The iosim cache mode.
    pub fn cache(self) -> CacheMode {
        match self {
            Buffering::None => CacheMode::DirectWritethrough,
            Buffering::All => CacheMode::Buffered,
            Buffering::Hardware => CacheMode::Direct,
            Buffering::Software => CacheMode::Writethrough,
        }
    }

    /// SQLIO's line about it.
    pub fn line(self) -> &'static str {
        match self {
            Buffering::None => "buffering set to not use file nor disk caches (as is SQL Server)",
            Buffering::All => "buffering set to use both file and disk caches",
            Buffering::Hardware => "buffering set to use hardware disk cache (but not file cache)",
            Buffering::Software => "buffering set to use software file cache (but not disk cache)",
        }
    }
}

/// A parsed SQLIO command line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SqlioArgs {
    /// `-kW`.
    pub write: bool,
    /// `-t`, when given.
    pub threads: Option<u32>,
    /// `-s`.
    pub secs: u64,
    /// `-d` drive letters.
    pub drives: Vec<char>,
    /// `-R` raw drives (letters or disk numbers).
    pub raw: Vec<String>,
    /// `-f`.
    pub pattern: Pattern,
    /// `-p`: (ideal, cpu).
    pub cpu: Option<(bool, usize)>,
    /// `-a`: (round robin, ideal, mask text).
    pub mask: Option<(bool, bool, String)>,
    /// `-o`, when given.
    pub outstanding: Option<u32>,
    /// `-b` in KB.
    pub block_kb: u64,
    /// `-i`, when given.
    pub ios_per_run: Option<u64>,
    /// `-m`: (C or S, sub-blocks).
    pub multi: Option<(char, u64)>,
    /// `-L`: (S or P, with i).
    pub latency: Option<(char, bool)>,
    /// `-B`, when given.
    pub buffering: Option<Buffering>,
    /// `-S` blocks.
    pub start_blocks: u64,
    /// `-U` (false) or `-Up` (true): CPU utilisation report.
    pub utilization: Option<bool>,
    /// `-D<n>`: SQLIO's hidden debug level.
    pub debug: Option<u32>,
    /// `-F` parameter files.
    pub param_files: Vec<String>,
    /// File names.
    pub files: Vec<String>,
}

impl Default for SqlioArgs {
    fn default() -> Self {
        SqlioArgs {
            write: false,
            threads: None,
            secs: 30,
            drives: Vec::new(),
            raw: Vec::new(),
            pattern: Pattern::Stripe(64),
            cpu: None,
            mask: None,
            outstanding: None,
            block_kb: 2,
            ios_per_run: None,
            multi: None,
            latency: None,
            buffering: None,
            start_blocks: 0,
            utilization: None,
            debug: None,
            param_files: Vec::new(),
            files: Vec::new(),
        }
    }
}

fn num<T: std::str::FromStr>(opt: &str, v: &str, what: &str) -> anyhow::Result<T> {
    v.trim().parse().map_err(|_| {
        bad_option(
            TOOL,
            opt,
            format!("'{v}' is not {what}; SQLIO takes the value glued to the flag, e.g. -t8"),
        )
    })
}

/// Parses SQLIO's options (case-sensitive, values glued to the flag).
pub fn parse(args: &[String], w: &mut Warnings) -> anyhow::Result<SqlioArgs> {
    let mut a = SqlioArgs::default();
    for arg in args {
        if !arg.starts_with('-') || arg == "-" {
            if arg.len() > MAX_NAME {
                return Err(bad_option(
                    TOOL,
                    arg,
                    format!("file names are limited to {MAX_NAME} characters, as in SQLIO"),
                ));
            }
            a.files.push(arg.clone());
            continue;
        }
        let body = &arg[1..];
        let Some(flag) = body.chars().next() else {
            return Err(bad_option(TOOL, arg, "empty option"));
        };
        let v = &body[flag.len_utf8()..];
        match flag {
            'k' => {
                a.write = match v {
                    "R" => false,
                    "W" => true,
                    _ => return Err(bad_option(TOOL, arg, "use -kR (reads) or -kW (writes)")),
                }
            }
            't' => {
                let t: u32 = num(arg, v, "a number of threads")?;
                if t == 0 || t > MAX_THREADS {
                    return Err(bad_option(TOOL, arg, format!("threads must be 1..{MAX_THREADS}, as in SQLIO")));
                }
                a.threads = Some(t);
            }
            's' => {
                a.secs = num(arg, v, "a number of seconds")?;
                if a.secs == 0 {
                    return Err(bad_option(TOOL, arg, "the run must last at least 1 second"));
                }
            }
            'd' => {
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphabetic()) {
                    return Err(bad_option(TOOL, arg, "give drive letters, e.g. -dL or -dEFG"));
                }
                a.drives.extend(v.chars().map(|c| c.to_ascii_uppercase()));
            }
            'R' => {
                let items: Vec<String> = v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                if items.is_empty() {
                    return Err(bad_option(TOOL, arg, "give raw drive letters or disk numbers, e.g. -RL or -R0,1"));
                }
                for it in &items {
                    let letter = it.len() == 1 && it.chars().all(|c| c.is_ascii_alphabetic());
                    if !letter && it.parse::<u32>().is_err() {
                        return Err(bad_option(TOOL, arg, format!("'{it}' is neither a drive letter nor a disk number")));
                    }
                }
                a.raw.extend(items);
            }
            'f' => {
                a.pattern = match v {
                    "random" => Pattern::Random,
                    "sequential" => Pattern::Sequential,
                    n => match num(arg, n, "random, sequential or a stripe factor")? {
                        0 => return Err(bad_option(TOOL, arg, "the stripe factor is a number of blocks from 1 up (-f1 is sequential)")),
                        n => Pattern::Stripe(n),
                    },
                }
            }
            'p' => {
                let (ideal, n) = match v.strip_prefix('I') {
                    Some(n) => (true, n),
                    None => (false, v),
                };
                a.cpu = Some((ideal, num(arg, n, "a CPU number")?));
            }
            'a' => {
                let (rr, rest) = match v.strip_prefix('R') {
                    Some(r) => (true, r),
                    None => (false, v),
                };
                let (ideal, mask) = match rest.strip_prefix('I') {
                    Some(m) if rr => (true, m),
                    _ => (false, rest),
                };
                if super::mask_cpus(mask).is_none() {
                    return Err(bad_option(TOOL, arg, "give a CPU mask such as 0x3, -aR0xF or -aRI0xF"));
                }
                a.mask = Some((rr, ideal, mask.to_string()));
            }
            'o' => {
                let o: u32 = num(arg, v, "a number of outstanding I/Os")?;
                if o == 0 || o > crate::workload::MAX_QD {
                    return Err(bad_option(TOOL, arg, format!("outstanding I/Os must be 1..{}", crate::workload::MAX_QD)));
                }
                a.outstanding = Some(o);
            }
            'b' => {
                a.block_kb = num(arg, v, "a block size in KB")?;
                if a.block_kb == 0 || a.block_kb > MAX_BLOCK_KB {
                    return Err(bad_option(TOOL, arg, format!("the block size must be 1..{MAX_BLOCK_KB} KB")));
                }
            }
            'U' => {
                a.utilization = Some(match v {
                    "" => false,
                    "p" => true,
                    _ => return Err(bad_option(TOOL, arg, "use -U (system utilisation) or -Up (also per processor)")),
                })
            }
            '6' if v == "4" => w.add(arg, "64-bit memory operations: iosim is a 64-bit program already (SQLIO v1.5.SG did not support -64 either)"),
            'D' => {
                let level: u32 = num(arg, v, "a debug level")?;
                w.add(arg, "SQLIO's debug output (per-thread figures, timer calibration, per-I/O lines) is not printed; use --json FILE for per-thread results");
                a.debug = Some(level);
            }
            'i' => a.ios_per_run = Some(num(arg, v, "a number of I/Os per run")?),
            'm' => {
                let mut c = v.chars();
                let kind = c.next().filter(|k| *k == 'C' || *k == 'S').ok_or_else(|| {
                    bad_option(TOOL, arg, "use -mC<n> (copy) or -mS<n> (scatter/gather)")
                })?;
                a.multi = Some((kind, num(arg, c.as_str(), "a number of sub-blocks")?));
            }
            'L' => {
                let mut c = v.chars();
                let timer = c.next().filter(|k| *k == 'S' || *k == 'P').ok_or_else(|| {
                    bad_option(TOOL, arg, "use -LS (system timer) or -LP (processor timer)")
                })?;
                let i = match c.as_str() {
                    "" => false,
                    "i" => true,
                    _ => return Err(bad_option(TOOL, arg, "use -LS, -LP, -LSi or -LPi")),
                };
                a.latency = Some((timer, i));
            }
            'B' => {
                a.buffering = Some(match v {
                    "N" => Buffering::None,
                    "Y" => Buffering::All,
                    "H" => Buffering::Hardware,
                    "S" => Buffering::Software,
                    _ => return Err(bad_option(TOOL, arg, "use -BN, -BY, -BH or -BS")),
                })
            }
            'S' => a.start_blocks = num(arg, v, "a number of blocks")?,
            'v' => {
                if v == "1.1.1" {
                    return Err(bad_option(TOOL, arg, "SQLIO 1.1.1's repeated runs over the same blocks are not supported: iosim would measure cache hits that SQLIO 1.5 does not; drop -v1.1.1"));
                }
                return Err(bad_option(TOOL, arg, "unknown option (the only -v SQLIO knows is -v1.1.1)"));
            }
            'F' => {
                if v.is_empty() {
                    return Err(bad_option(TOOL, arg, "give the parameter file glued to the flag, e.g. -Fparam.txt"));
                }
                a.param_files.push(v.to_string());
            }
            _ => {
                return Err(bad_option(
                    TOOL,
                    arg,
                    "unknown SQLIO option (SQLIO options are case-sensitive: -k -t -s -d -R -f -p -a -o -b -i -m -L -U -B -S -v1.1.1 -64 -D -F)",
                ))
            }
        }
    }
    if let (Some(n), Pattern::Random | Pattern::Sequential) = (a.ios_per_run, a.pattern) {
        w.add(&format!("-i{n}"), "I/Os per run only shape SQLIO's stripe pattern (a numeric -f); with -frandom or -fsequential they are meaningless, as SQLIO's readme says, so it is ignored");
    }
    if let Some((k, n)) = a.multi {
        w.add(&format!("-m{k}{n}"), "multi-block I/O is approximated: each I/O is issued as one contiguous buffer of -b KB (the device sees the same request; only the memory layout differs)");
    }
    if let Some((t, i)) = a.latency {
        if t == 'P' {
            w.add(
                "-LP",
                "latency is always timed with CLOCK_MONOTONIC (the system timer) on Linux",
            );
        }
        if i {
            w.add(
                &format!("-L{t}i"),
                "the 'i' modifier is ignored: iosim times every I/O",
            );
        }
    }
    if let Some((true, cpu)) = a.cpu {
        w.add(
            &format!("-pI{cpu}"),
            "Linux has no ideal-processor hint: threads are not pinned",
        );
    }
    if let Some((true, true, m)) = &a.mask {
        w.add(
            &format!("-aRI{m}"),
            "Linux has no ideal-processor hint: threads are not pinned",
        );
    }
    if a.cpu.is_some() && a.mask.is_some() {
        return Err(bad_option(
            TOOL,
            "-p/-a",
            "give either -p (one CPU) or -a (a mask), not both",
        ));
    }
    Ok(a)
}

/// One line of a parameter file: `path threads mask sizeMB`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamLine {
    /// File name as written.
    pub path: String,
    /// Threads.
    pub threads: u32,
    /// Mask as written (`0x0`).
    pub mask: String,
    /// Size in MB, when given.
    pub size_mb: Option<u64>,
}

/// Parses a parameter file. `#` starts a comment line; blank lines are skipped.
pub fn parse_param_file(text: &str, name: &str) -> anyhow::Result<Vec<ParamLine>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let bad = |why: String| {
            anyhow::Error::new(crate::Error::BadWorkload(format!(
                "parameter file '{name}' line {}: {why} (expected: path threads mask sizeMB, e.g. /mnt/data/testfile.dat 2 0x0 100)",
                n + 1
            )))
        };
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() > 4 {
            return Err(bad(format!("{} fields", f.len())));
        }
        let threads = match f.get(1) {
            Some(t) => t
                .parse()
                .map_err(|_| bad(format!("'{t}' is not a number of threads")))?,
            None => 1,
        };
        if threads == 0 || threads > MAX_THREADS {
            return Err(bad(format!("threads must be 1..{MAX_THREADS}")));
        }
        let mask = f.get(2).copied().unwrap_or("0x0").to_string();
        if super::mask_cpus(&mask).is_none() {
            return Err(bad(format!("'{mask}' is not a CPU mask")));
        }
        let size_mb = match f.get(3) {
            Some(s) => Some(
                s.parse()
                    .map_err(|_| bad(format!("'{s}' is not a size in MB")))?,
            ),
            None => None,
        };
        if size_mb == Some(0) {
            return Err(bad("the size must be at least 1 MB".into()));
        }
        out.push(ParamLine {
            path: f[0].to_string(),
            threads,
            mask,
            size_mb,
        });
    }
    Ok(out)
}

/// One file of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FilePlan {
    /// Linux path.
    pub path: PathBuf,
    /// Threads on it.
    pub threads: u32,
    /// First global thread number.
    pub first_thread: u32,
    /// Parameter-file mask as written, when it came from one.
    pub mask: Option<String>,
    /// Size the parameter file asked for (bytes).
    pub size: Option<u64>,
}

/// Everything a run needs: what to print and what to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The options.
    pub args: SqlioArgs,
    /// Parameter files named (as written).
    pub param_files: Vec<String>,
    /// Files.
    pub files: Vec<FilePlan>,
    /// The workload (targets carry no creation size: files are prepared first).
    pub spec: WorkloadSpec,
}

/// Builds the plan. `read` reads a parameter file.
pub fn plan(
    args: &SqlioArgs,
    ext: &Extensions,
    w: &mut Warnings,
    read: &dyn Fn(&str) -> anyhow::Result<String>,
) -> anyhow::Result<Plan> {
    let random = args.pattern == Pattern::Random;
    let stripe = match args.pattern {
        Pattern::Stripe(n) => Some(Stripe {
            factor: n,
            ios_per_run: args.ios_per_run.unwrap_or(64),
        }),
        Pattern::Random | Pattern::Sequential => None,
    };
    let bs = args.block_kb * 1024;
    let mut files: Vec<FilePlan> = Vec::new();
    let mut push =
        |path: PathBuf, threads: Option<u32>, mask: Option<String>, size: Option<u64>| {
            // A parameter file's thread column wins over -t, as in SQLIO (a published
            // run of `-t2 -Fparam.txt` reports the file's "4 threads").
            files.push(FilePlan {
                path,
                threads: threads.or(args.threads).unwrap_or(1),
                first_thread: 0,
                mask,
                size,
            });
        };
    if let (Some(t), false) = (args.threads, args.param_files.is_empty()) {
        w.add(
            &format!("-t{t}"),
            "the parameter file's thread counts are used for its files, as in SQLIO",
        );
    }
    for pf in &args.param_files {
        let text = read(pf)?;
        for l in parse_param_file(&text, pf)? {
            let path = ext.resolve(&l.path)?;
            push(
                path,
                Some(l.threads),
                Some(l.mask),
                l.size_mb.map(|m| m << 20),
            );
        }
    }
    let mut names = args.files.clone();
    if names.is_empty() && args.param_files.is_empty() && args.raw.is_empty() {
        names.push("testfile.dat".to_string());
    }
    if args.drives.is_empty() {
        for n in &names {
            push(ext.resolve(n)?, None, None, None);
        }
    } else {
        for d in &args.drives {
            for n in &names {
                // The readme's `-dDEF \test` is D:\test, E:\test and F:\test.
                let rel = n.replace('\\', "/");
                if n.as_bytes().get(1) == Some(&b':') {
                    return Err(bad_option(
                        TOOL,
                        &format!("-d{d}"),
                        format!("'{n}' must be a file name relative to the drive's root"),
                    ));
                }
                push(
                    ext.drive(*d)?.join(rel.trim_start_matches('/')),
                    None,
                    None,
                    None,
                );
            }
        }
    }
    for r in &args.raw {
        let path = match r.parse::<u32>() {
            Ok(n) => ext.disk(n)?,
            Err(_) => ext.drive(r.chars().next().unwrap_or('?'))?,
        };
        push(path, None, None, None);
    }
    if files.is_empty() {
        anyhow::bail!(crate::Error::BadWorkload(
            "no file to test: name one (e.g. /mnt/data/testfile.dat) or give -F<paramfile>".into()
        ));
    }
    if files.len() > MAX_FILES {
        anyhow::bail!(crate::Error::BadWorkload(format!(
            "{} files: SQLIO allows at most {MAX_FILES} (including -d and -R)",
            files.len()
        )));
    }
    let mut next = 0;
    for f in &mut files {
        f.first_thread = next;
        next += f.threads;
    }

    // Affinity.
    let mut spec_cpus = Vec::new();
    let mut all_mask_cpus = Vec::new();
    if let Some((false, cpu)) = args.cpu {
        spec_cpus = vec![cpu];
    }
    if let Some((rr, ideal, m)) = &args.mask {
        let (_, cpus) = super::mask_cpus(m).unwrap_or_default();
        if !ideal {
            if *rr {
                spec_cpus = cpus;
            } else {
                all_mask_cpus = cpus;
            }
        }
    }
    if let Some(st) = stripe {
        // The readme: the threads split a row's blocks, so there must be at
        // least as many blocks in a row (-f) as threads on a file.
        if let Some(f) = files.iter().find(|f| u64::from(f.threads) > st.factor) {
            return Err(bad_option(
                TOOL,
                &format!("-f{}", st.factor),
                format!(
                    "the stripe factor must be at least the number of threads on a file ({} on {}): raise -f or lower -t, or use -frandom or -fsequential",
                    f.threads,
                    f.path.display()
                ),
            ));
        }
    }
    let offset = args.start_blocks * bs;
    let targets = files
        .iter()
        .map(|f| {
            let mask_cpus = f
                .mask
                .as_deref()
                .and_then(super::mask_cpus)
                .map(|(_, c)| c)
                .unwrap_or_default();
            TargetSpec {
                path: f.path.clone(),
                // SQLIO extends a file to what the stripe pattern touches.
                size: stripe.map(|st| offset.saturating_add(st.span(bs))),
                offset,
                length: f.size.map(|s| s.saturating_sub(offset)),
                threads: Some(f.threads),
                cpus: if mask_cpus.is_empty() {
                    all_mask_cpus.clone()
                } else {
                    mask_cpus
                },
                distribution: None,
            }
        })
        .collect();
    let spec = WorkloadSpec {
        targets,
        rw: RwMode::from_parts(random, if args.write { 100 } else { 0 }),
        write_pct: if args.write { 100 } else { 0 },
        bs,
        align: None,
        threads: files[0].threads,
        qd: args.outstanding.unwrap_or(1),
        duration: Duration::from_secs(args.secs),
        warmup: Duration::ZERO,
        seed: WorkloadSpec::default().seed,
        cache: args.buffering.unwrap_or(Buffering::None).cache(),
        engine: ext.engine.unwrap_or(EngineKind::Auto),
        // SQLIO's write buffers are zeroed memory; reads need no fill.
        fill: if args.write {
            FillMode::Zero
        } else {
            FillMode::Random
        },
        seq_layout: stripe.map_or(SeqLayout::Split, SeqLayout::Stripe),
        allow_destroy: ext.allow_destroy,
        cpus: spec_cpus,
        sqpoll: false,
        submit_batch: 1,
        hipri: false,
        io_limit: None,
        ..WorkloadSpec::default()
    };
    spec.validate()?;
    Ok(Plan {
        args: args.clone(),
        param_files: args.param_files.clone(),
        files,
        spec,
    })
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn list(names: &[String]) -> String {
    match names.len() {
        0 => String::new(),
        1 => names[0].clone(),
        n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// SQLIO's header, up to the file-size lines.
pub fn header(p: &Plan) -> String {
    let mut s = String::from("sqlio v1.5.SG\n");
    if p.args.latency.is_some() {
        let _ = writeln!(
            s,
            "using system counter for latency timings, 1000000000 counts per second"
        );
    }
    for pf in &p.param_files {
        let _ = writeln!(s, "parameter file used: {pf}");
    }
    for f in &p.files {
        if let Some(mask) = &f.mask {
            let (v, _) = super::mask_cpus(mask).unwrap_or_default();
            let range = if f.threads == 1 {
                format!("{}", f.first_thread)
            } else {
                format!("{}-{}", f.first_thread, f.first_thread + f.threads - 1)
            };
            let _ = writeln!(
                s,
                "\tfile {} with {} thread{} ({range}) using mask {mask} ({v})",
                f.path.display(),
                f.threads,
                plural(f.threads)
            );
        }
    }
    let total: u32 = p.files.iter().map(|f| f.threads).sum();
    let names: Vec<String> = p
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    let _ = writeln!(
        s,
        "{total} thread{} {} for {} secs {} file{} {}",
        plural(total),
        if p.args.write { "writing" } else { "reading" },
        p.args.secs,
        if p.args.write { "to" } else { "from" },
        if names.len() == 1 { "" } else { "s" },
        list(&names)
    );
    let _ = writeln!(
        s,
        "\tusing {}KB {} IOs",
        p.args.block_kb,
        if p.spec.rw.is_random() {
            "random"
        } else {
            "sequential"
        }
    );
    if let Some(o) = p.args.outstanding {
        let _ = writeln!(
            s,
            "\tenabling multiple I/Os per thread with {o} outstanding"
        );
    }
    if let Some(b) = p.args.buffering {
        let _ = writeln!(s, "\t{}", b.line());
    }
    s
}

/// How a file was prepared, for the size lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Prepared {
    /// Used as found.
    Current {
        /// Bytes.
        size: u64,
    },
    /// The parameter file's size was used (file already large enough).
    Specified {
        /// Bytes.
        size: u64,
    },
    /// Created or extended from `current` to `size`; `specified` when a parameter file gave the size.
    Expanded {
        /// Bytes before.
        current: u64,
        /// Bytes after.
        size: u64,
        /// True when the size came from a parameter file.
        specified: bool,
    },
}

/// The expansion lines before the work (`expanding X ...`, without "done.").
pub fn expand_lines(path: &Path, current: u64, size: u64) -> String {
    format!(
        "size of file {p} needs to be: {size} bytes\ncurrent file size: {current} bytes\nneed to expand by: {} bytes\nexpanding {p} ...",
        size - current,
        p = path.display()
    )
}

/// Every line SQLIO printed while preparing one file: the expansion lines
/// with their " done." when it grew the file, then the `using ... size` line.
pub fn prepared_lines(path: &Path, prep: &Prepared) -> String {
    match *prep {
        Prepared::Expanded { current, size, .. } => {
            expand_lines(path, current, size) + EXPANDED + &size_line(path, prep)
        }
        _ => size_line(path, prep),
    }
}

/// What ends the expansion lines once the file is expanded.
const EXPANDED: &str = " done.\n";

/// The line between the preparation and the results.
const INITIALIZED: &str = "initialization done\n";

/// The `using ... size` line.
pub fn size_line(path: &Path, prep: &Prepared) -> String {
    let (kind, size) = match *prep {
        Prepared::Current { size } => ("current", size),
        Prepared::Specified { size } => ("specified", size),
        Prepared::Expanded {
            size, specified, ..
        } => (if specified { "specified" } else { "current" }, size),
    };
    format!(
        "using {kind} size: {} MB for file: {}\n",
        size >> 20,
        path.display()
    )
}

/// SQLIO's results, from `CUMULATIVE DATA:` on, in SQLIO's fixed columns.
///
/// Layout from SQLIO 1.5's readme.txt ("throughput metrics:" / "IOs/sec:   183.16",
/// and the `ms:`/`%:` histogram rows): values are `%9.2f` after the label, the
/// histogram is 3-character right-aligned columns (`ms: 0` then `%3d` for 1..23 and
/// ` 24+`; `%:` then `%3d` for every bucket).
pub fn results(p: &Plan, r: &RunResult) -> String {
    let t = &r.total.total;
    let mut s = String::from("CUMULATIVE DATA:\nthroughput metrics:\n");
    s.push_str(&throughput_lines(t.iops, t.mib_per_sec));
    if p.args.latency.is_some() {
        let ms = |us: f64| (us / 1000.0).floor() as u64;
        s.push_str("latency metrics:\n");
        let _ = writeln!(s, "Min_Latency(ms): {}", ms(t.latency_us.min));
        let _ = writeln!(s, "Avg_Latency(ms): {}", ms(t.latency_us.mean));
        let _ = writeln!(s, "Max_Latency(ms): {}", ms(t.latency_us.max));
        s.push_str("histogram:\n");
        s.push_str(&histogram_rows(&crate::report::sqlio_percentages(t)));
    }
    s
}

/// The `IOs/sec:` and `MBs/sec:` lines: the value right-aligned in 8 columns
/// after one blank (`IOs/sec:   183.16`), as SQLIO prints them.
pub fn throughput_lines(iops: f64, mbs: f64) -> String {
    format!("IOs/sec: {iops:8.2}\nMBs/sec: {mbs:8.2}\n")
}

/// The `ms:` and `%:` rows of SQLIO's latency histogram (25 buckets).
pub fn histogram_rows(pct: &[u64]) -> String {
    let mut s = String::from("ms: 0");
    for i in 1..24 {
        let _ = write!(s, "{i:3}");
    }
    s.push_str(" 24+\n%:");
    for v in pct {
        let _ = write!(s, "{v:3}");
    }
    s.push('\n');
    s
}

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

/// Writes `fill` data from `from` to `to` into an existing file (SQLIO's expansion).
fn expand_file(path: &Path, from: u64, to: u64) -> anyhow::Result<()> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| {
            anyhow::Error::new(e).context(format!("cannot open '{}' to expand it", path.display()))
        })?;
    let buf = vec![0u8; 1 << 20];
    let mut off = from;
    while off < to {
        let n = (to - off).min(buf.len() as u64) as usize;
        f.write_all_at(&buf[..n], off).map_err(|e| {
            anyhow::Error::new(e).context(format!("cannot expand '{}'", path.display()))
        })?;
        off += n as u64;
    }
    f.sync_all()?;
    Ok(())
}

/// Creates or expands the files as SQLIO does, printing its lines file by file:
/// the expansion lines, then `using ... size`.
fn prepare_files(
    out: &mut dyn std::io::Write,
    p: &Plan,
    ext: &Extensions,
    stop: &AtomicBool,
    progress: bool,
) -> anyhow::Result<Vec<(PathBuf, Prepared)>> {
    use std::os::unix::fs::FileTypeExt as _;
    let mut done = Vec::new();
    let mut emit = |out: &mut dyn std::io::Write, path: &Path, prep: Prepared| {
        let r = out.write_all(size_line(path, &prep).as_bytes());
        done.push((path.to_path_buf(), prep));
        r
    };
    for f in &p.files {
        let meta = std::fs::metadata(&f.path);
        let (exists, is_file, len) = match &meta {
            Ok(m) if m.file_type().is_block_device() => (true, false, 0),
            Ok(m) => (true, m.is_file(), m.len()),
            Err(_) => (false, true, 0),
        };
        if exists && !is_file {
            // Block device: sizes come from the device; the region is the parameter size.
            emit(
                out,
                &f.path,
                match f.size {
                    Some(size) => Prepared::Specified { size },
                    None => Prepared::Current {
                        size: device_len(&f.path),
                    },
                },
            )?;
            continue;
        }
        let want = f.size.or(if exists {
            None
        } else {
            Some(ext.size.unwrap_or(DEFAULT_CREATE_SIZE))
        });
        match want {
            Some(size) if size > len => {
                if exists && !crate::target::is_iosim_file(&f.path) && !ext.allow_destroy {
                    return Err(crate::Error::WouldDestroy(
                        f.path.clone(),
                        format!("it holds {len} bytes, the parameter file asks for {size}, and iosim did not create it"),
                    )
                    .into());
                }
                write!(out, "{}", expand_lines(&f.path, len, size))?;
                out.flush()?;
                if exists {
                    expand_file(&f.path, len, size)?;
                } else {
                    crate::target::create_test_file(
                        &f.path,
                        size,
                        FillMode::Zero,
                        crate::target::PrepareOptions {
                            progress,
                            stop: Some(stop),
                        },
                    )?;
                }
                out.write_all(EXPANDED.as_bytes())?;
                emit(
                    out,
                    &f.path,
                    Prepared::Expanded {
                        current: len,
                        size,
                        specified: f.size.is_some(),
                    },
                )?;
            }
            Some(size) => emit(out, &f.path, Prepared::Specified { size })?,
            None => emit(out, &f.path, Prepared::Current { size: len })?,
        }
    }
    Ok(done)
}

fn device_len(path: &Path) -> u64 {
    std::fs::File::open(path)
        .ok()
        .and_then(|f| crate::target::device_size(&f).ok())
        .unwrap_or(0)
}

/// Refuses, before anything is printed, writes that the core would refuse later.
fn check_writable(p: &Plan, ext: &Extensions) -> anyhow::Result<()> {
    if !p.spec.writes() || ext.allow_destroy {
        return Ok(());
    }
    for f in &p.files {
        if let Ok(m) = std::fs::metadata(&f.path) {
            if !crate::target::is_iosim_file(&f.path) {
                let why = if m.is_file() {
                    "it exists and was not created by iosim"
                } else {
                    "it is not a test file iosim created (a device, or something else)"
                };
                return Err(crate::Error::WouldDestroy(f.path.clone(), why.into()).into());
            }
        }
    }
    Ok(())
}

/// `iosim sqlio -?`.
pub const USAGE: &str = "Usage: iosim sqlio [options] [<filename>...]
	[options] may include any of the following (case-sensitive, as SQLIO):
	-k<R|W> kind of IO (R=reads, W=writes)
	-t<threads> number of threads (per file)
	-s<secs> number of seconds to run
	-d<drv_A><drv_B>.. use same filename on each drive letter given (map letters with --drive)
	-R<drv_A/0>,<drv_B/1>.. raw drive letters/number for I/O (map with --drive / --disk)
	-f<stripe factor> stripe size in blocks, random, or sequential
	-p[I]<cpu affinity> cpu number for affinity (0 based) (I=ideal: ignored on Linux)
	-a[R[I]]<cpu mask> cpu mask for (R=roundrobin (I=ideal: ignored)) affinity
	-o<#outstanding> I/Os in flight per thread
	-b<io size(KB)> IO block size in KB
	-i<#IOs/run> number of IOs per IO run (with a numeric -f)
	-m<[C|S]><#sub-blks> accepted: issued as one contiguous I/O of -b KB
	-L<[S|P][i|]> print latency metrics and the histogram
	-U[p] report system (p=per processor) utilization
	-B<[N|Y|H|S]> set buffering (N=none, Y=all, H=hdwr, S=sfwr)
	-S<#blocks> start I/Os #blocks into file
	-64 accepted (iosim is 64-bit)   -D<level> accepted (debug output not printed)
	-F<paramfile> read parameters from <paramfile> (path threads mask sizeMB per line)
iosim options:
	--drive L=/path  map drive letter L (also IOSIM_DRIVES='L=/path;X=/other')
	--disk N=/dev/x  map disk number N for -R (also IOSIM_DISKS)
	--allow-destroy  allow writes to files and devices iosim did not create
	--size SIZE      size to create a missing file with (default 256M)
	--engine E       uring (default), sync or null
	--json FILE      also write the full result as JSON
	--quiet          no progress bar
Defaults:
	-kR -t1 -s30 -f64 -b2 -i64 -BN testfile.dat (-f64 must be replaced by -frandom or -fsequential)
Maximums:
	-t (threads): 256
	no. of files, includes -d & -R: 256
	filename length: 256
See docs/sqlio.md.
";

/// Parses, plans and validates a SQLIO command line (no I/O): used by `translate` too.
pub fn plan_from_args(args: &[String], w: &mut Warnings) -> anyhow::Result<(Plan, Extensions)> {
    let mut ext = Extensions::from_env()?;
    let rest = ext.split_args(args)?;
    if ext.layout.is_some() {
        anyhow::bail!(crate::Error::BadWorkload(
            "--layout chooses a DiskSpd layout; SQLIO has one layout: leave it out".into()
        ));
    }
    let a = parse(&rest, w)?;
    // The parameter file's own name maps like the paths inside it (`-Fc:\param.txt`).
    let read = |p: &str| {
        let path = ext.resolve(p)?;
        std::fs::read_to_string(&path).map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "cannot read parameter file '{p}' ({})",
                path.display()
            ))
        })
    };
    let p = plan(&a, &ext, w, &read)?;
    Ok((p, ext))
}

/// `iosim sqlio ...`: runs and writes SQLIO's output to `out`; returns the exit code.
///
/// Facts SQLIO does not print (the clock source, notes) go to stderr, so every
/// line on `out` is one SQLIO printed.
pub fn main(
    args: &[String],
    stop: Arc<AtomicBool>,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<super::Measured<Printed>> {
    if args.iter().any(|a| a == "-?") {
        out.write_all(USAGE.as_bytes())?;
        return Ok(super::Measured::nothing(Extensions::default()));
    }
    let mut w = Warnings::default();
    let (p, ext) = plan_from_args(args, &mut w)?;
    w.print(TOOL);
    check_writable(&p, &ext)?;
    if p.args.latency.is_some() {
        let cs = crate::sysmon::host::clocksource().unwrap_or_else(|| "unknown".into());
        eprintln!("iosim sqlio: note: latency is timed with CLOCK_MONOTONIC (clocksource {cs}), in nanoseconds");
    }
    out.write_all(header(&p).as_bytes())?;
    out.flush()?;
    let opts = super::run_options(ext.quiet, stop.clone(), 1000);
    let prepared = prepare_files(out, &p, &ext, &stop, opts.progress)?;
    out.write_all(INITIALIZED.as_bytes())?;
    out.flush()?;
    let before = p.args.utilization.map(|_| CpuSample::now());
    let res = crate::runner::run(&p.spec, &opts)?;
    let printed = Printed {
        plan: p,
        prepared,
        cpu: before.map(|b| (b, CpuSample::now())),
    };
    out.write_all(printed.after_run(&res).as_bytes())?;
    out.flush()?;
    for n in &res.notes {
        eprintln!("iosim sqlio: note: {n}");
    }
    if res.interrupted {
        eprintln!(
            "iosim sqlio: interrupted: the numbers cover {:.2} s",
            res.duration_s
        );
    }
    if res.errors.count > 0 {
        eprintln!(
            "iosim sqlio: {} I/O errors (see --json for the first ones)",
            res.errors.count
        );
    }
    super::write_json(ext.json.as_deref(), &res)?;
    Ok(super::Measured::run(TOOL, args, res, printed, ext))
}

/// What `iosim sqlio` printed a run's output from, kept with its result in
/// the history so that `iosim show` prints the same lines again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Printed {
    /// The plan (options, files, workload).
    pub plan: Plan,
    /// How each file was prepared, in order.
    pub prepared: Vec<(PathBuf, Prepared)>,
    /// `-U`: the CPU counters before and after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<(CpuSample, CpuSample)>,
}

impl Printed {
    /// Everything `iosim sqlio` printed on stdout for the run `r`.
    pub fn text(&self, r: &RunResult) -> String {
        let mut s = header(&self.plan);
        for (path, prep) in &self.prepared {
            s.push_str(&prepared_lines(path, prep));
        }
        s.push_str(INITIALIZED);
        s + &self.after_run(r)
    }

    /// What it prints once the run is over: the results, then `-U`'s report.
    fn after_run(&self, r: &RunResult) -> String {
        let mut s = results(&self.plan, r);
        if let (Some(per_cpu), Some((a, b))) = (self.plan.args.utilization, &self.cpu) {
            s.push_str(&utilization(a, b, r.duration_s, per_cpu));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn parse_ok(s: &str) -> SqlioArgs {
        parse(&args(s), &mut Warnings::default()).unwrap()
    }

    fn parse_err(s: &str) -> String {
        parse(&args(s), &mut Warnings::default())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn defaults_are_sqlios() {
        let a = parse_ok("");
        assert!(!a.write);
        assert_eq!(a.threads, None);
        assert_eq!(a.secs, 30);
        assert_eq!(a.pattern, Pattern::Stripe(64));
        assert_eq!(a.block_kb, 2);
        assert_eq!(a.buffering, None);
    }

    #[test]
    fn seed_command_lines_parse() {
        let a = parse_ok("-s10 -kR -frandom -b8 -t8 -o16 -LS -BN X:\\TestFile.DAT");
        assert_eq!(a.secs, 10);
        assert_eq!(a.pattern, Pattern::Random);
        assert_eq!(a.block_kb, 8);
        assert_eq!(a.threads, Some(8));
        assert_eq!(a.outstanding, Some(16));
        assert_eq!(a.latency, Some(('S', false)));
        assert_eq!(a.buffering, Some(Buffering::None));
        assert_eq!(a.files, vec!["X:\\TestFile.DAT"]);
        let a = parse_ok("-dL -BH -kW -fsequential -t8 -o128 -s90 -b8 testfile.dat");
        assert!(a.write);
        assert_eq!(a.drives, vec!['L']);
        assert_eq!(a.buffering, Some(Buffering::Hardware));
        let a = parse_ok("-kR -s180 -frandom -o8 -b256 -LS -Fparam.txt");
        assert_eq!(a.param_files, vec!["param.txt"]);
    }

    #[test]
    fn powershell_style_spaced_values_parse() {
        // `$o = "-o $_"` passes one argument "-o 1".
        let a = parse(
            &["-o 32".to_string(), "-t 2".to_string()],
            &mut Warnings::default(),
        )
        .unwrap();
        assert_eq!(a.outstanding, Some(32));
        assert_eq!(a.threads, Some(2));
    }

    #[test]
    fn case_matters_and_unknowns_are_named() {
        assert!(parse_err("-kr").contains("-kr"));
        assert!(parse_err("-x").contains("'-x'"));
        assert!(parse_err("-o").contains("'-o'"));
        assert!(parse_err("-t300").contains("256"));
        assert!(parse_err("-v1.1.1").contains("-v1.1.1"));
        assert!(parse_err("-BQ").contains("-BN"));
        assert!(parse_err("-p1 -a0x3").contains("not both"));
        let s = parse_ok("-S10 -s10");
        assert_eq!(s.start_blocks, 10);
        assert_eq!(s.secs, 10);
    }

    #[test]
    fn ignored_options_warn() {
        let mut w = Warnings::default();
        let a = parse(&args("-frandom -i32 -mS4 -LPi -pI1"), &mut w).unwrap();
        assert_eq!(a.multi, Some(('S', 4)));
        assert_eq!(w.0.len(), 5, "{:?}", w.0);
    }

    #[test]
    fn param_files() {
        let t = "# comment\n\nc:\\DSI3500\\LUN00\\testfile.dat 1 0x0 10000\n/tmp/b.dat 2 0x3 100\n/tmp/c.dat\n";
        let l = parse_param_file(t, "p.txt").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].size_mb, Some(10000));
        assert_eq!(l[1].threads, 2);
        assert_eq!(l[1].mask, "0x3");
        assert_eq!(l[2].threads, 1);
        assert_eq!(l[2].size_mb, None);
        assert!(parse_param_file("/a x 0x0 1", "p").is_err());
        assert!(parse_param_file("/a 1 0x0 1 extra", "p").is_err());
        assert!(parse_param_file("/a 1 zz 1", "p").is_err());
    }

    fn plan_of(s: &str, param: &str) -> anyhow::Result<Plan> {
        let mut ext = Extensions::default();
        ext.add_drive("L=/mnt/l").unwrap();
        ext.add_drive("X=/mnt/x").unwrap();
        let a = parse(&args(s), &mut Warnings::default())?;
        let param = param.to_string();
        plan(&a, &ext, &mut Warnings::default(), &move |_| {
            Ok(param.clone())
        })
    }

    #[test]
    fn plans_map_to_the_spec() {
        let p = plan_of(
            "-s10 -kR -frandom -b8 -t8 -o16 -LS -BN X:\\TestFile.DAT",
            "",
        )
        .unwrap();
        assert_eq!(p.spec.rw, RwMode::Randread);
        assert_eq!(p.spec.bs, 8192);
        assert_eq!(p.spec.qd, 16);
        assert_eq!(p.spec.targets[0].threads, Some(8));
        assert_eq!(p.spec.targets[0].path, PathBuf::from("/mnt/x/TestFile.DAT"));
        assert_eq!(p.spec.cache, CacheMode::DirectWritethrough);
        assert_eq!(p.spec.duration, Duration::from_secs(10));
        let p = plan_of(
            "-dL -BH -kW -fsequential -t2 -o1 -s90 -b64 testfile.dat",
            "",
        )
        .unwrap();
        assert_eq!(p.spec.rw, RwMode::Write);
        assert_eq!(p.spec.cache, CacheMode::Direct);
        assert_eq!(p.spec.targets[0].path, PathBuf::from("/mnt/l/testfile.dat"));
        let p = plan_of(
            "-kR -frandom -b256 -Fp.txt -S4",
            "/tmp/a.dat 1 0x0 100\n/tmp/b.dat 2 0x2 100",
        )
        .unwrap();
        assert_eq!(p.files.len(), 2);
        assert_eq!(p.files[1].first_thread, 1);
        assert_eq!(p.spec.targets[1].threads, Some(2));
        assert_eq!(p.spec.targets[1].cpus, vec![1]);
        assert_eq!(p.spec.targets[0].offset, 4 * 256 * 1024);
        assert_eq!(p.spec.targets[0].length, Some((100 << 20) - 4 * 256 * 1024));
        // The parameter file's thread column wins over -t, as in SQLIO.
        let p = plan_of("-frandom -t4 -Fp.txt", "/tmp/a.dat 1 0x0 100").unwrap();
        assert_eq!(p.files[0].threads, 1);
        let p = plan_of("-frandom -aR0x3 /tmp/a", "").unwrap();
        assert_eq!(p.spec.cpus, vec![0, 1]);
        let p = plan_of("-frandom -a0x3 /tmp/a", "").unwrap();
        assert_eq!(p.spec.targets[0].cpus, vec![0, 1]);
        let p = plan_of("-frandom -p1 /tmp/a", "").unwrap();
        assert_eq!(p.spec.cpus, vec![1]);
    }

    #[test]
    fn stripe_pattern_is_sqlios_default() {
        let p = plan_of("/tmp/a", "").unwrap();
        let st = Stripe {
            factor: 64,
            ios_per_run: 64,
        };
        assert_eq!(p.spec.seq_layout, SeqLayout::Stripe(st));
        assert!(!p.spec.rw.is_random());
        // -f64 -i64 -b2 touches 8 MB, and the file is extended to hold it.
        assert_eq!(p.spec.targets[0].size, Some(8 << 20));
        let p = plan_of("-f32 -i16 -b8 -S2 -t4 /tmp/a", "").unwrap();
        assert_eq!(
            p.spec.seq_layout,
            SeqLayout::Stripe(Stripe {
                factor: 32,
                ios_per_run: 16
            })
        );
        assert_eq!(p.spec.targets[0].size, Some(2 * 8192 + 32 * 16 * 8192));
        let e = plan_of("-f4 -t8 /tmp/a", "").unwrap_err().to_string();
        assert!(e.contains("-f4") && e.contains("8 on"), "{e}");
        assert!(plan_of("-f0 /tmp/a", "").is_err());
        assert!(plan_of("-dQ -frandom a", "")
            .unwrap_err()
            .to_string()
            .contains("--drive Q="));
    }

    #[test]
    fn header_lines_follow_sqlio() {
        let p = plan_of("-s10 -kR -frandom -b8 -t8 -o16 -LS -BN /x/TestFile.DAT", "").unwrap();
        let h = header(&p);
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[0], "sqlio v1.5.SG");
        assert!(lines[1]
            .starts_with("using system counter for latency timings, 1000000000 counts per second"));
        assert_eq!(
            lines[2],
            "8 threads reading for 10 secs from file /x/TestFile.DAT"
        );
        assert_eq!(lines[3], "\tusing 8KB random IOs");
        assert_eq!(
            lines[4],
            "\tenabling multiple I/Os per thread with 16 outstanding"
        );
        assert_eq!(
            lines[5],
            "\tbuffering set to not use file nor disk caches (as is SQL Server)"
        );
        let p = plan_of(
            "-kW -s5 -fsequential -o4 -b64 -Fparam.txt",
            "/l/testfile.dat 2 0x0 100",
        )
        .unwrap();
        let h = header(&p);
        assert!(h.contains("parameter file used: param.txt\n\tfile /l/testfile.dat with 2 threads (0-1) using mask 0x0 (0)\n2 threads writing for 5 secs to file /l/testfile.dat\n"), "{h}");
    }
}
