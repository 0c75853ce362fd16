//! What every rank must agree on before a run (the iosim build and the
//! options), and an error every rank reaches alike. Below both the facade
//! (`mpi`) and the MPI world, which use it.

use serde::{Deserialize, Serialize};

use super::rank::RankInfo;

/// The version, build and options every rank must agree on before a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// iosim version and build profile.
    pub version: String,
    /// Hash of the parsed command line (placeholders unexpanded).
    pub options: u64,
}

impl Fingerprint {
    /// This build's fingerprint for the parsed options `options` (their `Debug` text).
    pub fn new(options: &str) -> Fingerprint {
        Fingerprint {
            version: build_id(),
            options: fnv1a(options.as_bytes()),
        }
    }
}

/// The version string ranks compare (a different build on one host is refused).
pub fn build_id() -> String {
    format!(
        "iosim {} ({}{})",
        env!("CARGO_PKG_VERSION"),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        if cfg!(feature = "mpi") { ", mpi" } else { "" }
    )
}

/// 64-bit FNV-1a: a stable hash (the same on every host and Rust version).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Compares every rank's fingerprint with rank 0's; `Err` names the ranks
/// (and hosts) that differ and how.
pub fn check_fingerprints(all: &[(RankInfo, Fingerprint)]) -> Result<(), String> {
    let Some((_, base)) = all.first() else {
        return Ok(());
    };
    let mut lines = Vec::new();
    for (who, fp) in all.iter().skip(1) {
        if fp.version != base.version {
            lines.push(format!(
                "rank {} on {} runs {}, rank 0 runs {}",
                who.rank, who.host, fp.version, base.version
            ));
        } else if fp.options != base.options {
            lines.push(format!(
                "rank {} on {} was given different options than rank 0",
                who.rank, who.host
            ));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the ranks do not agree, so the job was refused before touching any storage: {}. \
             Install the same iosim build on every host and start every rank with the same command line",
            lines.join("; ")
        ))
    }
}

/// An error every rank reached the same way (e.g. the ranks disagree on
/// options): rank 0 prints it and every rank exits normally, no abort needed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Agreed(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_name_the_differing_rank() {
        let a = Fingerprint::new("run x");
        let mut b = a.clone();
        b.options = fnv1a(b"run y");
        let mut c = a.clone();
        c.version = "iosim 9.9.9 (release, mpi)".into();
        let all = vec![
            (RankInfo::test(0, 3, "a", 0), a.clone()),
            (RankInfo::test(1, 3, "b", 0), b),
            (RankInfo::test(2, 3, "c", 0), c),
        ];
        let e = check_fingerprints(&all).unwrap_err();
        assert!(e.contains("rank 1 on b was given different options"), "{e}");
        assert!(e.contains("rank 2 on c runs iosim 9.9.9"), "{e}");
        assert!(check_fingerprints(&all[..1]).is_ok());
        assert_eq!(Fingerprint::new("same"), Fingerprint::new("same"));
    }
}
