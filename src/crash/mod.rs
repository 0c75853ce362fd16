//! `iosim crash`: does the storage keep what it acknowledged across a crash?
//!
//! - [`acklog`]: the acknowledgement log (format, writer, reader);
//! - [`writer`]: `iosim crash write`, the database-shaped write workload;
//! - [`check`]: `iosim crash verify`, the verdict.
//!
//! The command line is in `cli::crash`, the handler in `commands::crash`.

pub mod acklog;
pub mod check;
pub mod writer;
