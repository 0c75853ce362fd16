//! Noisy neighbours measured (`iosim run --neighbour SPEC`): the foreground workload alone, then the foreground
//! and a background workload together in one measured window, and how much
//! the foreground's throughput and latency changed.
//!
//! Both phases are runs of the one runner ([`crate::runner::run_joint`]: the
//! second is two workloads in one window, as a profile phase is), each as
//! long as the foreground's `--duration`. The SPEC is a profile workload's
//! keys written `key=value,...` (`rw=write,bs=1m,qd=8`), read by the same
//! code as a profile's `[[workload]]` ([`crate::profile::ProfileWorkload`]),
//! with two keys of its own: `target=PATH` (default: a file next to the
//! foreground's first target, created and removed by iosim) and `size=SIZE`
//! (to create it). The result type is [`crate::workload::neighbour`].

use std::path::{Path, PathBuf};

use crate::profile::ProfileWorkload;
use crate::runner::{Joint, RunOptions};
use crate::workload::neighbour::{Background, Change, Figures, NeighbourReport};
use crate::workload::{CacheMode, WorkloadSpec};

/// A background workload as `--neighbour` gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct NeighbourSpec {
    /// The SPEC as given.
    pub text: String,
    /// Its shape, read as a profile's workload.
    pub workload: ProfileWorkload,
    /// `cache=` was given (otherwise the neighbour uses direct I/O).
    pub cache_given: bool,
    /// `target=PATH`.
    pub target: Option<PathBuf>,
    /// `size=SIZE`, to create its target.
    pub size: Option<u64>,
}

/// Keys a profile workload has that mean nothing for a neighbour.
const NOT_HERE: [&str; 3] = ["name", "role", "phase"];

/// Keys whose values are sizes (strings even when all digits).
const SIZE_KEYS: [&str; 2] = ["bs", "align"];

fn bad(msg: String) -> crate::Error {
    crate::Error::BadWorkload(msg)
}

impl NeighbourSpec {
    /// Reads `rw=write,bs=1m,qd=8[,target=PATH][,size=SIZE]`.
    pub fn parse(text: &str) -> Result<NeighbourSpec, crate::Error> {
        const EXAMPLE: &str = "e.g. --neighbour rw=write,bs=1m,qd=8 or --neighbour rw=randread,bs=8k,qd=32,target=/mnt/other/n.dat,size=1g";
        let mut table = toml::Table::new();
        let mut target = None;
        let mut size = None;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(bad(format!(
                    "--neighbour '{text}': '{part}' is not KEY=VALUE; {EXAMPLE}"
                )));
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            if value.is_empty() {
                return Err(bad(format!(
                    "--neighbour '{text}': {key} has no value; {EXAMPLE}"
                )));
            }
            match key.as_str() {
                "target" => target = Some(PathBuf::from(value)),
                "size" => {
                    size = Some(crate::units::parse_size(value).map_err(|e| {
                        bad(format!("--neighbour '{text}': size={value}: {e}"))
                    })?)
                }
                k if NOT_HERE.contains(&k) => {
                    return Err(bad(format!(
                        "--neighbour '{text}': {k} is a profile's key that a neighbour does not take; use the workload's keys (rw, bs, qd, threads, write_pct, cache, rate_iops...), target and size"
                    )))
                }
                k => {
                    let v = match value.parse::<i64>() {
                        Ok(n) if !SIZE_KEYS.contains(&k) => toml::Value::Integer(n),
                        _ => toml::Value::String(value.to_string()),
                    };
                    if table.insert(k.to_string(), v).is_some() {
                        return Err(bad(format!(
                            "--neighbour '{text}': {k} is given twice; give it once"
                        )));
                    }
                }
            }
        }
        if !table.contains_key("rw") {
            return Err(bad(format!(
                "--neighbour '{text}': say what the neighbour does with rw= (read, write, randread, randwrite, readwrite, randrw); {EXAMPLE}"
            )));
        }
        let cache_given = table.contains_key("cache");
        table.entry("bs").or_insert_with(|| "4k".into());
        table.insert("name".into(), "neighbour".into());
        table.insert("target".into(), "neighbour".into());
        table.insert("role".into(), "data".into());
        let workload: ProfileWorkload = toml::Value::Table(table).try_into().map_err(|e| {
            bad(format!(
                "--neighbour '{text}': {}; the keys are a profile workload's (docs/profiles.md) plus target and size",
                e.to_string().trim()
            ))
        })?;
        // Sizes, mixes and ranges, checked as a profile's are.
        let mut check = workload.spec(&WorkloadSpec::default())?;
        check.targets = vec![crate::workload::TargetSpec::new("/neighbour-check", None)];
        check
            .validate()
            .map_err(|e| bad(format!("--neighbour '{text}': {e}")))?;
        room_for_a_block(text, size, check.bs)?;
        Ok(NeighbourSpec {
            text: text.to_string(),
            workload,
            cache_given,
            target,
            size,
        })
    }

    /// The background workload beside `fg`: its shape from the SPEC, its
    /// window, engine, fill and `--allow-destroy` from the foreground, its
    /// own seed; on its own target (see the module doc).
    pub fn background(&self, fg: &WorkloadSpec) -> Result<WorkloadSpec, crate::Error> {
        let base = WorkloadSpec {
            duration: fg.duration,
            warmup: fg.warmup,
            engine: fg.engine,
            seed: fg.seed.wrapping_add(1),
            fill: fg.fill,
            allow_destroy: fg.allow_destroy,
            submit_batch: fg.submit_batch,
            ..WorkloadSpec::default()
        };
        let mut spec = self.workload.spec(&base)?;
        if !self.cache_given {
            spec.cache = CacheMode::Direct;
        }
        let first = fg.targets.first().ok_or_else(|| {
            bad("--neighbour needs the foreground's target: give a path to run on".into())
        })?;
        let path = match &self.target {
            Some(p) => p.clone(),
            None => {
                if first.path.exists() && !first.path.is_file() {
                    return Err(bad(format!(
                        "--neighbour: '{}' is not a regular file, so iosim will not put the neighbour's file next to it: name the neighbour's target, e.g. --neighbour {},target=/mnt/other/neighbour.dat,size=1g",
                        first.path.display(),
                        self.text
                    )));
                }
                crate::profile::derived_path(&first.path, "neighbour")
            }
        };
        let size = self.size.or(first.size).or_else(|| {
            std::fs::metadata(&first.path)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len())
        });
        room_for_a_block(&self.text, size, spec.bs)?;
        spec.targets = vec![crate::workload::TargetSpec::new(path, size)];
        spec.validate()?;
        Ok(spec)
    }
}

/// The neighbour's file must hold one block: checked with the SPEC, before
/// the window alone is measured, and said in the SPEC's words (`size=`,
/// not the foreground's `--size`).
fn room_for_a_block(text: &str, size: Option<u64>, bs: u64) -> Result<(), crate::Error> {
    match size {
        Some(s) if s < bs => {
            let rest: Vec<&str> = text
                .split(',')
                .filter(|p| !p.trim().to_ascii_lowercase().starts_with("size="))
                .collect();
            Err(bad(format!(
                "--neighbour '{text}': the neighbour's file would hold {s} bytes, less than one block of {bs} bytes: give it room with size= in the SPEC (e.g. --neighbour {},size=1g), or a smaller bs=",
                rest.join(",")
            )))
        }
        _ => Ok(()),
    }
}

/// clap's value parser for `--neighbour`.
pub fn neighbour_arg(s: &str) -> Result<NeighbourSpec, String> {
    NeighbourSpec::parse(s).map_err(|e| e.to_string())
}

/// How `together` compares with `alone`.
pub fn change(alone: &Figures, together: &Figures) -> Change {
    let pct = |a: f64, t: f64| crate::comparison::rel_change(a, t);
    let x = |a: f64, t: f64| (a > 0.0).then(|| t / a);
    Change {
        iops_pct: pct(alone.iops, together.iops),
        mib_per_sec_pct: pct(alone.mib_per_sec, together.mib_per_sec),
        lat_p50_x: x(alone.lat_p50_us, together.lat_p50_us),
        lat_p99_x: x(alone.lat_p99_us, together.lat_p99_us),
        lat_p99_9_x: x(alone.lat_p99_9_us, together.lat_p99_9_us),
    }
}

/// Runs the study: `fg` alone, then `fg` beside the neighbour. Returns the
/// foreground's result alone (the run's own result), with the report in its
/// `neighbour` field. A neighbour's file iosim created is removed after.
pub fn run(fg: &WorkloadSpec, n: &NeighbourSpec, opts: &RunOptions) -> anyhow::Result<Joint> {
    if opts.verify.is_some() {
        return Err(bad(format!(
            "--neighbour {} runs two workloads at once, and --verify checks one: run them apart",
            n.text
        ))
        .into());
    }
    let bg = n.background(fg)?;
    let bg_path = bg.targets[0].path.clone();
    let mut alone = crate::runner::run_joint(std::slice::from_ref(fg), opts)?
        .pop()
        .expect("one result per workload");
    let existed = bg_path.exists();
    let together = crate::runner::run_joint(&[fg.clone(), bg.clone()], opts);
    let created = !existed && bg_path.exists();
    let removed = created && remove(&bg_path);
    let mut together = together?;
    let background = together.pop().expect("one result per workload").result;
    let with = together.pop().expect("one result per workload").result;
    let a = Figures::of(&alone.result.total);
    let t = Figures::of(&with.total);
    let r = &mut alone.result;
    r.notes.push(format!(
        "--neighbour: these figures are the workload alone; the neighbour section compares them with a second window of {:.0} s beside the neighbour",
        fg.duration.as_secs_f64()
    ));
    if created && !removed {
        r.notes.push(format!(
            "the neighbour's file {} could not be removed: remove it by hand",
            bg_path.display()
        ));
    }
    r.neighbour = Some(NeighbourReport {
        background: Background {
            spec: n.text.clone(),
            describe: bg.describe(),
            targets: background.targets.iter().map(|t| t.path.clone()).collect(),
            created: removed,
            figures: Figures::of(&background.total),
            errors: background.errors.count,
        },
        alone: a,
        together: t,
        change: change(&a, &t),
        together_errors: with.errors.count,
        interrupted: with.interrupted || background.interrupted,
    });
    r.interrupted |= with.interrupted;
    Ok(alone)
}

/// Removes a file the study created; true when it is gone.
fn remove(path: &Path) -> bool {
    crate::targetlock::remove_file(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::RwMode;

    #[test]
    fn a_spec_reads_as_a_profile_workload() {
        let n = NeighbourSpec::parse("rw=write,bs=1m,qd=8").unwrap();
        assert_eq!(n.workload.rw, RwMode::Write);
        assert_eq!(n.workload.bs, "1m");
        assert_eq!(n.workload.qd, 8);
        assert!(!n.cache_given && n.target.is_none());
        let n =
            NeighbourSpec::parse("rw=randrw,write_pct=30,bs=8k,threads=2,target=/tmp/x,size=1m")
                .unwrap();
        assert_eq!(n.workload.write_pct, Some(30));
        assert_eq!(n.target.as_deref(), Some(Path::new("/tmp/x")));
        assert_eq!(n.size, Some(1 << 20));
    }

    #[test]
    fn a_bad_spec_says_what_to_write() {
        let err = |s: &str| NeighbourSpec::parse(s).unwrap_err().to_string();
        assert!(err("bs=1m").contains("rw="), "{}", err("bs=1m"));
        assert!(err("rw=write,qd").contains("KEY=VALUE"));
        assert!(err("rw=write,colour=red").contains("unknown field"));
        assert!(err("rw=sideways").contains("--neighbour 'rw=sideways'"));
        assert!(err("rw=write,role=log").contains("does not take"));
        assert!(err("rw=write,qd=0").contains("--neighbour"));
        assert!(err("rw=write,qd=1,qd=2").contains("twice"));
    }

    #[test]
    fn a_neighbour_file_too_small_for_a_block_names_size_in_the_spec() {
        let e = NeighbourSpec::parse("rw=write,bs=64k,size=4k").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("size= in the SPEC"), "{msg}");
        assert!(!msg.contains("--size"), "{msg}");
        assert!(NeighbourSpec::parse("rw=write,bs=64k,size=64k").is_ok());
    }

    #[test]
    fn the_background_takes_the_window_and_its_own_target() {
        let fg = WorkloadSpec {
            targets: vec![crate::workload::TargetSpec::new(
                "/nonexistent-dir/db.dat",
                Some(1 << 20),
            )],
            duration: std::time::Duration::from_secs(3),
            allow_destroy: true,
            rate_iops: Some(10),
            ..WorkloadSpec::default()
        };
        let bg = NeighbourSpec::parse("rw=write,bs=64k,qd=4")
            .unwrap()
            .background(&fg)
            .unwrap();
        assert_eq!(bg.duration, fg.duration);
        assert_eq!(
            bg.targets[0].path,
            Path::new("/nonexistent-dir/db-neighbour.dat")
        );
        assert_eq!(bg.targets[0].size, Some(1 << 20));
        assert_eq!(bg.cache, CacheMode::Direct);
        assert!(bg.allow_destroy && bg.rate_iops.is_none());
        assert_ne!(bg.seed, fg.seed);
    }

    #[test]
    fn the_change_is_percent_for_throughput_and_a_factor_for_latency() {
        let f = |iops: f64, p99: f64| Figures {
            iops,
            lat_p99_us: p99,
            ..Figures::default()
        };
        let c = change(&f(1000.0, 100.0), &f(250.0, 1000.0));
        assert_eq!(c.iops_pct, Some(-75.0));
        assert_eq!(c.lat_p99_x, Some(10.0));
        assert_eq!(c.lat_p50_x, None);
    }
}
