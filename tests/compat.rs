//! SQLIO and DiskSpd compatibility: every command line in the seeds runs and
//! prints the layout scripts expect; snapshot tests pin each output format;
//! seed 001's PowerShell parsing gives the numbers the JSON reports.
//!
//! Snapshots (insta) live in tests/snapshots/compat__*.snap; regenerate
//! deliberately with `INSTA_UPDATE=always cargo test --test it compat::` and review
//! the diff (or `cargo insta review`).

use std::path::Path;
use std::process::{Command, Output};

use iosim::compat::sysinfo::SystemInfo;
use iosim::compat::{diskspd, sqlio, Extensions, Warnings};
use iosim::runner::{
    CpuResult, ErrorSummary, HistogramSet, PointStats, RunResult, Series, SeriesPoint,
    TargetResult, ThreadResult,
};
use iosim::stats::RwStats;
use iosim::sysmon::cpu::CoreUtil;

pub(crate) fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Runs `iosim <tool> <args>` in `dir` with drive letters mapped into `dir`.
fn run_in(dir: &Path, tool: &str, args: &[String]) -> Output {
    let drives = format!(
        "C={d};L={d};X={d};Z={d};F={d};G={d};H={d}",
        d = dir.display()
    );
    crate::common::iosim()
        .current_dir(dir)
        .env("IOSIM_DRIVES", drives)
        // Results are stored in the history: keep it inside the temp dir.
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .arg(tool)
        .args(args)
        .output()
        .expect("iosim runs")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Matches `line` against `pat`, where `<n>` stands for a number and `<*>` for the rest of the line.
pub(crate) fn shape(line: &str, pat: &str) -> bool {
    let (mut l, mut p) = (line, pat);
    loop {
        if let Some(rest) = p.strip_prefix("<*>") {
            assert!(rest.is_empty(), "<*> must end a pattern");
            return true;
        }
        if let Some(rest) = p.strip_prefix("<n>") {
            // Numbers may be right-aligned in a fixed column (SQLIO, DiskSpd).
            l = l.trim_start_matches(' ');
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

pub(crate) fn assert_shape(out: &str, expected: &[String], what: &str) {
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
pub(crate) fn sqlio_expected(cmd: &str, file: &str, created: bool) -> Vec<String> {
    let opt = |f: &str| {
        cmd.split_whitespace()
            .find_map(|w| w.strip_prefix(f).map(String::from))
    };
    let mut e = vec!["sqlio v1.5.SG".to_string()];
    let latency = opt("-L").is_some();
    if latency {
        e.push("using system counter for latency timings, 1000000000 counts per second".into());
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
        e.push(
            "ms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+".into(),
        );
        e.push(format!("%:{}", "<n>".repeat(25)));
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
    // Readers share a test file, four at a time; a writer has it alone (the
    // target lock refuses a second process that would write it, as it must:
    // each would measure the other).
    let writes = |c: &str| {
        words(c)
            .iter()
            .any(|w| w == "-kW" || (w.starts_with("-w") && w != "-w0" && w.len() > 2))
    };
    let mut chunks: Vec<Vec<usize>> = Vec::new();
    for i in 0..cmds.len() {
        match chunks.last_mut() {
            Some(c) if !writes(&cmds[i]) && c.len() < 4 && !writes(&cmds[c[0]]) => c.push(i),
            _ => chunks.push(vec![i]),
        }
    }
    for chunk in &chunks {
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

// ------------------------------------------------- third-party SQLIO parsers
//
// Published scripts that read SQLIO's output, transliterated to Rust (the
// originals are PowerShell and C#). Each returns (IOs/sec, MBs/sec, min, avg, max
// latency, histogram); the tests run them on iosim's output.

/// One SQLIO result as a parser sees it.
#[derive(Clone, Debug, Default, PartialEq)]
struct SqlioParsed {
    iops: f64,
    mbs: f64,
    min_ms: u64,
    avg_ms: u64,
    max_ms: u64,
    hist: Vec<u64>,
}

/// Olaf Helper, "Storage I/O Performance Tester" (StorageIoPerformanceTester.ps1,
/// Microsoft TechNet Script Center, 2011), function getIoResult: finds each label
/// with IndexOf and parses the rest of the line; reads the `%:` row with FIXED
/// substrings SubString(2,3), SubString(5,3), ... SubString(74) — so each bucket
/// must sit in its 3-character column. .NET's Int32.Parse allows surrounding blanks.
fn parse_olaf_helper(out: &str) -> SqlioParsed {
    let mut r = SqlioParsed::default();
    let int = |s: &str| -> u64 {
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("[int]::Parse('{s}') throws"))
    };
    for line in out.lines() {
        if let Some(i) = line.find("IOs/sec:") {
            r.iops = line[i + 8..].trim().parse().unwrap();
        }
        if let Some(i) = line.find("MBs/sec:") {
            r.mbs = line[i + 8..].trim().parse().unwrap();
        }
        if let Some(i) = line.find("Min_Latency(ms):") {
            r.min_ms = int(&line[i + 16..]);
        }
        if let Some(i) = line.find("Max_Latency(ms):") {
            r.max_ms = int(&line[i + 16..]);
        }
        if let Some(i) = line.find("Avg_Latency(ms):") {
            r.avg_ms = int(&line[i + 16..]);
        }
        if line.contains("%:") {
            r.hist = (0..24).map(|k| int(&line[2 + 3 * k..5 + 3 * k])).collect();
            r.hist.push(int(&line[74..]));
        }
    }
    r
}

/// Jonathan Kehayias's regular expressions, as used by SQLIO_ResultsToExcel.ps1
/// (https://github.com/dataElisabeth/SQLIO_ProcessResults): `IOs\/sec\:\s+(\d+\.\d+)?`,
/// `MBs\/sec\:\s+(\d+\.\d+)?`, `Min.{0,}?\:\s(\d+)?` (and Avg, Max), plus
/// `(\d+)?\sthreads\s(reading|writing)`, `\tusing\s(\d+)?KB\s(sequential|random)`
/// and `with\s(\d+)?\soutstanding`. Returns the result and (threads, KB, outstanding).
fn parse_kehayias(out: &str) -> (SqlioParsed, (u64, u64, u64)) {
    // `label\s+(\d+\.\d+)`: the first number after the label and any blanks.
    let after = |label: &str, min_blanks: usize| -> String {
        let i = out
            .find(label)
            .unwrap_or_else(|| panic!("no match for {label}"));
        let rest = &out[i + label.len()..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        assert!(blanks >= min_blanks, "{label} is not followed by a blank");
        rest[blanks..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect()
    };
    // `Min.{0,}?\:\s(\d+)`: lazily the first "Min" then the first ": " — exactly one blank.
    let lat = |word: &str| -> u64 {
        let i = out.find(word).unwrap();
        let rest = &out[i..];
        let j = rest.find(": ").unwrap();
        rest[j + 2..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .parse()
            .unwrap()
    };
    let before = |label: &str| -> u64 {
        let i = out.find(label).unwrap();
        let head = &out[..i];
        let digits: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        digits.parse().unwrap()
    };
    let threads = before(if out.contains(" threads reading") {
        " threads reading"
    } else {
        " threads writing"
    });
    let kb: u64 = after("\tusing ", 0).trim_end_matches('.').parse().unwrap();
    let outstanding: u64 = after("with ", 0).parse().unwrap();
    (
        SqlioParsed {
            iops: after("IOs/sec:", 1).parse().unwrap(),
            mbs: after("MBs/sec:", 1).parse().unwrap(),
            min_ms: lat("Min_"),
            avg_ms: lat("Avg_"),
            max_ms: lat("Max_"),
            hist: Vec::new(),
        },
        (threads, kb, outstanding),
    )
}

/// Wes Brown's SQLIOParser (C#, "Process output of the SQLIO.exe program piped to
/// a text file"): `input.Split(' ')` with fixed indexes — `[0]` threads, `[4]` seconds
/// of the "N threads reading for S secs" line, `[1]`/`[2]` of "\tusing 8KB random IOs",
/// `[6]` of the outstanding line, `[1]` of the latency lines; a regex for the first
/// decimal of IOs/sec and MBs/sec. Returns the result and (threads, secs, size, kind, outstanding).
fn parse_wes_brown(out: &str) -> (SqlioParsed, (u64, u64, String, String, u64)) {
    let mut r = SqlioParsed::default();
    let mut meta = (0, 0, String::new(), String::new(), 0);
    let first_decimal = |l: &str| -> f64 {
        let i = l.find(|c: char| c.is_ascii_digit()).unwrap();
        l[i..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<String>()
            .parse()
            .unwrap()
    };
    for input in out.lines() {
        let split: Vec<&str> = input.split(' ').collect();
        if input.contains("threads reading")
            || input.contains("thread reading")
            || input.contains("threads writing")
            || input.contains("thread writing")
        {
            meta.0 = split[0].parse().unwrap();
            meta.1 = split[4].parse().unwrap();
        }
        if input.contains("IOs") && input.contains("using") {
            meta.2 = split[1].to_string();
            meta.3 = split[2].to_string();
        }
        if input.contains("outstanding") {
            meta.4 = split[6].parse().unwrap();
        }
        if input.contains("IOs/sec:") {
            r.iops = first_decimal(input);
        }
        if input.contains("MBs/sec:") {
            r.mbs = first_decimal(input);
        }
        if input.contains("Min_Latency(ms):") {
            r.min_ms = split[1].parse().unwrap();
        }
        if input.contains("Avg_Latency(ms):") {
            r.avg_ms = split[1].parse().unwrap();
        }
        if input.contains("Max_Latency(ms):") {
            r.max_ms = split[1].parse().unwrap();
        }
    }
    (r, meta)
}

/// SQLIO 1.5's readme.txt (the -L section) and a real SQLIO run published in
/// https://github.com/dataElisabeth/SQLIO_ProcessResults
/// (SQLIO_ResultFiles/sqlio.random.read.8.8.G.txt): the histogram rows and the
/// throughput lines, character for character.
#[test]
fn sqlio_columns_match_sqlios_own_output() {
    assert_eq!(
        sqlio::histogram_rows(&[
            0, 0, 0, 1, 20, 3, 1, 1, 1, 2, 10, 35, 16, 6, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0
        ]),
        "ms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+\n\
         %:  0  0  0  1 20  3  1  1  1  2 10 35 16  6  1  1  0  0  0  0  0  0  0  0  0\n"
    );
    assert_eq!(
        sqlio::histogram_rows(&[
            9, 19, 10, 5, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 49
        ]),
        "ms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+\n\
         %:  9 19 10  5  3  2  1  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0 49\n"
    );
    assert_eq!(
        sqlio::throughput_lines(22893.54, 178.85),
        "IOs/sec: 22893.54\nMBs/sec:   178.85\n"
    );
    // The readme's "throughput metrics:" example.
    assert_eq!(
        sqlio::throughput_lines(183.16, 0.35),
        "IOs/sec:   183.16\nMBs/sec:     0.35\n"
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
    // The third-party parsers read the same numbers.
    let want = SqlioParsed {
        iops: format!("{:.2}", t.iops).parse().unwrap(),
        mbs: format!("{:.2}", t.mib_per_sec).parse().unwrap(),
        min_ms: (t.latency_us.min / 1000.0).floor() as u64,
        avg_ms: (t.latency_us.mean / 1000.0).floor() as u64,
        max_ms: (t.latency_us.max / 1000.0).floor() as u64,
        hist: iosim::report::sqlio_percentages(t),
    };
    assert_eq!(parse_olaf_helper(&out), want, "{out}");
    let (k, meta) = parse_kehayias(&out);
    assert_eq!(
        k,
        SqlioParsed {
            hist: Vec::new(),
            ..want.clone()
        },
        "{out}"
    );
    assert_eq!(meta, (2, 8, 16));
    let (w, meta) = parse_wes_brown(&out);
    assert_eq!(
        w,
        SqlioParsed {
            hist: Vec::new(),
            ..want.clone()
        },
        "{out}"
    );
    assert_eq!(meta, (2, 1, "8KB".to_string(), "random".to_string(), 16));
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
        "using system counter for latency timings, 1000000000 counts per second".into(),
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
        "using system counter for latency timings, 1000000000 counts per second".into(),
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

    // -F takes a drive letter like the paths inside the file; the file's thread
    // column wins over -t, as in SQLIO; -Up adds SQLIO's utilisation table.
    let o = run_in(
        dir.path(),
        "sqlio",
        &words("-kR -s1 -t2 -frandom -o2 -b8 -Up -Fc:\\param-READ-DSI3500-1file_1lun.txt"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("\n1 thread reading for 1 secs from file {a}\n")),
        "{out}"
    );
    assert!(stderr(&o).contains("'-t2'"), "{}", stderr(&o));
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("ProcessorNumber:"))
        .unwrap_or_else(|| panic!("no -Up table\n{out}"));
    let ncpu = std::thread::available_parallelism().unwrap().get();
    // SQLIO 1.5 readme: "ProcessorNumber:         ALL        0        1 ..." then six rows of
    // values in 9-character columns after a 20-character label.
    assert_eq!(&lines[at][..28], "ProcessorNumber:         ALL");
    assert_eq!(lines[at].len(), 28 + 9 * ncpu, "{}", lines[at]);
    for (i, label) in [
        "DPCTime(%):",
        "InterruptTime(%):",
        "PrivilegedTime(%):",
        "ProcessorTime(%):",
        "UserTime(%):",
        "Interrupts/sec:",
    ]
    .iter()
    .enumerate()
    {
        let l = lines[at + 1 + i];
        assert!(l.starts_with(label), "{l}");
        assert_eq!(l.len(), 20 + 9 * (ncpu + 1), "{l}");
        let v: Vec<f64> = l[20..]
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(v.len(), ncpu + 1);
        if i < 5 {
            assert!(v.iter().all(|p| (0.0..=100.0).contains(p)), "{l}");
        }
    }
    // The readme's parsers still find their lines: throughput before the table.
    assert!(lines[..at].iter().any(|l| l.starts_with("IOs/sec:")));
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
            .position(|l| *l == "Total latency distribution:")
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
    // -v prints DiskSpd's "using verbose mode" instead of warning.
    assert!(stdout(&o).contains("\n\tusing verbose mode\n"));
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    for (w, opt) in warnings.iter().zip(["'-x'", "'-l'", "'-ft'"]) {
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
        crate::common::skip("needs root and losetup");
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
        crate::common::skip(&format!(
            "losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
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
    let o = crate::common::iosim()
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
    // fio's options translate too (docs/workloads.md); the command runs.
    let o = run_in(
        dir.path(),
        "translate",
        &words("fio --name=j --filename=fio.dat --size=8m --rw=randrw --rwmixread=70 --bssplit=4k/80:64k/20 --random_distribution=zipf:1.1 --runtime=1 --verify=md5"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mut lines = out.lines();
    let cmd = lines.next().unwrap();
    assert_eq!(
        cmd,
        "iosim run fio.dat --rw randrw --write-pct 30 --bs 4K --threads 1 --qd 1 --duration 1s --cache buffered --engine sync --size 8M --passes 1 --distribution zipf:1.1 --bssplit 4K/80:64K/20"
    );
    assert_eq!(
        lines.next(),
        Some("# note: verify=md5: not translated (no iosim counterpart)")
    );
    let o = crate::common::iosim()
        .current_dir(dir.path())
        .args(&words(cmd)[1..])
        .args(["--output", "json", "--no-save"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["shape"]["by_size"].as_array().unwrap().len(), 2);
    let o = run_in(dir.path(), "translate", &words("fio rw=read"));
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
            cause: None,
            attribution: None,
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
            threads: vec![],
            folded_intervals: 0,
            longest_point_s: 0.0,
        },
        histograms: HistogramSet::of(&all),
        environment: Default::default(),
        devices: Vec::new(),
        monitor: Default::default(),
        warnings: Vec::new(),
        shape: None,
        verify: None,
        window: None,
        slow_after_window: None,
        changes: Default::default(),
        neighbour: None,
    }
}

/// Pins `got` as tests/snapshots/compat__NAME.snap (insta: review changes with
/// `cargo insta review`, or `INSTA_UPDATE=always cargo test --test it compat::` and `git diff`).
fn check_snapshot(name: &str, got: &str) {
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(format!("compat__{name}"), got);
    });
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
        sqlio::header(&p),
        sqlio::size_line(path, &sqlio::Prepared::Current { size: 40960 << 20 }),
        sqlio::results(&p, &r)
    );
    check_snapshot("sqlio_latency", &got);
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
        sqlio::header(&p),
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
    check_snapshot("sqlio_paramfile_create", &got);
}

fn diskspd_plan(cmd: &str) -> diskspd::Plan {
    let mut w = Warnings::default();
    let a = diskspd::parse(&words(cmd), &mut w).unwrap();
    diskspd::plan(&a, &ext(), &format!("diskspd {cmd}"), &mut w).unwrap()
}

#[test]
fn snapshot_diskspd_text_and_xml() {
    let sys = SystemInfo::simple(2);
    let p = diskspd_plan("-c1G -b8K -r -t2 -o4 -Sh -L -w30 -d10 -W0 -n X:\\data.mdf");
    let r = fixed_result(p.spec.clone(), 30);
    check_snapshot("diskspd_text", &diskspd::text(&p, &r, &sys));
    check_snapshot("diskspd_xml", &diskspd::xml(&p, &r, &sys));
    // The same run in DiskSpd 2.0.21a's layout (--layout 2.0).
    let mut p20 = p.clone();
    p20.layout = diskspd::Layout::V2_0;
    check_snapshot("diskspd_text_2_0", &diskspd::text(&p20, &r, &sys));
    let p = diskspd_plan("-c1G -b8K -t2 -o4 -w0 -d10 -W0 -D -n X:\\data.mdf");
    let r = fixed_result(p.spec.clone(), 0);
    check_snapshot("diskspd_text_nolatency", &diskspd::text(&p, &r, &sys));
    // A machine with two sockets, two nodes and two threads a core: 2.2's extra columns.
    let mut big = SystemInfo::simple(4);
    for c in &mut big.cpus {
        c.core = c.id / 2;
        c.socket = c.id / 2;
        c.node = c.id / 2;
    }
    big.power_scheme = "performance".into();
    let p = diskspd_plan("-c1G -b4K -r -t2 -o1 -L -d10 -W0 -n X:\\data.mdf X:\\log.ldf");
    let mut r = fixed_result(p.spec.clone(), 0);
    let mut second = r.targets[0].clone();
    second.path = "/mnt/x/log.ldf".into();
    r.targets.push(second);
    r.threads[1].target = 1;
    for (i, c) in r.cpu.machine.clone().iter().enumerate().skip(1) {
        let mut c = c.clone();
        c.cpu = Some(i + 1);
        r.cpu.machine.push(c);
    }
    check_snapshot("diskspd_text_topology", &diskspd::text(&p, &r, &big));
    // Throttled, bursty, mixed random/sequential: DiskSpd's extra profile lines.
    let cmd = "-c1G -b8K -rs40 -r4K -t2 -o4 -g500i -i8 -j5 -d10 -W0 -n X:\\data.mdf";
    check_snapshot(
        "diskspd_text_paced",
        &diskspd::profile_text(&diskspd_plan(cmd)),
    );
    let p = diskspd_plan(&format!("-Rpxml {cmd}"));
    check_snapshot("diskspd_xml_paced", &diskspd::profile_only(&p));
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
        .contains("using mixed random/sequential I/O (25% random) (alignment/stride: 4KiB)"));

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
    assert!(stdout(&o).contains("using interlocked sequential I/O (stride: 64KiB)"));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["config"]["seq_layout"]["kind"], "shared");
    assert_eq!(r["threads"].as_array().unwrap().len(), 4);
}

// ------------------------------------------------------- DiskSpd XML profiles

/// True when xmllint (Debian: libxml2-utils) is installed; tests that need it say so.
fn have_xmllint() -> bool {
    let ok = Command::new("xmllint")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::common::skip("xmllint is not installed (apt-get install libxml2-utils)");
    }
    ok
}

/// Validates `xml` against DiskSpd's own schema (tests/fixtures/diskspd/diskspd.xsd,
/// from https://github.com/microsoft/diskspd XmlProfileParser/diskspd.xsd, MIT).
fn assert_valid_profile(xml: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.xml");
    std::fs::write(&f, xml).unwrap();
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diskspd/diskspd.xsd");
    let o = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&xsd)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{what}: not valid against diskspd.xsd:\n{}\n{xml}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The profiles iosim writes validate against diskspd.xsd and run back through
/// `-X` into the same workload: `-Rpxml` round-trips.
#[test]
fn diskspd_profiles_validate_and_round_trip_through_dash_x() {
    if !have_xmllint() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat").display().to_string();
    let u = dir.path().join("u.dat").display().to_string();
    for cmd in [
        format!("-c1G -b8K -r -t2 -o4 -Sh -L -w30 -d10 -W0 {t}"),
        format!("-c64M -b64K -si -t4 -o2 -Su -d5 -W1 -D500 -Z {t} {u}"),
        format!("-c64M -b4K -rs40 -r4K -F4 -o8 -g500i -i8 -j5 -w10 -Z1M -z9 -B1M -f32M {t}"),
        format!("-c16M -b8K -s -T64K -t2 -Sw -Rxml -v -I2 {t}"),
        format!("-c16M -b8K -r -Sm -g100 -a0,1 {t}"),
    ] {
        let mut w = Warnings::default();
        let args = words(&format!("-Rpxml {cmd}"));
        let (p, _) = diskspd::plan_from_args(&args, &mut w).unwrap();
        let xml = diskspd::profile_only(&p);
        assert_valid_profile(&xml, &cmd);
        let f = dir.path().join("profile.xml");
        std::fs::write(&f, &xml).unwrap();
        let (px, _) =
            diskspd::plan_from_args(&[format!("-X{}", f.display())], &mut Warnings::default())
                .unwrap();
        // Same workload, same profile (the -Rp flag itself is not part of a profile).
        let mut want = p.spec.clone();
        let mut got = px.spec.clone();
        if cmd.contains("-z") {
            assert_eq!(got.seed, want.seed);
        }
        want.seed = 0;
        got.seed = 0;
        // `-r4K` with 4 KiB blocks and `-r` are the same alignment.
        want.align = Some(want.effective_align());
        got.align = Some(got.effective_align());
        assert_eq!(got, want, "{cmd}");
        let strip = |s: String| {
            s.lines()
                .filter(|l| !l.starts_with("Command Line:"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut pt = p.clone();
        pt.args.profile_only = false;
        assert_eq!(
            strip(diskspd::profile_text(&px)),
            strip(diskspd::profile_text(&pt)),
            "{cmd}"
        );
    }
    // The <Profile> inside a -Rxml result validates too.
    let p = diskspd_plan("-c1G -b8K -r -t2 -o4 -Sh -L -D -w30 -d10 -W0 -n X:\\data.mdf");
    let r = fixed_result(p.spec.clone(), 30);
    let x = diskspd::xml(&p, &r, &SystemInfo::simple(2));
    let from = x.find("<Profile>").unwrap();
    let to = x.find("</Profile>").unwrap() + "</Profile>".len();
    assert_valid_profile(&x[from..to], "the -Rxml result's <Profile>");
}

/// A profile runs for real, the way VMFleet drives DiskSpd.
#[test]
fn diskspd_runs_an_xml_profile() {
    let dir = tempfile::tempdir().unwrap();
    let xml = format!(
        "<Profile><Progress>0</Progress><ResultFormat>text</ResultFormat><Verbose>false</Verbose><TimeSpans><TimeSpan>\
<CompletionRoutines>false</CompletionRoutines><MeasureLatency>true</MeasureLatency><CalculateIopsStdDev>false</CalculateIopsStdDev>\
<DisableAffinity>true</DisableAffinity><Duration>1</Duration><Warmup>0</Warmup><Cooldown>0</Cooldown><ThreadCount>0</ThreadCount>\
<RequestCount>0</RequestCount><IoBucketDuration>1000</IoBucketDuration><RandSeed>0</RandSeed><Targets><Target>\
<Path>{}</Path><BlockSize>4096</BlockSize><BaseFileOffset>0</BaseFileOffset><SequentialScan>false</SequentialScan>\
<RandomAccess>false</RandomAccess><TemporaryFile>false</TemporaryFile><UseLargePages>false</UseLargePages>\
<WriteBufferContent><Pattern>sequential</Pattern></WriteBufferContent><ParallelAsyncIO>false</ParallelAsyncIO>\
<FileSize>8388608</FileSize><Random>4096</Random><ThreadStride>0</ThreadStride><MaxFileSize>0</MaxFileSize>\
<RequestCount>2</RequestCount><WriteRatio>0</WriteRatio><Throughput>0</Throughput><ThreadsPerFile>1</ThreadsPerFile>\
<IOPriority>3</IOPriority><Weight>1</Weight></Target></Targets></TimeSpan></TimeSpans></Profile>",
        dir.path().join("x.dat").display()
    );
    if have_xmllint() {
        assert_valid_profile(&xml, "the hand-written profile");
    }
    std::fs::write(dir.path().join("p.xml"), &xml).unwrap();
    let o = run_in(dir.path(), "diskspd", &words("-XZ:\\p.xml"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\nCommand Line: diskspd -XZ:\\p.xml\n"),
        "{out}"
    );
    assert!(
        out.contains("\t\tusing random I/O (alignment: 4KiB)\n"),
        "{out}"
    );
    assert!(out.contains("\nTotal latency distribution:\n"), "{out}");
    let o = run_in(dir.path(), "diskspd", &words("-Xp.xml -b8K"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("give -X alone"), "{}", stderr(&o));
}

// ------------------------------------------------ DiskSpd result consumers
//
// Published programs that read DiskSpd's XML results, transliterated to Rust
// (the originals are PowerShell and Python), run on iosim's real -Rxml output.

/// What a consumer read from one result.
#[derive(Debug, PartialEq)]
struct DiskspdRead {
    read_iops: f64,
    write_iops: f64,
    read_bytes: u64,
    write_bytes: u64,
    /// (percentile label, read ms, write ms) for the percentiles it takes.
    latency: Vec<(String, Option<f64>, Option<f64>)>,
}

fn el<'a, 'i>(n: roxmltree::Node<'a, 'i>, path: &[&str]) -> Vec<roxmltree::Node<'a, 'i>> {
    let mut cur = vec![n];
    for name in path {
        cur = cur
            .iter()
            .flat_map(|c| {
                c.children()
                    .filter(|x| x.is_element() && x.has_tag_name(*name))
            })
            .collect();
    }
    cur
}

fn num_of(n: roxmltree::Node, name: &str) -> Option<f64> {
    n.children()
        .find(|c| c.is_element() && c.has_tag_name(name))
        .and_then(|c| c.text())
        .and_then(|t| t.trim().parse().ok())
}

/// microsoft/diskspd Process-DiskSpd.ps1 (https://github.com/microsoft/diskspd/blob/master/Process-DiskSpd.ps1),
/// process-result: refuses a file whose first line is not exactly `<Results>`; sums
/// ReadCount/WriteCount/ReadBytes/WriteBytes over Results.TimeSpan.Thread.Target and
/// divides by TestTimeSeconds; takes the Latency Buckets by their Percentile text
/// (25, 50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 100), the CPU average and hot core,
/// and the profile's Random/StrideSize, WriteRatio, RequestCount and BlockSize.
fn read_process_diskspd(xml: &str) -> (DiskspdRead, Vec<f64>) {
    assert_eq!(
        xml.lines().next(),
        Some("<Results>"),
        "Process-DiskSpd.ps1 wants <Results> on line 1"
    );
    let doc = roxmltree::Document::parse(xml).unwrap();
    let r = doc.root_element();
    let t: f64 = num_of(el(r, &["TimeSpan"])[0], "TestTimeSeconds").unwrap();
    let targets = el(r, &["TimeSpan", "Thread", "Target"]);
    let sum = |name: &str| {
        targets
            .iter()
            .map(|x| num_of(*x, name).unwrap_or(0.0))
            .sum::<f64>()
    };
    let buckets = el(r, &["TimeSpan", "Latency", "Bucket"]);
    let by_pct = |p: &str| {
        buckets
            .iter()
            .find(|b| {
                b.children()
                    .any(|c| c.has_tag_name("Percentile") && c.text() == Some(p))
            })
            .copied()
    };
    let latency = [
        "25", "50", "75", "90", "95", "99", "99.9", "99.99", "99.999", "100",
    ]
    .iter()
    .map(|p| {
        let b = by_pct(p).unwrap_or_else(|| panic!("no Bucket with Percentile {p}"));
        (
            p.to_string(),
            num_of(b, "ReadMilliseconds"),
            num_of(b, "WriteMilliseconds"),
        )
    })
    .collect();
    let tgt = el(
        r,
        &["Profile", "TimeSpans", "TimeSpan", "Targets", "Target"],
    )[0];
    let cpu = el(r, &["TimeSpan", "CpuUtilization", "Average"])[0];
    let hot = el(r, &["TimeSpan", "CpuUtilization", "CPU"])
        .iter()
        .filter_map(|c| num_of(*c, "UsagePercent"))
        .fold(0.0, f64::max);
    let profile = vec![
        num_of(tgt, "Random").or(num_of(tgt, "StrideSize")).unwrap(),
        num_of(tgt, "WriteRatio").unwrap(),
        num_of(tgt, "RequestCount").unwrap(),
        num_of(tgt, "BlockSize").unwrap(),
        num_of(cpu, "UsagePercent").unwrap(),
        hot,
    ];
    (
        DiskspdRead {
            read_iops: sum("ReadCount") / t,
            write_iops: sum("WriteCount") / t,
            read_bytes: sum("ReadBytes") as u64,
            write_bytes: sum("WriteBytes") as u64,
            latency,
        },
        profile,
    )
}

/// microsoft/diskspd VMFleet (Frameworks/VMFleet/VMFleet.psm1, the DISKSPD result
/// reduction): sums the Thread/Target counts over `Results/TimeSpan`, and takes the
/// latency percentiles 50, 90, 99 BY INDEX — `Latency.Bucket[50]` — so bucket i must
/// be percentile i (bucket 0 is the minimum), plus Average{Read,Write}Milliseconds.
fn read_vmfleet(xml: &str) -> (DiskspdRead, (Option<f64>, Option<f64>)) {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let r = doc.root_element();
    let t: f64 = el(r, &["TimeSpan"])
        .iter()
        .filter_map(|s| num_of(*s, "TestTimeSeconds"))
        .sum();
    let targets = el(r, &["TimeSpan", "Thread", "Target"]);
    let sum = |name: &str| {
        targets
            .iter()
            .map(|x| num_of(*x, name).unwrap_or(0.0))
            .sum::<f64>()
    };
    let buckets = el(r, &["TimeSpan", "Latency", "Bucket"]);
    let latency = [50usize, 90, 99]
        .iter()
        .map(|&i| {
            let b = buckets[i];
            (
                i.to_string(),
                num_of(b, "ReadMilliseconds"),
                num_of(b, "WriteMilliseconds"),
            )
        })
        .collect();
    let lat = el(r, &["TimeSpan", "Latency"])[0];
    (
        DiskspdRead {
            read_iops: sum("ReadCount") / t,
            write_iops: sum("WriteCount") / t,
            read_bytes: sum("ReadBytes") as u64,
            write_bytes: sum("WriteBytes") as u64,
            latency,
        },
        (
            num_of(lat, "AverageReadMilliseconds"),
            num_of(lat, "AverageWriteMilliseconds"),
        ),
    )
}

/// GoogleCloudPlatform/PerfKitBenchmarker perfkitbenchmarker/windows_packages/diskspd.py,
/// ParseDiskSpdResults: for every Thread, every child of its first Target except Path,
/// FileSize and *latency* tags is summed as an int (else a float — anything else
/// raises); CpuUtilization's CPU and Average need all four percentages; Latency
/// children are averages or Buckets that must have Percentile and TotalMilliseconds;
/// then IOPS = int(count / TestTimeSeconds).
fn read_perfkit(xml: &str) -> (u64, u64, u64, f64) {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let r = doc.root_element();
    let ts = el(r, &["TimeSpan"])[0];
    let mut sums: std::collections::BTreeMap<String, f64> = Default::default();
    for th in el(ts, &["Thread"]) {
        let target = th
            .children()
            .find(|c| c.is_element() && c.has_tag_name("Target"))
            .unwrap();
        for c in target.children().filter(|c| c.is_element()) {
            let tag = c.tag_name().name();
            if tag == "Path" || tag == "FileSize" || tag.to_lowercase().contains("latency") {
                continue;
            }
            let text = c.text().unwrap_or("").trim();
            let v: f64 = text
                .parse::<i64>()
                .map(|i| i as f64)
                .or_else(|_| text.parse::<f64>())
                .unwrap_or_else(|_| {
                    panic!("PerfKitBenchmarker: int()/float() of <{tag}> '{text}' raises")
                });
            *sums.entry(tag.to_string()).or_default() += v;
        }
    }
    for c in el(ts, &["CpuUtilization", "CPU"])
        .into_iter()
        .chain(el(ts, &["CpuUtilization", "Average"]))
    {
        for f in [
            "UsagePercent",
            "UserPercent",
            "KernelPercent",
            "IdlePercent",
        ] {
            assert!(num_of(c, f).is_some(), "Cpu utilization info missing: {f}");
        }
    }
    for b in el(ts, &["Latency", "Bucket"]) {
        assert!(
            num_of(b, "Percentile").is_some() && num_of(b, "TotalMilliseconds").is_some(),
            "Missing values in latency bucket"
        );
    }
    let t = num_of(ts, "TestTimeSeconds").unwrap();
    let iops = |k: &str| (sums[k] / t) as u64;
    (
        iops("ReadCount"),
        iops("WriteCount"),
        iops("IOCount"),
        sums["BytesCount"] / t / 1024.0 / 1024.0,
    )
}

#[test]
fn diskspd_consumers_read_iosims_xml() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args = words("-c16M -b4K -r -t2 -o2 -w30 -L -d1 -W0 -Rxml X:\\d.dat --json");
    args.push(json.display().to_string());
    let o = run_in(dir.path(), "diskspd", &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let xml = stdout(&o);
    let r: RunResult = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = r.duration_s;
    let (rd, wr) = (&r.total.read, &r.total.write);
    assert!(rd.ios > 0 && wr.ios > 0);
    let secs: f64 = format!("{t:.2}").parse().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.max(1.0);

    let (p, profile) = read_process_diskspd(&xml);
    assert!(close(p.read_iops, rd.ios as f64 / secs), "{p:?}");
    assert!(close(p.write_iops, wr.ios as f64 / secs), "{p:?}");
    assert_eq!((p.read_bytes, p.write_bytes), (rd.bytes, wr.bytes));
    assert_eq!(&profile[..4], &[4096.0, 30.0, 2.0, 4096.0]);
    for (pct, read, write) in &p.latency {
        assert!(read.is_some() && write.is_some(), "percentile {pct}");
    }
    let p100 = p.latency.last().unwrap();
    assert!(
        close(
            p100.1.unwrap(),
            (rd.latency_us.max / 1000.0 * 1000.0).round() / 1000.0
        ),
        "{p100:?}"
    );

    let (v, avgs) = read_vmfleet(&xml);
    assert_eq!((v.read_bytes, v.write_bytes), (rd.bytes, wr.bytes));
    assert!(close(v.read_iops, p.read_iops));
    // Bucket[50] is the 50th percentile: the same value Process-DiskSpd finds by name.
    let by_name = p.latency.iter().find(|l| l.0 == "50").unwrap();
    assert_eq!((v.latency[0].1, v.latency[0].2), (by_name.1, by_name.2));
    assert_eq!(
        avgs.0,
        Some((rd.latency_us.mean / 1000.0 * 1000.0).round() / 1000.0)
    );

    let (ri, wi, ti, mbs) = read_perfkit(&xml);
    assert_eq!(ri, (rd.ios as f64 / secs) as u64);
    assert_eq!(wi, (wr.ios as f64 / secs) as u64);
    assert_eq!(ti, ((rd.ios + wr.ios) as f64 / secs) as u64);
    assert!(close(
        mbs,
        (rd.bytes + wr.bytes) as f64 / secs / 1_048_576.0
    ));
}

/// DiskSpd 2.2's own unit-test goldens (https://github.com/microsoft/diskspd,
/// UnitTests/ResultParser/ResultParser.UnitTests.cpp, Test_ParseProfile and
/// Test_PrintTarget), with the path and command line that a real run has.
#[test]
fn diskspd_profile_text_matches_diskspds_unit_test_goldens() {
    // Test_ParseProfile: a default target (64 KiB sequential reads, 2 outstanding, 1 thread).
    let p = diskspd_plan("/x/t.dat");
    let golden = "\nCommand Line: diskspd /x/t.dat\n\nInput parameters:\n\n\ttimespan:   1\n\t-------------\n\tduration: 10s\n\twarm up time: 5s\n\tcool down time: 0s\n\trandom seed: 0\n\tpath: '/x/t.dat'\n\t\tthink time: 0ms\n\t\tburst size: 0\n\t\tusing software cache\n\t\tusing hardware write cache, writethrough off\n\t\tperforming read test\n\t\tblock size: 64KiB\n\t\tusing sequential I/O (stride: 64KiB)\n\t\tnumber of outstanding I/O operations per thread: 2\n\t\tthreads per file: 1\n\t\tusing I/O Completion Ports\n\t\tIO priority: normal\n\n";
    assert_eq!(diskspd::profile_text(&p), golden);
    // Test_PrintTarget: a target in a thread pool (no "threads per file"), with one setting each.
    let target = |extra: &str| {
        let text = diskspd::profile_text(&diskspd_plan(&format!("-F1 {extra} /x/t.dat")));
        let from = text.find("\tpath: ").unwrap();
        text[from..].trim_end_matches('\n').to_string() + "\n"
    };
    let head = "\tpath: '/x/t.dat'\n\t\tthink time: 0ms\n\t\tburst size: 0\n\t\tusing software cache\n\t\tusing hardware write cache, writethrough off\n\t\tperforming read test\n\t\tblock size: 64KiB\n\t\tusing sequential I/O (stride: 64KiB)\n\t\tnumber of outstanding I/O operations per thread: 2\n";
    for (extra, line_before_priority, line_after) in [
        ("", "", ""),
        ("-T100K", "\t\tthread stride size: 100KiB\n", ""),
        ("-f2000K", "\t\tmax file size: 1.95MiB\n", ""),
        ("-B2M", "\t\tbase file offset: 2MiB\n", ""),
        ("-g1000", "", "\t\tthroughput rate-limited to 1000 B/ms\n"),
        ("-g1000i", "", "\t\tthroughput rate-limited to 1000 IOPS\n"),
    ] {
        assert_eq!(
            target(extra),
            format!("{head}{line_before_priority}\t\tIO priority: normal\n{line_after}"),
            "{extra}"
        );
    }
}

/// `-I1` runs every worker thread in the idle I/O class and `-I2` at best
/// effort level 7, as `ionice -p TID` reads them back while the run goes on.
#[test]
fn diskspd_io_priority_reaches_the_worker_threads() {
    if Command::new("ionice").arg("--version").output().is_err() {
        crate::common::skip("ionice (util-linux) is not installed");
        return;
    }
    for (flag, want) in [("-I1", "idle"), ("-I2", "best-effort: prio 7")] {
        let dir = tempfile::tempdir().unwrap();
        let child = crate::common::iosim()
            .current_dir(dir.path())
            .env("IOSIM_DRIVES", format!("X={}", dir.path().display()))
            .args(["diskspd", "-c4M", "-b4K", "-t2", "-o1", "-d4", "-W0", "-r"])
            .arg(flag)
            .arg("X:\\prio.dat")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The workers exist once the run is under way: look for them for up to 3 s.
        let mut seen = Vec::new();
        for _ in 0..30 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id()))
                .map(|d| d.filter_map(|e| e.ok()).count())
                .unwrap_or(0);
            if tasks >= 3 {
                // The workers are the threads named iosim-wN.
                seen = std::fs::read_dir(format!("/proc/{}/task", child.id()))
                    .unwrap()
                    .filter_map(|e| e.ok())
                    .filter(|e| {
                        std::fs::read_to_string(e.path().join("comm"))
                            .is_ok_and(|c| c.starts_with("iosim-w"))
                    })
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                if seen.len() == 2 {
                    break;
                }
            }
        }
        assert!(!seen.is_empty(), "{flag}: no worker threads appeared");
        let prios: Vec<String> = seen
            .iter()
            .filter_map(|tid| Command::new("ionice").args(["-p", tid]).output().ok())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(prios.len(), 2, "{flag}: {prios:?}");
        assert!(prios.iter().all(|p| p == want), "{flag}: {prios:?}");
    }
}

/// SQLIO's defaults (`-kR -t1 -s30 -f64 -b2 -i64 -BN testfile.dat`) run as
/// they are: the stripe pattern, on a file holding the 8 MB it touches.
#[test]
fn sqlio_runs_its_default_stripe_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "sqlio", &words("-s1 -t2"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("IOs/sec:"), "{out}");
    assert!(out.contains("\tusing 2KB sequential IOs"), "{out}");
    // At least the 8 MB the pattern touches (iosim's default new-file size may be larger).
    let size = std::fs::metadata(dir.path().join("testfile.dat"))
        .unwrap()
        .len();
    assert!(size >= 64 * 64 * 2048, "{size}");
    // The native form says the same.
    let t = crate::common::iosim()
        .current_dir(dir.path())
        .args(["translate", "sqlio", "-f32", "-i16", "-b8", "-kW", "x.dat"])
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", stderr(&t));
    assert!(stdout(&t).contains("--stripe 32:16"), "{}", stdout(&t));
}

/// Issue 37: DiskSpd takes `/b8K` for `-b8K`; on Linux it is a path at the
/// root, and iosim created `/b8K` and ran on it. Refused, naming `-b8K`.
#[test]
fn diskspd_slash_switches_are_refused_with_the_dash_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let existed = Path::new("/b8K").exists();
    let o = run_in(dir.path(), "diskspd", &words("/b8K -c1M -d1 -W0 x.dat"));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("-b8K"), "{err}");
    assert!(existed || !Path::new("/b8K").exists(), "created /b8K");
    assert!(!dir.path().join("x.dat").exists());
}

/// Issue 37: `diskspd -b8` is 8-byte blocks (DiskSpd's -b is bytes), run
/// through the page cache: the block size is warned of with `-b8K`, and
/// the self-checks (here: a buffered file that fits in memory) reach
/// stderr, which DiskSpd's layout has no place for.
#[test]
fn diskspd_tiny_blocks_and_self_checks_reach_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), "diskspd", &words("-b8 -c1M -d1 -W0 x.dat"));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("did you mean -b8K?"), "{err}");
    assert!(
        err.contains("iosim diskspd: WARNING (buffered_fits_in_memory)"),
        "{err}"
    );
}
