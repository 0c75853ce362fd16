//! What a qualification assumes of the database it qualifies for
//! (`iosim qualify --dbms`), read from the database's module
//! ([`crate::dbms`]): the profiles it runs and on which roles, the pattern
//! of each role's sweeps, the database settings those workloads assume
//! (named in the report, each with the documentation it comes from), and
//! what the database publishes about storage latency.

use serde::{Deserialize, Serialize};

use crate::dbms::{Dbms, Guidance, Provenance};
use crate::guidance::Source;
use crate::verdict::Role;
use crate::workload::RwMode;

/// A database setting the qualification's workloads assume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// Its name (`wal_sync_method`).
    pub name: String,
    /// Its value (`fdatasync`).
    pub value: String,
    /// What it makes the database do to the storage.
    pub means: String,
    /// The tag of the documentation it comes from (`[PG-WAL]`).
    pub source_tag: String,
}

impl Setting {
    /// `name=value`.
    pub fn pair(&self) -> String {
        format!("{}={}", self.name, self.value)
    }
}

/// The documentation the settings of `dbms` come from.
pub fn doc_sources(dbms: Dbms) -> &'static [Source] {
    dbms.doc_sources()
}

/// The settings the workloads of `dbms` assume.
pub fn settings(dbms: Dbms) -> Vec<Setting> {
    dbms.settings()
        .iter()
        .map(|&(name, value, means, src)| Setting {
            name: name.into(),
            value: value.into(),
            means: means.into(),
            source_tag: src.tag.into(),
        })
        .collect()
}

/// What the database publishes about storage latency, and so what the
/// latency rules of its qualification cite.
pub fn latency_guidance(dbms: Dbms) -> String {
    match dbms.guidance() {
        Guidance::RulesTable => format!(
            "{}'s published latency guidance (the --rules table)",
            dbms.title()
        ),
        Guidance::OwnTargets { limits, .. } => limits.into(),
        Guidance::GeneralBands => format!(
            "{} publishes no storage latency target: its latency rules use iosim's general latency bands [iosim-bands] (the --rules table's limits, drawn from SQL Server's published guidance)",
            dbms.title()
        ),
    }
}

/// Where the latency limits come from when the `--rules` table is not the
/// database's own guidance (None for SQL Server): said by the text report's
/// notes and the page's verdict alike.
pub fn latency_limits(dbms: Dbms) -> Option<String> {
    (dbms.guidance() != Guidance::RulesTable).then(|| latency_guidance(dbms))
}

/// What the report says about the simulator stage for `dbms` (None for SQL
/// Server, whose I/O the simulator models).
pub fn simulator_note(dbms: Dbms) -> Option<String> {
    (!dbms.simulated()).then(|| {
        format!(
            "the simulator stage checks page integrity with SQL Server's I/O (SQLIOSim's users, direct and write-through): a lost, torn or misdirected write is the storage's fault whatever the database, so it runs for {} too; its latencies are not {}'s and no latency rule judges them",
            dbms.title(),
            dbms.title()
        )
    })
}

/// Where the workloads come from, said in the report when they were not
/// compared with the database's own I/O.
pub fn documented_only_note(dbms: Dbms) -> Option<String> {
    match dbms.provenance() {
        Provenance::Checked => None,
        Provenance::DocumentedOnly => Some(format!(
            "{}'s workloads are built from its documentation only: it cannot be installed where iosim is tested, so they were not compared with the I/O a running {} issues",
            dbms.title(),
            dbms.title()
        )),
        Provenance::Literature => Some(format!(
            "{}'s workloads are literature-based (its documentation and published descriptions of its I/O) until captured from a running {}: they were not compared with the I/O it issues",
            dbms.title(),
            dbms.title()
        )),
    }
}

/// The profiles a qualification for `dbms` runs, each with the role of
/// each of its targets (in the profile's target order), given which of the
/// optional roles (`tempdb`, `backup`) are present. Targets of one profile
/// on the same role share its location, each in a slice of its own.
pub fn profiles(dbms: Dbms, has: impl Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)> {
    dbms.profiles(&has)
}

/// The roles `dbms` has: SQL Server's four, the others' data and log.
pub fn roles(dbms: Dbms) -> &'static [Role] {
    dbms.roles()
}

/// The sweeps of a role: the database's pattern there (its page size for
/// data's random reads; its log's write size), over queue depth and threads.
/// Every database's sweeps open their files direct and write-through: they
/// measure how the device scales, which page-cache hits would hide.
pub fn sweep_shape(dbms: Dbms, role: Role) -> (RwMode, u64, &'static str, &'static str) {
    let page = dbms.page_size();
    match role {
        Role::Data => (RwMode::Randread, page, "qd=1..64x2", "threads=1..8x2"),
        Role::Log => (
            RwMode::Write,
            dbms.log_write(),
            "qd=1..32x2",
            "threads=1..4x2",
        ),
        Role::Tempdb => (RwMode::Randrw, page, "qd=1..64x2", "threads=1..8x2"),
        Role::Backup => (RwMode::Write, 1 << 20, "qd=1..16x2", "threads=1..4x2"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_database_runs_its_own_profiles_on_its_roles() {
        for &d in Dbms::ALL {
            let list = profiles(d, |_| true);
            assert!(!list.is_empty());
            for (name, roles_of) in &list {
                let p = crate::profile::Profile::load(name).unwrap();
                assert_eq!(p.dbms, d, "{name}");
                assert_eq!(p.target_names().len(), roles_of.len(), "{name}");
                // Each target's role is the role its workloads are judged by.
                for (t, r) in p.target_names().iter().zip(roles_of) {
                    let w = p.workloads.iter().find(|w| &w.target == t).unwrap();
                    assert_eq!(w.role, *r, "{name} {t}");
                }
                assert!(roles_of.iter().all(|r| roles(d).contains(r)), "{name}");
            }
            assert!(!settings(d).is_empty());
            for s in settings(d) {
                assert!(
                    doc_sources(d).iter().any(|x| x.tag == s.source_tag),
                    "{d}: {}",
                    s.source_tag
                );
            }
        }
        // SQL Server's optional roles add theirs; the others have none.
        assert_eq!(profiles(Dbms::SQLSERVER, |_| false).len(), 5);
        assert_eq!(profiles(Dbms::SQLSERVER, |_| true).len(), 8);
        assert_eq!(roles(Dbms::ETCD), [Role::Data, Role::Log]);
    }

    #[test]
    fn sweeps_use_each_databases_page_and_log_write() {
        assert_eq!(sweep_shape(Dbms::SQLSERVER, Role::Log).1, 60 << 10);
        assert_eq!(sweep_shape(Dbms::POSTGRESQL, Role::Log).1, 8 << 10);
        assert_eq!(sweep_shape(Dbms::MYSQL, Role::Data).1, 16 << 10);
        assert_eq!(sweep_shape(Dbms::ETCD, Role::Log).1, 4 << 10);
        assert_eq!(sweep_shape(Dbms::SQLSERVER, Role::Data).1, 8 << 10);
        for &d in Dbms::ALL {
            for r in roles(d) {
                // The sweeps are direct: a size direct I/O accepts.
                assert_eq!(sweep_shape(d, *r).1 % 4096, 0);
            }
        }
    }

    #[test]
    fn the_settings_and_the_guidance_name_the_database() {
        let pg: Vec<String> = settings(Dbms::POSTGRESQL)
            .iter()
            .map(Setting::pair)
            .collect();
        assert!(pg.contains(&"wal_sync_method=fdatasync".to_string()));
        assert!(pg.contains(&"full_page_writes=on".to_string()));
        let my: Vec<String> = settings(Dbms::MYSQL).iter().map(Setting::pair).collect();
        for want in [
            "innodb_flush_method=O_DIRECT",
            "innodb_flush_log_at_trx_commit=1",
            "sync_binlog=1",
        ] {
            assert!(my.contains(&want.to_string()), "{my:?}");
        }
        assert!(latency_guidance(Dbms::POSTGRESQL).starts_with("PostgreSQL publishes no"));
        assert!(latency_guidance(Dbms::ETCD).contains("under 10 ms"));
        assert!(simulator_note(Dbms::SQLSERVER).is_none());
        assert!(simulator_note(Dbms::MYSQL)
            .unwrap()
            .contains("page integrity"));
        assert!(documented_only_note(Dbms::ORACLE).is_some());
        assert!(documented_only_note(Dbms::ETCD).is_none());
    }
}
