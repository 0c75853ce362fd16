//! `iosim completions` and `iosim manpages` (issue 15, item 5): the scripts
//! and pages are generated and name every command. The command list comes
//! from clap itself, so a new command cannot be forgotten.

use crate::common;

use clap::CommandFactory;
use common::{iosim, success};

/// Every visible command, from the library's clap definition.
fn commands() -> Vec<String> {
    let cmd = iosim::cli::Cli::command();
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    assert!(names.len() > 10, "too few commands: {names:?}");
    assert!(names.iter().any(|n| n == "completions"));
    names
}

#[test]
fn completion_scripts_name_every_command() {
    let names = commands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = success(iosim().args(["completions", shell]));
        assert!(script.len() > 1000, "{shell}: script too short");
        for name in &names {
            assert!(
                script.contains(name.as_str()),
                "the {shell} completion script does not mention `{name}`"
            );
        }
    }
    // A real option value too: bash completes `--rw` for run.
    let bash = success(iosim().args(["completions", "bash"]));
    assert!(bash.contains("--rw"));
}

#[test]
fn bash_completion_script_is_valid_bash() {
    if !common::have("bash") {
        crate::common::skip("bash is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iosim.bash");
    std::fs::write(&path, success(iosim().args(["completions", "bash"]))).unwrap();
    // Source it and ask for the words completing `iosim cr`.
    let script = format!(
        "source {}; COMP_WORDS=(iosim cr); COMP_CWORD=1; _iosim iosim cr iosim; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let out = success(std::process::Command::new("bash").args(["-c", &script]));
    let words: Vec<&str> = out.lines().collect();
    assert!(words.contains(&"create"), "{words:?}");
    assert!(words.contains(&"crash"), "{words:?}");
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let out = iosim().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash"));
}

#[test]
fn man_pages_cover_every_command() {
    let names = commands();
    let dir = tempfile::tempdir().unwrap();
    let mandir = dir.path().join("man1");
    let out = iosim().arg("manpages").arg(&mandir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let top = std::fs::read_to_string(mandir.join("iosim.1")).unwrap();
    assert!(top.contains(".TH iosim 1"), "not a man page: {top}");
    for name in &names {
        let page = mandir.join(format!("iosim-{name}.1"));
        let text = std::fs::read_to_string(&page)
            .unwrap_or_else(|e| panic!("no man page for `{name}` ({}): {e}", page.display()));
        assert!(
            text.contains(&format!(".TH iosim-{name} 1")),
            "{name}: not a man page"
        );
        assert!(
            top.contains(&format!("iosim\\-{name}(1)")),
            "iosim.1 does not list `{name}`"
        );
    }
    // Nested commands get their own page.
    assert!(mandir.join("iosim-profile-list.1").exists());
    // man renders it, when man is installed.
    if common::have("man") {
        let text = success(
            std::process::Command::new("man")
                .arg("-l")
                .arg(mandir.join("iosim-run.1"))
                .env("MANWIDTH", "80")
                .env("MAN_KEEP_FORMATTING", "0"),
        );
        assert!(text.contains("--rw"), "{text}");
    } else {
        eprintln!("note: man is not installed; pages not rendered");
    }
}

#[test]
fn man_pages_refuse_an_unwritable_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = iosim()
        .arg("manpages")
        .arg(file.join("sub"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot create"));
}
