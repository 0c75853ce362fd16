//! The database engines iosim models: one module per database, each
//! implementing [`Database`] (its names, roles, profiles, sweeps, settings,
//! latency guidance and own rules), and the one list that registers them.
//!
//! A profile says which database it models (`dbms = "postgresql"` in its
//! TOML, SQL Server when absent), and `iosim qualify --dbms NAME` qualifies
//! storage for one of them. `--dbms` resolves once into a [`Dbms`], a
//! handle on the database's module that every stage reads.
//!
//! Adding a database is one new file here (`src/dbms/NAME.rs`, a type
//! implementing [`Database`]) and its entry in the `databases!` line below
//! (docs/architecture.md, "Adding a database").

mod database;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use database::{Database, FlushTarget, Flushes, Guidance, ProfileFile, Provenance, SettingRow};

/// Declares each database's module and lists them, in the order `--dbms`
/// and `iosim profile list` show them.
macro_rules! databases {
    ($($module:ident::$db:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// Every registered database.
        const REGISTERED: &[Dbms] = &[$(Dbms(&$module::$db)),*];
    };
}

// The registration: one line, `module::Type,`, per database.
databases![
    sqlserver::SqlServer,
    postgresql::PostgreSql,
    mysql::MySql,
    oracle::Oracle,
    etcd::Etcd,
    sqlite::Sqlite,
    redis::Redis,
    rocksdb::RocksDb,
];

/// A database engine whose I/O iosim models: a handle on its module's
/// [`Database`], which it dereferences to (`dbms.roles()`).
#[derive(Clone, Copy)]
pub struct Dbms(&'static dyn Database);

impl Dbms {
    /// Every database, in the order `--dbms` lists them.
    pub const ALL: &'static [Dbms] = REGISTERED;
    /// Microsoft SQL Server (the default: every profile before there was a choice).
    pub const SQLSERVER: Dbms = Dbms(&sqlserver::SqlServer);
    /// PostgreSQL.
    pub const POSTGRESQL: Dbms = Dbms(&postgresql::PostgreSql);
    /// MySQL and MariaDB with InnoDB.
    pub const MYSQL: Dbms = Dbms(&mysql::MySql);
    /// Oracle Database (modelled from its documentation only).
    pub const ORACLE: Dbms = Dbms(&oracle::Oracle);
    /// etcd (its WAL and its bbolt backend).
    pub const ETCD: Dbms = Dbms(&etcd::Etcd);

    /// The database named `name` (its name or an alias, any case).
    pub fn from_name(name: &str) -> Option<Dbms> {
        let n = name.trim().to_ascii_lowercase();
        Dbms::ALL
            .iter()
            .copied()
            .find(|d| d.name() == n || d.aliases().contains(&n.as_str()))
    }

    /// Built from the database's documentation alone: iosim has not been
    /// checked against the I/O a running copy of it issues.
    pub fn documented_only(self) -> bool {
        self.provenance() == Provenance::DocumentedOnly
    }

    /// Every database's name, `sqlserver, postgresql, ...`.
    fn names(quote: &str) -> String {
        Dbms::ALL
            .iter()
            .map(|d| format!("{quote}{}{quote}", d.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::ops::Deref for Dbms {
    type Target = dyn Database;

    fn deref(&self) -> &(dyn Database + 'static) {
        self.0
    }
}

impl Default for Dbms {
    fn default() -> Dbms {
        Dbms::SQLSERVER
    }
}

impl PartialEq for Dbms {
    fn eq(&self, other: &Dbms) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Dbms {}

impl std::hash::Hash for Dbms {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name().hash(h);
    }
}

impl std::fmt::Debug for Dbms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dbms({})", self.name())
    }
}

impl std::fmt::Display for Dbms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Its name, as a JSON string.
impl Serialize for Dbms {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// By its exact name (`postgresql`), as documents and profiles hold it.
impl<'de> Deserialize<'de> for Dbms {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dbms, D::Error> {
        let name = String::deserialize(d)?;
        Dbms::ALL
            .iter()
            .copied()
            .find(|x| x.name() == name)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown variant `{name}`, expected one of {}",
                    Dbms::names("`")
                ))
            })
    }
}

/// Parses a database name (clap's value parser, profiles' errors).
pub fn dbms_arg(s: &str) -> Result<Dbms, String> {
    Dbms::from_name(s)
        .ok_or_else(|| format!("unknown database '{s}': use one of {}", Dbms::names("")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Role;

    #[test]
    fn names_and_aliases_round_trip() {
        for &d in Dbms::ALL {
            assert_eq!(Dbms::from_name(d.name()), Some(d));
            assert_eq!(dbms_arg(&d.name().to_uppercase()), Ok(d));
            for a in d.aliases() {
                assert_eq!(Dbms::from_name(a), Some(d));
            }
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{}\"", d.name()));
            assert_eq!(serde_json::from_str::<Dbms>(&json).unwrap(), d);
        }
        assert_eq!(Dbms::default(), Dbms::SQLSERVER);
        let e = dbms_arg("db2").unwrap_err();
        assert!(
            e.starts_with(
                "unknown database 'db2': use one of sqlserver, postgresql, mysql, oracle, etcd"
            ),
            "{e}"
        );
        let e = serde_json::from_str::<Dbms>("\"db2\"").unwrap_err();
        assert!(e
            .to_string()
            .contains("unknown variant `db2`, expected one of `sqlserver`"));
    }

    #[test]
    fn each_database_names_its_log() {
        assert_eq!(Dbms::SQLSERVER.role_name(Role::Log), "log");
        assert_eq!(Dbms::POSTGRESQL.role_name(Role::Log), "wal");
        assert_eq!(Dbms::MYSQL.role_name(Role::Log), "redo");
        assert_eq!(Dbms::ETCD.role_name(Role::Data), "backend");
        assert_eq!(Dbms::ORACLE.role_name(Role::Data), "data");
        assert!(Dbms::ORACLE.documented_only());
        assert!(!Dbms::POSTGRESQL.documented_only());
    }

    #[test]
    fn every_registered_database_is_whole() {
        let mut names = std::collections::HashSet::new();
        for &d in Dbms::ALL {
            assert!(names.insert(d.name()), "{} registered twice", d.name());
            for a in d.aliases() {
                assert!(names.insert(a), "{a} names two databases");
            }
            assert!(!d.title().is_empty() && !d.help().is_empty(), "{d}");
            assert!(d.roles().contains(&Role::Data) && d.roles().contains(&Role::Log));
            assert!(!d.profile_files().is_empty(), "{d}: no profile");
            assert!(!d.settings().is_empty(), "{d}: no settings");
            for s in d.settings() {
                assert!(
                    d.doc_sources().iter().any(|x| x.tag == s.3.tag),
                    "{d}: {} is not among its documentation",
                    s.3.tag
                );
            }
            for s in d
                .doc_sources()
                .iter()
                .copied()
                .chain(d.flushes().targets().iter().flat_map(|t| t.sources()))
            {
                assert!(s.tag.starts_with('[') && s.tag.ends_with(']'), "{}", s.tag);
                assert!(
                    s.url.is_empty() || crate::guidance::is_absolute(s.url),
                    "{}",
                    s.tag
                );
            }
            // Its sweeps are direct: sizes direct I/O accepts.
            assert_eq!(d.page_size() % 4096, 0, "{d}");
            assert_eq!(d.log_write() % 4096, 0, "{d}");
        }
    }

    #[test]
    fn every_source_a_database_cites_resolves_in_docs_references() {
        // The report's references list them with their titles; users read
        // them in docs/references.md, tag for tag.
        let refs = include_str!("../../docs/references.md");
        for &d in Dbms::ALL {
            let own = d.flushes().targets().iter().flat_map(|t| t.sources());
            for s in d.doc_sources().iter().copied().chain(own) {
                assert!(
                    refs.contains(&format!("| `{}` |", s.tag)),
                    "{d}: {} is not in docs/references.md",
                    s.tag
                );
            }
        }
    }
}
