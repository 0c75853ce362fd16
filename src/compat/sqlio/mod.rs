//! `iosim sqlio`: SQLIO 1.5's command line and output on iosim's engine.
//!
//! The output keeps SQLIO's lines, in SQLIO's order, so scripts that pick
//! numbers by line (seed 001's PowerShell takes lines 10, 11 and 14) keep
//! working. See docs/sqlio.md for the mapping of every option.
//!
//! By job: `parse` reads the options and parameter files, `plan` turns them
//! into files and a workload, `files` creates or expands the files, `text`
//! writes SQLIO's lines and `cpu` its `-U` report; this file runs them.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

mod cpu;
mod files;
mod parse;
mod plan;
mod text;

use super::{Extensions, Warnings};
use crate::runner::RunResult;
pub use cpu::{utilization, CpuSample};
use files::{check_writable, prepare_files};
use parse::TOOL;
pub use parse::{
    parse, parse_param_file, Buffering, ParamLine, Pattern, SqlioArgs, DEFAULT_CREATE_SIZE,
    MAX_BLOCK_KB, MAX_FILES, MAX_NAME, MAX_THREADS,
};
pub use plan::{plan, plan_from_args, FilePlan, Plan};
use text::INITIALIZED;
pub use text::{
    expand_lines, header, histogram_rows, prepared_lines, results, size_line, throughput_lines,
    Prepared,
};

/// `iosim sqlio -?`.
pub const USAGE: &str = "Usage: iosim sqlio [options] [<filename>...]
	[options] may include any of the following (case-sensitive, as SQLIO):
	-k<R|W> kind of IO (R=reads, W=writes)
	-t<threads> number of threads (per file)
	-s<secs> number of seconds to run
	-d<drv_A><drv_B>.. use same filename on each drive letter given (map letters with --drive)
	-R<drv_A/0>,<drv_B/1>.. raw drive letters/number for I/O (map with --drive / --disk)
	-f<stripe factor> stripe size in blocks, random, or sequential
	-p[I]<cpu affinity> cpu number for affinity (0 based) (I=ideal: ignored on Linux)
	-a[R[I]]<cpu mask> cpu mask for (R=roundrobin (I=ideal: ignored)) affinity
	-o<#outstanding> I/Os in flight per thread
	-b<io size(KB)> IO block size in KB
	-i<#IOs/run> number of IOs per IO run (with a numeric -f)
	-m<[C|S]><#sub-blks> accepted: issued as one contiguous I/O of -b KB
	-L<[S|P][i|]> print latency metrics and the histogram
	-U[p] report system (p=per processor) utilization
	-B<[N|Y|H|S]> set buffering (N=none, Y=all, H=hdwr, S=sfwr)
	-S<#blocks> start I/Os #blocks into file
	-64 accepted (iosim is 64-bit)   -D<level> accepted (debug output not printed)
	-F<paramfile> read parameters from <paramfile> (path threads mask sizeMB per line)
iosim options:
	--drive L=/path  map drive letter L (also IOSIM_DRIVES='L=/path;X=/other')
	--disk N=/dev/x  map disk number N for -R (also IOSIM_DISKS)
	--allow-destroy  allow writes to files and devices iosim did not create
	--size SIZE      size to create a missing file with (default 256M)
	--engine E       uring (default), sync or null
	--json FILE      also write the full result as JSON
	--quiet          no progress bar
Defaults:
	-kR -t1 -s30 -f64 -b2 -i64 -BN testfile.dat (-f64 must be replaced by -frandom or -fsequential)
Maximums:
	-t (threads): 256
	no. of files, includes -d & -R: 256
	filename length: 256
See docs/sqlio.md.
";

/// `iosim sqlio ...`: runs, writing SQLIO's lines to `out` as SQLIO does
/// while it prepares its files; returns the run, what its output is printed
/// from and what of it is on `out` already (the results follow once the run
/// is over, printed by `commands::finish`).
///
/// Facts SQLIO does not print (the clock source, notes) go to stderr, so every
/// line on `out` is one SQLIO printed.
pub fn main(
    args: &[String],
    stop: Arc<AtomicBool>,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<super::Measured<Printed>> {
    if args.iter().any(|a| a == "-?") {
        out.write_all(USAGE.as_bytes())?;
        return Ok(super::Measured::nothing(Extensions::default()));
    }
    let mut w = Warnings::default();
    let (p, ext) = plan_from_args(args, &mut w)?;
    w.print(TOOL);
    check_writable(&p, &ext)?;
    if p.args.latency.is_some() {
        let source = crate::sysmon::host::clocksource()
            .map(|cs| format!(" (clocksource {cs})"))
            .unwrap_or_default();
        crate::say!(
            "iosim sqlio: note: latency is timed with {}{source}, in nanoseconds",
            crate::platform::clock::CLOCK_NAME
        );
    }
    out.write_all(header(&p).as_bytes())?;
    out.flush()?;
    let opts = super::run_options(ext.quiet, stop.clone(), 1000);
    let prepared = prepare_files(out, &p, &ext, &stop, opts.progress)?;
    out.write_all(INITIALIZED.as_bytes())?;
    out.flush()?;
    let before = p.args.utilization.map(|_| CpuSample::now());
    let res = crate::runner::run(&p.spec, &opts)?;
    let printed = Printed {
        plan: p,
        prepared,
        cpu: before.map(|b| (b, CpuSample::now())),
    };
    // What is on stdout already; `commands::finish` prints the results after it.
    let streamed = printed.before_run();
    let errors = res.errors.count;
    let mut m = super::Measured::run(TOOL, args, res, printed, streamed, ext);
    if errors > 0 {
        m.notes.push(format!(
            "iosim sqlio: {errors} I/O errors (see --json for the first ones)"
        ));
    }
    Ok(m)
}

/// What `iosim sqlio` printed a run's output from, kept with its result in
/// the history so that `iosim show` prints the same lines again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Printed {
    /// The plan (options, files, workload).
    pub plan: Plan,
    /// How each file was prepared, in order.
    pub prepared: Vec<(PathBuf, Prepared)>,
    /// `-U`: the CPU counters before and after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<(CpuSample, CpuSample)>,
}

impl Printed {
    /// Everything `iosim sqlio` printed on stdout for the run `r`.
    pub fn text(&self, r: &RunResult) -> String {
        self.before_run() + &self.after_run(r)
    }

    /// What it prints before the run, as the run is prepared: the header,
    /// each file's preparation, and the line that ends the preparation.
    fn before_run(&self) -> String {
        let mut s = header(&self.plan);
        for (path, prep) in &self.prepared {
            s.push_str(&prepared_lines(path, prep));
        }
        s.push_str(INITIALIZED);
        s
    }

    /// What it prints once the run is over: the results, then `-U`'s report.
    fn after_run(&self, r: &RunResult) -> String {
        let mut s = results(&self.plan, r);
        if let (Some(per_cpu), Some((a, b))) = (self.plan.args.utilization, &self.cpu) {
            s.push_str(&utilization(a, b, r.duration_s, per_cpu));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{CacheMode, RwMode, SeqLayout, Stripe};
    use std::time::Duration;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn parse_ok(s: &str) -> SqlioArgs {
        parse(&args(s), &mut Warnings::default()).unwrap()
    }

    fn parse_err(s: &str) -> String {
        parse(&args(s), &mut Warnings::default())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn defaults_are_sqlios() {
        let a = parse_ok("");
        assert!(!a.write);
        assert_eq!(a.threads, None);
        assert_eq!(a.secs, 30);
        assert_eq!(a.pattern, Pattern::Stripe(64));
        assert_eq!(a.block_kb, 2);
        assert_eq!(a.buffering, None);
    }

    #[test]
    fn seed_command_lines_parse() {
        let a = parse_ok("-s10 -kR -frandom -b8 -t8 -o16 -LS -BN X:\\TestFile.DAT");
        assert_eq!(a.secs, 10);
        assert_eq!(a.pattern, Pattern::Random);
        assert_eq!(a.block_kb, 8);
        assert_eq!(a.threads, Some(8));
        assert_eq!(a.outstanding, Some(16));
        assert_eq!(a.latency, Some(('S', false)));
        assert_eq!(a.buffering, Some(Buffering::None));
        assert_eq!(a.files, vec!["X:\\TestFile.DAT"]);
        let a = parse_ok("-dL -BH -kW -fsequential -t8 -o128 -s90 -b8 testfile.dat");
        assert!(a.write);
        assert_eq!(a.drives, vec!['L']);
        assert_eq!(a.buffering, Some(Buffering::Hardware));
        let a = parse_ok("-kR -s180 -frandom -o8 -b256 -LS -Fparam.txt");
        assert_eq!(a.param_files, vec!["param.txt"]);
    }

    #[test]
    fn powershell_style_spaced_values_parse() {
        // `$o = "-o $_"` passes one argument "-o 1".
        let a = parse(
            &["-o 32".to_string(), "-t 2".to_string()],
            &mut Warnings::default(),
        )
        .unwrap();
        assert_eq!(a.outstanding, Some(32));
        assert_eq!(a.threads, Some(2));
    }

    #[test]
    fn case_matters_and_unknowns_are_named() {
        assert!(parse_err("-kr").contains("-kr"));
        assert!(parse_err("-x").contains("'-x'"));
        assert!(parse_err("-o").contains("'-o'"));
        assert!(parse_err("-t300").contains("256"));
        assert!(parse_err("-v1.1.1").contains("-v1.1.1"));
        assert!(parse_err("-BQ").contains("-BN"));
        assert!(parse_err("-p1 -a0x3").contains("not both"));
        let s = parse_ok("-S10 -s10");
        assert_eq!(s.start_blocks, 10);
        assert_eq!(s.secs, 10);
    }

    #[test]
    fn ignored_options_warn() {
        let mut w = Warnings::default();
        let a = parse(&args("-frandom -i32 -mS4 -LPi -pI1"), &mut w).unwrap();
        assert_eq!(a.multi, Some(('S', 4)));
        assert_eq!(w.0.len(), 5, "{:?}", w.0);
    }

    #[test]
    fn param_files() {
        let t = "# comment\n\nc:\\DSI3500\\LUN00\\testfile.dat 1 0x0 10000\n/tmp/b.dat 2 0x3 100\n/tmp/c.dat\n";
        let l = parse_param_file(t, "p.txt").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].size_mb, Some(10000));
        assert_eq!(l[1].threads, 2);
        assert_eq!(l[1].mask, "0x3");
        assert_eq!(l[2].threads, 1);
        assert_eq!(l[2].size_mb, None);
        assert!(parse_param_file("/a x 0x0 1", "p").is_err());
        assert!(parse_param_file("/a 1 0x0 1 extra", "p").is_err());
        assert!(parse_param_file("/a 1 zz 1", "p").is_err());
    }

    fn plan_of(s: &str, param: &str) -> anyhow::Result<Plan> {
        let mut ext = Extensions::default();
        ext.add_drive("L=/mnt/l").unwrap();
        ext.add_drive("X=/mnt/x").unwrap();
        let a = parse(&args(s), &mut Warnings::default())?;
        let param = param.to_string();
        plan(&a, &ext, &mut Warnings::default(), &move |_| {
            Ok(param.clone())
        })
    }

    #[test]
    fn plans_map_to_the_spec() {
        let p = plan_of(
            "-s10 -kR -frandom -b8 -t8 -o16 -LS -BN X:\\TestFile.DAT",
            "",
        )
        .unwrap();
        assert_eq!(p.spec.rw, RwMode::Randread);
        assert_eq!(p.spec.bs, 8192);
        assert_eq!(p.spec.qd, 16);
        assert_eq!(p.spec.targets[0].threads, Some(8));
        assert_eq!(p.spec.targets[0].path, PathBuf::from("/mnt/x/TestFile.DAT"));
        assert_eq!(p.spec.cache, CacheMode::DirectWritethrough);
        assert_eq!(p.spec.duration, Duration::from_secs(10));
        let p = plan_of(
            "-dL -BH -kW -fsequential -t2 -o1 -s90 -b64 testfile.dat",
            "",
        )
        .unwrap();
        assert_eq!(p.spec.rw, RwMode::Write);
        assert_eq!(p.spec.cache, CacheMode::Direct);
        assert_eq!(p.spec.targets[0].path, PathBuf::from("/mnt/l/testfile.dat"));
        let p = plan_of(
            "-kR -frandom -b256 -Fp.txt -S4",
            "/tmp/a.dat 1 0x0 100\n/tmp/b.dat 2 0x2 100",
        )
        .unwrap();
        assert_eq!(p.files.len(), 2);
        assert_eq!(p.files[1].first_thread, 1);
        assert_eq!(p.spec.targets[1].threads, Some(2));
        assert_eq!(p.spec.targets[1].cpus, vec![1]);
        assert_eq!(p.spec.targets[0].offset, 4 * 256 * 1024);
        assert_eq!(p.spec.targets[0].length, Some((100 << 20) - 4 * 256 * 1024));
        // The parameter file's thread column wins over -t, as in SQLIO.
        let p = plan_of("-frandom -t4 -Fp.txt", "/tmp/a.dat 1 0x0 100").unwrap();
        assert_eq!(p.files[0].threads, 1);
        let p = plan_of("-frandom -aR0x3 /tmp/a", "").unwrap();
        assert_eq!(p.spec.cpus, vec![0, 1]);
        let p = plan_of("-frandom -a0x3 /tmp/a", "").unwrap();
        assert_eq!(p.spec.targets[0].cpus, vec![0, 1]);
        let p = plan_of("-frandom -p1 /tmp/a", "").unwrap();
        assert_eq!(p.spec.cpus, vec![1]);
    }

    #[test]
    fn stripe_pattern_is_sqlios_default() {
        let p = plan_of("/tmp/a", "").unwrap();
        let st = Stripe {
            factor: 64,
            ios_per_run: 64,
        };
        assert_eq!(p.spec.seq_layout, SeqLayout::Stripe(st));
        assert!(!p.spec.rw.is_random());
        // -f64 -i64 -b2 touches 8 MB, and the file is extended to hold it.
        assert_eq!(p.spec.targets[0].size, Some(8 << 20));
        let p = plan_of("-f32 -i16 -b8 -S2 -t4 /tmp/a", "").unwrap();
        assert_eq!(
            p.spec.seq_layout,
            SeqLayout::Stripe(Stripe {
                factor: 32,
                ios_per_run: 16
            })
        );
        assert_eq!(p.spec.targets[0].size, Some(2 * 8192 + 32 * 16 * 8192));
        let e = plan_of("-f4 -t8 /tmp/a", "").unwrap_err().to_string();
        assert!(e.contains("-f4") && e.contains("8 on"), "{e}");
        assert!(plan_of("-f0 /tmp/a", "").is_err());
        assert!(plan_of("-dQ -frandom a", "")
            .unwrap_err()
            .to_string()
            .contains("--drive Q="));
    }

    #[test]
    fn header_lines_follow_sqlio() {
        let p = plan_of("-s10 -kR -frandom -b8 -t8 -o16 -LS -BN /x/TestFile.DAT", "").unwrap();
        let h = header(&p);
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[0], "sqlio v1.5.SG");
        assert!(lines[1]
            .starts_with("using system counter for latency timings, 1000000000 counts per second"));
        assert_eq!(
            lines[2],
            "8 threads reading for 10 secs from file /x/TestFile.DAT"
        );
        assert_eq!(lines[3], "\tusing 8KB random IOs");
        assert_eq!(
            lines[4],
            "\tenabling multiple I/Os per thread with 16 outstanding"
        );
        assert_eq!(
            lines[5],
            "\tbuffering set to not use file nor disk caches (as is SQL Server)"
        );
        let p = plan_of(
            "-kW -s5 -fsequential -o4 -b64 -Fparam.txt",
            "/l/testfile.dat 2 0x0 100",
        )
        .unwrap();
        let h = header(&p);
        assert!(h.contains("parameter file used: param.txt\n\tfile /l/testfile.dat with 2 threads (0-1) using mask 0x0 (0)\n2 threads writing for 5 secs to file /l/testfile.dat\n"), "{h}");
    }
}
