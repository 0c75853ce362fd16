#!/usr/bin/env bash
# The Windows build, checked on Linux (docs/windows.md): installs the Rust
# target x86_64-pc-windows-gnu, Debian's mingw-w64 (the linker) and Wine
# (which runs the result); lints the Windows side of the code; cross-compiles
# iosim.exe and the library's unit tests; runs the unit tests under Wine
# (.ci/wine-runner). Prints `IOSIM_WINDOWS_EXE=PATH` last: .ci/run exports
# it, and tests/windows.rs runs that iosim.exe under Wine from the
# integration tests. Run from anywhere in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
rustup target list --installed | grep -qx "$target" || rustup target add "$target" >&2
need=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64)
[ -x /usr/lib/wine/wine64 ] || need+=(wine64)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing: ${need[*]}" >&2
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1
  else
    echo "windows.sh: missing ${need[*]}: apt-get install ${need[*]}" >&2
    exit 1
  fi
fi

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$PWD/.ci/wine-runner"
# The dev profile (opt-level 1) without debug info: Wine's timings mean
# nothing, so the build that compiles fastest; the library's unit tests and
# iosim.exe share its dependencies. (Only this script's Windows builds are
# affected: the Linux tests build in the ci profile.)
export CARGO_PROFILE_DEV_DEBUG=0
echo "== [${SECONDS}s] cargo clippy --target $target (the Windows side of the code)" >&2
cargo clippy --locked --target "$target" --all-targets -- -D warnings >&2
echo "== [${SECONDS}s] cargo build --target $target (iosim.exe)" >&2
cargo build --locked --target "$target" --bin iosim >&2
echo "== [${SECONDS}s] the library's unit tests under Wine" >&2
cargo test --locked --target "$target" --lib >&2
echo "IOSIM_WINDOWS_EXE=$PWD/target/$target/debug/iosim.exe"
