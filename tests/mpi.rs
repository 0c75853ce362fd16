//! Collective runs under `mpirun` (feature `mpi`): the merged result against
//! the ranks' own, against the kernel's counters, shared-target disjointness,
//! failure and singleton behaviour. Each test skips with a printed reason when
//! the binary was built without `--features mpi` or Open MPI is missing.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `mpirun -np N iosim ARGS...` (under `timeout`, so a hang fails instead of
/// blocking CI), or None with a printed reason.
fn mpirun(np: usize) -> Option<Command> {
    if !cfg!(feature = "mpi") {
        crate::common::skip("iosim was built without the mpi feature (cargo test --features mpi)");
        return None;
    }
    if !common::have("mpirun") {
        crate::common::skip("mpirun is missing (apt-get install openmpi-bin libopenmpi-dev)");
        return None;
    }
    let mut c = Command::new("timeout");
    c.args(["-k", "5", "120", "mpirun"]);
    if common::is_root() {
        c.arg("--allow-run-as-root");
    }
    c.args(["--oversubscribe", "-np", &np.to_string()]);
    // Loopback only; history kept out of the real data directory.
    c.args([
        "--mca",
        "btl",
        "self,vader,tcp",
        "--mca",
        "btl_tcp_if_include",
        "lo",
    ]);
    c.args(["--mca", "oob_tcp_if_include", "lo"]);
    c.arg("-x").arg("XDG_DATA_HOME");
    c.env("XDG_DATA_HOME", common::test_data_home());
    c.env("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
    // Never in the checkout: what iosim writes by default goes to the current directory.
    c.current_dir(common::scratch_dir());
    c.arg(crate::common::bin());
    Some(c)
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(out: &Output) -> Value {
    let s = ok(out);
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}):\n{s}"))
}

fn hist(s: &Value) -> hdrhistogram::Histogram<u64> {
    iosim::stats::decode_histogram(s.as_str().unwrap()).unwrap()
}

#[test]
fn aggregate_is_the_sum_of_the_ranks_and_percentiles_are_exact() {
    let Some(mut c) = mpirun(4) else { return };
    let out = c
        .args(["run", "--engine", "null", "-d", "1s", "--qd", "4"])
        .args(["--output", "json", "--quiet", "--no-save"])
        .output()
        .unwrap();
    let v = json(&out);
    let ranks = &v["ranks"];
    assert_eq!(ranks["count"], 4);
    let per_rank = ranks["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 4);
    let sum: u64 = per_rank
        .iter()
        .map(|r| r["result"]["total"]["ios"].as_u64().unwrap())
        .sum();
    let total = v["total"]["total"]["ios"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(total, sum, "aggregate ios = sum of the ranks' ios");
    let window = ranks["window_s"].as_f64().unwrap();
    let iops = v["total"]["total"]["iops"].as_f64().unwrap();
    assert!((iops - total as f64 / window).abs() < 1e-6 * iops);

    // The merged histogram holds every I/O, and its percentiles are those of
    // one histogram built from all the ranks' samples.
    let merged = hist(&v["histograms"]["read"]);
    assert_eq!(merged.len(), total);
    let mut all = iosim::stats::new_histogram();
    for r in per_rank {
        all.add(hist(&r["histograms"]["read"])).unwrap();
    }
    assert_eq!(all.len(), total);
    for (label, q) in [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)] {
        let want = all.value_at_quantile(q) as f64 / 1000.0;
        let got = v["total"]["read"]["latency_us"]["percentiles"][label]
            .as_f64()
            .unwrap();
        assert!(
            (got - want).abs() <= 1e-9 * want.max(1.0),
            "{label}: merged {got} us, from all samples {want} us"
        );
    }
    // One host here: its sum is the aggregate.
    assert_eq!(ranks["per_host"][0]["ios"].as_u64().unwrap(), total);
    assert_eq!(v["threads"].as_array().unwrap().len(), 4);
}

#[test]
fn loop_device_kernel_count_equals_the_aggregate() {
    if mpirun(1).is_none() {
        return;
    }
    let Some(lo) = common::LoopDev::new(64 << 20) else {
        return;
    };
    let _ = Command::new("udevadm").arg("settle").status();
    std::thread::sleep(Duration::from_millis(200));
    let (r0, _) = common::diskstats(&lo.name);
    let out = mpirun(4)
        .unwrap()
        .arg("run")
        .arg(&lo.dev)
        .args(["--rw", "randread", "--bs", "4K", "--number-ios", "500"])
        .args(["-d", "20s", "--output", "json", "--quiet", "--no-save"])
        .output()
        .unwrap();
    let v = json(&out);
    let (r1, _) = common::diskstats(&lo.name);
    let total = v["total"]["read"]["ios"].as_u64().unwrap();
    assert_eq!(total, 4 * 500);
    assert_eq!(r1 - r0, total, "kernel reads of {} = aggregate", lo.name);
}

#[test]
fn shared_target_ranks_never_touch_the_same_block() {
    let Some(mut c) = mpirun(4) else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shared.dat");
    let (size, bs) = (4u64 << 20, 4096u64);
    // A zero-filled file made by iosim (so writes to it are allowed).
    ok(&common::iosim()
        .arg("create")
        .arg(&file)
        .args(["--size", "4M", "--fill", "zero", "--quiet"])
        .output()
        .unwrap());
    // Each rank writes its slice once, sequentially: 256 blocks each.
    let per_rank = size / bs / 4;
    let out = c
        .arg("run")
        .arg(&file)
        .args(["--share-target", "--rw", "write", "--bs", "4K"])
        .args(["--number-ios", &per_rank.to_string(), "-d", "30s"])
        .args(["--output", "json", "--quiet", "--no-save"])
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(v["total"]["write"]["ios"].as_u64().unwrap(), size / bs);
    // Verify: with exactly one write per block in total, any overlap between
    // ranks would leave some block never written (still zero).
    let data = common::read(&file);
    assert_eq!(data.len() as u64, size);
    let zero_blocks: Vec<usize> = data
        .chunks(bs as usize)
        .enumerate()
        .filter(|(_, b)| b.iter().all(|&x| x == 0))
        .map(|(i, _)| i)
        .collect();
    assert!(
        zero_blocks.is_empty(),
        "blocks never written (so others were written twice): {zero_blocks:?}"
    );
    let mut regions: Vec<(u64, u64)> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["region_start"].as_u64().unwrap(),
                t["region_len"].as_u64().unwrap(),
            )
        })
        .collect();
    regions.sort();
    for w in regions.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "regions overlap: {regions:?}");
    }
}

#[test]
fn all_ranks_writing_one_file_whole_is_refused() {
    let Some(mut c) = mpirun(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = c
        .arg("run")
        .arg(dir.path().join("one.dat"))
        .args([
            "--size",
            "1M",
            "--rw",
            "randwrite",
            "-d",
            "1s",
            "--quiet",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--share-target"), "{err}");
    assert!(
        !dir.path().join("one.dat").exists(),
        "refused before creating anything"
    );
}

/// A command that is not collective (`commands::ranks::under_launcher`) is
/// refused on every rank before it touches a target: no rank writes a path
/// that no rule made its own.
#[test]
fn commands_that_are_not_collective_are_refused_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    let d = dir.path().to_str().unwrap();
    for args in [
        vec!["fsync", d, "--no-save"],
        vec!["crash", "write", file.to_str().unwrap(), "--size", "1M"],
        vec!["precondition", file.to_str().unwrap(), "--size", "1M"],
        vec!["qualify", "--data", d, "--no-save"],
    ] {
        let Some(mut c) = mpirun(2) else { return };
        let out = c.args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("does not run collectively yet"),
            "{args:?}: {err}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{args:?} touched {left:?}");
    }
}

/// How long a job that must end early (a rank failed, panicked) may take:
/// far less than its hour-long window, however slowly a busy machine starts
/// mpirun and its ranks, and less than the 120 s `timeout` around mpirun.
const ENDS_EARLY: Duration = Duration::from_secs(90);

#[test]
fn a_failing_rank_ends_the_job_quickly_and_is_named() {
    let Some(mut c) = mpirun(4) else { return };
    let dir = tempfile::tempdir().unwrap();
    // Rank 2's target exists and was not made by iosim: writing it is refused there only.
    std::fs::write(dir.path().join("t-2.dat"), vec![1u8; 1 << 20]).unwrap();
    let t0 = Instant::now();
    let out = c
        .arg("run")
        .arg(dir.path().join("t-%r.dat"))
        .args([
            "--size",
            "1M",
            "--rw",
            "randwrite",
            "-d",
            "1h",
            "--quiet",
            "--no-save",
        ])
        .output()
        .unwrap();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(took < ENDS_EARLY, "took {took:?}: {err}");
    assert!(err.contains("rank 2 of 4 on "), "{err}");
}

#[test]
fn a_panicking_rank_ends_the_job() {
    let Some(mut c) = mpirun(3) else { return };
    let t0 = Instant::now();
    let out = c
        .env("IOSIM_TEST_PANIC_RANK", "1")
        .args([
            "run",
            "--engine",
            "null",
            "-d",
            "1h",
            "--quiet",
            "--no-save",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(t0.elapsed() < ENDS_EARLY, "{err}");
    assert!(err.contains("rank 1 of 3 on "), "{err}");
}

#[test]
fn ranks_with_different_options_are_refused() {
    let Some(mut c) = mpirun(2) else { return };
    // MPMD: the second rank gets another duration.
    let out = c
        .args([
            "run",
            "--engine",
            "null",
            "-d",
            "1s",
            "--quiet",
            "--no-save",
        ])
        .args([":", "-np", "1", crate::common::bin()])
        .args([
            "run",
            "--engine",
            "null",
            "-d",
            "2s",
            "--quiet",
            "--no-save",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("rank 2 on ") && err.contains("different options"),
        "{err}"
    );
}

#[test]
fn singleton_behaves_as_the_plain_binary() {
    let Some(mut c) = mpirun(1) else { return };
    let args = [
        "run",
        "--engine",
        "null",
        "-d",
        "200ms",
        "--output",
        "json",
        "--quiet",
        "--no-save",
    ];
    let under = json(&c.args(args).output().unwrap());
    let plain = json(&common::iosim().args(args).output().unwrap());
    assert!(under.get("ranks").is_none());
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&under), keys(&plain));
    assert_eq!(under["config"], plain["config"]);
    assert!(!under["notes"].to_string().contains("collective"));
}

#[test]
fn file_per_rank_paths_expand() {
    let Some(mut c) = mpirun(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let v = json(
        &c.arg("run")
            .arg(dir.path().join("t-%r-of-%n.dat"))
            .args(["--size", "1M", "--rw", "randwrite", "-d", "300ms"])
            .args(["--output", "json", "--quiet", "--no-save"])
            .output()
            .unwrap(),
    );
    for r in 0..2 {
        assert!(Path::new(&dir.path().join(format!("t-{r}-of-2.dat"))).exists());
    }
    let paths: Vec<&str> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert!(
        paths[0].ends_with("t-0-of-2.dat") && paths[1].ends_with("t-1-of-2.dat"),
        "{paths:?}"
    );
}

/// Four ranks with the same count of work, the last one held back: with
/// --stonewall the window ends when the first rank is done, so the held-back
/// rank stops short of its count.
///
/// The last rank is held back with SIGSTOP, not by scheduling priority: a
/// niced rank is no slower when the whole test suite runs niced on a busy
/// machine (it then finished its count first, or as soon as the others).
/// It is stopped except for short slices until the other ranks' window is
/// open (their workers use CPU), then stays stopped until their windows have
/// ended (their workers are gone), then continues, sees the others' stonewall
/// notice and stops.
#[test]
fn stonewall_ends_the_window_at_the_first_finish() {
    let Some(mut c) = mpirun(4) else { return };
    // Enough work that the ranks are still running when the held one is
    // first stopped (a quiet CI run's four ranks each finished 1,000,000
    // null I/Os before the STOP/CONT loop saw the others run).
    const WORK: u64 = 8_000_000;
    let mut child = c
        .args(["run", "--engine", "null", "--number-ios", &WORK.to_string()])
        .args(["-d", "60s", "--stonewall", "--output", "json", "--quiet"])
        .arg("--no-save")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (_, ranks) = launched_ranks(&child, 4);
    let (held, others) = (ranks[3], &ranks[..3]);
    let signal = |sig: &str| {
        // The rank may have exited already: nothing to stop or continue then.
        let _ = Command::new("kill").args([sig, &held.to_string()]).status();
    };
    let deadline = Instant::now() + Duration::from_secs(100);
    let mut others_ran = false;
    // Checks in a row that saw no worker thread in any other rank: three
    // (0.6 s, the held rank still stopped) before taking their windows for
    // ended, so a moment between two phases of theirs does not free the
    // held rank early (a quiet CI run's held rank 3 then finished first).
    let mut gone = 0;
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        let before: Vec<Option<u64>> = others.iter().map(|&p| worker_ticks(p)).collect();
        if others_ran && before.iter().all(Option::is_none) {
            gone += 1;
            if gone >= 3 {
                break; // every other rank's window has ended
            }
        } else {
            gone = 0;
        }
        signal("-STOP");
        std::thread::sleep(Duration::from_millis(200));
        let after: Vec<Option<u64>> = others.iter().map(|&p| worker_ticks(p)).collect();
        others_ran |= before.iter().zip(&after).any(|(b, a)| match (b, a) {
            (Some(b), Some(a)) => a > b,
            _ => false,
        });
        if !others_ran {
            // Still setting up or at a barrier: let the held rank catch up.
            signal("-CONT");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    signal("-CONT");
    let v = json(&child.wait_with_output().unwrap());
    let ranks = &v["ranks"];
    assert_eq!(ranks["stonewall"], true);
    let ios: Vec<u64> = ranks["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["result"]["total"]["ios"].as_u64().unwrap())
        .collect();
    assert!(ios.iter().all(|&n| n <= WORK), "{ios:?}");
    assert!(ios.contains(&WORK), "some rank finished its work: {ios:?}");
    assert!(
        ios[3] < WORK,
        "the held-back rank was stopped short: {ios:?}"
    );
    assert_eq!(v["interrupted"], false);
    assert_eq!(
        v["total"]["total"]["ios"].as_u64().unwrap(),
        ios.iter().sum::<u64>()
    );
}

/// SIGTERM (what mpirun forwards on Ctrl-C) to one rank only ends the window
/// on every rank, and rank 0 still prints what was measured.
#[test]
fn one_interrupted_rank_stops_every_rank_and_results_are_printed() {
    let Some(mut c) = mpirun(3) else { return };
    let (child, _, ranks) = start_null_run(&mut c, 3, &["--output", "json"]);
    // Signal one rank only, once every rank's 60 s window is open.
    let t0 = Instant::now();
    assert!(Command::new("kill")
        .args(["-TERM", &ranks[1].to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "the window did not end on every rank"
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["interrupted"], true);
    assert!(v["total"]["total"]["ios"].as_u64().unwrap() > 0);
    for r in v["ranks"]["per_rank"].as_array().unwrap() {
        assert!(r["duration_s"].as_f64().unwrap() < 30.0, "{r}");
    }
}

/// Starts a 60 s null-engine run of `np` ranks under `c` (with `extra`
/// options) and waits until every rank's window is open (its I/O worker
/// uses CPU: the null engine's workers are parked until the window opens,
/// after the rank has set up its signal handlers and met the others).
/// Returns the child, mpirun's process id and the ranks' process ids in
/// rank order.
fn start_null_run(
    c: &mut Command,
    np: usize,
    extra: &[&str],
) -> (std::process::Child, u32, Vec<u32>) {
    let child = c
        .args([
            "run",
            "--engine",
            "null",
            "-d",
            "60s",
            "--quiet",
            "--no-save",
        ])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (launcher, ranks) = launched_ranks(&child, np);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let ticks: Vec<Option<u64>> = ranks.iter().map(|&p| worker_ticks(p)).collect();
        std::thread::sleep(Duration::from_millis(100));
        let running = ranks
            .iter()
            .zip(&ticks)
            .all(|(&p, t)| matches!((t, worker_ticks(p)), (Some(a), Some(b)) if b > *a));
        if running {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the ranks' windows never opened: {ticks:?}"
        );
    }
    (child, launcher, ranks)
}

/// Waits (a minute at most) until mpirun, the child of `timeout` in
/// `child`, has started `np` ranks; returns mpirun's process id and the
/// ranks' process ids in rank order.
fn launched_ranks(child: &std::process::Child, np: usize) -> (u32, Vec<u32>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        for m in children(child.id()) {
            let mut ranks: Vec<(u32, u32)> = children(m)
                .into_iter()
                .filter_map(|p| Some((rank_of(p)?, p)))
                .collect();
            if ranks.len() == np {
                ranks.sort();
                return (m, ranks.into_iter().map(|(_, p)| p).collect());
            }
        }
        assert!(Instant::now() < deadline, "mpirun never started its ranks");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The MPI rank of process `pid`, from the environment mpirun gave it.
fn rank_of(pid: u32) -> Option<u32> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    env.split(|&b| b == 0).find_map(|kv| {
        std::str::from_utf8(kv)
            .ok()?
            .strip_prefix("OMPI_COMM_WORLD_RANK=")?
            .parse()
            .ok()
    })
}

/// CPU time (clock ticks) of the I/O worker threads (`iosim-w*`) of process
/// `pid`; None while it has none (before they start, after they end).
fn worker_ticks(pid: u32) -> Option<u64> {
    let mut total = None;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let dir = t.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if !comm.starts_with("iosim-w") {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        // After the comm's ')': state ppid ... utime (12th) stime (13th).
        let f: Vec<u64> = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .skip(11)
                    .take(2)
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        *total.get_or_insert(0) += f.iter().sum::<u64>();
    }
    total
}

/// Process ids whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|x| x.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(p);
        }
    }
    out
}

/// The JSON documents on stdout (rank 0 alone prints: exactly one).
fn one_json(out: &Output) -> Value {
    let s = ok(out);
    let docs: Vec<Value> = serde_json::Deserializer::from_str(&s)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{s}"));
    assert_eq!(docs.len(), 1, "only rank 0 prints:\n{s}");
    docs.into_iter().next().unwrap()
}

/// Each sweep point is one collective run: every rank runs it on its own
/// file (`%r`), rank 0 alone prints, and a point's IOPS is the ranks' sum (two
/// ranks each capped at 500 IOPS give well over one rank's cap).
#[test]
fn sweep_points_are_collective() {
    let Some(mut c) = mpirun(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let v = one_json(
        &c.arg("sweep")
            .arg(dir.path().join("s-%r.dat"))
            .args(["--size", "1M", "--rw", "randread", "--vary", "qd=1,2"])
            // Through the page cache: the rate cap, not a disk other tests
            // keep busy, decides each rank's IOPS.
            .args(["--cache", "buffered"])
            .args(["--rate-iops", "500", "-d", "1s", "--warmup", "0"])
            .args(["--output", "json", "--quiet", "--no-save"])
            .output()
            .unwrap(),
    );
    assert!(dir.path().join("s-0.dat").exists() && dir.path().join("s-1.dat").exists());
    // The document names the target as the command line did.
    let named = v["base"]["targets"][0]["path"].as_str().unwrap();
    assert!(named.ends_with("s-%r.dat"), "{named}");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        let iops = p["iops"]["mean"].as_f64().unwrap();
        assert!(
            iops > 1.5 * 500.0 && iops < 2.2 * 500.0,
            "two ranks capped at 500 IOPS each: {p}"
        );
    }
}

/// `run --profile` under mpirun: each rank runs the profile on its own files,
/// both workloads of the phase in one window, and each workload's result is
/// merged across ranks (ios = the sum of the ranks').
#[test]
fn profile_runs_collectively_with_its_own_files_per_rank() {
    let Some(mut c) = mpirun(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = c
        .args(["run", "--profile", "oltp-with-log"])
        .arg(dir.path().join("data-%r.dat"))
        .arg(dir.path().join("log.dat"))
        .args([
            "--size",
            "8M",
            "-d",
            "500ms",
            "--output",
            "json",
            "--no-save",
        ])
        .output()
        .unwrap();
    let v = one_json(&out);
    for f in ["data-0.dat", "data-1.dat"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    // A path without placeholders gets the host and local rank.
    let logs: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("log-"))
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for w in results {
        let ranks = &w["ranks"];
        assert_eq!(ranks["count"], 2, "{w}");
        let sum: u64 = ranks["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["result"]["total"]["ios"].as_u64().unwrap())
            .sum();
        let total = w["result"]["total"]["total"]["ios"].as_u64().unwrap();
        assert!(total > 0);
        assert_eq!(total, sum, "{}", w["name"]);
        let targets: Vec<&str> = ranks["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["targets"][0].as_str().unwrap())
            .collect();
        assert_ne!(targets[0], targets[1], "each rank its own file");
    }
    // `iosim profile list` under the launcher: rank 0 alone prints.
    let list = mpirun(2)
        .unwrap()
        .args(["profile", "list"])
        .output()
        .unwrap();
    let text = ok(&list);
    assert_eq!(text.matches("oltp-with-log").count(), 1, "{text}");
}

/// A small simulation configuration with rank placeholders in its file names.
fn sim_ini(dir: &Path) -> std::path::PathBuf {
    let text = format!(
        "[CONFIG]\nMaxMemoryMB=16\nTestCycles=1\nTestCycleDuration=4\nStopOnError=FALSE\n\
         [RandomUser]\nUserCount=1\nRandomUserReadWriteRatio=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName={d}/sim-%r.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\n\
         [File2]\nFileName={d}/sim-%r.ldx\nInitialSize=4\nMaxSize=4\nLogFile=TRUE\n",
        d = dir.display()
    );
    let p = dir.join("sim.cfg.ini");
    std::fs::write(&p, text).unwrap();
    p
}

/// `sim` under mpirun: each rank simulates its own files; rank 0 prints one
/// result with every rank's line, and a clean job exits 0.
#[test]
fn sim_runs_on_every_rank_with_its_own_files() {
    let Some(mut c) = mpirun(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let cfg = sim_ini(dir.path());
    let v = one_json(
        &c.args(["sim", "-q", "-o", "json", "--no-save", "--config"])
            .arg(&cfg)
            .arg("--log")
            .arg(dir.path().join("errors-%r.jsonl"))
            .output()
            .unwrap(),
    );
    for f in ["sim-0.mdx", "sim-1.mdx", "sim-0.ldx", "sim-1.ldx"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let ranks = &v["ranks"];
    assert_eq!(ranks["count"], 2);
    assert_eq!(ranks["errors"], 0);
    let per: Vec<&Value> = ranks["per_rank"].as_array().unwrap().iter().collect();
    assert!(per
        .iter()
        .all(|r| r["result"]["total"]["ios"].as_u64().unwrap() > 0));
    let sum: u64 = per
        .iter()
        .map(|r| r["result"]["total"]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(ranks["ios"].as_u64().unwrap(), sum);
}

/// One rank's database damaged behind its back: that rank counts errors, the
/// job's count is the sum, and every rank exits 3 (so mpirun fails).
#[test]
fn a_sim_error_on_one_rank_fails_the_job() {
    use std::os::unix::fs::FileExt;
    let Some(mut c) = mpirun(2) else { return };
    let dir = tempfile::tempdir().unwrap();
    let cfg = sim_ini(dir.path());
    let child = c
        .args(["sim", "-q", "-o", "json", "--no-save", "--config"])
        .arg(&cfg)
        .arg("--log")
        .arg(dir.path().join("errors-%r.jsonl"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once rank 1 has formatted its data file, flip a bit in page 100.
    let data = dir.path().join("sim-1.mdx");
    let deadline = Instant::now() + Duration::from_secs(60);
    let f = loop {
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&data)
        {
            let mut b = [0u8; 4];
            if f.read_at(&mut b, 1023 * 8192).is_ok() && &b == b"IOSP" {
                break f;
            }
        }
        assert!(Instant::now() < deadline, "rank 1 never formatted its file");
    };
    std::thread::sleep(Duration::from_millis(300));
    let mut b = [0u8; 1];
    f.read_at(&mut b, 100 * 8192 + 4000).unwrap();
    f.write_at(&[b[0] ^ 0x10], 100 * 8192 + 4000).unwrap();
    f.sync_all().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let per = v["ranks"]["per_rank"].as_array().unwrap();
    assert_eq!(per[0]["errors"], 0, "{per:?}");
    assert!(per[1]["errors"].as_u64().unwrap() > 0, "{per:?}");
    assert_eq!(v["ranks"]["errors"], per[1]["errors"]);
}

/// `--share-target` on one loop device written by four ranks of one host:
/// only the lowest rank claims the device (O_EXCL), so no rank fails with
/// EBUSY; each writes its slice once, sequentially, and reading the device
/// back shows every block written exactly by the rank that owns its slice.
#[test]
fn shared_block_device_on_one_host_is_split_without_exclusive_open_failures() {
    if mpirun(1).is_none() {
        return;
    }
    let (size, bs, np) = (4u64 << 20, 4096u64, 4u64);
    let Some(lo) = common::LoopDev::new(size) else {
        return;
    };
    let per_rank = size / bs / np;
    let v = json(
        &mpirun(np as usize)
            .unwrap()
            .arg("run")
            .arg(&lo.dev)
            .args(["--share-target", "--allow-destroy", "--rw", "write"])
            .args(["--bs", "4K", "--number-ios", &per_rank.to_string()])
            .args(["-d", "30s", "--output", "json", "--quiet", "--no-save"])
            .output()
            .unwrap(),
    );
    assert_eq!(v["total"]["write"]["ios"].as_u64().unwrap(), size / bs);
    // Verify: each block was written once (no zero block is left: with one
    // write per block in total, an overlap would leave a block unwritten).
    let data = common::read(Path::new(&lo.dev));
    assert_eq!(data.len() as u64, size);
    let zero: Vec<usize> = data
        .chunks(bs as usize)
        .enumerate()
        .filter(|(_, b)| b.iter().all(|&x| x == 0))
        .map(|(i, _)| i)
        .collect();
    assert!(zero.is_empty(), "blocks never written: {zero:?}");
    // And every rank wrote only inside its own slice.
    let mut regions: Vec<(u64, u64)> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["region_start"].as_u64().unwrap(),
                t["region_len"].as_u64().unwrap(),
            )
        })
        .collect();
    regions.sort();
    assert_eq!(regions.len(), np as usize);
    for w in regions.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "regions overlap: {regions:?}");
    }
}

/// Ctrl-C on the launcher: mpirun passes it on to every rank (as SIGTERM),
/// every rank ends the window, and rank 0 still prints what was measured,
/// marked interrupted, with no MPI abort. (Text: once aborting, Open MPI 4.1's
/// mpirun forwards only the first ~10 KB of a rank's output, see
/// docs/distributed.md.)
#[test]
fn ctrl_c_on_mpirun_stops_every_rank_and_prints_the_result() {
    let Some(mut c) = mpirun(3) else { return };
    let (child, launcher, _) = start_null_run(&mut c, 3, &[]);
    // Once every rank's 60 s window is open.
    let t0 = Instant::now();
    assert!(Command::new("kill")
        .args(["-INT", &launcher.to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(t0.elapsed() < Duration::from_secs(40), "{err}");
    assert!(text.contains("INTERRUPTED"), "{text}\n{err}");
    assert!(text.contains("Ranks: 3 on 1 host(s)"), "{text}\n{err}");
    // The whole report arrived: its last line, and the job's totals. (A rank
    // may straggle on a busy machine: the report then names it last.)
    let last = text.trim_end().lines().last().unwrap_or_default();
    assert!(
        last == "Stragglers: none" || last.starts_with("Straggler: "),
        "{text}\n{err}"
    );
    assert!(!err.contains("MPI_ABORT"), "{err}");
}

/// `mpirun ... iosim run | head -1`: the reader leaves after one line; the
/// job ends at once, without an abort.
#[test]
fn head_on_rank_0_output_ends_the_job_quietly() {
    use std::io::BufRead;
    let Some(mut c) = mpirun(2) else { return };
    let mut child = c
        .args([
            "run",
            "--engine",
            "null",
            "-d",
            "1s",
            "--quiet",
            "--no-save",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
        r.read_line(&mut first).unwrap();
    } // the reader goes away here
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(first.starts_with("iosim "), "{first}");
    assert!(!err.contains("MPI_ABORT"), "{err}");
    assert!(err.lines().count() <= 1, "{err}");
}
