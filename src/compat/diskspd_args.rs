//! The parsed form of a DiskSpd command line (or XML profile): what
//! [`super::diskspd`] plans and prints and [`super::xmlprofile`] reads a
//! `<Profile>` into. Kept apart so the two do not import each other.

use serde::{Deserialize, Serialize};

/// A size as DiskSpd writes it: bytes, or blocks (`b` suffix) of the block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Size {
    /// Bytes.
    Bytes(u64),
    /// Blocks of `-b`.
    Blocks(u64),
}

impl Size {
    /// Bytes, given the block size.
    pub fn bytes(self, bs: u64) -> u64 {
        match self {
            Size::Bytes(b) => b,
            Size::Blocks(n) => n.saturating_mul(bs),
        }
    }
}

/// DiskSpd's software cache setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SwCache {
    /// Default / `-Sb`.
    Cached,
    /// `-Su` (and `-S`, `-Sh`, `-h`).
    Disabled,
    /// `-Sr`: local cache off, remote cache on.
    RemoteOnly,
}

/// What writes carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteData {
    /// DiskSpd's default repeating byte pattern.
    Pattern,
    /// `-Z`: zeros.
    Zero,
    /// `-Zr`: random data for each write.
    RandomPerIo,
    /// `-Z<size>`: a random buffer of that size.
    RandomBuffer(Size),
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// `-Rtext` (default).
    Text,
    /// `-Rxml`.
    Xml,
}

/// Which DiskSpd's text layout to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    /// DiskSpd 2.2 (the current release): the default.
    #[default]
    V2_2,
    /// DiskSpd 2.0.21a, for scripts written against it (`--layout 2.0`).
    V2_0,
}

/// A `-g` throughput limit per thread and target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Throughput {
    /// `-g<n>`: bytes per millisecond.
    BytesPerMs(u64),
    /// `-g<n>i`: I/Os per second.
    Iops(u64),
}

/// A parsed DiskSpd command line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskspdArgs {
    /// `-b`.
    pub block: Size,
    /// `-c`.
    pub create: Option<Size>,
    /// `-d` seconds.
    pub duration: u64,
    /// `-W` seconds.
    pub warmup: u64,
    /// `-C` seconds.
    pub cooldown: u64,
    /// Software cache.
    pub sw_cache: SwCache,
    /// Writethrough (`-Sw`, `-Sh`, `-h`).
    pub writethrough: bool,
    /// Memory-mapped I/O (`-Sm`).
    pub mmap: bool,
    /// `-L`.
    pub latency: bool,
    /// `-o`.
    pub outstanding: u32,
    /// `-t`.
    pub threads_per_target: Option<u32>,
    /// `-F`.
    pub total_threads: Option<u32>,
    /// `-T`.
    pub thread_stride: Option<Size>,
    /// `-r[align]`: Some(None) is random aligned to the block size.
    #[serde(with = "nested_option")]
    pub random: Option<Option<Size>>,
    /// `-s[i][stride]`: (interlocked, stride).
    pub sequential: Option<(bool, Option<Size>)>,
    /// `-rs<pct>` with 1..99: the share of random I/Os in a mixed stream.
    pub random_pct: Option<u8>,
    /// `-g<n>`: bytes per millisecond per thread, or `-g<n>i`: IOPS per thread.
    pub throughput: Option<Throughput>,
    /// `-i<count>`: I/Os per burst.
    pub burst: Option<u32>,
    /// `-j<ms>`: think time between bursts.
    pub think_ms: Option<u64>,
    /// `-w`.
    pub write_pct: u8,
    /// `-Z...`.
    pub write_data: WriteData,
    /// `-z[seed]`: Some(None) is a time-based seed.
    #[serde(with = "nested_option")]
    pub seed: Option<Option<u64>>,
    /// `-a#,#`.
    pub affinity: Option<Vec<usize>>,
    /// `-n`.
    pub no_affinity: bool,
    /// `-B`.
    pub base: Option<Size>,
    /// `-f<size>`.
    pub max_size: Option<Size>,
    /// `-D[ms]`.
    pub iops_interval_ms: Option<u64>,
    /// `-R`.
    pub format: Format,
    /// `-Rp...`: print the profile only.
    pub profile_only: bool,
    /// `-v`.
    pub verbose: bool,
    /// `-I<1|2|3>`: DiskSpd's I/O priority hint (3 = normal).
    pub priority: u8,
    /// Targets as written.
    pub targets: Vec<String>,
}

impl Default for DiskspdArgs {
    fn default() -> Self {
        DiskspdArgs {
            block: Size::Bytes(64 << 10),
            create: None,
            duration: 10,
            warmup: 5,
            cooldown: 0,
            sw_cache: SwCache::Cached,
            mmap: false,
            writethrough: false,
            latency: false,
            outstanding: 2,
            threads_per_target: None,
            total_threads: None,
            thread_stride: None,
            random: None,
            sequential: None,
            random_pct: None,
            throughput: None,
            burst: None,
            think_ms: None,
            write_pct: 0,
            write_data: WriteData::Pattern,
            seed: None,
            affinity: None,
            no_affinity: false,
            base: None,
            max_size: None,
            iops_interval_ms: None,
            format: Format::Text,
            profile_only: false,
            verbose: false,
            priority: 3,
            targets: Vec::new(),
        }
    }
}

/// An `Option<Option<T>>` that keeps `Some(None)` apart from `None` in JSON
/// (plain serde writes both as `null`): `null` is None, `[x]` is Some(x).
mod nested_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        v.as_ref().map(std::slice::from_ref).serialize(s)
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Ok(Option::<Vec<Option<T>>>::deserialize(d)?.and_then(|v| v.into_iter().next()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsed_options_survive_json() {
        for random in [None, Some(None), Some(Some(Size::Blocks(2)))] {
            let a = DiskspdArgs {
                random,
                seed: random.map(|_| None),
                ..DiskspdArgs::default()
            };
            let back: DiskspdArgs =
                serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
            assert_eq!(back, a);
        }
    }
}
