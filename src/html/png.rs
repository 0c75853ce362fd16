//! Single charts as PNG (`iosim report --png`).

/// Renders an SVG document to PNG bytes with resvg (system fonts), at `scale`.
pub fn png(svg: &str, scale: f32) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    if opt.fontdb.is_empty() {
        crate::say!("iosim: warning: no system fonts found, so the PNG has no text: install a font package (e.g. fonts-dejavu-core)");
    }
    let tree = usvg::Tree::from_str(svg, &opt)?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| anyhow::anyhow!("chart size is empty"))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        anyhow::anyhow!("cannot allocate a {}x{} image", size.width(), size.height())
    })?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    Ok(pixmap.encode_png()?)
}
