//! The MPI side (feature `mpi`): joining the job, agreeing on the build and
//! options, and the [`Job`], the runner's [`RunSync`] hook: preparing
//! targets in parallel, the synchronised window, gathering the results on
//! rank 0; and ending the whole job (`MPI_Abort`) when one rank fails.
//!
//! MPI is called from one thread at a time (`MPI_THREAD_SERIALIZED`), never
//! on the I/O path: only through the hook (before a run, at its phase
//! barriers, in the poll for a peer ending the window, after it) and by the
//! commands between runs.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::Context;
use mpi::datatype::PartitionMut;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};

use super::agree::{check_fingerprints, Agreed, Fingerprint};
use super::collective::JobOptions;
use super::merge::{self, RankReport};
use super::paths::share_region;
use super::rank::{RankInfo, WHO};
use crate::runner::{Joint, RunPhase, RunResult, RunSync};
use crate::target::{self, PrepareOptions};
use crate::workload::WorkloadSpec;

/// Exit code of a job ended by a failing rank (MPI_Abort).
pub const EXIT_ABORT: i32 = 70;

/// When MPI start-up began (for the start-up overhead).
static INIT_AT: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// When MPI start-up and the ranks' agreement were done.
static INIT_DONE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Message tag of the end-of-window notices ([`Job`]).
const TAG_WINDOW_END: i32 = 0x10_5e;

/// The MPI environment; dropping it waits for every rank (so rank 0 has
/// printed before any rank exits: a rank's non-zero exit makes mpirun kill
/// the others) and finalises MPI.
pub struct World {
    _universe: mpi::environment::Universe,
}

impl Drop for World {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            world().barrier();
        }
    }
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

impl World {
    /// Initialises MPI, learns rank, size, host and rank on host, installs the
    /// panic hook, and refuses the job when the ranks' builds or options differ.
    pub fn init(options: &str) -> anyhow::Result<World> {
        let _ = INIT_AT.set(std::time::Instant::now());
        let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)
            .ok_or_else(|| {
                anyhow::anyhow!("MPI was already initialised; this is a bug in iosim")
            })?;
        if level < mpi::Threading::Serialized {
            anyhow::bail!(
                "this MPI library does not allow calls from more than one thread (MPI_THREAD_SERIALIZED), which iosim needs: use Open MPI or MPICH built with thread support"
            );
        }
        let w = universe.world();
        let rank = w.rank() as usize;
        let local = w.split_shared(w.rank());
        let who = RankInfo {
            rank,
            size: w.size() as usize,
            host: super::rank::hostname(),
            local_rank: local.rank() as usize,
            local_size: local.size() as usize,
        };
        let _ = WHO.set(who.clone());
        install_panic_hook();
        let mine = serde_json::to_vec(&(who, Fingerprint::new(options)))?;
        let all: Vec<(RankInfo, Fingerprint)> = all_gather_bytes(&w, &mine)
            .iter()
            .map(|b| serde_json::from_slice(b))
            .collect::<Result<_, _>>()
            .map_err(|e| {
                Agreed(format!(
                    "a rank sent an unreadable start-up message ({e}): is every host running the same iosim build?"
                ))
            })?;
        check_fingerprints(&all).map_err(Agreed)?;
        let _ = INIT_DONE.set(std::time::Instant::now());
        Ok(World {
            _universe: universe,
        })
    }
}

/// A panic on any rank ends the whole job at once (otherwise the other ranks
/// wait in a barrier forever and unwinding would call MPI_Finalize).
fn install_panic_hook() {
    std::panic::set_hook(Box::new(move |info| {
        // No backtrace: symbolising one can take seconds, and the job must end now.
        crate::say!(
            "iosim: {} panicked, ending the whole job (this is a bug in iosim): {info}",
            super::rank::where_am_i()
        );
        world().abort(EXIT_ABORT);
    }));
}

/// Ends the job after an error on this rank: prints it with the rank and host
/// and calls MPI_Abort, so no other rank hangs in a barrier. An [`Agreed`]
/// error is printed by rank 0 only, and the caller exits normally.
pub fn fail(e: &anyhow::Error) {
    if e.downcast_ref::<Agreed>().is_some() {
        if super::rank::is_root() {
            crate::say!("iosim: error: {e:#}");
        }
        return;
    }
    crate::say!(
        "iosim: error on {}: {e:#}\niosim: ending the whole job",
        super::rank::where_am_i()
    );
    world().abort(EXIT_ABORT);
}

/// Every rank's `mine`, in rank order, on every rank.
fn all_gather_bytes(c: &SimpleCommunicator, mine: &[u8]) -> Vec<Vec<u8>> {
    let n = c.size() as usize;
    let mut lens = vec![0i32; n];
    c.all_gather_into(&(mine.len() as i32), &mut lens[..]);
    let displs = displacements(&lens);
    let mut buf = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
    {
        let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
        c.all_gather_varcount_into(mine, &mut part);
    }
    split(&buf, &lens)
}

/// Every rank's `mine` on rank 0 (None elsewhere).
fn gather_bytes(c: &SimpleCommunicator, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
    let root = c.process_at_rank(0);
    let len = mine.len() as i32;
    if c.rank() != 0 {
        root.gather_into(&len);
        root.gather_varcount_into(mine);
        return None;
    }
    let mut lens = vec![0i32; c.size() as usize];
    root.gather_into_root(&len, &mut lens[..]);
    let displs = displacements(&lens);
    let mut buf = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
    {
        let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
        root.gather_varcount_into_root(mine, &mut part);
    }
    Some(split(&buf, &lens))
}

fn displacements(lens: &[i32]) -> Vec<i32> {
    lens.iter()
        .scan(0i32, |acc, &l| {
            let d = *acc;
            *acc += l;
            Some(d)
        })
        .collect()
}

fn split(buf: &[u8], lens: &[i32]) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(lens.len());
    let mut at = 0usize;
    for &l in lens {
        out.push(buf[at..at + l as usize].to_vec());
        at += l as usize;
    }
    out
}

fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The job, as the runner's [`RunSync`] hook (one for the process, from
/// [`super::init`], in every run's options): before a run it prepares the
/// targets together and gives each rank its own random stream and slice of a
/// shared target ([`RunSync::begin`]; the paths are the rank's already,
/// resolved by the command); then the synchronised window, IOR style: an MPI
/// barrier before warm-up ([`RunPhase::Prepared`]) and before the measured
/// window ([`RunPhase::WindowStart`]); at the window's end
/// ([`RunPhase::WindowEnd`]) every rank tells every other one whether it ends
/// the window for all (`--stonewall`, or it was interrupted), then all meet
/// in a barrier. While the window is open the runner polls
/// [`RunSync::stop_requested`], which looks (without blocking) for such a
/// notice from a peer, or for this rank's own Ctrl-C. After the run
/// ([`RunSync::end`]) rank 0 gathers and merges every rank's results and
/// sends the merged results to every rank.
///
/// A rank runs all its workloads of a run (one, or a profile phase's) as one
/// run of the runner, whose main thread makes every call of this hook: MPI
/// is thus called by one thread at a time (`MPI_THREAD_SERIALIZED`), only at
/// phase boundaries and in the poll.
pub struct Job {
    options: JobOptions,
    peer_ended: AtomicBool,
    notices: AtomicUsize,
    start_unix_ns: AtomicU64,
    stop_unix_ns: AtomicU64,
    /// What the run under way knows; reset by each [`RunSync::begin`].
    run: Mutex<RunState>,
}

/// A [`Job`]'s state for the run under way.
#[derive(Default)]
struct RunState {
    /// The user's stop flag (Ctrl-C, SIGTERM): ends the window for everyone.
    user_stop: Arc<AtomicBool>,
    /// The block devices of every rank's targets on this host.
    host_devices: Vec<String>,
    started: Option<Instant>,
    ended: Option<Instant>,
}

impl Job {
    /// The job's hook with the command's collective options.
    pub fn new(options: JobOptions) -> Job {
        Job {
            options,
            peer_ended: AtomicBool::new(false),
            notices: AtomicUsize::new(0),
            start_unix_ns: AtomicU64::new(0),
            stop_unix_ns: AtomicU64::new(0),
            run: Mutex::new(RunState::default()),
        }
    }

    fn state(&self) -> MutexGuard<'_, RunState> {
        // A panic ends the whole job (the panic hook): no poisoned state is read.
        self.run.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every rank waits here for all the others (e.g. so that every rank
    /// starts a simulation together).
    pub fn barrier(&self) {
        world().barrier();
    }

    /// For a command that runs on its own on each rank and only reports
    /// together (`sim`): every rank's summary line and the job's sums, on
    /// every rank (so every rank exits with the job's code).
    pub fn solo_summary(&self, row: &merge::SoloRow) -> anyhow::Result<merge::SoloReport> {
        let rows = all_gather_bytes(&world(), &serde_json::to_vec(row)?)
            .iter()
            .map(|b| {
                serde_json::from_slice(b).context("a rank sent a summary this rank cannot read")
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(merge::SoloReport::new(rows))
    }

    /// What every rank does together at `phase` (called by one local thread).
    fn collective(&self, phase: RunPhase) {
        let c = world();
        match phase {
            RunPhase::Prepared => c.barrier(),
            // Nothing runs between Prepared and WarmupStart: one barrier is enough.
            RunPhase::WarmupStart => {}
            RunPhase::WindowStart => {
                c.barrier();
                self.start_unix_ns.store(unix_ns(), Ordering::Relaxed);
                self.state().started = Some(Instant::now());
            }
            RunPhase::WindowEnd => self.window_end(&c),
        }
    }

    /// This rank's window has ended: tell the others, meet them, and collect
    /// every notice they sent so none is left for the next run.
    fn window_end(&self, c: &SimpleCommunicator) {
        self.stop_unix_ns.store(unix_ns(), Ordering::Relaxed);
        let user_stop = {
            let mut st = self.state();
            st.ended = Some(Instant::now());
            st.user_stop.load(Ordering::Relaxed)
        };
        let ends_all = i32::from(self.options.stonewall || user_stop);
        for r in (0..c.size()).filter(|&r| r != c.rank()) {
            c.process_at_rank(r)
                .send_with_tag(&ends_all, TAG_WINDOW_END);
        }
        c.barrier();
        let want = c.size() as usize - 1;
        while self.notices.load(Ordering::Relaxed) < want {
            let (v, _) = c.any_process().receive_with_tag::<i32>(TAG_WINDOW_END);
            self.note(v);
        }
    }

    fn note(&self, v: i32) {
        self.notices.fetch_add(1, Ordering::Relaxed);
        if v != 0 {
            self.peer_ended.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the window ended early because of another rank (not this one's Ctrl-C).
    fn ended_by_peer(&self) -> bool {
        self.peer_ended.load(Ordering::Relaxed)
    }
}

impl RunSync for Job {
    /// Prepares the targets together
    /// ([`prepare_targets`]), gives each rank its own random stream and data
    /// (identical data on every rank would flatter deduplicating storage),
    /// and gives the run a stop flag of its own: the user's Ctrl-C reaches
    /// it through [`RunSync::stop_requested`] once the window is open, so
    /// every rank passes the same barriers whenever the signal lands.
    fn begin(
        &self,
        specs: &mut [WorkloadSpec],
        progress: bool,
        stop: &Arc<AtomicBool>,
    ) -> anyhow::Result<Option<Arc<AtomicBool>>> {
        let who = super::rank::who();
        self.peer_ended.store(false, Ordering::Relaxed);
        self.notices.store(0, Ordering::Relaxed);
        self.start_unix_ns.store(0, Ordering::Relaxed);
        self.stop_unix_ns.store(0, Ordering::Relaxed);
        let mut devices: Vec<String> = Vec::new();
        for spec in specs.iter_mut() {
            spec.seed = spec
                .seed
                .wrapping_add((who.rank as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
            for d in prepare_targets(spec, progress, stop, &self.options)? {
                if !devices.contains(&d) {
                    devices.push(d);
                }
            }
        }
        if std::env::var("IOSIM_TEST_PANIC_RANK").ok() == Some(who.rank.to_string()) {
            // Fault injection for tests/mpi.rs: the other ranks are in a barrier now.
            panic!(
                "IOSIM_TEST_PANIC_RANK={} asked this rank to panic",
                who.rank
            );
        }
        // The local run's own stop flag, raised when a worker cannot go on.
        let local_stop = Arc::new(AtomicBool::new(false));
        *self.state() = RunState {
            user_stop: stop.clone(),
            host_devices: devices,
            started: None,
            ended: None,
        };
        Ok(Some(local_stop))
    }

    fn barrier(&self, phase: RunPhase) -> anyhow::Result<()> {
        self.collective(phase);
        Ok(())
    }

    /// One monitor per host: the lowest rank on it (`%l` = 0) watches the
    /// CPUs and the devices of every rank on the host.
    fn monitor_devices(&self, mut own: Vec<String>) -> Option<Vec<String>> {
        if super::rank::who().local_rank != 0 {
            return None;
        }
        for d in &self.state().host_devices {
            if !own.contains(d) {
                own.push(d.clone());
            }
        }
        Some(own)
    }

    fn stop_requested(&self) -> bool {
        if self.state().user_stop.load(Ordering::Relaxed) {
            return true;
        }
        let c = world();
        while c
            .any_process()
            .immediate_probe_with_tag(TAG_WINDOW_END)
            .is_some()
        {
            let (v, _) = c.any_process().receive_with_tag::<i32>(TAG_WINDOW_END);
            self.note(v);
        }
        self.peer_ended.load(Ordering::Relaxed)
    }

    /// Marks each local result (interrupted by the user, or ended by a
    /// peer), gathers and merges each workload's results on rank 0, which
    /// sends the merged results to every rank; when any is interrupted,
    /// every rank stops what follows (the next sweep point...), not only
    /// the interrupted one.
    fn end(&self, results: Vec<RunResult>, stop: &Arc<AtomicBool>) -> anyhow::Result<Vec<Joint>> {
        let who = super::rank::who();
        let c = world();
        let mut merged = Vec::with_capacity(results.len());
        for mut res in results {
            res.interrupted = stop.load(Ordering::Relaxed);
            if self.ended_by_peer() && !res.interrupted {
                res.notes.push(
                    "window ended early by another rank (--stonewall or an interrupted rank)"
                        .into(),
                );
            }
            merged.push(self.gather(res, &who, &c)?);
        }
        if merged.iter().any(|m| m.result.interrupted) {
            stop.store(true, Ordering::Relaxed);
        }
        Ok(merged)
    }
}

/// Which ranks name `path` among every rank's `(host, paths)`.
fn sharers(all: &[(String, Vec<String>)], path: &str) -> Vec<usize> {
    all.iter()
        .enumerate()
        .filter(|(_, (_, p))| p.iter().any(|x| x == path))
        .map(|(r, _)| r)
        .collect()
}

/// Checks who shares which target (the paths are this rank's already: the
/// command resolved them, `commands::Ctx::for_rank`), creates every
/// missing test file once (by its owner, the lowest rank naming it; all
/// owners in parallel) and, with `--share-target`, gives each rank its slice.
///
/// A block device written by several ranks of one host is claimed
/// (`O_EXCL`, which refuses a mounted device) by the lowest of them, which
/// holds the claim for its whole run; the others write it without a claim of
/// their own (a second exclusive open would fail with EBUSY). A file several
/// ranks use is locked against other processes (`crate::targetlock`) by its
/// owner alone, for the job.
///
/// Returns the block devices of every rank's targets on this host (for the
/// host's one monitor).
fn prepare_targets(
    spec: &mut WorkloadSpec,
    progress: bool,
    stop: &Arc<AtomicBool>,
    args: &JobOptions,
) -> anyhow::Result<Vec<String>> {
    let who = super::rank::who();
    let c = world();
    let mine: Vec<String> = spec
        .targets
        .iter()
        .map(|t| t.path.display().to_string())
        .collect();
    let all: Vec<(String, Vec<String>)> =
        all_gather_bytes(&c, &serde_json::to_vec(&(&who.host, &mine))?)
            .iter()
            .map(|b| serde_json::from_slice(b))
            .collect::<Result<_, _>>()?;
    let mut sharing = Vec::new();
    for (i, p) in mine.iter().enumerate() {
        let s = sharers(&all, p);
        if s.len() > 1 && !args.share_target && spec.writes() && !spec.allow_destroy {
            return Err(Agreed(format!(
                "ranks {s:?} would all write the whole of '{p}': give each rank its own file \
                 (e.g. /path/t-%r.dat), or --share-target to split it into disjoint per-rank regions, \
                 or --allow-destroy to let the writes overlap"
            ))
            .into());
        }
        sharing.push((i, s));
    }
    // Creation (and a device's claim check) by the owners, in parallel,
    // before anyone opens a shared target.
    for (i, s) in &sharing {
        if s.first() == Some(&who.rank) {
            target::prepare(
                spec,
                *i,
                PrepareOptions {
                    progress,
                    stop: Some(stop),
                },
            )
            .with_context(|| format!("target '{}'", mine[*i]))?;
        }
    }
    c.barrier();
    for (i, s) in sharing.iter().filter(|(_, s)| s.len() > 1) {
        let path = &spec.targets[*i].path;
        // A device is claimed on each host; a file is locked once, by its
        // owner (the lock may reach across hosts, as NFS's does).
        let claimer = if crate::platform::fs::path_is_device(path) {
            s.iter().find(|&&r| all[r].0 == who.host)
        } else {
            s.first()
        };
        if claimer != Some(&who.rank) {
            target::set_claimed_by_job(path);
        }
    }
    if args.share_target {
        for (i, s) in sharing.iter().filter(|(_, s)| s.len() > 1) {
            let t = target::prepare(
                spec,
                *i,
                PrepareOptions {
                    progress: false,
                    stop: Some(stop),
                },
            )
            .with_context(|| format!("target '{}'", mine[*i]))?;
            let k = s.iter().position(|&r| r == who.rank).unwrap_or(0);
            let unit = spec.bs.max(spec.effective_align());
            let (off, len) = share_region(t.region_start, t.region_len, unit, k, s.len());
            if len < spec.bs {
                return Err(Agreed(format!(
                    "--share-target: '{}' has {} bytes to split between {} ranks, less than one --bs {} each: use a bigger file or region",
                    mine[*i], t.region_len, s.len(), spec.bs
                ))
                .into());
            }
            spec.targets[*i].offset = off;
            spec.targets[*i].length = Some(len);
        }
    }
    host_devices(spec, &who, &c)
}

/// The block devices under the targets of every rank on this host.
fn host_devices(
    spec: &WorkloadSpec,
    who: &RankInfo,
    c: &SimpleCommunicator,
) -> anyhow::Result<Vec<String>> {
    let mut mine: Vec<String> = Vec::new();
    if spec.engine != crate::workload::EngineKind::Null {
        for t in &spec.targets {
            let r = crate::sysmon::mounts::resolve_target(&t.path);
            for n in r.device().map(|d| d.monitor_names()).unwrap_or_default() {
                if !mine.contains(&n) {
                    mine.push(n);
                }
            }
        }
    }
    let all: Vec<(String, Vec<String>)> =
        all_gather_bytes(c, &serde_json::to_vec(&(&who.host, &mine))?)
            .iter()
            .map(|b| serde_json::from_slice(b))
            .collect::<Result<_, _>>()?;
    let mut out: Vec<String> = Vec::new();
    for (_, names) in all.iter().filter(|(h, _)| *h == who.host) {
        for n in names {
            if !out.contains(n) {
                out.push(n.clone());
            }
        }
    }
    Ok(out)
}

impl Job {
    /// Gathers every rank's result on rank 0 and merges them; every rank
    /// gets the merged result, so all take the same decisions (sweeps, exit
    /// codes) and make the same collective calls.
    fn gather(
        &self,
        res: RunResult,
        who: &RankInfo,
        c: &SimpleCommunicator,
    ) -> anyhow::Result<Joint> {
        let mut wire = res.clone();
        wire.histograms = merge::compress_histograms(&res.histograms);
        let report = RankReport {
            who: who.clone(),
            start_unix_ns: self.start_unix_ns.load(Ordering::Relaxed),
            stop_unix_ns: self.stop_unix_ns.load(Ordering::Relaxed),
            result: wire,
        };
        let gathered = gather_bytes(c, &serde_json::to_vec(&report)?);
        let Some(all) = gathered else {
            let bytes = broadcast_bytes(c, None);
            let (result, ranks) = serde_json::from_slice(&bytes)
                .context("rank 0 sent a merged result this rank cannot read")?;
            return Ok(Joint { result, ranks });
        };
        let reports: Vec<RankReport> = all
            .iter()
            .map(|b| serde_json::from_slice(b))
            .collect::<Result<_, _>>()
            .context("a rank sent a result rank 0 cannot read")?;
        let (result, mut ranks) = merge::merge(reports, self.options.stonewall)?;
        let since = |a: Option<&Instant>, b: Option<&Instant>| match (a, b) {
            (Some(a), Some(b)) => b.saturating_duration_since(*a).as_secs_f64(),
            _ => 0.0,
        };
        let (started, ended) = {
            let st = self.state();
            (st.started, st.ended)
        };
        ranks.overhead = merge::Overhead {
            startup_s: since(INIT_AT.get(), started.as_ref()),
            init_s: since(INIT_AT.get(), INIT_DONE.get()),
            gather_s: since(ended.as_ref(), Some(&Instant::now())),
        };
        let merged = (result, Some(ranks));
        broadcast_bytes(c, Some(serde_json::to_vec(&merged)?));
        Ok(Joint {
            result: merged.0,
            ranks: merged.1,
        })
    }
}

/// Rank 0's `data` on every rank.
fn broadcast_bytes(c: &SimpleCommunicator, data: Option<Vec<u8>>) -> Vec<u8> {
    let root = c.process_at_rank(0);
    let mut len = data.as_ref().map_or(0, |d| d.len() as u64);
    root.broadcast_into(&mut len);
    let mut buf = data.unwrap_or_else(|| vec![0u8; len as usize]);
    root.broadcast_into(&mut buf[..]);
    buf
}
