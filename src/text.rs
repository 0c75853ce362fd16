//! Text helpers shared by every output format: the one XML/HTML escaper
//! (the HTML report, its SVG charts and DiskSpd's XML use it).

/// Escapes text for XML and HTML, in element content and in quoted
/// attributes: `&`, `<`, `>`, `"` and `'` become entities.
pub fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_become_entities() {
        assert_eq!(
            escape_xml(r#"<a href="x">R&D's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;R&amp;D&apos;s&lt;/a&gt;"
        );
        assert_eq!(escape_xml("plain µs"), "plain µs");
        // Escaping twice escapes the ampersands again: callers escape once.
        assert_eq!(escape_xml("&amp;"), "&amp;amp;");
    }
}
