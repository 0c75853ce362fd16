//! The plan: SQLIO's options and parameter files as iosim's files and workload.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::parse::{parse, parse_param_file, Buffering, Pattern, SqlioArgs, MAX_FILES, TOOL};
use crate::compat::{bad_option, Extensions, Warnings};
use crate::workload::{EngineKind, FillMode, RwMode, SeqLayout, Stripe, TargetSpec, WorkloadSpec};

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
    let files = file_plans(args, ext, w, read)?;
    let (spec_cpus, all_mask_cpus) = affinity(args);
    if let Some(st) = stripe {
        check_stripe(st, &files)?;
    }
    let offset = args.start_blocks * bs;
    let targets = files
        .iter()
        .map(|f| {
            let mask_cpus = f
                .mask
                .as_deref()
                .and_then(crate::compat::mask_cpus)
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
        passes: None,
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

/// The files of the run, in SQLIO's order (parameter files' lines, named
/// files on each -d drive, -R raw drives), each with its first thread number.
fn file_plans(
    args: &SqlioArgs,
    ext: &Extensions,
    w: &mut Warnings,
    read: &dyn Fn(&str) -> anyhow::Result<String>,
) -> anyhow::Result<Vec<FilePlan>> {
    // A parameter file's thread column wins over -t, as in SQLIO (a published
    // run of `-t2 -Fparam.txt` reports the file's "4 threads").
    let file =
        |path: PathBuf, threads: Option<u32>, mask: Option<String>, size: Option<u64>| FilePlan {
            path,
            threads: threads.or(args.threads).unwrap_or(1),
            first_thread: 0,
            mask,
            size,
        };
    let mut files: Vec<FilePlan> = Vec::new();
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
            files.push(file(
                path,
                Some(l.threads),
                Some(l.mask),
                l.size_mb.map(|m| m << 20),
            ));
        }
    }
    for path in named_paths(args, ext)? {
        files.push(file(path, None, None, None));
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
    Ok(files)
}

/// The paths of the named files (testfile.dat when nothing names a file),
/// on each -d drive, then the -R raw drives.
fn named_paths(args: &SqlioArgs, ext: &Extensions) -> anyhow::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let mut names = args.files.clone();
    if names.is_empty() && args.param_files.is_empty() && args.raw.is_empty() {
        names.push("testfile.dat".to_string());
    }
    if args.drives.is_empty() {
        for n in &names {
            paths.push(ext.resolve(n)?);
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
                paths.push(ext.drive(*d)?.join(rel.trim_start_matches('/')));
            }
        }
    }
    for r in &args.raw {
        paths.push(match r.parse::<u32>() {
            Ok(n) => ext.disk(n)?,
            Err(_) => ext.drive(r.chars().next().unwrap_or('?'))?,
        });
    }
    Ok(paths)
}

/// Affinity: (the CPUs the threads go round-robin on, from -p or -aR; the
/// CPUs of a plain -a mask, for files without a mask of their own).
fn affinity(args: &SqlioArgs) -> (Vec<usize>, Vec<usize>) {
    let mut spec_cpus = Vec::new();
    let mut all_mask_cpus = Vec::new();
    if let Some((false, cpu)) = args.cpu {
        spec_cpus = vec![cpu];
    }
    if let Some((rr, ideal, m)) = &args.mask {
        let (_, cpus) = crate::compat::mask_cpus(m).unwrap_or_default();
        if !ideal {
            if *rr {
                spec_cpus = cpus;
            } else {
                all_mask_cpus = cpus;
            }
        }
    }
    (spec_cpus, all_mask_cpus)
}

/// The readme: the threads split a row's blocks, so there must be at
/// least as many blocks in a row (-f) as threads on a file.
fn check_stripe(st: Stripe, files: &[FilePlan]) -> anyhow::Result<()> {
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
    Ok(())
}

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
