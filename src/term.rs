//! The terminal on stderr: its width, and progress-bar styles that fit it,
//! so a progress line never wraps (a wrapped line is redrawn as a new line
//! on every tick and floods the screen).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stderr found its reader gone (`2>&1 | head`).
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

/// Writes one line to stderr, as `eprintln!` does, but never panics: a
/// stderr whose reader went away (`iosim run ... 2>&1 | head -8`) is
/// remembered ([`stderr_gone`]) and later lines are dropped. Every note,
/// warning and error line goes through here ([`crate::say!`]); clippy.toml
/// disallows `eprintln!`.
pub fn stderr_line(args: std::fmt::Arguments<'_>) {
    if STDERR_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut e = std::io::stderr().lock();
    let wrote = e.write_fmt(args).and_then(|()| e.write_all(b"\n"));
    if wrote.is_err_and(|err| err.kind() == std::io::ErrorKind::BrokenPipe) {
        STDERR_GONE.store(true, Ordering::Relaxed);
    }
}

/// Writes `text` to stderr as it is, never panicking ([`stderr_line`]).
pub fn stderr_text(text: &str) {
    if STDERR_GONE.load(Ordering::Relaxed) {
        return;
    }
    if std::io::stderr()
        .lock()
        .write_all(text.as_bytes())
        .is_err_and(|err| err.kind() == std::io::ErrorKind::BrokenPipe)
    {
        STDERR_GONE.store(true, Ordering::Relaxed);
    }
}

/// True once a line to stderr found its reader gone: the process then ends
/// as a tool killed by SIGPIPE would (exit status 141), as for stdout.
pub fn stderr_gone() -> bool {
    STDERR_GONE.load(Ordering::Relaxed)
}

/// Columns assumed when stderr is not a terminal (or does not say).
pub const DEFAULT_WIDTH: u16 = 80;

/// Columns of the terminal on stderr ([`DEFAULT_WIDTH`] when unknown).
pub fn width() -> u16 {
    console::Term::stderr()
        .size_checked()
        .map_or(DEFAULT_WIDTH, |(_, cols)| cols)
}

/// The first template of `templates` (widest first) whose minimum width
/// `width` reaches, else the last. Each template ends its line with
/// `{wide_msg}` (or has one), which indicatif cuts to what is left of the
/// width, so the whole line fits.
pub fn template(width: u16, templates: &[(u16, &'static str)]) -> &'static str {
    templates
        .iter()
        .find(|(min, _)| width >= *min)
        .or(templates.last())
        .map_or("{wide_msg}", |t| t.1)
}

/// A progress style from [`template`] for the terminal's width.
pub fn style(templates: &[(u16, &'static str)]) -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(template(width(), templates))
        .expect("static template")
        .progress_chars("=> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_widest_that_fits() {
        let t = [
            (70, "a {wide_msg}"),
            (40, "b {wide_msg}"),
            (0, "{wide_msg}"),
        ];
        assert_eq!(template(120, &t), "a {wide_msg}");
        assert_eq!(template(70, &t), "a {wide_msg}");
        assert_eq!(template(69, &t), "b {wide_msg}");
        assert_eq!(template(12, &t), "{wide_msg}");
        assert_eq!(template(12, &t[..2]), "b {wide_msg}");
    }
}
