//! SQLIO's command line and parameter files into [`SqlioArgs`] and [`ParamLine`]s.

use serde::{Deserialize, Serialize};

use crate::compat::{bad_option, Warnings};
use crate::workload::CacheMode;

pub(super) const TOOL: &str = "sqlio";
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
        option(&mut a, w, arg)?;
    }
    warn_approximations(&a, w);
    if a.cpu.is_some() && a.mask.is_some() {
        return Err(bad_option(
            TOOL,
            "-p/-a",
            "give either -p (one CPU) or -a (a mask), not both",
        ));
    }
    Ok(a)
}

/// One option, `arg` (a dash, the flag letter, the value glued to it).
fn option(a: &mut SqlioArgs, w: &mut Warnings, arg: &str) -> anyhow::Result<()> {
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
        'R' => a.raw.extend(raw_drives(arg, v)?),
        'f' => a.pattern = pattern(arg, v)?,
        'p' => {
            let (ideal, n) = match v.strip_prefix('I') {
                Some(n) => (true, n),
                None => (false, v),
            };
            a.cpu = Some((ideal, num(arg, n, "a CPU number")?));
        }
        'a' => a.mask = Some(mask(arg, v)?),
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
        'm' => a.multi = Some(multi(arg, v)?),
        'L' => a.latency = Some(latency(arg, v)?),
        'B' => a.buffering = Some(buffering(arg, v)?),
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
    Ok(())
}

/// `-R<letters or disk numbers>`: the raw drives.
fn raw_drives(arg: &str, v: &str) -> anyhow::Result<Vec<String>> {
    let items: Vec<String> = v
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(bad_option(
            TOOL,
            arg,
            "give raw drive letters or disk numbers, e.g. -RL or -R0,1",
        ));
    }
    for it in &items {
        let letter = it.len() == 1 && it.chars().all(|c| c.is_ascii_alphabetic());
        if !letter && it.parse::<u32>().is_err() {
            return Err(bad_option(
                TOOL,
                arg,
                format!("'{it}' is neither a drive letter nor a disk number"),
            ));
        }
    }
    Ok(items)
}

/// `-frandom`, `-fsequential` or `-f<stripe factor>`.
fn pattern(arg: &str, v: &str) -> anyhow::Result<Pattern> {
    Ok(match v {
        "random" => Pattern::Random,
        "sequential" => Pattern::Sequential,
        n => match num(arg, n, "random, sequential or a stripe factor")? {
            0 => {
                return Err(bad_option(
                    TOOL,
                    arg,
                    "the stripe factor is a number of blocks from 1 up (-f1 is sequential)",
                ))
            }
            n => Pattern::Stripe(n),
        },
    })
}

/// `-a[R[I]]<mask>`: (round robin, ideal, mask text).
fn mask(arg: &str, v: &str) -> anyhow::Result<(bool, bool, String)> {
    let (rr, rest) = match v.strip_prefix('R') {
        Some(r) => (true, r),
        None => (false, v),
    };
    let (ideal, mask) = match rest.strip_prefix('I') {
        Some(m) if rr => (true, m),
        _ => (false, rest),
    };
    if crate::compat::mask_cpus(mask).is_none() {
        return Err(bad_option(
            TOOL,
            arg,
            "give a CPU mask such as 0x3, -aR0xF or -aRI0xF",
        ));
    }
    Ok((rr, ideal, mask.to_string()))
}

/// `-mC<n>` (copy) or `-mS<n>` (scatter/gather): (kind, sub-blocks).
fn multi(arg: &str, v: &str) -> anyhow::Result<(char, u64)> {
    let mut c = v.chars();
    let kind = c
        .next()
        .filter(|k| *k == 'C' || *k == 'S')
        .ok_or_else(|| bad_option(TOOL, arg, "use -mC<n> (copy) or -mS<n> (scatter/gather)"))?;
    Ok((kind, num(arg, c.as_str(), "a number of sub-blocks")?))
}

/// `-LS`, `-LP`, `-LSi`, `-LPi`: (timer, with i).
fn latency(arg: &str, v: &str) -> anyhow::Result<(char, bool)> {
    let mut c = v.chars();
    let timer = c
        .next()
        .filter(|k| *k == 'S' || *k == 'P')
        .ok_or_else(|| bad_option(TOOL, arg, "use -LS (system timer) or -LP (processor timer)"))?;
    let i = match c.as_str() {
        "" => false,
        "i" => true,
        _ => return Err(bad_option(TOOL, arg, "use -LS, -LP, -LSi or -LPi")),
    };
    Ok((timer, i))
}

/// `-BN`, `-BY`, `-BH`, `-BS`.
fn buffering(arg: &str, v: &str) -> anyhow::Result<Buffering> {
    Ok(match v {
        "N" => Buffering::None,
        "Y" => Buffering::All,
        "H" => Buffering::Hardware,
        "S" => Buffering::Software,
        _ => return Err(bad_option(TOOL, arg, "use -BN, -BY, -BH or -BS")),
    })
}

/// Warnings for what is accepted but ignored or approximated.
fn warn_approximations(a: &SqlioArgs, w: &mut Warnings) {
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
        if crate::compat::mask_cpus(&mask).is_none() {
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
