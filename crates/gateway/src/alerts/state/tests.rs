//! The evaluation loop over a real SQLite store: who resolves what.

use std::time::Duration;

use toolwarden_store::{
    Event, NoopObserver, Recorder, RecorderOptions, ToolResultRecord, ToolWindowRow,
};

use super::*;
use crate::{Config, alerts::config::RawAlerts, metrics::Metrics};

/// An engine named `instance` over `store`, with no webhooks.
fn engine(store: &Store, instance: &str) -> Engine {
    engine_with(store, instance, AlertsConfig::default())
}

/// An engine named `instance` over `store` with these settings.
fn engine_with(store: &Store, instance: &str, config: AlertsConfig) -> Engine {
    let recorder = Recorder::start(
        None,
        RecorderOptions {
            queue_capacity: 16,
            batch_max: 16,
            flush_interval: Duration::from_millis(5),
            jsonl: None,
        },
        Arc::new(NoopObserver),
    );
    let sinks = Arc::new(Sinks::new(
        recorder,
        Arc::new(Metrics::new()),
        Default::default(),
    ));
    let board = sinks.metrics.alerts.clone();
    let client =
        crate::upstream::build_client(&Config::for_tests("http://127.0.0.1:9")).expect("client");
    Engine {
        delivery: Delivery::start(&config, client, board.clone(), instance.into()),
        config,
        store: store.clone(),
        sinks,
        board,
        jsonl: None,
        instance: instance.into(),
        dropped: VecDeque::new(),
        unrecorded: Default::default(),
    }
}

/// `instance`'s `events_dropped` alert, firing since `at_ms`.
fn dropped_alert(instance: &str, at_ms: i64) -> AlertTransition {
    AlertTransition {
        alert_key: rules::alert_key("events_dropped", "*", rules::Models::All, instance),
        seq: 1,
        state: "firing".into(),
        rule: "events_dropped".into(),
        tool: "*".into(),
        model: "*".into(),
        instance: instance.into(),
        value: 7.0,
        threshold: 0.0,
        volume: 7,
        started_ms: at_ms,
        at_ms,
        gateway: instance.into(),
    }
}

async fn state_of(store: &Store, key: &str) -> AlertTransition {
    let latest = store.alert_latest(key).await.expect("states");
    latest.expect("the alert")
}

/// A container restarted under a new hostname is a new instance: the
/// old one's `events_dropped` alert is resolved by another gateway once
/// the old one has stopped evaluating for long enough, not while it
/// still evaluates (its heartbeat), nor soon after it fired.
#[tokio::test]
async fn a_stale_instances_dropped_events_alert_is_resolved_by_another() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("alerts.db").display());
    let store = Store::open(&url).await.expect("store");
    let mut new = engine(&store, "gw-new");
    let window_ms = i64::try_from(new.config.window.as_millis()).expect("window");
    let long_ago = now_ms() - 3 * window_ms;
    let old = dropped_alert("gw-old", long_ago);
    assert!(store.claim_alert_transition(&old).await.expect("claim"));
    let recent = dropped_alert("gw-recent", now_ms() - window_ms);
    assert!(store.claim_alert_transition(&recent).await.expect("claim"));

    // gw-old still evaluates: its alert is its own business.
    store
        .alert_heartbeat("gw-old", now_ms(), 0)
        .await
        .expect("beat");
    new.round().await.expect("round");
    assert_eq!(state_of(&store, &old.alert_key).await.state, "firing");

    // gw-old was last seen three windows ago: gone.
    store
        .alert_heartbeat("gw-old", long_ago, 0)
        .await
        .expect("beat");
    new.round().await.expect("round");
    let s = state_of(&store, &old.alert_key).await;
    assert_eq!((s.state.as_str(), s.seq), ("resolved", 2), "{s:?}");
    assert_eq!(
        (s.gateway.as_str(), s.instance.as_str()),
        ("gw-new", "gw-old")
    );
    assert_eq!((s.value, s.volume), (0.0, 0));
    let why = rules::resolved_for_gone_instance(&s).expect("a reason");
    assert!(why.contains("gw-old stopped evaluating"), "{why}");
    // Fired a window ago, no heartbeat (a gateway of an older version):
    // not gone yet.
    assert_eq!(state_of(&store, &recent.alert_key).await.state, "firing");
    // This gateway's own heartbeat was written; gw-old's forgotten.
    let seen = store
        .alert_heartbeat("probe", now_ms(), 0)
        .await
        .expect("beat");
    let names: Vec<&str> = seen.iter().map(|(i, _)| i.as_str()).collect();
    assert!(
        names.contains(&"gw-new") && !names.contains(&"gw-old"),
        "{names:?}"
    );
}

async fn sqlite_store(dir: &tempfile::TempDir) -> Store {
    let url = format!("sqlite://{}", dir.path().join("alerts.db").display());
    Store::open(&url).await.expect("store")
}

/// `results` results of `tool` called by `model`, `failures` of them failed.
fn tool_row(tool: &str, model: &str, results: u64, failures: u64) -> ToolWindowRow {
    ToolWindowRow {
        tool: tool.into(),
        model: model.into(),
        results,
        failures,
        exec_ms_sum: 0.0,
        exec_count: 0,
    }
}

fn window(tools: Vec<ToolWindowRow>) -> AlertWindow {
    AlertWindow {
        tools,
        requests: Vec::new(),
    }
}

/// Settings as read from `toml` (an `[alerts]` table's body).
fn alerts_config(toml: &str) -> AlertsConfig {
    let raw: RawAlerts = toml::from_str(toml).expect("toml");
    raw.validated().expect("valid")
}

/// Regression: `book|m1` (every call failing) resolved as soon as the
/// other model's calls left the window, a per-model row being shown only
/// for a tool of several models, and fired again when they came back.
#[tokio::test]
async fn a_tool_model_alert_keeps_firing_when_the_other_model_leaves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let mut gw = engine(&store, "gw-a");
    let key = rules::alert_key("tool_failure_rate", "book", rules::Models::One("m1"), "");
    let now = now_ms();
    let both = window(vec![
        tool_row("book", "m1", 20, 20),
        tool_row("book", "m2", 20, 0),
    ]);
    gw.round_over(&both, now).await.expect("round");
    assert_eq!(state_of(&store, &key).await.state, "firing");

    let alone = window(vec![tool_row("book", "m1", 20, 20)]);
    gw.round_over(&alone, now + 1).await.expect("round");
    let s = state_of(&store, &key).await;
    assert_eq!((s.state.as_str(), s.seq), ("firing", 1), "{s:?}");

    // m1's own calls recover: now it resolves.
    let recovered = window(vec![tool_row("book", "m1", 20, 0)]);
    gw.round_over(&recovered, now + 2).await.expect("round");
    assert_eq!(state_of(&store, &key).await.state, "resolved");
}

/// Resolves as many other alerts after `key`'s resolution (from `at_ms`
/// on) as a round reads by default (`DEFAULT_RESOLVED_STATES`): `key` is
/// not among them.
async fn resolve_as_many_as_are_read(store: &Store, key: &str, at_ms: i64) {
    let resolved = state_of(store, key).await;
    assert_eq!(resolved.state, "resolved");
    for i in 0..toolwarden_store::DEFAULT_RESOLVED_STATES {
        let t = AlertTransition {
            alert_key: format!("tool_failure_rate|t{i}|*|"),
            tool: format!("t{i}"),
            at_ms: at_ms + i,
            ..resolved.clone()
        };
        assert!(store.claim_alert_transition(&t).await.expect("claim"));
    }
    let states = (store
        .alert_states(toolwarden_store::DEFAULT_RESOLVED_STATES)
        .await)
        .expect("states");
    assert!(!states.iter().any(|s| s.alert_key == key), "not read");
}

/// A round reads every firing alert but only the latest resolved ones
/// (`alerts.resolved_states`): an alert resolved before them that fails again
/// fires as its next step, looked up by its key, not as step 1 (which the
/// store holds already: its claim would lose, and it would never fire).
#[tokio::test]
async fn an_alert_resolved_before_the_states_read_fires_as_its_next_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let mut gw = engine(&store, "gw-a");
    let key = rules::alert_key("tool_failure_rate", "book", rules::Models::All, "");
    let now = now_ms();
    let failing = window(vec![tool_row("book", "m1", 20, 20)]);
    let fixed = window(vec![tool_row("book", "m1", 20, 0)]);
    gw.round_over(&failing, now).await.expect("round");
    gw.round_over(&fixed, now + 1).await.expect("round");
    assert_eq!(state_of(&store, &key).await.seq, 2);
    resolve_as_many_as_are_read(&store, &key, now + 2).await;

    let later = now + 10_000;
    gw.round_over(&failing, later).await.expect("round");
    let s = state_of(&store, &key).await;
    assert_eq!(
        (s.state.as_str(), s.seq, s.at_ms),
        ("firing", 3, later),
        "{s:?}"
    );
    assert!(
        gw.board
            .read()
            .states
            .iter()
            .any(|s| s.alert_key == key && s.state == "firing")
    );
}

/// `n` results of `tool` (model `m1`) recorded in `store` at `at_ms`,
/// `failed` or not.
async fn record_results(store: &Store, tool: &str, n: usize, failed: bool, at_ms: i64) {
    let recorder = Recorder::start(
        Some(store.clone()),
        RecorderOptions {
            queue_capacity: n.max(1),
            batch_max: n.max(1),
            flush_interval: Duration::from_millis(5),
            jsonl: None,
        },
        Arc::new(NoopObserver),
    );
    for i in 0..n {
        recorder.record(Event::ToolResult(ToolResultRecord {
            request_id: format!("q-{tool}-{failed}-{i}"),
            session_id: "s".into(),
            provider: "openai".into(),
            model: Some("m1".into()),
            call_id: format!("call_{tool}_{failed}_{i}"),
            message_index: 1,
            tool: Some(tool.into()),
            failed,
            basis: if failed { "explicit" } else { "none" }.into(),
            content_bytes: 8,
            excerpt: None,
            at_ms,
            exec_ms: None,
            previous_response_id: None,
            answers: None,
            trace_parent: None,
            trace_state: None,
            latest_of_its_id: false,
            first_turn: None,
        }));
    }
    let report = recorder.shutdown().await;
    assert!(report.unwritten.is_empty(), "{report:?}");
}

/// Regression: a window the store cuts at `alerts.window_rows` pairs (a
/// flood of tool names, each busier than it) left a firing alert's tool
/// out, and the alert resolved as if its tool had no results. Its rows
/// are read by name: it keeps firing while they fail, and resolves on
/// them.
#[tokio::test]
async fn a_firing_alert_left_out_of_a_cut_window_is_judged_on_its_own_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let mut gw = engine_with(&store, "gw-a", alerts_config("window_rows = 50"));
    let key = rules::alert_key("tool_failure_rate", "quiet", rules::Models::All, "");
    let now = now_ms();
    record_results(&store, "quiet", 20, true, now).await;
    gw.round().await.expect("round");
    assert_eq!(state_of(&store, &key).await.state, "firing");

    let n = 50;
    let flood = window(
        (0..n)
            .map(|i| tool_row(&format!("t{i:05}"), "m1", 30, 0))
            .collect(),
    );
    assert!(flood.is_cut(50) && !flood.is_cut(51));
    gw.round_over(&flood, now + 1).await.expect("round");
    let s = state_of(&store, &key).await;
    assert_eq!((s.state.as_str(), s.seq), ("firing", 1), "{s:?}");

    record_results(&store, "quiet", 2_000, false, now + 2).await;
    gw.round_over(&flood, now + 3).await.expect("round");
    let s = state_of(&store, &key).await;
    assert_eq!((s.state.as_str(), s.seq), ("resolved", 2), "{s:?}");
    assert_eq!(s.volume, 2_020, "resolved on its rows: {s:?}");

    // A window that is not cut is taken as it is: no rows, no data.
    assert!(!window(vec![tool_row("t", "m1", 30, 0)]).is_cut(50));
}

/// Regression: a resolution a webhook could not take was sent again only
/// while it was among a round's states, the `alerts.resolved_states` resolved
/// last: one resolved before them was forgotten. It is looked up by its
/// key and sent again.
#[tokio::test]
async fn a_kept_resolution_older_than_the_states_read_is_sent_again() {
    use crate::metrics::alerts_board::NotificationKind;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    // Nothing listens on port 9: every notification fails, and is kept.
    let config = alerts_config(
        "webhooks = [\"http://127.0.0.1:9/hook\"]\nretries = 0\nrepeat_interval_ms = 0",
    );
    let mut gw = engine_with(&store, "gw-a", config);
    let key = rules::alert_key("tool_failure_rate", "book", rules::Models::All, "");
    let now = now_ms();
    let failing = window(vec![tool_row("book", "m1", 20, 20)]);
    let fixed = window(vec![tool_row("book", "m1", 20, 0)]);
    let settled = |gw: &Engine| {
        let board = gw.board.clone();
        async move {
            for _ in 0..500 {
                if board.pending.load(std::sync::atomic::Ordering::Relaxed) == 0 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("notifications still on their way");
        }
    };
    gw.round_over(&failing, now).await.expect("round");
    settled(&gw).await;
    gw.round_over(&fixed, now + 1).await.expect("round");
    settled(&gw).await;
    let transitions = gw.board.outcomes(NotificationKind::Transition);
    assert_eq!(
        transitions
            .failed
            .load(std::sync::atomic::Ordering::Relaxed),
        2
    );
    let board = gw.board.clone();
    let resent = || {
        let o = board.outcomes(NotificationKind::Resend);
        o.failed.load(std::sync::atomic::Ordering::Relaxed)
    };
    let before = resent();
    resolve_as_many_as_are_read(&store, &key, now + 2).await;

    gw.round_over(&fixed, now + 10_000).await.expect("round");
    settled(&gw).await;
    assert_eq!(resent(), before + 1, "the resolution sent again");
}

/// No more than `max_firing` alerts fire at once: the busiest fire, the
/// rest is held back (and shown as such) until some resolve.
#[tokio::test]
async fn no_more_alerts_fire_than_max_firing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let mut gw = engine_with(&store, "gw-a", alerts_config("max_firing = 2"));
    let key = |tool| rules::alert_key("tool_failure_rate", tool, rules::Models::All, "");
    let now = now_ms();
    let three = window(vec![
        tool_row("a", "m1", 20, 20),
        tool_row("b", "m1", 40, 40),
        tool_row("c", "m1", 30, 30),
    ]);
    gw.round_over(&three, now).await.expect("round");
    let firing = |gw: &Engine| -> Vec<String> {
        let mut keys: Vec<String> = (gw.board.read().states.iter())
            .filter(|s| s.state == "firing")
            .map(|s| s.tool.clone())
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(firing(&gw), ["b", "c"], "the busiest two");
    assert_eq!(gw.board.read().held_back, 1);
    let mut metrics = String::new();
    gw.board.write().running = true;
    gw.board.render(&mut metrics);
    assert!(
        metrics.contains("\ntoolwarden_alerts_held_back 1\n"),
        "{metrics}"
    );
    assert!(
        store
            .alert_latest(&key("a"))
            .await
            .expect("latest")
            .is_none()
    );

    // "b" recovers: "a" fires in its place.
    let b_fixed = window(vec![
        tool_row("a", "m1", 20, 20),
        tool_row("b", "m1", 40, 0),
        tool_row("c", "m1", 30, 30),
    ]);
    gw.round_over(&b_fixed, now + 1).await.expect("round");
    assert_eq!(firing(&gw), ["a", "c"]);
    assert_eq!(gw.board.read().held_back, 0);
}

/// Regression: a gateway with a rule turned off (or another threshold, or
/// an older version) resolved every alert of that rule another gateway
/// fired, and the other fired it again next round: a notification pair
/// every interval. A gateway resolves only what it could have fired.
#[tokio::test]
async fn a_gateway_resolves_only_alerts_it_could_have_fired() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let mut a = engine(&store, "gw-a");
    let mut off = engine_with(
        &store,
        "gw-off",
        alerts_config("[failure_rate]\nenabled = false"),
    );
    let mut lax = engine_with(
        &store,
        "gw-lax",
        alerts_config("[failure_rate]\nthreshold = 0.5"),
    );
    let key = rules::alert_key("tool_failure_rate", "book", rules::Models::All, "");
    let now = now_ms();
    // 25 % of 40 results failed: over gw-a's 5 %, under gw-lax's 50 %.
    let failing = window(vec![tool_row("book", "m1", 40, 10)]);
    a.round_over(&failing, now).await.expect("round");
    assert_eq!(state_of(&store, &key).await.state, "firing");

    for round in 1..=3 {
        off.round_over(&failing, now + round).await.expect("round");
        lax.round_over(&failing, now + round).await.expect("round");
        a.round_over(&failing, now + round).await.expect("round");
        let s = state_of(&store, &key).await;
        assert_eq!(
            (s.state.as_str(), s.seq),
            ("firing", 1),
            "round {round}: {s:?}"
        );
    }

    // gw-lax fires its own above 50 %; gw-a, whose threshold is another,
    // does not resolve it while gw-lax evaluates, even at 25 %.
    let recovered = window(vec![tool_row("book", "m1", 40, 0)]);
    a.round_over(&recovered, now + 10).await.expect("round");
    assert_eq!(state_of(&store, &key).await.state, "resolved");
    let worse = window(vec![tool_row("book", "m1", 40, 30)]);
    lax.round_over(&worse, now + 11).await.expect("round");
    let s = state_of(&store, &key).await;
    assert_eq!((s.state.as_str(), s.gateway.as_str()), ("firing", "gw-lax"));
    a.round_over(&failing, now + 12).await.expect("round");
    assert_eq!(
        state_of(&store, &key).await.seq,
        3,
        "gw-a left gw-lax's alert alone"
    );

    // gw-lax stops evaluating (no heartbeat for long): anyone resolves.
    let stale = a.stale_after_ms() + 1;
    store
        .alert_heartbeat("gw-lax", now - stale, 0)
        .await
        .expect("beat");
    // Past the alert's own time (now + 11) by more than the staleness.
    let later = now + 12 + stale;
    off.round_over(&failing, later).await.expect("round");
    let s = state_of(&store, &key).await;
    assert_eq!(
        (s.state.as_str(), s.gateway.as_str()),
        ("resolved", "gw-off"),
        "{s:?}"
    );
}

/// A still-firing alert is repeated once `repeat_interval` has passed
/// since it was last sent, by one gateway of those sharing the store, then
/// again an interval after that repeat; not before.
#[tokio::test]
async fn a_firing_alert_is_repeated_by_one_gateway_each_repeat_interval() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let settings = "webhooks = [\"http://127.0.0.1:9/hook\"]\nrepeat_interval_ms = 60000";
    let mut a = engine_with(&store, "gw-a", alerts_config(settings));
    let b = engine_with(&store, "gw-b", alerts_config(settings));
    let key = rules::alert_key("tool_failure_rate", "book", rules::Models::All, "");
    let now = now_ms();
    let failing = window(vec![tool_row("book", "m1", 40, 10)]);
    a.round_over(&failing, now).await.expect("round");
    let states = store
        .alert_states(toolwarden_store::DEFAULT_RESOLVED_STATES)
        .await
        .expect("states");
    let observed = HashMap::new();

    let at = |ms: i64| now + ms;
    assert!(
        a.renotify(&states, &observed, at(59_999))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        a.renotify(&states, &observed, at(60_000)).await.unwrap(),
        vec![key.clone()]
    );
    assert!(
        b.renotify(&states, &observed, at(60_000))
            .await
            .unwrap()
            .is_empty(),
        "sent twice"
    );
    assert!(
        b.renotify(&states, &observed, at(119_999))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        b.renotify(&states, &observed, at(120_000)).await.unwrap(),
        vec![key.clone()]
    );
    let repeats = store.alert_repeats().await.expect("repeats");
    assert_eq!(
        repeats
            .iter()
            .map(|r| (r.repeat_no, r.gateway.as_str()))
            .collect::<Vec<_>>(),
        [(2, "gw-b")]
    );
    // Off at 0.
    let off = engine_with(
        &store,
        "gw-off",
        alerts_config("webhooks = [\"http://127.0.0.1:9/hook\"]\nrepeat_interval_ms = 0"),
    );
    assert!(
        off.renotify(&states, &observed, at(600_000))
            .await
            .unwrap()
            .is_empty()
    );
}

/// A store that takes no writes (here: another connection holds the write
/// lock) fails the round, which needs its heartbeat and its claim; this
/// gateway's own `events_dropped` alert still fires, from its own counters,
/// and is recorded once the store takes writes again (not announced twice).
#[tokio::test]
async fn the_dropped_events_alert_fires_while_the_store_takes_no_writes() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("alerts.db");
    let url = format!("sqlite://{}", path.display());
    let options = toolwarden_store::StoreOptions {
        busy_timeout: Duration::from_millis(100),
        ..Default::default()
    };
    let store = Store::open_with(&url, options).await.expect("store");
    let mut e = engine(&store, "gw-a");
    e.round().await.expect("a first round, nothing dropped");
    let key = rules::alert_key("events_dropped", "*", rules::Models::All, "gw-a");

    let mut holder = sqlx::SqliteConnection::connect(&url)
        .await
        .expect("connect");
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut holder)
        .await
        .expect("write lock");
    let call = toolwarden_store::ToolCallRecord {
        threaded: false,
        request_id: "r".into(),
        session_id: "s".into(),
        provider: "openai".into(),
        model: None,
        response_id: None,
        dialect: None,
        call_index: 0,
        call_id: "call_1".into(),
        tool: "t".into(),
        arguments_bytes: 2,
        at_ms: now_ms(),
        turn: None,
    };
    for _ in 0..7 {
        e.sinks
            .recorder
            .fold(&toolwarden_store::Event::ToolCall(call.clone()), true);
    }
    assert!(e.round().await.is_err(), "the round needs writes");
    e.local_round(now_ms());
    let firing = |e: &Engine| {
        e.board
            .read()
            .states
            .iter()
            .any(|s| s.alert_key == key && s.state == "firing")
    };
    assert!(firing(&e), "fired from the gateway's own counters");
    e.local_round(now_ms());
    assert_eq!(e.unrecorded[&key].len(), 1, "fired once");
    assert_eq!(e.unrecorded[&key][0].seq, 1);

    sqlx::query("ROLLBACK")
        .execute(&mut holder)
        .await
        .expect("release");
    e.round().await.expect("the store takes writes again");
    assert!(e.unrecorded.is_empty());
    let s = state_of(&store, &key).await;
    assert_eq!(
        (s.state.as_str(), s.seq, s.volume),
        ("firing", 1, 7),
        "{s:?}"
    );
}

/// A gateway that starts while its database fails its rounds knows no
/// state: its own `events_dropped` alert fires locally as step 1, while
/// the store holds steps 1 (firing) and 2 (resolved) from its earlier
/// run. Step 1's claim then loses, and the firing the receivers were told
/// of was forgotten: the store said resolved, and no resolution was ever
/// sent. It is recorded as the store's next step instead (3), so the next
/// round resolves it, and announces that.
#[tokio::test]
async fn a_local_transition_whose_step_the_store_holds_otherwise_is_recorded_next() {
    let dir = tempfile::tempdir().expect("tempdir");
    local_step_held_otherwise(sqlite_store(&dir).await).await;
}

/// The same on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_transition_whose_step_the_store_holds_otherwise_is_recorded_next_postgres() {
    if let Some(store) = postgres_store("a_local_transition_whose_step…_postgres").await {
        local_step_held_otherwise(store).await;
    }
}

/// A fresh schema of `TOOLWARDEN_TEST_POSTGRES_URL`'s database; `None`
/// (and a loud `SKIPPED` line) without it.
async fn postgres_store(test: &str) -> Option<Store> {
    let url = postgres_url(test).await?;
    Some(Store::open(&url).await.expect("store"))
}

/// The URL of a fresh schema of `TOOLWARDEN_TEST_POSTGRES_URL`'s
/// database; `None` (and a loud `SKIPPED` line) without it.
async fn postgres_url(test: &str) -> Option<String> {
    use sqlx::Connection;
    let Ok(base) = std::env::var("TOOLWARDEN_TEST_POSTGRES_URL") else {
        eprintln!("SKIPPED {test}: TOOLWARDEN_TEST_POSTGRES_URL is not set");
        return None;
    };
    let schema = format!("tw_gw_alerts_{}_{}", std::process::id(), now_ms());
    let mut conn = sqlx::PgConnection::connect(&base)
        .await
        .expect("TOOLWARDEN_TEST_POSTGRES_URL is set but unreachable");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut conn)
        .await
        .expect("create schema");
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}options[search_path]={schema}"))
}

async fn local_step_held_otherwise(store: Store) {
    let mut e = engine(&store, "gw-a");
    let earlier = dropped_alert("gw-a", now_ms() - 60_000);
    let key = earlier.alert_key.clone();
    assert!(store.claim_alert_transition(&earlier).await.expect("claim"));
    let resolved = AlertTransition {
        seq: 2,
        state: "resolved".into(),
        at_ms: now_ms() - 30_000,
        ..earlier.clone()
    };
    assert!(
        store
            .claim_alert_transition(&resolved)
            .await
            .expect("claim")
    );

    let start = now_ms();
    e.dropped_in_window(start);
    let call = toolwarden_store::ToolCallRecord {
        threaded: false,
        request_id: "r".into(),
        session_id: "s".into(),
        provider: "openai".into(),
        model: None,
        response_id: None,
        dialect: None,
        call_index: 0,
        call_id: "call_1".into(),
        tool: "t".into(),
        arguments_bytes: 2,
        at_ms: start,
        turn: None,
    };
    e.sinks
        .recorder
        .fold(&toolwarden_store::Event::ToolCall(call), true);
    e.local_round(start + 1);
    assert_eq!(e.unrecorded[&key][0].seq, 1, "announced as step 1");
    assert_eq!(e.unrecorded[&key][0].state, "firing");

    // Two windows later nothing more is dropped: the alert resolves.
    let window_ms = i64::try_from(e.config.window.as_millis()).expect("window");
    let later = start + 2 * window_ms;
    e.round_over(&AlertWindow::default(), later)
        .await
        .expect("round");
    assert!(e.unrecorded.is_empty());
    let history: Vec<(i64, String)> = store
        .alert_history(10)
        .await
        .expect("history")
        .into_iter()
        .filter(|t| t.alert_key == key)
        .map(|t| (t.seq, t.state))
        .collect();
    assert_eq!(
        history,
        vec![
            (4, "resolved".to_string()),
            (3, "firing".to_string()),
            (2, "resolved".to_string()),
            (1, "firing".to_string()),
        ],
        "the local firing recorded as step 3, then resolved"
    );
    let fired = store
        .alert_history(10)
        .await
        .expect("history")
        .into_iter()
        .find(|t| t.alert_key == key && t.seq == 3)
        .expect("step 3");
    assert_eq!((fired.started_ms, fired.at_ms), (start + 1, start + 1));
}

/// A round that claimed and announced this gateway's `events_dropped`
/// firing, then failed a store call (here its states' read, made to fail
/// by a trigger on the claim), fell back to the local round, which read
/// the states of the round before (not firing) and announced the firing a
/// second time. The claimed step is on the board at once: announced once.
#[tokio::test]
async fn a_round_failing_after_its_claim_does_not_announce_it_again() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let url = format!("sqlite://{}", dir.path().join("alerts.db").display());
    let mut conn = sqlx::SqliteConnection::connect(&url)
        .await
        .expect("connect");
    // A row whose `seq` is text: reading the states fails from then on.
    sqlx::query(
        "CREATE TRIGGER poison AFTER INSERT ON alert_latest \
         WHEN NEW.rule = 'events_dropped' BEGIN \
         INSERT INTO alert_latest (alert_key, seq, state, rule, tool, model, instance, \
         value, threshold, volume, started_ms, at_ms, gateway) VALUES ('zz-poison', \
         'not a number', NEW.state, NEW.rule, NEW.tool, NEW.model, NEW.instance, NEW.value, \
         NEW.threshold, NEW.volume, NEW.started_ms, NEW.at_ms, NEW.gateway); END",
    )
    .execute(&mut conn)
    .await
    .expect("trigger");
    announced_once_after_a_failed_round(store, dir.path().join("events.jsonl")).await;
}

/// The same on PostgreSQL (the claim's trigger points its connection's
/// `search_path` nowhere, the pool's one connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_failing_after_its_claim_does_not_announce_it_again_postgres() {
    use sqlx::Connection;
    let Some(url) = postgres_url("a_round_failing_after_its_claim…_postgres").await else {
        return;
    };
    let options = toolwarden_store::StoreOptions {
        max_connections: 1,
        ..Default::default()
    };
    let store = Store::open_with(&url, options).await.expect("store");
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
    for sql in [
        "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
         PERFORM set_config('search_path', 'nowhere', false); RETURN NULL; END $$",
        "CREATE TRIGGER poison AFTER INSERT ON alert_latest FOR EACH ROW \
         WHEN (NEW.rule = 'events_dropped') EXECUTE FUNCTION poison()",
    ] {
        sqlx::query(sql).execute(&mut conn).await.expect("trigger");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    announced_once_after_a_failed_round(store, dir.path().join("events.jsonl")).await;
}

async fn announced_once_after_a_failed_round(store: Store, jsonl: std::path::PathBuf) {
    let mut e = engine(&store, "gw-a");
    e.jsonl = Some(jsonl.clone());
    let start = now_ms();
    e.round_over(&AlertWindow::default(), start)
        .await
        .expect("a first round, nothing dropped");
    let call = toolwarden_store::ToolCallRecord {
        threaded: false,
        request_id: "r".into(),
        session_id: "s".into(),
        provider: "openai".into(),
        model: None,
        response_id: None,
        dialect: None,
        call_index: 0,
        call_id: "call_1".into(),
        tool: "t".into(),
        arguments_bytes: 2,
        at_ms: start,
        turn: None,
    };
    for _ in 0..7 {
        e.sinks
            .recorder
            .fold(&toolwarden_store::Event::ToolCall(call.clone()), true);
    }
    let failed = e.round_over(&AlertWindow::default(), start + 1).await;
    assert!(failed.is_err(), "the states' read after the claim fails");
    // What `Engine::run` does when a round fails.
    e.local_round(start + 1);
    let lines = std::fs::read_to_string(&jsonl).unwrap_or_default();
    let firing: Vec<&str> = lines
        .lines()
        .filter(|l| l.contains("\"events_dropped\"") && l.contains("\"firing\""))
        .collect();
    assert_eq!(firing.len(), 1, "announced once: {lines}");
    assert!(e.unrecorded.is_empty(), "{:?}", e.unrecorded);
}

/// A local transition whose step the store holds in the same state (the
/// alert went the same way meanwhile) is not recorded again.
#[tokio::test]
async fn a_local_transition_the_store_holds_already_is_not_recorded_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = sqlite_store(&dir).await;
    let mut e = engine(&store, "gw-a");
    let held = dropped_alert("gw-a", now_ms() - 60_000);
    assert!(store.claim_alert_transition(&held).await.expect("claim"));
    let local = AlertTransition {
        at_ms: now_ms(),
        started_ms: now_ms(),
        value: 3.0,
        ..held.clone()
    };
    e.unrecorded.insert(held.alert_key.clone(), vec![local]);
    e.record_unrecorded().await.expect("recorded");
    assert!(e.unrecorded.is_empty());
    let history: Vec<AlertTransition> = store
        .alert_history(10)
        .await
        .expect("history")
        .into_iter()
        .filter(|t| t.alert_key == held.alert_key)
        .collect();
    assert_eq!(history, vec![held]);
}

/// An alert's JSONL line after a line another write left torn (a full
/// disk, `kill -9` mid-write) starts a line of its own: it was glued to
/// the torn one, and a reader lost both.
#[test]
fn an_alert_line_after_a_torn_one_stays_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    std::fs::write(&path, b"{\"type\":\"request\"}\n{\"type\":\"requ").unwrap();
    let alert = dropped_alert("gw-a", 1_000);
    append_jsonl(&path, &alert).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert_eq!(rows[1], "{\"type\":\"requ");
    let read: serde_json::Value = serde_json::from_str(rows[2]).expect("a whole line");
    assert_eq!(read["type"], "alert");
    assert_eq!(read["alert_key"], alert.alert_key.as_str());
}

/// A tool or model name holding a carriage return or a newline (chosen by
/// a client) is logged escaped: shown raw, `\r` rewrote the start of the
/// operator's log line and `\n` forged a line of its own.
#[test]
fn an_alerts_log_line_escapes_control_characters_in_names() {
    #[derive(Clone, Default)]
    struct Lines(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lines").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = runtime.block_on(sqlite_store(&dir));
    let e = runtime.block_on(async { engine(&store, "gw-a") });
    let mut t = dropped_alert("gw-a", now_ms());
    t.rule = "tool_failure_rate".into();
    t.instance = String::new();
    t.tool = "Bash\r2026-01-01 FAKE".into();
    t.model = "gpt\nERROR forged line".into();
    tracing::subscriber::with_default(subscriber, || {
        let _guard = runtime.enter();
        e.announce(&t);
        t.state = "resolved".into();
        e.announce(&t);
    });
    let text = String::from_utf8(lines.0.lock().expect("lines").clone()).expect("utf-8");
    assert!(!text.contains('\r'), "{text:?}");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains(r"Bash\r2026"), "{text}");
    assert!(text.contains(r"gpt\nERROR"), "{text}");
}
