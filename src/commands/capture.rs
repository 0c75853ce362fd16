//! `iosim capture DEVICE --duration 60s -o NAME`.

use super::Ctx;
use crate::capture::CaptureConfig;
use crate::cli::capture::CaptureArgs;
use crate::outcome::Outcome;

/// Captures, then prints what was written.
pub fn run(a: &CaptureArgs, ctx: &mut Ctx) -> anyhow::Result<Outcome> {
    let cfg = CaptureConfig {
        device: a.device.clone(),
        duration: a.duration,
        output: a.output.clone(),
        method: a.method,
    };
    crate::say!(
        "iosim: tracing {} for {} (Ctrl-C stops early)",
        a.device.display(),
        crate::units::format_duration_arg(a.duration)
    );
    let rep = crate::capture::capture(&cfg, &ctx.stop)?;
    let text = if a.json {
        serde_json::to_string_pretty(&rep)? + "\n"
    } else {
        rep.text()
    };
    ctx.out.write_all(text.as_bytes())?;
    let stopped = ctx.stop.load(std::sync::atomic::Ordering::Relaxed);
    Ok(if stopped {
        Outcome::Interrupted
    } else {
        Outcome::Success
    })
}
