//! Fuzz target bodies: every parser of outside input, as a function that
//! takes arbitrary bytes and must return (Ok or a typed error) without
//! panicking, looping or allocating without bound.
//!
//! The cargo-fuzz targets in `fuzz/` call these (a long coverage-guided
//! campaign, nightly); `tests/properties.rs` drives them on stable over the
//! seed corpus (`fuzz/corpus/`, the shipped examples and the snapshot
//! command lines) plus a fixed number of deterministic mutations of each
//! seed, so every CI run exercises them. See docs/reliability.md.

use crate::sim::config::SimConfig;

/// A fuzz target's body.
pub type Target = fn(&[u8]);

/// The targets by name, as `fuzz/fuzz_targets/<name>.rs` and the corpus
/// directories `fuzz/corpus/<name>/` call them.
pub const TARGETS: [(&str, Target); 10] = [
    ("units", units),
    ("cli", cli),
    ("sqlio_cmdline", sqlio_cmdline),
    ("diskspd_cmdline", diskspd_cmdline),
    ("sqlio_param_file", sqlio_param_file),
    ("sim_ini", sim_ini),
    ("sim_toml", sim_toml),
    ("profile_toml", profile_toml),
    ("history_migration", history_migration),
    ("trace", trace),
];

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Splits the input into command-line words (whitespace; a NUL or newline
/// also separates, so a word may hold spaces after a mutation).
fn words(data: &[u8]) -> Vec<String> {
    text(data)
        .split(|c: char| c.is_whitespace() || c == '\0')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The size and duration parsers (`--size 4G`, `-d 30s`, DiskSpd's `-b8K`).
pub fn units(data: &[u8]) {
    let t = text(data);
    let _ = crate::units::parse_size(&t);
    let _ = crate::units::parse_duration(&t);
    let _ = crate::compat::diskspd::parse_size("-b", &t);
    if let Ok(n) = crate::units::parse_size(&t) {
        // What is parsed prints back, and the printed form parses again.
        let _ = crate::units::parse_size(&crate::units::format_size_arg(n));
    }
}

/// iosim's own command line (clap, value parsers and the checks behind them).
pub fn cli(data: &[u8]) {
    use clap::Parser;
    let mut args = vec!["iosim".to_string()];
    args.extend(words(data));
    let _ = crate::cli::Cli::try_parse_from(args);
}

/// SQLIO's command line.
pub fn sqlio_cmdline(data: &[u8]) {
    let mut w = crate::compat::Warnings::default();
    let _ = crate::compat::sqlio::parse(&words(data), &mut w);
}

/// DiskSpd's command line.
pub fn diskspd_cmdline(data: &[u8]) {
    let mut w = crate::compat::Warnings::default();
    let _ = crate::compat::diskspd::parse(&words(data), &mut w);
}

/// SQLIO's parameter file (`-F`).
pub fn sqlio_param_file(data: &[u8]) {
    let _ = crate::compat::sqlio::parse_param_file(&text(data), "fuzz");
}

/// The simulator's INI, then the checks a run makes before it starts.
pub fn sim_ini(data: &[u8]) {
    if let Ok((cfg, _)) = crate::sim::config::parse_ini(&text(data), "fuzz") {
        finalize(cfg);
    }
}

/// The simulator's native TOML, then the same checks.
pub fn sim_toml(data: &[u8]) {
    if let Ok((cfg, _)) = crate::sim::config::parse_toml(&text(data), "fuzz") {
        finalize(cfg);
    }
}

fn finalize(mut cfg: SimConfig) {
    if cfg.finalize().is_ok() {
        // What a run would allocate is computed without overflow.
        let _ = cfg.memory_needed();
    }
}

/// A workload profile's TOML.
pub fn profile_toml(data: &[u8]) {
    let _ = crate::profile::Profile::parse(&text(data), "fuzz");
}

/// The history database's migration over a version-1 row whose stored
/// document is the input (the migration reads every old document).
pub fn history_migration(data: &[u8]) {
    let Ok(mut conn) = rusqlite::Connection::open_in_memory() else {
        return;
    };
    let doc = text(data);
    let setup = conn
        .execute_batch(crate::store::schema::V1_SQL)
        .and_then(|()| {
            conn.execute(
                "INSERT INTO runs (kind, started_at, doc) VALUES ('run', '2026-01-01T00:00:00Z', ?1)",
                [doc.as_ref()],
            )
        })
        .and_then(|_| conn.pragma_update(None, "user_version", 1));
    if setup.is_ok() {
        let _ = crate::store::schema::migrate(&mut conn);
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&doc) {
        let _ = crate::document::Document::from_value(v);
    }
}

/// Block traces for `iosim replay` (blktrace records, blkparse text, fio
/// iologs): read as one file and as two per-CPU files; what parses is
/// sorted, starts at time 0, and maps inside a small target.
pub fn trace(data: &[u8]) {
    crate::replay::fuzz_one(data);
}
