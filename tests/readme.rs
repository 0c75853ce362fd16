//! The README must say what iosim does, and every command it shows must run
//! as written.
//!
//! - The SQLIO/DiskSpd/fio/iosim mapping table must say what `iosim
//!   translate` does: each cache row's SQLIO `-B` and DiskSpd `-S` option is
//!   translated, and the `--cache` mode it yields must be the one in the
//!   row's iosim column. (The README once said `-BN` was `--cache direct`
//!   while translate and docs/sqlio.md said direct-writethrough.)
//! - The tour: every command line of every ```sh block is run, in order, as
//!   a new user would type it (issue 23 found five that failed), on
//!   temporary directories and loop devices, scaled down (see [`SCALE`]).
//!   Each line runs through `sh -c` (pipes, redirections and `~` as typed)
//!   in a fresh home, history and working directory; `/mnt/...` and
//!   `/var/tmp/...` become directories under a temporary root, each
//!   `/dev/...` a loop device, `examples/` the checkout's, the run ids of
//!   `compare 12 15` stored runs, and [`SUBSTITUTE`] and [`ALONGSIDE`] say
//!   what else the test does and why. A line the test cannot run is listed
//!   in [`NOT_RUN`] with the reason; a new README line is run unless it is
//!   listed there, and an entry that no longer names a README line fails.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{iosim, success};

/// The `--cache` value in a translated command line.
fn cache_of(cmd: &str) -> String {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| *w == "--cache")
        .unwrap_or_else(|| panic!("no --cache in {cmd}"));
    words[i + 1].to_string()
}

/// The code spans (`...`) of a markdown table cell.
fn spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_cache_rows_match_translate() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let mut checked = 0;
    for line in readme.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 5 {
            continue;
        }
        let (sqlio, diskspd, native) = (spans(cells[1]), spans(cells[2]), spans(cells[4]));
        let Some(mode) = native
            .iter()
            .find_map(|s| s.strip_prefix("--cache ").map(str::to_string))
        else {
            continue;
        };
        for opt in sqlio.iter().filter(|s| s.starts_with("-B")) {
            let out = success(iosim().args(["translate", "sqlio", "-frandom", opt, "x.dat"]));
            assert_eq!(cache_of(&out), mode, "README row {line:?}: sqlio {opt}");
            checked += 1;
        }
        for opt in diskspd.iter().filter(|s| s.starts_with("-S")) {
            let out = success(iosim().args(["translate", "diskspd", opt, "-c1M", "x.dat"]));
            assert_eq!(cache_of(&out), mode, "README row {line:?}: diskspd {opt}");
            checked += 1;
        }
    }
    // -BH -BN -BY -BS and -Su -Sh -Sb -Sw: eight mappings in four rows.
    assert_eq!(checked, 8, "the README's cache rows were not all found");
}

/// README command lines the tour does not run (matched by their start), and why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "cargo install --path . --locked",
        "builds and installs iosim (minutes): the tour runs the binary cargo just built",
    ),
    (
        "cargo install --git REPO-URL",
        "needs the network and the repository's real URL",
    ),
    (
        "packaging/build-deb.sh",
        "needs cargo-deb and a release build (minutes); tests/install.rs checks its man pages and completions",
    ),
    (
        "packaging/build-windows.sh",
        "a release cross-build for Windows (minutes); .ci/windows.sh builds and tests iosim.exe under Wine",
    ),
    ("docker build", "needs docker and the network"),
    (
        "cargo run --release",
        "a release build; what it runs (the default benchmark) is `iosim quick`, run below",
    ),
    (".ci/run", "runs this test, and every other"),
    (
        "mpirun -np 16 --hostfile hosts",
        "needs a cluster's hostfile and the mpi feature; tests/mpi.rs runs iosim under mpirun -np 4",
    ),
];

/// Parts of README command lines the tour replaces, and why.
const SUBSTITUTE: &[(&str, &str, &str)] = &[
    (
        "ssh logger 'cat > acks.log'",
        "cat > acks.log",
        "the machine that logs the acknowledgements is this one",
    ),
    ("sudo ", "", "the tour runs as root (or skips device lines)"),
];

/// What the tour runs beside a README command (matched by the start of the
/// line as run; `{target}` is its first argument), and why.
const ALONGSIDE: &[(&str, &str, &str)] = &[(
    "iosim capture ",
    // One run that outlasts the capture and is stopped when it ends: a
    // loaded machine can take seconds to start the kernel's tracer, and runs
    // one after another left gaps between them that a 1 s capture fell into
    // (an empty trace on a CI run of 2026-12-02).
    "exec iosim run {target} --rw randread --bs 8K --qd 4 --duration 280s --quiet --no-save",
    "the database whose I/O the capture records: an idle device gives an empty trace",
)];

/// An option, the value the tour gives it, and whether it adds the option
/// when the line has none.
type Scaled = (&'static str, &'static str, bool);

/// How the tour scales a command down: per iosim command, an option and
/// the value it gets; `true` also adds the option when the line has none
/// (its default is too big or too long for a test: a 1 GiB file, 10 s).
/// `-d` counts as `--duration`. SQLIO's `-sN` and
/// DiskSpd's `-dN` and `-cSIZE` are scaled in [`scale_word`].
const SCALE: &[(&str, &[Scaled])] = &[
    (
        "quick",
        &[("--size", "64M", true), ("--duration", "1s", true)],
    ),
    (
        "run",
        &[("--size", "64M", false), ("--duration", "1s", true)],
    ),
    // 10 s is the smallest budget qualify accepts.
    (
        "qualify",
        &[("--time", "10s", true), ("--size", "64M", true)],
    ),
    (
        "crash write",
        &[("--size", "64M", false), ("--duration", "2s", true)],
    ),
    (
        "sim",
        &[
            ("--duration", "1s", true),
            ("--size", "16", true),
            ("--cycles", "1", true),
        ],
    ),
    (
        "sweep",
        &[("--size", "64M", false), ("--duration", "100ms", true)],
    ),
    (
        "matrix",
        &[("--size", "64M", false), ("--duration", "100ms", true)],
    ),
    ("capture", &[("--duration", "1s", true)]),
    // 16 tests: 100 ms each.
    ("fsync", &[("--duration", "100ms", true)]),
];

/// A command line of the README: its text (continuations joined, comments
/// removed) and the README line it starts on.
#[derive(Clone, Debug)]
struct Shown {
    text: String,
    line: usize,
}

/// Every command line of every ```sh block.
fn shown_commands(readme: &str) -> Vec<Shown> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending: Option<Shown> = None;
    for (i, raw) in readme.lines().enumerate() {
        let t = raw.trim_end();
        if t.starts_with("```") {
            in_sh = t == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let code = strip_comment(t);
        let (code, continued) = match code.trim_end().strip_suffix('\\') {
            Some(c) => (c.to_string(), true),
            None => (code.trim_end().to_string(), false),
        };
        let cur = match pending.take() {
            Some(mut p) => {
                p.text = format!("{} {}", p.text, code.trim());
                p
            }
            None => Shown {
                text: code.trim().to_string(),
                line: i + 1,
            },
        };
        if continued {
            pending = Some(cur);
        } else if !cur.text.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// A shell line without its `# comment` (a `#` at the start of a word,
/// outside quotes).
fn strip_comment(line: &str) -> String {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return line[..i].to_string(),
            _ => {}
        }
        prev = c;
    }
    line.to_string()
}

/// The words of an iosim command from `words[at]` (its name, with the
/// action of `crash` and `profile`): (command, index of its first option).
fn command_of(words: &[String], at: usize) -> (String, usize) {
    let name = words.get(at).cloned().unwrap_or_default();
    if ["crash", "profile"].contains(&name.as_str()) {
        if let Some(action) = words.get(at + 1) {
            return (format!("{name} {action}"), at + 2);
        }
    }
    (name, at + 1)
}

/// SQLIO's `-s120` (seconds) and DiskSpd's `-d60` (seconds) and `-c20G`
/// (file size), attached to their option letter.
fn scale_word(command: &str, word: &str) -> Option<String> {
    let value = |opt: &str| {
        word.strip_prefix(opt)
            .filter(|v| !v.is_empty() && v.starts_with(|c: char| c.is_ascii_digit()))
    };
    match command {
        "sqlio" => value("-s").map(|_| "-s1".to_string()),
        "diskspd" => value("-d")
            .map(|_| "-d1".to_string())
            .or_else(|| value("-c").map(|_| "-c64M".to_string())),
        _ => None,
    }
}

/// Scales one iosim command (`words[at]` is its name) down as [`SCALE`]
/// says; words from `end` on (a redirection) are left as they are.
fn scale(words: &mut Vec<String>, at: usize, end: usize) {
    let (command, first) = command_of(words, at);
    let mut end = end;
    for word in &mut words[first..end] {
        if let Some(w) = scale_word(&command, word) {
            *word = w;
        }
    }
    let Some((_, rules)) = SCALE.iter().find(|(c, _)| *c == command) else {
        return;
    };
    for (opt, value, add) in rules.iter() {
        let given = (first..end).find(|&i| {
            words[i] == *opt || (*opt == "--duration" && command != "sqlio" && words[i] == "-d")
        });
        match given {
            Some(i) if i + 1 < end => words[i + 1] = value.to_string(),
            Some(_) => panic!("{opt} without a value in {words:?}"),
            None if *add => {
                words.insert(end, value.to_string());
                words.insert(end, opt.to_string());
                end += 2;
            }
            None => {}
        }
    }
}

/// Where the tour runs: a fresh home, history, working directory, the
/// README's directories under a temporary root, and a loop device for each
/// block device it names.
struct Tour {
    root: tempfile::TempDir,
    bin: PathBuf,
    devices: BTreeMap<String, common::LoopDev>,
    /// The README's run ids (`compare 12 15`) and the stored ones they stand for.
    ids: BTreeMap<String, String>,
}

impl Tour {
    fn new() -> Tour {
        let root = tempfile::tempdir().unwrap();
        for d in ["home", "xdg", "work", "bin", "var/tmp"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        let bin = root.path().join("bin");
        std::os::unix::fs::symlink(crate::common::bin(), bin.join("iosim")).unwrap();
        Tour {
            root,
            bin,
            devices: BTreeMap::new(),
            ids: BTreeMap::new(),
        }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.path().join(p)
    }

    /// A shell in the tour's working directory, home and history.
    fn shell(&self, line: &str) -> Command {
        let mut c = Command::new("timeout");
        c.args(["-k", "10", "300", "sh", "-c", line])
            .current_dir(self.path("work"))
            .env("HOME", self.path("home"))
            .env("XDG_DATA_HOME", self.path("xdg"))
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    self.bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            );
        c
    }

    /// The stored results of kind `run`, newest first.
    fn stored_runs(&self) -> Vec<String> {
        let out = success(&mut self.shell("iosim history --kind run -o json"));
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].to_string())
            .collect()
    }

    /// The README line as the tour runs it, or why it cannot be run here.
    fn rewrite(&mut self, shown: &str, readme_ids: &[String]) -> Result<String, String> {
        let mut text = shown.to_string();
        for (from, to, _) in SUBSTITUTE {
            text = text.replace(from, to);
        }
        let mut words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        // Paths: the README's directories under the temporary root, its
        // block devices as loop devices, its example files from the checkout.
        for w in words.iter_mut() {
            if let Some(dev) = w.strip_prefix("/dev/") {
                if !self.devices.contains_key(dev) {
                    let lo = common::LoopDev::new(64 << 20)
                        .ok_or_else(|| format!("no loop device for /dev/{dev}"))?;
                    self.devices.insert(dev.to_string(), lo);
                }
                *w = self.devices[dev].dev.display().to_string();
                continue;
            }
            for top in ["/mnt/", "/var/tmp/"] {
                if let Some(at) = w.find(top) {
                    let (before, after) = w.split_at(at);
                    let under = self.root.path().join(&after[1..]);
                    if top == "/mnt/" {
                        let dir = after[top.len()..].split('/').next().unwrap();
                        std::fs::create_dir_all(self.path("mnt").join(dir)).unwrap();
                    }
                    *w = format!("{before}{}", under.display());
                }
            }
            if w.starts_with("examples/") {
                *w = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(&*w)
                    .display()
                    .to_string();
            }
        }
        // Run ids (`compare 12 15`, `--baseline 12`): the README's first
        // id is the older of the two newest stored runs, its second the newer.
        for i in 0..words.len() {
            if is_run_id(&words, i) {
                if self.ids.is_empty() {
                    let stored = self.stored_runs();
                    assert!(stored.len() >= 2, "the tour stored fewer than two runs");
                    for (n, id) in readme_ids.iter().enumerate() {
                        self.ids.insert(
                            id.clone(),
                            stored[(readme_ids.len() - 1 - n).min(1)].clone(),
                        );
                    }
                }
                words[i] = self.ids[&words[i]].clone();
            }
        }
        // Each iosim command (one per side of a pipe) scaled down.
        let mut start = 0;
        while start < words.len() {
            let end = words[start..]
                .iter()
                .position(|w| w == "|" || w == "&&" || w == ";")
                .map_or(words.len(), |p| start + p);
            if words[start] == "iosim" {
                let redirect = words[start..end]
                    .iter()
                    .position(|w| w.starts_with('>') || w.starts_with('<'))
                    .map_or(end, |p| start + p);
                let before = words.len();
                scale(&mut words, start + 1, redirect);
                let end = end + words.len() - before;
                start = end + 1;
            } else {
                start = end + 1;
            }
        }
        Ok(words.join(" "))
    }
}

/// Whether `words[i]` is a run id: a number given to `--baseline`, or to
/// `compare`, `report` or `show`.
fn is_run_id<S: AsRef<str>>(words: &[S], i: usize) -> bool {
    i > 0
        && words[i].as_ref().parse::<u64>().is_ok()
        && (words[i - 1].as_ref() == "--baseline"
            || words[..i]
                .iter()
                .any(|w| ["compare", "report", "show"].contains(&w.as_ref())))
}

/// The README's run ids, in the order they first appear.
fn readme_ids(commands: &[Shown]) -> Vec<String> {
    let mut ids = Vec::new();
    for c in commands {
        let words: Vec<&str> = c.text.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if is_run_id(&words, i) && !ids.contains(&w.to_string()) {
                ids.push(w.to_string());
            }
        }
    }
    ids
}

/// Exit statuses a README line may end with besides 0, by a word in it.
fn allowed_codes(line: &str) -> Vec<i32> {
    if line.contains("--baseline") {
        // "exit 4 on regression", as its comment says.
        vec![0, 4]
    } else {
        vec![0]
    }
}

/// What the README promises of a line beyond its exit status.
fn check_promises(tour: &Tour, shown: &str) {
    if shown.starts_with("iosim sim --dir /mnt/data --dir /mnt/log") {
        // "the data file in /mnt/data, the log in /mnt/log"
        let (data, log) = (tour.path("mnt/data"), tour.path("mnt/log"));
        for (file, dir, there) in [
            ("sqliosim.mdx", &data, true),
            ("sqliosim.ldx", &log, true),
            ("sqliosim.mdx", &log, false),
            ("sqliosim.ldx", &data, false),
        ] {
            assert_eq!(
                dir.join(file).exists(),
                there,
                "{shown}: {file} in {}: {:?}",
                dir.display(),
                std::fs::read_dir(dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name())
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// Every command of the README runs as written (scaled down, on temporary
/// directories and loop devices), in order, or is listed in [`NOT_RUN`].
#[test]
fn readme_commands_run_as_written() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let commands = shown_commands(&readme);
    assert!(commands.len() > 30, "{commands:?}");
    // Every exception must still name a README line, or it hides nothing.
    for (start, why) in NOT_RUN {
        assert!(
            commands.iter().any(|c| c.text.starts_with(start)),
            "NOT_RUN lists '{start}' ({why}), which the README no longer shows"
        );
    }
    for (from, _, why) in SUBSTITUTE {
        assert!(
            commands.iter().any(|c| c.text.contains(from)),
            "SUBSTITUTE replaces '{from}' ({why}), which the README no longer shows"
        );
    }
    let ids = readme_ids(&commands);
    let mut tour = Tour::new();
    let t0 = Instant::now();
    let mut ran = 0;
    for c in &commands {
        if let Some((_, why)) = NOT_RUN.iter().find(|(s, _)| c.text.starts_with(s)) {
            eprintln!("README.md:{}: not run ({why}): {}", c.line, c.text);
            continue;
        }
        let line = match tour.rewrite(&c.text, &ids) {
            Ok(l) => l,
            Err(why) => {
                eprintln!("README.md:{}: skipped: {why}: {}", c.line, c.text);
                continue;
            }
        };
        // The kernel has one blk tracer, which tests/replay.rs's captures
        // share: taken before the I/O beside the capture starts, so that
        // waiting for it cannot outlast that I/O (an empty trace, on a CI
        // run of 2026-12-02).
        let _tracer = line
            .contains("iosim capture ")
            .then(crate::common::kernel_tracer);
        let beside = ALONGSIDE
            .iter()
            .find(|(start, _, _)| line.starts_with(start))
            .map(|(start, cmd, _)| {
                let target = line[start.len()..].split_whitespace().next().unwrap();
                let before = device_ios(target);
                let child = tour
                    .shell(&cmd.replace("{target}", target))
                    .spawn()
                    .unwrap();
                // The capture starts once the I/O beside it reaches the
                // device (empty traces on CI runs of 2026-12-02, after the
                // tracer was already taken first).
                let t = Instant::now();
                while device_ios(target) == before && t.elapsed() < Duration::from_secs(20) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                child
            });
        let t = Instant::now();
        let out = tour.shell(&line).output().unwrap();
        if let Some(mut b) = beside {
            // Still running: its I/O reached the device for the whole capture.
            let early = b.try_wait().unwrap();
            let _ = Command::new("kill")
                .args(["-TERM", &b.id().to_string()])
                .status();
            let b = b.wait_with_output().unwrap();
            assert!(
                early.is_none(),
                "beside README.md:{} ended before the capture did: {:?}",
                c.line,
                b
            );
        }
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let tail = |s: &str| s[s.len().saturating_sub(3000)..].to_string();
        let code = out.status.code().unwrap_or(-1);
        assert!(
            allowed_codes(&c.text).contains(&code) && !stderr.contains("panicked"),
            "README.md:{}: `{}` failed (exit {code}) as `{line}`\nstdout: ...{}\nstderr: ...{}",
            c.line,
            c.text,
            tail(&stdout),
            tail(&stderr)
        );
        check_promises(&tour, &c.text);
        eprintln!(
            "README.md:{}: ok in {:.1} s: {line}",
            c.line,
            t.elapsed().as_secs_f64()
        );
        ran += 1;
    }
    eprintln!(
        "{ran} README commands ran in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
}

/// Reads and writes a block device has completed (`/sys/block/NAME/stat`),
/// 0 when it cannot be read.
fn device_ios(dev: &str) -> u64 {
    let name = std::path::Path::new(dev)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap_or_default();
    let f: Vec<u64> = stat
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    f.first().copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0)
}

/// The tour's own machinery: continuations, comments, quotes, scaling.
#[test]
fn tour_reads_and_scales_lines() {
    let text = "# heading\n```sh\n# a comment\niosim run /mnt/data/x --size 20G \\\n      --qd 8 # trailing\n\
                echo 'a # b' | cat\n```\n```\nnot sh\n```\n";
    let c = shown_commands(text);
    let texts: Vec<&str> = c.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "iosim run /mnt/data/x --size 20G --qd 8",
            "echo 'a # b' | cat"
        ]
    );
    assert_eq!(c[0].line, 4);
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let mut w = words("iosim run x --size 20G -d 120s");
    let n = w.len();
    scale(&mut w, 1, n);
    assert_eq!(w.join(" "), "iosim run x --size 64M -d 1s");
    let mut w = words("iosim crash write f --size 4G");
    let n = w.len();
    scale(&mut w, 1, n);
    assert_eq!(w.join(" "), "iosim crash write f --size 64M --duration 2s");
    let mut w = words("iosim diskspd -b8K -d60 -c20G f");
    let n = w.len();
    scale(&mut w, 1, n);
    assert_eq!(w.join(" "), "iosim diskspd -b8K -d1 -c64M f");
}

/// `iosim history --kind` takes a kind that exists, and refuses any other
/// word with the list of kinds (exit 2), instead of listing nothing.
#[test]
fn history_refuses_a_kind_that_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = iosim()
        .args(["history", "--kind", "runs", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("invalid value 'runs'"), "{err}");
    for kind in [
        "run", "quick", "sweep", "profile", "matrix", "sim", "qualify", "replay", "crash",
    ] {
        assert!(err.contains(kind), "{kind} not offered: {err}");
        success(iosim().args(["history", "--kind", kind, "--db"]).arg(&db));
    }
}

/// The help of `option` in a command's `--help`: its lines up to the next
/// option, whitespace collapsed (clap wraps long lines).
fn option_help(help: &str, option: &str) -> Option<String> {
    // An option's first line: `  -d, --duration <DURATION>` or `      --warmup <WARMUP>`.
    let starts_option = |l: &str| {
        let t = l.trim_start();
        t.starts_with('-') && l.len() - t.len() <= 6
    };
    let lines: Vec<&str> = help.lines().collect();
    let at = lines.iter().position(|l| {
        let t = l.trim_start();
        starts_option(l)
            && (t.starts_with(&format!("{option} ")) || t.contains(&format!(", {option} ")))
    })?;
    let mut text = vec![lines[at]];
    for l in &lines[at + 1..] {
        if starts_option(l) || !(l.starts_with(' ') || l.is_empty()) {
            break;
        }
        text.push(l);
    }
    Some(
        text.join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Every option that takes a duration says in its help which units it
/// accepts (`5min` is 300 s), as the README's "Sizes and times" says.
#[test]
fn duration_options_say_their_units() {
    for (cmd, options) in [
        (
            &["run"][..],
            &["--duration", "--warmup", "--think", "--interval"][..],
        ),
        (&["quick"], &["--duration"]),
        (&["qualify"], &["--time"]),
        (&["sim"], &["--duration"]),
        (&["matrix"], &["--duration", "--warmup"]),
        (&["crash", "write"], &["--duration"]),
        (&["capture"], &["--duration"]),
    ] {
        let help = success(iosim().args(cmd).arg("--help"));
        for option in options {
            let text = option_help(&help, option)
                .unwrap_or_else(|| panic!("no {option} in iosim {cmd:?} --help:\n{help}"));
            assert!(
                text.contains("ms, s, m or min, h") && text.contains("5min"),
                "iosim {cmd:?} {option}: {text}"
            );
        }
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.contains("`5min`"), "the README's durations");
}
