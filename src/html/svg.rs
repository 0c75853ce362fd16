//! Minimal SVG charts written by hand: line/step charts with linear or log
//! axes, point labels (the saturation knee), and grouped bar charts. The same
//! SVG goes inline into the HTML report, into `--svg` files, and through
//! resvg into `--png` files, so it uses only plain SVG 1.1 (no CSS, no script).

use std::fmt::Write as _;

/// Line colours (colour-blind friendly: Okabe–Ito, then extras).
pub const PALETTE: [&str; 10] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
    "#882255", "#44AA99",
];

/// Font list: what browsers and resvg (system fonts) both find on Linux.
pub const FONT: &str = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif";

/// Axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic (values <= 0 are dropped).
    Log,
}

/// An axis.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Title.
    pub label: String,
    /// Scale.
    pub scale: Scale,
    /// Tick label formatter.
    pub fmt: fn(f64) -> String,
    /// Fixed ticks (value, label) instead of computed ones.
    pub ticks: Option<Vec<(f64, String)>>,
    /// Lower bound (default: from the data; 0 for linear axes of positive data).
    pub min: Option<f64>,
    /// Upper bound (default: from the data).
    pub max: Option<f64>,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str, fmt: fn(f64) -> String) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            fmt,
            ticks: None,
            min: None,
            max: None,
        }
    }
    /// A log axis.
    pub fn log(label: &str, fmt: fn(f64) -> String) -> Axis {
        Axis {
            scale: Scale::Log,
            ..Axis::linear(label, fmt)
        }
    }
}

/// One series.
#[derive(Clone, Debug, Default)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// Points (x, y), drawn in order.
    pub points: Vec<(f64, f64)>,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// Dashed stroke.
    pub dashed: bool,
    /// Draw a dot on each point.
    pub dots: bool,
    /// Draw as steps (histograms).
    pub step: bool,
    /// A thin, lighter stroke (a line behind the others, e.g. the maximum).
    pub thin: bool,
}

/// A labelled point (e.g. the saturation knee).
#[derive(Clone, Debug)]
pub struct Mark {
    /// Position.
    pub x: f64,
    /// Position.
    pub y: f64,
    /// Label.
    pub label: String,
    /// Index into [`PALETTE`].
    pub color: usize,
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Element id (also the `--chart` name).
    pub id: String,
    /// Title.
    pub title: String,
    /// X axis.
    pub x: Axis,
    /// Y axis.
    pub y: Axis,
    /// Series.
    pub lines: Vec<Line>,
    /// Labelled points.
    pub marks: Vec<Mark>,
}

/// Escapes text for XML and HTML (the crate's one escaper).
pub use crate::text::escape_xml as esc;

/// Tick positions 1-2-5 for a linear range.
pub fn nice_ticks(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 && out.len() < 50 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

/// Decade ticks (with 2 and 5 in between when the range is short).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mults: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let mut out = Vec::new();
    for e in a..=b {
        for m in mults {
            let v = m * 10f64.powi(e);
            if v >= lo * 0.999 && v <= hi * 1.001 {
                out.push(v);
            }
        }
    }
    out
}

struct Map {
    lo: f64,
    hi: f64,
    log: bool,
    a: f64,
    b: f64,
}

impl Map {
    fn new(axis: &Axis, vals: impl Iterator<Item = f64>, a: f64, b: f64, zero: bool) -> Map {
        let log = axis.scale == Scale::Log;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in vals.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if zero && !log && lo > 0.0 {
            lo = 0.0;
        }
        if let Some(m) = axis.min {
            lo = m;
        }
        if let Some(m) = axis.max {
            hi = m;
        }
        if log {
            // Whole decades at the ends keep log charts readable.
            if axis.min.is_none() {
                lo = 10f64.powf(lo.log10().floor());
            }
            if axis.max.is_none() {
                hi = 10f64.powf(hi.log10().ceil());
            }
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else if hi <= lo {
            hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        } else if axis.max.is_none() {
            // Round the top up to a tick.
            let t = nice_ticks(lo, hi, 5);
            if t.len() >= 2 {
                let step = t[1] - t[0];
                hi = (hi / step).ceil() * step;
            }
        }
        Map { lo, hi, log, a, b }
    }
    fn f(&self, v: f64) -> f64 {
        let (lo, hi, v) = if self.log {
            (
                self.lo.log10(),
                self.hi.log10(),
                v.max(self.lo * 1e-3).log10(),
            )
        } else {
            (self.lo, self.hi, v)
        };
        self.a + (v - lo) / (hi - lo) * (self.b - self.a)
    }
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            nice_ticks(self.lo, self.hi, 5)
        }
    }
    fn contains(&self, v: f64) -> bool {
        v.is_finite() && (!self.log || v > 0.0)
    }
}

/// One legend entry: the line's name, colour index and dash.
pub type Key = (String, usize, bool);

/// The legend entries of a chart's named lines, in order.
pub fn keys(c: &Chart) -> Vec<Key> {
    c.lines
        .iter()
        .filter(|l| !l.name.is_empty())
        .map(|l| (l.name.clone(), l.color, l.dashed))
        .collect()
}

/// The colour of palette index `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

fn legend(out: &mut String, items: &[Key], x0: f64, y0: f64, width: f64) -> f64 {
    let mut x = x0;
    let mut y = y0;
    out.push_str("<g class=\"legend\">");
    for (name, color, dashed) in items {
        let w = 28.0 + 6.5 * name.chars().count() as f64;
        if x + w > x0 + width && x > x0 {
            x = x0;
            y += 16.0;
        }
        let c = PALETTE[color % PALETTE.len()];
        let dash = if *dashed {
            " stroke-dasharray=\"5,3\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-width=\"2.5\"{dash}/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            x,
            y - 4.0,
            x + 18.0,
            y - 4.0,
            x + 22.0,
            y,
            esc(name)
        );
        x += w;
    }
    out.push_str("</g>");
    y
}

fn header(out: &mut String, id: &str, title: &str, w: f64, h: f64) {
    // The id doubles as the chart's name in --chart and in the page's check.
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"{}\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"{FONT}\" fill=\"#222\">\
         <rect class=\"bg\" x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\
         <text x=\"{:.1}\" y=\"20\" font-size=\"14\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
        esc(id),
        w / 2.0,
        esc(title)
    );
}

/// How many rows the in-chart legend of `names` takes in `width` pixels.
pub fn legend_rows(names: &[Key], width: f64) -> f64 {
    let mut rows = 1.0;
    let mut x = 0.0;
    for (n, _, _) in names {
        let w = 28.0 + 6.5 * n.chars().count() as f64;
        if x + w > width && x > 0.0 {
            rows += 1.0;
            x = 0.0;
        }
        x += w;
    }
    rows
}

/// Margins of a line chart: left, right, top.
pub const MARGINS: (f64, f64, f64) = (78.0, 44.0, 34.0);

/// Renders a line chart as a standalone `<svg>` element, its legend under
/// the plot. The legend never covers the plot: when it would take more than
/// a third of the height, the image grows taller to hold it instead.
pub fn render(c: &Chart, w: f64, h: f64) -> String {
    render_with(c, w, h, true)
}

/// Renders a line chart; without `legend` the lines are named only by their
/// tooltips, for a page that prints the legend beside the chart ([`keys`]).
pub fn render_with(c: &Chart, w: f64, h: f64, legend_in_chart: bool) -> String {
    let (ml, mr, mt) = MARGINS;
    let items: Vec<Key> = if legend_in_chart { keys(c) } else { Vec::new() };
    let leg_h = if items.is_empty() {
        0.0
    } else {
        16.0 * legend_rows(&items, w - ml - mr) + 6.0
    };
    let h = if leg_h > h / 3.0 { h + leg_h } else { h };
    let mb = 46.0 + leg_h;
    let (x0, x1, y0, y1) = (ml, w - mr, h - mb, mt);
    let pts = || {
        c.lines
            .iter()
            .flat_map(|l| l.points.iter())
            .chain(std::iter::empty())
    };
    let p = Plot {
        xm: Map::new(
            &c.x,
            pts().map(|p| p.0).chain(c.marks.iter().map(|m| m.x)),
            x0,
            x1,
            false,
        ),
        ym: Map::new(
            &c.y,
            pts().map(|p| p.1).chain(c.marks.iter().map(|m| m.y)),
            y0,
            y1,
            true,
        ),
        x0,
        x1,
        y0,
        y1,
    };
    let mut s = String::new();
    header(&mut s, &c.id, &c.title, w, h);
    p.grid(&mut s, c);
    p.frame(&mut s, c);
    let columns = (x1 - x0).max(1.0);
    let mut downsampled = 0;
    for l in &c.lines {
        if let Some(n) = p.line(&mut s, l, columns) {
            downsampled = downsampled.max(n);
        }
    }
    s.push_str("</g>");
    if downsampled > 0 {
        let _ = write!(
            s,
            "<text class=\"downsampled\" x=\"{x1:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" fill=\"#555\">\
             {downsampled} points in {columns:.0} pixel columns: each column drawn as its min-max</text>",
            y1 - 4.0
        );
    }
    for m in &c.marks {
        p.mark(&mut s, m);
    }
    if !items.is_empty() {
        legend(&mut s, &items, x0, h - leg_h + 8.0, x1 - x0);
    }
    s.push_str("</svg>");
    s
}

/// A line chart's plot area: its axes' mappings and its pixel bounds (`y0`
/// the bottom, `y1` the top).
struct Plot {
    xm: Map,
    ym: Map,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Plot {
    /// Grid lines and tick labels of both axes.
    fn grid(&self, s: &mut String, c: &Chart) {
        let Plot {
            xm,
            ym,
            x0,
            x1,
            y0,
            y1,
        } = self;
        let xt: Vec<(f64, String)> =
            c.x.ticks
                .clone()
                .unwrap_or_else(|| xm.ticks().into_iter().map(|v| (v, (c.x.fmt)(v))).collect());
        let yt: Vec<(f64, String)> =
            c.y.ticks
                .clone()
                .unwrap_or_else(|| ym.ticks().into_iter().map(|v| (v, (c.y.fmt)(v))).collect());
        for (v, label) in &xt {
            if *v < xm.lo - 1e-9 || *v > xm.hi + 1e-9 {
                continue;
            }
            let x = xm.f(*v);
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{y1:.1}\" x2=\"{x:.1}\" y2=\"{y0:.1}\" stroke=\"#e3e3e3\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
                y0 + 15.0,
                esc(label)
            );
        }
        for (v, label) in &yt {
            if *v < ym.lo - 1e-9 || *v > ym.hi + 1e-9 {
                continue;
            }
            let y = ym.f(*v);
            let _ = write!(
                s,
                "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"#e3e3e3\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
                x0 - 5.0,
                y + 4.0,
                esc(label)
            );
        }
    }

    /// The plot's frame, the axes' labels, and the opening of the clipped
    /// group the lines are drawn in.
    fn frame(&self, s: &mut String, c: &Chart) {
        let (x0, x1, y0, y1) = (self.x0, self.x1, self.y0, self.y1);
        let _ = write!(
            s,
            "<rect x=\"{x0:.1}\" y=\"{y1:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\
             <text transform=\"translate(14,{:.1}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
            x1 - x0,
            y0 - y1,
            (x0 + x1) / 2.0,
            y0 + 32.0,
            esc(&c.x.label),
            (y0 + y1) / 2.0,
            esc(&c.y.label)
        );
        let clip = format!("clip-{}", c.id);
        let _ = write!(
            s,
            "<clipPath id=\"{clip}\"><rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/></clipPath>\
             <g clip-path=\"url(#{clip})\">",
            y1 - 4.0,
            x1 - x0,
            y0 - y1 + 8.0
        );
    }

    /// Draws line `l` (and its dots); its number of points when it had more
    /// than two per pixel column (of `columns`) and was drawn as an envelope.
    fn line(&self, s: &mut String, l: &Line, columns: f64) -> Option<usize> {
        let (xm, ym) = (&self.xm, &self.ym);
        let color = PALETTE[l.color % PALETTE.len()];
        let mut d = String::new();
        let mut prev: Option<(f64, f64)> = None;
        let mapped = l
            .points
            .iter()
            .filter(|p| xm.contains(p.0) && ym.contains(p.1))
            .map(|&(x, y)| (xm.f(x), ym.f(y)));
        let many = !l.step && l.points.len() as f64 > 2.0 * columns;
        let drawn: Vec<(f64, f64)> = if many {
            envelope(mapped)
        } else {
            mapped.collect()
        };
        let downsampled = many.then_some(l.points.len());
        for &(px, py) in &drawn {
            match prev {
                None => {
                    let _ = write!(d, "M{px:.1},{py:.1}");
                }
                Some((_, qy)) if l.step => {
                    let _ = write!(d, "L{px:.1},{qy:.1}L{px:.1},{py:.1}");
                }
                Some(_) => {
                    let _ = write!(d, "L{px:.1},{py:.1}");
                }
            }
            prev = Some((px, py));
        }
        if d.is_empty() {
            return downsampled;
        }
        let dash = if l.dashed {
            " stroke-dasharray=\"6,4\""
        } else {
            ""
        };
        let width = if l.thin {
            "1\" stroke-opacity=\"0.55"
        } else {
            "2"
        };
        let _ = write!(
            s,
            "<path class=\"series\" d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" \
             stroke-linejoin=\"round\"{dash}><title>{}</title></path>",
            esc(&l.name)
        );
        // Dots help on short series; on long ones they would hide the line.
        if !many && ((l.dots && l.points.len() <= 150) || l.points.len() == 1) {
            for &(x, y) in l
                .points
                .iter()
                .filter(|p| xm.contains(p.0) && ym.contains(p.1))
            {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                    xm.f(x),
                    ym.f(y)
                );
            }
        }
        downsampled
    }

    /// A marked point: a ring, a dashed drop to the x axis, its label.
    fn mark(&self, s: &mut String, m: &Mark) {
        let (x0, x1, y0, y1) = (self.x0, self.x1, self.y0, self.y1);
        if !(self.xm.contains(m.x) && self.ym.contains(m.y)) {
            return;
        }
        let (px, py) = (self.xm.f(m.x), self.ym.f(m.y));
        let color = PALETTE[m.color % PALETTE.len()];
        let anchor = if px > (x0 + x1) / 2.0 { "end" } else { "start" };
        let dx = if anchor == "end" { -9.0 } else { 9.0 };
        let _ = write!(
            s,
            "<circle class=\"mark\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"6\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2.5\"/>\
             <line x1=\"{px:.1}\" y1=\"{py:.1}\" x2=\"{px:.1}\" y2=\"{y0:.1}\" stroke=\"{color}\" stroke-dasharray=\"2,3\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" font-weight=\"bold\" text-anchor=\"{anchor}\" fill=\"{color}\">{}</text>",
            px + dx,
            (py - 8.0).max(y1 + 10.0),
            esc(&m.label)
        );
    }
}

/// A long line (pixel coordinates, in x order) reduced to one pixel
/// column at a time: each column's lowest and highest point, in the order
/// that keeps the path short, so a spike of one point in thousands is drawn
/// (an average per column would hide it) and the path has at most two
/// points per column whatever the length of the series.
fn envelope(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut col: Option<(f64, f64, f64)> = None; // (column, lowest y, highest y)
    let flush = |out: &mut Vec<(f64, f64)>, (c, lo, hi): (f64, f64, f64)| {
        let x = c + 0.5;
        let last_y = out.last().map_or(lo, |p| p.1);
        if lo == hi {
            out.push((x, lo));
        } else if (last_y - lo).abs() <= (last_y - hi).abs() {
            out.extend([(x, lo), (x, hi)]);
        } else {
            out.extend([(x, hi), (x, lo)]);
        }
    };
    for (px, py) in points {
        let c = px.floor();
        col = match col {
            Some((k, lo, hi)) if k == c => Some((k, lo.min(py), hi.max(py))),
            Some(done) => {
                flush(&mut out, done);
                Some((c, py, py))
            }
            None => Some((c, py, py)),
        };
    }
    if let Some(done) = col {
        flush(&mut out, done);
    }
    out
}

/// A grouped bar chart: one group of bars per category.
#[allow(clippy::too_many_arguments)]
pub fn bars(
    id: &str,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
    y_max: Option<f64>,
    w: f64,
    h: f64,
) -> String {
    let (ml, mr, mt) = (60.0, 20.0, 34.0);
    let items: Vec<(String, usize, bool)> = series
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), i, false))
        .collect();
    let leg_h = 16.0 * legend_rows(&items, w - ml - mr) + 6.0;
    let mb = 40.0 + leg_h;
    let (x0, x1, y0, y1) = (ml, w - mr, h - mb, mt);
    let top = y_max.unwrap_or_else(|| {
        let m = series
            .iter()
            .flat_map(|s| s.1.iter().copied())
            .fold(0.0, f64::max);
        let t = nice_ticks(0.0, m.max(1e-9), 5);
        t.last().copied().filter(|v| *v >= m).unwrap_or(m)
    });
    let yf = |v: f64| y0 - (v / top).clamp(0.0, 1.0) * (y0 - y1);
    let mut s = String::new();
    header(&mut s, id, title, w, h);
    for v in nice_ticks(0.0, top, 5) {
        let y = yf(v);
        let _ = write!(
            s,
            "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"#e3e3e3\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            x0 - 5.0,
            y + 4.0,
            fmt_num(v)
        );
    }
    let n = categories.len().max(1) as f64;
    let gw = (x1 - x0) / n;
    let bw = (gw * 0.8) / series.len().max(1) as f64;
    // Many categories: names that would overlap are cut to their first word
    // (the run's `#id`); the whole name stays in each bar's tooltip.
    let fits = categories
        .iter()
        .all(|c| 6.2 * c.chars().count() as f64 <= gw);
    let short = |c: &str| -> String {
        if fits {
            c.to_string()
        } else {
            c.split_whitespace().next().unwrap_or("").to_string()
        }
    };
    for (ci, cat) in categories.iter().enumerate() {
        let gx = x0 + gw * ci as f64 + gw * 0.1;
        for (si, (name, vals)) in series.iter().enumerate() {
            let v = vals.get(ci).copied().unwrap_or(0.0);
            let y = yf(v);
            let _ = write!(
                s,
                "<rect class=\"series\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\">\
                 <title>{}: {} {}</title></rect>",
                gx + bw * si as f64,
                (bw - 1.0).max(1.0),
                (y0 - y).max(0.5),
                PALETTE[si % PALETTE.len()],
                esc(cat),
                esc(name),
                fmt_num(v)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            gx + gw * 0.4,
            y0 + 15.0,
            esc(&short(cat))
        );
    }
    let _ = write!(
        s,
        "<rect x=\"{x0:.1}\" y=\"{y1:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999\"/>\
         <text transform=\"translate(14,{:.1}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
        x1 - x0,
        y0 - y1,
        (y0 + y1) / 2.0,
        esc(y_label)
    );
    legend(&mut s, &items, x0, h - leg_h + 8.0, x1 - x0);
    s.push_str("</svg>");
    s
}

/// A number with about three significant digits and k/M suffixes.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Microseconds as 10us, 1.5ms, 2s.
pub fn fmt_us(v: f64) -> String {
    if v >= 1e6 {
        format!("{}s", trim(v / 1e6))
    } else if v >= 1e3 {
        format!("{}ms", trim(v / 1e3))
    } else {
        format!("{}us", trim(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The y pixel coordinates of a rendered chart's lines.
    fn path_ys(svg: &str) -> Vec<f64> {
        svg.split("class=\"series\" d=\"")
            .skip(1)
            .flat_map(|rest| {
                let d = &rest[..rest.find('"').unwrap()];
                d.split(['M', 'L'])
                    .filter(|p| !p.is_empty())
                    .map(|p| p.split(',').nth(1).unwrap().parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn a_day_of_intervals_is_drawn_small_and_keeps_its_spike() {
        // 86,400 one-second intervals, a spike in one of them.
        let series = |spike: bool| -> Vec<(f64, f64)> {
            (0..86_400)
                .map(|i| {
                    let y = if spike && i == 40_000 {
                        5000.0
                    } else {
                        100.0 + (i % 7) as f64
                    };
                    (i as f64, y)
                })
                .collect()
        };
        let chart = |spike: bool| Chart {
            id: "latency".into(),
            title: "t".into(),
            x: Axis::linear("time (s)", fmt_num),
            y: Axis::log("latency", fmt_us),
            lines: vec![Line {
                name: "p99".into(),
                points: series(spike),
                dots: true,
                ..Line::default()
            }],
            marks: vec![],
        };
        let with = render(&chart(true), 900.0, 480.0);
        let without = render(&chart(false), 900.0, 480.0);
        assert!(with.len() < 300_000, "{} bytes", with.len());
        assert!(with.contains("86400 points in") && !with.contains("<circle"));
        // The spike is the highest point drawn (smallest y), far above the rest.
        let top = |s: &str| path_ys(s).into_iter().fold(f64::INFINITY, f64::min);
        assert!(top(&with) < top(&without) - 50.0);
        // Two points a column at most.
        assert!(path_ys(&with).len() <= 2 * 900);
    }

    #[test]
    fn envelope_keeps_each_columns_extremes() {
        let pts = [
            (0.1, 5.0),
            (0.5, 1.0),
            (0.9, 3.0),
            (1.2, 4.0),
            (2.5, 9.0),
            (2.6, 2.0),
        ];
        assert_eq!(
            envelope(pts.into_iter()),
            vec![(0.5, 1.0), (0.5, 5.0), (1.5, 4.0), (2.5, 2.0), (2.5, 9.0)]
        );
    }

    #[test]
    fn ticks() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(log_ticks(1.0, 1000.0), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(10.0, 100.0), vec![10.0, 20.0, 50.0, 100.0]);
        assert_eq!(fmt_us(1500.0), "1.5ms");
        assert_eq!(fmt_us(20.0), "20us");
        assert_eq!(fmt_num(25000.0), "25k");
        assert_eq!(fmt_num(2_500_000.0), "2.5M");
    }

    #[test]
    fn renders_and_escapes() {
        let c = Chart {
            id: "t".into(),
            title: "a < b".into(),
            x: Axis::linear("x", fmt_num),
            y: Axis::log("y", fmt_us),
            lines: vec![Line {
                name: "r&d".into(),
                points: vec![(0.0, 10.0), (1.0, 0.0), (2.0, 1000.0)],
                ..Line::default()
            }],
            marks: vec![Mark {
                x: 2.0,
                y: 1000.0,
                label: "knee".into(),
                color: 0,
            }],
        };
        let s = render(&c, 600.0, 300.0);
        assert!(s.contains("a &lt; b") && s.contains("r&amp;d") && s.contains("knee"));
        // The zero is dropped on a log axis: one move and one line segment.
        let d = s.split("class=\"series\" d=\"").nth(1).unwrap();
        assert_eq!(d.split('"').next().unwrap().matches('L').count(), 1);
        let b = bars(
            "b",
            "t",
            "%",
            &["all".into()],
            &[("busy".into(), vec![50.0])],
            Some(100.0),
            400.0,
            200.0,
        );
        assert!(b.contains("<rect class=\"series\""));
    }
}
