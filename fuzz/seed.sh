#!/bin/sh
# Seed each target's corpus from shared/corpus (found above this
# directory, or $CORPUS): the
# first byte of each seed picks the dialect (index into Dialect::ALL, or
# into TW_FUZZ_DIALECTS when set: see fuzz_targets/common.rs).
set -eu
cd "$(dirname "$0")"
if [ -z "${CORPUS:-}" ]; then
    d=$(pwd)
    while [ "$d" != / ] && [ ! -d "$d/shared/corpus" ]; do d=$(dirname "$d"); done
    CORPUS=$d/shared/corpus
fi
[ -d "$CORPUS" ] || { echo "shared/corpus not found; set CORPUS" >&2; exit 1; }
seed() { # target dialect-byte file
    mkdir -p "corpus/$1"
    { printf "\\$(printf '%03o' "$2")"; cat "$3"; } > "corpus/$1/$(basename "$3").$2"
}
for t in request_view repair; do
    for f in "$CORPUS"/conversations/conv_anthropic_*.json; do seed $t 2 "$f"; seed $t 0 "$f"; done
    for f in "$CORPUS"/conversations/conv_openai_*.json; do seed $t 0 "$f"; seed $t 1 "$f"; done
done
for f in "$CORPUS"/sse/*; do
    seed stream 0 "$f"; seed stream 1 "$f"; seed stream 2 "$f"; seed stream 3 "$f"
    seed response_view 2 "$f"
done
