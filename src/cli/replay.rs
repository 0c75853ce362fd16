//! `iosim replay TRACE TARGET`: replay a captured block trace.

use std::path::PathBuf;

use clap::Args;

use super::db::SaveArgs;
use super::output::OutputArgs;
use super::values::size_arg;
use crate::replay::{BlkEvent, MapMode};
use crate::workload::{CacheMode, EngineKind};

/// `iosim replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// The trace: a blktrace file or the NAME of NAME.blktrace.N files (as from
    /// `iosim capture` or `blktrace -d DEV`), a blkparse text dump, or a fio iolog (v2/v3).
    pub trace: PathBuf,

    /// The file or block device to replay onto (a missing file is created as large as the trace reaches, or --size).
    pub target: PathBuf,

    /// Replay at N times the traced speed (2x: twice as fast; 0.5x: half).
    #[arg(long, value_name = "Nx", value_parser = speed_arg, default_value = "1x", conflicts_with = "afap")]
    pub speed: f64,

    /// As fast as possible at --qd, ignoring the trace's timing.
    #[arg(long)]
    pub afap: bool,

    /// I/Os in flight at most (io_uring slots).
    #[arg(long, default_value_t = 32)]
    pub qd: u32,

    /// Offsets onto a target of another size: none (as traced), scale, wrap, or auto (none when the trace fits, else scale).
    #[arg(long, value_name = "MODE", value_parser = map_arg, default_value = "auto")]
    pub map: MapMode,

    /// Subtract this many bytes from every traced offset first: the start of a traced
    /// partition on its disk (the kernel traces disk offsets; iosim capture prints it).
    #[arg(long, value_name = "BYTES", value_parser = size_arg, default_value = "0")]
    pub trace_offset: u64,

    /// blktrace event taken as the I/O stream: queue (Q, bios as submitted) or issue (D, requests sent to the driver).
    #[arg(long, value_name = "EVENT", value_parser = event_arg, default_value = "queue")]
    pub events: BlkEvent,

    /// Size of a test file to create.
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,

    /// Page-cache behaviour (direct: O_DIRECT, as the traced database most likely did).
    #[arg(long, value_enum, default_value_t = CacheMode::Direct)]
    pub cache: CacheMode,

    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineKind::Auto)]
    pub engine: EngineKind,

    /// Allow writing to block devices and to files iosim did not create.
    #[arg(long)]
    pub allow_destroy: bool,

    /// Output.
    #[command(flatten)]
    pub out: OutputArgs,

    /// History.
    #[command(flatten)]
    pub save: SaveArgs,

    /// Live metrics.
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

/// `2x`, `2`, `0.5x`.
fn speed_arg(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .strip_suffix(['x', 'X'])
        .unwrap_or(s)
        .parse()
        .map_err(|_| format!("'{s}' is not a speed factor: use e.g. 2x or 0.5x"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("'{s}': the speed factor must be above 0"))
    }
}

fn map_arg(s: &str) -> Result<MapMode, String> {
    Ok(match s {
        "auto" => MapMode::Auto,
        "none" => MapMode::None,
        "scale" => MapMode::Scale,
        "wrap" => MapMode::Wrap,
        _ => return Err(format!("'{s}': use auto, none, scale or wrap")),
    })
}

fn event_arg(s: &str) -> Result<BlkEvent, String> {
    Ok(match s {
        "queue" | "Q" => BlkEvent::Queue,
        "issue" | "D" => BlkEvent::Issue,
        _ => return Err(format!("'{s}': use queue (Q) or issue (D)")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(speed_arg("2x"), Ok(2.0));
        assert_eq!(speed_arg("0.5"), Ok(0.5));
        assert!(speed_arg("0x").is_err());
        assert!(speed_arg("fast").is_err());
        assert!(speed_arg("NaNx").is_err());
        assert_eq!(map_arg("wrap"), Ok(MapMode::Wrap));
        assert!(map_arg("fold").is_err());
        assert_eq!(event_arg("D"), Ok(BlkEvent::Issue));
    }
}
