//! Events that cannot be recorded in detail keep exact per-tool counts.

use super::*;

/// A request that makes the mock call `shell` (no results in it).
const CALLING: &str = r#"{"model":"claude-test","max_tokens":64,"tools":[{"name":"shell","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"list the files"}]}"#;

/// A request carrying one failed `grep` result whose call id is `id` (a
/// call no response of this gateway made: it counts as a call of its own).
fn failing(id: &str) -> String {
    format!(
        r#"{{"model":"claude-test","max_tokens":64,"messages":[{{"role":"user","content":"find it"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"grep","input":{{}}}}]}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","is_error":true,"content":"Error: no such file"}}]}}]}}"#
    )
}

/// `POST /v1/messages` with `body` and session `session`; the status.
fn post_body(addr: SocketAddr, session: &str, body: &str) -> Option<u16> {
    let text = exchange(addr, session, body, Duration::from_secs(10))?;
    text.split(' ').nth(1).and_then(|c| c.parse().ok())
}

/// `toolwarden stats --json` on `db`: per tool, (calls, failures).
fn stats_per_tool(db: &Path) -> std::collections::BTreeMap<String, (u64, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_toolwarden"))
        .args(["stats", "--json", "--database"])
        .arg(format!("sqlite://{}", db.display()))
        .output()
        .expect("run toolwarden stats");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stats JSON");
    v["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            let n = |k: &str| t[k].as_u64().unwrap_or(0);
            (
                t["tool"].as_str().unwrap_or("").to_owned(),
                (n("calls"), n("failures")),
            )
        })
        .collect()
}

/// A counter of `/metrics` with exactly these labels (0 when absent).
fn metric(addr: SocketAddr, series: &str) -> u64 {
    let text = get(addr, "/metrics").expect("/metrics");
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0)
}

/// Issue 14: events that cannot be queued in detail (a queue of 4, a writer
/// blocked by another process's write lock) are dropped and counted, and
/// their per-tool counts are folded into `dropped_tool_counts`: `stats`
/// and `/metrics` still show exactly the calls and failures sent.
#[test]
fn dropped_events_keep_the_per_tool_counts_exact() {
    let mock = mock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tw.db");
    let gw = Served::start(
        dir.path(),
        &db,
        &mock.url,
        &["--record-queue-capacity", "4", "--record-batch-max", "4"],
    );
    // One request first, so the writer's connection is open and the file
    // made, then the lock.
    assert_eq!(post_body(gw.addr, "warm", CALLING), Some(200));
    std::thread::sleep(Duration::from_millis(300));
    let lock = WriteLock::take(&db);
    let (per_client, clients) = (60usize, 3usize);
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let addr = gw.addr;
            std::thread::spawn(move || {
                let mut ok = 0;
                for k in 0..per_client {
                    let session = format!("burst-{c}-{k}");
                    let status = if k % 2 == 0 {
                        post_body(addr, &session, CALLING)
                    } else {
                        post_body(addr, &session, &failing(&format!("toolu_drop_{c}_{k}")))
                    };
                    ok += usize::from(status == Some(200));
                }
                ok
            })
        })
        .collect();
    let answered: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(answered, per_client * clients, "every request answered");
    let (_, dropped, _, _) = recorder(gw.addr);
    assert!(
        dropped > 0,
        "a queue of 4 behind a locked database dropped nothing"
    );
    lock.release();
    // The backlog and the folded counts are written once the lock is gone.
    let calls_sent = 1 + (per_client * clients / 2) as u64;
    let failures_sent = (per_client * clients / 2) as u64;
    let t = Instant::now();
    while recorder(gw.addr).3 > 0 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let shell =
        r#"toolwarden_tool_calls_total{provider="anthropic",model="claude-test",tool="shell"}"#;
    let grep = r#"toolwarden_tool_failures_total{provider="anthropic",model="claude-test",tool="grep",basis="explicit"}"#;
    assert_eq!(metric(gw.addr, shell), calls_sent, "/metrics: shell calls");
    assert_eq!(
        metric(gw.addr, grep),
        failures_sent,
        "/metrics: grep failures"
    );
    let mut gw = gw;
    gw.signal("TERM");
    assert!(
        gw.wait(Duration::from_secs(15))
            .is_some_and(|s| s.success())
    );
    let stats = stats_per_tool(&db);
    eprintln!("dropped {dropped} events; stats per tool: {stats:?}");
    assert_eq!(stats.get("shell"), Some(&(calls_sent, 0)), "{stats:?}");
    assert_eq!(
        stats.get("grep"),
        Some(&(failures_sent, failures_sent)),
        "{stats:?}"
    );
    assert_eq!(stats.len(), 2, "{stats:?}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let folded: i64 = rt.block_on(async {
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
            .await
            .expect("open");
        sqlx::query_scalar("SELECT COALESCE(SUM(calls + results), 0) FROM dropped_tool_counts")
            .fetch_one(&mut conn)
            .await
            .expect("read dropped_tool_counts")
    });
    assert!(folded > 0, "nothing was folded: the test did not test it");
}
