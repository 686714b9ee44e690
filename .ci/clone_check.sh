#!/usr/bin/env bash
# A clone with nothing beside it passes its tests: clone this repository
# (its committed HEAD) into an empty temporary folder, with no shared/corpus
# above it and TOOLWARDEN_CORPUS / CI unset, run a fast subset of the suite
# there, and check that the corpus tests said they were skipped; then check
# that CI=true turns a missing corpus into a failure.
#
# Builds in its own target folder, target/clone-check (kept between runs):
# sharing target/ itself would let the clone's artifacts, which name the
# clone's paths, pass as fresh for this checkout (cargo hashes path packages
# relative to the workspace). First run ~3 min on 2 cores, later ~1 min.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/toolwarden-clone.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
d=$tmp
while [ "$d" != / ]; do
  if [ -d "$d/shared/corpus" ]; then
    echo "clone_check: $d/shared/corpus exists above the temporary folder" >&2
    exit 1
  fi
  d=$(dirname "$d")
done
git clone --quiet --no-local "$root" "$tmp/toolwarden"
cd "$tmp/toolwarden"
[ ! -e shared ] && [ ! -e ../shared ] || { echo "clone_check: shared/ beside the clone" >&2; exit 1; }

run() { env -u CI -u TOOLWARDEN_CORPUS CARGO_TARGET_DIR="$root/target/clone-check" cargo test --locked "$@"; }
log=$tmp/test.log
echo "== clone_check: fast subset in $tmp/toolwarden (no corpus)"
# Fixture tests and corpus tests of the wire crate and the corpus finder,
# one at a time: in parallel the harness's lines and the tests' skip lines
# (stderr, past the capture) interleave, and a check below failed on a line
# the two had shared. One at a time, a skip line follows its own test's
# "test NAME ... " on that line, so it is looked for anywhere in a line.
run -p toolwarden-testkit -p toolwarden-wire --lib -- --test-threads=1 \
  corpus stream_reassembles recorded fixtures 2>&1 | tee "$log"

expect_skip() {
  grep -qF "skipped: $1: corpus not found (set TOOLWARDEN_CORPUS)" "$log" ||
    { echo "clone_check: no skip line for $1" >&2; exit 1; }
}
expect_skip "anthropic::tests::corpus_conversation_is_read_completely"
expect_skip "detect::tests::corpus_meets_the_thresholds"
expect_skip "result::tests::corpus_conversations_read_as_the_value_reading_says"
grep -q "^test result::tests::the_short_corpus_results_are_explicit_failures ... ok$" "$log" ||
  { echo "clone_check: a fixture test did not run" >&2; exit 1; }

echo "== clone_check: CI=true makes a missing corpus an error"
if env -u TOOLWARDEN_CORPUS CI=true CARGO_TARGET_DIR="$root/target/clone-check" cargo test --locked -q \
  -p toolwarden-wire --lib -- --exact detect::tests::corpus_meets_the_thresholds >"$log" 2>&1; then
  cat "$log"
  echo "clone_check: the corpus test passed without a corpus under CI=true" >&2
  exit 1
fi
grep -q "CI=true requires the corpus" "$log" ||
  { cat "$log"; echo "clone_check: unexpected failure" >&2; exit 1; }
echo "== clone_check: ok"
