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
    if let Ok((cfg, _)) = crate::sim::config_parse::parse_ini(&text(data), "fuzz") {
        finalize(cfg);
    }
}

/// The simulator's native TOML, then the same checks.
pub fn sim_toml(data: &[u8]) {
    if let Ok((cfg, _)) = crate::sim::config_parse::parse_toml(&text(data), "fuzz") {
        finalize(cfg);
    }
}

/// The checks a run makes, then what the simulated users do with the values
/// (a NaN percentage once passed the parser and panicked in a user's
/// `gen_bool`): every choice a user draws from is sampled, and every wait a
/// user sleeps becomes a nanosecond deadline without overflow.
fn finalize(mut cfg: SimConfig) {
    use rand::{Rng, SeedableRng};
    if cfg.finalize().is_err() {
        return;
    }
    // What a run would allocate is computed without overflow.
    let _ = cfg.memory_needed();
    let ch = cfg
        .choices()
        .expect("a configuration finalize accepts gives the users valid choices");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(cfg.seed);
    for _ in 0..4 {
        let _ = rng.sample(ch.jump) | rng.sample(ch.cache_hit);
        let _ = rng.sample(ch.update) | rng.sample(ch.rollback);
        let _ = rng.gen_range(ch.chain.clone()) ^ rng.gen_range(ch.log_bytes.clone());
        let _ = rng.gen_range(ch.shrink_wait_ms.clone()) ^ rng.gen_range(ch.extends.clone());
    }
    // UserIo::nap's deadline: now + ms x 1e6 ns; the cycle's end: now + the duration.
    let now = crate::clock::now_ns();
    for ms in [
        cfg.random.sleep_after_ms,
        cfg.audit.delay_ms,
        cfg.read_ahead.delay_ms,
        cfg.bulk.delay_ms,
        cfg.target_io_duration_ms,
        *ch.shrink_wait_ms.end(),
    ] {
        assert!(
            ms.checked_mul(1_000_000)
                .and_then(|ns| ns.checked_add(now))
                .is_some(),
            "a wait of {ms} ms overflows a nanosecond deadline"
        );
    }
    assert!(
        u64::try_from(cfg.test_cycle_duration.as_nanos())
            .ok()
            .and_then(|ns| ns.checked_add(now))
            .is_some(),
        "TestCycleDuration overflows a nanosecond deadline"
    );
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
