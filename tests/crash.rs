//! `iosim crash write` / `verify` across real crashes: the FUSE rig in
//! tests/fuse/rig.py (a volatile write cache, killed with SIGKILL as a power
//! loss) in its four behaviours, and ext4 on a loop device with the writer
//! killed mid-run. Each asserts the verdict and compares the pages iosim
//! reports with the rig's own record of what it dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use iosim::crash::acklog::{self, WriteKind};
use serde_json::Value;

use crate::common;
use common::FuseRig;

const PY: &str = "/usr/bin/python3";
const SIZE: &str = "16M";

fn rig_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuse/rig.py")
}

fn run_ok(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The rig's backing directory (holding iosim's test file `f`) and its
/// mount point, made under `dir`.
fn rig_dirs(dir: &Path) -> (PathBuf, PathBuf) {
    let (back, mnt) = (dir.join("back"), dir.join("mnt"));
    std::fs::create_dir_all(&back).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    run_ok(
        common::iosim()
            .args(["create", "-q", "--size", SIZE])
            .arg(back.join("f")),
    );
    (back, mnt)
}

/// Starts the writer and waits until `lines` acknowledgements are in the log.
fn write_until(target: &Path, acks: &Path, lines: usize) -> Child {
    let mut w = common::iosim()
        .args(["crash", "write", "-q", "--seed", "7", "--size", SIZE])
        .arg(target)
        .arg("--acks")
        .arg(acks)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let n = std::fs::read(acks).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
        if n >= lines {
            return w;
        }
        if let Ok(Some(st)) = w.try_wait() {
            panic!("the writer exited early: {st}");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "only {n} acknowledgements after 2 minutes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn verify(acks: &Path, targets: &[&Path]) -> Value {
    let o = common::iosim()
        .args(["crash", "verify", "-o", "json", "--no-save", "--acks"])
        .arg(acks)
        .args(targets)
        .output()
        .unwrap();
    let code = o.status.code();
    assert!(
        code == Some(0) || code == Some(3),
        "verify failed: {code:?} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(code == Some(0), v["verdict"] == "PASS");
    v
}

/// Generation in the first 32 bytes of an iosim page (hex), or 0 for anything else.
fn head_generation(head: &Value) -> u64 {
    let Some(h) = head.as_str() else { return 0 };
    if !h.starts_with("494f5350") || h.len() < 64 {
        return 0;
    }
    let b: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    u64::from_le_bytes(b[24..32].try_into().unwrap())
}

struct Outcome {
    verdict: Value,
    /// Offsets iosim reported as lost or out of order, by class.
    reported: BTreeMap<String, BTreeSet<u64>>,
    /// Offsets whose acknowledged write the rig did not keep (from its journal and backing store).
    expected_lost: BTreeSet<u64>,
    /// Of those, log blocks with a later log block that survived.
    expected_ordering: BTreeSet<u64>,
    rig: Value,
}

/// Write through the rig in `mode`, pull the plug, remount with no cache, verify, compare.
fn crash_through_rig(mode: &str) -> Option<Outcome> {
    let d = tempfile::tempdir().unwrap();
    let (back, mnt) = rig_dirs(d.path());
    let (journal, acks) = (d.path().join("journal"), d.path().join("acks.log"));
    let rig = FuseRig::mount(
        &back,
        &mnt,
        &journal,
        &["--mode", mode, "--cache-writes", "32"],
    )?;
    let mut writer = write_until(&mnt.join("f"), &acks, 600);
    rig.crash();
    let _ = writer.kill();
    writer.wait().unwrap();

    let after = FuseRig::mount(&back, &mnt, &d.path().join("journal2"), &["--mode", "off"])
        .expect("the rig mounted a moment ago");
    let verdict = verify(&acks, &[]);
    drop(after);
    let report: Value = serde_json::from_str(&run_ok(
        Command::new(PY)
            .arg(rig_script())
            .arg("report")
            .arg(&back)
            .arg("--journal")
            .arg(&journal),
    ))
    .unwrap();

    // The oracle: newest acknowledged generation per page (from the log) against the
    // generation of the write the rig says the backing store holds.
    let log = acklog::read(&acks).unwrap();
    let t = &log.header.targets[0];
    let mut acked: BTreeMap<u64, (u64, WriteKind)> = BTreeMap::new();
    for r in &log.records {
        let e = acked.entry(r.offset).or_insert((0, r.kind));
        e.0 = e.0.max(r.generation);
    }
    let mut present: BTreeMap<u64, u64> = BTreeMap::new();
    for r in report["ranges"].as_array().unwrap() {
        present.insert(
            r["offset"].as_u64().unwrap(),
            head_generation(&r["present_head"]),
        );
    }
    let log_start = t.region_start + t.data_pages * 8192;
    let log_index = |off: u64, g: u64| (g - 1) * t.log_pages + (off - log_start) / 8192;
    let newest_log = present
        .iter()
        .filter(|(&o, &g)| o >= log_start && g > 0)
        .map(|(&o, &g)| log_index(o, g))
        .max();
    let mut expected_lost = BTreeSet::new();
    let mut expected_ordering = BTreeSet::new();
    for (&off, &(g, kind)) in &acked {
        let have = present.get(&off).copied().unwrap_or(0);
        if have < g {
            expected_lost.insert(off);
            if kind == WriteKind::Log && newest_log.is_some_and(|n| n > log_index(off, g)) {
                expected_ordering.insert(off);
            }
        }
    }
    // Every page the oracle calls lost is one the rig itself lists as a dropped flushed write.
    let rig_lost: BTreeSet<u64> = report["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["offset"].as_u64().unwrap())
        .collect();
    assert!(
        expected_lost.is_subset(&rig_lost),
        "pages lost per the acks but not in the rig's log: {:?}",
        expected_lost.difference(&rig_lost).collect::<Vec<_>>()
    );
    // And the rig's extra entries are flushes the writer never got to acknowledge (killed first).
    for r in report["lost"].as_array().unwrap() {
        let off = r["offset"].as_u64().unwrap();
        if !expected_lost.contains(&off) {
            let flushed = head_generation(&r["newest_flushed_head"]);
            let ack = acked.get(&off).map_or(0, |a| a.0);
            assert!(
                flushed > ack,
                "the rig dropped flushed generation {flushed} at {off}, acknowledged {ack}, but iosim's oracle has it intact"
            );
        }
    }
    let mut reported: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for f in verdict["findings"].as_array().unwrap() {
        reported
            .entry(f["class"].as_str().unwrap().to_string())
            .or_default()
            .insert(f["offset"].as_u64().unwrap());
    }
    eprintln!(
        "{mode}: {} acknowledged, rig dropped {} write(s) and lost {} flushed range(s); expected lost {}, ordering {}; iosim counts {}",
        log.records.len(),
        report["dropped"].as_array().unwrap().len(),
        rig_lost.len(),
        expected_lost.len(),
        expected_ordering.len(),
        verdict["counts"]
    );
    Some(Outcome {
        verdict,
        reported,
        expected_lost,
        expected_ordering,
        rig: report,
    })
}

fn reported(o: &Outcome, class: &str) -> BTreeSet<u64> {
    o.reported.get(class).cloned().unwrap_or_default()
}

/// iosim names exactly the pages the rig lost: zero missed, zero false alarms.
fn assert_exact(o: &Outcome) {
    let lost: BTreeSet<u64> = reported(o, "lost")
        .union(&reported(o, "ordering_violation"))
        .copied()
        .collect();
    assert_eq!(
        lost, o.expected_lost,
        "reported lost/ordering vs the rig's truth; verdict {}",
        o.verdict
    );
    assert_eq!(reported(o, "ordering_violation"), o.expected_ordering);
    for class in ["corruption", "misdirected", "torn"] {
        assert!(reported(o, class).is_empty(), "{class}: {}", o.verdict);
    }
    let c = &o.verdict["counts"];
    assert_eq!(
        c["lost"].as_u64().unwrap() + c["ordering_violations"].as_u64().unwrap(),
        o.expected_lost.len() as u64
    );
}

#[test]
fn honest_cache_passes() {
    let Some(o) = crash_through_rig("honest") else {
        return;
    };
    assert_eq!(o.verdict["verdict"], "PASS", "{}", o.verdict);
    assert!(o.expected_lost.is_empty());
    assert!(
        o.rig["lost"].as_array().unwrap().is_empty(),
        "{}",
        o.rig["lost"]
    );
    assert!(o.verdict["acks"]["records"].as_u64().unwrap() >= 590);
    assert_exact(&o);
}

#[test]
fn lying_cache_loses_exactly_the_dropped_pages() {
    let Some(o) = crash_through_rig("lying") else {
        return;
    };
    assert_eq!(o.verdict["verdict"], "FAIL", "{}", o.verdict);
    assert!(
        !o.expected_lost.is_empty(),
        "the lying cache dropped nothing acknowledged"
    );
    assert_exact(&o);
    // A FIFO cache keeps order: what survives is a prefix, so nothing is out of order.
    assert!(reported(&o, "ordering_violation").is_empty());
}

#[test]
fn reordering_cache_shows_ordering_violations() {
    let Some(o) = crash_through_rig("reorder") else {
        return;
    };
    assert_eq!(o.verdict["verdict"], "FAIL", "{}", o.verdict);
    assert_exact(&o);
    assert!(
        !o.expected_ordering.is_empty(),
        "a cache destaging in random order left no later log block over a lost earlier one: {}",
        o.verdict["counts"]
    );
}

#[test]
fn no_cache_passes_and_drops_nothing() {
    let Some(o) = crash_through_rig("off") else {
        return;
    };
    assert_eq!(o.verdict["verdict"], "PASS", "{}", o.verdict);
    // Without a cache the rig persists each write before it answers, one
    // request at a time: the kill can land only between journaling the one
    // write being served and persisting it (a write never acknowledged;
    // once in a full CI run on a busy machine). Nothing flushed is dropped.
    let dropped = o.rig["dropped"].as_array().unwrap();
    assert!(
        dropped.len() <= 1 && dropped.iter().all(|d| d["flushed"] == false),
        "{dropped:?}"
    );
    assert_exact(&o);
}

/// A loop device with ext4, created and detached by the test.
struct Loop {
    dev: String,
    mnt: PathBuf,
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn writer_killed_on_ext4_passes() {
    for tool in ["losetup", "mkfs.ext4"] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map_or(true, |o| !o.status.success())
        {
            crate::common::skip(&format!("{tool} is not installed"));
            return;
        }
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(96 << 20)
        .unwrap();
    let o = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output()
        .unwrap();
    if !o.status.success() {
        crate::common::skip(&format!(
            "cannot attach a loop device: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
        return;
    }
    let mnt = d.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let lo = Loop {
        dev: String::from_utf8(o.stdout).unwrap().trim().to_string(),
        mnt: mnt.clone(),
    };
    run_ok(Command::new("mkfs.ext4").args(["-q", "-F", &lo.dev]));
    run_ok(Command::new("mount").arg(&lo.dev).arg(&mnt));
    let acks = d.path().join("acks.log");
    let target = mnt.join("f");
    let mut w = write_until(&target, &acks, 800);
    w.kill().unwrap(); // SIGKILL mid-run
    w.wait().unwrap();
    let v = verify(&acks, &[&target]);
    assert_eq!(v["verdict"], "PASS", "{v}");
    assert!(
        v["acks"]["writer_end"].is_null(),
        "a killed writer leaves no trailer"
    );
    assert!(v["acks"]["records"].as_u64().unwrap() >= 790);
    assert_eq!(v["targets"][0]["direct"], true);
}

/// `--profile` takes the writer's mix from a workload profile, and the
/// verdict is a `crash` document in the history that `show` prints again.
#[test]
fn profile_mix_and_the_verdict_in_the_history() {
    let d = tempfile::tempdir().unwrap();
    let (f, acks, db) = (
        d.path().join("f"),
        d.path().join("acks.log"),
        d.path().join("history.db"),
    );
    let o = common::iosim()
        .args(["crash", "write", "--seed", "3", "--size", SIZE])
        .args(["--duration", "1s", "--profile", "oltp-with-log", "--acks"])
        .arg(&acks)
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("profile oltp-with-log: data-8k") && err.contains("-> dsync (weight 480)"),
        "{err}"
    );
    let log = acklog::read(&acks).unwrap();
    assert_eq!(log.header.profile.as_deref(), Some("oltp-with-log"));
    assert_eq!(log.header.mix, "dsync=24,fdatasync=0,fsync=0,log=5");
    let kinds: BTreeSet<(bool, &str)> = log
        .records
        .iter()
        .map(|r| (r.kind == WriteKind::Log, r.mech.name()))
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from([(false, "dsync"), (true, "dsync")]),
        "write-through data pages and log appends only"
    );
    // --mix and --profile together are refused.
    let o = common::iosim()
        .args([
            "crash",
            "write",
            "--profile",
            "oltp",
            "--mix",
            "log=1",
            "--acks",
        ])
        .arg(&acks)
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));

    let o = common::iosim()
        .args(["crash", "verify", "--db"])
        .arg(&db)
        .arg("--acks")
        .arg(&acks)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let printed = String::from_utf8(o.stdout).unwrap();
    let history = run_ok(common::iosim().args(["history", "--db"]).arg(&db));
    assert!(history.contains("crash"), "{history}");
    let shown = run_ok(common::iosim().args(["show", "last", "--db"]).arg(&db));
    assert_eq!(
        shown, printed,
        "show prints the verdict as verify printed it"
    );
    assert!(shown.starts_with("iosim crash verify: PASS"), "{shown}");
    let v: Value = serde_json::from_str(&run_ok(
        common::iosim()
            .args(["show", "last", "-o", "json", "--db"])
            .arg(&db),
    ))
    .unwrap();
    assert_eq!(v["kind"], "crash");
    assert_eq!(v["verdict"], "PASS");
    assert_eq!(v["acks"]["profile"], "oltp-with-log");
    assert!(!v["host"].as_str().unwrap().is_empty(), "{v}");
}

/// Runs `iosim crash write` for `secs` seconds onto `target`, its log at `acks`.
fn write_for(target: &Path, acks: &Path, seed: &str, extra: &[&str]) -> std::process::Output {
    common::iosim()
        .args(["crash", "write", "-q", "--seed", seed, "--size", SIZE])
        .args(["--duration", "1s", "--acks"])
        .arg(acks)
        .arg(target)
        .args(extra)
        .output()
        .unwrap()
}

/// An existing acknowledgement log may be the only record of the last power
/// cut: `crash write --acks` refuses it, byte for byte untouched, unless --force.
#[test]
fn an_existing_ack_log_is_kept_unless_forced() {
    let d = tempfile::tempdir().unwrap();
    let (f, acks) = (d.path().join("f"), d.path().join("acks.log"));
    let o = write_for(&f, &acks, "1", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = std::fs::read(&acks).unwrap();
    let o = write_for(&f, &acks, "2", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&*acks.to_string_lossy())
            && err.contains("only record of the last power-cut test")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&acks).unwrap(), before, "the log was changed");
    // With --force it is overwritten: a new run (seed 2) in it.
    let o = write_for(&f, &acks, "2", &["--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_ne!(std::fs::read(&acks).unwrap(), before);
    assert_eq!(acklog::read(&acks).unwrap().header.run_seed, 2);
    // A refused start leaves no empty log behind (a target iosim may not write).
    let mine = d.path().join("mine");
    std::fs::write(&mine, "my data").unwrap();
    let fresh = d.path().join("fresh.log");
    let o = write_for(&mine, &fresh, "3", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!fresh.exists(), "an empty log was left behind");
}

/// `crash verify` on a damaged acknowledgement log: never a PASS (exit 0),
/// but INCOMPLETE with its own exit status, 5. A partial last line of a log
/// without a trailer is what a crash leaves: reported, still a verdict.
#[test]
fn a_damaged_ack_log_is_incomplete_not_a_pass() {
    let d = tempfile::tempdir().unwrap();
    let (f, acks) = (d.path().join("f"), d.path().join("acks.log"));
    let o = write_for(&f, &acks, "5", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let good = std::fs::read(&acks).unwrap();
    let text = String::from_utf8(good.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 20, "{} lines", lines.len());
    let verify_text = |log: &Path| {
        let o = common::iosim()
            .args(["crash", "verify", "--no-save", "--acks"])
            .arg(log)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (code, out) = verify_text(&acks);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("verdict: PASS\n"), "{out}");

    let damaged = d.path().join("damaged.log");
    let variants: Vec<(&str, String)> = vec![
        // Garbage bytes in place of a record in the middle.
        (
            "garbage in the middle",
            lines
                .iter()
                .enumerate()
                .map(|(i, l)| format!("{}\n", if i == 10 { "\u{1}\u{2}garbage" } else { l }))
                .collect(),
        ),
        // The last records cut away before the trailer (which counts them).
        (
            "records missing before the trailer",
            lines[..lines.len() - 3]
                .iter()
                .chain(lines.last())
                .map(|l| format!("{l}\n"))
                .collect(),
        ),
        // Cut in the middle of a record after the trailer.
        (
            "a partial record after the trailer",
            format!("{text}12 0 p 81"),
        ),
    ];
    for (what, bytes) in variants {
        std::fs::write(&damaged, bytes).unwrap();
        let (code, out) = verify_text(&damaged);
        assert_eq!(code, Some(5), "{what}: {out}");
        assert!(out.contains("ACK LOG DAMAGED"), "{what}: {out}");
        assert!(out.ends_with("verdict: INCOMPLETE\n"), "{what}: {out}");
        let o = common::iosim()
            .args(["crash", "verify", "--no-save", "-o", "json", "--acks"])
            .arg(&damaged)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(5), "{what}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["verdict"], "INCOMPLETE", "{what}");
    }
    // A log cut mid-record by a crash (no trailer): the cut line is reported, the rest judged.
    let cut = &text[..text.len() - lines.last().unwrap().len() - 1];
    std::fs::write(&damaged, &cut[..cut.len() - 20]).unwrap();
    let (code, out) = verify_text(&damaged);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("a partial last line"), "{out}");
}

/// The power cut kills the rig; the writer's next write fails, and it writes
/// that error in its trailer. The verdict says the writer stopped after an
/// I/O error, not that it "stopped normally".
#[test]
fn a_writer_stopped_by_an_io_error_is_reported_so() {
    let d = tempfile::tempdir().unwrap();
    let (back, mnt) = rig_dirs(d.path());
    let acks = d.path().join("acks.log");
    let journal = d.path().join("journal");
    let Some(rig) = FuseRig::mount(
        &back,
        &mnt,
        &journal,
        &["--mode", "honest", "--cache-writes", "32"],
    ) else {
        return;
    };
    let mut writer = write_until(&mnt.join("f"), &acks, 200);
    rig.crash();
    // The writer is left to find the cut itself.
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = writer.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the writer did not stop after the power cut"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1), "the writer stopped with an error");
    let after = FuseRig::mount(&back, &mnt, &d.path().join("journal2"), &["--mode", "off"])
        .expect("the rig mounted a moment ago");
    let o = common::iosim()
        .args(["crash", "verify", "--no-save", "--acks"])
        .arg(&acks)
        .output()
        .unwrap();
    drop(after);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("the writer stopped after an I/O error: write of 8192 bytes at offset")
            || out.contains("the writer stopped after an I/O error: fdatasync failed")
            || out.contains("the writer stopped after an I/O error: fsync failed"),
        "{out}"
    );
    assert!(!out.contains("stopped normally"), "{out}");
}
