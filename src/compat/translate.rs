//! `iosim translate sqlio|diskspd|fio ...`: the equivalent native `iosim run` command.
//!
//! The first line on stdout is the command; what the native command line
//! cannot express (per-file thread counts, CPU masks, DiskSpd's report
//! options) follows as `# note:` comment lines, so the output can be pasted
//! into a shell script as is.

use super::{shell_quote, Warnings};
use crate::units::{format_duration_arg, format_size_arg};
use crate::workload::{EngineKind, FillMode, SeqLayout, WorkloadSpec};

/// The `iosim run` words for `spec`; `sizes` are the creation sizes per target.
/// Returns the command and the notes on what it cannot express.
pub fn run_command(spec: &WorkloadSpec, sizes: &[Option<u64>]) -> (String, Vec<String>) {
    let mut w: Vec<String> = vec!["iosim".into(), "run".into()];
    let mut notes = Vec::new();
    core_words(spec, &mut w, &mut notes);
    region_words(spec, sizes, &mut w, &mut notes);
    pattern_words(spec, &mut w);
    control_words(spec, &mut w, &mut notes);
    shape_words(spec, &mut w);
    (w.join(" "), notes)
}

/// Targets, direction, block size, threads, queue depth, time, cache,
/// engine and seed.
fn core_words(spec: &WorkloadSpec, w: &mut Vec<String>, notes: &mut Vec<String>) {
    for t in &spec.targets {
        w.push(shell_quote(&t.path.display().to_string()));
    }
    w.push("--rw".into());
    w.push(spec.rw.name().into());
    if spec.rw.is_mixed() {
        w.push("--write-pct".into());
        w.push(spec.write_pct.to_string());
    }
    w.push("--bs".into());
    w.push(format_size_arg(spec.bs));
    if let Some(a) = spec.align {
        w.push("--align".into());
        w.push(format_size_arg(a));
    }
    let threads: Vec<u32> = (0..spec.targets.len())
        .map(|i| spec.threads_for(i))
        .collect();
    let t0 = threads.first().copied().unwrap_or(spec.threads);
    if threads.iter().any(|&t| t != t0) {
        notes.push(format!(
            "threads differ per file ({threads:?}): run one iosim run per file, or use the first file's {t0} for all"
        ));
    }
    w.push("--threads".into());
    w.push(t0.to_string());
    w.push("--qd".into());
    w.push(spec.qd.to_string());
    w.push("--duration".into());
    w.push(format_duration_arg(spec.duration));
    if !spec.warmup.is_zero() {
        w.push("--warmup".into());
        w.push(format_duration_arg(spec.warmup));
    }
    w.push("--cache".into());
    w.push(spec.cache.name().into());
    if spec.engine != EngineKind::Auto {
        w.push("--engine".into());
        w.push(spec.engine.name().into());
    }
    if spec.seed != WorkloadSpec::default().seed {
        w.push("--seed".into());
        w.push(spec.seed.to_string());
    }
}

/// The first of `v`, with a note when the files differ in `what`.
fn uniform(v: Vec<String>, what: &str, notes: &mut Vec<String>) -> Option<String> {
    let first = v.first().cloned()?;
    if v.iter().any(|x| *x != first) {
        notes.push(format!(
            "{what} differs per file ({v:?}): the first file's is used"
        ));
    }
    Some(first)
}

/// The creation size, offset and region length (`sizes` per target).
fn region_words(
    spec: &WorkloadSpec,
    sizes: &[Option<u64>],
    w: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let sz: Vec<String> = sizes
        .iter()
        .map(|s| s.map(format_size_arg).unwrap_or_default())
        .collect();
    if let Some(s) = uniform(sz, "the creation size", notes).filter(|s| !s.is_empty()) {
        w.push("--size".into());
        w.push(s);
    }
    let offs: Vec<String> = spec
        .targets
        .iter()
        .map(|t| format_size_arg(t.offset))
        .collect();
    if let Some(o) = uniform(offs, "the offset", notes).filter(|o| o != "0") {
        w.push("--offset".into());
        w.push(o);
    }
    let lens: Vec<String> = spec
        .targets
        .iter()
        .map(|t| t.length.map(format_size_arg).unwrap_or_default())
        .collect();
    if let Some(l) = uniform(lens, "the region length", notes).filter(|l| !l.is_empty()) {
        w.push("--length".into());
        w.push(l);
    }
}

/// Fill, sequential layout, random share, rate limits and think time.
fn pattern_words(spec: &WorkloadSpec, w: &mut Vec<String>) {
    match spec.fill {
        FillMode::Random => {}
        f => {
            w.push("--fill".into());
            w.push(f.name());
        }
    }
    match spec.seq_layout {
        SeqLayout::Stride(s) => {
            w.push("--thread-stride".into());
            w.push(format_size_arg(s));
        }
        SeqLayout::Shared => w.push("--shared-offset".into()),
        SeqLayout::Stripe(st) => {
            w.push("--stripe".into());
            w.push(format!("{}:{}", st.factor, st.ios_per_run));
        }
        SeqLayout::Split => {}
    }
    if let Some(p) = spec.random_pct {
        w.push("--random-pct".into());
        w.push(p.to_string());
    }
    if let Some(n) = spec.rate_iops {
        w.push("--rate-iops".into());
        w.push(n.to_string());
    }
    if let Some(b) = spec.rate_bytes {
        w.push("--rate".into());
        w.push(format_size_arg(b));
    }
    if !spec.think.is_zero() {
        if spec.burst > 1 {
            w.push("--burst".into());
            w.push(spec.burst.to_string());
        }
        w.push("--think".into());
        w.push(format_duration_arg(spec.think));
    }
    if !spec.burst_every.is_zero() {
        w.push("--burst".into());
        w.push(spec.burst.to_string());
        w.push("--burst-every".into());
        w.push(format_duration_arg(spec.burst_every));
        if let Some(r) = spec.burst_rate_iops {
            w.push("--burst-rate-iops".into());
            w.push(r.to_string());
        }
        if spec.burst_writes {
            w.push("--burst-writes".into());
        }
    }
}

/// Destroy permission, CPUs, the I/O limit, flushes and the sync method.
fn control_words(spec: &WorkloadSpec, w: &mut Vec<String>, notes: &mut Vec<String>) {
    if spec.allow_destroy {
        w.push("--allow-destroy".into());
    }
    if !spec.cpus.is_empty() {
        w.push("--cpus".into());
        w.push(
            spec.cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    if spec.targets.iter().any(|t| !t.cpus.is_empty()) {
        notes.push(
            "CPU masks per file (threads free to run on any CPU of the mask) have no native option; --cpus pins each thread to one CPU instead".into(),
        );
    }
    if let Some(n) = spec.io_limit {
        w.push("--number-ios".into());
        w.push(n.to_string());
    }
    if let Some(n) = spec.passes {
        w.push("--passes".into());
        w.push(n.to_string());
    }
    if let Some(f) = spec.flush {
        w.push(format!("--{}", f.kind.name()));
        w.push(f.every.to_string());
    }
    if let Some(m) = spec.sync_method {
        w.push("--sync-method".into());
        w.push(m.name().into());
    }
    if let Some(n) = spec.sync_file_range {
        w.push("--sync-file-range".into());
        w.push(n.to_string());
    }
    if spec.group_commit {
        w.push("--group-commit".into());
    }
    if spec.flush_barrier {
        w.push("--flush-barrier".into());
    }
    if let Some(d) = spec.doublewrite {
        w.push("--doublewrite".into());
        w.push(crate::units::format_size_arg(d));
    }
}

/// The workload-shape options (docs/workloads.md) of `spec`.
fn shape_words(spec: &WorkloadSpec, w: &mut Vec<String>) {
    let per_target: Vec<_> = spec.targets.iter().filter_map(|t| t.distribution).collect();
    if !per_target.is_empty() && per_target.len() == spec.targets.len() {
        for d in per_target {
            w.push("--distribution".into());
            w.push(d.to_string());
        }
    } else if !spec.shape.distribution.is_uniform() {
        w.push("--distribution".into());
        w.push(spec.shape.distribution.to_string());
    }
    if spec.shape.placement != crate::workload::Placement::default() {
        w.push("--hot-placement".into());
        w.push("start".into());
    }
    if let Some(b) = &spec.shape.bssplit {
        w.push("--bssplit".into());
        w.push(shell_quote(&b.to_string()));
    }
    if spec.shape.dedupe_pct > 0 {
        w.push("--dedupe-pct".into());
        w.push(spec.shape.dedupe_pct.to_string());
    }
    if let Some(t) = &spec.shape.tail_rewrite {
        w.push("--tail-rewrite".into());
        w.push(t.arg());
    }
    if let Some(c) = &spec.shape.db_cache {
        w.push("--db-cache".into());
        w.push(c.arg());
    }
}

/// `iosim translate sqlio|diskspd|fio ...`: writes the command to `out`.
pub fn main(args: &[String], out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let (tool, rest) = match args.split_first() {
        Some((t, r)) => (t.as_str(), r),
        None => anyhow::bail!(crate::Error::BadWorkload(
            "name the tool: iosim translate sqlio ..., iosim translate diskspd ... or iosim translate fio ...".into()
        )),
    };
    let mut w = Warnings::default();
    let (cmd, mut notes) = match tool {
        "sqlio" => {
            let (p, ext) = super::sqlio::plan_from_args(rest, &mut w)?;
            // iosim sqlio creates a missing file at --size (default 256 MiB); say so.
            let sizes: Vec<Option<u64>> = p
                .files
                .iter()
                .map(|f| {
                    f.size.or_else(|| {
                        (!f.path.exists())
                            .then(|| ext.size.unwrap_or(super::sqlio::DEFAULT_CREATE_SIZE))
                    })
                })
                .collect();
            let (cmd, mut n) = run_command(&p.spec, &sizes);
            n.push("SQLIO's output layout: keep using iosim sqlio, or read --output json".into());
            (cmd, n)
        }
        "diskspd" => {
            let (p, _) = super::diskspd::plan_from_args(rest, &mut w)?;
            let sizes: Vec<Option<u64>> = p.spec.targets.iter().map(|t| t.size).collect();
            let (cmd, mut n) = run_command(&p.spec, &sizes);
            if p.latency {
                n.push("-L: iosim always measures latency".into());
            }
            (cmd, n)
        }
        "fio" => {
            let t = super::fio::translate(rest)?;
            let sizes: Vec<Option<u64>> = t.spec.targets.iter().map(|_| t.size).collect();
            let (cmd, mut n) = run_command(&t.spec, &sizes);
            n.extend(t.notes);
            (cmd, n)
        }
        _ => anyhow::bail!(crate::Error::BadWorkload(format!(
            "cannot translate '{tool}': use iosim translate sqlio ..., iosim translate diskspd ... or iosim translate fio ..."
        ))),
    };
    for line in &w.0 {
        notes.push(format!("warning {line}"));
    }
    writeln!(out, "{cmd}")?;
    for n in notes {
        writeln!(out, "# note: {n}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{CacheMode, RwMode, TargetSpec};

    #[test]
    fn a_spec_becomes_a_run_command() {
        let spec = WorkloadSpec {
            targets: vec![TargetSpec::new("/mnt/x/a b.dat", None)],
            rw: RwMode::Randread,
            bs: 8192,
            threads: 8,
            qd: 16,
            duration: std::time::Duration::from_secs(10),
            cache: CacheMode::DirectWritethrough,
            fill: FillMode::Zero,
            ..WorkloadSpec::default()
        };
        let (c, n) = run_command(&spec, &[Some(100 << 20)]);
        assert_eq!(c, "iosim run '/mnt/x/a b.dat' --rw randread --bs 8K --threads 8 --qd 16 --duration 10s --cache direct-writethrough --size 100M --fill zero");
        assert!(n.is_empty());
        // The command parses back to the same workload.
        use clap::Parser as _;
        let words = [
            "iosim",
            "run",
            "/mnt/x/a b.dat",
            "--rw",
            "randread",
            "--bs",
            "8K",
            "--threads",
            "8",
            "--qd",
            "16",
            "--duration",
            "10s",
            "--cache",
            "direct-writethrough",
            "--fill",
            "zero",
        ];
        let cli = crate::cli::Cli::try_parse_from(words).unwrap();
        let Some(crate::cli::Command::Run(r)) = cli.command else {
            panic!()
        };
        let back = r.to_spec().unwrap();
        assert_eq!(back.rw, spec.rw);
        assert_eq!(back.bs, spec.bs);
        assert_eq!(back.qd, spec.qd);
        assert_eq!(back.cache, spec.cache);
        assert_eq!(back.fill, spec.fill);
    }

    #[test]
    fn pacing_and_mixed_patterns_round_trip() {
        use clap::Parser as _;
        for spec in [
            WorkloadSpec {
                targets: vec![TargetSpec::new("/mnt/x/t.dat", None)],
                rw: RwMode::Randrw,
                write_pct: 30,
                rate_bytes: Some(100_000),
                burst: 10,
                think: std::time::Duration::from_millis(5),
                random_pct: Some(20),
                ..WorkloadSpec::default()
            },
            WorkloadSpec {
                targets: vec![TargetSpec::new("/mnt/x/t.dat", None)],
                rw: RwMode::Read,
                threads: 4,
                seq_layout: SeqLayout::Shared,
                rate_iops: Some(500),
                burst: 1,
                think: std::time::Duration::from_millis(2),
                ..WorkloadSpec::default()
            },
            WorkloadSpec {
                targets: vec![TargetSpec::new("/mnt/x/t.dat", None)],
                rw: RwMode::Randrw,
                rate_iops: Some(200),
                burst: 40,
                burst_every: std::time::Duration::from_secs(2),
                burst_rate_iops: Some(4000),
                burst_writes: true,
                write_pct: 60,
                ..WorkloadSpec::default()
            },
        ] {
            let (c, n) = run_command(&spec, &[None]);
            assert!(n.is_empty(), "{n:?}");
            let cli = crate::cli::Cli::try_parse_from(c.split(' ')).unwrap();
            let Some(crate::cli::Command::Run(r)) = cli.command else {
                panic!("{c}")
            };
            let back = r.to_spec().unwrap();
            assert_eq!(back.rate_iops, spec.rate_iops, "{c}");
            assert_eq!(back.rate_bytes, spec.rate_bytes, "{c}");
            assert_eq!(back.rate_interval_ns(), spec.rate_interval_ns(), "{c}");
            assert_eq!(back.burst.max(1), spec.burst.max(1), "{c}");
            assert_eq!(back.think, spec.think, "{c}");
            assert_eq!(back.burst_every, spec.burst_every, "{c}");
            assert_eq!(back.burst_rate_iops, spec.burst_rate_iops, "{c}");
            assert_eq!(back.burst_writes, spec.burst_writes, "{c}");
            assert_eq!(back.random_pct, spec.random_pct, "{c}");
            assert_eq!(back.seq_layout, spec.seq_layout, "{c}");
        }
    }

    #[test]
    fn workload_shape_round_trips() {
        use clap::Parser as _;
        let spec = WorkloadSpec {
            targets: vec![TargetSpec::new("/mnt/x/t.dat", None)],
            rw: RwMode::Randrw,
            write_pct: 30,
            fill: FillMode::Compressible(50),
            shape: crate::workload::Shape {
                distribution: "hotcold:10/90".parse().unwrap(),
                placement: crate::workload::Placement::Start,
                bssplit: Some("8K/70:64K/30,64K/100".parse().unwrap()),
                dedupe_pct: 20,
                steady_state: None,
                tail_rewrite: None,
                db_cache: Some(crate::workload::DbCache::Share(0.3)),
            },
            ..WorkloadSpec::default()
        };
        let (c, n) = run_command(&spec, &[None]);
        assert!(n.is_empty(), "{n:?}");
        assert!(c.contains("--bssplit 8K/70:64K/30,64K/100"), "{c}");
        assert!(c.contains("--db-cache 30%"), "{c}");
        let cli = crate::cli::Cli::try_parse_from(c.split(' ')).unwrap();
        let Some(crate::cli::Command::Run(r)) = cli.command else {
            panic!("{c}")
        };
        let back = r.to_spec().unwrap();
        assert_eq!(back.shape, spec.shape, "{c}");
        assert_eq!(back.fill, spec.fill, "{c}");
    }

    #[test]
    fn what_cannot_be_expressed_is_noted() {
        let mut a = TargetSpec::new("/a", None);
        a.threads = Some(1);
        let mut b = TargetSpec::new("/b", None);
        b.threads = Some(2);
        b.cpus = vec![1];
        let spec = WorkloadSpec {
            targets: vec![a, b],
            ..WorkloadSpec::default()
        };
        let (_, n) = run_command(&spec, &[None, None]);
        assert_eq!(n.len(), 2, "{n:?}");
    }
}
