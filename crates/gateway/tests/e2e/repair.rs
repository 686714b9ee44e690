//! A conversation whose tool call has no result: the mock (like the real
//! provider) rejects it with its own 400; through the gateway it is repaired,
//! accepted, flagged with `x-toolwarden-repaired` and counted.

use serde_json::{Value, json};
use toolwarden_gateway::{RepairMode, Upstream, cloud::aws::AwsCredentials};
use toolwarden_mock_provider::{MockOptions, MockProvider};

use super::{
    cloud::{KEY_ID, SECRET, SESSION_TOKEN, aws_mock, client_signed},
    convo::{Convo, Kind},
    support::{Harness, metric, post},
};

/// A conversation where the model called a tool and the client moved on
/// without answering it.
async fn unanswered(kind: Kind, mock: &MockProvider, h: &Harness) -> Convo {
    let mut convo = Convo::new(kind, false, Some(&format!("repair-{}", kind.dialect())));
    let r = convo.send(&h.client, &mock.base_url()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = convo.calls(&r);
    assert_eq!(calls.len(), 1);
    convo.assistant_calls(&calls);
    convo.user("Never mind that, what is the weather in Lisbon?");
    convo
}

/// A body of more messages and blocks than the wire layer reads
/// (`toolwarden_wire::MAX_REQUEST_ITEMS`) is not read: forwarded as it
/// came, not repaired, counted as unparsed. Here its unanswered call
/// gets the provider's own 400, as it would without the gateway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_of_more_items_than_are_read_goes_as_it_came() {
    let h = Harness::start().await;
    let mut convo = unanswered(Kind::Chat, &h.mock, &h).await;
    for _ in 0..toolwarden_wire::MAX_REQUEST_ITEMS {
        convo.user("And Porto?");
    }
    let direct = convo.send(&h.client, &h.direct()).await;
    assert_eq!(direct.status, 400, "{}", direct.text());
    h.mock.take_received();
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.body, direct.body, "the provider's answer");
    assert!(r.header("x-toolwarden-repaired").is_none());
    let got = h.mock.take_received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body, serde_json::to_vec(&convo.body).unwrap());
    h.assert_metric("toolwarden_unparsed_requests_total", &[], 1.0)
        .await;
    let m = h.metrics().await;
    assert_eq!(metric(&m, "toolwarden_repairs_total", &[]), 0.0, "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_results_are_repaired_and_accepted() {
    for kind in Kind::ALL {
        let mut h = Harness::start().await;
        let convo = unanswered(kind, &h.mock, &h).await;

        // Directly: the provider's own 400.
        let direct = convo.send(&h.client, &h.direct()).await;
        assert_eq!(direct.status, 400, "{kind:?}: {}", direct.text());
        let err = direct.json();
        match kind {
            Kind::Anthropic => assert_eq!(err["error"]["type"], "invalid_request_error"),
            Kind::Chat | Kind::Responses => {
                assert_eq!(err["error"]["type"], "invalid_request_error")
            }
            Kind::Gemini => assert_eq!(err["error"]["status"], "INVALID_ARGUMENT"),
        }

        // Through the gateway: repaired, accepted.
        h.mock.take_received();
        let r = convo.send(&h.client, &h.gw()).await;
        assert_eq!(r.status, 200, "{kind:?}: {}", r.text());
        let changes: u64 = r
            .header("x-toolwarden-repaired")
            .unwrap_or_else(|| panic!("{kind:?}: no x-toolwarden-repaired header"))
            .parse()
            .expect("a number of changes");
        assert!(changes >= 1, "{kind:?}");
        let got = h.mock.take_received();
        assert_eq!(got.len(), 1);
        let sent = serde_json::to_vec(&convo.body).unwrap();
        assert_ne!(
            got[0].body, sent,
            "{kind:?}: the repaired body went upstream"
        );
        let defects = toolwarden_wire::validate(kind.wire(), &got[0].body).expect("readable");
        assert!(defects.is_empty(), "{kind:?}: still defective: {defects:?}");

        let m = h
            .metrics_when(|m| metric(m, "toolwarden_repairs_total", &[]) >= changes as f64)
            .await;
        assert_eq!(
            metric(
                &m,
                "toolwarden_repairs_total",
                &[("dialect", kind.dialect())]
            ),
            changes as f64,
            "{kind:?}\n{m}"
        );
        let stats = h.finish().await;
        let repaired: u64 = stats.repairs.iter().map(|r| r.count).sum();
        assert_eq!(repaired, changes, "{kind:?}: {:?}", stats.repairs);
    }
}

/// `repair = report`: the body goes upstream unchanged, so the provider's
/// 400 comes back unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_mode_forwards_unchanged() {
    let h = Harness::with(MockOptions::default(), |c| c.repair = RepairMode::Report).await;
    let convo = unanswered(Kind::Anthropic, &h.mock, &h).await;
    let direct = convo.send(&h.client, &h.direct()).await;
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, direct.body);
    assert!(r.header("x-toolwarden-repaired").is_none());
    let got = h.mock.received();
    assert_eq!(got[got.len() - 1].body, got[got.len() - 2].body);
}

/// An Anthropic conversation whose one tool call is answered by a result
/// flagged `is_error: true` with nothing in it, as an SDK sends a refused
/// permission (anthropics/claude-agent-sdk-python#248): the API refuses it.
async fn empty_error_result(h: &Harness) -> Convo {
    let mut convo = Convo::new(Kind::Anthropic, false, Some("repair-empty-error"));
    let r = convo.send(&h.client, &h.mock.base_url()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = convo.calls(&r);
    assert_eq!(calls.len(), 1);
    convo.assistant_calls(&calls);
    convo.results(&calls, &[(true, "")]);
    convo
}

/// `fix`: the empty error result is given a text, and nothing else in the
/// body changes; the provider accepts it; the repair is counted under its
/// own defect, in the metrics and the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_error_result_is_filled_and_accepted() {
    let mut h = Harness::start().await;
    let convo = empty_error_result(&h).await;

    let direct = convo.send(&h.client, &h.direct()).await;
    assert_eq!(direct.status, 400, "{}", direct.text());
    let message = direct.json()["error"]["message"].clone();
    assert_eq!(
        message,
        "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true"
    );

    h.mock.take_received();
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
    let got = h.mock.take_received();
    assert_eq!(got.len(), 1);
    // The body sent, byte for byte, but for the result's content.
    let sent = String::from_utf8(serde_json::to_vec(&convo.body).unwrap()).unwrap();
    assert_eq!(sent.matches(r#""content":"""#).count(), 1, "{sent}");
    let want = sent.replace(
        r#""content":"""#,
        r#""content":"The tool reported an error and gave no message.""#,
    );
    assert_eq!(String::from_utf8_lossy(&got[0].body), want);

    let labels = [("dialect", "anthropic"), ("defect", "empty_error_result")];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_repairs_total", &labels) >= 1.0)
        .await;
    assert_eq!(metric(&m, "toolwarden_repairs_total", &labels), 1.0, "{m}");
    assert_eq!(metric(&m, "toolwarden_repairs_total", &[]), 1.0, "{m}");
    let stats = h.finish().await;
    let repairs: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repairs, vec![("empty_error_result", 1)]);
}

/// `report`: the body goes as it came (and is refused as it was); the
/// defect is recorded all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_error_result_is_reported_in_report_mode() {
    let mut h = Harness::with(MockOptions::default(), |c| c.repair = RepairMode::Report).await;
    let convo = empty_error_result(&h).await;
    let direct = convo.send(&h.client, &h.direct()).await;
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, direct.body);
    assert!(r.header("x-toolwarden-repaired").is_none());
    let got = h.mock.received();
    assert_eq!(got[got.len() - 1].body, got[got.len() - 2].body);
    let stats = h.finish().await;
    let repairs: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repairs, vec![("empty_error_result", 1)]);
}

/// An Anthropic conversation ending in a prefill that ends in whitespace,
/// as a client asking for JSON sends it: the API refuses it ("final
/// assistant content cannot end with trailing whitespace",
/// tailcallhq/forgecode#1872).
fn prefill_ending_in_whitespace() -> Convo {
    let mut convo = Convo::new(Kind::Anthropic, false, Some("repair-prefill"));
    convo.body["messages"].as_array_mut().unwrap().push(
        json!({"role": "assistant", "content": [{"type": "text", "text": "{\n  \"flight\": "}]}),
    );
    convo
}

/// `report`: the body goes as it came and is refused; the defect is
/// recorded. `fix`: the prefill loses its trailing whitespace, nothing else
/// changes, and the provider takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefill_ending_in_whitespace_is_trimmed_and_accepted() {
    let convo = prefill_ending_in_whitespace();
    let refusal = "messages: final assistant content cannot end with trailing whitespace";

    let mut h = Harness::with(MockOptions::default(), |c| c.repair = RepairMode::Report).await;
    let direct = convo.send(&h.client, &h.direct()).await;
    assert_eq!(direct.status, 400, "{}", direct.text());
    assert_eq!(direct.json()["error"]["type"], "invalid_request_error");
    assert_eq!(direct.json()["error"]["message"], refusal);
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, direct.body);
    assert!(r.header("x-toolwarden-repaired").is_none());
    let got = h.mock.received();
    assert_eq!(got[got.len() - 1].body, got[got.len() - 2].body);
    let stats = h.finish().await;
    let reported: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(reported, vec![("trailing_whitespace", 1)]);

    let mut h = Harness::start().await;
    let r = convo.send(&h.client, &h.gw()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
    let got = h.mock.take_received();
    assert_eq!(got.len(), 1);
    // The body sent, byte for byte, but for the prefill's end.
    let sent = String::from_utf8(serde_json::to_vec(&convo.body).unwrap()).unwrap();
    let want = sent.replace(
        r#""text":"{\n  \"flight\": ""#,
        r#""text":"{\n  \"flight\":""#,
    );
    assert_ne!(want, sent);
    assert_eq!(String::from_utf8_lossy(&got[0].body), want);
    let stats = h.finish().await;
    let repaired: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repaired, vec![("trailing_whitespace", 1)]);
}

/// A Bedrock harness signing for the client, in repair mode `mode`.
pub(super) async fn bedrock_in(mode: RepairMode) -> Harness {
    Harness::with(aws_mock(), move |c| {
        c.repair = mode;
        c.cloud.bedrock = Some(Upstream::parse(&format!("{}/", c.upstreams.anthropic)).unwrap());
        c.cloud.bedrock_region = Some("us-east-1".into());
        c.cloud.aws_credentials = Some(AwsCredentials::new(
            KEY_ID,
            SECRET,
            Some(SESSION_TOKEN.into()),
            "test",
        ));
    })
    .await
}

/// A Converse history whose assistant message repeats a `toolUse` id, each
/// call answered: Bedrock refuses it ("The toolUse blocks at
/// messages.1.content contain duplicate Ids: …", double16/Cyber-AutoAgent-ng#27).
fn repeated_tool_use_id() -> Value {
    let call =
        |name: &str| json!({"toolUse": {"toolUseId": "tooluse_1", "name": name, "input": {}}});
    let result =
        |text: &str| json!({"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": text}]}});
    json!({
        "messages": [
            {"role": "user", "content": [{"text": "Book a flight"}]},
            {"role": "assistant", "content": [call("lookup"), call("book")]},
            {"role": "user", "content": [result("found"), result("booked")]},
        ],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}},
            {"toolSpec": {"name": "book", "inputSchema": {"json": {"type": "object"}}}}]},
    })
}

/// `report` forwards the body as it came and Bedrock refuses it; `fix`
/// renames the repeat with its result, Bedrock takes it, and the repair
/// is counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_bedrock_tool_use_id_is_renamed_and_accepted() {
    let body = repeated_tool_use_id();
    let path = "/bedrock/model/amazon.nova-pro-v1%3A0/converse";

    let mut h = bedrock_in(RepairMode::Report).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "The toolUse blocks at messages.1.content contain duplicate Ids: tooluse_1"
    );
    let stats = h.finish().await;
    let reported: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(reported, vec![("duplicate_call_id", 2)]);

    let mut h = bedrock_in(RepairMode::Fix).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
    let got = h.mock.take_received();
    let sent: Value = serde_json::from_slice(&got[got.len() - 1].body).unwrap();
    let ids = |m: usize, kind: &str| -> Vec<Value> {
        sent["messages"][m]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[kind]["toolUseId"].clone())
            .collect()
    };
    assert_eq!(
        ids(1, "toolUse"),
        [json!("tooluse_1"), json!("tooluse_1_dup1")]
    );
    assert_eq!(
        ids(2, "toolResult"),
        [json!("tooluse_1"), json!("tooluse_1_dup1")]
    );
    let labels = [
        ("dialect", "bedrock-converse"),
        ("defect", "duplicate_call_id"),
    ];
    let m = h
        .metrics_when(|m| metric(m, "toolwarden_repairs_total", &labels) >= 1.0)
        .await;
    assert_eq!(metric(&m, "toolwarden_repairs_total", &labels), 1.0, "{m}");
    let stats = h.finish().await;
    let repaired: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repaired, vec![("duplicate_call_id", 1)]);
}

/// `report` forwards a Converse body holding blank text blocks as it came
/// and Bedrock refuses it ("The text field in the ContentBlock object at
/// messages.N.content.J is blank. …", continuedev/continue#9767); `fix`
/// removes the one beside a call, gives the text `[empty]` to the one that
/// is all its message holds, and Bedrock takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blank_bedrock_text_blocks_are_removed_and_accepted() {
    let body = json!({
        "messages": [
            {"role": "user", "content": [{"text": "List the files"}]},
            {"role": "assistant", "content": [
                {"text": "\n"},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "ls", "input": {}}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "a b"}]}}]},
            {"role": "assistant", "content": [{"text": ""}]},
            {"role": "user", "content": [{"text": "and?"}]},
        ],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "ls", "inputSchema": {"json": {"type": "object"}}}}]},
    });
    let path = "/bedrock/model/amazon.nova-pro-v1%3A0/converse";

    let mut h = bedrock_in(RepairMode::Report).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "The text field in the ContentBlock object at messages.1.content.0 is blank. Add text to the text field, and try again."
    );
    let stats = h.finish().await;
    let reported: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(reported, vec![("blank_text", 2)]);

    let mut h = bedrock_in(RepairMode::Fix).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("2"));
    let got = h.mock.take_received();
    let sent: Value = serde_json::from_slice(&got[got.len() - 1].body).unwrap();
    assert_eq!(
        sent["messages"][1]["content"],
        json!([{"toolUse": {"toolUseId": "tooluse_1", "name": "ls", "input": {}}}])
    );
    assert_eq!(sent["messages"][3]["content"], json!([{"text": "[empty]"}]));
    let stats = h.finish().await;
    let repaired: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repaired, vec![("blank_text", 2)]);
}

/// A history replaying a system tool Bedrock ran (Nova's `nova_grounding`,
/// its result in the same assistant message) with a client call left
/// unanswered: `fix` answers the call and leaves the system tool's blocks
/// as they came, and Bedrock takes it. The system tool's result was
/// turned into text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_bedrock_system_tool_stays_when_the_body_is_repaired() {
    let assistant = json!({"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "tooluse_s", "name": "nova_grounding", "input": {"query": "q"}, "type": "server_tool_use"}},
        {"toolResult": {"toolUseId": "tooluse_s", "content": [{"text": "found"}], "type": "nova_grounding_result"}},
        {"toolUse": {"toolUseId": "tooluse_c", "name": "ls", "input": {}}}]});
    let body = json!({
        "messages": [
            {"role": "user", "content": [{"text": "news?"}]},
            assistant,
            {"role": "user", "content": [{"text": "never mind"}]},
        ],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "ls", "inputSchema": {"json": {"type": "object"}}}}]},
    });
    let path = "/bedrock/model/amazon.nova-pro-v1%3A0/converse";
    let mut h = bedrock_in(RepairMode::Fix).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
    let got = h.mock.take_received();
    let sent: Value = serde_json::from_slice(&got[got.len() - 1].body).unwrap();
    assert_eq!(sent["messages"][1], body["messages"][1]);
    assert_eq!(
        sent["messages"][2]["content"][0]["toolResult"]["toolUseId"],
        "tooluse_c"
    );
    h.finish().await;
}

/// `report` forwards a Converse body holding a message without blocks as it
/// came and Bedrock refuses it ("The content field in the Message object at
/// messages.N is empty. …", earendil-works/pi#3443); `fix` gives it the
/// text `[empty]`, drops the empty prefill that ends the body, and Bedrock
/// takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bedrock_messages_without_blocks_are_filled_and_accepted() {
    let body = json!({
        "messages": [
            {"role": "user", "content": [{"text": "List the files"}]},
            {"role": "assistant", "content": []},
            {"role": "user", "content": [{"text": "and?"}]},
            {"role": "assistant", "content": []},
        ],
    });
    let path = "/bedrock/model/amazon.nova-pro-v1%3A0/converse";

    let mut h = bedrock_in(RepairMode::Report).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "The content field in the Message object at messages.1 is empty. Add a ContentBlock object to the content field and try again."
    );
    let stats = h.finish().await;
    let reported: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(reported, vec![("empty_message", 2)]);

    let mut h = bedrock_in(RepairMode::Fix).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("2"));
    let got = h.mock.take_received();
    let sent: Value = serde_json::from_slice(&got[got.len() - 1].body).unwrap();
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "user", "content": [{"text": "List the files"}]},
            {"role": "assistant", "content": [{"text": "[empty]"}]},
            {"role": "user", "content": [{"text": "and?"}]},
        ])
    );
    let stats = h.finish().await;
    let repaired: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repaired, vec![("empty_message", 2)]);
}

/// `report` forwards a Converse error result with nothing in it as it came
/// and Bedrock refuses it ("The content field at
/// messages.N.content.J.toolResult cannot be empty when status value is
/// error."); `fix` gives it a text saying so, and Bedrock takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_bedrock_error_result_is_given_a_text_and_accepted() {
    let body = json!({
        "messages": [
            {"role": "user", "content": [{"text": "List the files"}]},
            {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_1", "name": "ls", "input": {}}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [], "status": "error"}}]},
        ],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "ls", "inputSchema": {"json": {"type": "object"}}}}]},
    });
    let path = "/bedrock/model/amazon.nova-pro-v1%3A0/converse";

    let mut h = bedrock_in(RepairMode::Report).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "The content field at messages.2.content.0.toolResult cannot be empty when status value is error."
    );
    let stats = h.finish().await;
    let reported: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(reported, vec![("empty_error_result", 1)]);

    let mut h = bedrock_in(RepairMode::Fix).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("1"));
    let got = h.mock.take_received();
    let sent: Value = serde_json::from_slice(&got[got.len() - 1].body).unwrap();
    assert_eq!(
        sent["messages"][2]["content"],
        json!([{"toolResult": {"toolUseId": "tooluse_1",
            "content": [{"text": "The tool reported an error and gave no message."}],
            "status": "error"}}])
    );
    let stats = h.finish().await;
    let repaired: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repaired, vec![("empty_error_result", 1)]);
}

/// `report` forwards a Converse call whose `input` is its arguments' JSON
/// text, a string, as it came and Bedrock refuses it ("The format of the
/// value at messages.N.content.J.toolUse.input is invalid. …",
/// vercel/ai#19023); `fix` makes it the object the string holds, and
/// Bedrock takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bedrock_input_sent_as_a_string_is_made_an_object_and_accepted() {
    let body = json!({
        "messages": [
            {"role": "user", "content": [{"text": "List the files"}]},
            {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_1", "name": "ls", "input": "{\"path\":\"/tmp\"}"}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"json": ["a", "b"]}]}}]},
        ],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "ls", "inputSchema": {"json": {"type": "object"}}}}]},
    });
    let path = "/bedrock/model/amazon.nova-pro-v1%3A0/converse";

    let mut h = bedrock_in(RepairMode::Report).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "The format of the value at messages.1.content.0.toolUse.input is invalid. Provide a json object for the field and try again."
    );
    let stats = h.finish().await;
    let reported: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(reported, vec![("non_object_json", 2)]);

    let mut h = bedrock_in(RepairMode::Fix).await;
    let r = post(
        &h.client,
        format!("{}{path}", h.gw()),
        &client_signed(),
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-toolwarden-repaired"), Some("2"));
    let got = h.mock.take_received();
    let sent: Value = serde_json::from_slice(&got[got.len() - 1].body).unwrap();
    assert_eq!(
        sent["messages"][1]["content"][0]["toolUse"]["input"],
        json!({"path": "/tmp"})
    );
    assert_eq!(
        sent["messages"][2]["content"][0]["toolResult"]["content"],
        json!([{"text": "[\"a\",\"b\"]"}])
    );
    let stats = h.finish().await;
    let repaired: Vec<(&str, u64)> = stats
        .repairs
        .iter()
        .map(|r| (r.defect.as_str(), r.count))
        .collect();
    assert_eq!(repaired, vec![("non_object_json", 2)]);
}
