# Shared by the .ci/*_e2e.sh suites (sourced, not run): the paths, the
# binaries, free ports, the mock provider and the gateway started and
# stopped, waiting for a port, pinned PyPI/npm clients, the cleanup trap.
#
#   . "$(dirname "$0")/lib.sh"   # after `set -euo pipefail`
#
# Sets: root (the checkout, also the working directory), target, tmp (a
# scratch folder removed on exit). Every process started with ci_spawn (the
# mock, the gateway) is killed on exit, then waited for.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
tmp=$(mktemp -d)
ci_pids=()

ci_cleanup() {
  local pid
  for pid in "${ci_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${ci_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap ci_cleanup EXIT

# ci_build: the gateway's CLI and the mock provider (debug); sets tw, mockbin.
ci_build() {
  echo "== cargo build (toolwarden, mock-provider)"
  cargo build -q -p toolwarden -p toolwarden-mock-provider || return 1
  tw="$target/debug/toolwarden"
  mockbin="$target/debug/mock-provider"
}

# ci_spawn CMD...: start CMD in the background, killed on exit; sets pid.
ci_spawn() {
  "$@" &
  pid=$!
  ci_pids+=("$pid")
}

# ci_free_port: a free loopback port (asked of the kernel, then released).
ci_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ci_wait_http URL WHAT [TRIES]: until URL answers (any status; an HTTPS one
# whatever its certificate), 50 ms apart;
# fails naming WHAT.
ci_wait_http() {
  local i
  for ((i = 0; i < ${3:-200}; i++)); do
    curl -sk -o /dev/null "$1" && return 0
    sleep 0.05
  done
  echo "${ci_suite:-ci}: $2 did not come up at $1" >&2
  return 1
}

# ci_start_mock NAME ARGS...: the mock provider on a free port (it prints its
# URL); sets mock_url, mock_pid. Output in $tmp/NAME-mock.{out,err}.
ci_start_mock() {
  local name=$1 i
  shift
  ci_spawn "$mockbin" --listen 127.0.0.1:0 "$@" >"$tmp/$name-mock.out" 2>"$tmp/$name-mock.err"
  mock_pid=$pid
  for ((i = 0; i < 100; i++)); do
    grep -q '^listening on ' "$tmp/$name-mock.out" 2>/dev/null && break
    sleep 0.05
  done
  mock_url=$(sed -n 's/^listening on //p' "$tmp/$name-mock.out")
  if [ -z "$mock_url" ]; then
    echo "${ci_suite:-ci}: the mock provider did not start:" >&2
    cat "$tmp/$name-mock.err" >&2
    return 1
  fi
  echo "== mock provider at $mock_url"
}

# ci_start_gateway NAME [ENV-PREFIX... --] SERVE-ARGS...: `toolwarden serve`
# on a free port, waited for on /healthz; sets gw_url, gw_pid. An optional
# command prefix before `--` (e.g. `env -i PATH=… --`) runs the gateway under
# it. Output in $tmp/NAME-gw.{out,err}.
ci_start_gateway() {
  local name=$1 port prefix=()
  shift
  if [[ " $* " == *" -- "* ]]; then
    while [ "$1" != -- ]; do prefix+=("$1"); shift; done
    shift
  fi
  port=$(ci_free_port)
  ci_spawn "${prefix[@]}" "$tw" serve --listen "127.0.0.1:$port" "$@" >"$tmp/$name-gw.out" 2>"$tmp/$name-gw.err"
  gw_pid=$pid
  gw_url="http://127.0.0.1:$port"
  # Serving HTTPS (`--tls-cert`): https://, waited for without checking the
  # certificate (the suite's clients check it).
  [[ " $* " == *" --tls-cert "* ]] && gw_url="https://127.0.0.1:$port"
  ci_wait_http "$gw_url/healthz" "the gateway" || { cat "$tmp/$name-gw.err" >&2; return 1; }
  echo "== gateway at $gw_url (pid $gw_pid)"
}

# ci_stop PID WHAT: SIGTERM (a graceful stop: the gateway drains its
# recorder), then wait up to 10 s; fails when it is still running.
ci_stop() {
  local i
  kill -TERM "$1" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    echo "${ci_suite:-ci}: $2 did not stop within 10 s of SIGTERM" >&2
    return 1
  fi
  wait "$1" 2>/dev/null || true
}

# ci_retry CMD...: CMD, tried up to three times 15 s apart, so that one
# blip of a package registry does not fail a CI run (pip and npm retry a
# refused connection themselves, but not a download cut short).
ci_retry() {
  local try
  for try in 1 2 3; do
    "$@" && return 0
    [ "$try" -lt 3 ] && { echo "${ci_suite:-ci}: attempt $try of 3 failed: $*; again in 15 s" >&2; sleep 15; }
  done
  return 1
}

# ci_pip VENV SPEC...: a venv with these PyPI packages (name==version pins,
# extras allowed), installed only when a pin is not what the venv has.
ci_pip() {
  local venv=$1 spec name want missing=()
  shift
  [ -x "$venv/bin/python" ] || { echo "== python venv at $venv"; python3 -m venv "$venv"; }
  local have
  have=$("$venv/bin/pip" freeze --disable-pip-version-check 2>/dev/null | tr 'A-Z_' 'a-z-' || true)
  for spec in "$@"; do
    name=${spec%%[\[=]*}
    want="$(echo "$name" | tr 'A-Z_' 'a-z-')==${spec##*==}"
    grep -qxF "$want" <<<"$have" || missing+=("$spec")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "== pip install $*"
    ci_retry "$venv/bin/pip" install -q --disable-pip-version-check "$@" ||
      { echo "${ci_suite:-ci}: FAILED to install $*" >&2; return 1; }
  fi
}

# ci_npm DIR PKG@VERSION...: these npm packages under DIR, installed only when
# the list differs from what DIR last installed (DIR/.installed).
ci_npm() {
  local dir=$1
  shift
  command -v npm >/dev/null || { echo "${ci_suite:-ci}: npm is required" >&2; return 1; }
  if [ ! -f "$dir/.installed" ] || [ "$(cat "$dir/.installed")" != "$*" ]; then
    echo "== npm install $*"
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"toolwarden-e2e-clients","private":true}' >"$dir/package.json"
    (cd "$dir" && ci_retry npm install --no-audit --no-fund --loglevel=error "$@") ||
      { echo "${ci_suite:-ci}: FAILED to install $*" >&2; return 1; }
    echo "$*" >"$dir/.installed"
  fi
}
