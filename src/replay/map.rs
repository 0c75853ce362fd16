//! Offsets of a trace onto the target's region.
//!
//! - `none`: offsets as traced; every I/O must fit in the region.
//! - `scale`: offset × region / trace extent (the highest byte the trace
//!   touches), aligned down; keeps the layout's shape (hot spots stay in
//!   proportion) on a smaller or larger target.
//! - `wrap`: offset modulo the region, aligned down; an I/O that would
//!   cross the end starts at the region's start instead. Keeps the distances
//!   between nearby I/Os (sequential runs stay sequential).
//! - `auto` (the default): `none` when the trace fits, else `scale`.

use serde::{Deserialize, Serialize};

use crate::units::align_down;

/// How offsets are mapped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapMode {
    /// `none` if the trace fits, else `scale`.
    #[default]
    Auto,
    /// Offsets as traced.
    None,
    /// Scaled to the region.
    Scale,
    /// Modulo the region.
    Wrap,
}

impl MapMode {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            MapMode::Auto => "auto",
            MapMode::None => "none",
            MapMode::Scale => "scale",
            MapMode::Wrap => "wrap",
        }
    }
}

/// A resolved mapping (never `Auto`).
#[derive(Clone, Copy, Debug)]
pub struct Mapper {
    /// The mode used.
    pub mode: MapMode,
    extent: u64,
    start: u64,
    len: u64,
    align: u64,
}

impl Mapper {
    /// The mapping of a trace reaching `extent` onto the region
    /// `[start, start+len)` with offsets aligned to `align`. `max_len` is
    /// the trace's largest I/O (it must fit in the region).
    pub fn new(
        mode: MapMode,
        extent: u64,
        max_len: u32,
        start: u64,
        len: u64,
        align: u64,
    ) -> Result<Mapper, String> {
        let align = align.max(1);
        if len < u64::from(max_len) {
            return Err(format!(
                "the target's region holds {} bytes, less than the trace's largest I/O ({} bytes): use a larger target",
                len, max_len
            ));
        }
        let mode = match mode {
            MapMode::Auto if extent <= len => MapMode::None,
            MapMode::Auto => MapMode::Scale,
            MapMode::None if extent > len => {
                return Err(format!(
                    "the trace reaches byte {extent} but the target's region holds {len} bytes: use --map scale or --map wrap, or a larger target"
                ))
            }
            m => m,
        };
        Ok(Mapper {
            mode,
            extent: extent.max(1),
            start,
            len,
            align,
        })
    }

    /// The target offset of a traced I/O. Always inside the region.
    #[inline]
    pub fn map(&self, offset: u64, len: u32) -> u64 {
        let len = u64::from(len);
        let o = match self.mode {
            MapMode::None | MapMode::Auto => offset,
            MapMode::Scale => {
                let o =
                    (u128::from(offset) * u128::from(self.len) / u128::from(self.extent)) as u64;
                let o = align_down(o, self.align);
                if o + len > self.len {
                    align_down(self.len - len, self.align)
                } else {
                    o
                }
            }
            MapMode::Wrap => {
                let o = align_down(offset % self.len, self.align);
                if o + len > self.len {
                    0
                } else {
                    o
                }
            }
        };
        self.start + o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        let m = Mapper::new(MapMode::Auto, 1 << 20, 4096, 0, 2 << 20, 512).unwrap();
        assert_eq!(m.mode, MapMode::None);
        assert_eq!(m.map(12345 * 512, 4096), 12345 * 512);
        let m = Mapper::new(MapMode::Auto, 4 << 20, 4096, 0, 1 << 20, 4096).unwrap();
        assert_eq!(m.mode, MapMode::Scale);
        assert_eq!(m.map(2 << 20, 4096), 512 << 10);
        assert_eq!(m.map((4 << 20) - 4096, 4096), (1 << 20) - 4096);
        let m = Mapper::new(MapMode::Wrap, 4 << 20, 8192, 4096, 1 << 20, 4096).unwrap();
        assert_eq!(m.map((1 << 20) + 8192, 4096), 4096 + 8192);
        // Crossing the end: starts over at the region's start.
        assert_eq!(m.map((1 << 20) - 4096, 8192), 4096);
        assert!(Mapper::new(MapMode::None, 4 << 20, 4096, 0, 1 << 20, 512)
            .unwrap_err()
            .contains("--map scale"));
        assert!(Mapper::new(MapMode::Scale, 4 << 20, 65536, 0, 4096, 512).is_err());
    }

    #[test]
    fn every_mapped_io_is_in_the_region_and_aligned() {
        let mut s = 7u64;
        for mode in [MapMode::Scale, MapMode::Wrap] {
            let m = Mapper::new(mode, 1 << 40, 1 << 20, 1 << 20, 3 << 30, 4096).unwrap();
            for _ in 0..10_000 {
                let off = crate::buf::wyrand(&mut s) % (1 << 40);
                let len = ((crate::buf::wyrand(&mut s) % 256) as u32 + 1) * 4096;
                let o = m.map(off, len);
                assert!(
                    o >= 1 << 20 && o + u64::from(len) <= (1 << 20) + (3 << 30),
                    "{mode:?} {off} {len} -> {o}"
                );
                assert_eq!(o % 4096, 0);
            }
        }
    }
}
