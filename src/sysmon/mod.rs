//! System monitors: CPU time from `/proc/stat` and the process's own CPU use.
//!
//! Parsers are pure functions over the text of the `/proc` files, tested on
//! fixtures; sampling is done by the runner at the start and end of the
//! measured time.

pub mod cpu;
pub mod host;
