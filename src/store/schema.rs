//! The history database's schema and its forward migrations.
//!
//! The version lives in SQLite's `PRAGMA user_version`. Each migration takes
//! the database from version N-1 to N inside one transaction, so a database is
//! always at a version this list knows. A database newer than this iosim is
//! refused (never downgraded).

use rusqlite::{params, Connection, Transaction, TransactionBehavior};

/// The schema version this iosim writes.
pub const CURRENT_VERSION: u32 = 3;

/// Version 1: one row per stored document, with the columns `history` filters on.
pub const V1_SQL: &str = "
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    label         TEXT,
    host          TEXT,
    targets       TEXT,
    iosim_version TEXT,
    doc           TEXT NOT NULL
);
CREATE INDEX runs_started_at ON runs(started_at);
";

/// Version 2: device, profile, a group id for repetitions, the time of saving,
/// where the targets lived (filesystem, mount options, device: JSON), and
/// indexes for the new filters.
const V2_SQL: &str = "
ALTER TABLE runs ADD COLUMN device TEXT;
ALTER TABLE runs ADD COLUMN profile TEXT;
ALTER TABLE runs ADD COLUMN group_id INTEGER;
ALTER TABLE runs ADD COLUMN saved_at TEXT;
ALTER TABLE runs ADD COLUMN environment TEXT;
CREATE INDEX runs_label ON runs(label);
CREATE INDEX runs_group ON runs(group_id);
CREATE INDEX runs_kind ON runs(kind);
";

/// Reads the schema version.
pub fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))
}

/// Brings the database to [`CURRENT_VERSION`]. Returns the version it had.
/// An empty database (version 0 and no tables) is created from scratch.
///
/// The version is read and every step applied inside ONE write transaction
/// taken up front (`BEGIN IMMEDIATE`): when several iosim processes open a new
/// database at once, exactly one migrates and the others wait (the busy
/// timeout) and then see the current version, so none of them repeats a step
/// (`table runs already exists`) and no result is lost.
pub fn migrate(conn: &mut Connection) -> Result<u32, MigrateError> {
    // Fast path without a write lock: an up-to-date database needs nothing.
    let seen = version(conn)?;
    if seen > CURRENT_VERSION {
        return Err(MigrateError::TooNew(seen));
    }
    if seen == CURRENT_VERSION {
        return Ok(seen);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read again under the lock: another process may have migrated meanwhile.
    let from = version(&tx)?;
    if from > CURRENT_VERSION {
        return Err(MigrateError::TooNew(from));
    }
    for v in from + 1..=CURRENT_VERSION {
        apply(&tx, v)?;
    }
    if from < CURRENT_VERSION {
        tx.pragma_update(None, "user_version", CURRENT_VERSION)?;
    }
    tx.commit()?;
    Ok(from)
}

/// Why a migration failed.
#[derive(Debug)]
pub enum MigrateError {
    /// Written by a newer iosim.
    TooNew(u32),
    /// SQLite said no.
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sql(e)
    }
}

fn apply(tx: &Transaction, v: u32) -> rusqlite::Result<()> {
    match v {
        1 => tx.execute_batch(V1_SQL),
        2 => {
            tx.execute_batch(V2_SQL)?;
            // Fill the new columns of rows stored by version 1 from their documents.
            let rows: Vec<(i64, String)> = {
                let mut st = tx.prepare("SELECT id, doc FROM runs")?;
                let it = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                it.collect::<rusqlite::Result<_>>()?
            };
            let mut up = tx.prepare("UPDATE runs SET device = ?1, profile = ?2 WHERE id = ?3")?;
            for (id, doc) in rows {
                let doc: serde_json::Value = serde_json::from_str(&doc).unwrap_or_default();
                up.execute(params![
                    super::legacy::device_of(&doc),
                    super::legacy::profile_of(&doc),
                    id
                ])?;
            }
            Ok(())
        }
        3 => {
            // Version 3: every stored document is a typed result document
            // (crate::document::Document), which names its `kind` inside the
            // JSON. Documents stored before carry it only in the kind column.
            let rows: Vec<(i64, String, String)> = {
                let mut st = tx.prepare("SELECT id, kind, doc FROM runs")?;
                let it = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                it.collect::<rusqlite::Result<_>>()?
            };
            let mut up = tx.prepare("UPDATE runs SET doc = ?1 WHERE id = ?2")?;
            for (id, kind, doc) in rows {
                if let Some(doc) = v3_document(&kind, &doc) {
                    up.execute(params![doc, id])?;
                }
            }
            Ok(())
        }
        _ => unreachable!("migration {v} is not defined"),
    }
}

/// A document stored before version 3, with its `kind` added from the
/// row's kind column (None: nothing to change, or not a JSON object).
fn v3_document(kind: &str, doc: &str) -> Option<String> {
    let mut v: serde_json::Value = serde_json::from_str(doc).ok()?;
    let obj = v.as_object_mut()?;
    if obj.contains_key("kind") {
        return None;
    }
    obj.insert("kind".into(), serde_json::Value::String(kind.into()));
    serde_json::to_string(&v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_names_the_kind_inside_the_document() {
        let d = v3_document("run", r#"{"total":{"total":{"iops":1.0}}}"#).unwrap();
        let v: serde_json::Value = serde_json::from_str(&d).unwrap();
        assert_eq!(v["kind"], "run");
        assert_eq!(v["total"]["total"]["iops"], 1.0);
        assert!(v3_document("sweep", r#"{"kind":"sweep"}"#).is_none());
        assert!(v3_document("run", "3").is_none());
    }
}
