//! `iosim diskspd -X<profile.xml>`: DiskSpd's XML profiles (the `<Profile>`
//! documents DiskSpd's own `-Rpxml` writes and that VMFleet and other
//! frameworks generate), read into the same [`DiskspdArgs`] a command line
//! gives, so they run and print exactly as the equivalent command line would.
//!
//! The element names and meanings follow DiskSpd's schema (diskspd.xsd in
//! <https://github.com/microsoft/diskspd>, XmlProfileParser). iosim applies one
//! set of target settings to every target, as a command line does: a profile
//! whose targets differ in anything but their path is refused, naming the
//! element; so are several timespans.

use roxmltree::{Document, Node};

use super::diskspd_args::{DiskspdArgs, Format, Size, SwCache, Throughput, WriteData};
use super::Warnings;

fn err(file: &str, why: impl std::fmt::Display) -> anyhow::Error {
    super::bad_option("diskspd", &format!("-X{file}"), why)
}

fn child<'a, 'i>(n: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    n.children()
        .find(|c| c.is_element() && c.has_tag_name(name))
}

fn text<'a>(n: Node<'a, '_>, name: &str) -> Option<&'a str> {
    child(n, name).and_then(|c| c.text()).map(str::trim)
}

/// The profile's file name for errors, and the element readers that report through it.
#[derive(Clone, Copy)]
struct Reader<'f> {
    file: &'f str,
}

impl Reader<'_> {
    fn err(&self, why: impl std::fmt::Display) -> anyhow::Error {
        err(self.file, why)
    }

    fn num(&self, n: Node, name: &str) -> anyhow::Result<Option<u64>> {
        match text(n, name) {
            None => Ok(None),
            Some(t) => t
                .parse()
                .map(Some)
                .map_err(|_| self.err(format!("<{name}>{t}</{name}> is not a whole number"))),
        }
    }

    fn flag(&self, n: Node, name: &str) -> anyhow::Result<bool> {
        match text(n, name) {
            None | Some("false") | Some("0") => Ok(false),
            Some("true") | Some("1") => Ok(true),
            Some(t) => Err(self.err(format!("<{name}>{t}</{name}>: use true or false"))),
        }
    }
}

/// Reads a profile's text into command-line arguments; `file` names it in errors.
pub fn parse_profile(xml: &str, file: &str, w: &mut Warnings) -> anyhow::Result<DiskspdArgs> {
    let r = Reader { file };
    let doc = Document::parse(xml).map_err(|e| err(file, format!("not well-formed XML: {e}")))?;
    let root = doc.root_element();
    if !root.has_tag_name("Profile") {
        return Err(err(
            file,
            format!(
                "the root element is <{}>, not DiskSpd's <Profile>",
                root.tag_name().name()
            ),
        ));
    }
    let format = match text(root, "ResultFormat") {
        None | Some("text") => Format::Text,
        Some("xml") => Format::Xml,
        Some(t) => {
            return Err(err(
                file,
                format!("<ResultFormat>{t}</ResultFormat>: use text or xml"),
            ))
        }
    };
    let mut a = DiskspdArgs {
        format,
        ..DiskspdArgs::default()
    };
    a.verbose = r.flag(root, "Verbose")?;
    let ts = timespan(r, root)?;
    timespan_settings(r, ts, &mut a, w)?;
    let targets = uniform_targets(r, ts)?;
    for t in &targets {
        let p = text(*t, "Path").ok_or_else(|| err(file, "a <Target> has no <Path>"))?;
        a.targets.push(p.to_string());
    }
    target_settings(r, targets[0], &mut a, w)?;
    Ok(a)
}

/// The profile's one `<TimeSpan>`.
fn timespan<'a, 'i>(r: Reader, root: Node<'a, 'i>) -> anyhow::Result<Node<'a, 'i>> {
    let spans: Vec<Node> = child(root, "TimeSpans")
        .ok_or_else(|| r.err("no <TimeSpans>"))?
        .children()
        .filter(|c| c.is_element() && c.has_tag_name("TimeSpan"))
        .collect();
    match spans.as_slice() {
        [one] => Ok(*one),
        [] => Err(r.err("no <TimeSpan>")),
        _ => Err(r.err(format!(
            "{} timespans: iosim runs one; split the profile into one file per <TimeSpan>",
            spans.len()
        ))),
    }
}

/// The timespan's own elements: timing, threads, seed and affinity.
fn timespan_settings(
    r: Reader,
    ts: Node,
    a: &mut DiskspdArgs,
    w: &mut Warnings,
) -> anyhow::Result<()> {
    if r.flag(ts, "CompletionRoutines")? {
        w.add("<CompletionRoutines>", "completion routines are a Windows completion mechanism; iosim completes I/O through io_uring (or pread/pwrite)");
    }
    a.latency = r.flag(ts, "MeasureLatency")?;
    if r.flag(ts, "CalculateIopsStdDev")? {
        a.iops_interval_ms = Some(r.num(ts, "IoBucketDuration")?.unwrap_or(1000).max(1));
    }
    a.no_affinity = r.flag(ts, "DisableAffinity")?;
    if let Some(d) = r.num(ts, "Duration")? {
        a.duration = d;
    }
    if let Some(d) = r.num(ts, "Warmup")? {
        a.warmup = d;
    }
    if let Some(d) = r.num(ts, "Cooldown")? {
        a.cooldown = d;
    }
    if let Some(t) = r.num(ts, "ThreadCount")?.filter(|&t| t > 0) {
        a.total_threads = Some(t as u32);
    }
    if r.num(ts, "RequestCount")?.is_some_and(|n| n > 0) {
        return Err(r.err("a timespan <RequestCount> (DiskSpd's -O) is not supported; give <RequestCount> per target"));
    }
    if let Some(s) = r.num(ts, "RandSeed")? {
        a.seed = Some(Some(s));
    }
    if let Some(aff) = child(ts, "Affinity") {
        a.affinity = Some(affinity(r, aff)?);
    }
    Ok(())
}

/// The processors of an `<Affinity>`, all in group 0.
fn affinity(r: Reader, aff: Node) -> anyhow::Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for g in aff.children().filter(|c| c.is_element()) {
        let group = g.attribute("Group").unwrap_or("0");
        if group != "0" {
            return Err(r.err(format!(
                "affinity to processor group {group}: Linux has only one group (0)"
            )));
        }
        let p = g
            .attribute("Processor")
            .and_then(|p| p.parse::<usize>().ok())
            .ok_or_else(|| r.err("<AffinityGroupAssignment> needs a Processor number"))?;
        cpus.push(p);
    }
    Ok(cpus)
}

/// A target's elements but its path, sorted, with their text and attributes.
fn target_elements(t: Node) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = t
        .descendants()
        .filter(|c| c.is_element() && !c.has_tag_name("Path") && !c.has_tag_name("Target"))
        .map(|c| {
            (
                c.tag_name().name().to_string(),
                format!(
                    "{}{:?}",
                    c.text().unwrap_or("").trim(),
                    c.attributes()
                        .map(|a| (a.name(), a.value()))
                        .collect::<Vec<_>>()
                ),
            )
        })
        .collect();
    v.sort();
    v
}

/// The timespan's targets, at least one, refused unless every element of a
/// target but its path is the same for all targets.
fn uniform_targets<'a, 'i>(r: Reader, ts: Node<'a, 'i>) -> anyhow::Result<Vec<Node<'a, 'i>>> {
    let targets: Vec<Node> = child(ts, "Targets")
        .ok_or_else(|| r.err("no <Targets>"))?
        .children()
        .filter(|c| c.is_element() && c.has_tag_name("Target"))
        .collect();
    if targets.is_empty() {
        return Err(r.err("no <Target>"));
    }
    let first = target_elements(targets[0]);
    for t in &targets[1..] {
        let s = target_elements(*t);
        if s != first {
            let differs = first
                .iter()
                .zip(&s)
                .find(|(x, y)| x != y)
                .map_or("its elements".to_string(), |(x, _)| format!("<{}>", x.0));
            return Err(r.err(format!("targets differ in {differs}: iosim applies one set of target settings to every target, as a DiskSpd command line does")));
        }
    }
    Ok(targets)
}

/// The settings of the first target, which apply to every target: layout and
/// caching first, then the access pattern and load.
fn target_settings(
    r: Reader,
    t: Node,
    a: &mut DiskspdArgs,
    w: &mut Warnings,
) -> anyhow::Result<()> {
    target_layout(r, t, a, w)?;
    target_access(r, t, a)?;
    target_load(r, t, a, w)
}

/// Block size, offsets, hints, caching and the write buffer's content.
fn target_layout(r: Reader, t: Node, a: &mut DiskspdArgs, w: &mut Warnings) -> anyhow::Result<()> {
    if let Some(b) = r.num(t, "BlockSize")? {
        a.block = Size::Bytes(b);
    }
    if let Some(b) = r.num(t, "BaseFileOffset")?.filter(|&b| b > 0) {
        a.base = Some(Size::Bytes(b));
    }
    for (el, opt) in [
        ("SequentialScan", "-fs"),
        ("RandomAccess", "-fr"),
        ("TemporaryFile", "-ft"),
    ] {
        if r.flag(t, el)? {
            w.add(
                &format!("<{el}> ({opt})"),
                "file access hints are ignored: iosim gives the kernel no such hint",
            );
        }
    }
    if r.flag(t, "UseLargePages")? {
        w.add(
            "<UseLargePages> (-l)",
            "large pages are not used: iosim's buffers are page-aligned ordinary pages",
        );
    }
    if r.flag(t, "DisableOSCache")? {
        a.sw_cache = SwCache::Disabled;
    }
    if r.flag(t, "DisableLocalCache")? {
        a.sw_cache = SwCache::RemoteOnly;
    }
    a.writethrough = r.flag(t, "WriteThrough")?;
    if r.flag(t, "MemoryMappedIo")? {
        a.mmap = true;
        a.sw_cache = SwCache::Cached;
    }
    if let Some(wb) = child(t, "WriteBufferContent") {
        a.write_data = write_data(r, wb)?;
    }
    if r.flag(t, "ParallelAsyncIO")? {
        return Err(r.err("<ParallelAsyncIO> (-p) is not supported by iosim's engine"));
    }
    Ok(())
}

/// What a `<WriteBufferContent>` asks writes to carry.
fn write_data(r: Reader, wb: Node) -> anyhow::Result<WriteData> {
    Ok(match text(wb, "Pattern") {
        None | Some("sequential") => WriteData::Pattern,
        Some("zero") => WriteData::Zero,
        Some("random") => {
            let src = child(wb, "RandomDataSource")
                .ok_or_else(|| r.err("<Pattern>random</Pattern> needs a <RandomDataSource>"))?;
            if child(src, "FilePath").is_some() {
                return Err(r.err("write data from a file (<RandomDataSource><FilePath>) is not supported; use <SizeInBytes> alone"));
            }
            WriteData::RandomBuffer(Size::Bytes(
                r.num(src, "SizeInBytes")?
                    .ok_or_else(|| r.err("<RandomDataSource> needs <SizeInBytes>"))?,
            ))
        }
        Some(p) => {
            return Err(r.err(format!(
                "<Pattern>{p}</Pattern>: use sequential, zero or random"
            )))
        }
    })
}

/// Bursts, think time, file size, and random or sequential access.
fn target_access(r: Reader, t: Node, a: &mut DiskspdArgs) -> anyhow::Result<()> {
    if let Some(b) = r.num(t, "BurstSize")? {
        a.burst = Some(b as u32);
    }
    if let Some(ms) = r.num(t, "ThinkTime")? {
        a.think_ms = Some(ms);
    }
    if let Some(c) = r.num(t, "FileSize")? {
        a.create = Some(Size::Bytes(c));
    }
    if let Some(al) = r.num(t, "Random")? {
        // An alignment equal to the block size is the plain `-r`.
        a.random = Some((al != a.block.bytes(0)).then_some(Size::Bytes(al)));
        match r.num(t, "RandomRatio")? {
            None | Some(100) => {}
            Some(x @ 1..=99) => a.random_pct = Some(x as u8),
            Some(x) => return Err(r.err(format!("<RandomRatio>{x}</RandomRatio>: use 1..100"))),
        }
    } else {
        let stride = r.num(t, "StrideSize")?.map(Size::Bytes);
        a.sequential = Some((r.flag(t, "InterlockedSequential")?, stride));
    }
    if child(t, "Distribution").is_some() {
        return Err(r.err("random distributions (<Distribution>, DiskSpd's -rd) are not supported by iosim's engine"));
    }
    if let Some(s) = r.num(t, "ThreadStride")?.filter(|&s| s > 0) {
        a.thread_stride = Some(Size::Bytes(s));
    }
    if let Some(m) = r.num(t, "MaxFileSize")?.filter(|&m| m > 0) {
        a.max_size = Some(Size::Bytes(m));
    }
    Ok(())
}

/// Queue depth, write ratio, throughput, threads, priority and weight.
fn target_load(r: Reader, t: Node, a: &mut DiskspdArgs, w: &mut Warnings) -> anyhow::Result<()> {
    if let Some(n) = r.num(t, "RequestCount")? {
        a.outstanding = n as u32;
    }
    if let Some(wr) = r.num(t, "WriteRatio")? {
        a.write_pct = wr.min(100) as u8;
    }
    if let Some(th) = child(t, "Throughput") {
        let n: u64 = th
            .text()
            .unwrap_or("0")
            .trim()
            .parse()
            .map_err(|_| r.err("<Throughput> is not a whole number"))?;
        if n > 0 {
            a.throughput = Some(if th.attribute("unit") == Some("IOPS") {
                Throughput::Iops(n)
            } else {
                Throughput::BytesPerMs(n)
            });
        }
    }
    if a.total_threads.is_none() {
        if let Some(n) = r.num(t, "ThreadsPerFile")? {
            a.threads_per_target = Some(n.max(1) as u32);
        }
    }
    if let Some(p) = r.num(t, "IOPriority")? {
        a.priority = p.clamp(1, 3) as u8;
        if a.priority != 3 {
            w.add("<IOPriority>", "the priority is reported as DiskSpd does, but iosim issues all I/O at the normal I/O priority");
        }
    }
    if r.num(t, "Weight")?.is_some_and(|wt| wt != 1) && a.total_threads.is_some() {
        w.add("<Weight>", "relative target weights in a thread pool are not supported: each target gets the same share");
    }
    if child(t, "ThreadTargets").is_some() {
        return Err(r.err("<ThreadTargets> (per-thread target lists) are not supported"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = r#"<Profile>
  <Progress>0</Progress>
  <ResultFormat>xml</ResultFormat>
  <Verbose>false</Verbose>
  <TimeSpans>
    <TimeSpan>
      <CompletionRoutines>false</CompletionRoutines>
      <MeasureLatency>true</MeasureLatency>
      <CalculateIopsStdDev>true</CalculateIopsStdDev>
      <DisableAffinity>false</DisableAffinity>
      <Duration>30</Duration>
      <Warmup>2</Warmup>
      <Cooldown>0</Cooldown>
      <ThreadCount>0</ThreadCount>
      <RequestCount>0</RequestCount>
      <IoBucketDuration>500</IoBucketDuration>
      <RandSeed>7</RandSeed>
      <Targets>
        <Target>
          <Path>/mnt/a.dat</Path>
          <BlockSize>8192</BlockSize>
          <BaseFileOffset>0</BaseFileOffset>
          <DisableOSCache>true</DisableOSCache>
          <WriteThrough>true</WriteThrough>
          <WriteBufferContent><Pattern>zero</Pattern></WriteBufferContent>
          <FileSize>1073741824</FileSize>
          <Random>4096</Random>
          <RandomRatio>40</RandomRatio>
          <ThreadStride>0</ThreadStride>
          <MaxFileSize>0</MaxFileSize>
          <RequestCount>16</RequestCount>
          <WriteRatio>30</WriteRatio>
          <Throughput unit="IOPS">500</Throughput>
          <ThreadsPerFile>4</ThreadsPerFile>
          <IOPriority>3</IOPriority>
          <Weight>1</Weight>
        </Target>
      </Targets>
    </TimeSpan>
  </TimeSpans>
</Profile>"#;

    #[test]
    fn a_profile_becomes_command_line_arguments() {
        let mut w = Warnings::default();
        let a = parse_profile(PROFILE, "p.xml", &mut w).unwrap();
        assert!(w.0.is_empty(), "{:?}", w.0);
        assert_eq!(a.format, Format::Xml);
        assert!(a.latency);
        assert_eq!(a.iops_interval_ms, Some(500));
        assert_eq!((a.duration, a.warmup, a.seed), (30, 2, Some(Some(7))));
        assert_eq!(a.targets, vec!["/mnt/a.dat"]);
        assert_eq!(a.block, Size::Bytes(8192));
        assert_eq!((a.sw_cache, a.writethrough), (SwCache::Disabled, true));
        assert_eq!(a.write_data, WriteData::Zero);
        assert_eq!(a.create, Some(Size::Bytes(1 << 30)));
        assert_eq!(
            a.random,
            Some(Some(Size::Bytes(4096))),
            "4 KiB alignment of 8 KiB blocks"
        );
        assert_eq!(a.random_pct, Some(40));
        assert_eq!(a.outstanding, 16);
        assert_eq!(a.write_pct, 30);
        assert_eq!(a.throughput, Some(Throughput::Iops(500)));
        assert_eq!(a.threads_per_target, Some(4));
    }

    #[test]
    fn what_cannot_run_is_refused_by_name() {
        let mut w = Warnings::default();
        let two = PROFILE.replace(
            "</Targets>",
            "<Target><Path>/mnt/b.dat</Path><BlockSize>4096</BlockSize></Target></Targets>",
        );
        let e = parse_profile(&two, "p.xml", &mut w)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'-Xp.xml'") && e.contains("targets differ"),
            "{e}"
        );
        let e = parse_profile("<Results/>", "p.xml", &mut w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("<Profile>"), "{e}");
        let e = parse_profile("<Profile", "p.xml", &mut w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not well-formed"), "{e}");
        let spans = PROFILE.replace("</TimeSpans>", "<TimeSpan/></TimeSpans>");
        let e = parse_profile(&spans, "p.xml", &mut w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 timespans"), "{e}");
        let bad = PROFILE.replace("<Duration>30</Duration>", "<Duration>x</Duration>");
        let e = parse_profile(&bad, "p.xml", &mut w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("<Duration>x</Duration>"), "{e}");
    }
}
