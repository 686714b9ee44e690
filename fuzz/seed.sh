#!/bin/sh
# Seed each target's corpus from the recorded corpus ($TOOLWARDEN_CORPUS, else
# shared/corpus found above this directory), else from the repository's
# fixtures (crates/testkit/fixtures, said on stderr): the
# first byte of each seed picks the dialect (index into Dialect::ALL, or
# into TW_FUZZ_DIALECTS when set: see fuzz_targets/common.rs).
set -eu
cd "$(dirname "$0")"
CORPUS=${TOOLWARDEN_CORPUS:-${CORPUS:-}}
if [ -z "$CORPUS" ]; then
    d=$(pwd)
    while [ "$d" != / ] && [ ! -d "$d/shared/corpus" ]; do d=$(dirname "$d"); done
    CORPUS=$d/shared/corpus
fi
if [ ! -d "$CORPUS" ]; then
    echo "corpus not found (set TOOLWARDEN_CORPUS): seeding from crates/testkit/fixtures" >&2
    CORPUS=../crates/testkit/fixtures
fi
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
# coding: a few SSE recordings compressed as gzip and zlib (python3's
# zlib), and zstd when its command is there.
mkdir -p corpus/coding
for f in $(ls "$CORPUS"/sse/* | head -n 8); do
    out="corpus/coding/$(basename "$f")"
    python3 -c 'import sys, zlib, gzip
d = open(sys.argv[1], "rb").read()
open(sys.argv[2] + ".gz", "wb").write(gzip.compress(d))
open(sys.argv[2] + ".zz", "wb").write(zlib.compress(d))' "$f" "$out"
    if command -v zstd >/dev/null 2>&1; then zstd -q -f -c "$f" > "$out.zst"; fi
done
# eventstream, h1, ws_messages, voice_messages, cloud_route: framed by
# seed_frames.py (Bedrock event-stream frames, HTTP/1.1 requests and
# responses, WebSocket messages, voice messages, cloud paths).
python3 seed_frames.py "$CORPUS"
# redact and detect: tool results' contents as they are (when the recorded
# corpus has them), and a few texts of the patterns.
mkdir -p corpus/redact corpus/detect
if [ -f "$CORPUS/tool_results.jsonl" ]; then
    python3 -c 'import sys, json
for i, line in enumerate(open(sys.argv[1], encoding="utf-8")):
    c = json.loads(line).get("content")
    if isinstance(c, str) and c:
        if i < 400:
            open("corpus/redact/result%03d" % i, "w", encoding="utf-8").write(c)
        open("corpus/detect/result%04d" % i, "w", encoding="utf-8").write(c)' "$CORPUS/tool_results.jsonl"
fi
printf '[{"query":"ls x","result":"","error":"Command exited with code 2","success":false}]' > corpus/detect/seed-batch
printf 'cat: x: No such file or directory\n<shellId: 0 completed with exit code 1>' > corpus/detect/seed-trailer
printf "Cannot read properties of undefined (reading 'length')" > corpus/detect/seed-js
printf '404 not found: 请访问https://admin:pw@h.example/x?key=1\nX-Api-Key: a b\n' > corpus/redact/seed-url
printf 'SLACK=hooks.slack.com/services/T1/B2/x --password "a b" Bearer ghx_0123456789' > corpus/redact/seed-flags
