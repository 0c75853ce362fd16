//! The integration tests: one test binary (`cargo test --test it`), one module
//! per front end or concept, each running the real `iosim` binary through
//! [`common::iosim`] on temporary files and loop devices. One binary instead
//! of one per file: one link instead of 22, and one place that launches iosim.
//!
//! They run on Linux (loop devices, /proc, blktrace, Linux tools). The
//! Windows build is tested from here too, under Wine: [`windows`] runs the
//! cross-compiled `iosim.exe` (.ci/windows.sh builds it).
#![cfg(target_os = "linux")]
// The tests say what they do on their own stderr, which cargo captures.
#![allow(clippy::disallowed_macros)]

mod architecture;
mod changes;
mod common;
mod compat;
mod cpu;
mod crash;
mod csv;
mod dbms;
mod durability;
mod engine;
mod fingerprint;
mod histlog;
mod install;
mod loop_checks;
mod matrix;
mod metrics;
mod mpi;
mod neighbour;
mod profile;
mod progress;
mod properties;
mod qualify;
mod readme;
mod reliability;
mod replay;
mod report_browser;
mod run;
mod sim;
mod store;
mod sweep;
mod verify;
mod window;
mod windows;
mod workloads;
