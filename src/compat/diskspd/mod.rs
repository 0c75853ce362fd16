//! `iosim diskspd`: DiskSpd's command line and its text (`-Rtext`) and XML
//! (`-Rxml`) reports on iosim's engine. See docs/diskspd.md for every option.
//!
//! By job: `parse` reads the options, `plan` turns them into a workload,
//! `text` and `xml` write the reports; this file runs them.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

mod parse;
mod plan;
mod text;
mod xml;

pub use super::diskspd_args::{DiskspdArgs, Format, Layout, Size, SwCache, Throughput, WriteData};
use super::sysinfo::SystemInfo;
use super::{Extensions, Warnings};
use crate::runner::RunResult;
use parse::TOOL;
pub use parse::{parse, parse_size};
pub use plan::{plan, plan_from_args, Plan};
pub use text::{diskspd_time, display_size, profile_text, text, PERCENTILE_ROWS};
pub use xml::{profile_only, xml, DISKSPD_VERSION, DISKSPD_VERSION_DATE};

/// `iosim diskspd -?`.
pub const USAGE: &str = "Usage: iosim diskspd [options] target1 [ target2 [ target3 ...] ]
Targets: Linux paths, X:\\path with --drive X=/dir, or #N (physical disk) with --disk N=/dev/sdX.
Options (case-sensitive, values glued to the flag, as DiskSpd):
  -b<size>[K|M|G]    block size (default 64K)
  -c<size>[K|M|G|b]  create files of this size
  -d<s>              duration (default 10)      -W<s> warm-up (default 5)   -C<s> cool-down (not run)
  -o<n>              outstanding I/Os per thread per target (default 2)
  -t<n>              threads per target         -F<n> total threads (see docs)
  -r[align]          random I/O                 -s[stride] sequential (stride = block size only)
  -si                interlocked sequential: the threads of a target share one offset
  -rs<pct>           mixed: pct% random, the rest sequential from the last I/O (-r<align> aligns)
  -g<n> / -g<n>i     throughput limit per thread: n bytes per ms / n I/Os per second
  -i<n> -j<ms>       bursts of n I/Os with ms of think time between them
  -w<pct>            write percentage (default 0)
  -T<size>           stride between threads' start offsets (default 0)
  -B<size>           base offset                -f<size> maximum offset (end of region)
  -S[bhruw] / -h     caching: b=buffered (default) u=unbuffered w=writethrough h=u+w r=as u
  -L                 latency statistics         -D[ms] IOPS standard deviation
  -Z / -Zr / -Z<size> zero / random write data  -z[seed] random seed (default 0)
  -a#,#,..           pin threads round-robin    -n no affinity (default: round-robin on all CPUs)
  -Rtext / -Rxml     output format              -Rp<text|xml> print the profile only
Accepted and ignored, with a warning: -x -v -l -P -I -e -ag -fr -fs -ft
  -X<profile.xml>    run a DiskSpd XML profile (as written by -Rpxml); alone
Refused: -p -O -Z<size>,<file>
iosim options: --drive L=/path --disk N=/dev/x --allow-destroy --engine E --json FILE --quiet
               --layout 2.0 (DiskSpd 2.0.21a's text layout; default 2.2)
See docs/diskspd.md.
";

/// DiskSpd's `-I` levels as Linux I/O priorities: very low is the idle class,
/// low the lowest best-effort level, normal leaves the default alone.
fn io_priority(level: u8) -> Option<crate::engine::priority::IoPriority> {
    use crate::engine::priority::IoPriority;
    match level {
        1 => Some(IoPriority::Idle),
        2 => Some(IoPriority::BestEffort(7)),
        _ => None,
    }
}

/// `iosim diskspd ...`: runs DiskSpd's workload; returns the run and what
/// its report is printed from (`-?` and `-Rp` print here and measure nothing).
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
    slash_switch(args)?;
    let (p, ext) = plan_from_args(args, &mut w)?;
    tiny_block(args, &p, &mut w);
    w.print(TOOL);
    if p.args.profile_only {
        out.write_all(profile_only(&p).as_bytes())?;
        return Ok(super::Measured::nothing(ext));
    }
    let mut opts = super::run_options(ext.quiet, stop, p.args.iops_interval_ms.unwrap_or(1000));
    // `-D` prints every thread's IOPS deviation: keep a series per thread.
    opts.thread_series = p.args.iops_interval_ms.is_some();
    // `-I`: the workers inherit the I/O priority of the thread that starts them.
    if let Some(prio) = io_priority(p.args.priority) {
        if let Err(e) = crate::engine::priority::set_current_thread(prio) {
            crate::say!("{TOOL}: warning: -I{}: cannot set the I/O priority ({e}); running at the normal priority", p.args.priority);
        }
    }
    let res = crate::runner::run(&p.spec, &opts)?;
    let printed = Printed {
        plan: p,
        system: SystemInfo::read(),
    };
    let engine = format!(
        "iosim diskspd: note: I/O through iosim {} ({} engine){}",
        res.iosim_version,
        res.engine,
        // On Windows the iocp engine is what the line says.
        if printed.plan.spec.qd > 1 && res.engine != crate::workload::EngineKind::Iocp.name() {
            "; DiskSpd's \"I/O Completion Ports\" line stands for it"
        } else {
            ""
        }
    );
    // The whole report is printed once the run is over, by `commands::finish`.
    let mut m = super::Measured::run(TOOL, args, res, printed, String::new(), ext);
    m.notes.insert(0, engine);
    Ok(m)
}

/// DiskSpd takes `/b8K` for `-b8K` (a Windows path never starts with `/`);
/// on Linux it is a path at the root, which iosim would create. A `/X...`
/// with no other `/`, X one of DiskSpd's switch letters, that does not
/// exist, is refused with the `-` spelling.
fn slash_switch(args: &[String]) -> anyhow::Result<()> {
    const SWITCHES: &str = "?aAbBcCdDefFghiIjlLnoOpPrRsStTvwWxXyzZ";
    for a in args {
        let Some(rest) = a.strip_prefix('/') else {
            continue;
        };
        let letter = rest.chars().next().unwrap_or('/');
        if SWITCHES.contains(letter) && !rest.contains('/') && !std::path::Path::new(a).exists() {
            return Err(super::bad_option(
                TOOL,
                a,
                format!(
                    "DiskSpd's Windows-style switch: on Linux a leading / starts a path (iosim would create the file {a}); write -{rest}"
                ),
            ));
        }
    }
    Ok(())
}

/// `-b8` is 8 bytes in DiskSpd (K, M or G makes it more): a block under
/// 512 bytes is almost always a missing `K`, and it cannot be direct I/O.
fn tiny_block(args: &[String], p: &Plan, w: &mut Warnings) {
    if p.spec.bs >= 512 {
        return;
    }
    let given = args
        .iter()
        .find(|a| a.starts_with("-b"))
        .map_or_else(|| format!("-b{}", p.spec.bs), String::clone);
    w.add(
        &given,
        format!(
            "{} bytes per I/O (DiskSpd's -b counts bytes unless K, M or G follows): did you mean -b{}K?",
            p.spec.bs, p.spec.bs
        ),
    );
}

/// What `iosim diskspd` printed a run's report from, kept with its result
/// in the history so that `iosim show` prints the same report again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Printed {
    /// The plan (options, command line, workload, layout).
    pub plan: Plan,
    /// The machine's topology and power scheme when it ran.
    pub system: SystemInfo,
}

impl Printed {
    /// The report `iosim diskspd` printed for the run `r`: text or XML, as `-R` chose.
    pub fn text(&self, r: &RunResult) -> String {
        match self.plan.args.format {
            Format::Text => text(&self.plan, r, &self.system),
            Format::Xml => xml(&self.plan, r, &self.system),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{CacheMode, EngineKind, FillMode, RwMode, SeqLayout};
    use std::time::Duration;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn plan_of(s: &str) -> anyhow::Result<(Plan, Warnings)> {
        let mut w = Warnings::default();
        let mut ext = Extensions::default();
        ext.add_drive("F=/mnt/f").unwrap();
        ext.add_drive("H=/mnt/h").unwrap();
        let a = parse(&args(s), &mut w)?;
        let p = plan(&a, &ext, s, &mut w)?;
        Ok((p, w))
    }

    #[test]
    fn sizes_display_as_diskspd_2_2() {
        // ResultParser.cpp _DisplayFileSize.
        assert_eq!(display_size(8192), "8KiB");
        assert_eq!(display_size(512), "512");
        assert_eq!(display_size(1 << 30), "1GiB");
        assert_eq!(display_size(1536), "1.50KiB");
        assert_eq!(display_size(3 << 40), "3TiB");
        assert_eq!(
            diskspd_time("2026-11-22T04:05:06Z"),
            "2026/11/22 04:05:06 UTC"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("-b", "64k").unwrap(), Size::Bytes(65536));
        assert_eq!(parse_size("-c", "200G").unwrap(), Size::Bytes(200 << 30));
        assert_eq!(parse_size("-B", "8b").unwrap(), Size::Blocks(8));
        assert!(parse_size("-b", "4Q").is_err());
        assert!(parse_size("-b", "").is_err());
    }

    #[test]
    fn seed_004_lines_map() {
        let (p, _) = plan_of("-c200G -b64k -r -t16 -o1 -h -L -w40 -d60 f:Testdata.mdf").unwrap();
        let s = &p.spec;
        assert_eq!(s.rw, RwMode::Randrw);
        assert_eq!(s.write_pct, 40);
        assert_eq!(s.bs, 65536);
        assert_eq!(s.threads, 16);
        assert_eq!(s.qd, 1);
        assert_eq!(s.cache, CacheMode::DirectWritethrough);
        assert_eq!(s.duration, Duration::from_secs(60));
        assert_eq!(s.warmup, Duration::from_secs(5));
        assert_eq!(
            s.targets[0].path,
            std::path::PathBuf::from("/mnt/f/Testdata.mdf")
        );
        assert_eq!(s.targets[0].size, Some(200 << 30));
        assert!(p.latency);
        assert_eq!(p.thread_count, 16);
        let (p, _) = plan_of("-c20G -b4k -t2 -h -L -w100 -d60 h:Testdata.ldf").unwrap();
        assert_eq!(p.spec.rw, RwMode::Write);
        assert_eq!(p.spec.seq_layout, SeqLayout::Stride(0));
        assert_eq!(p.spec.qd, 2);
    }

    #[test]
    fn cache_modes() {
        let c = |s: &str| plan_of(&format!("{s} /tmp/x")).unwrap().0.spec.cache;
        assert_eq!(c(""), CacheMode::Buffered);
        assert_eq!(c("-Sb"), CacheMode::Buffered);
        assert_eq!(c("-S"), CacheMode::Direct);
        assert_eq!(c("-Su"), CacheMode::Direct);
        assert_eq!(c("-Sw"), CacheMode::Writethrough);
        assert_eq!(c("-Suw"), CacheMode::DirectWritethrough);
        assert_eq!(c("-Sh"), CacheMode::DirectWritethrough);
        let (p, _) = plan_of("-Sm /tmp/x").unwrap();
        assert_eq!(
            (p.spec.engine, p.spec.cache),
            (EngineKind::Mmap, CacheMode::Buffered)
        );
    }

    #[test]
    fn options_map_and_refusals_name_the_option() {
        let (p, w) = plan_of("-F4 -b8K -r4K -B1M -f9M -T64K -Z -z7 -a0,1 /tmp/a /tmp/b").unwrap();
        assert_eq!(p.spec.threads, 4);
        assert_eq!(p.thread_count, 4);
        assert_eq!(p.spec.align, Some(4096));
        assert_eq!(p.spec.targets[0].offset, 1 << 20);
        assert_eq!(p.spec.targets[0].length, Some(8 << 20));
        assert_eq!(p.spec.seq_layout, SeqLayout::Stride(65536));
        assert_eq!(p.spec.fill, FillMode::Zero);
        assert_eq!(p.spec.seed, 7);
        assert_eq!(p.spec.cpus, vec![0, 1]);
        assert_eq!(w.0.len(), 1, "{:?}", w.0);
        let (p, _) = plan_of("-n /tmp/a").unwrap();
        assert!(p.spec.cpus.is_empty());
        for (cmd, opt) in [
            ("-g0 /tmp/a", "-g0"),
            ("-gx /tmp/a", "-gx"),
            ("-rs101 /tmp/a", "-rs101"),
            ("-rs50 -s /tmp/a", "-rs/-s"),
            ("-i0 -j5 /tmp/a", "-i0"),
            ("-s8K -b4K /tmp/a", "-s"),
            ("-Q /tmp/a", "-Q"),
            ("-jx /tmp/a", "-jx"),
            ("-r -s /tmp/a", "-r/-s"),
            ("-t2 -F2 /tmp/a", "-t/-F"),
            ("-Rhtml /tmp/a", "-Rhtml"),
        ] {
            let e = plan_of(cmd).unwrap_err().to_string();
            assert!(e.contains(&format!("'{opt}'")), "{cmd}: {e}");
        }
        // Rate limits, bursts, mixed and interlocked patterns.
        let (p, w) = plan_of("-g100 -t2 -b8K /tmp/a").unwrap();
        assert_eq!(p.spec.rate_bytes, Some(100_000));
        assert_eq!(p.spec.rate_interval_ns(), 81_920_000);
        assert!(w.0.is_empty());
        let (p, _) = plan_of("-g500i /tmp/a").unwrap();
        assert_eq!(p.spec.rate_iops, Some(500));
        assert_eq!(p.spec.rate_interval_ns(), 2_000_000);
        let (p, _) = plan_of("-i10 -j5 /tmp/a").unwrap();
        assert_eq!((p.spec.burst, p.spec.think), (10, Duration::from_millis(5)));
        let (p, _) = plan_of("-j5 /tmp/a").unwrap();
        assert_eq!(p.spec.burst, 1, "-j alone thinks after every I/O");
        let (p, w) = plan_of("-i10 /tmp/a").unwrap();
        assert_eq!(p.spec.burst, 0);
        assert_eq!(w.0.len(), 1, "{:?}", w.0);
        let (p, _) = plan_of("-rs30 -r4K -b8K /tmp/a").unwrap();
        assert_eq!(p.spec.random_pct, Some(30));
        assert!(p.spec.rw.is_random());
        assert_eq!(p.spec.align, Some(4096));
        let (p, _) = plan_of("-r4K -rs100 /tmp/a").unwrap();
        assert_eq!((p.spec.random_pct, p.spec.align), (None, Some(4096)));
        let (p, _) = plan_of("-si -t4 /tmp/a").unwrap();
        assert_eq!(p.spec.seq_layout, SeqLayout::Shared);
        assert_eq!(p.spec.threads, 4);
        let (p, w) = plan_of("-x -v -l -P10 -I1 -ft -C5 /tmp/a").unwrap();
        assert_eq!(w.0.len(), 5, "{:?}", w.0);
        assert!(p.args.verbose);
        assert!(profile_text(&p).contains("\tusing verbose mode\n"));
        assert!(profile_text(&p).contains("\t\tIO priority: very low\n"));
        let e = plan_of("-n -a0,1 /tmp/a").unwrap_err().to_string();
        assert!(
            e.contains("'-n/-a'") && e.contains("cannot be used together"),
            "{e}"
        );
        assert!(plan_of("-I4 /tmp/a").is_err());
        let (p, _) = plan_of("-Sm -Zr -w50 /tmp/a").unwrap();
        let t = profile_text(&p);
        assert!(t.contains("\t\tmemory mapped I/O enabled\n"), "{t}");
        assert!(
            t.contains("\t  WARNING: this increases the CPU cost of issuing writes"),
            "{t}"
        );
        let x = profile_only(&Plan {
            args: DiskspdArgs {
                format: Format::Xml,
                ..p.args.clone()
            },
            ..p.clone()
        });
        assert!(x.contains("<MemoryMappedIo>true</MemoryMappedIo>"), "{x}");
        assert!(x.contains("<Pattern>sequential</Pattern>"), "{x}");
        assert!(
            !x.contains("<DisableOSCache>") && !x.contains("<WriteThrough>"),
            "{x}"
        );
        // A drive letter: on Linux it must be mapped; on Windows it is the drive.
        let g = plan_of("g:x");
        if crate::platform::IS_WINDOWS {
            let (p, _) = g.unwrap();
            assert_eq!(p.spec.targets[0].path, std::path::Path::new("g:x"));
        } else {
            assert!(g.unwrap_err().to_string().contains("--drive G="));
        }
    }
}
