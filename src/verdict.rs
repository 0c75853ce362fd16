//! Latency verdicts: a measured mean latency judged against the published
//! SQL Server guideline tables (Avg. Disk sec/Transfer), each with its source.
//!
//! The tables and their sources are listed in docs/references.md (section
//! "Latency guidelines"); each table's tag, e.g. `[Randal]`, names its entry.
//! Windows' Avg. Disk sec/Transfer is a mean, so the mean latency of each direction (read, write) is judged, not a percentile.
//!
//! Boundaries follow the way each source writes its table:
//! - `<N` is exclusive: exactly N falls in the next (worse) band;
//! - ranges written with whole numbers (`2–5`, `6–15`, `≤10`) include their
//!   upper end: exactly 5 ms is still "Very good" for Microsoft CSS.
//!
//! Which tables apply depends on the file's role: data and tempdb files get
//! the general tables plus "data 0–5 ms"; log files get the general tables
//! plus "log 0–2 ms"; backup media get only the general disk tables (no
//! source gives backup-specific latency targets; throughput matters more).

use serde::{Deserialize, Serialize};

/// What a file is to the database engine; decides which tables judge it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A data file (.mdf/.ndf).
    Data,
    /// A transaction log file (.ldf).
    Log,
    /// A tempdb data file.
    Tempdb,
    /// A backup file or device.
    Backup,
}

impl Role {
    /// The role's name as written in profiles.
    pub fn name(self) -> &'static str {
        match self {
            Role::Data => "data",
            Role::Log => "log",
            Role::Tempdb => "tempdb",
            Role::Backup => "backup",
        }
    }
}

/// I/O direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

/// One band of a table: latencies up to `limit_ms` get `label`.
#[derive(Clone, Copy, Debug)]
pub struct Band {
    /// Upper bound in milliseconds (`f64::INFINITY` for the last band).
    pub limit_ms: f64,
    /// True when the bound itself belongs to this band (`≤`), false for `<`.
    pub inclusive: bool,
    /// The source's word for this band.
    pub label: &'static str,
}

const fn lt(limit_ms: f64, label: &'static str) -> Band {
    Band {
        limit_ms,
        inclusive: false,
        label,
    }
}

const fn le(limit_ms: f64, label: &'static str) -> Band {
    Band {
        limit_ms,
        inclusive: true,
        label,
    }
}

/// A guideline table.
#[derive(Debug)]
pub struct Guideline {
    /// Short identifier (`randal`, `css`, ...).
    pub id: &'static str,
    /// Short name with the tag, for one-line reports.
    pub short: &'static str,
    /// Who says so, with the reference tag.
    pub source: &'static str,
    /// What the table is about.
    pub title: &'static str,
    /// Bands from best to worst; the last one is unbounded.
    pub bands: &'static [Band],
    /// Index of the first band that is a problem (for the summary word).
    pub first_bad: usize,
}

const INF: f64 = f64::INFINITY;

/// Paul Randal, sqlskills, "Are I/O latencies killing your performance?" [Randal].
pub static RANDAL: Guideline = Guideline {
    id: "randal",
    short: "[Randal]",
    source: "Paul Randal, SQLskills [Randal]",
    title: "I/O latency",
    bands: &[
        lt(1.0, "Excellent"),
        lt(5.0, "Very good"),
        lt(10.0, "Good"),
        lt(20.0, "Poor"),
        lt(100.0, "Bad"),
        le(500.0, "Shockingly bad"),
        lt(INF, "WOW"),
    ],
    first_bad: 3,
};

/// Microsoft CSS, "Troubleshoot slow SQL Server performance caused by I/O issues" [MS-IO].
pub static CSS: Guideline = Guideline {
    id: "css",
    short: "[MS-IO]",
    source: "Microsoft support (CSS) [MS-IO]",
    title: "Avg. Disk sec/Transfer (consistently >10-15 ms = bottleneck)",
    bands: &[
        lt(2.0, "Excellent"),
        le(5.0, "Very good"),
        le(15.0, "Good"),
        le(100.0, "Poor"),
        le(500.0, "Bad"),
        lt(INF, "Deplorable"),
    ],
    first_bad: 3,
};

/// R. Beene, "Using DiskSpd in SQL Server environments" [DiskSpd-SQL].
pub static DISKSPD_WHITEPAPER: Guideline = Guideline {
    id: "diskspd-whitepaper",
    short: "[DiskSpd-SQL]",
    source: "DiskSpd-for-SQL white paper [DiskSpd-SQL]",
    title: "disk latency",
    bands: &[
        le(10.0, "Ideal"),
        le(20.0, "May impact"),
        lt(INF, "Impacted"),
    ],
    first_bad: 1,
};

/// MS field guidance 2012, reads table [MS-2012].
pub static FIELD_READS: Guideline = Guideline {
    id: "field-2012-reads",
    short: "[MS-2012] reads",
    source: "MS field guidance 2012 [MS-2012]",
    title: "reads",
    bands: &[
        lt(8.0, "Excellent"),
        lt(12.0, "Good"),
        lt(20.0, "Fair"),
        lt(INF, "Poor"),
    ],
    first_bad: 3,
};

/// MS field guidance 2012, cached writes table [MS-2012].
pub static FIELD_WRITES: Guideline = Guideline {
    id: "field-2012-cached-writes",
    short: "[MS-2012] cached writes",
    source: "MS field guidance 2012 [MS-2012]",
    title: "cached writes",
    bands: &[
        lt(1.0, "Excellent"),
        lt(2.0, "Good"),
        lt(4.0, "Fair"),
        lt(INF, "Poor"),
    ],
    first_bad: 3,
};

/// Data files: 0–5 ms excellent [Log-vs-data].
pub static DATA_FILES: Guideline = Guideline {
    id: "data-0-5ms",
    short: "[Log-vs-data] data 0-5 ms",
    source: "Rule of thumb, original not located [Log-vs-data]",
    title: "data files: 0-5 ms excellent",
    bands: &[le(5.0, "Excellent"), lt(INF, "Above 5 ms")],
    first_bad: 1,
};

/// Log files: 0–2 ms acceptable [Log-vs-data].
pub static LOG_FILES: Guideline = Guideline {
    id: "log-0-2ms",
    short: "[Log-vs-data] log 0-2 ms",
    source: "Rule of thumb, original not located [Log-vs-data]",
    title: "log files: 0-2 ms acceptable",
    bands: &[le(2.0, "Acceptable"), lt(INF, "Too slow for a log")],
    first_bad: 1,
};

/// Every table, for listings and docs.
pub fn all() -> [&'static Guideline; 7] {
    [
        &RANDAL,
        &CSS,
        &DISKSPD_WHITEPAPER,
        &FIELD_READS,
        &FIELD_WRITES,
        &DATA_FILES,
        &LOG_FILES,
    ]
}

/// The tables that judge `dir` on a file with `role`.
pub fn tables_for(role: Role, dir: Direction) -> Vec<&'static Guideline> {
    let mut out: Vec<&'static Guideline> = vec![&RANDAL, &CSS, &DISKSPD_WHITEPAPER];
    if role == Role::Backup {
        return out;
    }
    out.push(match dir {
        Direction::Read => &FIELD_READS,
        Direction::Write => &FIELD_WRITES,
    });
    out.push(match role {
        Role::Log => &LOG_FILES,
        _ => &DATA_FILES,
    });
    out
}

impl Guideline {
    /// The band `mean_ms` falls in (index, label).
    pub fn classify(&self, mean_ms: f64) -> (usize, &'static str) {
        for (i, b) in self.bands.iter().enumerate() {
            let inside = if b.inclusive {
                mean_ms <= b.limit_ms
            } else {
                mean_ms < b.limit_ms
            };
            if inside {
                return (i, b.label);
            }
        }
        let last = self.bands.len() - 1;
        (last, self.bands[last].label)
    }
}

/// One judgement: one direction of one workload against one table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Read or write.
    pub direction: Direction,
    /// The mean latency judged, in milliseconds.
    pub mean_ms: f64,
    /// Table identifier.
    pub guideline: String,
    /// Who says so, with the reference tag.
    pub source: String,
    /// Short name with the tag.
    pub short: String,
    /// What the table measures.
    pub title: String,
    /// The source's word for this latency.
    pub label: String,
    /// True when the band is one the source calls a problem.
    pub problem: bool,
}

/// Judges one direction's mean latency (µs) on a file with `role`.
pub fn judge(role: Role, dir: Direction, mean_us: f64) -> Vec<Verdict> {
    let mean_ms = mean_us / 1000.0;
    tables_for(role, dir)
        .into_iter()
        .map(|g| {
            let (i, label) = g.classify(mean_ms);
            Verdict {
                direction: dir,
                mean_ms,
                guideline: g.id.to_string(),
                source: g.source.to_string(),
                short: g.short.to_string(),
                title: g.title.to_string(),
                label: label.to_string(),
                problem: i >= g.first_bad,
            }
        })
        .collect()
}

/// Judges every direction that did I/O in a result.
pub fn judge_result(role: Role, r: &crate::runner::RunResult) -> Vec<Verdict> {
    let mut out = Vec::new();
    for (dir, d) in [
        (Direction::Read, &r.total.read),
        (Direction::Write, &r.total.write),
    ] {
        if d.ios > 0 {
            out.extend(judge(role, dir, d.latency_us.mean));
        }
    }
    out
}

/// One line per direction: `read  mean 0.420 ms: [Randal] Excellent; [MS-IO] Excellent; ...`.
pub fn text_lines(verdicts: &[Verdict]) -> Vec<String> {
    let mut out = Vec::new();
    for dir in [Direction::Read, Direction::Write] {
        let vs: Vec<&Verdict> = verdicts.iter().filter(|v| v.direction == dir).collect();
        let Some(first) = vs.first() else { continue };
        let parts: Vec<String> = vs
            .iter()
            .map(|v| {
                format!(
                    "{} {}{}",
                    v.short,
                    v.label,
                    if v.problem { " [!]" } else { "" },
                )
            })
            .collect();
        out.push(format!(
            "{} mean {:.3} ms: {}",
            match dir {
                Direction::Read => "read ",
                Direction::Write => "write",
            },
            first.mean_ms,
            parts.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(g: &Guideline, ms: f64) -> &'static str {
        g.classify(ms).1
    }

    #[test]
    fn randal_boundaries() {
        assert_eq!(label(&RANDAL, 0.5), "Excellent");
        assert_eq!(label(&RANDAL, 1.0), "Very good");
        assert_eq!(label(&RANDAL, 4.99), "Very good");
        assert_eq!(label(&RANDAL, 5.0), "Good");
        assert_eq!(label(&RANDAL, 10.0), "Poor");
        assert_eq!(label(&RANDAL, 20.0), "Bad");
        assert_eq!(label(&RANDAL, 100.0), "Shockingly bad");
        assert_eq!(label(&RANDAL, 500.0), "Shockingly bad");
        assert_eq!(label(&RANDAL, 500.1), "WOW");
    }

    #[test]
    fn css_boundaries_include_whole_number_ends() {
        assert_eq!(label(&CSS, 1.99), "Excellent");
        assert_eq!(label(&CSS, 2.0), "Very good");
        assert_eq!(label(&CSS, 5.0), "Very good");
        assert_eq!(label(&CSS, 5.5), "Good");
        assert_eq!(label(&CSS, 15.0), "Good");
        assert_eq!(label(&CSS, 15.01), "Poor");
        assert_eq!(label(&CSS, 100.0), "Poor");
        assert_eq!(label(&CSS, 500.0), "Bad");
        assert_eq!(label(&CSS, 501.0), "Deplorable");
    }

    #[test]
    fn whitepaper_and_field_guidance() {
        assert_eq!(label(&DISKSPD_WHITEPAPER, 10.0), "Ideal");
        assert_eq!(label(&DISKSPD_WHITEPAPER, 10.5), "May impact");
        assert_eq!(label(&DISKSPD_WHITEPAPER, 20.0), "May impact");
        assert_eq!(label(&DISKSPD_WHITEPAPER, 20.01), "Impacted");
        assert_eq!(label(&FIELD_READS, 7.9), "Excellent");
        assert_eq!(label(&FIELD_READS, 8.0), "Good");
        assert_eq!(label(&FIELD_READS, 12.0), "Fair");
        assert_eq!(label(&FIELD_READS, 20.0), "Poor");
        assert_eq!(label(&FIELD_WRITES, 0.9), "Excellent");
        assert_eq!(label(&FIELD_WRITES, 1.0), "Good");
        assert_eq!(label(&FIELD_WRITES, 2.0), "Fair");
        assert_eq!(label(&FIELD_WRITES, 4.0), "Poor");
    }

    #[test]
    fn log_and_data_files() {
        assert_eq!(label(&DATA_FILES, 5.0), "Excellent");
        assert_eq!(label(&DATA_FILES, 5.001), "Above 5 ms");
        assert_eq!(label(&LOG_FILES, 2.0), "Acceptable");
        assert_eq!(label(&LOG_FILES, 2.5), "Too slow for a log");
    }

    #[test]
    fn role_decides_the_tables() {
        let ids = |r, d| tables_for(r, d).iter().map(|g| g.id).collect::<Vec<_>>();
        assert!(ids(Role::Log, Direction::Write).contains(&"log-0-2ms"));
        assert!(ids(Role::Log, Direction::Write).contains(&"field-2012-cached-writes"));
        assert!(!ids(Role::Log, Direction::Write).contains(&"data-0-5ms"));
        assert!(ids(Role::Data, Direction::Read).contains(&"field-2012-reads"));
        assert!(ids(Role::Tempdb, Direction::Read).contains(&"data-0-5ms"));
        assert_eq!(ids(Role::Backup, Direction::Write).len(), 3);
    }

    #[test]
    fn judge_marks_problems() {
        let v = judge(Role::Log, Direction::Write, 3000.0);
        let log = v.iter().find(|v| v.guideline == "log-0-2ms").unwrap();
        assert!(log.problem);
        assert_eq!(log.mean_ms, 3.0);
        let randal = v.iter().find(|v| v.guideline == "randal").unwrap();
        assert_eq!(randal.label, "Very good");
        assert!(!randal.problem);
        let v = judge(Role::Data, Direction::Read, 25_000.0);
        assert!(v.iter().all(|v| v.problem), "{v:?}");
    }

    #[test]
    fn text_lines_name_sources() {
        let mut v = judge(Role::Data, Direction::Read, 400.0);
        v.extend(judge(Role::Data, Direction::Write, 12_000.0));
        let lines = text_lines(&v);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("read  mean 0.400 ms: [Randal] Excellent; [MS-IO] Excellent;"));
        assert!(lines[1].contains("[Randal] Poor [!];"), "{}", lines[1]);
        assert!(
            lines[1].contains("[MS-2012] cached writes Poor [!]"),
            "{}",
            lines[1]
        );
    }
}
