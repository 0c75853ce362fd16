//! The `iosim` binary: parse the command line, run, print. Everything else
//! lives in the library.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Parser;
use iosim::cli::{Cli, Command, CreateArgs, OutputArgs, OutputFormat, QuickArgs, RunArgs};
use iosim::runner::{RunOptions, RunResult};

/// Exit code when a run was interrupted by Ctrl-C or SIGTERM (results were still printed).
const EXIT_INTERRUPTED: u8 = 130;
/// Exit code when a run completed but saw I/O errors.
const EXIT_IO_ERRORS: u8 = 3;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iosim: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    let stop = install_signal_handlers()?;
    match cli.command {
        None => quick(&cli.quick, stop),
        Some(Command::Quick(q)) => quick(&q, stop),
        Some(Command::Run(r)) => run_cmd(&r, stop),
        Some(Command::Create(c)) => create(&c, stop),
        Some(Command::Sqlio(a)) => Ok(ExitCode::from(iosim::compat::sqlio::main(&a.args, stop)?)),
        Some(Command::Diskspd(a)) => {
            Ok(ExitCode::from(iosim::compat::diskspd::main(&a.args, stop)?))
        }
        Some(Command::Translate(a)) => Ok(ExitCode::from(iosim::compat::translate::main(&a.args)?)),
        Some(Command::History(a)) => iosim::store::cmd::history(&a).map(|_| ExitCode::SUCCESS),
        Some(Command::Show(a)) => iosim::store::cmd::show(&a).map(|_| ExitCode::SUCCESS),
        Some(Command::Compare(a)) => iosim::store::cmd::compare(&a).map(|_| ExitCode::SUCCESS),
        Some(Command::Report(a)) => iosim::html::report(&a).map(|_| ExitCode::SUCCESS),
        Some(Command::Sim(s)) => sim_cmd(&s, stop),
        Some(Command::Sweep(s)) => sweep_cmd(&s, stop),
        Some(Command::Profile(p)) => profile_cmd(&p),
        Some(Command::Matrix(m)) => {
            let (interrupted, errors) = iosim::matrix::main(&m, stop)?;
            Ok(exit_code(interrupted, errors))
        }
    }
}

fn create(c: &CreateArgs, stop: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    if c.path.exists() {
        anyhow::bail!(
            "'{}' already exists: iosim create only makes new files",
            c.path.display()
        );
    }
    let t0 = std::time::Instant::now();
    let opts = iosim::target::PrepareOptions {
        progress: !c.quiet && std::io::stderr().is_terminal(),
        stop: Some(&stop),
    };
    iosim::target::create_test_file(&c.path, c.size, c.fill, opts)?;
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "created {} ({}) in {:.2} s, {:.0} MiB/s",
        c.path.display(),
        iosim::units::format_size(c.size),
        secs,
        c.size as f64 / 1_048_576.0 / secs.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// SIGINT/SIGTERM set a flag the workers poll; a second Ctrl-C exits at once.
fn install_signal_handlers() -> anyhow::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())?;
        signal_hook::flag::register(sig, stop.clone())?;
    }
    Ok(stop)
}

fn options(out: &OutputArgs, stop: Arc<AtomicBool>, interval: std::time::Duration) -> RunOptions {
    RunOptions {
        progress: !out.quiet && std::io::stderr().is_terminal(),
        stop,
        interval,
        sync: None,
    }
}

fn quick(q: &QuickArgs, stop: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let dir = q.dir.clone().unwrap_or_else(|| ".".into());
    if !dir.is_dir() {
        return Err(iosim::Error::MissingDirectory(dir).into());
    }
    let cfg = iosim::quick::QuickConfig {
        path: dir.join(&q.file),
        size: q.size,
        duration: q.duration,
        engine: q.engine,
        cache: q.cache,
    };
    let opts = options(&q.out, stop.clone(), std::time::Duration::from_secs(1));
    let res = iosim::quick::run(&cfg, &opts)?;
    match q.out.output {
        OutputFormat::Text => print!("{}", iosim::quick::table(&res)),
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&res)?),
        OutputFormat::Csv => {
            println!("test,{}", iosim::report::CSV_HEADER);
            for t in &res.tests {
                for line in iosim::report::csv(&t.result)
                    .lines()
                    .skip(1)
                    .filter(|l| l.starts_with("total"))
                {
                    println!("{},{line}", t.name);
                }
            }
        }
    }
    if q.out.output == OutputFormat::Text {
        eprintln!(
            "(test file kept for the next run: {}; delete it when done)",
            cfg.path.display()
        );
    }
    iosim::store::cmd::save_result(&q.save, "quick", &serde_json::to_value(&res)?);
    let interrupted = res.tests.iter().any(|t| t.result.interrupted)
        || res.tests.len() < iosim::quick::SUITE.len();
    Ok(exit_code(
        interrupted,
        res.tests.iter().map(|t| t.result.errors.count).sum(),
    ))
}

fn run_cmd(r: &RunArgs, stop: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    if let Some(name) = &r.profile {
        return run_profile(name, r, stop);
    }
    let spec = r.to_spec()?;
    let opts = options(&r.out, stop, r.interval);
    let res = iosim::runner::run(&spec, &opts)?;
    print_result(&res, r.out.output);
    if let Some(path) = &r.series {
        std::fs::write(path, iosim::report::series_csv(&res)).map_err(|e| {
            anyhow::anyhow!("cannot write the time series to '{}': {e}", path.display())
        })?;
    }
    let doc = serde_json::to_value(&res)?;
    let regressed = iosim::store::cmd::after_run(&r.save, &r.guard, "run", &doc)?;
    if regressed && !res.interrupted && res.errors.count == 0 {
        return Ok(ExitCode::from(iosim::store::cmd::EXIT_REGRESSED));
    }
    Ok(exit_code(res.interrupted, res.errors.count))
}

fn sim_cmd(s: &iosim::sim::cli::SimArgs, stop: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    if s.out.output == OutputFormat::Csv {
        anyhow::bail!("iosim sim prints text or json: use --output text or --output json");
    }
    // Configuration warnings are shown at once and repeated in the report.
    let (cfg, warnings) = s.to_config().map_err(anyhow::Error::msg)?;
    if !s.out.quiet {
        for w in &warnings {
            eprintln!("iosim sim: warning: {w}");
        }
    }
    let opts = iosim::sim::RunOpts {
        stop,
        allow_destroy: s.allow_destroy,
        faults: s.inject.clone(),
        quiet: s.out.quiet,
        long_io: std::time::Duration::from_secs(s.long_io.max(1)),
    };
    let mut res = iosim::sim::run(cfg, &opts)?;
    res.warnings.splice(0..0, warnings);
    match s.out.output {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&res)?),
        _ => print!("{}", iosim::sim::summary::text(&res)),
    }
    iosim::store::cmd::save_result(&s.save, "sim", &serde_json::to_value(&res)?);
    Ok(exit_code(res.interrupted, res.errors.count))
}

fn print_result(res: &RunResult, format: OutputFormat) {
    match format {
        OutputFormat::Text => print!("{}", iosim::report::text(res)),
        OutputFormat::Json => println!("{}", iosim::report::json(res)),
        OutputFormat::Csv => print!("{}", iosim::report::csv(res)),
    }
}

fn exit_code(interrupted: bool, errors: u64) -> ExitCode {
    if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if errors > 0 {
        ExitCode::from(EXIT_IO_ERRORS)
    } else {
        ExitCode::SUCCESS
    }
}

fn sweep_cmd(a: &iosim::cli::SweepArgs, stop: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    use iosim::sweep::{self, studies, Combine, SweepPlan};
    if a.list_studies {
        for s in studies::all() {
            println!(
                "{:<22}{}\n{:<22}iosim sweep FILE {}",
                s.name, s.about, "", s.sweep_line
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut base = a.run.to_spec()?;
    let (explicit, study) = match &a.study {
        Some(name) => {
            let s = studies::find(name).ok_or_else(|| {
                anyhow::anyhow!("no built-in study '{name}': see iosim sweep --list-studies")
            })?;
            base.rw = s.rw;
            base.write_pct = s.rw.default_write_pct();
            base.bs = s.bs;
            (s.to_points(), Some(s.name.to_string()))
        }
        None => (Vec::new(), None),
    };
    if a.vary.is_empty() && explicit.is_empty() {
        anyhow::bail!(
            "nothing to sweep: give --vary PARAM=VALUES (e.g. --vary qd=1..64x2) or --study NAME"
        );
    }
    let plan = SweepPlan {
        base,
        axes: a.vary.clone(),
        explicit,
        combine: if a.zip { Combine::Zip } else { Combine::Grid },
        repeat: a.repeat,
        max_latency_us: a.max_latency,
        use_p99: a.p99,
        knee_threshold: a.knee_threshold,
        study,
    };
    let opts = options(&a.run.out, stop, a.run.interval);
    let res = sweep::run(&plan, &opts, |_, _, _| {})?;
    match a.run.out.output {
        OutputFormat::Text => print!("{}", sweep::text(&res)),
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&res)?),
        OutputFormat::Csv => print!("{}", sweep::csv(&res)),
    }
    if let Some(path) = &a.csv {
        std::fs::write(path, sweep::csv(&res))
            .map_err(|e| anyhow::anyhow!("cannot write '{}': {e}", path.display()))?;
    }
    iosim::store::cmd::after_run(
        &a.run.save,
        &a.run.guard,
        "sweep",
        &serde_json::to_value(&res)?,
    )?;
    Ok(if res.interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

fn profile_cmd(p: &iosim::cli::ProfileArgs) -> anyhow::Result<ExitCode> {
    match &p.action {
        iosim::cli::ProfileAction::List => print!("{}", iosim::profile::list_text()?),
        iosim::cli::ProfileAction::Show { name } => print!("{}", iosim::profile::show_text(name)?),
    }
    Ok(ExitCode::SUCCESS)
}

/// `iosim run --profile NAME PATH...`.
fn run_profile(name: &str, r: &RunArgs, stop: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let plan = iosim::profile::plan(iosim::profile::Profile::load(name)?, r)?;
    if !r.out.quiet {
        for n in &plan.notes {
            eprintln!("iosim: note: {n}");
        }
    }
    let res = iosim::profile::run(&plan, &options(&r.out, stop, r.interval))?;
    match r.out.output {
        OutputFormat::Text => print!("{}", iosim::profile::text(&res)),
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&res)?),
        OutputFormat::Csv => print!("{}", iosim::profile::csv(&res)),
    }
    let doc = serde_json::to_value(&res)?;
    let regressed = iosim::store::cmd::after_run(&r.save, &r.guard, "profile", &doc)?;
    if regressed && !res.interrupted && res.errors == 0 {
        return Ok(ExitCode::from(iosim::store::cmd::EXIT_REGRESSED));
    }
    Ok(exit_code(res.interrupted, res.errors))
}
