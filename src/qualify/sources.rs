//! The public sources the rules and the latency tables cite ([`SOURCES`];
//! a database's own are in its module, [`crate::dbms`]), and which of them a
//! qualification for one database cites.

use crate::dbms::{Dbms, Guidance};

pub use crate::guidance::{is_absolute, Source};

/// Paul Randal's latency table.
pub const RANDAL: Source = Source {
    tag: "[Randal]",
    title: "Paul Randal, Are I/O latencies killing your performance? (SQLskills): excellent <1 ms, very good <5, good 5-10, poor 10-20, bad 20-100, shockingly bad 100-500, WOW >500",
    url: "https://www.sqlskills.com/blogs/paul/are-io-latencies-killing-your-performance/",
};
/// The DiskSpd-for-SQL white paper's table.
pub const DISKSPD_SQL: Source = Source {
    tag: "[DiskSpd-SQL]",
    title: "Robert Beene, Using DiskSpd in SQL Server environments (Microsoft): <=10 ms ideal, 11-20 ms may impact, >20 ms impacted",
    url: "https://github.com/microsoft/diskspd",
};
/// Microsoft field guidance 2012 (cached writes).
pub const MS_2012: Source = Source {
    tag: "[MS-2012]",
    title: "Microsoft field guidance 2012 (Dave Wentzel, Latency and IOPs): cached writes <1 ms excellent, <2 good, <4 fair, 4 ms and above poor",
    url: "http://davewentzel.com/content/latency-and-iops/",
};
/// The log/data rule of thumb (no address: its original was not located).
pub const LOG_VS_DATA: Source = Source {
    tag: "[Log-vs-data]",
    title:
        "rule of thumb in SQL Server guidance (original not located): log files 0-2 ms acceptable",
    url: "",
};
/// Microsoft's SQLIOSim article.
pub const SQLIOSIM: Source = Source {
    tag: "[SQLIOSim]",
    title: "Microsoft, Use the SQLIOSim utility to simulate SQL Server activity on a disk subsystem: any error it reports is a problem of the I/O path to fix before the database goes there",
    url: "https://learn.microsoft.com/en-us/troubleshoot/sql/tools/sqliosim-utility-simulate-activity-disk-subsystem",
};
/// SQL Server's error 833.
pub const MS_833: Source = Source {
    tag: "[MS-833]",
    title: "Microsoft, MSSQLSERVER_833: SQL Server has encountered occurrence(s) of I/O requests taking longer than 15 seconds to complete (a stalled I/O, a problem of the I/O subsystem)",
    url: "https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/mssqlserver-833-database-engine-error",
};
/// Microsoft's article on slow I/O.
pub const MS_IO: Source = Source {
    tag: "[MS-IO]",
    title: "Microsoft, Troubleshoot slow SQL Server performance caused by I/O issues: I/O waits consistently above 10-15 ms are a bottleneck; I/O requests taking over one second are cases that need optimization",
    url: "https://learn.microsoft.com/en-us/troubleshoot/sql/database-engine/performance/troubleshoot-sql-io-performance",
};
/// Dell's all-flash latency for SQL Server.
pub const DELL_FLASH: Source = Source {
    tag: "[Dell-flash]",
    title: "Dell EMC, Ready Solutions for Microsoft SQL: Design for Dell EMC XtremIO, Read and write latency: the gold standard for all-flash arrays is an average of 1 ms or less for all physical database operations",
    url: "https://infohub.delltechnologies.com/l/reference-architecture-guide-ready-solutions-for-microsoft-sql-design-for-dell-emc-xtremio-1/read-and-write-latency-12/",
};
/// Azure's flash disks for SQL Server.
pub const AZURE_PV2: Source = Source {
    tag: "[Azure-PremiumV2]",
    title: "Microsoft, Deploy a Premium SSD v2 (Azure): flash disks for SQL Server and other IO-intense workloads that require sub-millisecond disk latencies",
    url: "https://learn.microsoft.com/en-us/azure/virtual-machines/disks-deploy-premium-v2",
};
/// iosim's own self-checks (no address: the report's self-checks section
/// shows what they found).
pub const SELF_CHECK: Source = Source {
    tag: "[iosim self-check]",
    title: "iosim compares what it issued with the kernel's device counters, CPU use and the test file's content (the self-checks section of the report lists what it found)",
    url: "",
};

/// iosim's general latency bands, cited for a database that publishes no
/// storage latency target of its own.
pub const GENERAL_BANDS: Source = Source {
    tag: "[iosim-bands]",
    title: "iosim's general latency bands: the limits of the --rules table (classic or flash), drawn from SQL Server's published guidance ([Randal], [DiskSpd-SQL], [MS-2012], [MS-IO], [MS-833]) and applied to a database whose documentation publishes no storage latency target",
    url: "",
};

/// Every source the rules and the latency tables cite. A new `Source`
/// above belongs here too (a test checks); [`sources_for`] picks those of
/// one database for the report's references list.
pub const SOURCES: &[Source] = &[
    RANDAL,
    DISKSPD_SQL,
    MS_IO,
    MS_2012,
    LOG_VS_DATA,
    SQLIOSIM,
    MS_833,
    DELL_FLASH,
    AZURE_PV2,
    MARKS_CACHE,
    SELF_CHECK,
    GENERAL_BANDS,
];

/// SQL Server's own guidance: cited as is for SQL Server, through
/// [`GENERAL_BANDS`] for the other databases.
const SQL_SERVER_GUIDANCE: [&str; 8] = [
    RANDAL.tag,
    DISKSPD_SQL.tag,
    MS_IO.tag,
    MS_2012.tag,
    LOG_VS_DATA.tag,
    MS_833.tag,
    DELL_FLASH.tag,
    AZURE_PV2.tag,
];

/// The sources the rules of a qualification for `dbms` can cite: SQL
/// Server's guidance as it is for the database whose guidance the
/// `--rules` table is, iosim's general bands for the others, then the
/// sources of the database's own flush targets.
pub fn sources_for(dbms: Dbms) -> Vec<Source> {
    let own = dbms.guidance() == Guidance::RulesTable;
    SOURCES
        .iter()
        .copied()
        .filter(|s| {
            if own {
                s.tag != GENERAL_BANDS.tag
            } else {
                !SQL_SERVER_GUIDANCE.contains(&s.tag)
            }
        })
        .chain(dbms.flushes().targets().iter().flat_map(|t| t.sources()))
        .collect()
}

/// The source a rule cites for `dbms`: SQL Server's guidance is cited
/// through iosim's general bands for the other databases.
pub fn cite(dbms: Dbms, s: Source) -> Source {
    cited_instead(dbms, s.tag).unwrap_or(s)
}

/// What a reason that cites `tag` cites instead for `dbms` (None: the
/// source it names): [`GENERAL_BANDS`] in place of SQL Server's guidance
/// for the other databases. No source is looked up by its tag, so none
/// can be missing.
pub fn cited_instead(dbms: Dbms, tag: &str) -> Option<Source> {
    (dbms.guidance() != Guidance::RulesTable && SQL_SERVER_GUIDANCE.contains(&tag))
        .then_some(GENERAL_BANDS)
}

/// Howard Marks on measuring storage, not its cache.
pub const MARKS_CACHE: Source = Source {
    tag: "[Marks-cache]",
    title: "Howard Marks, Most Of Our Benchmarks Are Broken (Network Computing, 2011): run the benchmark across a data set at least several times the size of the cache, so that a fast cache is not seen as a fast storage system",
    url: "https://www.networkcomputing.com/data-centers/most-our-benchmarks-are-broken",
};

#[cfg(test)]
mod tests {
    use super::super::reason::{Level, Reason};
    use super::*;
    use crate::guidance::RuleId;
    use crate::verdict::Role;

    #[test]
    fn every_source_is_listed_with_an_absolute_address_or_none() {
        // Each `pub const NAME: Source` of this file is in SOURCES, so the
        // report's references list every source a rule can cite.
        let text = include_str!("sources.rs");
        let list_at = text.find("pub const SOURCES").unwrap();
        let list = &text[list_at..list_at + text[list_at..].find("];").unwrap()];
        for line in text.lines() {
            let Some(name) = line
                .strip_prefix("pub const ")
                .and_then(|l| l.strip_suffix(": Source = Source {"))
            else {
                continue;
            };
            assert!(
                list.contains(&format!("    {name},")),
                "add {name} to SOURCES (the report's references list)"
            );
        }
        let mut tags: Vec<&str> = SOURCES.iter().map(|s| s.tag).collect();
        tags.sort();
        tags.dedup();
        assert_eq!(tags.len(), SOURCES.len(), "one entry per tag");
        for s in SOURCES {
            assert!(
                s.url.is_empty() || is_absolute(s.url),
                "{}: a report that travels has no relative link: {}",
                s.tag,
                s.url
            );
            assert!(s.tag.starts_with('[') && s.tag.ends_with(']'), "{}", s.tag);
        }
        let r = Reason::new(
            Role::Log,
            Level::Warning,
            RuleId::LogLatency,
            "x".into(),
            "y".into(),
            LOG_VS_DATA,
        );
        assert!(!r.line().contains('<'), "no empty address: {}", r.line());
    }

    #[test]
    fn sql_server_guidance_is_cited_through_the_general_bands_elsewhere() {
        for s in SOURCES {
            let guidance = SQL_SERVER_GUIDANCE.contains(&s.tag);
            assert_eq!(cite(Dbms::SQLSERVER, *s).tag, s.tag);
            assert!(cited_instead(Dbms::SQLSERVER, s.tag).is_none());
            let other = cite(Dbms::POSTGRESQL, *s).tag;
            assert_eq!(other, if guidance { GENERAL_BANDS.tag } else { s.tag });
        }
        // A tag no source has is cited as it is, not as another source.
        assert!(cited_instead(Dbms::POSTGRESQL, "[Later]").is_none());
    }
}
