//! RocksDB, an LSM-tree key-value store: every write appended to its
//! write-ahead log (synced when the writer asks, `WriteOptions.sync`), kept
//! in a memtable that a background thread flushes to a new sorted table
//! (SST) file when full, and SST files merged by background compactions.
//! Point reads read one block of an SST file. Its two profiles replay
//! block-layer captures of RocksDB 7.8 under `db_bench` (bench/dbengines.py
//! --engine rocksdb-readwhilewriting, rocksdb-fillrandom); RocksDB
//! publishes no storage latency target.

use super::{Database, ProfileFile, SettingRow};
use crate::guidance::Source;
use crate::verdict::Role;

/// RocksDB's wiki on its write-ahead log.
pub const ROCKSDB_WAL: Source = Source {
    tag: "[RocksDB-WAL]",
    title: "RocksDB wiki, Write Ahead Log (WAL) and WAL Performance: every update is written to the memtable and appended to the WAL; with WriteOptions.sync = true the WAL is synced before the write returns, with sync = false it stays in the page cache; a WAL file is obsolete once its memtables are flushed to SST files",
    url: "https://github.com/facebook/rocksdb/wiki/WAL-Performance",
};
/// RocksDB's wiki on leveled compaction.
pub const ROCKSDB_COMPACTION: Source = Source {
    tag: "[RocksDB-compaction]",
    title: "RocksDB wiki, Leveled Compaction: memtables are flushed to level-0 SST files; compactions read SST files of one level and the overlapping files of the next, and write new SST files of target_file_size_base, deleting their inputs",
    url: "https://github.com/facebook/rocksdb/wiki/Leveled-Compaction",
};

/// RocksDB.
pub struct RocksDb;

impl Database for RocksDb {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn title(&self) -> &'static str {
        "RocksDB"
    }

    fn help(&self) -> &'static str {
        "RocksDB: point reads of SST blocks, WAL appends synced per write (sync=1), memtable flushes and compactions writing new SST files"
    }

    fn role_name(&self, role: Role) -> &'static str {
        match role {
            Role::Log => "wal",
            Role::Data => "sst",
            r => r.name(),
        }
    }

    fn profile_files(&self) -> &'static [ProfileFile] {
        &[
            (
                "rocksdb-readwhilewriting",
                include_str!("../../profiles/rocksdb-readwhilewriting.toml"),
            ),
            (
                "rocksdb-fillrandom",
                include_str!("../../profiles/rocksdb-fillrandom.toml"),
            ),
        ]
    }

    /// A serving database: point reads beside synced writes (its WAL and
    /// the SST files compactions write on the log's and the data's
    /// storage), then a bulk load's flushes and compactions on the data.
    fn profiles(&self, _has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
        use Role::{Data, Log};
        vec![
            ("rocksdb-readwhilewriting", vec![Data, Log, Data]),
            ("rocksdb-fillrandom", vec![Data, Data, Data]),
        ]
    }

    /// `db_bench --block_size=4096`, RocksDB's default block.
    fn page_size(&self) -> u64 {
        4 << 10
    }

    /// A synced put's WAL write: the 4 KiB tail page again.
    fn log_write(&self) -> u64 {
        4 << 10
    }

    fn doc_sources(&self) -> &'static [Source] {
        &[ROCKSDB_WAL, ROCKSDB_COMPACTION]
    }

    fn settings(&self) -> &'static [SettingRow] {
        &[
            (
                "WriteOptions.sync",
                "true (readwhilewriting), false (fillrandom)",
                "a synced put appends to the WAL through the page cache and calls fdatasync before it returns",
                ROCKSDB_WAL,
            ),
            (
                "write_buffer_size",
                "128 KiB (readwhilewriting), 64 MiB (fillrandom)",
                "a full memtable is flushed to a new SST file, written through the page cache and synced",
                ROCKSDB_COMPACTION,
            ),
            (
                "target_file_size_base",
                "64 MiB",
                "compactions read their input SST files and write new ones of this size, then sync them",
                ROCKSDB_COMPACTION,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::{Dbms, Flushes, Guidance, Provenance};

    #[test]
    fn rocksdb_is_registered_with_its_wal_and_both_captures() {
        let d = Dbms::from_name("RocksDB").unwrap();
        assert_eq!(d.role_name(Role::Log), "wal");
        assert_eq!(d.role_name(Role::Data), "sst");
        // A synced put flushes the WAL: judged as the log's commit.
        assert!(matches!(d.flushes(), Flushes::PerCommit));
        assert_eq!(d.guidance(), Guidance::GeneralBands);
        assert_eq!(d.provenance(), Provenance::Checked);
        let runs = d.profiles(&|_| true);
        assert_eq!(runs.len(), d.profile_files().len());
        for ((name, text), (run, roles)) in d.profile_files().iter().zip(&runs) {
            let p = crate::profile::Profile::parse(text, name).unwrap();
            assert_eq!(p.dbms, d);
            assert_eq!(name, run);
            assert!(p.source.starts_with(&format!("bench/dbengines.py --engine {name}")), "{name}");
            // One role for each of the profile's targets, in their order.
            assert_eq!(roles.len(), p.target_names().len(), "{name}");
        }
    }
}
