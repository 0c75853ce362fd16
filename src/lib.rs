//! iosim: a storage benchmark and database-I/O simulator for Linux.
//!
//! The library holds everything; the `iosim` binary is a thin front end.
//! docs/architecture.md has the module map. Modules are named after the
//! concept they hold:
//!
//! - [`cli`]: every clap argument struct (clap's derive structs live only here);
//! - [`commands`]: one handler per command, returning an [`outcome::Outcome`];
//! - [`workload`]: what to run ([`workload::WorkloadSpec`]) and offset generators;
//! - [`target`]: test files and block devices, creation and safety rules;
//! - [`targetlock`]: the lock a run holds on each target, so no two processes measure one;
//! - [`engine`]: the I/O engine trait and its io_uring, sync, mmap and null engines;
//! - [`runner`]: worker threads, the hot loop, merging, the result schema;
//! - [`stats`]: histograms and summaries;
//! - [`sysmon`]: CPU and device counters from `/proc`, mounts, self-checks;
//! - [`report`]: text, JSON and CSV output of a run;
//! - [`quick`]: the default corner-case suite;
//! - [`sweep`]: parameter sweeps and the saturation knee;
//! - [`compat`]: the SQLIO and DiskSpd front ends;
//! - [`store`]: the run history database and stored documents shown again;
//! - [`comparison`]: differences, Welch's t-test and regressions between runs;
//! - [`html`]: the HTML report and SVG/PNG charts;
//! - [`histlog`]: the interval histogram log (`--hist-log`), written and read back;
//! - [`changes`]: rate limits and changes over time found in a run's series;
//! - [`limitprobe`]: `iosim run`'s probe of a rate limit it named, at twice the depth;
//! - [`neighbour`]: the noisy-neighbour study (`--neighbour`);
//! - [`sim`]: `iosim sim`, the database-engine I/O simulator (SQLIOSim's job);
//! - [`verify`]: the simulator's page and log-block formats and checks;
//! - [`profile`]: database workload profiles (`iosim run --profile`);
//! - [`dbms`]: the database engines the profiles and `qualify --dbms` model, one module each;
//! - [`guidance`]: the words of published guidance they share with `qualify`: sources, levels, bands, rule ids;
//! - [`verdict`]: latency verdicts from the SQL Server guideline tables;
//! - [`matrix`]: `iosim matrix`, the ORION-style load matrix;
//! - [`outcome`]: how a command ended and its exit status (one table);
//! - [`outfile`]: the files results are written to, and what becomes of one already there;
//! - [`units`], [`text`], [`clock`], [`buf`], [`error`]: sizes and durations,
//!   escaping, time, aligned buffers, typed errors.
//! - [`mpi`]: collective runs under mpirun/srun (MPI itself behind the `mpi` feature).
//! - [`metrics`]: live metrics for Prometheus (`--metrics-listen`): the state, its OpenMetrics text, the HTTP server;
//! - [`document`]: the typed result documents every measuring command ends with;
//! - [`qualify`]: `iosim qualify`, the storage qualification and its verdict;
//! - [`crash`], [`replay`], [`capture`]: crash consistency, trace replay, trace capture;
//! - [`fingerprint`]: a trace's statistics per layer and stream, the profile that reproduces them, two compared;
//! - [`fsync`]: `iosim fsync`, pg_test_fsync's question with advice for the databases;
//! - [`csvout`]: the one CSV writer;
//! - [`platform`]: what differs between Linux and Windows, one module per concern;
//! - [`term`]: the terminal's width;
//! - [`fuzzing`]: the fuzz targets' bodies.
//! - [`neighbour`]: noisy neighbours measured (`--neighbour SPEC`).
#![warn(missing_docs)]

pub mod buf;
pub mod capture;
pub mod changes;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod comparison;
pub mod compat;
pub mod crash;
pub mod csvout;
pub mod dbms;
pub mod document;
pub mod engine;
pub mod error;
pub mod fingerprint;
pub mod fsync;
pub mod fuzzing;
pub mod guidance;
pub mod histlog;
pub mod html;
pub mod limitprobe;
pub mod matrix;
pub mod metrics;
pub mod mpi;
pub mod neighbour;
pub mod outcome;
pub mod outfile;
pub mod platform;
pub mod profile;
pub mod qualify;
pub mod quick;
pub mod replay;
pub mod report;
pub mod runner;
pub mod sim;
pub mod stats;
pub mod store;
pub mod sweep;
pub mod sysmon;
pub mod target;
pub mod targetlock;
pub mod term;
#[cfg(test)]
mod testkit;
pub mod text;
pub mod units;
pub mod verdict;
pub mod verify;
pub mod workload;

pub use error::Error;

/// `eprintln!` that never panics: a line to stderr through
/// [`term::stderr_line`], dropped once stderr's reader is gone.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::term::stderr_line(::std::format_args!($($arg)*))
    };
}
