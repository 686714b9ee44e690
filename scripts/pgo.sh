#!/usr/bin/env bash
# A profile-guided release build of `toolwarden` (and `toolwarden-bench`),
# optional: `cargo build --release` stays the plain build. BENCHMARKS.md,
# "A profile-guided build" has what it gains, measured against the plain
# build.
#
#   scripts/pgo.sh             train on a 90 s soak, 8 connections
#   scripts/pgo.sh SECONDS     train for SECONDS
#
# PGO_DIR (default target/pgo) holds the builds and the profiles.
#
# 1. an instrumented build ($PGO_DIR/gen);
# 2. training: the soak of scripts/soak.sh (all four dialects, streaming
#    and not, recording to SQLite), run by the instrumented build, so the
#    profile is the gateway's under that load, not the benchmark's;
# 3. the profiles merged with the toolchain's own `llvm-profdata` (rustup's
#    `llvm-tools`: the profile's format is the compiler's LLVM's);
# 4. the build that uses them: $PGO_DIR/use/release/{toolwarden,toolwarden-bench}.
#
# SQLite (C, built by libsqlite3-sys) is not profiled: RUSTFLAGS reach Rust
# code only.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${1:-90}"
case "$seconds" in
    *[!0-9]* | '') echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

sysroot="$(rustc --print sysroot)"
host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    rustup component add llvm-tools >&2
fi

export CARGO_INCREMENTAL=0
out="$(realpath -m "${PGO_DIR:-target/pgo}")"
rm -rf "$out/raw"
mkdir -p "$out/raw"

RUSTFLAGS="-Cprofile-generate=$out/raw" \
    cargo build --release --locked -p toolwarden-bench -p toolwarden --target-dir "$out/gen" >&2
"$out/gen/release/toolwarden-bench" --soak "$seconds" --conns 8 >&2
"$profdata" merge -o "$out/merged.profdata" "$out/raw"
RUSTFLAGS="-Cprofile-use=$out/merged.profdata" \
    cargo build --release --locked -p toolwarden-bench -p toolwarden --target-dir "$out/use" >&2
echo "$out/use/release/toolwarden"
