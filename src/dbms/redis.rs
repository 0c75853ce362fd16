//! Redis with its append-only file (`appendonly yes`): each event loop's
//! commands appended to the AOF through the page cache, then, with
//! `appendfsync always`, fdatasync before the clients are answered, or with
//! `everysec` once a second from a background thread. Its two profiles
//! replay block-layer captures of Redis 7.0 (bench/dbengines.py --engine
//! redis-everysec; redis-always through its fingerprint,
//! bench/fingerprint_engine.py); Redis publishes no storage latency
//! target.

use super::{Database, ProfileFile, SettingRow};
use crate::guidance::Source;
use crate::verdict::Role;

/// Redis's persistence documentation.
pub const REDIS_PERSISTENCE: Source = Source {
    tag: "[Redis-persistence]",
    title: "Redis documentation, Redis persistence: the AOF logs every write operation; appendfsync always fsyncs every time new commands are appended to the AOF (very slow, very safe), everysec once a second; the AOF is rewritten in the background when it grows",
    url: "https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/",
};

/// Redis (AOF persistence).
pub struct Redis;

impl Database for Redis {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn title(&self) -> &'static str {
        "Redis (AOF)"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["valkey"]
    }

    fn help(&self) -> &'static str {
        "Redis with appendonly yes, appendfsync always: AOF appends through the page cache, fdatasync per event loop"
    }

    fn role_name(&self, role: Role) -> &'static str {
        match role {
            Role::Log => "aof",
            Role::Data => "dir",
            r => r.name(),
        }
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[
            (
                "redis-aof-always",
                include_str!("../../profiles/redis-aof-always.toml"),
            ),
            (
                "redis-aof-everysec",
                include_str!("../../profiles/redis-aof-everysec.toml"),
            ),
        ]
    }

    /// `appendfsync always` only: with `everysec` no client waits for the
    /// storage (redis-aof-everysec is for `iosim run --profile` and
    /// `iosim qualify --profile`).
    fn profiles(&self, _has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        vec![("redis-aof-always", vec![Role::Log])]
    }

    /// The page its AOF's writes come to.
    fn page_size(&self) -> u64 {
        4 << 10
    }

    /// An event loop's appends, two pages.
    fn log_write(&self) -> u64 {
        8 << 10
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[REDIS_PERSISTENCE]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[
            (
                "appendonly",
                "yes",
                "every write command is appended to the AOF, through the page cache",
                REDIS_PERSISTENCE,
            ),
            (
                "appendfsync",
                "always",
                "fdatasync after each event loop's appends, before the clients are answered",
                REDIS_PERSISTENCE,
            ),
            (
                "save",
                "\"\"",
                "no RDB snapshots; the AOF is rewritten in the background when it has doubled",
                REDIS_PERSISTENCE,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::{Dbms, Flushes, Guidance, Provenance};

    #[test]
    fn redis_is_registered_with_its_aof_and_its_capture() {
        let d = Dbms::from_name("Redis").unwrap();
        assert_eq!(Dbms::from_name("valkey"), Some(d));
        assert_eq!(d.role_name(Role::Log), "aof");
        // Each event loop's appends are a commit: judged as the log's.
        assert!(matches!(d.flushes(), Flushes::PerCommit));
        assert_eq!(d.guidance(), Guidance::GeneralBands);
        assert_eq!(d.provenance(), Provenance::Checked);
        for ((name, text), engine) in d.profile_files().iter().zip(["redis-always", "redis-everysec"]) {
            let p = crate::profile::Profile::parse(text, name).unwrap();
            assert_eq!(p.dbms, d);
            // Captured by bench/dbengines.py, directly or through a fingerprint.
            let by = ["bench/dbengines.py", "bench/fingerprint_engine.py"];
            assert!(
                by.iter().any(|b| p.source.starts_with(&format!("{b} --engine {engine} "))),
                "{name}: {}",
                p.source
            );
        }
        // Its qualification runs the profile whose clients wait for the flush.
        assert_eq!(d.profiles(&|_| true), vec![("redis-aof-always", vec![Role::Log])]);
    }
}
