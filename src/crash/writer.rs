//! `iosim crash write`: a write workload shaped like a database, where every
//! write is reported (acknowledged) only once its durability point completed.
//!
//! Each target's region is split into a data area (8 KiB pages written in
//! place at random) and a log area at its end (8 KiB log blocks appended
//! sequentially, wrapping around). Three kinds of writes are mixed:
//!
//! - `dsync`: a page written through a descriptor opened O_DSYNC (and O_DIRECT
//!   where the target allows it, as SQL Server opens its files): acknowledged
//!   when the write returns;
//! - `fdatasync` / `fsync`: pages written to the page cache, then the file is
//!   synced every `--sync-batch` such writes: all of them are acknowledged
//!   when the sync returns;
//! - `log`: the next log block, written O_DSYNC: acknowledged when it returns.
//!
//! Pages are in iosim's verifiable page format ([`crate::verify`]). A log
//! block is a page too: page number = its slot in the target, generation =
//! the lap over the log area, so log sequence number
//! `(generation - 1) * log_pages + slot` follows from what is on disk.

use std::fs::File;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::acklog::{AckHeader, AckRecord, AckTarget, AckWriter, Mechanism, StopReason, WriteKind};
use crate::buf::AlignedBuf;
use crate::outfile::{self, Existing};
use crate::target::{self, PrepareOptions};
use crate::verify::{self, PageId, PAGE_SIZE};
use crate::workload::{CacheMode, RwMode, TargetSpec, WorkloadSpec};

/// Weights of the four kinds of writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix {
    /// O_DSYNC page writes.
    pub dsync: u32,
    /// Buffered page writes made durable by fdatasync.
    pub fdatasync: u32,
    /// Buffered page writes made durable by fsync.
    pub fsync: u32,
    /// O_DSYNC sequential log appends.
    pub log: u32,
}

impl Mix {
    /// The default: 40% write-through pages, 20% fdatasync, 10% fsync, 30% log.
    pub const DEFAULT: &'static str = "dsync=40,fdatasync=20,fsync=10,log=30";

    fn total(&self) -> u32 {
        self.dsync + self.fdatasync + self.fsync + self.log
    }
}

impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "dsync={},fdatasync={},fsync={},log={}",
            self.dsync, self.fdatasync, self.fsync, self.log
        )
    }
}

/// Parses `dsync=40,fdatasync=20,fsync=10,log=30` (missing kinds weigh 0).
pub fn parse_mix(s: &str) -> Result<Mix, String> {
    let mut m = Mix {
        dsync: 0,
        fdatasync: 0,
        fsync: 0,
        log: 0,
    };
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || {
            format!(
                "invalid --mix '{s}': use KIND=WEIGHT pairs with kinds dsync, fdatasync, fsync, log, e.g. {}",
                Mix::DEFAULT
            )
        };
        let (k, v) = part.split_once('=').ok_or_else(bad)?;
        let v: u32 = v.trim().parse().map_err(|_| bad())?;
        match k.trim() {
            "dsync" => m.dsync = v,
            "fdatasync" => m.fdatasync = v,
            "fsync" => m.fsync = v,
            "log" => m.log = v,
            _ => return Err(bad()),
        }
    }
    if m.total() == 0 {
        return Err(format!(
            "invalid --mix '{s}': every weight is zero, so nothing would be written"
        ));
    }
    Ok(m)
}

/// Why an existing acknowledgement log is not overwritten, and what to do.
const ACK_LOG_KEPT: &str = "may be the only record of the last power-cut test: verify it first \
     (iosim crash verify --acks FILE), then give --force to overwrite it, or give --acks another name";

/// What `iosim crash write` was asked to do.
#[derive(Clone, Debug)]
pub struct WriteConfig {
    /// Files or block devices.
    pub targets: Vec<PathBuf>,
    /// Size of files to create.
    pub size: u64,
    /// Bytes of each target's region used as the log area.
    pub log_size: Option<u64>,
    /// The mix of writes.
    pub mix: Mix,
    /// The workload profile the mix was taken from, if any.
    pub profile: Option<String>,
    /// Buffered writes between two syncs.
    pub sync_batch: u32,
    /// Use O_DIRECT for write-through writes where possible.
    pub direct: bool,
    /// Stop after this long (None: until stopped or killed).
    pub duration: Option<Duration>,
    /// Claim torn-write protection (a torn page is then a failure).
    pub torn_protection: bool,
    /// Allow writing to devices and files iosim did not create.
    pub allow_destroy: bool,
    /// Seed of the page images and the offsets.
    pub seed: Option<u64>,
    /// Where the acknowledgements go (None: standard output).
    pub acks: Option<PathBuf>,
    /// Overwrite an existing acknowledgement log (`--force`).
    pub force: bool,
    /// No notes on stderr.
    pub quiet: bool,
}

/// Acknowledged writes by mechanism: dsync pages, fdatasync, fsync, log.
pub type Acked = [u64; 4];

/// What the writer did.
#[derive(Clone, Debug)]
pub struct WriteSummary {
    /// Acknowledged writes by mechanism: dsync pages, fdatasync, fsync, log.
    pub acked: Acked,
    /// Seconds run.
    pub secs: f64,
    /// Why it stopped.
    pub reason: StopReason,
}

struct Tgt {
    dsync: File,
    buffered: File,
    region_start: u64,
    data_pages: u64,
    log_pages: u64,
    file_id: u32,
    gens: Vec<u64>,
    log_next: u64,
    /// Buffered writes not yet synced: (page, generation, checksum).
    pending: Vec<(u64, u64, u32)>,
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Runs the writer until `stop`, the duration, an I/O error, or a kill.
pub fn run(cfg: &WriteConfig, stop: &AtomicBool) -> anyhow::Result<WriteSummary> {
    if cfg.acks.is_none() && std::io::stdout().is_terminal() {
        anyhow::bail!(
            "iosim crash write streams its acknowledgements to standard output, which is a terminal here: \
             pipe it to a machine that will not crash (| ssh other-host 'cat > acks.log') or give --acks PATH on another mount"
        );
    }
    if cfg.sync_batch == 0 {
        anyhow::bail!("--sync-batch must be at least 1");
    }
    let seed = cfg
        .seed
        .unwrap_or_else(|| now_us() ^ u64::from(std::process::id()) << 40);
    let (mut acks, mut tgts, claims) = start(cfg, seed)?;
    let t0 = Instant::now();
    let mut acked = Acked::default();
    let result = write_until_stopped(cfg, stop, seed, t0, &mut tgts, &mut acks, &mut acked);
    // A normal stop makes the batches in flight durable and says so.
    let reason = match result {
        Ok(r) => {
            for (ti, t) in tgts.iter_mut().enumerate() {
                sync_batch(t, ti as u32, Mechanism::Fdatasync, &mut acks, &mut acked)?;
            }
            r
        }
        Err(e) => {
            let _ = acks.end(StopReason::Error(format!("{e:#}")));
            return Err(e);
        }
    };
    acks.end(reason.clone())?;
    drop(claims);
    Ok(WriteSummary {
        acked,
        secs: t0.elapsed().as_secs_f64(),
        reason,
    })
}

/// Creates the acknowledgement log, opens the targets and writes the log's
/// header: the log, the targets and their claims.
fn start(cfg: &WriteConfig, seed: u64) -> anyhow::Result<(AckWriter, Vec<Tgt>, Vec<Option<File>>)> {
    // The log first: an existing one (perhaps the only record of the last
    // power cut) is refused before any target is touched.
    let log_file = match &cfg.acks {
        Some(p) => Some(outfile::create(
            p,
            "acknowledgement log",
            if cfg.force {
                Existing::Overwrite
            } else {
                Existing::Refuse(ACK_LOG_KEPT)
            },
        )?),
        None => None,
    };
    let opened = open_targets(cfg);
    let (tgts, claims, header_targets) = match opened {
        Ok(t) => t,
        Err(e) => {
            // Nothing was written: the empty log this run created goes.
            if let (Some(p), false) = (&cfg.acks, cfg.force) {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
    };
    let log_name = cfg
        .acks
        .as_ref()
        .map_or("standard output".to_string(), |p| {
            format!("'{}'", p.display())
        });
    let log_error = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!(
            "cannot write the acknowledgement log to {log_name}"
        ))
    };
    let mut acks = match log_file {
        Some(f) => AckWriter::to_file(f).map_err(log_error)?,
        None => AckWriter::new(None, Box::new(std::io::stdout())),
    };
    let started_us = now_us();
    acks.header(&AckHeader {
        run_seed: seed,
        page_size: PAGE_SIZE as u32,
        started_us,
        torn_protection: cfg.torn_protection,
        mix: cfg.mix.to_string(),
        profile: cfg.profile.clone(),
        host: crate::sysmon::host::host_info().host,
        iosim_version: env!("CARGO_PKG_VERSION").to_string(),
        targets: header_targets,
    })
    .map_err(log_error)?;
    if !cfg.quiet {
        crate::say!(
            "iosim crash write: writing {} target(s), mix {}; acknowledgements to {log_name}. Stop with Ctrl-C, or cut the power.",
            tgts.len(),
            cfg.mix,
        );
    }
    Ok((acks, tgts, claims))
}

/// Writes to the targets in turn, each write of a kind drawn from the mix,
/// until `stop` or the duration (from `t0`): why it stopped, or the error.
fn write_until_stopped(
    cfg: &WriteConfig,
    stop: &AtomicBool,
    seed: u64,
    t0: Instant,
    tgts: &mut [Tgt],
    acks: &mut AckWriter,
    acked: &mut Acked,
) -> anyhow::Result<StopReason> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut buf = AlignedBuf::new(PAGE_SIZE);
    let total = cfg.mix.total();
    let mut next = 0usize;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(StopReason::Interrupted);
        }
        if cfg.duration.is_some_and(|d| t0.elapsed() >= d) {
            return Ok(StopReason::Duration);
        }
        let t = &mut tgts[next];
        let ti = next as u32;
        next = (next + 1) % cfg.targets.len();
        let mut pick = rng.gen_range(0..total);
        let kind = [cfg.mix.dsync, cfg.mix.fdatasync, cfg.mix.fsync, cfg.mix.log]
            .iter()
            .position(|&w| {
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .unwrap_or(3);
        step(t, ti, kind, seed, cfg, &mut rng, &mut buf, acks, acked)?;
    }
}

/// The targets, created or opened as `iosim run` would, with their layout
/// and their claims (a block device held `O_EXCL`, kept for the run).
type Opened = (Vec<Tgt>, Vec<Option<File>>, Vec<AckTarget>);

fn open_targets(cfg: &WriteConfig) -> anyhow::Result<Opened> {
    let mut tgts = Vec::new();
    let mut claims = Vec::new();
    let mut header_targets = Vec::new();
    for (i, path) in cfg.targets.iter().enumerate() {
        let spec = WorkloadSpec {
            targets: vec![TargetSpec::new(path.clone(), Some(cfg.size))],
            rw: RwMode::Randwrite,
            write_pct: 100,
            bs: PAGE_SIZE as u64,
            cache: if cfg.direct {
                CacheMode::DirectWritethrough
            } else {
                CacheMode::Writethrough
            },
            allow_destroy: cfg.allow_destroy,
            ..WorkloadSpec::default()
        };
        let mut p = target::prepare(&spec, 0, PrepareOptions::default())?;
        for n in &p.notes {
            if !cfg.quiet {
                crate::say!("iosim crash write: {}: {n}", path.display());
            }
        }
        let pages = p.region_len / PAGE_SIZE as u64;
        let log_pages = match cfg.log_size {
            Some(b) => b / PAGE_SIZE as u64,
            None => (pages / 8).max(16),
        };
        if cfg.mix.log > 0 && log_pages == 0 || log_pages + 16 > pages {
            anyhow::bail!(
                "'{}' has room for {pages} pages of 8 KiB: too few for a log area of {log_pages} pages and a data area of at least 16: use a larger --size or a smaller --log-size",
                path.display()
            );
        }
        let data_pages = pages - log_pages;
        let mut cache = spec.cache;
        if cfg.direct && !target::direct_io_supported(path) {
            cache = CacheMode::Writethrough;
            if !cfg.quiet {
                crate::say!(
                    "iosim crash write: {}: O_DIRECT is not supported here; write-through writes use O_DSYNC through the page cache",
                    path.display()
                );
            }
        }
        let dsync = target::open_for_io(&p, cache, true)?;
        let buffered = target::open_for_io(&p, CacheMode::Buffered, true)?;
        let file_id = i as u32 + 1;
        header_targets.push(AckTarget {
            path: path.display().to_string(),
            file_id,
            region_start: p.region_start,
            data_pages,
            log_pages,
        });
        tgts.push(Tgt {
            dsync,
            buffered,
            region_start: p.region_start,
            data_pages,
            log_pages,
            file_id,
            gens: vec![0; data_pages as usize],
            log_next: 0,
            pending: Vec::with_capacity(cfg.sync_batch as usize),
        });
        // The target's claim (a block device held O_EXCL) lives as long as the run.
        claims.push(p.claim.take());
    }
    Ok((tgts, claims, header_targets))
}

/// One write (and, for a buffered write that fills a batch, its sync).
#[allow(clippy::too_many_arguments)]
fn step(
    t: &mut Tgt,
    ti: u32,
    kind: usize,
    seed: u64,
    cfg: &WriteConfig,
    rng: &mut SmallRng,
    buf: &mut AlignedBuf,
    acks: &mut AckWriter,
    acked: &mut Acked,
) -> anyhow::Result<()> {
    let ts_ms = now_us() / 1000;
    let (page, generation) = if kind == 3 {
        let k = t.log_next;
        t.log_next += 1;
        (t.data_pages + k % t.log_pages, k / t.log_pages + 1)
    } else {
        let p = rng.gen_range(0..t.data_pages);
        t.gens[p as usize] += 1;
        (p, t.gens[p as usize])
    };
    let id = PageId {
        file_id: t.file_id,
        page,
        generation,
    };
    let b = buf.as_mut_slice();
    verify::build_page(b, seed, id, ts_ms);
    let checksum = verify::read_header(b).crc;
    let offset = t.region_start + page * PAGE_SIZE as u64;
    let fd = if kind == 0 || kind == 3 {
        &t.dsync
    } else {
        &t.buffered
    };
    crate::platform::fs::write_all_at(fd, &b[..PAGE_SIZE], offset).map_err(|e| {
        anyhow::anyhow!("write of {PAGE_SIZE} bytes at offset {offset} failed: {e}")
    })?;
    match kind {
        0 | 3 => {
            acks.push(AckRecord {
                seq: 0,
                target: ti,
                kind: if kind == 3 {
                    WriteKind::Log
                } else {
                    WriteKind::Page
                },
                offset,
                len: PAGE_SIZE as u32,
                generation,
                checksum,
                mech: Mechanism::Dsync,
                ts_us: now_us(),
            });
            acks.commit()?;
            acked[kind.min(3)] += 1;
        }
        _ => {
            t.pending.push((page, generation, checksum));
            if t.pending.len() >= cfg.sync_batch as usize {
                let mech = if kind == 1 {
                    Mechanism::Fdatasync
                } else {
                    Mechanism::Fsync
                };
                sync_batch(t, ti, mech, acks, acked)?;
            }
        }
    }
    Ok(())
}

/// Syncs the buffered descriptor and acknowledges the pending writes.
fn sync_batch(
    t: &mut Tgt,
    ti: u32,
    mech: Mechanism,
    acks: &mut AckWriter,
    acked: &mut Acked,
) -> anyhow::Result<()> {
    if t.pending.is_empty() {
        return Ok(());
    }
    let r = match mech {
        Mechanism::Fsync => t.buffered.sync_all(),
        _ => t.buffered.sync_data(),
    };
    r.map_err(|e| anyhow::anyhow!("{} failed: {e}", mech.name()))?;
    let ts_us = now_us();
    for &(page, generation, checksum) in &t.pending {
        acks.push(AckRecord {
            seq: 0,
            target: ti,
            kind: WriteKind::Page,
            offset: t.region_start + page * PAGE_SIZE as u64,
            len: PAGE_SIZE as u32,
            generation,
            checksum,
            mech,
            ts_us,
        });
    }
    acked[if mech == Mechanism::Fsync { 2 } else { 1 }] += t.pending.len() as u64;
    t.pending.clear();
    acks.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_parses_and_refuses() {
        let m = parse_mix(Mix::DEFAULT).unwrap();
        assert_eq!(
            m,
            Mix {
                dsync: 40,
                fdatasync: 20,
                fsync: 10,
                log: 30
            }
        );
        assert_eq!(m.to_string(), Mix::DEFAULT);
        assert_eq!(parse_mix("log=1").unwrap().dsync, 0);
        assert!(parse_mix("log=0").unwrap_err().contains("zero"));
        assert!(parse_mix("fua=3").unwrap_err().contains("dsync"));
        assert!(parse_mix("log").is_err());
    }
}
