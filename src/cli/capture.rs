//! `iosim capture DEVICE --duration 60s -o NAME`: record a device's I/O.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::duration_arg;
use crate::capture::Method;

/// `iosim capture`.
#[derive(Debug, Clone, Args)]
pub struct CaptureArgs {
    /// The block device to trace (a disk or partition, e.g. /dev/nvme0n1p2).
    pub device: PathBuf,

    /// How long to trace (Ctrl-C stops early and keeps what was traced).
    #[arg(long, short = 'd', value_parser = duration_arg, default_value = "60s")]
    pub duration: Duration,

    /// Output NAME: writes NAME.blktrace.0, NAME.blktrace.1, ... (one per CPU), as blktrace does; refuses while any NAME.blktrace.N exists.
    #[arg(long, short = 'o', value_name = "NAME")]
    pub output: PathBuf,

    /// blktrace (Debian's package, through debugfs), tracefs (the kernel's blk tracer), or auto (blktrace, else tracefs).
    #[arg(long, value_name = "METHOD", value_parser = method_arg, default_value = "auto")]
    pub method: Method,

    /// Print the capture report as JSON.
    #[arg(long)]
    pub json: bool,
}

fn method_arg(s: &str) -> Result<Method, String> {
    Ok(match s {
        "auto" => Method::Auto,
        "blktrace" => Method::Blktrace,
        "tracefs" => Method::Tracefs,
        _ => return Err(format!("'{s}': use auto, blktrace or tracefs")),
    })
}
