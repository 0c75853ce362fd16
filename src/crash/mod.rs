//! `iosim crash`: does the storage keep what it acknowledged across a crash?
//!
//! - [`acklog`]: the acknowledgement log (format, writer, reader);
//! - [`writer`]: `iosim crash write`, the database-shaped write workload;
//! - [`profile`]: `crash write --profile`, a workload profile as the writer's mix;
//! - [`check`]: `iosim crash verify`, the verdict.
//!
//! The command line is in `cli::crash`, the handler in `commands::crash`.

pub mod acklog;
pub mod check;
pub mod profile;
pub mod writer;
