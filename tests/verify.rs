//! `iosim run --verify`: a clean verified run passes; blocks changed behind
//! iosim's back between a write run and a verify run (`--verify-state`,
//! `--verify-only`) are reported with the right class and offset; an old
//! copy of the file put back is reported as lost writes.

use crate::common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;

use common::iosim;
use serde_json::Value;

const BS: u64 = 4096;

/// Runs iosim with `args` (JSON out, no history); returns (exit status, JSON).
fn run(args: &[&str]) -> (i32, Value) {
    let out = iosim()
        .arg("run")
        .args(args)
        .args(["--output", "json", "--quiet", "--no-save"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: exit {code}, stderr {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, v)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Writes random 4 KiB blocks of a 1 MiB file with --verify and saves the generations.
fn write_run(f: &Path, state: &Path, ios: &str) -> Value {
    let (code, v) = run(&[
        p(f),
        "--size",
        "1M",
        "--rw",
        "randwrite",
        "--qd",
        "4",
        "--number-ios",
        ios,
        "--verify-pass",
        "--verify-state",
        p(state),
    ]);
    assert_eq!(code, 0, "{v}");
    v
}

fn verify_only(f: &Path, state: &Path) -> (i32, Value) {
    run(&[
        p(f),
        "--verify-only",
        "--verify-state",
        p(state),
        "--qd",
        "8",
    ])
}

fn errors(v: &Value) -> &Value {
    &v["verify"]["errors"]
}

/// `--verify-only` in text: (exit status, stdout).
fn verify_only_text(f: &Path, state: &Path) -> (i32, String) {
    let out = iosim()
        .arg("run")
        .args([
            p(f),
            "--verify-only",
            "--verify-state",
            p(state),
            "--qd",
            "8",
        ])
        .args(["--no-save"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The words a user reads about the error at `off`, in JSON and in text
/// (the same verify-only run twice: the data does not change between them):
/// the JSON record's class and detail, and the text table's row of it,
/// whose detail must be the same words. Each of `says` must be there, none
/// of `never`. Returns the JSON record.
fn words(f: &Path, state: &Path, off: u64, class: &str, says: &[&str], never: &[&str]) -> Value {
    let (code, v) = verify_only(f, state);
    assert_eq!(code, 3, "{v}");
    let r = errors(&v)["first"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["offset"] == off)
        .unwrap_or_else(|| panic!("no error at {off}: {v}"))
        .clone();
    assert_eq!(r["class"], class, "{r}");
    let detail = r["detail"].as_str().unwrap();
    for w in says {
        assert!(detail.contains(w), "'{w}' missing: {r}");
    }
    for w in never {
        assert!(!detail.contains(w), "'{w}' said: {r}");
    }
    let (code, text) = verify_only_text(f, state);
    assert_eq!(code, 3, "{text}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with(class) && l.contains(&format!(" {off} ")))
        .unwrap_or_else(|| panic!("no {class} row at {off}:\n{text}"));
    assert!(row.ends_with(detail), "{row}\n{detail}");
    assert!(text.contains("  DATA ERRORS: "), "{text}");
    r
}

/// What every re-read of a persistent fault adds to its words (`--verify`
/// re-reads a bad block 4 times, as SQL Server does).
const REREADS_FAILED: &str = "(every one of 4 retries failed too)";

fn read_block(f: &Path, off: u64) -> Vec<u8> {
    let mut b = vec![0u8; BS as usize];
    std::fs::File::open(f)
        .unwrap()
        .read_exact_at(&mut b, off)
        .unwrap();
    b
}

fn write_at(f: &Path, off: u64, data: &[u8]) {
    let h = OpenOptions::new().write(true).open(f).unwrap();
    h.write_all_at(data, off).unwrap();
    h.sync_all().unwrap();
}

/// Offsets of blocks with a generation (from the pass, all blocks written are read).
fn written_offsets(f: &Path, state: &Path) -> Vec<u64> {
    let (code, v) = verify_only(f, state);
    assert_eq!(code, 0, "{v}");
    assert_eq!(errors(&v)["count"], 0, "{v}");
    // The state file holds one u32 per block after two header lines.
    let bytes = std::fs::read(state).unwrap();
    let mut nl = bytes.iter().enumerate().filter(|(_, c)| **c == b'\n');
    let start = nl.nth(1).unwrap().0 + 1;
    bytes[start..bytes.len() - 4]
        .chunks_exact(4)
        .enumerate()
        .filter(|(_, c)| u32::from_le_bytes((*c).try_into().unwrap()) > 0)
        .map(|(i, _)| i as u64 * BS)
        .collect()
}

#[test]
fn a_clean_verified_mixed_run_passes_and_checks_what_it_reads() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let (code, v) = run(&[
        p(&f),
        "--size",
        "2M",
        "--rw",
        "randrw",
        "--threads",
        "2",
        "--qd",
        "8",
        "--number-ios",
        "4000",
        "--verify-pass",
        "--verify-backlog",
        "32",
    ]);
    assert_eq!(code, 0, "{v}");
    let vr = &v["verify"];
    assert_eq!(vr["errors"]["count"], 0, "{vr}");
    assert!(vr["writes"].as_u64().unwrap() > 1000, "{vr}");
    assert!(vr["reads_good"].as_u64().unwrap() > 1000, "{vr}");
    assert!(vr["backlog_reads"].as_u64().unwrap() >= 32, "{vr}");
    let written = vr["blocks_written"].as_u64().unwrap();
    assert!(written > 0);
    assert_eq!(vr["pass"]["blocks"].as_u64().unwrap(), written, "{vr}");
    assert_eq!(vr["blocks"], 512);
    assert_eq!(vr["table_bytes"], 2048);
    // Every class is listed, zeros included (as iosim sim reports them).
    assert_eq!(vr["errors"]["by_class"].as_object().unwrap().len(), 7);
    // Backlog re-reads are not in the workload's read statistics.
    let reads = v["total"]["read"]["ios"].as_u64().unwrap();
    let checked = vr["reads_checked"].as_u64().unwrap();
    let pass = vr["pass"]["blocks"].as_u64().unwrap();
    let backlog = vr["backlog_reads"].as_u64().unwrap();
    assert!(
        reads <= checked - pass - backlog,
        "{reads} {checked} {pass} {backlog}"
    );
    // The text report has the section too.
    let out = iosim()
        .args([
            "run",
            p(&f),
            "--rw",
            "randrw",
            "--number-ios",
            "500",
            "--verify-pass",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("verify: ") && text.contains("data errors: 0"),
        "{text}"
    );
}

#[test]
fn a_block_changed_behind_iosims_back_is_corruption_at_its_offset() {
    let d = tempfile::tempdir().unwrap();
    let (f, s) = (d.path().join("f"), d.path().join("state"));
    write_run(&f, &s, "600");
    let offs = written_offsets(&f, &s);
    let victim = offs[offs.len() / 2];
    // As `dd conv=notrunc` would: four bytes in the middle of the block.
    write_at(&f, victim + 1000, b"XXXX");
    let (code, v) = verify_only(&f, &s);
    assert_eq!(code, 3, "data errors exit as I/O errors: {v}");
    let e = errors(&v);
    assert_eq!(e["count"], 1, "{e}");
    assert_eq!(e["by_class"]["checksum_mismatch"], 1);
    assert_eq!(e["first"][0]["offset"], victim);
    assert_eq!(e["first"][0]["class"], "checksum_mismatch");
    assert_eq!(e["first"][0]["phase"], "pass");
    let r = words(
        &f,
        &s,
        victim,
        "checksum_mismatch",
        &[
            "stored checksum 0x",
            ": corruption, the data changed after it was written",
            REREADS_FAILED,
        ],
        &["recovered"],
    );
    assert_eq!((&r["retries"], r.get("first_read")), (&4.into(), None));
}

#[test]
fn a_block_in_the_wrong_place_is_misdirected_and_a_half_old_block_torn() {
    let d = tempfile::tempdir().unwrap();
    let (f, s) = (d.path().join("f"), d.path().join("state"));
    write_run(&f, &s, "600");
    let old = d.path().join("old");
    std::fs::copy(&f, &old).unwrap();
    // A second run continues the generations (same offsets: same seed).
    write_run(&f, &s, "600");
    let offs = written_offsets(&f, &s);
    let (a, b, c) = (offs[1], offs[5], offs[9]);
    // Block a's image written over block b: misdirected.
    write_at(&f, b, &read_block(&f, a));
    // The second half of block c from the old copy: torn.
    write_at(&f, c + BS / 2, &read_block(&old, c)[BS as usize / 2..]);
    let (code, v) = verify_only(&f, &s);
    assert_eq!(code, 3, "{v}");
    let e = errors(&v);
    assert_eq!(e["count"], 2, "{e}");
    let mut found: Vec<(u64, String)> = e["first"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["offset"].as_u64().unwrap(),
                r["class"].as_str().unwrap().into(),
            )
        })
        .collect();
    found.sort();
    let mut want = vec![(b, "misdirected".to_string()), (c, "torn_page".to_string())];
    want.sort();
    assert_eq!(found, want);
    words(
        &f,
        &s,
        b,
        "misdirected",
        &[
            &format!("expected file 1 page {}", b / BS),
            ": misdirected I/O, a write or a read went to the wrong place",
            REREADS_FAILED,
        ],
        &["recovered"],
    );
    words(
        &f,
        &s,
        c,
        "torn_page",
        &[
            "the page mixes images of different writes",
            ": torn write, part of it is an older image",
            REREADS_FAILED,
        ],
        &["recovered"],
    );
}

#[test]
fn an_old_copy_put_back_is_reported_as_lost_writes() {
    let d = tempfile::tempdir().unwrap();
    let (f, s) = (d.path().join("f"), d.path().join("state"));
    write_run(&f, &s, "300");
    let before = written_offsets(&f, &s);
    let old = d.path().join("old");
    std::fs::copy(&f, &old).unwrap();
    // More writes, on a different sequence of offsets (another seed).
    let (code, v) = run(&[
        p(&f),
        "--rw",
        "randwrite",
        "--number-ios",
        "300",
        "--seed",
        "99",
        "--verify",
        "--verify-state",
        p(&s),
    ]);
    assert_eq!(code, 0, "{v}");
    let after = written_offsets(&f, &s);
    std::fs::copy(&old, &f).unwrap();
    let (code, v) = verify_only(&f, &s);
    assert_eq!(code, 3, "{v}");
    let e = errors(&v);
    // Blocks the second run wrote hold an older generation (or, if never
    // written before it, another run's contents): lost writes, and nothing else.
    let lost = e["by_class"]["stale_read"].as_u64().unwrap();
    assert_eq!(e["count"].as_u64().unwrap(), lost, "{e}");
    assert!(lost > 0 && lost <= 300, "{e}");
    for r in e["first"].as_array().unwrap() {
        let off = r["offset"].as_u64().unwrap();
        assert!(after.contains(&off), "{off}");
        let (exp, found) = (
            r["expected_generation"].as_u64().unwrap(),
            r["found_generation"].as_u64().unwrap(),
        );
        assert!(found < exp, "{r}");
        if !before.contains(&off) {
            assert_eq!(found, 0, "{r}");
        }
    }
    // Blocks the second run did not write are still good.
    let good = v["verify"]["reads_good"].as_u64().unwrap();
    assert_eq!(good + lost, after.len() as u64, "{v}");
    // An older image of a block the first run wrote: a lost write, in words.
    let older = e["first"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["found_generation"].as_u64() > Some(0))
        .expect("a block both runs wrote");
    words(
        &f,
        &s,
        older["offset"].as_u64().unwrap(),
        "stale_read",
        &[
            " was the last acknowledged write (an older image): lost write, the storage does not return the last acknowledged write",
            REREADS_FAILED,
        ],
        &["recovered"],
    );
}

#[test]
fn zeros_where_a_block_was_written_are_a_lost_write() {
    let d = tempfile::tempdir().unwrap();
    let (f, s) = (d.path().join("f"), d.path().join("state"));
    write_run(&f, &s, "600");
    let offs = written_offsets(&f, &s);
    let victim = offs[offs.len() / 3];
    write_at(&f, victim, &[0u8; BS as usize]);
    let r = words(
        &f,
        &s,
        victim,
        "stale_read",
        &[
            "the page reads as all zeros, but generation ",
            " was written and acknowledged: lost write, the storage does not return the last acknowledged write",
            REREADS_FAILED,
        ],
        &["recovered"],
    );
    assert_eq!(r["found_generation"], 0);
    let (_, v) = verify_only(&f, &s);
    assert_eq!(errors(&v)["count"], 1, "{v}");
}

#[test]
fn another_runs_block_is_a_lost_write() {
    let d = tempfile::tempdir().unwrap();
    let (f, s) = (d.path().join("f"), d.path().join("state"));
    let (g, gs) = (d.path().join("g"), d.path().join("gstate"));
    // Two runs write every block of their 64 KiB file once (generation 1),
    // each with its own seed.
    for (file, state) in [(&f, &s), (&g, &gs)] {
        let (code, v) = run(&[
            p(file),
            "--size",
            "64K",
            "--rw",
            "write",
            "--number-ios",
            "16",
            "--verify",
            "--verify-state",
            p(state),
        ]);
        assert_eq!(code, 0, "{v}");
    }
    // Block 5 of f gets the other run's block 5: right place, right
    // generation, another run's data.
    write_at(&f, 5 * BS, &read_block(&g, 5 * BS));
    words(
        &f,
        &s,
        5 * BS,
        "stale_read",
        &[
            "the page holds generation 1 written by another run (payload seed 0x",
            "): lost write, the storage does not return the last acknowledged write",
            REREADS_FAILED,
        ],
        &["recovered"],
    );
}

/// A file system that returns zeros on the first read of a block and the
/// block on the next (tests/fuse/rig.py): the re-read reads it, so the
/// error is a read_retry (a fault in the read path), not a lost write.
#[test]
fn a_block_read_as_zeros_once_then_right_is_a_read_retry() {
    let d = tempfile::tempdir().unwrap();
    let (back, mnt) = (d.path().join("back"), d.path().join("mnt"));
    std::fs::create_dir(&back).unwrap();
    std::fs::create_dir(&mnt).unwrap();
    let s = d.path().join("state");
    write_run(&back.join("f"), &s, "600");
    let offs = written_offsets(&back.join("f"), &s);
    let victim = offs[offs.len() / 2];
    let journal = d.path().join("journal");
    // Zeros on the first read of the victim, in each of the two runs below.
    let zero = format!("f:{victim}:{BS}");
    let mount = || {
        common::FuseRig::mount(
            &back,
            &mnt,
            &journal,
            &["--mode", "off", "--zero-first-read", &zero],
        )
    };
    let Some(rig) = mount() else {
        return;
    };
    let f = mnt.join("f");
    let (code, v) = verify_only(&f, &s);
    drop(rig);
    assert_eq!(code, 3, "a recovered read is still an error: {v}");
    let e = errors(&v);
    assert_eq!(e["count"], 1, "{e}");
    assert_eq!(e["by_class"]["read_retry"], 1, "{e}");
    assert_eq!(e["by_class"]["stale_read"], 0, "{e}");
    let r = &e["first"][0];
    assert_eq!(
        (&r["offset"], &r["class"], &r["first_read"], &r["retries"]),
        (
            &victim.into(),
            &"read_retry".into(),
            &"stale_read".into(),
            &1.into()
        )
    );
    let detail = r["detail"].as_str().unwrap();
    assert!(
        detail.contains("the page reads as all zeros, but generation ")
            && detail.contains(" was written and acknowledged: read returned wrong data, recovered on retry 1 (the storage holds the expected image: a fault in the read path)")
            && !detail.contains("lost"),
        "{detail}"
    );
    // The text says the same.
    let rig = mount().expect("mounted once already");
    let (code, text) = verify_only_text(&f, &s);
    drop(rig);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("  DATA ERRORS: 1 (read_retry 1)"), "{text}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("read_retry"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains(&format!(" {victim} ")) && row.ends_with(detail),
        "{row}"
    );
    assert!(!text.contains("lost"), "{text}");
}

#[test]
fn a_read_of_the_workload_catches_a_bad_block_too() {
    let d = tempfile::tempdir().unwrap();
    let (f, s) = (d.path().join("f"), d.path().join("state"));
    // Every block of a 64 KiB file written (sequentially, twice).
    let (code, v) = run(&[
        p(&f),
        "--size",
        "64K",
        "--rw",
        "write",
        "--number-ios",
        "32",
        "--verify",
        "--verify-state",
        p(&s),
    ]);
    assert_eq!(code, 0, "{v}");
    write_at(&f, 5 * BS + 100, b"\x00\x01\x02");
    // A random read workload over the 16 blocks reads block 5 many times.
    let (code, v) = run(&[
        p(&f),
        "--rw",
        "randread",
        "--number-ios",
        "400",
        "--verify",
        "--verify-state",
        p(&s),
    ]);
    assert_eq!(code, 3, "{v}");
    let e = errors(&v);
    let n = e["by_class"]["checksum_mismatch"].as_u64().unwrap();
    assert!(n > 0 && n == e["count"].as_u64().unwrap(), "{e}");
    assert_eq!(e["first"][0]["offset"], 5 * BS);
    assert_eq!(e["first"][0]["phase"], "workload");
    assert_eq!(v["verify"]["reads_unwritten"], 0);
}

#[test]
fn workloads_verify_cannot_check_are_refused_with_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    for (args, msg) in [
        (vec!["--align", "512"], "leave out --align"),
        (vec!["--bs", "1000"], "multiple of 512"),
        (
            vec!["--verify-backlog", "8", "--rw", "randread"],
            "needs a workload that writes",
        ),
    ] {
        let out = iosim()
            .args(["run", p(&f)])
            .args([
                "--size",
                "1M",
                "--verify",
                "--number-ios",
                "10",
                "--no-save",
            ])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    let out = iosim()
        .args(["run", p(&f)])
        .args(["--verify-only", "--verify-state"])
        .arg(d.path().join("none"))
        .args(["--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
}

/// MemAvailable from /proc/meminfo, bytes.
fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap()
        * 1024
}

/// Issue 23: a huge `--verify-backlog` made a worker panic ("capacity
/// overflow") and the run hang, or aborted allocating 32 GiB. It is refused
/// before anything is created or allocated, naming the memory it needs and
/// the option to lower; no test file is left.
#[test]
fn a_verify_backlog_that_cannot_fit_is_refused_up_front() {
    let avail = mem_available();
    for (backlog, memory) in [
        ("18446744073709551615", "more than 16EiB of memory"),
        ("1152921504606846976", "8192.00PiB of memory"),
        // 32 GiB of rings, plus the buffers, statistics and series the
        // memory check counts besides them (issue 36).
        ("4294967296", "needs 32.0"),
    ] {
        if backlog == "4294967296" && avail > 32 << 30 {
            eprintln!(
                "skipped --verify-backlog {backlog}: this machine has more than 32 GiB available"
            );
            continue;
        }
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        let mut cmd = iosim();
        cmd.args(["run", p(&f), "--size", "1M", "--rw", "randwrite"])
            .args(["--verify-backlog", backlog, "-d", "2s", "--no-save"]);
        let (out, _) = common::output_within(&mut cmd, std::time::Duration::from_secs(60))
            .unwrap_or_else(|| panic!("--verify-backlog {backlog}: still running after 60 s"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{backlog}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains(&format!(
                "--verify-backlog {backlog} (8 bytes per entry per thread)"
            )) && err.contains(memory)
                && err.contains("lower --verify-backlog"),
            "{err}"
        );
        assert!(!f.exists(), "{backlog}: the test file was left");
    }
}

/// Issue 23: `--verify --bssplit` blamed `--align`, which the user never
/// gave. The refusal names the sizes of the mix and says to give one --bs.
#[test]
fn verify_with_a_size_mix_names_the_mix_not_align() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let out = iosim()
        .args([
            "run",
            p(&f),
            "--size",
            "1M",
            "--rw",
            "randwrite",
            "--verify",
        ])
        .args(["--bssplit", "4k/50:64k/50", "-d", "1s", "--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("--align"), "{err}");
    assert!(
        err.contains("--bssplit 4K/50:64K/50 asks for 4K, 64K")
            && err.contains("leave out --bssplit and give one size with --bs (e.g. --bs 64K)"),
        "{err}"
    );
    assert!(!f.exists(), "the test file was left");
}

/// Two `iosim run same.dat --rw randrw --verify` started at once, on a new
/// file and then on the file the winner made: exactly one runs, and it
/// reports no error; the other is refused before any I/O (exit 1) with the
/// PID and command of the one that holds the file, and never blames the
/// storage for the other's writes.
#[test]
fn a_second_process_on_a_target_is_refused_with_the_holders_pid() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("same.dat");
    for round in ["new file", "existing file"] {
        let start = || {
            iosim()
                .args(["run", p(&f), "--size", "8M", "--rw", "randrw", "--verify"])
                .args(["-d", "3s", "--output", "json", "--quiet", "--no-save"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (start(), start());
        let pids = [a.id(), b.id()];
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let text = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
        };
        for o in &outs {
            assert!(!text(o).contains("lost write"), "{round}: {}", text(o));
        }
        let ran: Vec<usize> = (0..2)
            .filter(|&i| outs[i].status.code() == Some(0))
            .collect();
        assert_eq!(
            ran.len(),
            1,
            "{round}: {} / {}",
            text(&outs[0]),
            text(&outs[1])
        );
        let (won, lost) = (ran[0], 1 - ran[0]);
        let v: Value = serde_json::from_slice(&outs[won].stdout).unwrap();
        assert_eq!(errors(&v)["count"], 0, "{round}: {v}");
        assert_eq!(errors(&v)["by_class"]["stale_read"], 0, "{round}: {v}");
        let err = String::from_utf8_lossy(&outs[lost].stderr);
        assert_eq!(outs[lost].status.code(), Some(1), "{round}: {err}");
        assert!(outs[lost].stdout.is_empty(), "{round}: {err}");
        assert!(
            err.contains("refusing to write to")
                && err.contains(&format!("PID {} (", pids[won]))
                && err.contains("iosim run")
                && err.contains("another target"),
            "{round}: {err}"
        );
    }
}
