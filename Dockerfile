# iosim container image (docs/install.md): build with Debian's Rust image,
# run on debian slim. Build:   docker build -t iosim .
# Run:     docker run --rm -v /mnt/data:/data iosim run /data/test.dat -d 30s
# The image's entrypoint is iosim; its arguments are iosim's.

# --- build stage: the official Rust image on Debian bookworm (rustup toolchain,
# gcc for the bundled SQLite). The crate needs Rust >= 1.85.
FROM rust:1-bookworm AS build
WORKDIR /src
# Dependencies first, so a source change does not rebuild them.
COPY Cargo.toml Cargo.lock ./
RUN mkdir src && echo 'fn main() {}' > src/main.rs && touch src/lib.rs \
    && cargo build --release --locked \
    && rm -rf src
COPY src ./src
# Refresh the timestamps so cargo rebuilds the crate itself, not the stubs.
RUN touch src/main.rs src/lib.rs && cargo build --release --locked \
    && ./target/release/iosim --version

# --- runtime stage: the binary, its man pages and docs, fonts for PNG charts.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-dejavu-core ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/iosim /usr/local/bin/iosim
COPY README.md /usr/share/doc/iosim/README.md
COPY docs /usr/share/doc/iosim/docs
COPY examples /usr/share/doc/iosim/examples
# Results history: keep it on a volume to keep it across containers.
ENV XDG_DATA_HOME=/var/lib/iosim
RUN mkdir -p /var/lib/iosim /data
VOLUME ["/var/lib/iosim"]
# Test files go on the volume mounted here (a container's own layer is overlayfs,
# which does not measure your storage and may refuse O_DIRECT).
WORKDIR /data
ENTRYPOINT ["iosim"]
CMD ["--help"]
