//! The test files: checked, created or expanded as SQLIO does, before the run.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::parse::DEFAULT_CREATE_SIZE;
use super::plan::Plan;
use super::text::{expand_lines, size_line, Prepared, EXPANDED};
use crate::compat::Extensions;
use crate::workload::FillMode;

/// Creates or expands the files as SQLIO does, printing its lines file by file:
/// the expansion lines, then `using ... size`.
pub(super) fn prepare_files(
    out: &mut dyn std::io::Write,
    p: &Plan,
    ext: &Extensions,
    stop: &AtomicBool,
    progress: bool,
) -> anyhow::Result<Vec<(PathBuf, Prepared)>> {
    let mut done = Vec::new();
    let mut emit = |out: &mut dyn std::io::Write, path: &Path, prep: Prepared| {
        let r = out.write_all(size_line(path, &prep).as_bytes());
        done.push((path.to_path_buf(), prep));
        r
    };
    for f in &p.files {
        let meta = std::fs::metadata(&f.path);
        let (exists, is_file, len) = match &meta {
            Ok(m) if crate::platform::fs::is_device(&f.path, m) => (true, false, 0),
            Ok(m) => (true, m.is_file(), m.len()),
            Err(_) => (false, true, 0),
        };
        if exists && !is_file {
            // Block device: sizes come from the device; the region is the parameter size.
            emit(
                out,
                &f.path,
                match f.size {
                    Some(size) => Prepared::Specified { size },
                    None => Prepared::Current {
                        size: device_len(&f.path),
                    },
                },
            )?;
            continue;
        }
        let want = f.size.or(if exists {
            None
        } else {
            Some(ext.size.unwrap_or(DEFAULT_CREATE_SIZE))
        });
        match want {
            Some(size) if size > len => {
                if exists && !crate::target::is_iosim_file(&f.path) && !ext.allow_destroy {
                    return Err(crate::Error::WouldDestroy(
                        f.path.clone(),
                        format!("it holds {len} bytes, the parameter file asks for {size}, and iosim did not create it"),
                    )
                    .into());
                }
                write!(out, "{}", expand_lines(&f.path, len, size))?;
                out.flush()?;
                // SQLIO expands and creates its files with zeros, as its write buffers hold.
                let opts = crate::target::PrepareOptions {
                    progress,
                    stop: Some(stop),
                };
                if exists {
                    crate::target::extend_test_file(&f.path, len, size, FillMode::Zero, opts)?;
                } else {
                    crate::target::create_test_file(&f.path, size, FillMode::Zero, opts)?;
                }
                out.write_all(EXPANDED.as_bytes())?;
                emit(
                    out,
                    &f.path,
                    Prepared::Expanded {
                        current: len,
                        size,
                        specified: f.size.is_some(),
                    },
                )?;
            }
            Some(size) => emit(out, &f.path, Prepared::Specified { size })?,
            None => emit(out, &f.path, Prepared::Current { size: len })?,
        }
    }
    Ok(done)
}

fn device_len(path: &Path) -> u64 {
    std::fs::File::open(path)
        .ok()
        .and_then(|f| crate::target::device_size(&f).ok())
        .unwrap_or(0)
}

/// Refuses, before anything is printed, writes that the core would refuse later.
pub(super) fn check_writable(p: &Plan, ext: &Extensions) -> anyhow::Result<()> {
    if !p.spec.writes() || ext.allow_destroy {
        return Ok(());
    }
    for f in &p.files {
        if let Ok(m) = std::fs::metadata(&f.path) {
            if !crate::target::is_iosim_file(&f.path) {
                let why = if m.is_file() {
                    "it exists and was not created by iosim"
                } else {
                    "it is not a test file iosim created (a device, or something else)"
                };
                return Err(crate::Error::WouldDestroy(f.path.clone(), why.into()).into());
            }
        }
    }
    Ok(())
}
