//! Integration tests of toolwarden-store through its public API. Every
//! scenario runs on SQLite (temp file) and on PostgreSQL when
//! `TOOLWARDEN_TEST_POSTGRES_URL` is set (`URL=$(.ci/pg.sh start)`), else
//! the PostgreSQL half prints a loud skip line.

mod alerts;
mod batches;
mod checkpoint;
mod dropped;
mod fork_props;
mod retention;
mod reused_props;
mod scenarios;
mod schema;
mod support;

mod pg_proxy;
mod race;
mod recorder;
mod shutdown;
mod unsure;

/// One test per backend for a scenario taking a `TestDb` (in `scenarios`,
/// or in the module named first).
macro_rules! both {
    ($name:ident) => {
        both!(scenarios::$name);
    };
    ($module:ident :: $name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                crate::$module::$name(crate::support::TestDb::sqlite()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let test = concat!(stringify!($name), "::postgres");
                if let Some(db) = crate::support::TestDb::postgres(test).await {
                    crate::$module::$name(db).await;
                }
            }
        }
    };
}

both!(dedup_and_reused_ids);
both!(cross_session_resolution);
both!(a_session_that_named_the_id_keeps_its_results);
both!(late_call_merges);
both!(late_calls_merge_across_sessions);
both!(late_calls_skip_old_results);
both!(resolves_names_across_restart);
both!(repairs_and_requests);
both!(batch_sizes);
both!(stats_are_one_snapshot);
both!(session_of_a_response);
both!(late_calls_merge_in_one_batch);
both!(response_ids_only_where_continuations_name_them);
both!(parked_calls_still_pair);
both!(parked_call_serves_the_second_result);
both!(sessions_are_numbered_at_first_sight);
both!(newest_calls_of_a_long_session);
both!(a_result_resent_at_another_position_counts_once);
both!(another_run_answering_a_reused_id_at_the_same_position_counts);
both!(interleaved_runs_of_a_reused_id_are_told_apart_by_their_turns);
both!(a_model_filter_of_unknown_finds_rows_without_a_model);
both!(a_repeated_call_turn_pairs_each_result_with_its_own_call);
both!(a_rewritten_answer_resent_counts_once_and_a_twins_first_answer_counts);
both!(a_compressed_history_answers_the_old_sessions_calls);
both!(a_forks_resent_answer_counts_once_in_its_parent);
both!(sessions_recorded_before_first_turns_are_not_probed);
both!(tool_lists_are_bounded);
both!(retention::retention_deletes_only_what_is_older);
both!(retention::retention_on_an_empty_history);
both!(retention::retention_deletes_the_turn_of_a_request_dropped_under_overload);
both!(retention::upgrading_deletes_the_turns_an_earlier_retention_left);
both!(retention::retention_keeps_a_session_revived_by_tool_events_alone);
both!(retention::retention_keeps_a_session_with_rows_newer_than_its_last_time);
both!(retention::retention_deletes_dropped_counts_in_steps);
both!(retention::retention_deletes_alert_transitions_in_steps);
both!(alerts::a_window_holds_its_busiest_pairs);
both!(alerts::alert_states_are_bounded);
both!(alerts::alert_latest_is_filled_from_the_history);
both!(dropped::refused_results_count_their_calls);
both!(dropped::a_refused_count_row_leaves_the_others_written);
both!(dropped::a_flush_written_twice_counts_once);
both!(schema::readers_require_the_builds_schema_and_no_build_writes_a_newer_one);
both!(schema::a_database_that_takes_no_writes_is_found_at_start);

/// Only PostgreSQL has other gateways' passes (on SQLite the steps run on
/// the recorder's own connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_yields_to_another_gateways_step() {
    let test = "retention_yields_to_another_gateways_step";
    if let (Some(db), Some(other)) = (
        support::TestDb::postgres(test).await,
        support::TestDb::postgres(test).await,
    ) {
        retention::retention_yields_to_another_gateways_step(db, other).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_on_sqlite_never_yields() {
    retention::retention_on_sqlite_never_yields(support::TestDb::sqlite()).await;
}

/// Only PostgreSQL has other writers during a pass (on SQLite its steps
/// run on the recorder's own connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_leaves_a_session_a_concurrent_batch_revives() {
    let test = "retention_leaves_a_session_a_concurrent_batch_revives";
    if let Some(db) = support::TestDb::postgres(test).await {
        retention::retention_leaves_a_session_a_concurrent_batch_revives(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_step_selects_its_chunk_once() {
    let test = "a_postgres_step_selects_its_chunk_once";
    if let Some(db) = support::TestDb::postgres(test).await {
        retention::a_postgres_step_selects_its_chunk_once(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_numbers_a_session_retention_deleted_meanwhile_anew() {
    let test = "a_batch_numbers_a_session_retention_deleted_meanwhile_anew";
    if let Some(db) = support::TestDb::postgres(test).await {
        retention::a_batch_numbers_a_session_retention_deleted_meanwhile_anew(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_holds_a_bounded_number_of_advisory_locks() {
    let test = "a_batch_holds_a_bounded_number_of_advisory_locks";
    if let Some(db) = support::TestDb::postgres(test).await {
        race::a_batch_holds_a_bounded_number_of_advisory_locks(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_does_not_wait_for_a_stalled_peer_for_good() {
    let test = "a_batch_does_not_wait_for_a_stalled_peer_for_good";
    if let Some(db) = support::TestDb::postgres(test).await {
        race::a_batch_does_not_wait_for_a_stalled_peer_for_good(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_past_the_statement_timeout_is_written_in_smaller_ones() {
    let test = "a_batch_past_the_statement_timeout_is_written_in_smaller_ones";
    if let Some(db) = support::TestDb::postgres(test).await {
        race::a_batch_past_the_statement_timeout_is_written_in_smaller_ones(db).await;
    }
}

mod a_half_open_connection_is_left_at_the_deadline {
    async fn run(test: &str, held_commit: bool) {
        if let Some(db) = crate::support::TestDb::postgres(test).await {
            crate::unsure::a_half_open_connection_is_left_at_the_deadline(db, held_commit).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn before_the_commit() {
        run("before_the_commit", false).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn at_the_commit() {
        run("at_the_commit", true).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_half_open_connection_is_not_handed_out() {
    let test = "an_idle_half_open_connection_is_not_handed_out";
    if let Some(db) = support::TestDb::postgres(test).await {
        unsure::an_idle_half_open_connection_is_not_handed_out(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_half_open_as_it_is_given_back_frees_its_place() {
    let test = "a_connection_half_open_as_it_is_given_back_frees_its_place";
    if let Some(db) = support::TestDb::postgres(test).await {
        unsure::a_connection_half_open_as_it_is_given_back_frees_its_place(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folded_counts_on_a_half_open_connection_give_up_at_the_deadline() {
    let test = "folded_counts_on_a_half_open_connection_give_up_at_the_deadline";
    if let Some(db) = support::TestDb::postgres(test).await {
        unsure::folded_counts_on_a_half_open_connection_give_up_at_the_deadline(db).await;
    }
}

/// A COMMIT whose answer is lost: only PostgreSQL's can be (SQLite answers
/// in the gateway's own process: `sqlite_writer.rs`).
mod a_batch_whose_commit_is_lost_is_reported_once {
    use crate::pg_proxy::Cut;
    use crate::unsure::Shape;

    async fn run(test: &str, cut: Cut, shape: Shape) {
        if let Some(db) = crate::support::TestDb::postgres(test).await {
            crate::unsure::a_batch_whose_commit_is_lost_is_reported_once(db, cut, shape).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn landed() {
        run("landed", Cut::AnswerLost, Shape::Whole).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn not_landed() {
        run("not_landed", Cut::CommitLost, Shape::Whole).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn results_only_landed() {
        run("results_only_landed", Cut::AnswerLost, Shape::ResultsOnly).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn results_only_not_landed() {
        run(
            "results_only_not_landed",
            Cut::CommitLost,
            Shape::ResultsOnly,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn results_another_gateway_wrote_meanwhile() {
        let test = "results_another_gateway_wrote_meanwhile";
        if let Some(db) = crate::support::TestDb::postgres(test).await {
            crate::unsure::results_another_gateway_wrote_meanwhile_are_reported_by_it_alone(db)
                .await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn grown_retry_landed() {
        let test = "grown_retry_landed";
        if let Some(db) = crate::support::TestDb::postgres(test).await {
            crate::unsure::a_retry_that_grew_reports_each_event_once(db, Cut::AnswerLost).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn grown_retry_not_landed() {
        let test = "grown_retry_not_landed";
        if let Some(db) = crate::support::TestDb::postgres(test).await {
            crate::unsure::a_retry_that_grew_reports_each_event_once(db, Cut::CommitLost).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_numbers_are_unique_and_indexed() {
    let test = "session_numbers_are_unique_and_indexed";
    if let Some(db) = support::TestDb::postgres(test).await {
        schema::session_numbers_are_unique_and_indexed(db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backends_give_the_same_stats() {
    let lite = scenarios::stats_document(&support::TestDb::sqlite()).await;
    // Sanity on its own: 5 sessions × 4 calls, 3 results each, resent.
    let calls: u64 = lite["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["calls"].as_u64().unwrap())
        .sum();
    let failures: u64 = lite["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["failures"].as_u64().unwrap())
        .sum();
    assert_eq!(calls, 20, "{lite:#}");
    // (s + k) % 3 == 0 for k in 0..3: one failed result per session.
    assert_eq!(failures, 5, "{lite:#}");
    assert_eq!(lite["requests"]["total"], 20);
    assert_eq!(
        lite["sessions"].as_array().unwrap().len(),
        3,
        "limit applies"
    );
    if let Some(pg) = support::TestDb::postgres("backends_give_the_same_stats").await {
        let pg = scenarios::stats_document(&pg).await;
        assert_eq!(lite, pg);
    }
}

/// Names tied on their counts come in the order of their bytes from
/// either backend, so the lists (and at the row limit, which names they
/// hold) agree: PostgreSQL ordered them by the database's collation, a
/// language's on most clusters (`_a`, `a_b`, `ab`, `b`, `B` in `en-US`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backends_list_tied_names_in_the_same_order() {
    let lite = scenarios::tied_names_document(&support::TestDb::sqlite()).await;
    let tools: Vec<&str> = lite["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["B", "_a", "a_b", "ab", "b"], "{lite:#}");
    let test = "backends_list_tied_names_in_the_same_order";
    if let Some(pg) = support::TestDb::postgres_collated(test, "en-US").await {
        let doc = scenarios::tied_names_document(&pg).await;
        pg.drop_collated().await;
        assert_eq!(lite, doc);
    }
}

/// Alerts tied on their time come in the order of their keys' bytes from
/// either backend (`toolwarden alerts`, `/api/alerts`, the gauge's 1,000
/// series): PostgreSQL ordered them by the database's collation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backends_list_tied_alerts_in_the_same_order() {
    let lite = alerts::tied_alerts(&support::TestDb::sqlite()).await;
    let keys = |list: &[toolwarden_store::AlertTransition]| -> Vec<String> {
        list.iter().map(|t| t.alert_key.clone()).collect()
    };
    let bytes = ["B", "_a", "a_b", "ab", "b"].map(|t| format!("tool_failure_rate|{t}|*|"));
    assert_eq!(keys(&lite.0), bytes, "{lite:#?}");
    assert_eq!(keys(&lite.1), bytes, "{lite:#?}");
    let test = "backends_list_tied_alerts_in_the_same_order";
    if let Some(pg) = support::TestDb::postgres_collated(test, "en-US").await {
        let listed = alerts::tied_alerts(&pg).await;
        pg.drop_collated().await;
        assert_eq!(keys(&listed.0), bytes, "{listed:#?}");
        assert_eq!(keys(&listed.1), bytes, "{listed:#?}");
    }
}

#[test]
fn stats_json_has_the_contract_shape() {
    use toolwarden_store::*;
    let stats = Stats {
        tools: vec![ToolRow {
            tool: "t".into(),
            calls: 2,
            failures: 1,
            failure_rate: 0.5,
        }],
        models: vec![ModelRow {
            model: "m".into(),
            tool: "t".into(),
            calls: 2,
            failures: 1,
            failure_rate: 0.5,
        }],
        sessions: vec![SessionRow {
            session_id: "s".into(),
            calls: 2,
            failures: 1,
            first_ms: 1,
            last_ms: 2,
        }],
        recent_failures: vec![FailureRow {
            at_ms: 2,
            session_id: "s".into(),
            model: Some("m".into()),
            tool: "t".into(),
            call_id: "c".into(),
            basis: "explicit".into(),
            excerpt: Some("boom".into()),
        }],
        repairs: vec![RepairRow {
            defect: "orphan_result".into(),
            count: 1,
        }],
        requests: RequestTotals {
            total: 1,
            errors: 0,
            streaming: 1,
            calls_incomplete: 0,
        },
        timeline: vec![TimelineRow {
            tool: "t".into(),
            bucket_ms: 0,
            failures: 1,
            calls: 2,
        }],
        totals: CallTotals {
            calls: 2,
            failures: 1,
            tools: 1,
            model_tools: 1,
        },
    };
    let v = serde_json::to_value(&stats).unwrap();
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        [
            "models",
            "recent_failures",
            "repairs",
            "requests",
            "sessions",
            "timeline",
            "tools",
            "totals"
        ]
    );
    assert_eq!(
        keys(&v["totals"]),
        ["calls", "failures", "model_tools", "tools"]
    );
    assert_eq!(
        keys(&v["tools"][0]),
        ["calls", "failure_rate", "failures", "tool"]
    );
    assert_eq!(
        keys(&v["models"][0]),
        ["calls", "failure_rate", "failures", "model", "tool"]
    );
    assert_eq!(
        keys(&v["sessions"][0]),
        ["calls", "failures", "first_ms", "last_ms", "session_id"]
    );
    assert_eq!(
        keys(&v["recent_failures"][0]),
        [
            "at_ms",
            "basis",
            "call_id",
            "excerpt",
            "model",
            "session_id",
            "tool"
        ]
    );
    assert_eq!(keys(&v["repairs"][0]), ["count", "defect"]);
    assert_eq!(
        keys(&v["requests"]),
        ["calls_incomplete", "errors", "streaming", "total"]
    );
    assert_eq!(
        keys(&v["timeline"][0]),
        ["bucket_ms", "calls", "failures", "tool"]
    );
}
