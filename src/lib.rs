//! iosim: a storage benchmark and database-I/O simulator for Linux.
//!
//! The library holds everything; the `iosim` binary is a thin front end.
//! Modules are named after the concept they hold:
//!
//! - [`workload`]: what to run ([`workload::WorkloadSpec`]) and offset generators;
//! - [`target`]: test files and block devices, creation and safety rules;
//! - [`engine`]: the I/O engine trait and its io_uring, sync and null engines;
//! - [`runner`]: worker threads, the hot loop, merging, the result schema;
//! - [`stats`]: histograms and summaries;
//! - [`sysmon`]: CPU (and device) counters from `/proc`;
//! - [`report`]: text, JSON and CSV output;
//! - [`quick`]: the default corner-case suite;
//! - [`store`]: the run history database, `history`/`show`/`compare`;
//! - [`html`]: the HTML report and SVG/PNG charts.
//! - [`sim`]: `iosim sim`, the database-engine I/O simulator (SQLIOSim's job);
//! - [`verify`]: the simulator's page and log-block formats and checks;
//! - [`profile`]: database workload profiles (`iosim run --profile`);
//! - [`verdict`]: latency verdicts from the SQL Server guideline tables;
//! - [`matrix`]: `iosim matrix`, the ORION-style load matrix.
#![warn(missing_docs)]

pub mod buf;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod compat;
pub mod engine;
pub mod error;
pub mod html;
pub mod matrix;
pub mod outcome;
pub mod profile;
pub mod quick;
pub mod report;
pub mod runner;
pub mod sim;
pub mod stats;
pub mod store;
pub mod sweep;
pub mod sysmon;
pub mod target;
pub mod units;
pub mod verdict;
pub mod verify;
pub mod workload;

pub use error::Error;
