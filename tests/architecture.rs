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

/// Every `.rs` file under `dir`, with its text.
fn rust_files(dir: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            out.push((p, text));
        }
    }
}

/// The names a Rust file defines: functions, types, traits, constants,
/// statics, modules, macros, enum variants and struct fields (by their
/// declaration lines; good enough for a check of a document's names).
fn defined_names(text: &str, out: &mut std::collections::HashSet<String>) {
    const KEYWORDS: [&str; 9] = [
        "fn ",
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "const ",
        "static ",
        "mod ",
        "macro_rules! ",
    ];
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for line in text.lines() {
        let l = line.trim_start();
        for k in KEYWORDS {
            let mut rest = l;
            while let Some(i) = rest.find(k) {
                let before = rest[..i].chars().last();
                let name = ident(&rest[i + k.len()..]);
                if !name.is_empty() && before.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
                {
                    out.insert(name);
                }
                rest = &rest[i + k.len()..];
            }
        }
        // An enum variant (`Name,` `Name(` `Name {`) or a field (`pub name: T`).
        let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
        let l = l.strip_prefix("pub ").unwrap_or(l);
        let name = ident(l);
        if !name.is_empty() {
            let after = l[name.len()..].trim_start();
            if after.is_empty()
                || after.starts_with(',')
                || after.starts_with('(')
                || after.starts_with('{')
                || after.starts_with(':') && !after.starts_with("::")
            {
                out.insert(name);
            }
        }
    }
}

/// Names the architecture page puts in backticks that are not iosim's own:
/// the kernel's, the databases' settings, Rust's and the example paths the
/// page uses to explain its rules.
const EXTERNAL: &[&str] = &[
    "IORING_ENTER_GETEVENTS", // the kernel's io_uring_enter flag
    "IORING_SQ_TASKRUN",      // the kernel's ring flag
    "Unsupported",            // std::io::ErrorKind::Unsupported
    "std",                    // Rust's standard library
    "fs",                     // std::fs
    "write",                  // std::fs::write
    "unsafe",                 // the keyword
    "min",                    // the argument of reap(min, out)
    "Box",                    // Box<dyn IoEngine>
    "crate",
    "self",
    "super",
    "a", // the page's made-up paths: crate::a::b, super::x
    "b",
    "x",
    "CONCERN", // crate::platform::CONCERN::f, a pattern
    "f",
    "wal_sync_method",     // PostgreSQL's setting
    "innodb_flush_method", // MariaDB's and MySQL's settings
    "innodb_flush_log_at_trx_commit",
];

/// Every name in backticks on docs/architecture.md that reads as a Rust
/// path (`IoEngine::reap`, `choose`, `create(...)`, `Next::Io`) is defined in
/// src/ or tests/ (or is one of [`EXTERNAL`]): a function renamed or removed
/// without the page following fails here. A path `Type::item` also needs
/// `item` defined in a file that defines or implements `Type`.
#[test]
fn every_name_on_the_architecture_page_is_defined() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests"), &mut files);
    let mut names = std::collections::HashSet::new();
    for (p, text) in &files {
        defined_names(text, &mut names);
        names.insert(p.file_stem().unwrap().to_string_lossy().to_string());
    }
    names.extend(EXTERNAL.iter().map(|s| s.to_string()));
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let is_path = |s: &str| {
        let s = s.split('(').next().unwrap_or(s);
        !s.is_empty()
            && s.split("::").all(|seg| {
                seg.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    };
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, span) in doc.split('`').enumerate() {
        if i % 2 == 0 || span.contains(' ') && !span.contains('(') || !is_path(span) {
            continue;
        }
        checked += 1;
        let path: Vec<&str> = span.split('(').next().unwrap().split("::").collect();
        for seg in &path {
            if !names.contains(*seg) {
                missing.push(span.to_string());
            }
        }
        // `Type::item`: item lives where Type is defined or implemented.
        if let [.., ty, item] = path.as_slice() {
            if ty.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && !EXTERNAL.contains(ty) {
                let home = files.iter().any(|(_, t)| {
                    (t.contains(&format!("struct {ty}"))
                        || t.contains(&format!("enum {ty}"))
                        || t.contains(&format!("trait {ty}"))
                        || t.contains(&format!(" for {ty} "))
                        || t.contains(&format!("impl {ty} "))
                        || t.contains(&format!("impl {ty}<")))
                        && {
                            let mut n = std::collections::HashSet::new();
                            defined_names(t, &mut n);
                            n.contains(*item)
                        }
                });
                if !home {
                    missing.push(format!("{span} ({item} is not defined beside {ty})"));
                }
            }
        }
    }
    assert!(checked > 100, "read the page's names: {checked}");
    missing.dedup();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names what src/ and tests/ do not define (rename it on the page, or add a real external name to EXTERNAL): {missing:?}"
    );
}

/// The page's claim "`unsafe` lives here, in `buf` and in `platform/`" (the
/// engine's row) holds: no other file of src/ has an unsafe block, function
/// or impl.
#[test]
fn unsafe_lives_only_where_the_page_says() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    assert!(
        doc.contains("`unsafe` lives here, in `buf` and in `platform/`"),
        "the page's claim about unsafe moved: update this test with it"
    );
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let src = root().join("src");
    let outside: Vec<String> = files
        .iter()
        .filter(|(p, _)| {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            !(rel.starts_with("engine/") || rel == "buf.rs" || rel.starts_with("platform/"))
        })
        .filter(|(_, t)| {
            t.lines().any(|l| {
                let code = l.split("//").next().unwrap_or("");
                code.contains("unsafe {")
                    || code.contains("unsafe fn ")
                    || code.contains("unsafe impl ")
                    || code.trim_end().ends_with("unsafe")
            })
        })
        .map(|(p, _)| p.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    assert!(
        outside.is_empty(),
        "unsafe outside engine/, buf.rs and platform/ (docs/architecture.md says it lives only there): {outside:?}"
    );
}
