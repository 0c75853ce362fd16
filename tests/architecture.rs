//! docs/architecture.md stays true to the tree: every top-level module of
//! `src/` (each `mod` of `src/lib.rs`, file or folder) and every folder below
//! them has a row in its module map, and `src/lib.rs`'s own list names every
//! public module. A module added without its place on the map fails here.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The modules `src/lib.rs` declares (`pub mod x;`, `mod x;`), with whether
/// each is public; `#[cfg(test)]` modules left out.
fn lib_modules() -> Vec<(String, bool)> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let mut out = Vec::new();
    let mut test_only = false;
    for line in lib.lines() {
        let l = line.trim();
        if l.starts_with("#[cfg(test)]") {
            test_only = true;
            continue;
        }
        let (public, rest) = match l.strip_prefix("pub mod ") {
            Some(r) => (true, r),
            None => match l.strip_prefix("mod ") {
                Some(r) => (false, r),
                None => {
                    test_only = false;
                    continue;
                }
            },
        };
        if let Some(name) = rest.strip_suffix(';') {
            if !test_only {
                out.push((name.to_string(), public));
            }
        }
        test_only = false;
    }
    out
}

/// The text of the "Module map" section of docs/architecture.md.
fn module_map() -> String {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let start = doc
        .find("## Module map")
        .expect("docs/architecture.md has a '## Module map' section");
    let rest = &doc[start + 3..];
    let end = rest.find("\n## ").map(|i| i + 1).unwrap_or(rest.len());
    rest[..end].to_string()
}

/// Every folder under `src/`, as a path relative to it (`engine`, `compat/diskspd`).
fn folders(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            let name = e.file_name().to_string_lossy().to_string();
            let r = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            folders(&e.path(), &r, out);
            out.push(r);
        }
    }
}

#[test]
fn every_top_level_module_is_on_the_module_map() {
    let map = module_map();
    let mods = lib_modules();
    assert!(
        mods.len() > 20,
        "read the module list of src/lib.rs: {mods:?}"
    );
    let missing: Vec<&str> = mods
        .iter()
        .map(|(m, _)| m.as_str())
        .filter(|m| {
            let folder = root().join("src").join(m).is_dir();
            let names = if folder {
                vec![format!("`{m}/`")]
            } else {
                vec![format!("`{m}`"), format!("`{m}.rs`")]
            };
            !names.iter().any(|n| map.contains(n.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md's module map has no row for these modules of src/lib.rs \
         (a folder is written `name/`, a file `name`): {missing:?}"
    );
}

#[test]
fn every_folder_is_on_the_module_map() {
    let map = module_map();
    let mut all = Vec::new();
    folders(&root().join("src"), "", &mut all);
    // Asset folders hold no Rust modules (CSS and JS the HTML pages include).
    all.retain(|f| !f.ends_with("assets"));
    assert!(all.len() > 10, "read the folders of src/: {all:?}");
    let missing: Vec<&String> = all
        .iter()
        .filter(|f| !map.contains(&format!("`{f}/`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md's module map does not name these folders of src/: {missing:?}"
    );
}

#[test]
fn lib_rs_lists_every_public_module() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let docs: String = lib
        .lines()
        .filter(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let missing: Vec<String> = lib_modules()
        .into_iter()
        .filter(|(m, public)| *public && !docs.contains(&format!("[`{m}`]")))
        .map(|(m, _)| m)
        .collect();
    assert!(
        missing.is_empty(),
        "src/lib.rs's module list (its //! comment) does not name: {missing:?}"
    );
}
