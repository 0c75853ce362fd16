//! `iosim crash write --profile NAME|FILE`: a workload profile's writes as
//! the crash writer's mix (docs/crash.md).
//!
//! Each `[[workload]]` that writes becomes one kind of crash write:
//!
//! | the workload | crash write |
//! |---|---|
//! | `role = "log"` | `log`: sequential O_DSYNC appends |
//! | a write-through cache (`direct-writethrough`, `writethrough`) | `dsync`: O_DSYNC page writes |
//! | `role = "backup"`, not write-through | `fsync`: buffered writes, then fsync |
//! | anything else (`buffered`, `direct`) | `fdatasync`: buffered writes, then fdatasync |
//!
//! weighted by the writes it keeps in flight: threads x queue depth x its
//! share of writes. Reads, block sizes and phases do not carry over: the
//! writer only writes, in 8 KiB pages, all kinds at once.

use super::writer::Mix;
use crate::profile::{Profile, ProfileWorkload};
use crate::verdict::Role;

/// A profile turned into a mix, with how each workload was mapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileMix {
    /// The mix the writer runs.
    pub mix: Mix,
    /// One line per workload: what it became and its weight.
    pub mapping: Vec<String>,
}

/// The crash write kind of a workload (index into dsync, fdatasync, fsync, log).
fn kind_of(w: &ProfileWorkload) -> usize {
    if w.role == Role::Log {
        3
    } else if w.cache.is_sync() {
        0
    } else if w.role == Role::Backup {
        2
    } else {
        1
    }
}

const KINDS: [&str; 4] = ["dsync", "fdatasync", "fsync", "log"];

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The mix of `p`'s writing workloads. Fails when none writes.
pub fn mix_of(p: &Profile) -> anyhow::Result<ProfileMix> {
    let mut weights = [0u64; 4];
    let mut mapping = Vec::new();
    for w in &p.workloads {
        let pct = w.write_pct.unwrap_or_else(|| w.rw.default_write_pct());
        let weight = u64::from(w.threads.max(1)) * u64::from(w.qd.max(1)) * u64::from(pct);
        if weight == 0 {
            mapping.push(format!("{}: {} only reads: not used", w.name, w.rw.name()));
            continue;
        }
        let k = kind_of(w);
        weights[k] += weight;
        mapping.push(format!(
            "{}: {} {}% writes, {} thread(s) x QD {}, {} {} -> {} (weight {weight})",
            w.name,
            w.rw.name(),
            pct,
            w.threads,
            w.qd,
            w.role.name(),
            w.cache.name(),
            KINDS[k]
        ));
    }
    let g = weights.iter().fold(0, |g, &w| gcd(g, w));
    if g == 0 {
        anyhow::bail!(crate::Error::BadWorkload(format!(
            "profile '{}' has no workload that writes, so there is nothing to acknowledge: use a profile with writes (oltp, oltp-with-log, log-writer, checkpoint, ...) or --mix",
            p.name
        )));
    }
    let w = weights.map(|x| u32::try_from(x / g).unwrap_or(u32::MAX));
    Ok(ProfileMix {
        mix: Mix {
            dsync: w[0],
            fdatasync: w[1],
            fsync: w[2],
            log: w[3],
        },
        mapping,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_map_to_write_through_pages_and_log_appends() {
        let m = mix_of(&Profile::load("oltp-with-log").unwrap()).unwrap();
        // data: 2 threads x QD 8 x 30% = 480, log: 1 x 1 x 100% = 100.
        assert_eq!(m.mix.to_string(), "dsync=24,fdatasync=0,fsync=0,log=5");
        assert_eq!(m.mapping.len(), 2);
        assert!(m.mapping[0].contains("-> dsync (weight 480)"), "{:?}", m);
        assert!(m.mapping[1].contains("-> log (weight 100)"), "{:?}", m);
        let m = mix_of(&Profile::load("log-writer").unwrap()).unwrap();
        assert_eq!(m.mix.to_string(), "dsync=0,fdatasync=0,fsync=0,log=1");
    }

    #[test]
    fn buffered_workloads_sync_and_readers_are_left_out() {
        let p = Profile::parse(
            r#"
name = "mixed"
description = "d"
source = "s"
[[workload]]
name = "scan"
target = "data"
role = "data"
rw = "read"
bs = "64K"
qd = 4
[[workload]]
name = "etl"
target = "data"
role = "data"
rw = "randwrite"
bs = "8K"
qd = 2
cache = "buffered"
[[workload]]
name = "dump"
target = "backup"
role = "backup"
rw = "write"
bs = "1M"
cache = "direct"
"#,
            "test",
        )
        .unwrap();
        let m = mix_of(&p).unwrap();
        assert_eq!(m.mix.to_string(), "dsync=0,fdatasync=2,fsync=1,log=0");
        assert!(m.mapping[0].contains("only reads"), "{:?}", m.mapping);
        let e = mix_of(&Profile::load("read-ahead").unwrap()).unwrap_err();
        assert!(e.to_string().contains("no workload that writes"), "{e}");
    }
}
