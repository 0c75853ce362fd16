//! SQLIO and DiskSpd compatibility: every command line in the seeds runs and
//! prints the layout scripts expect; snapshot tests pin each output format;
//! seed 001's PowerShell parsing gives the numbers the JSON reports.
//!
//! Snapshots live in tests/snapshots/; regenerate deliberately with
//! `UPDATE_SNAPSHOTS=1 cargo test --test compat` and review the diff.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use iosim::compat::{diskspd, sqlio, Extensions, Warnings};
use iosim::runner::{
    CpuResult, ErrorSummary, HistogramSet, PointStats, RunResult, Series, SeriesPoint,
    TargetResult, ThreadResult,
};
use iosim::stats::{encode_histogram, RwStats};
use iosim::sysmon::cpu::CoreUtil;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("iosim")
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Runs `iosim <tool> <args>` in `dir` with drive letters mapped into `dir`.
fn run_in(dir: &Path, tool: &str, args: &[String]) -> Output {
    let drives = format!(
        "C={d};L={d};X={d};Z={d};F={d};G={d};H={d}",
        d = dir.display()
    );
    Command::new(bin())
        .current_dir(dir)
        .env("IOSIM_DRIVES", drives)
        .arg(tool)
        .args(args)
        .output()
        .expect("iosim runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Matches `line` against `pat`, where `<n>` stands for a number and `<*>` for the rest of the line.
fn shape(line: &str, pat: &str) -> bool {
    let (mut l, mut p) = (line, pat);
    loop {
        if let Some(rest) = p.strip_prefix("<*>") {
            assert!(rest.is_empty(), "<*> must end a pattern");
            return true;
        }
        if let Some(rest) = p.strip_prefix("<n>") {
            let end = l
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(l.len());
            if end == 0 {
                return false;
            }
            l = &l[end..];
            p = rest;
            continue;
        }
        match (l.chars().next(), p.chars().next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == b => {
                l = &l[a.len_utf8()..];
                p = &p[b.len_utf8()..];
            }
            _ => return false,
        }
    }
}

fn assert_shape(out: &str, expected: &[String], what: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        expected.len(),
        "{what}: line count differs\n--- got ---\n{out}\n--- expected ---\n{}",
        expected.join("\n")
    );
    for (i, (l, e)) in lines.iter().zip(expected).enumerate() {
        assert!(
            shape(l, e),
            "{what}: line {i} is {l:?}, expected {e:?}\n{out}"
        );
    }
}

/// What SQLIO prints for a command line without -F, line by line.
fn sqlio_expected(cmd: &str, file: &str, created: bool) -> Vec<String> {
    let opt = |f: &str| {
        cmd.split_whitespace()
            .find_map(|w| w.strip_prefix(f).map(String::from))
    };
    let mut e = vec!["sqlio v1.5.SG".to_string()];
    let latency = opt("-L").is_some();
    if latency {
        e.push("using system counter for latency timings, 1000000000 counts per second<*>".into());
    }
    let t: u32 = opt("-t").map_or(1, |t| t.trim().parse().unwrap());
    let write = opt("-k").as_deref() == Some("W");
    e.push(format!(
        "{t} thread{} {} for 1 secs {} file {file}",
        if t == 1 { "" } else { "s" },
        if write { "writing" } else { "reading" },
        if write { "to" } else { "from" }
    ));
    e.push(format!(
        "\tusing {}KB {} IOs",
        opt("-b").unwrap(),
        opt("-f").unwrap()
    ));
    if let Some(o) = opt("-o") {
        e.push(format!(
            "\tenabling multiple I/Os per thread with {} outstanding",
            o.trim()
        ));
    }
    match opt("-B").as_deref() {
        Some("N") => {
            e.push("\tbuffering set to not use file nor disk caches (as is SQL Server)".into())
        }
        Some("H") => {
            e.push("\tbuffering set to use hardware disk cache (but not file cache)".into())
        }
        None => {}
        Some(b) => panic!("no seed uses -B{b}"),
    }
    if created {
        e.push(format!("size of file {file} needs to be: <n> bytes"));
        e.push("current file size: 0 bytes".into());
        e.push("need to expand by: <n> bytes".into());
        e.push(format!("expanding {file} ... done."));
    }
    e.push(format!("using current size: 16 MB for file: {file}"));
    for l in [
        "initialization done",
        "CUMULATIVE DATA:",
        "throughput metrics:",
        "IOs/sec: <n>",
        "MBs/sec: <n>",
    ] {
        e.push(l.into());
    }
    if latency {
        e.push("latency metrics:".into());
        e.push("Min_Latency(ms): <n>".into());
        e.push("Avg_Latency(ms): <n>".into());
        e.push("Max_Latency(ms): <n>".into());
        e.push("histogram:".into());
        e.push("ms: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+".into());
        e.push(format!("%:{}", " <n>".repeat(25)));
    }
    e
}

/// Seed 001's PowerShell: `$r.Split("`n")[i].Split(":")[1].Trim()`.
fn powershell_field(out: &str, i: usize) -> String {
    out.split('\n')
        .nth(i)
        .unwrap()
        .split(':')
        .nth(1)
        .unwrap()
        .trim()
        .to_string()
}

fn with_short_duration(cmd: &str) -> String {
    cmd.split_whitespace()
        .map(|w| {
            if w.starts_with("-s") && w[2..].chars().all(|c| c.is_ascii_digit()) && w.len() > 2 {
                "-s1".to_string()
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs several commands at a time (the machine is small; runs last ~1 s each).
fn run_all(dir: &Path, tool: &str, cmds: &[String]) -> Vec<Output> {
    let mut outs: Vec<Option<Output>> = vec![None; cmds.len()];
    for chunk in (0..cmds.len()).collect::<Vec<_>>().chunks(4) {
        std::thread::scope(|s| {
            let hs: Vec<_> = chunk
                .iter()
                .map(|&i| (i, s.spawn(move || run_in(dir, tool, &words(&cmds[i])))))
                .collect();
            for (i, h) in hs {
                outs[i] = Some(h.join().unwrap());
            }
        });
    }
    outs.into_iter().map(Option::unwrap).collect()
}

/// Seed 000 (mssqltips): create the file with a parameter file, then every test line.
#[test]
fn seed_000_sqlio_command_lines_run_with_sqlios_layout() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("param.txt"), "L:\\testfile.dat 2 0x0 16\n").unwrap();
    let file = dir.path().join("testfile.dat");
    let f = file.display().to_string();

    // The creation run, as in the seed.
    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-kW -s1 -fsequential -o4 -b64 -Fparam.txt"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let expected: Vec<String> = [
        "sqlio v1.5.SG".to_string(),
        "parameter file used: param.txt".into(),
        format!("\tfile {f} with 2 threads (0-1) using mask 0x0 (0)"),
        format!("2 threads writing for 1 secs to file {f}"),
        "\tusing 64KB sequential IOs".into(),
        "\tenabling multiple I/Os per thread with 4 outstanding".into(),
        format!("size of file {f} needs to be: 16777216 bytes"),
        "current file size: 0 bytes".into(),
        "need to expand by: 16777216 bytes".into(),
        format!("expanding {f} ... done."),
        format!("using specified size: 16 MB for file: {f}"),
        "initialization done".into(),
        "CUMULATIVE DATA:".into(),
        "throughput metrics:".into(),
        "IOs/sec: <n>".into(),
        "MBs/sec: <n>".into(),
    ]
    .to_vec();
    assert_shape(&stdout(&o), &expected, "creation run");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 16 << 20);

    let mut cmds = Vec::new();
    for (k, f_, b, pairs) in [
        ("W", "random", 64, &[(1, 1), (2, 1), (4, 1), (8, 1)][..]),
        (
            "R",
            "random",
            64,
            &[
                (1, 1),
                (2, 1),
                (4, 1),
                (8, 1),
                (8, 2),
                (8, 4),
                (8, 8),
                (8, 16),
                (8, 32),
                (8, 64),
                (8, 128),
            ][..],
        ),
        (
            "R",
            "sequential",
            64,
            &[
                (1, 1),
                (2, 1),
                (4, 1),
                (8, 1),
                (8, 2),
                (8, 4),
                (8, 8),
                (8, 16),
                (8, 32),
                (8, 64),
                (8, 128),
            ][..],
        ),
        (
            "W",
            "sequential",
            8,
            &[
                (1, 1),
                (2, 1),
                (4, 1),
                (8, 1),
                (8, 2),
                (8, 4),
                (8, 8),
                (8, 16),
                (8, 32),
                (8, 64),
                (8, 128),
            ][..],
        ),
    ] {
        for (t, o) in pairs {
            cmds.push(with_short_duration(&format!(
                "-dL -BH -k{k} -f{f_} -t{t} -o{o} -s90 -b{b} testfile.dat"
            )));
        }
    }
    assert_eq!(cmds.len(), 37);
    let outs = run_all(dir.path(), "sqlio", &cmds);
    for (c, o) in cmds.iter().zip(&outs) {
        assert!(o.status.success(), "{c}: {}", stderr(o));
        assert_shape(&stdout(o), &sqlio_expected(c, &f, false), c);
    }
}

/// Seed 001 (Jose Barreto): every command line, including the PowerShell loops'.
#[test]
fn seed_001_sqlio_command_lines_run_and_powershell_parsing_works() {
    let dir = tempfile::tempdir().unwrap();
    // The seed makes a 40 GB file with fsutil first; iosim makes a small one here.
    std::fs::write(
        dir.path().join("p.txt"),
        "X:\\TestFile.DAT 1 0x0 16\nZ:\\testfile.dat 1 0x0 16\n",
    )
    .unwrap();
    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-kW -s1 -fsequential -b64 -Fp.txt"),
    );
    assert!(o.status.success(), "{}", stderr(&o));

    let cmds: Vec<String> = [
        "-s10 -kR -frandom -b8 -t8 -o16 -LS -BN X:\\TestFile.DAT",
        "-s10 -kR -fsequential -b512 -t2 -o16 -LS -BN X:\\TestFile.DAT",
        "-s10 -kR -fsequential -b512 -t1 -o1 -LS -BN X:\\TestFile.DAT",
        "-s10 -kR -fsequential -b512 -t1 -o2 -LS -BN X:\\TestFile.DAT",
        "-s10 -kR -fsequential -b512 -t1 -o4 -LS -BN X:\\TestFile.DAT",
        "-s10 -kR -fsequential -b512 -t1 -o8 -LS -BN X:\\TestFile.DAT",
        "-s10 -kR -fsequential -b512 -t2 -o1 -LS -BN X:\\TestFile.DAT",
        "-s10 -kR -frandom -b8 -t2 -o16 -LS -BN X:\\TestFile.DAT",
        "-s60 -kR -frandom -b4 -t1 -o8 -LS -BN Z:\\testfile.dat",
    ]
    .iter()
    .map(|c| with_short_duration(c))
    .collect();
    // The loops: `1..64 | % { -o $_ }` (first and last) and the -t/-o halving loop.
    let mut ps = Vec::new();
    for o in [1, 64] {
        ps.push(vec![
            "-s1".into(),
            "-kR".into(),
            "-frandom".into(),
            "-b8".into(),
            format!("-o {o}"),
            "-t1".into(),
            "-LS".into(),
            "-BN".into(),
            "X:\\testfile.dat".into(),
        ]);
    }
    let (mut o, mut t) = (32, 1);
    while o >= 1 {
        ps.push(vec![
            "-s1".into(),
            "-kR".into(),
            "-frandom".into(),
            "-b8".into(),
            format!("-o {o}"),
            format!("-t {t}"),
            "-LS".into(),
            "-BN".into(),
            "X:\\testfile.dat".into(),
        ]);
        o /= 2;
        t *= 2;
    }
    let outs = run_all(dir.path(), "sqlio", &cmds);
    let x = dir.path().join("TestFile.DAT").display().to_string();
    let z = dir.path().join("testfile.dat").display().to_string();
    for (c, o) in cmds.iter().zip(&outs) {
        assert!(o.status.success(), "{c}: {}", stderr(o));
        let file = if c.contains("Z:") { &z } else { &x };
        let out = stdout(o);
        assert_shape(&out, &sqlio_expected(c, file, false), c);
        // The seed's parsing: lines 10, 11 and 14.
        let i: f64 = powershell_field(&out, 10).parse().unwrap();
        let m: f64 = powershell_field(&out, 11).parse().unwrap();
        let l: u64 = powershell_field(&out, 14).parse().unwrap();
        assert!(i > 0.0 && m > 0.0, "{c}: {i} {m} {l}");
    }
    // The loops pass "-o 8" as one argument; X:\testfile.dat differs in case from
    // TestFile.DAT, which matters on Linux: the loop's runs name the file as the seed does
    // and need it to exist under that name.
    std::fs::copy(
        dir.path().join("TestFile.DAT"),
        dir.path().join("testfile.dat"),
    )
    .unwrap();
    for args in &ps {
        let o = run_in(dir.path(), "sqlio", args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = stdout(&o);
        let i: f64 = powershell_field(&out, 10).parse().unwrap();
        assert!(i > 0.0);
        assert!(out
            .lines()
            .nth(4)
            .unwrap()
            .starts_with("\tenabling multiple I/Os per thread with "));
    }

    // UNC paths (section 10) are refused with what to do instead.
    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-s1 -kR -fsequential -b512 -t1 -o3 -LS -BN \\\\FSC5-D\\X$\\TestFile.DAT"),
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("UNC") && stderr(&o).contains("mount"),
        "{}",
        stderr(&o)
    );
}

/// Seed 001's PowerShell parsing of SQLIO's output gives the numbers the JSON reports.
#[test]
fn powershell_parsing_matches_the_json_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "X:\\TestFile.DAT 1 0x0 16\n").unwrap();
    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-kW -s1 -fsequential -b64 -Fp.txt"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let json = dir.path().join("r.json");
    let mut args = words("-s1 -kR -frandom -b8 -t2 -o16 -LS -BN X:\\TestFile.DAT --json");
    args.push(json.display().to_string());
    let o = run_in(dir.path(), "sqlio", &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let r: RunResult = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = &r.total.total;
    assert!(t.ios > 0);
    assert_eq!(powershell_field(&out, 10), format!("{:.2}", t.iops));
    assert_eq!(powershell_field(&out, 11), format!("{:.2}", t.mib_per_sec));
    assert_eq!(
        powershell_field(&out, 14),
        format!("{}", (t.latency_us.mean / 1000.0).floor() as u64)
    );
    // The histogram row is the JSON's buckets as rounded percentages.
    let pct: Vec<u64> = out
        .lines()
        .last()
        .unwrap()
        .trim_start_matches("%:")
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(pct, iosim::report::sqlio_percentages(t));
    assert_eq!(r.config.bs, 8192);
    assert_eq!(r.config.qd, 16);
    assert_eq!(r.threads.len(), 2);
}

/// Seed 002 (table scans): parameter files with one and two files.
#[test]
fn seed_002_parameter_files_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("DSI3500/LUN00")).unwrap();
    // The seed's files are 10000 MB; 16 MB here.
    std::fs::write(
        dir.path().join("param-READ-DSI3500-1file_1lun.txt"),
        "c:\\DSI3500\\LUN00\\testfile.dat 1 0x0 16\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("param-READ-DSI3500-2files_1lun.txt"),
        "c:\\DSI3500\\LUN00\\testfile.dat 1 0x0 16\nc:\\DSI3500\\LUN00\\testfile1.dat 1 0x0 16\n",
    )
    .unwrap();
    let a = dir
        .path()
        .join("DSI3500/LUN00/testfile.dat")
        .display()
        .to_string();
    let b = dir
        .path()
        .join("DSI3500/LUN00/testfile1.dat")
        .display()
        .to_string();
    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-kR -s1 -frandom -o8 -b256 -LS -Fparam-READ-DSI3500-1file_1lun.txt"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut e: Vec<String> = vec![
        "sqlio v1.5.SG".into(),
        "using system counter for latency timings, 1000000000 counts per second<*>".into(),
        "parameter file used: param-READ-DSI3500-1file_1lun.txt".into(),
        format!("\tfile {a} with 1 thread (0) using mask 0x0 (0)"),
        format!("1 thread reading for 1 secs from file {a}"),
        "\tusing 256KB random IOs".into(),
        "\tenabling multiple I/Os per thread with 8 outstanding".into(),
        format!("size of file {a} needs to be: 16777216 bytes"),
        "current file size: 0 bytes".into(),
        "need to expand by: 16777216 bytes".into(),
        format!("expanding {a} ... done."),
        format!("using specified size: 16 MB for file: {a}"),
    ];
    let tail: Vec<String> = sqlio_expected("-LS -b1 -frandom", "x", false)
        .into_iter()
        .skip_while(|l| l != "initialization done")
        .collect();
    e.extend(tail.clone());
    assert_shape(&stdout(&o), &e, "one file");

    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-kR -s1 -frandom -o8 -b256 -LS -Fparam-READ-DSI3500-2files_1lun.txt"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut e: Vec<String> = vec![
        "sqlio v1.5.SG".into(),
        "using system counter for latency timings, 1000000000 counts per second<*>".into(),
        "parameter file used: param-READ-DSI3500-2files_1lun.txt".into(),
        format!("\tfile {a} with 1 thread (0) using mask 0x0 (0)"),
        format!("\tfile {b} with 1 thread (1) using mask 0x0 (0)"),
        format!("2 threads reading for 1 secs from files {a} and {b}"),
        "\tusing 256KB random IOs".into(),
        "\tenabling multiple I/Os per thread with 8 outstanding".into(),
        format!("using specified size: 16 MB for file: {a}"),
        format!("size of file {b} needs to be: 16777216 bytes"),
        "current file size: 0 bytes".into(),
        "need to expand by: 16777216 bytes".into(),
        format!("expanding {b} ... done."),
        format!("using specified size: 16 MB for file: {b}"),
    ];
    e.extend(tail);
    assert_shape(&stdout(&o), &e, "two files");
}

/// Seed 004: every DiskSpd command line, small files and 1 s.
#[test]
fn seed_004_diskspd_command_lines_run_with_diskspds_layout() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = [
        "-c200G -b64k -r -t16 -o1 -h -L -w40 -d60 f:Testdata.mdf",
        "-c20G -b4k -t2 -h -L -w100 -d60 h:Testdata.ldf",
        "-c200G -b1M  -t1 -h -L -w0 -d60 f:data.mdf",
        "-c200G -b512k  -t4 -h -L -w100 -d60 g:Testdata.mdf",
        "-c70G -b512k  -t16 -h -L -w0 -d60 f:data.mdf",
        "-c70G -b512k  -t16 -h -L -w100 -d60 f:data.mdf",
    ];
    let cmds: Vec<String> = seeds
        .iter()
        .map(|c| {
            let c: Vec<String> = c
                .split_whitespace()
                .map(|w| match w {
                    "-d60" => "-d1".to_string(),
                    w if w.starts_with("-c") => "-c16M".to_string(),
                    w => w.to_string(),
                })
                .collect();
            format!("{} -W0", c.join(" "))
        })
        .collect();
    // Files shared by several lines are created by the first; run in order.
    for c in &cmds {
        let o = run_in(dir.path(), "diskspd", &words(c));
        assert!(o.status.success(), "{c}: {}", stderr(&o));
        let out = stdout(&o);
        let t: usize = c
            .split_whitespace()
            .find_map(|w| w.strip_prefix("-t"))
            .unwrap()
            .parse()
            .unwrap();
        let w: u32 = c
            .split_whitespace()
            .find_map(|w| w.strip_prefix("-w"))
            .unwrap()
            .parse()
            .unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[1],
            format!("Command Line: diskspd {}", words(c).join(" "))
        );
        assert!(out.contains("\nInput parameters:\n\n\ttimespan:   1\n\t-------------\n\tduration: 1s\n\twarm up time: 0s\n"), "{out}");
        assert!(
            out.contains(
                "\t\tsoftware cache disabled\n\t\thardware write cache disabled, writethrough on\n"
            ),
            "{out}"
        );
        assert!(out.contains(&format!("\t\tthreads per file: {t}\n")));
        assert!(out.contains("\nResults for timespan 1:\n*******************************************************************************\n\nactual test time:\t"));
        assert!(out.contains(&format!("\nthread count:\t\t{t}\n")));
        for title in ["Total IO", "Read IO", "Write IO"] {
            let start = lines
                .iter()
                .position(|l| *l == title)
                .unwrap_or_else(|| panic!("{title}\n{out}"));
            assert_eq!(lines[start + 1], "thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  AvgLat  | LatStdDev |  file");
            assert_eq!(lines[start + 2], "-".repeat(101));
            for i in 0..t {
                assert!(
                    shape(lines[start + 3 + i], &format!("{i:6} | <*>")),
                    "{}",
                    lines[start + 3 + i]
                );
                assert!(lines[start + 3 + i].ends_with("(16MiB)"));
            }
            assert_eq!(lines[start + 3 + t], "-".repeat(101));
            assert!(lines[start + 4 + t].starts_with("total: "));
        }
        let p = lines
            .iter()
            .position(|l| *l == "total:")
            .expect("percentile table");
        assert_eq!(
            lines[p + 1],
            "  %-ile |  Read (ms) | Write (ms) | Total (ms)"
        );
        let names = [
            "min", "25th", "50th", "75th", "90th", "95th", "99th", "3-nines", "4-nines", "5-nines",
            "6-nines", "7-nines", "8-nines", "9-nines", "max",
        ];
        for (i, n) in names.iter().enumerate() {
            let row = lines[p + 3 + i];
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cells[0], *n, "{row}");
            assert_eq!(cells[1] == "N/A", w == 100, "{row}");
            assert_eq!(cells[2] == "N/A", w == 0, "{row}");
            assert!(cells[3].parse::<f64>().is_ok(), "{row}");
        }
        assert_eq!(lines.len(), p + 3 + names.len());
    }
}

#[test]
fn diskspd_xml_is_well_formed_and_has_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.dat");
    let mut args = words("-c8M -b4k -r -t2 -o2 -L -w30 -d1 -W0 -D500 -Rxml --json");
    args.push(dir.path().join("r.json").display().to_string());
    args.push(f.display().to_string());
    let o = run_in(dir.path(), "diskspd", &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("<Results>\n") && out.ends_with("</Results>\n"),
        "{out}"
    );
    // Tags balance.
    let mut stack: Vec<String> = Vec::new();
    for line in out.lines() {
        let l = line.trim();
        if l.starts_with("</") {
            let tag = &l[2..l.len() - 1];
            assert_eq!(stack.pop().as_deref(), Some(tag), "{l}");
        } else if l.starts_with('<') && !l.ends_with("/>") && !l.contains("</") {
            let tag = l[1..].split([' ', '>']).next().unwrap().to_string();
            stack.push(tag);
        }
    }
    assert!(stack.is_empty(), "{stack:?}");
    let r: RunResult =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let ios: u64 = r.threads.iter().map(|t| t.result.total.ios).sum();
    let xml_ios: u64 = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("<IOCount>"))
        .map(|v| v.trim_end_matches("</IOCount>").parse::<u64>().unwrap())
        .sum();
    assert_eq!(xml_ios, ios);
    assert_eq!(out.matches("<Percentile>").count(), 1 + 99 + 7 + 1);
    assert!(out.contains("<WriteRatio>30</WriteRatio>"));
    assert!(out.contains("<IopsStdDev>"));
}

#[test]
fn diskspd_memory_mapped_io_uses_the_mmap_engine() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sm.json");
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!(
            "-Sm -c4M -d1 -W0 -b4K -r --json {} sm.dat",
            json.display()
        )),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["engine"], "mmap");
    assert_eq!(r["config"]["cache"], "buffered");
    assert!(r["total"]["total"]["ios"].as_u64().unwrap() > 0);
}

#[test]
fn refusals_name_the_option_and_warnings_take_one_line_each() {
    let dir = tempfile::tempdir().unwrap();
    for (tool, cmd, opt) in [
        ("sqlio", "-kR -frandom -Q x.dat", "'-Q'"),
        ("sqlio", "-kR x.dat", "'-f64'"),
        ("sqlio", "-kR -frandom -v1.1.1 x.dat", "'-v1.1.1'"),
        ("sqlio", "-kR -frandom -dQ x.dat", "--drive Q="),
        ("diskspd", "-p -c1M x.dat", "'-p'"),
        ("diskspd", "-O4 -c1M x.dat", "'-O4'"),
        ("diskspd", "-rs30 -s -c1M x.dat", "'-rs/-s'"),
        ("diskspd", "-c1M #3", "--disk 3="),
    ] {
        let o = run_in(dir.path(), tool, &words(cmd));
        assert!(!o.status.success(), "{cmd}");
        assert!(stderr(&o).contains(opt), "{cmd}: {}", stderr(&o));
        assert!(
            stdout(&o).is_empty(),
            "{cmd}: nothing runs, nothing printed"
        );
    }
    let o = run_in(
        dir.path(),
        "diskspd",
        &words("-c1M -b4K -d1 -W0 -x -v -l -ft -n x.dat"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    for (w, opt) in warnings.iter().zip(["'-x'", "'-v'", "'-l'", "'-ft'"]) {
        assert!(
            w.starts_with("iosim diskspd: warning: ") && w.contains(opt),
            "{w}"
        );
    }
    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-kR -frandom -s1 -i32 -mS4 -LP -b4 --size 1M y.dat"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).lines().filter(|l| l.contains("warning")).count(),
        3,
        "{}",
        stderr(&o)
    );
}

#[test]
fn usage_is_printed_for_dash_question_mark() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "sqlio", &words("-?"));
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("Usage: iosim sqlio"));
    assert!(stdout(&o).contains("-kR -t1 -s30 -f64 -b2 -i64 -BN testfile.dat"));
    let o = run_in(dir.path(), "diskspd", &words("-?"));
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("Usage: iosim diskspd"));
}

#[test]
fn writes_to_foreign_files_need_allow_destroy() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("foreign.dat");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let cmd = format!("-kW -frandom -s1 -b4 {}", f.display());
    let o = run_in(dir.path(), "sqlio", &words(&cmd));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--allow-destroy"), "{}", stderr(&o));
    assert!(
        stdout(&o).is_empty(),
        "refused before SQLIO's header: {}",
        stdout(&o)
    );
    let o = run_in(
        dir.path(),
        "sqlio",
        &words(&format!("{cmd} --allow-destroy")),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Reads are fine without it.
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!("-b4K -d1 -W0 {}", f.display())),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A physical disk (`#N`) maps to a block device; writes need --allow-destroy.
#[test]
fn diskspd_physical_disk_maps_to_a_loop_device() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || Command::new("losetup").arg("--version").output().is_err()
    {
        eprintln!("skipped: needs root and losetup");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!(
            "skipped: losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let _guard = Detach(dev.clone());
    let disk = format!("--disk=1={dev}");
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!("-b4K -r -d1 -W0 -Su {disk} #1")),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("\tpath: '{dev}'")));
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!("-b4K -r -w100 -d1 -W0 -Su {disk} #1")),
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--allow-destroy"), "{}", stderr(&o));
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!(
            "-b4K -r -w100 -d1 -W0 -Su {disk} --allow-destroy #1"
        )),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn translate_prints_a_native_command_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "X:\\t.dat 2 0x0 8\n").unwrap();
    let o = run_in(
        dir.path(),
        "translate",
        &words("sqlio -kW -s1 -frandom -o4 -b8 -BH -Fp.txt"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let cmd = out.lines().next().unwrap();
    let t = dir.path().join("t.dat").display().to_string();
    assert_eq!(
        cmd,
        format!("iosim run {t} --rw randwrite --bs 8K --threads 2 --qd 4 --duration 1s --cache direct --size 8M --length 8M --fill zero")
    );
    let w = words(cmd);
    let o = Command::new(bin())
        .current_dir(dir.path())
        .args(&w[1..])
        .args(["--output", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r: RunResult = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(r.total.write.ios > 0);
    assert_eq!(r.config.threads, 2);

    let o = run_in(
        dir.path(),
        "translate",
        &words("diskspd -c8M -b64k -r -t2 -o1 -h -L -w40 -d1 -n f:Testdata.mdf"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let f = dir.path().join("Testdata.mdf").display().to_string();
    assert_eq!(
        stdout(&o).lines().next().unwrap(),
        format!("iosim run {f} --rw randrw --write-pct 40 --bs 64K --threads 2 --qd 1 --duration 1s --warmup 5s --cache direct-writethrough --seed 0 --size 8M --length 8M --thread-stride 0")
    );
    let o = run_in(dir.path(), "translate", &words("fio --rw=read"));
    assert!(!o.status.success());
}

// ---------------------------------------------------------------- snapshots

/// A RunResult with fixed numbers: 2 threads on one 1 GiB file, 10 s, reads and writes.
fn fixed_result(spec: iosim::workload::WorkloadSpec, write_share: u64) -> RunResult {
    let mut threads = Vec::new();
    let mut all = RwStats::default();
    for th in 0..2u64 {
        let mut s = RwStats::default();
        for i in 0..10_000u64 {
            // Latencies from 50 µs to ~30 ms, a fixed pattern per thread.
            let lat = 50_000
                + (i * 7919 + th * 104_729) % 2_000_000
                + if i % 997 == 0 { 28_000_000 } else { 0 };
            if i % 100 < write_share {
                s.write.record(lat + 150_000, 8192);
            } else {
                s.read.record(lat, 8192);
            }
        }
        all.merge(&s);
        threads.push(ThreadResult {
            thread: th as usize,
            target: 0,
            cpu: Some(th as usize),
            duration_s: 10.0,
            cpu_user_s: 0.5,
            cpu_sys_s: 1.5,
            result: s.summarize(10.0),
        });
    }
    let total = all.summarize(10.0);
    let point = |t: f64, f: f64| SeriesPoint {
        t_s: t,
        duration_s: 1.0,
        read: PointStats {
            iops: 1000.0 * f,
            ..PointStats::default()
        },
        write: PointStats {
            iops: 500.0 * f,
            ..PointStats::default()
        },
        total: PointStats {
            iops: 1500.0 * f,
            ..PointStats::default()
        },
    };
    RunResult {
        schema_version: 1,
        iosim_version: "0.1.0".into(),
        started_at: "2026-11-22T04:00:00Z".into(),
        host: "testhost".into(),
        config: spec.clone(),
        engine: "uring".into(),
        notes: vec![],
        interrupted: false,
        duration_s: 10.0,
        total: total.clone(),
        targets: vec![TargetResult {
            path: spec.targets[0].path.display().to_string(),
            kind: "file".into(),
            size: 1 << 30,
            region_start: 0,
            region_len: 1 << 30,
            created: false,
            dio_align: 512,
            threads: 2,
            result: total,
        }],
        threads,
        cpu: CpuResult {
            user_s: 1.0,
            sys_s: 3.0,
            process_pct_of_one_core: 40.0,
            machine: vec![
                CoreUtil {
                    cpu: None,
                    busy_pct: 30.0,
                    user_pct: 10.0,
                    system_pct: 15.0,
                    irq_pct: 5.0,
                    iowait_pct: 20.0,
                    steal_pct: 0.0,
                },
                CoreUtil {
                    cpu: Some(0),
                    busy_pct: 40.0,
                    user_pct: 12.5,
                    system_pct: 20.0,
                    irq_pct: 7.5,
                    iowait_pct: 10.0,
                    steal_pct: 0.0,
                },
                CoreUtil {
                    cpu: Some(1),
                    busy_pct: 20.0,
                    user_pct: 7.5,
                    system_pct: 10.0,
                    irq_pct: 2.5,
                    iowait_pct: 30.0,
                    steal_pct: 0.0,
                },
            ],
            max_core_busy_pct: 40.0,
            cpu_bound: false,
        },
        errors: ErrorSummary::default(),
        series: Series {
            interval_s: 1.0,
            total: vec![
                point(1.0, 1.0),
                point(2.0, 1.1),
                point(3.0, 0.9),
                point(4.0, 1.0),
            ],
            targets: vec![],
        },
        histograms: HistogramSet {
            read: encode_histogram(&all.read.hist),
            write: encode_histogram(&all.write.hist),
        },
        environment: Default::default(),
        devices: Vec::new(),
        monitor: Default::default(),
        warnings: Vec::new(),
    }
}

fn check_snapshot(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} is missing: run with UPDATE_SNAPSHOTS=1 and review it",
            path.display()
        )
    });
    if want != got {
        let first = want.lines().zip(got.lines()).position(|(a, b)| a != b);
        panic!(
            "{name} differs from the snapshot (first differing line {first:?}); if the change is deliberate, run with UPDATE_SNAPSHOTS=1\n--- got ---\n{got}"
        );
    }
}

fn ext() -> Extensions {
    let mut e = Extensions::default();
    e.add_drive("X=/mnt/x").unwrap();
    e
}

#[test]
fn snapshot_sqlio_output() {
    let mut w = Warnings::default();
    let a = sqlio::parse(
        &words("-s10 -kR -frandom -b8 -t2 -o16 -LS -BN X:\\TestFile.DAT"),
        &mut w,
    )
    .unwrap();
    let p = sqlio::plan(&a, &ext(), &mut w, &|_| unreachable!()).unwrap();
    let r = fixed_result(p.spec.clone(), 0);
    let path = Path::new("/mnt/x/TestFile.DAT");
    let got = format!(
        "{}{}initialization done\n{}",
        sqlio::header(&p, "tsc"),
        sqlio::size_line(path, &sqlio::Prepared::Current { size: 40960 << 20 }),
        sqlio::results(&p, &r)
    );
    check_snapshot("sqlio_latency.txt", &got);
    // Seed 001's line numbers hold.
    assert!(got.split('\n').nth(10).unwrap().starts_with("IOs/sec: "));
    assert!(got.split('\n').nth(11).unwrap().starts_with("MBs/sec: "));
    assert!(got
        .split('\n')
        .nth(14)
        .unwrap()
        .starts_with("Avg_Latency(ms): "));

    let a = sqlio::parse(&words("-kW -s5 -fsequential -o4 -b64 -Fparam.txt"), &mut w).unwrap();
    let p = sqlio::plan(&a, &ext(), &mut w, &|_| {
        Ok("# L drive\nX:\\testfile.dat 2 0x0 102400\n".into())
    })
    .unwrap();
    let r = fixed_result(p.spec.clone(), 100);
    let path = Path::new("/mnt/x/testfile.dat");
    let got = format!(
        "{}{} done.\n{}initialization done\n{}",
        sqlio::header(&p, "tsc"),
        sqlio::expand_lines(path, 0, 102400 << 20),
        sqlio::size_line(
            path,
            &sqlio::Prepared::Expanded {
                current: 0,
                size: 102400 << 20,
                specified: true
            }
        ),
        sqlio::results(&p, &r)
    );
    check_snapshot("sqlio_paramfile_create.txt", &got);
}

fn diskspd_plan(cmd: &str) -> diskspd::Plan {
    let mut w = Warnings::default();
    let a = diskspd::parse(&words(cmd), &mut w).unwrap();
    diskspd::plan(&a, &ext(), &format!("diskspd {cmd}"), &mut w).unwrap()
}

#[test]
fn snapshot_diskspd_text_and_xml() {
    let p = diskspd_plan("-c1G -b8K -r -t2 -o4 -Sh -L -w30 -d10 -W0 -n X:\\data.mdf");
    let r = fixed_result(p.spec.clone(), 30);
    check_snapshot("diskspd_text.txt", &diskspd::text(&p, &r));
    check_snapshot("diskspd_xml.xml", &diskspd::xml(&p, &r));
    let p = diskspd_plan("-c1G -b8K -t2 -o4 -w0 -d10 -W0 -D -n X:\\data.mdf");
    let r = fixed_result(p.spec.clone(), 0);
    check_snapshot("diskspd_text_nolatency.txt", &diskspd::text(&p, &r));
    // Throttled, bursty, mixed random/sequential: DiskSpd's extra profile lines.
    let cmd = "-c1G -b8K -rs40 -r4K -t2 -o4 -g500i -i8 -j5 -d10 -W0 -n X:\\data.mdf";
    check_snapshot(
        "diskspd_text_paced.txt",
        &diskspd::profile_text(&diskspd_plan(cmd)),
    );
    let p = diskspd_plan(&format!("-Rpxml {cmd}"));
    check_snapshot("diskspd_xml_paced.xml", &diskspd::profile_only(&p));
}

/// DiskSpd's throughput limit, bursts, mixed and interlocked patterns run for
/// real: the rate is held, and the report says so in DiskSpd's words.
#[test]
fn diskspd_throttles_bursts_and_mixes() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json");
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!(
            "-c8M -b4K -r -o4 -t2 -g200i -d2 -W0 -L --json {} g.dat",
            json.display()
        )),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\t\tthroughput rate-limited to 200 IOPS\n"));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let iops = r["total"]["total"]["iops"].as_f64().unwrap();
    // Two threads at 200 I/Os per second each: never above, and well above
    // one thread's 200 (a loaded machine may fall a little short).
    assert!(
        (240.0..=420.0).contains(&iops),
        "{iops} IOPS under -g200i with -t2"
    );

    let json = dir.path().join("b.json");
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!(
            "-c8M -b4K -r -o1 -i5 -j50 -d2 -W0 --json {} b.dat",
            json.display()
        )),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\t\tthink time: 50ms\n\t\tburst size: 5\n"),
        "{out}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // 5 I/Os then 50 ms of thinking: about 100 I/Os per second.
    let iops = r["total"]["total"]["iops"].as_f64().unwrap();
    assert!(iops > 50.0 && iops <= 105.0, "{iops} IOPS with -i5 -j50");

    let o = run_in(
        dir.path(),
        "diskspd",
        &words("-c8M -b4K -rs25 -o2 -d1 -W0 m.dat"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o)
        .contains("using mixed random/sequential I/O (25% random) (alignment/stride: 4096)"));

    let json = dir.path().join("si.json");
    let o = run_in(
        dir.path(),
        "diskspd",
        &words(&format!(
            "-c8M -b64K -si -t4 -o2 -d1 -W0 --json {} si.dat",
            json.display()
        )),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("using interlocked sequential I/O (stride: 65536)"));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["config"]["seq_layout"]["kind"], "shared");
    assert_eq!(r["threads"].as_array().unwrap().len(), 4);
}
