use super::*;

fn call(tool: &str) -> ToolCallRecord {
    ToolCallRecord {
        threaded: false,
        request_id: "r".into(),
        session_id: "s".into(),
        provider: "anthropic".into(),
        model: Some("claude".into()),
        response_id: None,
        dialect: None,
        call_index: 0,
        call_id: "c".into(),
        tool: tool.into(),
        arguments_bytes: 2,
        at_ms: 0,
        turn: None,
    }
}

#[test]
fn counters_and_labels_render_in_text_format() {
    let metrics = Arc::new(Metrics::new());
    let observer = MetricsObserver(metrics.clone());
    observer.on_tool_call(&call("Bash"));
    observer.on_tool_call(&call("Bash"));
    observer.on_tool_call(&call("we\"ird\\name\n"));
    let failed = ToolResultRecord {
        request_id: "r".into(),
        session_id: "s".into(),
        provider: "anthropic".into(),
        model: Some("claude".into()),
        call_id: "c".into(),
        message_index: 1,
        tool: None,
        failed: true,
        basis: "explicit".into(),
        content_bytes: 10,
        excerpt: Some("Exit code 1".into()),
        at_ms: 0,
        exec_ms: None,
        previous_response_id: None,
        answers: None,
        trace_parent: None,
        trace_state: None,
        latest_of_its_id: false,
        first_turn: None,
    };
    observer.on_tool_result(&failed, "Bash");
    observer.on_tool_result(
        &ToolResultRecord {
            failed: false,
            ..failed.clone()
        },
        "Bash",
    );
    let request = RequestRecord {
        request_id: "r".into(),
        session_id: "s".into(),
        session_source: "header".into(),
        at_ms: 0,
        provider: "anthropic".into(),
        dialect: None,
        path: "/v1/messages".into(),
        model: Some("claude".into()),
        status: 200,
        streaming: false,
        upstream_latency_ms: 1.0,
        first_byte_ms: None,
        overhead_us: 1.0,
        input_tokens: Some(1200),
        output_tokens: Some(34),
        response_id: None,
        repairs: vec![],
        repair_mode: "fix".into(),
        parse_error: None,
        error: None,
        trace_parent: None,
        trace_state: None,
        server_address: None,
        server_port: None,
        calls_incomplete: false,
    };
    observer.on_request(&request);
    observer.on_request(&RequestRecord {
        output_tokens: None,
        ..request
    });
    metrics.repair("anthropic", "missing_result");
    metrics.upstream_request(Provider::OpenAi, 200, Duration::from_millis(30));
    metrics.overhead(Duration::from_micros(20));

    assert_eq!(
        metrics.counter(TOOL_CALLS_TOTAL, &["anthropic", "claude", "Bash"]),
        2
    );
    assert_eq!(
        metrics.counter(
            TOOL_FAILURES_TOTAL,
            &["anthropic", "claude", "Bash", "explicit"]
        ),
        1
    );
    let text = metrics.render(RecorderCounters {
        events_written: 7,
        events_dropped: 1,
        jsonl_rotations: 3,
        jsonl_lines_lost: 5,
        ..RecorderCounters::default()
    });
    for line in [
        "toolwarden_tool_calls_total{provider=\"anthropic\",model=\"claude\",tool=\"Bash\"} 2",
        "toolwarden_tool_calls_total{provider=\"anthropic\",model=\"claude\",tool=\"we\\\"ird\\\\name\\n\"} 1",
        "toolwarden_tool_failures_total{provider=\"anthropic\",model=\"claude\",tool=\"Bash\",basis=\"explicit\"} 1",
        "toolwarden_tool_results_total{provider=\"anthropic\",model=\"claude\",tool=\"Bash\"} 2",
        "toolwarden_tokens_total{provider=\"anthropic\",model=\"claude\",type=\"input\"} 2400",
        "toolwarden_tokens_total{provider=\"anthropic\",model=\"claude\",type=\"output\"} 34",
        concat!(
            "toolwarden_build_info{version=\"",
            env!("CARGO_PKG_VERSION"),
            "\"} 1"
        ),
        "toolwarden_repairs_total{dialect=\"anthropic\",defect=\"missing_result\"} 1",
        "toolwarden_upstream_requests_total{provider=\"openai\",status=\"200\"} 1",
        "toolwarden_events_dropped_total 1",
        "toolwarden_events_written_total 7",
        "toolwarden_jsonl_rotations_total 3",
        "toolwarden_jsonl_lines_lost_total 5",
        "toolwarden_upstream_latency_seconds_bucket{provider=\"openai\",le=\"0.025\"} 0",
        "toolwarden_upstream_latency_seconds_bucket{provider=\"openai\",le=\"0.05\"} 1",
        "toolwarden_upstream_latency_seconds_count{provider=\"openai\"} 1",
        "toolwarden_gateway_overhead_seconds_bucket{le=\"0.000025\"} 1",
        "toolwarden_gateway_overhead_seconds_bucket{le=\"+Inf\"} 1",
        "# TYPE toolwarden_gateway_overhead_seconds histogram",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line}\n{text}");
    }
}

#[test]
fn label_cardinality_is_bounded() {
    let metrics = Metrics::new();
    for i in 0..MAX_SERIES + 50 {
        metrics.repair("anthropic", &format!("d{i}"));
    }
    assert_eq!(metrics.counter(REPAIRS_TOTAL, &["other", "other"]), 50);
    assert_eq!(metrics.repairs.series.read().unwrap().len(), MAX_SERIES + 1);
}

#[test]
fn long_label_values_are_cut() {
    let metrics = Arc::new(Metrics::new());
    let observer = MetricsObserver(metrics.clone());
    // 1 MiB models (one starting with an odd byte, so the cut falls inside
    // a two-byte char), each distinct only past the cut.
    for i in 0..8 {
        let head = if i % 2 == 0 { "m" } else { "é" };
        let model = format!("{head}{}{i}", "é".repeat(512 * 1024));
        let mut rec = call(&model);
        rec.model = Some(model.clone());
        observer.on_tool_call(&rec);
        let failed = ToolResultRecord {
            request_id: "r".into(),
            session_id: "s".into(),
            provider: "anthropic".into(),
            model: Some(model.clone()),
            call_id: "c".into(),
            message_index: 1,
            tool: None,
            failed: true,
            basis: "explicit".into(),
            content_bytes: 10,
            excerpt: None,
            at_ms: 0,
            exec_ms: None,
            previous_response_id: None,
            answers: None,
            trace_parent: None,
            trace_state: None,
            latest_of_its_id: false,
            first_turn: None,
        };
        observer.on_tool_result(&failed, &model);
        // Read back under the long name: the series it was counted in.
        assert!(metrics.counter(TOOL_CALLS_TOTAL, &["anthropic", &model, &model]) > 0);
    }
    let text = metrics.render(RecorderCounters::default());
    assert!(text.len() < 16 * 1024, "{} bytes", text.len());
    // The two prefixes: two series each, every value cut at a char boundary.
    assert_eq!(metrics.tool_calls.series.read().unwrap().len(), 2);
    assert_eq!(metrics.tool_failures.series.read().unwrap().len(), 2);
    for key in metrics.tool_calls.series.read().unwrap().keys() {
        assert!(key[1].len() <= crate::limits::MAX_NAME_LEN);
        assert!(key[1].len() >= crate::limits::MAX_NAME_LEN - 1);
    }
    assert_eq!(
        metrics.counter(TOOL_CALLS_TOTAL, &["anthropic", "m", "m"]),
        0,
        "a short value is its own series"
    );
}

/// The typed events move exactly the series the label-taking calls did:
/// the exposition is byte for byte the same.
#[test]
fn events_render_the_same_bytes_as_labels() {
    use events::{
        RepairApplied, UnparsedReason, UnparsedRequest, UnparsedResponse, UpstreamFinished,
    };
    use toolwarden_wire::{DefectKind, Dialect};

    let by_label = Metrics::new();
    by_label.repair("anthropic", "missing_result");
    by_label.repair("openai-chat", "orphan_result");
    by_label.upstream_request(Provider::Gemini, 502, Duration::from_millis(40));
    by_label.overhead(Duration::from_micros(30));
    by_label.unparsed_request(Provider::Anthropic);
    for reason in [
        "compressed",
        "too_large",
        "invalid",
        "parser_error",
        "malformed_frame",
        "no_room",
    ] {
        by_label.unparsed_response(reason);
    }

    let by_event = Metrics::new();
    by_event.emit(RepairApplied {
        dialect: Dialect::Anthropic,
        defect: DefectKind::MissingResult,
    });
    by_event.emit(RepairApplied {
        dialect: Dialect::OpenAiChat,
        defect: DefectKind::OrphanResult,
    });
    by_event.emit(UpstreamFinished {
        provider: Provider::Gemini,
        status: 502,
        latency: Duration::from_millis(40),
        overhead: Duration::from_micros(30),
    });
    by_event.emit(UnparsedRequest {
        provider: Provider::Anthropic,
    });
    for reason in [
        UnparsedReason::Compressed,
        UnparsedReason::TooLarge,
        UnparsedReason::Invalid,
        UnparsedReason::ParserError,
        UnparsedReason::MalformedFrame,
        UnparsedReason::NoRoom,
    ] {
        by_event.emit(UnparsedResponse { reason });
    }

    let counters = RecorderCounters::default();
    assert_eq!(by_event.render(counters), by_label.render(counters));
    assert!(
        by_event.render(counters).contains(
            "toolwarden_repairs_total{dialect=\"openai-chat\",defect=\"orphan_result\"} 1"
        )
    );
}
