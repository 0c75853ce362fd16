use std::path::Path;

use super::*;
use crate::replay::parse_events;

/// A WAL on a device at 0..1M and data above: a preflush+FUA commit
/// write, an empty flush, a tail-page rewrite, their dispatch and completions
/// (and blkparse's summary, which is not an event). Shared with
/// tests/fingerprint.rs.
pub(super) const DUMP: &str = include_str!("../../tests/fixtures/fingerprint-blkparse.txt");

fn print(regions: &[Region]) -> Fingerprint {
    let log = parse_events(Path::new("d.txt"), &[(Path::new("d.txt"), DUMP.as_bytes())]).unwrap();
    fingerprint(&log, &StreamMap::fixed(regions))
}

fn layer(f: &Fingerprint, l: Layer) -> &LayerPrint {
    f.layers.iter().find(|x| x.layer == l).unwrap()
}

#[test]
fn flushes_fua_and_tail_rewrites_at_both_layers() {
    let f = print(&[]);
    assert_eq!(f.layers.len(), 2);
    let q = &layer(&f, Layer::Queue).streams[0];
    assert_eq!(q.name, "all");
    assert_eq!((q.ios, q.reads, q.writes), (4, 2, 2));
    // Q: the commit's preflush and the journal's empty flush; one FUA.
    assert_eq!(
        (q.flushes.flushes, q.flushes.empty, q.flushes.fua),
        (2, 1, 1)
    );
    assert_eq!(q.flushes.per_write, 1.0);
    assert_eq!(q.flushes.fua_per_write, 0.5);
    // The second write starts at 4 KiB, inside the first's last page (it ended at 8 KiB).
    assert_eq!(q.sequential.tail_rewrites, 1);
    assert_eq!(q.sequential.write_share, 0.0);
    assert_eq!(q.sequential.write_share_with_tail_rewrites, 1.0);
    // The second read follows the first.
    assert_eq!(q.sequential.share, 0.5);
    assert_eq!(q.sequential.share_with_tail_rewrites, 1.0);
    let d = &layer(&f, Layer::Issue).streams[0];
    // D: two empty flushes (the preflush split off, jbd2's), the FUA kept.
    assert_eq!(
        (d.flushes.flushes, d.flushes.empty, d.flushes.fua),
        (2, 2, 1)
    );
    assert_eq!(d.sizes.len(), 2);
    assert_eq!(d.sizes[0].bytes, 4096);
    assert_eq!(d.sizes[1].bytes, 8192);
    assert!(f.notes.iter().all(|n| !n.contains("not in this trace")));
}

#[test]
fn outstanding_from_completions() {
    let f = print(&[]);
    let d = layer(&f, Layer::Issue).streams[0]
        .outstanding
        .clone()
        .unwrap();
    // Never two requests in flight at once at dispatch.
    assert_eq!(d.max, 1);
    assert!(d.mean > 0.0 && d.mean < 1.0, "{d:?}");
    let q = layer(&f, Layer::Queue).streams[0]
        .outstanding
        .clone()
        .unwrap();
    // The two reads overlap at queue (the second queued before the first completed).
    assert_eq!(q.max, 2);
}

#[test]
fn regions_split_streams_and_flushes_follow_writes() {
    let regions = [
        Region::parse("wal=0..1M").unwrap(),
        Region::parse("data=1M..1G").unwrap(),
    ];
    let f = print(&regions);
    let q = layer(&f, Layer::Queue);
    let names: Vec<&str> = q.streams.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["wal", "data"]);
    assert_eq!((q.streams[0].writes, q.streams[0].reads), (2, 0));
    // jbd2's empty flush follows the WAL's write.
    assert_eq!(q.streams[0].flushes.flushes, 2);
    assert_eq!((q.streams[1].reads, q.streams[1].flushes.flushes), (2, 0));
    assert_eq!(q.streams[1].flushes.per_write, 0.0);
    // A name given again adds a range to its stream (a file's extents):
    // the WAL's two writes, one in each of its ranges, are one stream.
    let regions = [
        Region::parse("wal=0..4K").unwrap(),
        Region::parse("data=1M..1G").unwrap(),
        Region::parse("wal=4K..1M").unwrap(),
    ];
    Region::check_all(&regions).unwrap();
    let f = print(&regions);
    let q = layer(&f, Layer::Queue);
    let names: Vec<&str> = q.streams.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["wal", "data"]);
    assert_eq!(q.streams[0].writes, 2);
    assert_eq!(q.streams[0].sequential.tail_rewrites, 1);
}

#[test]
fn region_arguments() {
    let r = Region::parse("wal=0..512M").unwrap();
    assert_eq!((r.name.as_str(), r.start, r.end), ("wal", 0, 512 << 20));
    for bad in ["wal", "wal=0-5", "=0..1M", "w=5M..1M", "w=x..1M"] {
        let e = Region::parse(bad).unwrap_err().to_string();
        assert!(e.contains("NAME=START..END"), "{e}");
    }
    let a = Region::parse("a=0..2M").unwrap();
    let b = Region::parse("b=1M..3M").unwrap();
    assert!(Region::check_all(&[a.clone(), b])
        .unwrap_err()
        .to_string()
        .contains("overlaps"));
    assert!(Region::check_all(&[a.clone(), a.clone()]).is_err());
    assert!(Region::parse("other=0..1M")
        .unwrap_err()
        .to_string()
        .contains("'other' is the name of the I/O in no region"));
    let other = Region {
        name: "other".into(),
        ..a.clone()
    };
    assert!(Region::check_all(&[other]).is_err());
}

fn io(at_ns: u64, op: EventOp, offset: u64, len: u32) -> LayerIo {
    LayerIo {
        at_ns,
        done_ns: None,
        op,
        offset,
        len,
        flags: IoFlags::default(),
        source: 0,
        pid: 0,
    }
}

/// [`io`] by process `pid`.
fn at(at_ns: u64, op: EventOp, offset: u64, len: u32, pid: u32) -> LayerIo {
    LayerIo {
        pid,
        ..io(at_ns, op, offset, len)
    }
}

/// An empty flush (preflush) by process `pid`.
fn flush(at_ns: u64, pid: u32) -> LayerIo {
    let mut f = at(at_ns, EventOp::Flush, 0, 0, pid);
    f.flags.preflush = true;
    f
}

#[test]
fn skew_and_burstiness() {
    // 90 I/Os on region 0, 10 spread over 9 others.
    let mut ios: Vec<LayerIo> = (0..90).map(|k| io(k, EventOp::Read, 4096, 4096)).collect();
    ios.extend((1..10).map(|r| io(100, EventOp::Read, r * SKEW_REGION, 4096)));
    ios.push(io(100, EventOp::Read, 9 * SKEW_REGION, 4096));
    let refs: Vec<&LayerIo> = ios.iter().collect();
    let s = skew(&refs);
    assert_eq!(s.regions_touched, 10);
    assert!((s.hottest_1pct_share - 0.9).abs() < 1e-9);
    assert!((s.hottest_10pct_share - 0.9).abs() < 1e-9);
    assert_eq!((s.span_start, s.span_end), (4096, 9 * SKEW_REGION + 4096));
    // Ten 100 ms bins, all I/Os in the first: peak/mean 10.
    let a = arrival(&refs, (0, 10 * BIN_NS));
    assert!(
        (a.peak_over_mean_100ms.unwrap() - 10.0).abs() < 1e-9,
        "{a:?}"
    );
    assert!((a.iops.unwrap() - 100.0).abs() < 1e-9);
    // Even arrivals: no burstiness.
    let even: Vec<LayerIo> = (0..10)
        .map(|k| io(k * BIN_NS, EventOp::Write, 0, 512))
        .collect();
    let refs: Vec<&LayerIo> = even.iter().collect();
    let a = arrival(&refs, (0, 10 * BIN_NS - 1));
    assert_eq!((a.cv_100ms, a.burst_period_s), (Some(0.0), None));
    // 10 s at 10 I/Os a bin, and 100 more in two bins in a row every 2.5 s:
    // four bursts, one each 2.5 s.
    let mut spiky: Vec<LayerIo> = (0..1000)
        .map(|k| io(k * BIN_NS / 10, EventOp::Write, 0, 512))
        .collect();
    for b in [0, 25, 50, 75] {
        spiky.extend((0..200).map(|k| io(b * BIN_NS + k * BIN_NS / 100, EventOp::Write, 0, 512)));
    }
    let refs: Vec<&LayerIo> = spiky.iter().collect();
    let a = arrival(&refs, (0, 100 * BIN_NS));
    assert!((a.burst_period_s.unwrap() - 2.5).abs() < 1e-9, "{a:?}");
    // The busy bins hold the 100-I/O bursts and their 10 steady I/Os: all
    // writes here; reads in the steady part leave that so.
    assert_eq!(a.burst_write_share, Some(1.0));
    for i in spiky.iter_mut().take(1000) {
        i.op = EventOp::Read;
    }
    let refs: Vec<&LayerIo> = spiky.iter().collect();
    let a = arrival(&refs, (0, 100 * BIN_NS));
    assert!(
        (a.burst_write_share.unwrap() - 100.0 / 110.0).abs() < 1e-9,
        "{a:?}"
    );
}

#[test]
fn iolog_files_are_streams_and_syncs_flushes() {
    let log = "fio version 3 iolog\n0 /w add\n0 /d add\n10 /w write 0 8192\n20 /w datasync 0 0\n30 /w write 8192 8192\n40 /d read 65536 4096\n50 /d read 0 4096\n";
    let l = parse_events(Path::new("l"), &[(Path::new("l"), log.as_bytes())]).unwrap();
    let f = fingerprint(&l, &StreamMap::default());
    assert_eq!(f.layers.len(), 1);
    assert_eq!(f.layers[0].layer, Layer::Application);
    let s = &f.layers[0].streams;
    assert_eq!(s.len(), 2);
    assert_eq!(
        (s[0].name.as_str(), s[0].writes, s[0].flushes.flushes),
        ("/w", 2, 1)
    );
    assert_eq!(s[0].flushes.per_write, 0.5);
    assert_eq!(s[0].sequential.write_share, 1.0);
    assert_eq!((s[1].name.as_str(), s[1].reads), ("/d", 2));
    assert!(s[0].outstanding.is_none());
    assert!(f.notes.iter().any(|n| n.contains("not in this trace")));
    let t = render::text(&f);
    assert!(
        t.contains("not in this trace") && t.contains("flushes per write"),
        "{t}"
    );
}

#[test]
fn profile_written_loads_and_says_what_it_measured() {
    let f = print(&[Region::parse("wal=0..1M").unwrap()]);
    let toml = profile_out::profile_toml(&f, "from-trace", None);
    let p = crate::profile::Profile::parse(&toml, "test").unwrap_or_else(|e| panic!("{e}\n{toml}"));
    assert_eq!(p.workloads.len(), 2);
    assert!(toml.contains("# measured: read share") || toml.contains("read share"));
    assert!(toml.contains("tail-page rewrites 1"), "{toml}");
    assert!(toml.contains("fdatasync = 1"), "{toml}");
    // The WAL's second write rewrites the first's last page: the profile
    // says so, and the spec it loads into writes that way.
    assert!(toml.contains("tail_rewrite = \"4K:100\""), "{toml}");
    let wal = p
        .workloads
        .iter()
        .find(|w| w.name == "wal")
        .unwrap()
        .spec(&crate::workload::WorkloadSpec::default())
        .unwrap();
    assert_eq!(wal.shape.tail_rewrite.map(|t| t.page), Some(4096));
    // No database named: the profile names none (read as SQL Server's).
    assert!(!toml.contains("\ndbms ="), "{toml}");
    assert_eq!(p.dbms, crate::dbms::Dbms::SQLSERVER);
    // With one, `iosim qualify --profile` judges it by that database's rules.
    let pg = profile_out::profile_toml(&f, "from-trace", Some(crate::dbms::Dbms::POSTGRESQL));
    let p = crate::profile::Profile::parse(&pg, "test").unwrap();
    assert_eq!(p.dbms, crate::dbms::Dbms::POSTGRESQL);
}

#[test]
fn compare_marks_out_of_tolerance() {
    use compare::within;
    use render::Kind;
    assert!(within(0.01, 0.05, Kind::Share));
    assert!(!within(0.1, 0.2, Kind::Share));
    assert!(within(1.0, 1.25, Kind::Number));
    assert!(!within(1.0, 1.3, Kind::Number));
    assert!(!within(0.0, 1.0, Kind::Rate));
    let a = print(&[]);
    let mut b = a.clone();
    b.layers[0].streams[0].read_share = 0.9;
    let c = compare::compare(&a, &b);
    assert_eq!(c.streams.len(), 2);
    let row = c.streams[0]
        .rows
        .iter()
        .find(|r| r.metric == "read share")
        .unwrap();
    assert!(
        row.out && (row.ratio.unwrap() - 1.8).abs() < 1e-9,
        "{row:?}"
    );
    assert_eq!(c.out_of_tolerance, 1);
    assert_eq!(compare::compare(&a, &a).out_of_tolerance, 0);
    let t = compare::text(&c);
    assert!(
        t.contains("OUT") && t.contains("1 metric(s) outside"),
        "{t}"
    );
}

#[test]
fn a_trace_of_one_layer_says_which_is_missing() {
    let issue_only: String = DUMP
        .lines()
        .filter(|l| !l.contains(" Q "))
        .map(|l| format!("{l}\n"))
        .collect();
    let log = parse_events(Path::new("d"), &[(Path::new("d"), issue_only.as_bytes())]).unwrap();
    let f = fingerprint(&log, &StreamMap::default());
    assert_eq!(f.layers.len(), 1);
    assert_eq!(f.layers[0].layer, Layer::Issue);
    assert!(
        f.notes.iter().any(|n| n.contains("no queue (Q) events")),
        "{:?}",
        f.notes
    );
    let toml = profile_out::profile_toml(&f, "issue-only", None);
    assert!(toml.contains("issue layer"), "{toml}");
    crate::profile::Profile::parse(&toml, "test").unwrap();
}

/// A closed loop at depth 4 (each I/O 1 ms, the next submitted 0.2 ms after
/// a completion) holds 4 most of the time: the profile's `qd` is that
/// median, not the time-weighted mean, which also counts the gaps.
#[test]
fn a_closed_loops_depth_is_the_level_it_holds_most() {
    let mut lines = Vec::new();
    let mut seq = 0;
    for slot in 0..4u64 {
        let mut t = slot * 10_000;
        for k in 0..50u64 {
            let sector = (slot * 50 + k) * 64;
            for (at, what) in [(t, "Q"), (t + 1_000_000, "C")] {
                seq += 1;
                lines.push((
                    at,
                    format!(
                        "  8,0 0 {seq} {}.{:09} 10 {what} R {sector} + 8 [t]",
                        at / 1_000_000_000,
                        at % 1_000_000_000
                    ),
                ));
            }
            t += 1_200_000;
        }
    }
    lines.sort();
    let text: String = lines.into_iter().map(|(_, l)| l + "\n").collect();
    let log = parse_events(Path::new("q.txt"), &[(Path::new("q.txt"), text.as_bytes())]).unwrap();
    let f = fingerprint(&log, &StreamMap::default());
    let o = layer(&f, Layer::Queue).streams[0]
        .outstanding
        .clone()
        .unwrap();
    assert_eq!((o.p50, o.max), (4, 4), "{o:?}");
    assert!(o.mean > 3.0 && o.mean < 3.6, "{o:?}");
    let toml = profile_out::profile_toml(&f, "loop", None);
    assert!(toml.contains("\nqd = 4\n"), "{toml}");
}

/// PostgreSQL's WAL: each commit writes from the start of the last,
/// partly filled 8 KiB page on; a one-page write is rewritten in place.
/// The page is the step back measured; a write further back, or before
/// the previous write's start, is not a tail rewrite.
#[test]
fn tail_rewrites_of_any_page_up_to_64k_and_the_page_measured() {
    let w = |at, offset, len| io(at, EventOp::Write, offset, len);
    let ios = [
        w(0, 0, 16384),
        w(1, 8192, 16384), // back 8K from 24K
        w(2, 16384, 8192), // back 8K from 24K
        w(3, 16384, 8192), // the same page again: back 8K
        w(4, 20480, 4096), // back 4K
        w(5, 0, 8192),     // before the previous write's start
        w(6, 8192, 8192),  // sequential
        w(7, 0, 1 << 20),  // a jump
        w(8, 65536, 4096), // inside, but 960 KiB back: not a page
    ];
    let data: Vec<&LayerIo> = ios.iter().collect();
    let s = sequential(&data);
    assert_eq!(s.tail_rewrites, 4);
    assert_eq!(s.tail_page_bytes, 8192);
    assert!((s.write_share - 1.0 / 8.0).abs() < 1e-9, "{s:?}");
    assert!((s.write_share_with_tail_rewrites - 5.0 / 8.0).abs() < 1e-9);
    // No rewrites: no page.
    let plain = [w(0, 0, 4096), w(1, 4096, 4096)];
    let data: Vec<&LayerIo> = plain.iter().collect();
    assert_eq!(sequential(&data).tail_page_bytes, 0);
}

/// An empty flush counts for the last write of its own process: the WAL
/// writer's flush is the WAL's though a table was written since; a flush
/// whose process wrote nothing (or is not known) follows the last write.
#[test]
fn a_flush_counts_for_its_own_process_last_write() {
    let ios = [
        at(0, EventOp::Write, 0, 8192, 10),
        at(1, EventOp::Write, 2 << 20, 8192, 20),
        flush(2, 10),
        flush(3, 30),
        flush(4, 0),
    ];
    let regions = [
        Region::parse("wal=0..1M").unwrap(),
        Region::parse("data=1M..1G").unwrap(),
    ];
    let flushes = |by_process: bool, name: &str| {
        let split = streams::split(
            &ios,
            &StreamMap::fixed(&regions),
            &["7,0".into()],
            crate::replay::TraceFormat::Blkparse,
            by_process,
        );
        split.iter().find(|x| x.name == name).map_or(0, |x| {
            x.ios.iter().filter(|i| i.op == EventOp::Flush).count()
        })
    };
    assert_eq!((flushes(true, "wal"), flushes(true, "data")), (1, 2));
    // At dispatch the task is not the submitter's: the last write of anyone's.
    assert_eq!((flushes(false, "wal"), flushes(false, "data")), (0, 3));
}

/// The trace of [`journal_commits_count_for_the_stream_they_serve`].
fn two_logs_and_a_journal() -> Vec<LayerIo> {
    let commit = |at_ns, offset| {
        let mut c = at(at_ns, EventOp::Write, offset, 4096, 9);
        c.flags.preflush = true;
        c.flags.fua = true;
        c
    };
    let mut ios = Vec::new();
    // The log (process 1): 100 appends; every other one's fdatasync
    // commits the journal (process 9: a descriptor block, then the commit
    // record); the others flush alone. The redo log (process 2) writes
    // after each and flushes its own write before the commit.
    for k in 0..100u64 {
        let t = k * 1000;
        ios.push(at(t, EventOp::Write, k * 4096, 4096, 1));
        ios.push(at(t + 1, EventOp::Write, (4 << 20) + k * 512, 512, 2));
        ios.push(flush(t + 2, 2));
        if k % 2 == 0 {
            ios.push(at(t + 3, EventOp::Write, 1 << 30, 4096, 9));
            // The redo log writes again while jbd2 writes the transaction,
            // and flushes after the commit: the commit did not serve it.
            ios.push(at(t + 4, EventOp::Write, (6 << 20) + k * 512, 512, 2));
            ios.push(commit(t + 5, (1 << 30) + 4096));
            ios.push(flush(t + 6, 2));
        } else {
            ios.push(flush(t + 3, 1));
        }
        // A table write between commits never commits the journal.
        ios.push(at(t + 500, EventOp::Write, (8 << 20) + k * 8192, 8192, 3));
    }
    ios
}

/// `ios` as a blkparse trace's queue events.
fn queued(ios: &[LayerIo]) -> EventLog {
    EventLog {
        path: "t".into(),
        files: vec![],
        format: crate::replay::TraceFormat::Blkparse,
        sources: vec!["7,0".into()],
        events: ios
            .iter()
            .map(|i| crate::replay::events::TraceEvent {
                at_ns: i.at_ns,
                action: EventAction::Queue,
                op: i.op,
                offset: i.offset,
                len: i.len,
                flags: i.flags,
                source: 0,
                pid: i.pid,
            })
            .collect(),
        notes: vec![],
    }
}

/// A log whose own flushes served nearly all its syncs does not grow
/// though a few commits were counted for it: in one commit of ten the redo
/// log wrote just before jbd2 began and flushed only after the commit, so
/// the commit counts for it (10 commits for 160 writes, 0.0625 a write,
/// over `GROWS`), but its own 150 flushes served the rest of its syncs (the
/// journal served 10 of 160: under `JOURNAL_SERVED`).
#[test]
fn a_log_that_flushes_its_own_writes_does_not_grow() {
    let mut ios = Vec::new();
    for io in two_logs_and_a_journal() {
        let k = io.at_ns / 1000;
        // Before each tenth commit's descriptor block (at t + 3).
        if k % 10 == 0 && io.at_ns % 1000 == 3 {
            let mut stray = io;
            stray.at_ns -= 1;
            stray.offset = (7 << 20) + k * 512;
            stray.len = 512;
            stray.pid = 2;
            ios.push(stray);
        }
        ios.push(io);
    }
    let regions = [
        Region::parse("wal=0..4M").unwrap(),
        Region::parse("redo=4M..8M").unwrap(),
        Region::parse("data=8M..1G").unwrap(),
        Region::parse_journal("1G..1040M").unwrap(),
    ];
    let f = fingerprint(&queued(&ios), &StreamMap::fixed(&regions));
    let redo = f.layers[0]
        .streams
        .iter()
        .find(|s| s.name == "redo")
        .unwrap();
    assert_eq!(redo.flushes.journal_commits, Some(10));
    assert!(redo.journal_commits_per_write().unwrap() > 0.05, "{redo:?}");
    let toml = profile_out::profile_toml(&f, "redo", None);
    let redo = toml.split("name = \"redo\"").nth(1).unwrap();
    let redo = redo.split("[[workload]]").next().unwrap();
    assert!(!redo.contains("fill = \"grow\""), "{redo}");
    let wal = toml.split("name = \"wal\"").nth(1).unwrap();
    let wal = wal.split("[[workload]]").next().unwrap();
    assert!(wal.contains("fill = \"grow\""), "{wal}");
}

/// `--journal`: the journal is a stream of its own, its share of the layer
/// the jbd2 share; each commit record (a journal write with preflush or
/// FUA) counts for the workload stream it serves: of those with writes not
/// flushed since, the one whose first such write came last before the
/// journal began the transaction, and the journal's plain writes (its
/// descriptor and metadata blocks) count for none. A second log that
/// flushes its own writes (InnoDB's redo log beside the binlog) takes no
/// commit though it wrote after the first log, nor does its write made
/// while jbd2 wrote the transaction. A log whose fdatasyncs
/// commit the journal grows in the profile written, and its fdatasync count
/// takes in the commits that served it.
#[test]
fn journal_commits_count_for_the_stream_they_serve() {
    let ios = two_logs_and_a_journal();
    let regions = [
        Region::parse("wal=0..4M").unwrap(),
        Region::parse("redo=4M..8M").unwrap(),
        Region::parse("data=8M..1G").unwrap(),
        Region::parse_journal("1G..1040M").unwrap(),
    ];
    Region::check_all(&regions).unwrap();
    let split = streams::split(
        &ios,
        &StreamMap::fixed(&regions),
        &["7,0".into()],
        crate::replay::TraceFormat::Blkparse,
        true,
    );
    let get = |name: &str| split.iter().find(|x| x.name == name).unwrap();
    assert_eq!(get("wal").journal_commits, Some(50));
    assert_eq!(get("redo").journal_commits, Some(0));
    assert_eq!(get("data").journal_commits, Some(0));
    assert!(get("journal").journal && get("journal").journal_commits.is_none());
    // Without --journal, no one counts commits.
    let plain = streams::split(
        &ios,
        &StreamMap::fixed(&regions[..3]),
        &["7,0".into()],
        crate::replay::TraceFormat::Blkparse,
        true,
    );
    assert!(plain.iter().all(|x| x.journal_commits.is_none()));
    // A --region may not take the journal's name beside --journal.
    let clash = [
        Region::parse("journal=0..1M").unwrap(),
        Region::parse_journal("1G..2G").unwrap(),
    ];
    assert!(Region::check_all(&clash).is_err());

    let f = fingerprint(&queued(&ios), &StreamMap::fixed(&regions));
    let q = &f.layers[0].streams;
    let journal = q.iter().find(|s| s.journal).unwrap();
    // 100 journal writes of 450 data I/Os (flushes are not data I/Os).
    assert!(
        (journal.layer_share - 100.0 / 450.0).abs() < 1e-9,
        "{journal:?}"
    );
    let toml = profile_out::profile_toml(&f, "grows", None);
    crate::profile::Profile::parse(&toml, "written").unwrap();
    assert!(!toml.contains("name = \"journal\""), "{toml}");
    let wal = toml.split("name = \"wal\"").nth(1).unwrap();
    let wal = wal.split("[[workload]]").next().unwrap();
    assert!(wal.contains("fill = \"grow\""), "{wal}");
    // 50 own flushes and 50 commits for 100 writes: one each.
    assert!(wal.contains("fdatasync = 1\n"), "{wal}");
    let data = toml.split("name = \"data\"").nth(1).unwrap();
    assert!(!data.contains("fill"), "{data}");
    let redo = toml.split("name = \"redo\"").nth(1).unwrap();
    let redo = redo.split("[[workload]]").next().unwrap();
    assert!(!redo.contains("fill = \"grow\""), "{redo}");
}

/// A map's time and its extents (name, start, end).
type MapAt<'a> = (f64, &'a [(&'a str, u64, u64)]);

fn file_map(maps: &[MapAt]) -> FileMap {
    FileMap {
        maps: maps
            .iter()
            .map(|(at, extents)| streams::FileMapAt {
                at: *at,
                extents: extents
                    .iter()
                    .map(|&(name, start, end)| streams::FileExtent {
                        name: name.into(),
                        start,
                        end,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Redis's AOF (bench/dbengines.py, 2026-12-03): a new incremental file
/// every few seconds and the base rewritten, each into blocks the other
/// freed, so half the blocks the capture touched belonged to two files in
/// turn. A block counts for the file that held it at the I/O's time: the
/// last map before it, else the next map (blocks allocated at writeback),
/// else an older one; fixed regions (the journal) first.
#[test]
fn a_file_map_gives_a_block_to_whichever_file_held_it_then() {
    const S: u64 = 1_000_000_000;
    let m = file_map(&[
        (2.0, &[("base", 0, 1 << 20), ("incr", 1 << 20, 3 << 20)]),
        (0.0, &[("incr", 0, 1 << 20)]),
        (4.0, &[("other_log", 5 << 20, 6 << 20)]),
    ]);
    let journal = [Region::parse_journal("1G..1040M").unwrap()];
    let map = StreamMap::new(&journal, Some(&m));
    let name = |offset: u64, at: u64| map.name(map.stream_of(offset, at)).to_string();
    assert_eq!(name(4096, S), "incr", "the map before it");
    assert_eq!(
        name(4096, 3 * S),
        "base",
        "the block was given to the base at 2 s"
    );
    assert_eq!(
        name(2 << 20, S),
        "incr",
        "not mapped yet at 0 s: the next map"
    );
    assert_eq!(name(5 << 20, S), "other_log", "only in a later map");
    assert_eq!(
        name(4096, 5 * S),
        "base",
        "not in the last map: the older ones, latest first"
    );
    assert_eq!(name(9 << 20, S), "other", "in no map");
    assert_eq!(name((1 << 30) + 4096, S), "journal");
    assert!(map.is_journal(map.stream_of(1 << 30, 0)));
    // One offset, two times, two streams, each with its own I/Os.
    let ios = [
        io(S, EventOp::Write, 0, 4096),
        io(3 * S, EventOp::Write, 0, 4096),
        io(3 * S + 1, EventOp::Write, 4096, 4096),
    ];
    let split = streams::split(
        &ios,
        &map,
        &["7,0".into()],
        crate::replay::TraceFormat::Blkparse,
        true,
    );
    let count = |n: &str| {
        split
            .iter()
            .find(|x| x.name == n)
            .map_or(0, |x| x.ios.len())
    };
    assert_eq!((count("incr"), count("base")), (1, 2), "{split:?}");
}

#[test]
fn a_file_map_that_cannot_be_right_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.json");
    let refused = |json: &str| {
        std::fs::write(&path, json).unwrap();
        FileMap::load(&path).unwrap_err().to_string()
    };
    let e = refused(
        r#"{"maps": [{"at": 0, "extents": [{"name": "a", "start": 0, "end": 8192}, {"name": "b", "start": 4096, "end": 9000}]}]}"#,
    );
    assert!(
        e.contains("'a' and 'b' overlap") && e.contains("--file-map"),
        "{e}"
    );
    let e = refused(r#"{"maps": [{"at": -1, "extents": []}]}"#);
    assert!(e.contains("not seconds"), "{e}");
    let e =
        refused(r#"{"maps": [{"at": 0, "extents": [{"name": "other", "start": 0, "end": 1}]}]}"#);
    assert!(e.contains("'other'"), "{e}");
    let e =
        refused(r#"{"maps": [{"at": 0, "extents": [{"name": "journal", "start": 0, "end": 1}]}]}"#);
    assert!(e.contains("give its extents with --journal"), "{e}");
    let e = refused(r#"{"maps": [{"at": 0, "extents": [{"name": "a", "start": 5, "end": 5}]}]}"#);
    assert!(e.contains("ends before it starts"), "{e}");
    let e = refused("[1, 2]");
    assert!(e.contains("\"maps\""), "{e}");
    std::fs::write(
        &path,
        r#"{"maps": [{"at": 1.5, "extents": [{"name": "wal", "start": 0, "end": 4096}]}]}"#,
    )
    .unwrap();
    let m = FileMap::load(&path).unwrap();
    assert_eq!(m.maps[0].extents[0].name, "wal");
}

/// The profile `--out` writes for a blkparse dump of a log at 0..1G (the
/// stream `name`) and the journal at 1G..1040M.
fn log_profile(text: &str, name: &str) -> String {
    let path = Path::new("log.blkparse");
    let log = parse_events(path, &[(path, text.as_bytes())]).unwrap();
    let regions = [
        Region::parse(&format!("{name}=0..1G")).unwrap(),
        Region::parse_journal("1G..1040M").unwrap(),
    ];
    let f = fingerprint(&log, &StreamMap::fixed(&regions));
    profile_out::profile_toml(&f, name, None)
}

/// Redis's AOF (bench/results, 2026-12-03): each append through the page
/// cache is written back as two bios, the 4 KiB tail page again (already
/// allocated) and the new blocks, which the block layer merges into one
/// request, and each is followed by a journal commit. The profile appends
/// what each request added (12 KiB less the page: about 8 KiB) through the page
/// cache, one fdatasync each, at the requests' rate.
#[test]
fn a_growing_logs_split_writes_are_profiled_as_the_requests_they_merge_into() {
    let mut text = String::new();
    let mut n = 0;
    let mut line = |t_us: u64, act: &str, rwbs: &str, sector: u64, sectors: u64| {
        n += 1;
        text.push_str(&format!(
            "  8,0 0 {n} {}.{:09} 10 {act} {rwbs} {sector} + {sectors} [redis]\n",
            t_us / 1_000_000,
            (t_us % 1_000_000) * 1000
        ));
    };
    let journal = 2 * 1024 * 1024; // 1 GiB in sectors
    let mut pos = 8u64; // sectors: the end of what was written
    for k in 0..200u64 {
        let t = k * 1000;
        line(t, "Q", "WS", pos - 8, 8);
        line(t + 1, "Q", "WS", pos, 16);
        line(t + 2, "D", "WS", pos - 8, 24);
        line(t + 100, "C", "WS", pos - 8, 24);
        line(t + 200, "Q", "WFS", journal + k % 64 * 8, 8);
        line(t + 201, "D", "WS", journal + k % 64 * 8, 8);
        line(t + 300, "C", "WS", journal + k % 64 * 8, 8);
        pos += 16;
    }
    let toml = log_profile(&text, "aof");
    for want in [
        "from the dispatch layer: the block layer merged this log's 400 written bios into 200 requests",
        "bs = \"8212\"", // 12,288 less 4,096 for 199 of the 200 (the first rewrote nothing)
        "cache = \"buffered\"",
        "fill = \"grow\"",
        "fdatasync = 1\n",
        "rate_iops = 100", // 200 requests in 0.2 s (1,004 a second), not the 2,008 bios
    ] {
        assert!(toml.contains(want), "{want} missing:\n{toml}");
    }
    assert!(
        !toml.contains("tail_rewrite ="),
        "the page cache rewrites the tail:\n{toml}"
    );
    crate::profile::Profile::parse(&toml, "written").unwrap();
}

/// RocksDB's WAL with `sync=1` (bench/results, 2026-12-03): a put of a few
/// hundred bytes appended through the page cache and fdatasynced is its
/// 4 KiB tail page written again, one bio, and a journal commit (the size
/// changed). Direct 4 KiB writes of that page would change no size: the
/// profile appends the bytes through the page cache instead.
#[test]
fn a_log_appended_within_its_tail_page_is_profiled_as_buffered_appends() {
    let mut text = String::new();
    let journal = 2 * 1024 * 1024; // 1 GiB in sectors
    for k in 0..400u64 {
        let t = k * 1000;
        // 16 appends of 256 bytes fill a page: the 17th starts a new one.
        let page = k / 16 * 8;
        let n = k * 4 + 1;
        for (i, (at, act, rwbs, sector)) in [
            (t, "Q", "WS", page),
            (t + 1, "D", "WS", page),
            (t + 100, "C", "WS", page),
            (t + 200, "Q", "WFS", journal + k % 64 * 8),
        ]
        .into_iter()
        .enumerate()
        {
            text.push_str(&format!(
                "  8,0 0 {} 0.{:09} 10 {act} {rwbs} {sector} + 8 [rocksdb]\n",
                n + i as u64,
                at * 1000
            ));
        }
    }
    let toml = log_profile(&text, "wal");
    // 4,096 bytes less the page for the 375 of 400 writes that rewrote it: 256.
    for want in [
        "bs = \"256\"",
        "cache = \"buffered\"",
        "fill = \"grow\"",
        "fdatasync = 1\n",
    ] {
        assert!(toml.contains(want), "{want} missing:\n{toml}");
    }
    assert!(!toml.contains("from the dispatch layer"), "{toml}");
    crate::profile::Profile::parse(&toml, "written").unwrap();
}
