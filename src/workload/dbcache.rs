//! The database's own cache (`--db-cache`): InnoDB's buffer pool,
//! PostgreSQL's shared_buffers, SQL Server's buffer pool. A database reads a
//! page from storage only when the page is not in its cache, so how many of
//! its page reads reach the device follows the cache's size against the
//! data's, under the workload's access skew.
//!
//! iosim models the cache as holding the hottest pages of the region (the
//! steady state of a cache that keeps what is used most): a random read of
//! one of the hottest `share` of the region's blocks is a hit, counted and
//! never issued; every other read is a miss and goes to storage. Writes are
//! not affected (a database writes its dirty pages back whatever their
//! heat). A rate cap counts hits too: it is the rate of the database's page
//! requests, so a smaller cache sends more of them to the device.

use serde::{Deserialize, Serialize};

use super::distribution::{hot_count, Distribution};

/// How much of the region the database's cache holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbCache {
    /// A share of the region, as a fraction (0 < share < 1): `25%`, or
    /// `CACHE/DATA` (`8G/100G`: your cache against your data).
    Share(f64),
    /// A size in bytes (`512M`): the cache holds that much of the region.
    Bytes(u64),
}

impl DbCache {
    /// Parses `PCT%`, `CACHE/DATA` (two sizes) or `SIZE`.
    pub fn parse(text: &str) -> Result<DbCache, String> {
        let t = text.trim();
        let eg = "e.g. --db-cache 25% (a quarter of the test region), --db-cache 8G/100G (your cache against your data) or --db-cache 512M";
        let share = if let Some(p) = t.strip_suffix('%') {
            let p: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("'{text}' is not a percentage: {eg}"))?;
            p / 100.0
        } else if let Some((c, d)) = t.split_once('/') {
            let size =
                |s: &str| crate::units::parse_size(s).map_err(|e| format!("'{text}': {e}; {eg}"));
            let (c, d) = (size(c)?, size(d)?);
            if d == 0 {
                return Err(format!("'{text}': the data size is 0; {eg}"));
            }
            c as f64 / d as f64
        } else {
            let b = crate::units::parse_size(t).map_err(|e| format!("'{text}': {e}; {eg}"))?;
            if b == 0 {
                return Err(format!("'{text}': a cache of 0 bytes holds nothing: leave --db-cache out for every read to reach storage"));
            }
            return Ok(DbCache::Bytes(b));
        };
        if !(share > 0.0 && share < 1.0) {
            return Err(format!(
                "'{text}': the cache must hold more than none and less than all of the data (every read would be a hit, and nothing would reach storage); {eg}"
            ));
        }
        Ok(DbCache::Share(share))
    }

    /// As [`DbCache::parse`] reads it back.
    pub fn arg(&self) -> String {
        match *self {
            DbCache::Share(s) => format!("{}%", round4(s * 100.0)),
            DbCache::Bytes(b) => crate::units::format_size_arg(b),
        }
    }

    /// The share of a region of `region_len` bytes the cache holds (at most 1).
    pub fn share_of(&self, region_len: u64) -> f64 {
        match *self {
            DbCache::Share(s) => s,
            DbCache::Bytes(b) if region_len == 0 => f64::from(u8::from(b > 0)),
            DbCache::Bytes(b) => (b as f64 / region_len as f64).min(1.0),
        }
    }

    /// Refuses a cache that holds all of a region of `region_len` bytes:
    /// every read would be served from it, and the run would measure
    /// nothing.
    pub fn fits(&self, region_len: u64) -> Result<(), String> {
        if self.share_of(region_len) < 1.0 {
            return Ok(());
        }
        Err(format!(
            "--db-cache {self} holds all of the {} region, so every read would be served from it and none would reach the storage: give a smaller cache, a share (25%) or your cache against your data (8G/100G)",
            crate::units::format_size_arg(region_len)
        ))
    }

    /// How many of `slots` random positions (ranks, hottest first) the cache
    /// holds: reads at a rank below it are hits.
    pub fn cached_ranks(&self, slots: u64, region_len: u64) -> u64 {
        let share = self.share_of(region_len);
        if slots == 0 || share <= 0.0 {
            return 0;
        }
        if share >= 1.0 {
            return slots;
        }
        hot_count(slots, share)
    }

    /// The share of random reads the cache should serve under `dist` over
    /// `slots` positions: the distribution's weight of the cached ranks.
    pub fn expected_hit_ratio(&self, dist: Distribution, slots: u64, region_len: u64) -> f64 {
        let k = self.cached_ranks(slots, region_len);
        if k == 0 {
            return 0.0;
        }
        if k >= slots {
            return 1.0;
        }
        dist.expected_share(slots, k as f64 / slots as f64)
    }
}

impl std::fmt::Display for DbCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.arg())
    }
}

/// Rounds to 4 decimals, for text that reads back to the same value.
fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// What the cache served in a run: in the JSON result as `shape.db_cache`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbCacheResult {
    /// The cache asked for (`25%`, `512M`).
    pub cache: String,
    /// The share of the region it held.
    pub share: f64,
    /// The database's page reads in the window: hits and reads from storage.
    pub reads: u64,
    /// Of them, served by the cache (never issued).
    pub hits: u64,
    /// hits / reads.
    pub hit_ratio: f64,
    /// What the access skew predicts for that cache (the distribution's
    /// weight of the cached share).
    pub expected_hit_ratio: f64,
}

impl DbCacheResult {
    /// One line for the text report.
    pub fn text(&self) -> String {
        format!(
            "database cache {} ({:.1}% of the region): {} of {} page reads served from it ({:.1}%; the access skew predicts {:.1}%), {} from storage\n",
            self.cache,
            self.share * 100.0,
            self.hits,
            self.reads,
            self.hit_ratio * 100.0,
            self.expected_hit_ratio * 100.0,
            self.reads - self.hits
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_is_a_share_a_ratio_of_two_sizes_or_a_size() {
        assert_eq!(DbCache::parse("25%"), Ok(DbCache::Share(0.25)));
        assert_eq!(DbCache::parse("8G/100G"), Ok(DbCache::Share(0.08)));
        assert_eq!(DbCache::parse("512M"), Ok(DbCache::Bytes(512 << 20)));
        assert_eq!(DbCache::parse("25%").unwrap().arg(), "25%");
        assert_eq!(DbCache::parse("512M").unwrap().arg(), "512M");
        for bad in ["0%", "100%", "120%", "8G/4G", "x%", "1G/0", "0", "lots"] {
            let e = DbCache::parse(bad).unwrap_err();
            assert!(e.contains("--db-cache"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_cached_ranks_follow_the_share_of_the_region() {
        let c = DbCache::Share(0.25);
        assert_eq!(c.cached_ranks(1000, 4 << 20), 250);
        let b = DbCache::Bytes(1 << 20);
        assert_eq!(b.cached_ranks(1024, 4 << 20), 256);
        // A cache larger than the region holds all of it.
        assert_eq!(DbCache::Bytes(8 << 20).cached_ranks(1024, 4 << 20), 1024);
        assert_eq!(c.cached_ranks(0, 0), 0);
        // A cache that holds the whole region is refused: no read would reach storage.
        assert!(b.fits(4 << 20).is_ok());
        let e = DbCache::Bytes(8 << 20).fits(4 << 20).unwrap_err();
        assert!(e.contains("holds all of the 4M region"), "{e}");
    }

    /// Uniform access: the hit ratio is the cache's share of the data; a
    /// skew sends more of the reads to the cached (hottest) pages.
    #[test]
    fn the_expected_hit_ratio_is_the_skews_weight_of_the_cache() {
        let c = DbCache::Share(0.2);
        let u = c.expected_hit_ratio(Distribution::Uniform, 10_000, 1 << 30);
        assert!((u - 0.2).abs() < 1e-9, "{u}");
        let z = c.expected_hit_ratio(Distribution::Zipf(1.1), 10_000, 1 << 30);
        assert!(z > 0.8, "{z}");
        let all = DbCache::Bytes(2 << 30).expected_hit_ratio(Distribution::Uniform, 10, 1 << 30);
        assert_eq!(all, 1.0);
    }
}
