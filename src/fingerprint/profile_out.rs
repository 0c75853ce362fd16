//! `iosim fingerprint --out FILE`: an ordinary iosim profile (the TOML of
//! `profiles/*.toml`, read by [`crate::profile::Profile`]) that reproduces a
//! fingerprint as closely as the workload fields allow, one `[[workload]]`
//! per stream, every field under a comment with the measured value it comes
//! from, and a header naming what the fields cannot express yet.
//!
//! It is made from the queue layer (bios as submitted: what the database
//! asked for; the target's own block layer merges them again), or the
//! application layer of a fio iolog, or the issue layer when it is the only one.

use std::fmt::Write as _;

use super::flushorder::Sharing;
use super::{Fingerprint, Layer, LayerPrint, StreamPrint};
use crate::units::format_size_arg;

/// Reads under this share of a log stream's I/Os are left out of its profile.
const LOG_STRAY_READS: f64 = 0.01;

/// A log whose writes are followed by at least this many commits of the
/// file system's journal per write grows (`fill = "grow"`): its
/// fdatasyncs find a new size to commit. A preallocated, recycled log
/// (PostgreSQL's WAL) sees the journal's periodic commit only, under 0.01.
const GROWS: f64 = 0.05;

/// ...and when the journal served at least this share of its syncs
/// (commits over its own flushes and commits): each fdatasync either
/// flushes or is served by a commit. InnoDB's preallocated redo log beside
/// a growing binlog flushes its own writes (1.021 flushes and 0.051 commits
/// per write: 0.048, commits of the binlog's counted for it when the two
/// interleave); MariaDB's binlog 0.997, etcd's WAL 0.19 (bench/results,
/// 2026-12-03).
const JOURNAL_SERVED: f64 = 0.1;

/// A growing log whose requests at dispatch number at most this share of
/// its bios as submitted was split by the file system and merged again by
/// the block layer: its profile is written from the dispatch layer, as
/// appends through the page cache ([`merged_writes`]). Redis's AOF with
/// `appendfsync always`: 2,221 bios a second, 1,113 requests
/// (bench/results, 2026-12-03).
const MERGED: f64 = 0.75;

/// Most sizes a profile's `bssplit` takes ([`crate::workload::bssplit::MAX_SIZES`]).
const MAX_SIZES: usize = crate::workload::bssplit::MAX_SIZES;

/// The layer a profile is made from.
pub fn source_layer(f: &Fingerprint) -> Option<&LayerPrint> {
    [Layer::Queue, Layer::Application, Layer::Issue]
        .into_iter()
        .find_map(|l| f.layers.iter().find(|x| x.layer == l))
}

/// The profile's TOML text; `name` is its name, `dbms` the database the
/// trace is of (written as its `dbms` when given).
pub fn profile_toml(f: &Fingerprint, name: &str, dbms: Option<crate::dbms::Dbms>) -> String {
    let mut out = String::new();
    let Some(layer) = source_layer(f) else {
        return out;
    };
    let _ = writeln!(
        out,
        "# iosim workload profile written by `iosim fingerprint --out` from\n\
         # {} ({}, {:.1} s), {} layer.",
        f.trace,
        f.format,
        f.duration_s,
        layer.layer.name()
    );
    out.push_str(
        "# Run it: iosim run --profile THIS.toml /path/to/file.dat --size 8G --duration 60s\n\
         # (one path serves every target, or give one path per target, in order).\n\
         # Qualify storage with it: iosim qualify --profile THIS.toml --data DIR [--log DIR]\n\
         # (each target on the location of its workloads' role).\n\
         #\n\
         # Not expressed by these fields yet (issue 38), measured and left out:\n",
    );
    for s in layer.streams.iter().filter(|s| !s.journal) {
        let _ = writeln!(
            out,
            "#   {}: tail-page rewrites {} ({:.3} of writes start inside the previous write's last page);\n\
             #     FUA per write {:.3}; preflush vs. post-flush; burstiness beyond one periodic burst (CV of 100 ms counts {}; peak/mean {});\n\
             #     the hottest 1% of 1 MiB regions takes {:.3} of I/Os; the size mix beyond {} sizes.",
            s.name,
            s.sequential.tail_rewrites,
            s.sequential.write_share_with_tail_rewrites - s.sequential.write_share,
            s.flushes.fua_per_write,
            opt(s.arrival.cv_100ms),
            opt(s.arrival.peak_over_mean_100ms),
            s.skew.hottest_1pct_share,
            MAX_SIZES
        );
    }
    for j in layer.streams.iter().filter(|s| s.journal) {
        let _ = writeln!(
            out,
            "#\n# The file system's journal ({}): {} I/Os, {:.3} of the layer's; the file system\n\
             # writes it, not a workload: a log whose fdatasyncs committed it grows (fill = \"grow\").",
            j.name, j.ios, j.layer_share
        );
    }
    let _ = writeln!(out, "name = {}", quote(name));
    let _ = writeln!(
        out,
        "description = {}",
        quote(&format!(
            "fingerprint of {} ({} layer, {} stream(s))",
            f.trace,
            layer.layer.name(),
            layer.streams.len()
        ))
    );
    let _ = writeln!(
        out,
        "source = {}",
        quote(&format!("iosim fingerprint of {}", f.trace))
    );
    if let Some(d) = dbms {
        let _ = writeln!(out, "dbms = {}", quote(d.name()));
    }
    let mut used: Vec<String> = Vec::new();
    for s in layer.streams.iter().filter(|s| s.ios > 0 && !s.journal) {
        let base = ident(&s.name);
        let mut id = base.clone();
        let mut k = 1;
        while used.contains(&id) {
            k += 1;
            id = format!("{base}-{k}");
        }
        let merged = merged_writes(f, layer, s);
        let src = merged.as_ref().unwrap_or(s);
        let appended =
            (merged.is_some() || appended_within_pages(src)).then(|| appended_bytes(src));
        workload(
            &mut out,
            src,
            &id,
            layer.layer,
            merged.is_some().then_some(s),
            appended,
        );
        used.push(id);
    }
    out
}

/// The dispatch layer's figures of a growing log (writes that extend its
/// file, [`grows`]) whose bios the block layer merged: an append through
/// the page cache that does not end on a page boundary is written back as
/// two bios, its partly filled tail page again (already allocated) and the
/// blocks allocated for the rest (ext4 maps them apart), which the block
/// layer merges; and each append changes the file's size, so its
/// fdatasync commits the journal even when the append stayed in the tail
/// page. The profile appends the same bytes through the page cache
/// (Redis's AOF, MariaDB's binlog). The journal commits that followed are
/// the queue layer's (a device without FUA shows none at dispatch).
fn merged_writes(f: &Fingerprint, layer: &LayerPrint, s: &StreamPrint) -> Option<StreamPrint> {
    if layer.layer != Layer::Queue || !growing_log(s) {
        return None;
    }
    let d = f
        .layers
        .iter()
        .find(|l| l.layer == Layer::Issue)?
        .streams
        .iter()
        .find(|d| d.name == s.name)?;
    let merged = d.writes > 0
        && (d.writes as f64) <= MERGED * s.writes as f64
        && d.sequential.write_share_with_tail_rewrites >= 0.5;
    merged.then(|| {
        let mut d = d.clone();
        d.flushes.journal_commits = s.flushes.journal_commits;
        d
    })
}

fn opt(v: Option<f64>) -> String {
    v.map_or("not in this trace".into(), |v| format!("{v:.2}"))
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// A workload or target name from a stream's name.
fn ident(s: &str) -> String {
    let v: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let v = v.trim_matches('_').to_string();
    if v.is_empty() {
        "stream".into()
    } else {
        v
    }
}

/// The `bssplit` of the most common sizes (shares in tenths of a percent)
/// and the share of I/Os they cover.
fn bssplit(s: &StreamPrint) -> (String, f64) {
    let mut sizes = s.sizes.clone();
    sizes.sort_by(|a, b| b.count.cmp(&a.count).then(a.bytes.cmp(&b.bytes)));
    sizes.truncate(MAX_SIZES);
    let covered: f64 = sizes.iter().map(|z| z.share).sum();
    sizes.sort_by_key(|z| z.bytes);
    // Shares in tenths of a percent adding up to exactly 100% (largest
    // remainders: each within 0.1% of the measured share); sizes that round
    // to nothing are left out.
    let exact: Vec<f64> = sizes.iter().map(|z| z.share / covered * 1000.0).collect();
    let mut tenths: Vec<u64> = exact.iter().map(|x| x.floor() as u64).collect();
    let short = 1000u64.saturating_sub(tenths.iter().sum());
    let mut order: Vec<usize> = (0..exact.len()).collect();
    order.sort_by(|&i, &j| (exact[j] - exact[j].floor()).total_cmp(&(exact[i] - exact[i].floor())));
    for &i in order.iter().take(short as usize) {
        tenths[i] += 1;
    }
    let parts: Vec<String> = sizes
        .iter()
        .zip(&tenths)
        .filter(|(_, t)| **t > 0)
        .map(|(z, t)| {
            let size = format_size_arg(u64::from(z.bytes));
            if t % 10 == 0 {
                format!("{size}/{}", t / 10)
            } else {
                format!("{size}/{}.{}", t / 10, t % 10)
            }
        })
        .collect();
    (parts.join(":"), covered)
}

/// One stream's `[[workload]]`; `queued` is the queue layer's stream when
/// `s` is the dispatch layer's ([`merged_writes`]); `appended`, the bytes
/// each write of a log appended through the page cache added.
fn workload(
    out: &mut String,
    s: &StreamPrint,
    id: &str,
    layer: Layer,
    queued: Option<&StreamPrint>,
    appended: Option<u64>,
) {
    let (log, rw) = head(out, s, id, queued);
    if let Some(b) = appended {
        let _ = writeln!(
            out,
            "# measured: mean request {:.0} bytes, each starting in the last {}-byte page of the one before:\n\
             # the file's end advanced {b} bytes a request, appended through the page cache\nbs = \"{b}\"",
            s.mean_size_bytes, s.sequential.tail_page_bytes
        );
    } else {
        let top = s.sizes.iter().max_by_key(|z| (z.count, z.bytes));
        sizes(out, s, top.map_or(4096, |z| u64::from(z.bytes)));
    }
    let sharing = sharing(s, log);
    let qd = concurrency(out, s, sharing);
    let grows = log && rw == "write" && grows(s);
    if log && appended.is_none() {
        tail_rewrite(out, s, rw, qd);
    }
    if grows {
        let _ = writeln!(
            out,
            "# measured: {:.3} commits of the file system's journal per write followed this log's writes:\n\
             # its fdatasyncs commit a new size, as a file that grows (not preallocated)\nfill = \"grow\"",
            journal_commits_per_write(s)
        );
    }
    cache(out, s, layer, appended.is_some());
    skew_and_flushes(out, s, sharing, grows);
}

/// The stream's first lines: name, target, role and `rw`; returns whether
/// it is a log, and its `rw`.
fn head(
    out: &mut String,
    s: &StreamPrint,
    id: &str,
    queued: Option<&StreamPrint>,
) -> (bool, &'static str) {
    let seq = s.sequential.share_with_tail_rewrites;
    let write_share = 1.0 - s.read_share;
    let log = write_share > 0.9 && s.sequential.write_share_with_tail_rewrites >= 0.5;
    let sequential = seq >= 0.5;
    // A log's stray reads (under 1% of its I/Os) are left out, so
    // that its tail rewrites can be expressed (sequential writes only).
    let stray_reads = log && s.reads > 0 && s.read_share < LOG_STRAY_READS;
    let reads = if stray_reads { 0 } else { s.reads };
    let rw = match (reads, s.writes, sequential) {
        (_, 0, true) => "read",
        (_, 0, false) => "randread",
        (0, _, true) => "write",
        (0, _, false) => "randwrite",
        (_, _, true) => "readwrite",
        (_, _, false) => "randrw",
    };
    let _ = writeln!(out, "\n[[workload]]\nname = {}", quote(id));
    let _ = writeln!(out, "target = {}", quote(id));
    if let Some(q) = queued {
        let _ = writeln!(
            out,
            "# from the dispatch layer: the block layer merged this log's {} written bios into {} requests\n\
             # before dispatch: each append's writeback reaches it as the tail page again and the blocks\n\
             # allocated for the rest, and so will iosim's appends through the page cache",
            q.writes, s.writes
        );
    }
    let _ = writeln!(
        out,
        "# measured: write share {write_share:.3}, sequential share of writes {:.3} (with tail rewrites {:.3})",
        s.sequential.write_share, s.sequential.write_share_with_tail_rewrites
    );
    let _ = writeln!(out, "role = \"{}\"", if log { "log" } else { "data" });
    let _ = writeln!(
        out,
        "# measured: sequential share {:.3} (strict {:.3}); read share {:.3} of {} I/Os",
        seq, s.sequential.share, s.read_share, s.ios
    );
    if stray_reads {
        let _ = writeln!(
            out,
            "# {} reads ({:.3} of the I/Os) left out: a log's writes only",
            s.reads, s.read_share
        );
    }
    let _ = writeln!(out, "rw = \"{rw}\"");
    if rw == "readwrite" || rw == "randrw" {
        let pct = (write_share * 100.0).round().clamp(1.0, 99.0) as u8;
        let _ = writeln!(out, "write_pct = {pct}");
    }
    (log, rw)
}

/// A growing log whose fdatasyncs committed the journal more often than
/// its writes could have added blocks: most writes rewrote the tail page
/// alone, yet the file's size changed, so the database appended bytes
/// within the page through the page cache (RocksDB's WAL with `sync=1`:
/// 4 KiB writes, 93% of them the tail page again, 0.934 journal commits a
/// write, where page-sized direct writes that add a block only 7% of the
/// time would commit about 0.07; bench/results, 2026-12-03). Etcd's WAL,
/// preallocated, commits for its new blocks only (0.159 a write).
fn appended_within_pages(s: &StreamPrint) -> bool {
    let page = s.sequential.tail_page_bytes.max(1) as f64;
    let adds_blocks = (appended_bytes(s) as f64 / page).min(1.0);
    growing_log(s) && tail_share(s) >= 0.5 && journal_commits_per_write(s) > 1.5 * adds_blocks
}

/// A log (writes only but stray reads, sequential counting tail rewrites)
/// whose fdatasyncs committed the journal as a growing file's do
/// ([`grows`]): the streams [`merged_writes`] and [`appended_within_pages`]
/// look at.
fn growing_log(s: &StreamPrint) -> bool {
    s.read_share < LOG_STRAY_READS && s.sequential.write_share_with_tail_rewrites >= 0.5 && grows(s)
}

/// The share of the stream's writes that started in the last page of the
/// write before (rewrote its tail page).
fn tail_share(s: &StreamPrint) -> f64 {
    s.sequential.tail_rewrites as f64 / s.writes.max(1) as f64
}

/// What a log appended through the page cache added per request: its
/// mean request less the tail page the requests that rewrote it carried
/// again (an append of b bytes from anywhere in a page of P writes back
/// b + P bytes on average).
fn appended_bytes(s: &StreamPrint) -> u64 {
    (s.mean_size_bytes - tail_share(s) * s.sequential.tail_page_bytes as f64)
        .round()
        .max(1.0) as u64
}

/// `cache`: direct, as the block layer saw the requests, unless a size is
/// not a multiple of 512 bytes or the log was appended through the page
/// cache (`appended`).
fn cache(out: &mut String, s: &StreamPrint, layer: Layer, appended: bool) {
    let all_aligned = s.sizes.iter().all(|z| z.bytes % 512 == 0);
    if appended {
        let _ = writeln!(
            out,
            "# buffered: the page cache's writeback makes the requests, as it made the database's\ncache = \"buffered\""
        );
        return;
    }
    let _ = writeln!(
        out,
        "# {}: direct I/O puts the same requests on the device{}",
        if layer == Layer::Application {
            "fio's I/O as submitted"
        } else {
            "the trace is the block layer's view"
        },
        if all_aligned {
            ""
        } else {
            " (sizes not multiples of 512 bytes: buffered instead)"
        }
    );
    let _ = writeln!(
        out,
        "cache = \"{}\"",
        if all_aligned { "direct" } else { "buffered" }
    );
}

/// `bs` (the most common size) and `bssplit`.
fn sizes(out: &mut String, s: &StreamPrint, bs: u64) {
    let _ = writeln!(
        out,
        "# measured: mean request size {:.0} bytes; most common size {} bytes",
        s.mean_size_bytes, bs
    );
    let _ = writeln!(out, "bs = \"{}\"", format_size_arg(bs));
    if s.sizes.len() > 1 {
        let (split, covered) = bssplit(s);
        let _ = writeln!(
            out,
            "# measured: {} sizes; the {} most common cover {:.3} of I/Os",
            s.sizes.len(),
            s.sizes.len().min(MAX_SIZES),
            covered
        );
        let _ = writeln!(out, "bssplit = \"{split}\"");
    }
}

/// Whether a log's fdatasyncs commit the journal as a growing file's do
/// ([`GROWS`], [`JOURNAL_SERVED`]).
fn grows(s: &StreamPrint) -> bool {
    let commits = journal_commits_per_write(s);
    commits >= GROWS && commits / (commits + s.flushes.per_write) >= JOURNAL_SERVED
}

/// Journal commits that followed the stream's writes, per write (0 without `--journal`).
fn journal_commits_per_write(s: &StreamPrint) -> f64 {
    s.journal_commits_per_write().unwrap_or(0.0)
}

/// How the stream's flushes were shared ([`Sharing`]), judged where its
/// writes overlapped (more than one in flight at some time: by time, a
/// slow flush can hold the level at 1 for over 99% of a barrier's run). A
/// `log` that mostly rewrites its tail page, one write at a time most of
/// the time, is not concurrent: a second write in flight now and then
/// makes no barrier of it, and its tail rewrites need one write at a time.
fn sharing(s: &StreamPrint, log: bool) -> Sharing {
    let (Some(o), Some(f)) = (&s.outstanding, &s.flushes.order) else {
        return Sharing::Independent;
    };
    let one_at_a_time = log && tail_share(s) >= 0.5 && o.p50 <= 1;
    let concurrent = f.max_writes_in_flight > 1 && !one_at_a_time;
    f.sharing(s.flushes.flushes, concurrent, s.flushes.per_write)
}

/// `tail_rewrite` for a log whose writes start in the last page of the one
/// before (the page the fingerprint measured: the most common step back),
/// when the profile can express it: sequential writes only, one at a time,
/// none smaller than the page.
fn tail_rewrite(out: &mut String, s: &StreamPrint, rw: &str, qd: u32) {
    // A profile's page is whole sectors: a step back of 2,300 bytes (an
    // application's appends) is rewritten as the 2.5 KiB around it.
    let page = crate::units::align_up(s.sequential.tail_page_bytes.max(512), 512);
    let page_text = format_size_arg(page);
    let rewrites = s.sequential.tail_rewrites;
    if rewrites == 0 || s.writes < 2 {
        return;
    }
    let pct = (100.0 * rewrites as f64 / (s.writes - 1) as f64)
        .round()
        .clamp(1.0, 100.0) as u8;
    let smallest = s
        .sizes
        .iter()
        .map(|z| u64::from(z.bytes))
        .min()
        .unwrap_or(0);
    let why_not = if rw != "write" {
        Some("it is not sequential writes only")
    } else if qd != 1 {
        Some("it had more than one write outstanding, and a tail page is rewritten one write at a time")
    } else if smallest < page {
        Some("some writes are smaller than the page")
    } else {
        None
    };
    match why_not {
        None => {
            let _ = writeln!(
                out,
                "# measured: {pct}% of writes start in the last {page_text} page of the one before"
            );
            let _ = writeln!(out, "tail_rewrite = \"{page_text}:{pct}\"");
        }
        Some(why) => {
            let _ = writeln!(
                out,
                "# measured: {pct}% of writes start in the last {page_text} page of the one before; not expressed ({why})"
            );
        }
    }
}

/// `qd`, `threads`, `rate_iops` and periodic bursts; returns the `qd` written.
fn concurrency(out: &mut String, s: &StreamPrint, sharing: Sharing) -> u32 {
    let (qd, threads) = depth(out, s, sharing);
    let bursts = periodic_bursts(s, threads);
    // A burst goes out at the depth the stream reached in its bursts (its
    // p99), the level between them at its median: qd only caps a paced stream.
    let qd = match (&bursts, &s.outstanding, sharing) {
        (Some(_), Some(o), Sharing::Independent) => o.p99.clamp(u64::from(qd), 1024) as u32,
        _ => qd,
    };
    let _ = writeln!(out, "qd = {qd}\nthreads = {threads}");
    let Some(iops) = s.arrival.iops else {
        return qd;
    };
    let _ = writeln!(
        out,
        "# measured: arrival rate {iops:.1} I/Os a second{}",
        if threads > 1 {
            format!(" ({threads} threads share it)")
        } else {
            String::new()
        }
    );
    let Some(b) = bursts else {
        let per = iops / f64::from(threads);
        let _ = writeln!(out, "rate_iops = {}", per.round().max(1.0) as u64);
        return qd;
    };
    let a = &s.arrival;
    let _ = writeln!(
        out,
        "# measured: bursts: CV of 100 ms counts {}, the busiest 100 ms {}x the mean, a burst every {:.1} s;\n\
         # as a steady rate with a burst each period at the busiest rate, {:.1}% of the time in bursts\n\
         # (its CV squared less chance's, over that plus (peak/mean - 1) squared; at least 100 ms)",
        opt(a.cv_100ms),
        opt(a.peak_over_mean_100ms),
        b.every_s,
        b.share * 100.0
    );
    if let Some(r) = b.rate {
        let _ = writeln!(out, "rate_iops = {r}");
    }
    let _ = writeln!(
        out,
        "burst = {}\nburst_rate_iops = {}\nburst_every = \"{}ms\"",
        b.ios,
        b.burst_rate,
        (b.every_s * 1000.0).round() as u64
    );
    if b.writes {
        let _ = writeln!(
            out,
            "# measured: {} of the I/Os in the bursting 100 ms were writes: the bursts write,\n\
             # the I/Os between them read more, so the write share holds\nburst_writes = true",
            opt3(a.burst_write_share)
        );
    }
    qd
}

/// [`concurrency`]: the depth and threads the stream's outstanding I/Os
/// and flush sharing say, under a comment with the measured levels.
fn depth(out: &mut String, s: &StreamPrint, sharing: Sharing) -> (u32, u32) {
    let Some(o) = &s.outstanding else {
        let _ = writeln!(
            out,
            "# measured: outstanding I/Os not in this trace (no completions): one at a time"
        );
        return (1, 1);
    };
    let _ = writeln!(
        out,
        "# measured: outstanding I/Os mean {:.2}, p50 {}, p99 {}, max {}",
        o.mean, o.p50, o.p99, o.max
    );
    // The level held most of the time is the depth a closed loop
    // keeps (fio's iodepth 8 on a loop device: p50 8, mean 6.1, the
    // mean also counting the application's own time between a
    // completion and its next submission); with rate_iops set, qd
    // only caps a paced stream. A barrier's flush holds the level
    // at 1 between batches: its batch went out at the most writes
    // in flight at once. Group commit's committers each have at
    // most one write in flight: at least that many commit.
    let most = s
        .flushes
        .order
        .as_ref()
        .map_or(1, |f| f.max_writes_in_flight);
    match sharing {
        Sharing::Barrier => (most.clamp(1, 1024) as u32, 1),
        Sharing::GroupCommit => {
            let _ = writeln!(
                out,
                "# measured: at most {most} writes in flight at once: a committer each"
            );
            (1, most.clamp(2, 1024) as u32)
        }
        Sharing::Independent => (o.p50.clamp(1, 1024) as u32, 1),
    }
}

/// A stream's bursts as periodic bursts over a steady rate, per thread.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bursts {
    /// The period (`burst_every`), seconds.
    every_s: f64,
    /// Share of the time in bursts.
    share: f64,
    /// I/Os of each burst (`burst`).
    ios: u64,
    /// Their rate (`burst_rate_iops`).
    burst_rate: u64,
    /// The rate between bursts (`rate_iops`); none: nothing between them.
    rate: Option<u64>,
    /// The bursts are writes (`burst_writes`).
    writes: bool,
}

/// The bursts are writes when at least this share of the I/Os in the
/// bursting 100 ms bins were (PostgreSQL's checkpoint).
const BURSTS_OF_WRITES: f64 = 0.9;

/// Bursts beyond chance: a CV of 100 ms counts at least this much over the
/// one that arrivals at random at the same rate would show.
const BURSTY_CV: f64 = 0.5;

/// The stream's bursts, when it has them, per thread of `threads`.
///
/// Two levels, a steady rate `b` and bursts at the busiest 100 ms's rate
/// `h = P x m` (P the peak over the mean `m`) for a share `d` of the time,
/// have mean `m` when `b = m (1 - d P) / (1 - d)` and a CV with
/// `CV^2 = d (P - 1)^2 / (1 - d)`, so `d = CV^2 / (CV^2 + (P - 1)^2)`,
/// with the CV's share from chance (`1 / counts per 100 ms`, Poisson's)
/// taken out first. PostgreSQL's tables under a checkpoint (CV 1.42, the
/// busiest 100 ms 12.4x the mean): 1.5% of the time at 12.4x, 82% of
/// the mean between.
fn periodic_bursts(s: &StreamPrint, threads: u32) -> Option<Bursts> {
    let a = &s.arrival;
    let (m, cv, peak, every) = (
        a.iops?,
        a.cv_100ms?,
        a.peak_over_mean_100ms?,
        a.burst_period_s?,
    );
    let bin = super::BIN_NS as f64 / 1e9;
    let excess = cv * cv - 1.0 / (m * bin).max(f64::MIN_POSITIVE);
    if excess < BURSTY_CV * BURSTY_CV || peak < 2.0 || every < 3.0 * bin {
        return None;
    }
    let d = excess / (excess + (peak - 1.0).powi(2));
    let on = (d * every).max(bin);
    if on > every / 2.0 {
        return None;
    }
    let total = m * every;
    let high = (peak * m).min(total / on);
    let t = f64::from(threads.max(1));
    // At most what a profile's `burst` (a u32) holds.
    let ios = ((high * on / t).round() as u64).min(u64::from(u32::MAX));
    let between = (total - high * on).max(0.0) / (every - on) / t;
    // Writes in bursts, in a stream that reads too, with writes enough in a
    // period to fill its burst.
    let writes = a.burst_write_share.unwrap_or(0.0) >= BURSTS_OF_WRITES
        && s.read_share >= 0.1
        && (1.0 - s.read_share) * total >= high * on;
    (ios >= 2).then(|| Bursts {
        every_s: every,
        share: on / every,
        ios,
        burst_rate: ((high / t).round() as u64).max(1),
        rate: (between * every >= 1.0).then(|| (between.round() as u64).max(1)),
        writes,
    })
}

/// `distribution`, `fdatasync` and how the flush is shared. A log that
/// `grows` had some of its fdatasyncs made durable by the journal's commit
/// (whose preflush serves them: no empty flush of its own), so they count too.
fn skew_and_flushes(out: &mut String, s: &StreamPrint, sharing: Sharing, grows: bool) {
    let hot10 = s.skew.hottest_10pct_share;
    let _ = writeln!(
        out,
        "# measured: the hottest 10% of {} touched 1 MiB regions take {:.3} of I/Os (1%: {:.3}); span {} bytes",
        s.skew.regions_touched,
        hot10,
        s.skew.hottest_1pct_share,
        s.skew.span_end.saturating_sub(s.skew.span_start)
    );
    // Skewed beyond chance (twice uniform's 10%), with enough regions to tell.
    if hot10 >= 0.2 && s.skew.regions_touched >= 10 {
        let access = (hot10 * 100.0).round().clamp(11.0, 99.0);
        let _ = writeln!(out, "distribution = \"hotcold:10/{access}\"");
    }
    let f = &s.flushes;
    let _ = writeln!(
        out,
        "# measured: {} flushes ({} empty), {:.3} per write; FUA {:.3} per write (not expressible)",
        f.flushes, f.empty, f.per_write, f.fua_per_write
    );
    let commits = if grows {
        journal_commits_per_write(s)
    } else {
        0.0
    };
    if s.writes == 0 || f.per_write + commits <= 0.0 {
        return;
    }
    if let Some(o) = &f.order {
        let _ = writeln!(
            out,
            "# measured: flushes submitted over another flush {}, with writes in flight {}; writes submitted during a flush {}",
            opt3(o.flushes_overlapping),
            opt3(o.flushes_behind_writes),
            opt3(o.writes_during_flush)
        );
    }
    match sharing {
        Sharing::GroupCommit => {
            // Each committer's write is a commit; how many share a flush
            // follows from the storage's flush latency, as the database's.
            let _ = writeln!(
                out,
                "# one flush at a time while writes go on: group commit (one flusher serves every committer)\n\
                 fdatasync = 1\ngroup_commit = true"
            );
        }
        _ => {
            let per_write = if grows {
                let with = f.per_write + commits;
                let _ = writeln!(
                    out,
                    "# with the journal's commits that served its fdatasyncs: {with:.3} per write"
                );
                with
            } else {
                f.per_write
            };
            let every = (1.0 / per_write).round().clamp(1.0, 1e6) as u32;
            let _ = writeln!(out, "fdatasync = {every}");
            if sharing == Sharing::Barrier {
                let _ = writeln!(
                    out,
                    "# no flush behind a write in flight, no write behind a flush: each flush is a barrier\n\
                     flush_barrier = true"
                );
            }
        }
    }
}

fn opt3(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::{stream_print, LayerIo};
    use crate::replay::events::{EventOp, IoFlags};

    /// A WAL as SQLite's and etcd's looked: 16 KiB commits, each starting
    /// in the last 4 KiB page of the one before, a flush after each, now
    /// and then two commits in flight at once, and one read in 300 I/Os.
    /// The profile is a log's: writes only, the tail rewrite expressed,
    /// one at a time, no barrier.
    #[test]
    fn a_logs_stray_reads_and_rare_second_write_leave_its_tail_rewrites() {
        let io = |at_ns: u64, done: u64, op: EventOp, offset: u64, len: u32| LayerIo {
            at_ns,
            done_ns: Some(done),
            op,
            offset,
            len,
            flags: IoFlags {
                preflush: op == EventOp::Flush,
                ..IoFlags::default()
            },
            source: 0,
            pid: 0,
        };
        let mut ios = Vec::new();
        let mut end = 16384u64;
        for k in 0..300u64 {
            let t = k * 100;
            ios.push(io(t, t + 40, EventOp::Write, end - 16384, 16384));
            if k % 10 == 0 {
                end += 12288;
                ios.push(io(t + 1, t + 40, EventOp::Write, end - 16384, 16384));
            }
            ios.push(io(t + 50, t + 90, EventOp::Flush, 0, 0));
            end += 12288;
        }
        ios.push(io(30_000, 30_010, EventOp::Read, 1 << 30, 4096));
        let s = stream_print("wal".into(), &ios, (0, 30_000), true);
        assert!(
            s.read_share > 0.0 && s.outstanding.as_ref().unwrap().p99 == 2,
            "{s:?}"
        );
        let mut out = String::new();
        workload(&mut out, &s, "wal", Layer::Queue, None, None);
        assert!(
            out.contains("role = \"log\"") && out.contains("rw = \"write\""),
            "{out}"
        );
        assert!(out.contains("tail_rewrite = \"4K:"), "{out}");
        assert!(
            out.contains("qd = 1\n") && !out.contains("flush_barrier"),
            "{out}"
        );
        assert!(
            out.contains("1 reads (0.003 of the I/Os) left out"),
            "{out}"
        );
    }

    /// An application's 2,300-byte appends rewrite a page the profile
    /// cannot name: the 2.5 KiB of whole sectors around it, and it loads.
    #[test]
    fn a_tail_page_off_the_sector_is_rounded_up_to_whole_sectors() {
        let mut s = stream_print("log".into(), &[], (0, 0), false);
        s.writes = 100;
        s.sizes = vec![crate::fingerprint::SizeShare {
            bytes: 4096,
            count: 100,
            share: 1.0,
        }];
        s.sequential.tail_rewrites = 99;
        s.sequential.tail_page_bytes = 2300;
        let mut out = String::new();
        tail_rewrite(&mut out, &s, "write", 1);
        assert!(out.contains("tail_rewrite = \"2560:100\""), "{out}");
        let spec = crate::workload::TailRewrite::parse("2560:100").unwrap();
        assert_eq!(spec.page, 2560);
    }

    /// PostgreSQL's tables with a checkpoint in a 30 s window (Q layer,
    /// bench/results/fingerprint-20261203-postgresql-compare.txt): 1,532
    /// I/Os a second, CV 1.42, the busiest 100 ms 12.39x the mean. Written
    /// as 82% of the mean between bursts and a burst at the peak's rate for
    /// 1.5% of the period (0.46 s of 30 s), which keeps the mean; a steady
    /// stream, or one whose CV is chance's at its rate, gets none.
    #[test]
    fn a_checkpoints_burst_is_written_as_periodic_bursts_over_a_steady_rate() {
        let mut s = stream_print("base".into(), &[], (0, 0), false);
        s.arrival = crate::fingerprint::Arrival {
            iops: Some(1532.0),
            cv_100ms: Some(1.42),
            peak_over_mean_100ms: Some(12.39),
            burst_period_s: Some(30.0),
            burst_write_share: Some(0.97),
        };
        s.read_share = 0.425;
        let b = periodic_bursts(&s, 1).unwrap();
        assert!((b.share - 0.0153).abs() < 0.0005, "{b:?}");
        assert_eq!(b.burst_rate, 18_981);
        assert!((1230..=1290).contains(&b.rate.unwrap()), "{b:?}");
        let per_period = b.ios as f64 + b.rate.unwrap() as f64 * 30.0 * (1.0 - b.share);
        assert!((per_period / (1532.0 * 30.0) - 1.0).abs() < 0.01, "{b:?}");
        // Two threads share it: each half.
        let two = periodic_bursts(&s, 2).unwrap();
        assert_eq!(two.burst_rate, 9_491);
        // Steady, or bursty by chance only (5 I/Os a second: CV 1.4 from
        // Poisson alone), or bursts more often than every 300 ms: none.
        s.arrival.cv_100ms = Some(0.3);
        assert_eq!(periodic_bursts(&s, 1), None);
        s.arrival.iops = Some(5.0);
        s.arrival.cv_100ms = Some(1.42);
        assert_eq!(periodic_bursts(&s, 1), None);
        s.arrival.iops = Some(1532.0);
        s.arrival.burst_period_s = Some(0.2);
        assert_eq!(periodic_bursts(&s, 1), None);
        // The lines a profile gets, and they load.
        s.arrival.burst_period_s = Some(30.0);
        let mut out = String::new();
        concurrency(&mut out, &s, Sharing::Independent);
        assert!(
            out.contains("\nburst = ")
                && out.contains("\nburst_every = \"30000ms\"")
                && out.contains("\nburst_writes = true"),
            "{out}"
        );
        // Bursts of reads and writes alike, or of more writes than the
        // period has: the burst takes the stream's mix.
        s.arrival.burst_write_share = Some(0.6);
        assert!(!periodic_bursts(&s, 1).unwrap().writes);
        s.arrival.burst_write_share = Some(0.97);
        s.read_share = 0.99;
        assert!(!periodic_bursts(&s, 1).unwrap().writes);
        s.read_share = 0.425;
        let text = format!(
            "name = \"t\"\ndescription = \"d\"\nsource = \"s\"\n[[workload]]\nname = \"base\"\n\
             target = \"data\"\nrole = \"data\"\nrw = \"randrw\"\nbs = \"8K\"\n{out}"
        );
        crate::profile::Profile::parse(&text, "t").unwrap();
    }

    #[test]
    fn names_and_strings() {
        assert_eq!(ident("/tmp/a b:wal"), "tmp_a_b_wal");
        assert_eq!(ident("::"), "stream");
        assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }

    #[test]
    fn size_shares_add_up_to_100() {
        let mut s = crate::fingerprint::stream_print("s".into(), &[], (0, 0), false);
        s.sizes = [(4096, 501), (16384, 301), (65536, 198)]
            .into_iter()
            .map(|(bytes, count)| crate::fingerprint::SizeShare {
                bytes,
                count,
                share: count as f64 / 1000.0,
            })
            .collect();
        let (split, covered) = bssplit(&s);
        assert_eq!(split, "4K/50.1:16K/30.1:64K/19.8");
        // Rounding never piles onto one size: 1 MiB keeps its 0.3%, 2 MiB (0.02%) is left out.
        s.sizes = [
            (8192, 7843, 0.7843),
            (16384, 2124, 0.2124),
            (1 << 20, 31, 0.0031),
            (2 << 20, 2, 0.0002),
        ]
        .into_iter()
        .map(|(bytes, count, share)| crate::fingerprint::SizeShare {
            bytes,
            count,
            share,
        })
        .collect();
        let (split, _) = bssplit(&s);
        assert_eq!(split, "8K/78.4:16K/21.3:1M/0.3");
        assert!(split.parse::<crate::workload::BsSplit>().is_ok());
        assert!((covered - 1.0).abs() < 1e-9);
        assert!(split.parse::<crate::workload::BsSplit>().is_ok());
    }
}
