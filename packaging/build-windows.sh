#!/bin/sh
# Builds iosim for Windows on Linux (docs/windows.md): the release binary
# target/x86_64-pc-windows-gnu/release/iosim.exe, cross-compiled for
# x86_64-pc-windows-gnu and linked by Debian's mingw-w64, and a zip beside
# it, target/packaging/iosim-VERSION-windows-x86_64.zip, holding iosim.exe,
# the README, the docs, the example profiles and the licences.
# Needs: rustup target add x86_64-pc-windows-gnu; apt-get install gcc-mingw-w64-x86-64.
# Run from anywhere in the repository.
set -eu
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    echo "build-windows.sh: the Rust target $target is not installed; run: rustup target add $target" >&2
    exit 1
fi
if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    echo "build-windows.sh: the mingw-w64 linker is not installed; run: apt-get install gcc-mingw-w64-x86-64" >&2
    exit 1
fi

cargo build --release --locked --target "$target" --bin iosim
exe="target/$target/release/iosim.exe"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
name="iosim-$version-windows-x86_64"
stage="target/packaging/$name"
rm -rf "$stage" "target/packaging/$name.zip"
mkdir -p "$stage/docs" "$stage/examples"
cp "$exe" README.md LICENSE-MIT LICENSE-APACHE "$stage/"
cp docs/*.md "$stage/docs/"
cp examples/* "$stage/examples/"
# Not the Wine test shim (packaging/windows/bcryptprimitives.c): real
# Windows 10 and later have bcryptprimitives.dll.
(cd target/packaging && python3 -m zipfile -c "$name.zip" "$name")
echo "built $exe and target/packaging/$name.zip"
