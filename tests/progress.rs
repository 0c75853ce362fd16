//! What a run says while and after it works: the progress line fits the
//! terminal it is drawn on (a real pseudo-terminal: tmux), and a profile
//! run does not claim to have "reused" files it has just created.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

/// Runs the profile on new files, then again on the same files.
#[test]
fn profile_says_created_then_reused() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("db.dat");
    let run = || {
        success(
            iosim()
                .args(["run", "--profile", "oltp-with-log"])
                .arg(&data)
                .args(["--size", "8M", "--duration", "300ms", "--no-save"]),
        )
    };
    let first = run();
    assert!(!first.contains("reused"), "{first}");
    assert!(
        first.contains(&format!("{}: created by this profile run", data.display())),
        "{first}"
    );
    let second = run();
    assert!(
        second.contains(&format!(
            "{}: reused the existing test file",
            data.display()
        )),
        "{second}"
    );
    assert!(!second.contains("created by this profile run"), "{second}");
}

/// tmux on the pane's own server (`-L`): panes never share a server, so one
/// pane's server exiting as its last session is killed cannot meet the next
/// pane's `new-session` ("server exited unexpectedly", seen beside a build).
fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .args(["-L", socket])
        .args(args)
        .output()
        .unwrap()
}

/// A detached tmux session `name` of `cols` columns running `cmd`; killed on drop.
struct Pane(String);

impl Pane {
    fn new(name: &str, cols: u16, cmd: &str) -> Pane {
        let o = tmux(
            name,
            &[
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                &cols.to_string(),
                "-y",
                "20",
                cmd,
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Keep the pane (and its text) after the command exits.
        tmux(name, &["set-option", "-t", name, "remain-on-exit", "on"]);
        Pane(name.to_string())
    }

    /// The screen, wrapped lines joined (`-J`), so a line longer than the
    /// pane shows as one long line.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&tmux(&self.0, &["capture-pane", "-p", "-J", "-t", &self.0]).stdout)
            .into_owned()
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        tmux(&self.0, &["kill-server"]);
    }
}

/// The progress line on a narrow and a wide terminal: it is drawn, it shows
/// the figures once measuring starts, and no drawn line is wider than the pane.
#[test]
fn progress_line_fits_the_terminal() {
    if !have("tmux") {
        crate::common::skip("tmux is not installed (apt-get install -y tmux): the progress line was not checked on a terminal");
        return;
    }
    let bin = crate::common::bin();
    for cols in [40u16, 60, 100] {
        let d = tempfile::tempdir().unwrap();
        let done = d.path().join("done");
        // A long description (mixed sizes) and a run long enough to draw figures.
        let cmd = format!(
            "{bin} run --engine null --size 8M --bssplit 8K/70:64K/25:1M/5 --rw randrw --write-pct 30 -d 3s --interval 250ms --no-save > /dev/null; touch {}",
            done.display()
        );
        let name = format!("iosim-progress-{}-{cols}", std::process::id());
        let pane = Pane::new(&name, cols, &cmd);
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !Path::new(&done).exists() && Instant::now() < deadline {
            let s = pane.screen();
            if s.contains("IOPS") {
                seen.push(s);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(done.exists(), "the run did not finish: {}", pane.screen());
        assert!(
            !seen.is_empty(),
            "{cols} columns: no progress line with figures was drawn"
        );
        for s in &seen {
            for l in s.lines() {
                assert!(
                    l.chars().count() <= usize::from(cols),
                    "{cols} columns: a {}-column line: {l:?}\n{s}",
                    l.chars().count()
                );
            }
            // Drawn in place: one progress line, not one per tick.
            assert!(s.matches("IOPS").count() <= 1, "{s}");
        }
    }
}
