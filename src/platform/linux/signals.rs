//! Stop requests on Linux: SIGINT (Ctrl-C) and SIGTERM.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// SIGINT/SIGTERM set `stop`, which workers poll; a second one exits at
/// once with `exit_code`.
pub fn install_stop_handlers(stop: &Arc<AtomicBool>, exit_code: i32) -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, exit_code, stop.clone())?;
        signal_hook::flag::register(sig, stop.clone())?;
    }
    Ok(())
}
