//! [`Database`]: everything one database contributes to iosim, its names,
//! roles and profiles, the sweeps and settings of its qualification, where
//! its latency limits come from and its own flush rules. One module of
//! [`crate::dbms`] implements it per database.

use crate::guidance::{Band, RuleId, Source};
use crate::verdict::Role;

/// A setting a database's workloads assume, as its module gives it: name,
/// value, what it makes the database do to the storage, the documentation
/// it comes from (one of [`Database::doc_sources`]).
pub type SettingRow = (&'static str, &'static str, &'static str, Source);

/// A profile of `profiles/` as a database's module registers it: its name
/// and its TOML text (`include_str!`).
pub type ProfileFile = (&'static str, &'static str);

/// Where the latency limits of a database's qualification come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guidance {
    /// The `--rules` table is the database's own published guidance (SQL
    /// Server's): its sources are cited as they are, and the profiles'
    /// guideline tables are its words.
    RulesTable,
    /// It publishes no storage latency target: iosim's general latency
    /// bands judge it, citing `[iosim-bands]` instead of SQL Server's
    /// guidance.
    GeneralBands,
    /// Its own targets for some of its I/O ([`Database::flushes`]), the
    /// general bands for the rest.
    OwnTargets {
        /// What the report says its latency limits are.
        limits: &'static str,
        /// What a profile's verdicts (`iosim run --profile`) say of them.
        profile_note: &'static str,
    },
}

/// How a database's commits reach the storage, and so which flush rules
/// judge it.
#[derive(Clone, Copy, Debug)]
pub enum Flushes {
    /// Its log writes are write-through: no flush rule is listed (a flush
    /// measured on its log anyway is judged as a commit's).
    WriteThrough,
    /// Each commit flushes its log (`fsync`/`fdatasync`): the flushes'
    /// mean against the log's band, their tail as the log's.
    PerCommit,
    /// Its own targets for the flushes of some roles (the log's flushes
    /// by the general commit rule when none names the log).
    Targets(&'static [FlushTarget]),
}

/// A database's own limit on the flushes of one role, judged on their p99
/// (the slowest with fewer than 100 flushes).
#[derive(Clone, Debug)]
pub struct FlushTarget {
    /// The role whose flushes it judges.
    pub role: Role,
    /// The rule's id.
    pub rule: RuleId,
    /// What it judges, in the rules' list (`iosim qualify --plan`).
    pub judged: &'static str,
    /// What follows the limit in a reason (`: etcd's WAL needs...`).
    pub why: &'static str,
    /// Its limits in ms, worst first.
    pub limits: &'static [Band],
}

/// Where a database's workloads come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// Compared with the I/O a running copy of the database issues.
    Checked,
    /// Built from its documentation only: it cannot be installed where
    /// iosim is tested.
    DocumentedOnly,
    /// Built from its documentation and published descriptions of its
    /// I/O, until captured from the real engine.
    Literature,
}

/// Everything one database contributes: implemented once per database
/// (`src/dbms/NAME.rs`) and registered in [`crate::dbms`]'s list.
pub trait Database: Sync {
    /// Its name (`--dbms NAME`, `dbms = "NAME"` in a profile, JSON).
    fn name(&self) -> &'static str;
    /// As people write it.
    fn title(&self) -> &'static str;
    /// Other names accepted for it (`postgres`, `mariadb`...).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// Its line in `iosim qualify --help` (`--dbms`).
    fn help(&self) -> &'static str;
    /// What it calls the file iosim judges as `role` (PostgreSQL's log is
    /// its `wal`).
    fn role_name(&self, role: Role) -> &'static str {
        role.name()
    }
    /// The roles it has: data and log unless it says otherwise.
    fn roles(&self) -> &'static [Role] {
        &[Role::Data, Role::Log]
    }
    /// Its built-in profiles (`iosim profile list`), in the order listed.
    fn profile_files(&self) -> &'static [ProfileFile];
    /// The profiles its qualification runs, each with the role of each of
    /// its targets (in the profile's target order), given which of the
    /// optional roles are present.
    fn profiles(&self, has: &dyn Fn(Role) -> bool) -> Vec<(&'static str, Vec<Role>)>;
    /// Its data page: the block of the data sweeps' random reads.
    fn page_size(&self) -> u64 {
        8 << 10
    }
    /// Its log's write: the block of the log sweeps' writes.
    fn log_write(&self) -> u64 {
        8 << 10
    }
    /// The documentation its settings come from.
    fn doc_sources(&self) -> &'static [Source];
    /// The settings its workloads assume.
    fn settings(&self) -> &'static [SettingRow];
    /// Where its latency limits come from.
    fn guidance(&self) -> Guidance {
        Guidance::GeneralBands
    }
    /// How its commits reach the storage.
    fn flushes(&self) -> Flushes {
        Flushes::PerCommit
    }
    /// Where its workloads come from.
    fn provenance(&self) -> Provenance {
        Provenance::Checked
    }
    /// The simulator (`iosim sim`) issues its I/O: SQL Server's.
    fn simulated(&self) -> bool {
        false
    }
    /// What a queue-depth knee of `role` at `at` (`what`: "16 outstanding
    /// I/Os") means in its own settings; None: more concurrent commits or
    /// connections add only latency.
    fn knee_advice(&self, _role: Role, _at: f64, _what: &str) -> Option<String> {
        None
    }
}

impl FlushTarget {
    /// The sources its limits cite, worst first.
    pub fn sources(&self) -> impl Iterator<Item = Source> + '_ {
        self.limits.iter().map(|b| b.2)
    }
}

impl Flushes {
    /// Its own targets (none unless [`Flushes::Targets`]).
    pub fn targets(self) -> &'static [FlushTarget] {
        match self {
            Flushes::Targets(t) => t,
            _ => &[],
        }
    }
}
