#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: 127.0.0.1:55432, database
# toolwarden_test, trust auth, data under a temp dir owned by `postgres`.
#
#   URL=$(.ci/pg.sh start)   # installs PostgreSQL (Debian packages) if missing,
#                            # starts the cluster (idempotent), prints the URL
#   .ci/pg.sh stop           # stops it (idempotent)
#   .ci/pg.sh url | status | clean
#
# No systemd: initdb and pg_ctl run as the postgres user. Progress goes to
# stderr; stdout carries only the URL.
set -euo pipefail

PORT="${TOOLWARDEN_PG_PORT:-55432}"
BASE="${TOOLWARDEN_PG_DIR:-${TMPDIR:-/tmp}/toolwarden-pg-$PORT}"
DATA="$BASE/data"
LOG="$BASE/server.log"
DB=toolwarden_test
URL="postgres://postgres@127.0.0.1:$PORT/$DB"

log() { echo "pg.sh: $*" >&2; }

find_bin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$d" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; fi
}

ensure_installed() {
    PGBIN=$(find_bin)
    if [ -z "$PGBIN" ]; then
        log "PostgreSQL not found; installing it from Debian's packages"
        if [ "$(id -u)" -ne 0 ]; then log "need root to apt-get install postgresql"; exit 1; fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get update >&2
        apt-get -o Acquire::Retries=3 install -y postgresql >&2
        PGBIN=$(find_bin)
        if [ -z "$PGBIN" ]; then log "postgresql installed but pg_ctl not found"; exit 1; fi
    fi
}

# Runs a command as the postgres user.
as_pg() {
    if [ "$(id -un)" = postgres ]; then
        "$@"
    elif command -v runuser >/dev/null 2>&1; then
        runuser -u postgres -- "$@"
    else
        su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
}

running() {
    [ -f "$DATA/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

start() {
    ensure_installed
    if ! running; then
        mkdir -p "$BASE"
        chown postgres: "$BASE" 2>/dev/null || true
        chmod 700 "$BASE"
        if [ ! -f "$DATA/PG_VERSION" ]; then
            log "initdb in $DATA"
            as_pg "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >&2 \
                || as_pg "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C >&2
        fi
        log "starting on 127.0.0.1:$PORT"
        as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 30 \
            -o "-p $PORT -k $BASE -c listen_addresses=127.0.0.1 -c max_connections=200" start >&2 \
            || { log "start failed; server log:"; cat "$LOG" >&2 || true; exit 1; }
    fi
    local exists
    exists=$(as_pg "$PGBIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$DB'")
    if [ "$exists" != 1 ]; then
        as_pg "$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DB" >&2
    fi
    echo "$URL"
}

stop() {
    PGBIN=$(find_bin)
    if [ -n "$PGBIN" ] && running; then
        log "stopping"
        as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >&2
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) echo "$URL" ;;
    status) PGBIN=$(find_bin); if [ -n "$PGBIN" ] && running; then echo running; else echo stopped; exit 3; fi ;;
    clean) stop; rm -rf "$BASE" ;;
    *) echo "usage: $0 start|stop|url|status|clean" >&2; exit 2 ;;
esac
