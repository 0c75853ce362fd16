//! The Linux side of [`crate::platform`].

pub mod clock;
pub mod counters;
pub mod errno;
pub mod fs;
pub mod host;
pub mod io;
pub mod memory;
pub mod process;
pub mod signals;

pub const OS_NAME: &str = "Linux";
