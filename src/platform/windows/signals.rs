//! Stop requests on Windows: the console's Ctrl-C and Ctrl-Break, and its
//! close, logoff and shutdown events (`SetConsoleCtrlHandler`).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static EXIT_CODE: AtomicI32 = AtomicI32::new(130);

unsafe extern "system" fn on_ctrl(_kind: u32) -> i32 {
    if let Some(stop) = STOP.get() {
        if stop.swap(true, Ordering::SeqCst) {
            // A second request: leave at once, as a second SIGINT does on Linux.
            std::process::exit(EXIT_CODE.load(Ordering::SeqCst));
        }
        return 1;
    }
    0
}

/// Ctrl-C (and the console's other stop events) set `stop`, which workers
/// poll; a second one exits at once with `exit_code`.
pub fn install_stop_handlers(stop: &Arc<AtomicBool>, exit_code: i32) -> std::io::Result<()> {
    EXIT_CODE.store(exit_code, Ordering::SeqCst);
    let _ = STOP.set(stop.clone());
    // SAFETY: registers a handler with the right signature for the process's lifetime.
    if unsafe { windows_sys::Win32::System::Console::SetConsoleCtrlHandler(Some(on_ctrl), 1) } == 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
