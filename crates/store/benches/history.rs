//! Recording throughput against the history already in the database
//! (issue 14): events/s through the real `Recorder` with 0, 1 M and 10 M
//! rows already in `tool_calls` (plus a quarter as many requests and half
//! as many result keys), for two workloads:
//!
//! - `unique`: sessions of 8 turns, fresh call ids every turn;
//! - `reuse` (adversarial): one session, the same three call ids and the
//!   same response id every turn (a provider that answers every request
//!   with `call_0`, clients that send the same first turn thousands of
//!   times), and a history of rows under that same session and call id;
//! - `random`: ids and timing as real traffic has them: call, response
//!   and session ids random (`toolu_01…`, `msg_01…`, a fingerprint's hex),
//!   so each lands on a random page of its indexes, where `unique`'s
//!   counters land next to the previous one; and 1,024 conversations at
//!   once, a turn of each in turn, so a session's turns are never in one
//!   batch (`unique` sends a session's eight turns back to back);
//! - `mixed`: `random`'s turns, each followed by a request of a session of
//!   its own carrying four results of calls never seen (random ids as
//!   Anthropic's), so every late-call lookup has result-only rows about;
//! - `soak`: the soak's traffic (`toolwarden-bench --soak`): every request
//!   a session of its own carrying four results (tool named, the turn they
//!   answer known) of calls the store never saw, one of them failed.
//!
//! Each turn: 1 request, 3 results of the previous turn's calls (new
//! message indexes, so each pairs), 3 calls. SQLite always; PostgreSQL
//! when `TOOLWARDEN_TEST_POSTGRES_URL` is set. The history is generated
//! with SQL (`WITH RECURSIVE` / `generate_series`), in steps of 1 M rows.
//!
//! ```text
//! TOOLWARDEN_TEST_POSTGRES_URL=$(bash .ci/pg.sh start) cargo bench -p toolwarden-store --bench history
//! ```
//! `TW_HISTORY_ROWS` (default `0,1000000,10000000`) sets the history sizes,
//! `TW_HISTORY_TURNS` (default 10000, 67k events) the turns per measurement,
//! `TW_HISTORY_MODES` (default `unique,reuse`; `random`, `mixed` and `soak` too) and `TW_HISTORY_BACKENDS`
//! (default `sqlite,postgres`) what runs, `TW_HISTORY_BATCH_MAX` and
//! `TW_HISTORY_FLUSH_MS` the recorder's batches (default the store's),
//! `TW_HISTORY_WRITER_CACHE_KIB`
//! the SQLite writer's page cache (default the store's).
//! `TW_HISTORY_DEFAULT_PAGE_CACHE=1` uses SQLite before the store opens,
//! so that SQLite keeps its default page cache instead of
//! `toolwarden-sqlite-page-cache`'s (each SQLite run prints which it had
//! and the truncations it passed on and skipped).
//!
//! `TW_HISTORY_FP_SESSIONS=1` names `soak`'s sessions as the gateway names
//! fingerprint sessions (`fp-…`), so each of its results also looks for
//! its call in other sessions (`turns::FIND_CALL_BY_TURN_ELSEWHERE`).
//!
//! `TW_HISTORY_BURSTS=1` measures something else instead ([`bursts`]): the
//! soak's traffic in bursts of 1,000 events 1.2 s apart, on SQLite, with
//! the writer's idle release at 1 s (its connection closed between two
//! bursts, as before `DEFAULT_SQLITE_WRITER_IDLE`) and at the default (kept
//! open): CPU per event of each, in the same run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Connection;
use toolwarden_store::*;

const TURNS_PER_SESSION: u64 = 8;

/// The first turn every result's conversation names, as the gateway gives
/// it (`ToolResultRecord::first_turn`): one for all sessions, as automated
/// runs of one prompt (the soak's) send it, so each `soak` result, paired
/// with nothing, also probes the newest sessions of that first turn for
/// its call answered there (`bulk::fork_of`): the probe's worst case.
const FIRST_TURN: i64 = 0x50a4_f157;
/// Conversations under way at once in `random` mode: a session's turns are
/// that far apart in the stream, so no batch holds two of them (as with
/// real agents, whose turns are seconds apart).
const CONCURRENT: u64 = 1024;
/// History rows are this much older than the measured events.
const HISTORY_T0: i64 = 1_600_000_000_000;
const LIVE_T0: i64 = 1_700_000_000_000;
const FILL_STEP: i64 = 1_000_000;
/// The next session number, less the first history session's (`$4` of
/// [`fill_sql`]).
const NEXT_SESSION_NO: &str = "SELECT COALESCE(max(no), 0) + 1 FROM sessions";

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Unique,
    Reuse,
    Random,
    Soak,
    Mixed,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Unique => "unique",
            Mode::Reuse => "reuse",
            Mode::Random => "random",
            Mode::Soak => "soak",
            Mode::Mixed => "mixed",
        }
    }

    /// The history's shape (`$3` of [`fill_sql`]).
    fn shape(self) -> i64 {
        match self {
            Mode::Reuse => 1,
            Mode::Random | Mode::Mixed => 2,
            // The soak's history is the unique one (its sessions and ids are unique).
            Mode::Unique | Mode::Soak => 0,
        }
    }
}

/// A random-looking, reproducible 64-bit value of `x` (splitmix64).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The measured events of run `run`: `turns` turns after all earlier runs'.
fn events(mode: Mode, run: u64, turns: u64) -> Vec<Event> {
    if mode == Mode::Soak {
        return soak_events(run, turns);
    }
    if mode == Mode::Mixed {
        return mixed_events(run, turns);
    }
    let reuse = mode == Mode::Reuse;
    let random = mode == Mode::Random;
    let call_id = |n: u64, k: u32| {
        if reuse {
            format!("toolu_reused_{k}")
        } else if random {
            format!(
                "toolu_01{:016x}{run}_{n}_{k}",
                mix((run << 40) ^ (n << 2) ^ u64::from(k))
            )
        } else {
            format!("toolu_{run}_{n}_{k}")
        }
    };
    // The turn before `n` in its session: the one before it (`unique`), or
    // `CONCURRENT` before it (`random`: that many conversations at once,
    // one turn each in turn).
    let back = if random { CONCURRENT } else { 1 };
    let mut out = Vec::with_capacity(turns as usize * 7);
    for n in 0..turns {
        let session = if reuse {
            "S".to_owned()
        } else if random {
            format!("{:016x}", mix(!((run << 40) ^ (n % CONCURRENT))))
        } else {
            format!("live{run}_{}", n / TURNS_PER_SESSION)
        };
        let turn = if reuse {
            n
        } else if random {
            n / CONCURRENT
        } else {
            n % TURNS_PER_SESSION
        };
        let req = format!("{run:02}{n:030x}");
        let at = LIVE_T0 + ((run * turns + n) as i64) * 10;
        let response_id = if reuse {
            "msg_mockreused".to_owned()
        } else if random {
            format!("msg_01{:016x}{req}", mix(u64::MAX - ((run << 40) ^ n)))
        } else {
            format!("msg_{req}")
        };
        out.push(Event::Request(RequestRecord {
            request_id: req.clone(),
            session_id: session.clone(),
            session_source: "fingerprint".into(),
            at_ms: at,
            provider: "anthropic".into(),
            dialect: Some("anthropic".into()),
            path: "/v1/messages".into(),
            model: Some("claude-test".into()),
            status: 200,
            streaming: n % 2 == 0,
            upstream_latency_ms: 840.0,
            first_byte_ms: Some(120.0),
            overhead_us: 31.0,
            input_tokens: Some(5000),
            output_tokens: Some(300),
            response_id: Some(response_id.clone()),
            repairs: vec![],
            repair_mode: "fix".into(),
            parse_error: None,
            calls_incomplete: false,
            error: None,
            trace_parent: None,
            trace_state: None,
            server_address: None,
            server_port: None,
        }));
        if turn > 0 {
            for k in 0..3u32 {
                let failed = (n + u64::from(k)) % 7 == 0;
                // Reuse: one ever-growing conversation, so message indexes
                // keep growing and every result is new.
                let message_index = if reuse {
                    ((run * turns + n) * 10) as u32 + k
                } else {
                    (turn * 2 - 1) as u32 * 10 + k
                };
                out.push(Event::ToolResult(ToolResultRecord {
                    request_id: req.clone(),
                    session_id: session.clone(),
                    provider: "anthropic".into(),
                    model: Some("claude-test".into()),
                    call_id: call_id(n - back, k),
                    message_index,
                    tool: None,
                    failed,
                    basis: if failed { "explicit" } else { "none" }.into(),
                    content_bytes: 2048,
                    excerpt: failed.then(|| "Error: file not found: /tmp/x".to_owned()),
                    at_ms: at,
                    exec_ms: None,
                    previous_response_id: None,
                    answers: None,
                    trace_parent: None,
                    trace_state: None,
                    latest_of_its_id: false,
                    first_turn: Some(FIRST_TURN),
                }));
            }
        }
        for k in 0..3u32 {
            out.push(Event::ToolCall(ToolCallRecord {
                threaded: false,
                request_id: req.clone(),
                session_id: session.clone(),
                provider: "anthropic".into(),
                model: Some("claude-test".into()),
                response_id: Some(response_id.clone()),
                dialect: Some("anthropic".into()),
                call_index: k,
                call_id: call_id(n, k),
                tool: ["Read", "Bash", "Edit"][k as usize].into(),
                arguments_bytes: 180,
                at_ms: at + 5,
                turn: None,
            }));
        }
    }
    out
}

/// `random`'s turns, each followed by a request of a session of its own
/// with four results of calls the store never saw (as `soak`), their ids
/// as Anthropic's are (`toolu_01` and 22 random base-62 characters): a
/// gateway that sees some agents' calls and never sees others'. Every
/// call's lookup across sessions then has result-only rows of the last
/// minute to read past.
fn mixed_events(run: u64, turns: u64) -> Vec<Event> {
    const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    // Eleven base-62 digits of each of two random values.
    let base62 = |v: u64, w: u64| {
        [v, w]
            .into_iter()
            .flat_map(|mut x| {
                (0..11).map(move |_| {
                    let c = BASE62[(x % 62) as usize] as char;
                    x /= 62;
                    c
                })
            })
            .collect::<String>()
    };
    let mut out = Vec::with_capacity(turns as usize * 12);
    for (n, chunk) in events(Mode::Random, run, turns)
        .chunk_by(|_, b| !matches!(b, Event::Request(_)))
        .enumerate()
    {
        out.extend_from_slice(chunk);
        let n = n as u64;
        let at = LIVE_T0 + ((run * turns + n) as i64) * 10 + 7;
        let session = format!("orphans{run}_{n}");
        // Not hex, so never one of `random`'s request ids.
        let req = format!("{run:02}o{n:029x}");
        out.push(Event::Request(RequestRecord {
            request_id: req.clone(),
            session_id: session.clone(),
            session_source: "header".into(),
            at_ms: at,
            provider: "openai".into(),
            dialect: Some("chat".into()),
            path: "/v1/chat/completions".into(),
            model: Some("gpt-test".into()),
            status: 200,
            streaming: false,
            upstream_latency_ms: 1.0,
            first_byte_ms: Some(1.0),
            overhead_us: 31.0,
            input_tokens: Some(5000),
            output_tokens: Some(300),
            response_id: None,
            repairs: vec![],
            repair_mode: "fix".into(),
            parse_error: None,
            calls_incomplete: false,
            error: None,
            trace_parent: None,
            trace_state: None,
            server_address: None,
            server_port: None,
        }));
        for k in 0..4u64 {
            let key = (run << 44) ^ (n << 2) ^ k;
            out.push(Event::ToolResult(ToolResultRecord {
                request_id: req.clone(),
                session_id: session.clone(),
                provider: "openai".into(),
                model: Some("gpt-test".into()),
                call_id: format!("toolu_01{}", base62(mix(key), mix(!key))),
                message_index: 2,
                tool: Some("read_file".into()),
                failed: k == 3,
                basis: if k == 3 { "explicit" } else { "none" }.into(),
                content_bytes: 5000,
                excerpt: None,
                at_ms: at,
                exec_ms: None,
                previous_response_id: None,
                answers: None,
                trace_parent: None,
                trace_state: None,
                latest_of_its_id: false,
                first_turn: Some(FIRST_TURN),
            }));
        }
    }
    out
}

/// `turns` requests as the soak sends them: each its own session, with
/// four results (one failed) of calls the store never saw, their tool
/// named and the replayed turn they answer known.
fn soak_events(run: u64, turns: u64) -> Vec<Event> {
    let mut out = Vec::with_capacity(turns as usize * 5);
    for n in 0..turns {
        // Fingerprint sessions (`TW_HISTORY_FP_SESSIONS`): each result,
        // its call in no session, also looks in other sessions for the
        // turn it answers (a compressed history's first results).
        let prefix = if std::env::var_os("TW_HISTORY_FP_SESSIONS").is_some() {
            toolwarden_store::FINGERPRINT_SESSION_PREFIX
        } else {
            ""
        };
        let session = format!("{prefix}soak{run}_{n}");
        let req = format!("{run:02}{n:030x}");
        let at = LIVE_T0 + ((run * turns + n) as i64) * 10;
        out.push(Event::Request(RequestRecord {
            request_id: req.clone(),
            session_id: session.clone(),
            session_source: "header".into(),
            at_ms: at,
            provider: "anthropic".into(),
            dialect: Some("anthropic".into()),
            path: "/v1/messages".into(),
            model: Some("claude-test".into()),
            status: 200,
            streaming: n % 2 == 0,
            upstream_latency_ms: 1.0,
            first_byte_ms: Some(1.0),
            overhead_us: 31.0,
            input_tokens: Some(5000),
            output_tokens: Some(300),
            response_id: Some(format!("msg_{req}")),
            repairs: vec![],
            repair_mode: "fix".into(),
            parse_error: None,
            calls_incomplete: false,
            error: None,
            trace_parent: None,
            trace_state: None,
            server_address: None,
            server_port: None,
        }));
        for k in 0..4u32 {
            let failed = k == 3;
            out.push(Event::ToolResult(ToolResultRecord {
                request_id: req.clone(),
                session_id: session.clone(),
                provider: "anthropic".into(),
                model: Some("claude-test".into()),
                call_id: format!("bench_{run:02}{n:010x}_{k}"),
                message_index: 2,
                tool: Some("read_file".into()),
                failed,
                basis: if failed { "explicit" } else { "none" }.into(),
                content_bytes: 5000,
                excerpt: failed.then(|| "Error: permission denied".to_owned()),
                at_ms: at,
                exec_ms: None,
                previous_response_id: None,
                answers: Some(TurnRef {
                    turn: 0x5eed_f00d,
                    call_index: k,
                }),
                trace_parent: None,
                trace_state: None,
                latest_of_its_id: false,
                first_turn: Some(FIRST_TURN),
            }));
        }
    }
    out
}

/// History rows `from..to` (row `x`): in `reuse` mode (`$3` = 1) all
/// under session `S` and call id `toolu_reused_{x % 3}`, else unique, and
/// in `random` mode (`$3` = 2) ids in a random order (a multiplicative
/// hash of `x` leads them). One row in ten a
/// result-only row, one in ten an open call, the rest paired calls; their
/// message indexes negative, apart from the measured events'. The open
/// calls are parked, as the writer leaves calls open for longer than its
/// parking age (their times are years before the live events'; a store
/// that had recorded this history would have parked them as it went).
/// Each history session (eight rows) has its `sessions` row, numbered in
/// the rows' order (migration 0010) from `$4 + from / 8`, the number after
/// the last session so far: the sessions the writer numbers later come
/// after them, as in a store that recorded this history before.
fn fill_sql(postgres: bool) -> [String; 4] {
    let series = if postgres {
        "generate_series($1::int8, $2::int8 - 1) AS g(x)".to_owned()
    } else {
        "(WITH RECURSIVE g(x) AS (SELECT $1 UNION ALL SELECT x + 1 FROM g WHERE x + 1 < $2) \
         SELECT x FROM g) AS g"
            .to_owned()
    };
    let t = "CAST(x AS TEXT)";
    // Eight hex digits in a random order of `v` (below 2^32 / 2654435761).
    let hex = |v: &str| {
        let h = format!("(({v}) * 2654435761) % 4294967291");
        if postgres {
            format!("lpad(to_hex({h}), 8, '0')")
        } else {
            format!("printf('%08x', {h})")
        }
    };
    let session = format!(
        "CASE WHEN $3 = 1 THEN 'S' WHEN $3 = 2 THEN {} || CAST(x / 8 AS TEXT) \
         ELSE 'hist_' || CAST(x / 8 AS TEXT) END",
        hex("x / 8")
    );
    let session = session.as_str();
    let session_no = "CASE WHEN $3 = 1 THEN (SELECT no FROM sessions WHERE session_id = 'S') \
         ELSE x / 8 + $4 END";
    let sessions = format!(
        "INSERT INTO sessions (no, session_id, source, first_ms, last_ms, requests) \
         SELECT x / 8 + $4, {session}, 'fingerprint', {HISTORY_T0} + x, {HISTORY_T0} + x + 7, 2 \
         FROM {series} WHERE x % 8 = 0 AND ($3 <> 1 OR x = 0) ON CONFLICT DO NOTHING"
    );
    let call = format!(
        "CASE WHEN $3 = 1 THEN 'toolu_reused_' || CAST(x % 3 AS TEXT) \
         WHEN $3 = 2 THEN 'toolu_01' || {} || {t} ELSE 'toolu_hist_' || {t} END",
        hex("x")
    );
    let response = format!(
        "CASE WHEN $3 = 2 THEN 'msg_01' || {} || {t} ELSE 'msg_h' || {t} END",
        hex("x + 7")
    );
    let calls = format!(
        "INSERT INTO tool_calls (session_id, call_id, tool, provider, model, at_ms, request_id, \
         call_index, response_id, arguments_bytes, call_at_ms, result_request_id, message_index, \
         failed, basis, content_bytes, result_at_ms, exec_ms, parked, session_no) \
         SELECT {session}, {call}, 'Read', 'anthropic', 'claude-test', {HISTORY_T0} + x, \
         CASE WHEN x % 10 = 0 THEN NULL ELSE 'hreq_' || {t} END, \
         CASE WHEN x % 10 = 0 THEN NULL ELSE 0 END, \
         CASE WHEN x % 10 = 0 THEN NULL WHEN $3 = 1 THEN 'msg_mockreused' ELSE {response} END, \
         CASE WHEN x % 10 = 0 THEN NULL ELSE 180 END, \
         CASE WHEN x % 10 = 0 THEN NULL ELSE {HISTORY_T0} + x END, \
         CASE WHEN x % 10 = 1 THEN NULL ELSE 'hreq_' || {t} END, \
         CASE WHEN x % 10 = 1 THEN NULL ELSE -1 - x END, \
         CASE WHEN x % 10 = 1 THEN NULL ELSE 0 END, \
         CASE WHEN x % 10 = 1 THEN NULL ELSE 'none' END, \
         CASE WHEN x % 10 = 1 THEN NULL ELSE 2048 END, \
         CASE WHEN x % 10 = 1 THEN NULL ELSE {HISTORY_T0} + x + 3 END, \
         CASE WHEN x % 10 = 1 THEN NULL ELSE 3.0 END, \
         CASE WHEN x % 10 = 1 THEN 1 ELSE 0 END, {session_no} \
         FROM {series}"
    );
    let requests = format!(
        "INSERT INTO requests (request_id, session_id, at_ms, provider, dialect, path, model, \
         status, streaming, upstream_latency_ms, overhead_us, repair_mode, repairs, session_no) \
         SELECT 'hreq_' || {t}, {session}, {HISTORY_T0} + x, 'anthropic', 'anthropic', \
         '/v1/messages', 'claude-test', 200, 0, 800.0, 30.0, 'fix', 0, {session_no} \
         FROM {series} WHERE x % 4 = 0"
    );
    let results = format!(
        "INSERT INTO tool_results (session_id, call_id, message_index, request_id, at_ms, \
         session_no) \
         SELECT {session}, {call}, -1 - x, 'hreq_' || {t}, {HISTORY_T0} + x, {session_no} \
         FROM {series} WHERE x % 2 = 0"
    );
    [sessions, calls, requests, results]
}

/// Adds history rows `from..to` to the database at `url`, a step at a time,
/// through a connection of its own.
async fn fill(url: &str, mode: Mode, from: i64, to: i64) {
    if from >= to {
        return;
    }
    let postgres = url.starts_with("postgres");
    let sql = fill_sql(postgres);
    let shape = mode.shape();
    let mut at = from;
    if postgres {
        let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
        let next: i64 = sqlx::query_scalar(NEXT_SESSION_NO)
            .fetch_one(&mut conn)
            .await
            .expect("next session");
        let base = next - from / 8;
        while at < to {
            let end = (at + FILL_STEP).min(to);
            for stmt in &sql {
                sqlx::query(stmt)
                    .bind(at)
                    .bind(end)
                    .bind(shape)
                    .bind(base)
                    .execute(&mut conn)
                    .await
                    .expect("fill history");
            }
            at = end;
        }
        // Settled before measuring: statistics, and the fill's writes on
        // disk, not left for the measured run's checkpoints.
        for stmt in [
            "SELECT setval(pg_get_serial_sequence('sessions', 'no'), (SELECT max(no) FROM sessions))",
            "VACUUM ANALYZE sessions",
            "VACUUM ANALYZE tool_calls",
            "VACUUM ANALYZE requests",
            "VACUUM ANALYZE tool_results",
            "CHECKPOINT",
        ] {
            sqlx::query(stmt).execute(&mut conn).await.expect("analyze");
        }
    } else {
        let mut conn = sqlx::SqliteConnection::connect(url).await.expect("connect");
        // A fill of random keys touches every page of its indexes: a cache
        // that holds them keeps it to minutes (the measured recorder has
        // its own, configured cache).
        sqlx::query("PRAGMA cache_size = -2097152")
            .execute(&mut conn)
            .await
            .expect("cache");
        let next: i64 = sqlx::query_scalar(NEXT_SESSION_NO)
            .fetch_one(&mut conn)
            .await
            .expect("next session");
        let base = next - from / 8;
        while at < to {
            let end = (at + FILL_STEP).min(to);
            let mut tx = conn.begin().await.expect("begin");
            for stmt in &sql {
                sqlx::query(stmt)
                    .bind(at)
                    .bind(end)
                    .bind(shape)
                    .bind(base)
                    .execute(&mut *tx)
                    .await
                    .expect("fill history");
            }
            tx.commit().await.expect("commit");
            at = end;
        }
        // The fill's WAL written back before measuring.
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut conn)
            .await
            .expect("checkpoint");
    }
}

/// CPU time (user + system) of the whole process so far, from
/// `/proc/self/stat`, or `None` where there is no procfs.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ').skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// The recorder's defaults, or the batch size and flush interval from
/// `TW_HISTORY_BATCH_MAX` and `TW_HISTORY_FLUSH_MS`.
fn recorder_options() -> RecorderOptions {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let mut options = RecorderOptions::default();
    if let Some(n) = env("TW_HISTORY_BATCH_MAX") {
        options.batch_max = n as usize;
    }
    if let Some(ms) = env("TW_HISTORY_FLUSH_MS") {
        options.flush_interval = Duration::from_millis(ms);
    }
    options
}

/// Events/s and process CPU µs per event of one Recorder writing `list`.
async fn measure(store: &Store, list: Vec<Event>) -> (f64, f64) {
    let total = list.len();
    let cpu0 = process_cpu();
    let start = Instant::now();
    let rec = Recorder::start(
        Some(store.clone()),
        recorder_options(),
        Arc::new(NoopObserver),
    );
    for (i, e) in list.into_iter().enumerate() {
        rec.record(e);
        if i % 1024 == 0 {
            while rec.counters().backlog > 32_768 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }
    rec.shutdown().await;
    let c = rec.counters();
    assert_eq!((c.events_dropped, c.write_errors), (0, 0), "{c:?}");
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu0, process_cpu()) {
        (Some(a), Some(b)) => (b - a).as_secs_f64() * 1e6 / total as f64,
        _ => f64::NAN,
    };
    (total as f64 / wall, cpu)
}

async fn fresh_pg_schema(base: &str, name: &str) -> String {
    let schema = format!("history_{name}_{}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(base)
        .await
        .expect("connect to PostgreSQL");
    for stmt in [
        format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
        format!("CREATE SCHEMA {schema}"),
    ] {
        sqlx::query(&stmt).execute(&mut conn).await.expect("schema");
    }
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options[search_path]={schema}")
}

fn list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Bursts of the soak's events 1.2 s apart, at each idle release: CPU per
/// event over the bursts after the first two (the tables warm).
async fn bursts() {
    const BURSTS: usize = 22;
    const PER_BURST: usize = 1_000;
    const GAP: Duration = Duration::from_millis(1_200);
    let dir = tempfile::tempdir().expect("tempdir");
    for idle in [Duration::from_secs(1), DEFAULT_SQLITE_WRITER_IDLE] {
        let url = format!(
            "sqlite://{}",
            dir.path()
                .join(format!("bursts-{}.db", idle.as_millis()))
                .display()
        );
        let options = StoreOptions {
            sqlite_writer_idle: idle,
            ..StoreOptions::default()
        };
        let store = Store::open_with(&url, options).await.expect("open store");
        let rec = Recorder::start(
            Some(store.clone()),
            recorder_options(),
            Arc::new(NoopObserver),
        );
        let mut list = events(Mode::Soak, 0, (BURSTS * PER_BURST / 5) as u64).into_iter();
        let mut cpu = Duration::ZERO;
        for burst in 0..BURSTS {
            let before = process_cpu().expect("/proc/self/stat");
            for e in list.by_ref().take(PER_BURST) {
                rec.record(e);
            }
            while rec.counters().backlog > 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if burst >= 2 {
                cpu += process_cpu().expect("/proc/self/stat") - before;
            }
            tokio::time::sleep(GAP).await;
        }
        rec.shutdown().await;
        let c = rec.counters();
        assert_eq!((c.events_dropped, c.write_errors), (0, 0), "{c:?}");
        store.close().await;
        let measured = ((BURSTS - 2) * PER_BURST) as f64;
        println!(
            "sqlite    bursts of {PER_BURST} events {} ms apart, writer closed after {} ms idle: {:.2} µs CPU/event",
            GAP.as_millis(),
            idle.as_millis(),
            cpu.as_secs_f64() * 1e6 / measured
        );
    }
}

fn main() {
    if std::env::var_os("TW_HISTORY_BURSTS").is_some() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(bursts());
        return;
    }
    let turns: u64 = std::env::var("TW_HISTORY_TURNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let sizes: Vec<i64> = list("TW_HISTORY_ROWS", "0,1000000,10000000")
        .iter()
        .map(|s| s.parse().expect("TW_HISTORY_ROWS: row counts"))
        .collect();
    let modes: Vec<Mode> = list("TW_HISTORY_MODES", "unique,reuse")
        .iter()
        .map(|m| match m.as_str() {
            "unique" => Mode::Unique,
            "reuse" => Mode::Reuse,
            "random" => Mode::Random,
            "soak" => Mode::Soak,
            "mixed" => Mode::Mixed,
            other => panic!("TW_HISTORY_MODES: unknown mode {other}"),
        })
        .collect();
    let backends = list("TW_HISTORY_BACKENDS", "sqlite,postgres");
    let pg_url = std::env::var("TOOLWARDEN_TEST_POSTGRES_URL").ok();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        if std::env::var_os("TW_HISTORY_DEFAULT_PAGE_CACHE").is_some() {
            // SQLite used before the store opens: it keeps its default page
            // cache (`toolwarden_sqlite_page_cache::install`), for a
            // comparison in one build.
            let conn = sqlx::SqliteConnection::connect("sqlite::memory:")
                .await
                .expect("in-memory SQLite");
            let _ = conn.close().await;
        }
        println!("history benchmark: {turns} turns per measurement, history rows {sizes:?}");
        let dir = tempfile::tempdir().expect("tempdir");
        for backend in &backends {
            for &mode in &modes {
                let url = match backend.as_str() {
                    "sqlite" => format!(
                        "sqlite://{}",
                        dir.path().join(format!("{}.db", mode.name())).display()
                    ),
                    "postgres" => match &pg_url {
                        Some(u) => fresh_pg_schema(u, mode.name()).await,
                        None => {
                            println!("postgres  SKIPPED: set TOOLWARDEN_TEST_POSTGRES_URL");
                            break;
                        }
                    },
                    other => panic!("TW_HISTORY_BACKENDS: unknown backend {other}"),
                };
                let mut options = StoreOptions::default();
                if let Some(kib) = std::env::var("TW_HISTORY_WRITER_CACHE_KIB")
                    .ok()
                    .and_then(|s| s.parse().ok())
                {
                    options.sqlite_writer_cache_kib = kib;
                }
                let store = Store::open_with(&url, options).await.expect("open store");
                let mut first = None;
                let mut filled = 0;
                for (run, &rows) in sizes.iter().enumerate() {
                    let t = Instant::now();
                    fill(&url, mode, filled, rows.max(filled)).await;
                    let fill_s = t.elapsed().as_secs_f64();
                    filled = rows.max(filled);
                    let (eps, cpu) = measure(&store, events(mode, run as u64, turns)).await;
                    let first_eps = *first.get_or_insert(eps);
                    println!(
                        "{backend:<9} {:<7} history {rows:>9} rows  {eps:>9.0} events/s {cpu:>6.2} µs CPU/event  first/this {:.2}  (fill {fill_s:.0} s)",
                        mode.name(),
                        first_eps / eps
                    );
                }
                store.close().await;
                if backend == "sqlite" {
                    println!(
                        "sqlite    page cache: {:?}, truncations {:?}",
                        toolwarden_sqlite_page_cache::install(),
                        toolwarden_sqlite_page_cache::counts()
                    );
                }
                if let (true, Some(base)) = (backend == "postgres", &pg_url) {
                    // Give the disk back (millions of rows are gigabytes).
                    let _ = fresh_pg_schema(base, mode.name()).await;
                }
            }
        }
    });
}
