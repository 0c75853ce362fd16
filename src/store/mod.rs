//! Run history: every run, quick suite, sweep and simulation is kept in an
//! embedded SQLite database (docs/history.md).
//!
//! A stored run is the whole result document (a typed
//! [`crate::document::Document`] as JSON, with its `kind`) plus indexed
//! columns to filter on: [`Store::save_document`] stores a document with the
//! [`Meta`] it says about itself; [`Store::save`] stores any JSON under a
//! kind with the columns the caller gives (a kind this iosim has no type for).

pub mod env;
mod legacy;
pub mod meta;
pub mod render;
pub mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

pub use meta::Meta;

use crate::document::{Document, Kind};
use crate::runner::RunResult;

/// Identifier of a stored run (SQLite rowid; never reused).
pub type RunId = i64;

/// How long a writer waits for another process holding the database lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(3);

/// Errors of the history database. Each says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not an SQLite database, or is damaged.
    #[error("'{0}' is not a readable iosim history database (it is corrupt or another kind of file): move it aside to keep it, or choose another with --db PATH")]
    Corrupt(PathBuf),
    /// Another process holds a lock for too long.
    #[error("the history database '{0}' is locked by another process (another iosim still writing?): wait for it to finish and retry, or use --db PATH")]
    Locked(PathBuf),
    /// Written by a newer iosim.
    #[error("the history database '{0}' has schema version {1}, newer than this iosim understands ({2}): use a newer iosim, or another --db PATH")]
    TooNew(PathBuf, u32, u32),
    /// The directory cannot be created or the file opened.
    #[error("cannot open the history database '{0}': {1}. Check the directory's permissions, or choose another with --db PATH")]
    Open(PathBuf, String),
    /// A reading command found no database: nothing has been stored yet.
    #[error("there is no history database at '{0}' yet: iosim run, quick, sweep, profile, matrix and sim store their results there (or choose another with --db PATH)")]
    Missing(PathBuf),
    /// No run with this id (or label, or group).
    #[error("no stored run matches '{0}': list them with `iosim history`")]
    NotFound(String),
    /// A bad run reference.
    #[error("'{0}' is not a run reference: use a run id (42), `last`, `label:NAME` or `group:N`")]
    BadRef(String),
    /// A stored document this iosim cannot read into a result type.
    #[error("run {0} is a '{1}' document this iosim cannot read ({2}): `iosim show {0} -o json` prints it as stored; a newer iosim may read it")]
    UnknownDocument(RunId, String, String),
    /// Anything else SQLite reported.
    #[error("history database '{0}': {1}")]
    Sql(PathBuf, String),
}

/// The default database: `$XDG_DATA_HOME/iosim/history.db`, else
/// `%LOCALAPPDATA%\iosim\history.db` on Windows, else
/// `~/.local/share/iosim/history.db`.
pub fn default_path() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = env("XDG_DATA_HOME")
        .filter(|p| p.is_absolute())
        // Windows: %LOCALAPPDATA%\iosim\history.db (never set on Linux).
        .or_else(|| env("LOCALAPPDATA"))
        .or_else(|| env("HOME").map(|h| h.join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("iosim").join("history.db")
}

/// One stored run without its document (what `history` lists).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRow {
    /// Id.
    pub id: RunId,
    /// `run`, `quick`, `sweep`, `sim`, `profile`, `matrix`, ...
    pub kind: String,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// User label.
    pub label: Option<String>,
    /// Host.
    pub host: Option<String>,
    /// Target paths.
    pub targets: Vec<String>,
    /// Device model.
    pub device: Option<String>,
    /// Profile.
    pub profile: Option<String>,
    /// iosim version.
    pub iosim_version: Option<String>,
    /// Repetition group.
    pub group: Option<i64>,
    /// Where the targets lived, recorded at save time (filesystem, mount options, device).
    pub environment: Option<Vec<env::TargetPlace>>,
}

/// A stored run with its document.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    /// Indexed columns.
    pub row: RunRow,
    /// The document.
    pub doc: Value,
}

impl RunRow {
    /// The kind, when this iosim knows it (None: a kind stored by a newer one).
    pub fn kind_of(&self) -> Option<Kind> {
        Kind::from_name(&self.kind)
    }
}

impl StoredRun {
    /// The stored document read back into its type. Fails for a kind this
    /// iosim does not know (stored by a newer one).
    pub fn document(&self) -> Result<Document, StoreError> {
        Document::from_value(self.doc.clone()).map_err(|e| {
            StoreError::UnknownDocument(self.row.id, self.row.kind.clone(), e.to_string())
        })
    }
}

/// Filters of `iosim history`. Text filters match substrings; dates compare
/// as prefixes of RFC 3339 (`2026-11`, `2026-11-22T04`).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Kind, exact.
    pub kind: Option<Kind>,
    /// Substring of a target path.
    pub target: Option<String>,
    /// Substring of the device.
    pub device: Option<String>,
    /// Substring of the profile.
    pub profile: Option<String>,
    /// Substring of the label.
    pub label: Option<String>,
    /// Substring of the host.
    pub host: Option<String>,
    /// Started at or after.
    pub since: Option<String>,
    /// Started at or before (prefix comparison, so `2026-11-22` includes that whole day).
    pub until: Option<String>,
    /// At most this many, newest first (0: all).
    pub limit: usize,
}

/// An open history database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

const COLUMNS: &str =
    "id, kind, started_at, label, host, targets, device, profile, iosim_version, group_id, environment";

fn row_of(r: &rusqlite::Row) -> rusqlite::Result<RunRow> {
    let targets: Option<String> = r.get(5)?;
    Ok(RunRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        started_at: r.get(2)?,
        label: r.get(3)?,
        host: r.get(4)?,
        targets: targets
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default(),
        device: r.get(6)?,
        profile: r.get(7)?,
        iosim_version: r.get(8)?,
        group: r.get(9)?,
        environment: r
            .get::<_, Option<String>>(10)?
            .and_then(|e| serde_json::from_str(&e).ok()),
    })
}

impl Store {
    /// Opens (creating the file and its directory if needed) and migrates.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Open(path.to_path_buf(), e.to_string()))?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::Open(path.to_path_buf(), e.to_string()))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| store.err(e))?;
        match schema::migrate(&mut store.conn) {
            Ok(_) => Ok(store),
            Err(schema::MigrateError::TooNew(v)) => Err(StoreError::TooNew(
                path.to_path_buf(),
                v,
                schema::CURRENT_VERSION,
            )),
            Err(schema::MigrateError::Sql(e)) => Err(store.err(e)),
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        schema::version(&self.conn).map_err(|e| self.err(e))
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode as C;
        match e.sqlite_error_code() {
            Some(C::NotADatabase) | Some(C::DatabaseCorrupt) => {
                StoreError::Corrupt(self.path.clone())
            }
            Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => {
                StoreError::Locked(self.path.clone())
            }
            _ => StoreError::Sql(self.path.clone(), e.to_string()),
        }
    }

    /// Stores any document under `kind`, a short word (`run`, `quick`,
    /// `sweep`, `sim`, `profile`, `matrix`, ...), with the indexed columns in
    /// `meta` (nothing is read from the JSON: [`Store::save_document`] fills
    /// them from a typed document). The start time defaults to now.
    pub fn save(
        &self,
        kind: &str,
        label: Option<&str>,
        doc: &Value,
        meta: &Meta,
    ) -> Result<RunId, StoreError> {
        let started_at = meta
            .started_at
            .clone()
            .unwrap_or_else(crate::clock::utc_now_rfc3339);
        let targets = &meta.targets;
        let text = serde_json::to_string(doc)
            .map_err(|e| StoreError::Sql(self.path.clone(), e.to_string()))?;
        self.conn
            .execute(
                "INSERT INTO runs (kind, started_at, label, host, targets, iosim_version, doc,
                                   device, profile, group_id, saved_at, environment)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    kind,
                    started_at,
                    label.filter(|l| !l.is_empty()),
                    meta.host,
                    serde_json::to_string(targets).unwrap_or_default(),
                    meta.iosim_version,
                    text,
                    meta.device
                        .clone()
                        .or_else(|| meta.environment.as_deref().and_then(env::device_summary)),
                    meta.profile,
                    meta.group,
                    crate::clock::utc_now_rfc3339(),
                    meta.environment
                        .as_ref()
                        .and_then(|e| serde_json::to_string(e).ok()),
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores a result document under its kind, with the columns it says
    /// about itself ([`Meta::of`]) and `environment` (where its targets live).
    pub fn save_document(
        &self,
        doc: &Document,
        label: Option<&str>,
        environment: Option<Vec<env::TargetPlace>>,
    ) -> Result<RunId, StoreError> {
        let meta = Meta {
            environment,
            ..Meta::of(doc)
        };
        self.save(doc.kind(), label, &doc.to_value(), &meta)
    }

    /// Stores one run's result as kind `run`.
    pub fn save_run(&self, r: &RunResult, label: Option<&str>) -> Result<RunId, StoreError> {
        self.save_document(&Document::run(r.clone()), label, None)
    }

    /// Puts runs into one repetition group (the group id is the first run's id by convention).
    pub fn set_group(&self, ids: &[RunId], group: i64) -> Result<(), StoreError> {
        for id in ids {
            self.conn
                .execute(
                    "UPDATE runs SET group_id = ?1 WHERE id = ?2",
                    params![group, id],
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Lists runs, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<RunRow>, StoreError> {
        let mut sql = format!("SELECT {COLUMNS} FROM runs WHERE 1=1");
        let mut args: Vec<String> = Vec::new();
        let mut like = |col: &str, v: &Option<String>, sql: &mut String| {
            if let Some(v) = v {
                args.push(format!(
                    "%{}%",
                    v.replace('\\', "\\\\")
                        .replace('%', "\\%")
                        .replace('_', "\\_")
                ));
                sql.push_str(&format!(" AND {col} LIKE ?{} ESCAPE '\\'", args.len()));
            }
        };
        like("targets", &f.target, &mut sql);
        like("device", &f.device, &mut sql);
        like("profile", &f.profile, &mut sql);
        like("label", &f.label, &mut sql);
        like("host", &f.host, &mut sql);
        if let Some(k) = &f.kind {
            args.push(k.name().to_string());
            sql.push_str(&format!(" AND kind = ?{}", args.len()));
        }
        if let Some(d) = &f.since {
            args.push(d.clone());
            sql.push_str(&format!(" AND started_at >= ?{}", args.len()));
        }
        if let Some(d) = &f.until {
            args.push(d.clone());
            let n = args.len();
            sql.push_str(&format!(" AND substr(started_at, 1, length(?{n})) <= ?{n}"));
        }
        sql.push_str(" ORDER BY started_at DESC, id DESC");
        if f.limit > 0 {
            sql.push_str(&format!(" LIMIT {}", f.limit));
        }
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map(rusqlite::params_from_iter(args.iter()), row_of)
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// One run with its document.
    pub fn get(&self, id: RunId) -> Result<StoredRun, StoreError> {
        let found = self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS}, doc FROM runs WHERE id = ?1"),
                [id],
                |r| Ok((row_of(r)?, r.get::<_, String>(11)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let (row, doc) = found.ok_or_else(|| StoreError::NotFound(id.to_string()))?;
        let doc = serde_json::from_str(&doc).map_err(|_| StoreError::Corrupt(self.path.clone()))?;
        Ok(StoredRun { row, doc })
    }

    fn ids(&self, sql: &str, arg: &dyn rusqlite::ToSql) -> Result<Vec<RunId>, StoreError> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let ids = st
            .query_map([arg], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<RunId>>>()
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Resolves a run reference to the runs it names, oldest first:
    /// `42` (that run), `last` (the newest), `label:NAME` (every run with
    /// that label: repetitions), `group:N` (every run of a repetition group).
    pub fn resolve(&self, reference: &str) -> Result<Vec<StoredRun>, StoreError> {
        let r = reference.trim();
        let ids = if let Some(l) = r.strip_prefix("label:") {
            self.ids("SELECT id FROM runs WHERE label = ?1 ORDER BY id", &l)?
        } else if let Some(g) = r.strip_prefix("group:") {
            let g: i64 = g.parse().map_err(|_| StoreError::BadRef(r.into()))?;
            self.ids("SELECT id FROM runs WHERE group_id = ?1 ORDER BY id", &g)?
        } else if r == "last" {
            self.ids("SELECT id FROM runs ORDER BY id DESC LIMIT ?1", &1)?
        } else {
            let id: RunId = r
                .strip_prefix('#')
                .unwrap_or(r)
                .parse()
                .map_err(|_| StoreError::BadRef(r.into()))?;
            vec![id]
        };
        if ids.is_empty() {
            return Err(StoreError::NotFound(r.into()));
        }
        ids.into_iter().map(|id| self.get(id)).collect()
    }

    /// Deletes the runs `ids`, all or none: an id that is not stored is
    /// refused before anything is deleted. Returns the rows deleted, as
    /// `history` lists them.
    pub fn delete(&self, ids: &[RunId]) -> Result<Vec<RunRow>, StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let mut rows = Vec::new();
        for &id in ids {
            let row = tx
                .query_row(
                    &format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"),
                    [id],
                    row_of,
                )
                .optional()
                .map_err(|e| self.err(e))?
                .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
            if !rows.iter().any(|r: &RunRow| r.id == id) {
                rows.push(row);
            }
        }
        for r in &rows {
            tx.execute("DELETE FROM runs WHERE id = ?1", [r.id])
                .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Number of stored runs.
    pub fn count(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(t: &str, path: &str, iops: f64) -> Value {
        json!({"started_at": t, "host": "box", "iosim_version": "0.1.0",
               "total": {"total": {"iops": iops}}, "targets": [{"path": path}]})
    }

    /// The columns of `doc`, as the caller gives them (nothing is read from the JSON).
    fn meta(t: &str, path: &str) -> Meta {
        Meta {
            started_at: Some(t.into()),
            host: Some("box".into()),
            targets: vec![path.into()],
            ..Meta::default()
        }
    }

    #[test]
    fn save_list_get_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("sub/h.db")).unwrap();
        assert_eq!(s.schema_version().unwrap(), schema::CURRENT_VERSION);
        let a = s
            .save(
                "run",
                Some("before"),
                &doc("2026-01-01T00:00:00Z", "/mnt/a", 1.0),
                &meta("2026-01-01T00:00:00Z", "/mnt/a"),
            )
            .unwrap();
        let b = s
            .save(
                "run",
                Some("before"),
                &doc("2026-01-02T00:00:00Z", "/mnt/b_x", 2.0),
                &meta("2026-01-02T00:00:00Z", "/mnt/b_x"),
            )
            .unwrap();
        let c = s
            .save(
                "sim",
                None,
                &json!({"anything": true}),
                &Meta {
                    profile: Some("oltp".into()),
                    ..Meta::default()
                },
            )
            .unwrap();
        assert_eq!(s.count().unwrap(), 3);
        let all = s.list(&Filter::default()).unwrap();
        assert_eq!(all[0].id, c, "newest first");
        let f = |f: Filter| s.list(&f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(
            f(Filter {
                target: Some("/mnt/b_".into()),
                ..Default::default()
            }),
            vec![b]
        );
        // '_' is literal, not a wildcard.
        assert_eq!(
            f(Filter {
                target: Some("a_".into()),
                ..Default::default()
            }),
            Vec::<i64>::new()
        );
        assert_eq!(
            f(Filter {
                until: Some("2026-01-01".into()),
                ..Default::default()
            }),
            vec![a]
        );
        assert_eq!(
            f(Filter {
                since: Some("2026-01-02".into()),
                kind: Some(Kind::Run),
                ..Default::default()
            }),
            vec![b]
        );
        assert_eq!(
            f(Filter {
                profile: Some("olt".into()),
                ..Default::default()
            }),
            vec![c]
        );
        assert_eq!(
            f(Filter {
                limit: 1,
                ..Default::default()
            })
            .len(),
            1
        );
        let got = s.get(b).unwrap();
        assert_eq!(got.doc, doc("2026-01-02T00:00:00Z", "/mnt/b_x", 2.0));
        assert_eq!(got.row.targets, vec!["/mnt/b_x"]);
        assert_eq!(got.row.host.as_deref(), Some("box"));
        assert_eq!(s.resolve("label:before").unwrap().len(), 2);
        assert_eq!(s.resolve("last").unwrap()[0].row.id, c);
        assert!(matches!(s.resolve("99"), Err(StoreError::NotFound(_))));
        assert!(matches!(s.resolve("x"), Err(StoreError::BadRef(_))));
        s.set_group(&[a, b], a).unwrap();
        assert_eq!(s.resolve(&format!("group:{a}")).unwrap().len(), 2);
    }

    #[test]
    fn default_path_follows_xdg() {
        let p = default_path();
        assert!(p.ends_with("iosim/history.db"));
    }
}
