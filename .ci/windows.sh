#!/usr/bin/env bash
# The Windows build, checked on Linux (docs/windows.md): installs the Rust
# target x86_64-pc-windows-gnu, Debian's mingw-w64 (the linker) and, before
# the tests, Wine (which runs the result); lints the Windows side of the code; cross-compiles
# iosim.exe (linted as it is built) and the library's unit tests; runs the
# unit tests under Wine (.ci/wine-runner). Prints `IOSIM_WINDOWS_EXE=PATH` last: .ci/run exports
# it, and tests/windows.rs runs that iosim.exe under Wine from the
# integration tests. Run from anywhere in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
rustup target list --installed | grep -qx "$target" || rustup target add "$target" >&2
# Installs PACKAGE if COMMAND (a path to test with -x, or a command name) is
# missing; waits for apt's lock (.ci/run installs the tests' packages, Wine
# among them, in the background while this builds).
need() {
  if [ -x "$1" ] || command -v "$1" >/dev/null 2>&1; then
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing: $2" >&2
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y -qq --no-install-recommends "$2" >/dev/null 2>&1
  else
    echo "windows.sh: missing $2: apt-get install $2" >&2
    exit 1
  fi
}
need x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$PWD/.ci/wine-runner"
# One compilation per artefact, linted as it is built: cargo clippy is cargo
# check with clippy-driver wrapping rustc for the workspace's own crates
# (RUSTC_WORKSPACE_WRAPPER), and the same wrapper around cargo build/test
# lints the code and produces the program in one pass, where a separate
# clippy pass compiled the crate a third time. -D warnings reaches only this
# package's crates (dependencies are built with --cap-lints). The ci profile
# at opt-level 0 for the Windows side: Wine's timings mean nothing, so the
# build that compiles fastest; the unit tests and iosim.exe share their
# dependencies. (The few dependencies the per-I/O path calls into keep their
# opt-level 3 entries: small crates.) In a build directory of its own,
# target/windows: Cargo lets one build at a time use a build directory, and
# this one runs beside .ci/run's Linux build (in target/ci, which it shared
# for its host build scripts and proc macros, the two builds took turns:
# measured 2026-12-03, 558 s of builds one after the other).
profile=(--target-dir target/windows --profile ci --config 'profile.ci.opt-level=0' --config 'profile.ci.package.iosim.opt-level=0')
export RUSTC_WORKSPACE_WRAPPER="${CLIPPY_DRIVER:-$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)}"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-D warnings"
# mingw-w64's gcc, linking, leaves empty temporary files behind (about 40
# /tmp/ccXXXXXX a build, 2026-12-03): the builds keep theirs in the build
# directory.
scratch="$PWD/target/windows/tmp"
mkdir -p "$scratch"
echo "== [${SECONDS}s] cargo build --target $target, linted by clippy (iosim.exe)" >&2
TMPDIR="$scratch" cargo build --locked "${profile[@]}" --target "$target" --bin iosim >&2
need /usr/lib/wine/wine64 wine64
# The unit tests are built without the lint wrapper: the library's code was
# linted for Windows just above, and its tests are linted on Linux (.ci/run);
# what goes unlinted is test code only Windows compiles (cfg(windows) tests).
# It spares the last build of the run, which the tests wait for, the lints'
# time.
echo "== [${SECONDS}s] the library's unit tests, under Wine" >&2
TMPDIR="$scratch" env -u RUSTC_WORKSPACE_WRAPPER cargo test --locked "${profile[@]}" --target "$target" --lib --no-run >&2
env -u RUSTC_WORKSPACE_WRAPPER cargo test --locked "${profile[@]}" --target "$target" --lib >&2
echo "IOSIM_WINDOWS_EXE=$PWD/target/windows/$target/ci/iosim.exe"
