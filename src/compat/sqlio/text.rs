//! SQLIO's output lines: the header, the file-size lines, the results.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::plan::Plan;
use crate::runner::RunResult;

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn list(names: &[String]) -> String {
    match names.len() {
        0 => String::new(),
        1 => names[0].clone(),
        n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// SQLIO's header, up to the file-size lines.
pub fn header(p: &Plan) -> String {
    let mut s = String::from("sqlio v1.5.SG\n");
    if p.args.latency.is_some() {
        let _ = writeln!(
            s,
            "using system counter for latency timings, 1000000000 counts per second"
        );
    }
    for pf in &p.param_files {
        let _ = writeln!(s, "parameter file used: {pf}");
    }
    for f in &p.files {
        if let Some(mask) = &f.mask {
            let (v, _) = crate::compat::mask_cpus(mask).unwrap_or_default();
            let range = if f.threads == 1 {
                format!("{}", f.first_thread)
            } else {
                format!("{}-{}", f.first_thread, f.first_thread + f.threads - 1)
            };
            let _ = writeln!(
                s,
                "\tfile {} with {} thread{} ({range}) using mask {mask} ({v})",
                f.path.display(),
                f.threads,
                plural(f.threads)
            );
        }
    }
    let total: u32 = p.files.iter().map(|f| f.threads).sum();
    let names: Vec<String> = p
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    let _ = writeln!(
        s,
        "{total} thread{} {} for {} secs {} file{} {}",
        plural(total),
        if p.args.write { "writing" } else { "reading" },
        p.args.secs,
        if p.args.write { "to" } else { "from" },
        if names.len() == 1 { "" } else { "s" },
        list(&names)
    );
    let _ = writeln!(
        s,
        "\tusing {}KB {} IOs",
        p.args.block_kb,
        if p.spec.rw.is_random() {
            "random"
        } else {
            "sequential"
        }
    );
    if let Some(o) = p.args.outstanding {
        let _ = writeln!(
            s,
            "\tenabling multiple I/Os per thread with {o} outstanding"
        );
    }
    if let Some(b) = p.args.buffering {
        let _ = writeln!(s, "\t{}", b.line());
    }
    s
}

/// How a file was prepared, for the size lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Prepared {
    /// Used as found.
    Current {
        /// Bytes.
        size: u64,
    },
    /// The parameter file's size was used (file already large enough).
    Specified {
        /// Bytes.
        size: u64,
    },
    /// Created or extended from `current` to `size`; `specified` when a parameter file gave the size.
    Expanded {
        /// Bytes before.
        current: u64,
        /// Bytes after.
        size: u64,
        /// True when the size came from a parameter file.
        specified: bool,
    },
}

/// The expansion lines before the work (`expanding X ...`, without "done.").
pub fn expand_lines(path: &Path, current: u64, size: u64) -> String {
    format!(
        "size of file {p} needs to be: {size} bytes\ncurrent file size: {current} bytes\nneed to expand by: {} bytes\nexpanding {p} ...",
        size - current,
        p = path.display()
    )
}

/// Every line SQLIO printed while preparing one file: the expansion lines
/// with their " done." when it grew the file, then the `using ... size` line.
pub fn prepared_lines(path: &Path, prep: &Prepared) -> String {
    match *prep {
        Prepared::Expanded { current, size, .. } => {
            expand_lines(path, current, size) + EXPANDED + &size_line(path, prep)
        }
        _ => size_line(path, prep),
    }
}

/// What ends the expansion lines once the file is expanded.
pub(super) const EXPANDED: &str = " done.\n";

/// The line between the preparation and the results.
pub(super) const INITIALIZED: &str = "initialization done\n";

/// The `using ... size` line.
pub fn size_line(path: &Path, prep: &Prepared) -> String {
    let (kind, size) = match *prep {
        Prepared::Current { size } => ("current", size),
        Prepared::Specified { size } => ("specified", size),
        Prepared::Expanded {
            size, specified, ..
        } => (if specified { "specified" } else { "current" }, size),
    };
    format!(
        "using {kind} size: {} MB for file: {}\n",
        size >> 20,
        path.display()
    )
}

/// SQLIO's results, from `CUMULATIVE DATA:` on, in SQLIO's fixed columns.
///
/// Layout from SQLIO 1.5's readme.txt ("throughput metrics:" / "IOs/sec:   183.16",
/// and the `ms:`/`%:` histogram rows): values are `%9.2f` after the label, the
/// histogram is 3-character right-aligned columns (`ms: 0` then `%3d` for 1..23 and
/// ` 24+`; `%:` then `%3d` for every bucket).
pub fn results(p: &Plan, r: &RunResult) -> String {
    let t = &r.total.total;
    let mut s = String::from("CUMULATIVE DATA:\nthroughput metrics:\n");
    s.push_str(&throughput_lines(t.iops, t.mib_per_sec));
    if p.args.latency.is_some() {
        let ms = |us: f64| (us / 1000.0).floor() as u64;
        s.push_str("latency metrics:\n");
        let _ = writeln!(s, "Min_Latency(ms): {}", ms(t.latency_us.min));
        let _ = writeln!(s, "Avg_Latency(ms): {}", ms(t.latency_us.mean));
        let _ = writeln!(s, "Max_Latency(ms): {}", ms(t.latency_us.max));
        s.push_str("histogram:\n");
        s.push_str(&histogram_rows(&crate::report::sqlio_percentages(t)));
    }
    s
}

/// The `IOs/sec:` and `MBs/sec:` lines: the value right-aligned in 8 columns
/// after one blank (`IOs/sec:   183.16`), as SQLIO prints them.
pub fn throughput_lines(iops: f64, mbs: f64) -> String {
    format!("IOs/sec: {iops:8.2}\nMBs/sec: {mbs:8.2}\n")
}

/// The `ms:` and `%:` rows of SQLIO's latency histogram (25 buckets).
pub fn histogram_rows(pct: &[u64]) -> String {
    let mut s = String::from("ms: 0");
    for i in 1..24 {
        let _ = write!(s, "{i:3}");
    }
    s.push_str(" 24+\n%:");
    for v in pct {
        let _ = write!(s, "{v:3}");
    }
    s.push('\n');
    s
}
