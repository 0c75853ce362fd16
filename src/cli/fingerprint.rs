//! `iosim fingerprint TRACE...`: a trace's statistics, a profile from them,
//! or two fingerprints compared.

use std::path::PathBuf;

use clap::Args;

use crate::fingerprint::Region;

/// `iosim fingerprint`.
#[derive(Debug, Clone, Args)]
pub struct FingerprintArgs {
    /// Traces, each fingerprinted on its own: a blktrace file or the NAME of NAME.blktrace.N files
    /// (as from `iosim capture`), a blkparse text dump, or a fio iolog (v2/v3).
    #[arg(required_unless_present = "compare", value_name = "TRACE")]
    pub traces: Vec<PathBuf>,

    /// Split the device into streams by offset, each with its own figures (repeat it;
    /// e.g. --region wal=0..512M --region data=512M..8G; I/Os in no region make the stream 'other';
    /// a name given again adds a range to its stream, as a file's extents).
    #[arg(long, value_name = "NAME=START..END", value_parser = region_arg)]
    pub region: Vec<Region>,

    /// The file system's journal on the device (ext4's journal inode's extents; repeat it for
    /// each): the stream 'journal', which the file system writes (its share of the I/Os is the
    /// jbd2 share), and each commit record counts for the stream whose write came last before
    /// it. With --out, a log whose fdatasyncs commit the journal grows (fill = "grow").
    #[arg(long, value_name = "START..END", value_parser = journal_arg)]
    pub journal: Vec<Region>,

    /// Where the files lay during the capture, over time (JSON: maps of their extents, each
    /// taken at a time of the trace): each I/O counts for the file that held its blocks then, so
    /// that rotated logs and files deleted and made again are streams too (docs/fingerprint.md,
    /// "Files that come and go"). --region and --journal are looked up first.
    #[arg(long, value_name = "FILE", conflicts_with = "compare")]
    pub file_map: Option<PathBuf>,

    /// Print the fingerprint (or the comparison) as JSON; --compare reads it back.
    #[arg(long)]
    pub json: bool,

    /// Write an iosim profile (TOML) that reproduces the fingerprint; run it with
    /// `iosim run --profile FILE PATH`. Never replaces a file iosim did not write.
    #[arg(long, value_name = "FILE", conflicts_with = "compare")]
    pub out: Option<PathBuf>,

    /// With --out: the database the trace is of, written as the profile's `dbms` so that
    /// `iosim qualify --profile FILE` judges it by that database's rules (default: none
    /// written, which profiles read as sqlserver).
    #[arg(long, value_enum, requires = "out")]
    pub dbms: Option<crate::dbms::Dbms>,

    /// Compare two traces or saved fingerprints (`--json` output): every metric side by side
    /// with the ratio B/A, per layer and stream, and those outside the tolerance marked.
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with = "traces")]
    pub compare: Option<Vec<PathBuf>>,
}

impl FingerprintArgs {
    /// The streams' regions: `--region`s, then `--journal`s.
    pub fn regions(&self) -> Vec<Region> {
        self.region.iter().chain(&self.journal).cloned().collect()
    }
}

fn region_arg(s: &str) -> Result<Region, String> {
    Region::parse(s).map_err(|e| e.to_string())
}

fn journal_arg(s: &str) -> Result<Region, String> {
    Region::parse_journal(s).map_err(|e| e.to_string())
}
