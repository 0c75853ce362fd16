//! The database engines iosim models: [`Dbms`], its names, and what each
//! database calls the files iosim judges as data and log.
//!
//! A profile says which database it models (`dbms = "postgresql"` in its
//! TOML, SQL Server when absent), and `iosim qualify --dbms NAME` qualifies
//! storage for one of them. What a qualification assumes of each database
//! (its settings, its rules and their sources) is in `qualify::databases`.

use serde::{Deserialize, Serialize};

use crate::verdict::Role;

/// A database engine whose I/O iosim models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dbms {
    /// Microsoft SQL Server (the default: every profile before there was a choice).
    #[default]
    Sqlserver,
    /// PostgreSQL.
    Postgresql,
    /// MySQL and MariaDB with InnoDB.
    Mysql,
    /// Oracle Database (modelled from its documentation only).
    Oracle,
    /// etcd (its WAL and its bbolt backend).
    Etcd,
}

impl Dbms {
    /// Every database, in the order `--dbms` lists them.
    pub const ALL: [Dbms; 5] = [
        Dbms::Sqlserver,
        Dbms::Postgresql,
        Dbms::Mysql,
        Dbms::Oracle,
        Dbms::Etcd,
    ];

    /// Its name (`--dbms NAME`, `dbms = "NAME"` in a profile, JSON).
    pub fn name(self) -> &'static str {
        match self {
            Dbms::Sqlserver => "sqlserver",
            Dbms::Postgresql => "postgresql",
            Dbms::Mysql => "mysql",
            Dbms::Oracle => "oracle",
            Dbms::Etcd => "etcd",
        }
    }

    /// As people write it.
    pub fn title(self) -> &'static str {
        match self {
            Dbms::Sqlserver => "SQL Server",
            Dbms::Postgresql => "PostgreSQL",
            Dbms::Mysql => "MySQL/MariaDB (InnoDB)",
            Dbms::Oracle => "Oracle Database",
            Dbms::Etcd => "etcd",
        }
    }

    /// Other names accepted for it (`postgres`, `mariadb`...).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Dbms::Sqlserver => &["mssql", "sql-server"],
            Dbms::Postgresql => &["postgres", "pg"],
            Dbms::Mysql => &["mariadb", "innodb"],
            Dbms::Oracle => &[],
            Dbms::Etcd => &[],
        }
    }

    /// The database named `name` (its name or an alias, any case).
    pub fn from_name(name: &str) -> Option<Dbms> {
        let n = name.trim().to_ascii_lowercase();
        Dbms::ALL
            .into_iter()
            .find(|d| d.name() == n || d.aliases().contains(&n.as_str()))
    }

    /// What this database calls the file iosim judges as `role`: PostgreSQL's
    /// log is its `wal`, InnoDB's and Oracle's their `redo`, etcd's data its
    /// `backend`.
    pub fn role_name(self, role: Role) -> &'static str {
        match (self, role) {
            (Dbms::Postgresql, Role::Log) => "wal",
            (Dbms::Mysql | Dbms::Oracle, Role::Log) => "redo",
            (Dbms::Etcd, Role::Log) => "wal",
            (Dbms::Etcd, Role::Data) => "backend",
            (_, r) => r.name(),
        }
    }

    /// Built from the database's documentation alone: iosim has not been
    /// checked against the I/O a running copy of it issues.
    pub fn documented_only(self) -> bool {
        self == Dbms::Oracle
    }
}

impl std::fmt::Display for Dbms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses a database name (clap's value parser, profiles' errors).
pub fn dbms_arg(s: &str) -> Result<Dbms, String> {
    Dbms::from_name(s).ok_or_else(|| {
        format!(
            "unknown database '{s}': use one of {}",
            Dbms::ALL.map(Dbms::name).join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_round_trip() {
        for d in Dbms::ALL {
            assert_eq!(Dbms::from_name(d.name()), Some(d));
            assert_eq!(dbms_arg(&d.name().to_uppercase()), Ok(d));
            for a in d.aliases() {
                assert_eq!(Dbms::from_name(a), Some(d));
            }
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{}\"", d.name()));
        }
        assert_eq!(Dbms::default(), Dbms::Sqlserver);
        let e = dbms_arg("db2").unwrap_err();
        assert_eq!(
            e,
            "unknown database 'db2': use one of sqlserver, postgresql, mysql, oracle, etcd"
        );
    }

    #[test]
    fn each_database_names_its_log() {
        assert_eq!(Dbms::Sqlserver.role_name(Role::Log), "log");
        assert_eq!(Dbms::Postgresql.role_name(Role::Log), "wal");
        assert_eq!(Dbms::Mysql.role_name(Role::Log), "redo");
        assert_eq!(Dbms::Etcd.role_name(Role::Data), "backend");
        assert_eq!(Dbms::Oracle.role_name(Role::Data), "data");
        assert!(Dbms::Oracle.documented_only());
        assert!(!Dbms::Postgresql.documented_only());
    }
}
