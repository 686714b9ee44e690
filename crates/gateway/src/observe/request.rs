//! The request side of observation, run once the request is on its way
//! upstream (while the upstream works): from the request's view
//! (`toolwarden_wire::request_view`, or the view `inspect` gave the
//! pairing check in `fix` mode: one pass over the body for both, kept with
//! the body in a [`ReadBody`]), find its session and record each NEW
//! result as a [`ToolResultRecord`].
//!
//! A client resends the whole conversation every turn, so most results
//! have been recorded already: a result's content is decoded and judged
//! ([`ResultView::read`]) only after the seen check lets it through. A
//! content the wire layer cannot read (JSON of the wrong type: syntax
//! errors fail the whole view) is not recorded and makes the request count
//! as unparsed, as a body that fails the view does.

use std::collections::HashMap;

use bytes::Bytes;
use toolwarden_wire::{
    Defect, Dialect, RequestView, ResultContent, ResultView, Target,
    detect::Program,
    turn::{ReplayedTurn, replayed_turn},
};

use super::{Sinks, guard, session::Session};
use crate::{
    limits::{owned_id, owned_name},
    recorder::{Event, ToolResultRecord, TurnRef},
    routes::Provider,
};

/// Longest failure excerpt stored (characters): a result that long or
/// shorter is stored whole (its credentials cut).
const EXCERPT_CHARS: usize = 300;
/// Of a longer one, its start and its end: where a failure is reported
/// (an error label, a header's exit status; a traceback's exception line,
/// a shell footer, a trailing exit code).
const EXCERPT_HEAD: usize = 200;
const EXCERPT_TAIL: usize = 100;
/// Between the two.
const EXCERPT_GAP: &str = " … ";
/// How far before the window of an excerpt's end the line it begins in
/// may start for the end to be read from there (bytes; see `excerpt`).
const EXCERPT_LINE_LOOKBACK: usize = 64 * 1024;

/// What the request side learned, for the response side's records.
#[derive(Debug, Clone)]
pub(crate) struct RequestInfo {
    /// The session.
    pub session: Session,
    /// The model named in the body (or the Gemini path).
    pub model: Option<String>,
    /// The body could not be read.
    pub parse_error: Option<String>,
    /// How many choices (Chat `n`) or candidates (Gemini
    /// `candidateCount`) the request asked for, for its stream's parser.
    pub choices: Option<u64>,
    /// An Anthropic message thread: the provider holds the conversation
    /// under the response's id, which a later request continues.
    pub threaded: bool,
}

/// The request-side facts [`analyze`] needs.
#[derive(Debug, Clone)]
pub(crate) struct RequestFacts {
    /// The gateway's id for the request.
    pub request_id: String,
    /// Arrival time, unix ms.
    pub at_ms: i64,
    /// The provider.
    pub provider: Provider,
    /// The dialect (dialect routes only reach here) and the family of the
    /// model the path names: what the pairing is judged against.
    pub target: Target,
    /// Gemini: the model in the path.
    pub path_model: Option<String>,
    /// Session from the headers, if any.
    pub header_session: Option<Session>,
    /// The client's `traceparent`, given to each result's record.
    pub trace_parent: Option<toolwarden_core::TraceParent>,
    /// The client's `tracestate`, given with it.
    pub trace_state: Option<String>,
}

/// A view of a request body, or why there is none.
pub(crate) type ViewOrError<'a> = Result<RequestView<'a>, String>;

self_cell::self_cell!(
    /// A request body with the view read from it: the view borrows the
    /// body, and both wait together while the body goes upstream.
    pub struct ReadBody {
        owner: Bytes,
        #[covariant]
        dependent: ViewOrError,
    }
);

impl ReadBody {
    /// The view alone.
    pub(crate) fn view(dialect: Dialect, body: Bytes) -> ReadBody {
        ReadBody::new(body, |b| {
            guard(|| toolwarden_wire::request_view(dialect, b))
                .and_then(|view| view.map_err(|e| e.to_string()))
        })
    }

    /// No view: the body could not be read (`reason`).
    pub(crate) fn unreadable(reason: String) -> ReadBody {
        ReadBody::new(Bytes::new(), |_| Err(reason))
    }

    /// The view and the pairing defects, from one pass
    /// (`toolwarden_wire::inspect`). A body whose pairing cannot be
    /// read has no defects to report: it is forwarded as it came.
    pub(crate) fn inspect(target: Target, body: Bytes) -> (ReadBody, Vec<Defect>) {
        let mut defects = Vec::new();
        let read = ReadBody::new(body, |b| {
            match guard(|| toolwarden_wire::inspect(target, b)) {
                Ok(inspection) => {
                    defects = inspection.defects.unwrap_or_default();
                    inspection.view.map_err(|e| e.to_string())
                }
                Err(panic) => Err(panic),
            }
        });
        (read, defects)
    }
}

/// Record the new results of the request read in `read`; return what the
/// response side needs.
pub(crate) fn analyze(sinks: &Sinks, facts: &RequestFacts, read: &ReadBody) -> RequestInfo {
    let view = match read.borrow_dependent() {
        Ok(view) => view,
        Err(e) => return unparsed(sinks, facts, e.clone()),
    };
    let session = facts.header_session.clone().unwrap_or_else(|| {
        let continued = || sinks.responses.get(view.previous_response_id.as_deref()?);
        super::session::from_body(
            view.metadata_user_id.as_deref(),
            view.conversation.as_deref(),
            continued,
            view.first_turn_hash,
        )
    });
    let (body_model, path_model) = (view.model.as_deref(), facts.path_model.as_deref());
    // Azure: the deployment names the model only when the body does not.
    let model = if facts.provider == crate::routes::Provider::Azure {
        body_model.or(path_model)
    } else {
        path_model.or(body_model)
    };
    // Cut to `MAX_NAME_LEN`: every record of the request copies them.
    let model = model.map(owned_name);
    let previous_response_id = view.previous_response_id.as_deref().map(owned_id);
    let mut parse_error = None;
    // The model turn the new results answer, read once if any is recorded.
    let mut turn: Option<Option<ReplayedTurn<'_>>> = None;
    // Counted and indexed as the results go, not searched per result: a
    // client controls how many calls and results a request holds.
    let mut same_tool_before: HashMap<&str, usize> = HashMap::new();
    // The calls by id (built once, when first needed): where the last call
    // of a reused id is, and the call a result answers, for the verdict on
    // a command that only prints files.
    let mut calls: Option<toolwarden_wire::CallIndex<'_, '_>> = None;
    for result in view.results.iter().filter(|r| r.new) {
        // Its ordinal among the new results naming the same tool.
        let same_tool = result.tool.as_deref().map(|tool| {
            let count = same_tool_before.entry(tool).or_insert(0);
            *count += 1;
            *count - 1
        });
        // An id that is not unique (`call_0`, Gemini's `name#0`) can name a
        // call of another run of the conversation at the same position
        // (the store's `claim_keys_of_later_calls_fn!`), unless a call of that
        // id follows the result in this history (then it answers an earlier
        // call of an id the conversation reused): the store judges it (it
        // is not remembered once queued, below); one folded into the
        // counts, or counted with no store, is judged by `reused`, which
        // knows whether a call of its id came since it was counted.
        let latest = !toolwarden_store::is_unique_call_id(&result.call_id)
            && calls
                .get_or_insert_with(|| toolwarden_wire::CallIndex::new(view))
                .last_message_of(&result.call_id)
                .is_none_or(|at| at <= result.message_index);
        // Resent unchanged: already on its way to the store.
        let key = sinks
            .seen_results
            .key(&session.id, &result.call_id, result.message_index);
        let resent = if latest {
            sinks
                .reused
                .is_resent(&session.id, &result.call_id, result.message_index)
        } else {
            sinks.seen_results.contains(key)
        };
        if resent {
            continue;
        }
        // Decoded only now, for a result that will be recorded, with the
        // call it answers: the one in the body, else (a Responses
        // continuation) what this gateway kept of it.
        let calls = calls.get_or_insert_with(|| toolwarden_wire::CallIndex::new(view));
        let call = sinks.names.get_call(&session.id, &result.call_id);
        let program = match calls.call_for(result) {
            Some(c) => Program::of_arguments(&c.arguments),
            None => call.as_ref().and_then(|c| c.3),
        };
        let read = match guard(|| result.read_for_program(&sinks.detector, program)) {
            Ok(Ok(read)) => read,
            Ok(Err(e)) => {
                parse_error.get_or_insert_with(|| format!("tool result {}: {e}", result.call_id));
                continue;
            }
            Err(panic) => {
                parse_error.get_or_insert(panic);
                continue;
            }
        };
        let mut record = result_record(
            facts,
            &session,
            &model,
            &previous_response_id,
            result,
            &read,
            call.as_ref(),
        );
        record.answers = match result.named_turn() {
            // A call read from its error (smolagents): a turn of its own.
            Some(fingerprint) => Some(TurnRef {
                turn: toolwarden_store::stored_fingerprint(fingerprint),
                call_index: 0,
            }),
            None => {
                let turn = turn.get_or_insert_with(|| guard(|| replayed_turn(view)).ok().flatten());
                turn.as_ref().and_then(|t| answers(t, result, same_tool))
            }
        };
        record.latest_of_its_id = latest;
        // A fork of the conversation under a new session id keeps its
        // first turn: the store finds a resent answer in the parent by it.
        record.first_turn = view
            .first_turn_hash
            .map(toolwarden_store::stored_fingerprint);
        // Queued, or folded into the recorder's per-tool counts (issue 14):
        // either way it is counted, and must not be counted again when the
        // history is resent. A result whose call was folded is folded too
        // (else it would make a call row of its own).
        let queued = match &call {
            Some((_, _, true, _)) => {
                sinks.recorder.fold(&Event::ToolResult(record), true);
                false
            }
            known => sinks.recorder.record_result(record, known.is_some()),
        };
        // An answer under an id that is not unique, queued for a store, is
        // not remembered: only the store knows whether another run's call
        // of that id came since (this gateway may have forgotten the call,
        // or another gateway passed it), and it keeps the resends out. One
        // folded into the counts, or queued with no store, is: nothing
        // else would.
        if !latest {
            sinks.seen_results.insert(key);
        } else if !(queued && sinks.recorder.judges_duplicates()) {
            sinks
                .reused
                .answered(&session.id, &result.call_id, result.message_index);
        }
    }
    if parse_error.is_some() {
        sinks.metrics.emit(crate::metrics::events::UnparsedRequest {
            provider: facts.provider,
        });
    }
    RequestInfo {
        session,
        model,
        parse_error,
        choices: view.choices,
        threaded: view.threaded,
    }
}

fn unparsed(sinks: &Sinks, facts: &RequestFacts, error: String) -> RequestInfo {
    sinks.metrics.emit(crate::metrics::events::UnparsedRequest {
        provider: facts.provider,
    });
    RequestInfo {
        session: facts
            .header_session
            .clone()
            .unwrap_or_else(|| super::session::from_body(None, None, || None, None)),
        model: facts.path_model.as_deref().map(owned_name),
        parse_error: Some(error),
        choices: None,
        threaded: false,
    }
}

fn result_record(
    facts: &RequestFacts,
    session: &Session,
    model: &Option<String>,
    previous_response_id: &Option<String>,
    result: &ResultView<'_>,
    read: &ResultContent<'_>,
    seen: Option<&super::names::Call>,
) -> ToolResultRecord {
    let tool = result
        .tool
        .as_deref()
        .or_else(|| seen.map(|(tool, _, _, _)| tool.as_str()))
        .map(owned_name);
    let exec_ms = seen.map(|(_, finished, _, _)| (facts.at_ms - finished).max(0) as f64);
    let failed = read.verdict.failed;
    ToolResultRecord {
        request_id: facts.request_id.clone(),
        session_id: session.id.clone(),
        provider: facts.provider.as_str().to_string(),
        model: model.clone(),
        call_id: owned_id(&result.call_id),
        message_index: u32::try_from(result.message_index).unwrap_or(u32::MAX),
        tool,
        failed,
        basis: read.verdict.basis.as_str().to_string(),
        content_bytes: read.text.len() as u64,
        excerpt: failed.then(|| excerpt(&read.text)),
        at_ms: facts.at_ms,
        exec_ms,
        previous_response_id: previous_response_id.clone(),
        answers: None,
        trace_parent: facts.trace_parent,
        trace_state: facts.trace_state.clone(),
        latest_of_its_id: false,
        first_turn: None,
    }
}

/// Where `result` sits in the replayed turn: for the store, when no
/// recorded call has its id. `same_tool` is its ordinal among the new
/// results naming its tool (`None` when it names none).
fn answers(
    turn: &ReplayedTurn<'_>,
    result: &ResultView<'_>,
    same_tool: Option<usize>,
) -> Option<TurnRef> {
    let call_index = turn.position_of_id(&result.call_id).or_else(|| {
        let tool = result.tool.as_deref()?;
        turn.position_of_name(tool, same_tool?)
    })?;
    Some(TurnRef {
        turn: toolwarden_store::stored_fingerprint(turn.fingerprint),
        call_index,
    })
}

/// A failed result's excerpt: the whole text up to [`EXCERPT_CHARS`]
/// characters, else its first [`EXCERPT_HEAD`] and last [`EXCERPT_TAIL`]
/// with [`EXCERPT_GAP`] between; its credentials cut
/// ([`toolwarden_core::redact`]): excerpts are stored, logged, shown and
/// sent to webhooks. Each part is cut as the whole text's redaction would
/// cut it, without redacting the whole (~0.3 ms for 50 KB). The head is
/// read from a window of twice its length that ends between words, and
/// before a URL it would cut short (one cut before its `@` would keep its
/// `user:password`), so a URL or a key that starts within the head and
/// ends past it is still recognised. The end is read from the start of the
/// line where its window of twice its length begins: every cut but a
/// private key's ends at its line's end, and one that starts before the
/// window (a quoted password with spaces, a `Cookie:` header, curl's `-u
/// user:pass`, a URL's `user:password@` or query) needs its start to be
/// recognised. A line
/// that starts more than [`EXCERPT_LINE_LOOKBACK`] bytes before the window
/// is not read back: the end starts at the next line, or is left out. A
/// PEM private key, which spans lines, is cut from the whole text first (a
/// search for its marker).
pub(crate) fn excerpt(content: &str) -> String {
    use toolwarden_core::redact::{open_url_start, without_secrets};
    let first = |text: &str, n: usize| match text.char_indices().nth(n) {
        Some((i, _)) => text[..i].to_string(),
        None => text.to_string(),
    };
    let last = |text: &str, n: usize| match text.char_indices().rev().nth(n.saturating_sub(1)) {
        Some((i, _)) => text[i..].to_string(),
        None => text.to_string(),
    };
    if content.char_indices().nth(EXCERPT_CHARS).is_none() {
        return first(&without_secrets(content), EXCERPT_CHARS);
    }
    // A private key spans lines: cut it from the whole first (a search
    // for its marker), then each part from a window of its own.
    let keyless = toolwarden_core::redact::without_private_keys(content);
    let content: &str = &keyless;
    // A key or token's characters: the head's window ends before one it
    // cuts (redaction can shorten what comes before, and a key's start
    // must not move into the head), the end starts after one.
    let in_token = |c: char| c.is_ascii_alphanumeric() || "-_.~+/=".contains(c);
    let window = first(content, 2 * EXCERPT_HEAD);
    let window = match window.rfind(|c: char| !in_token(c)) {
        // Nor in a URL: one cut before its `@` keeps `user:password`.
        Some(i) => {
            let through = i + window[i..].chars().next().map_or(0, char::len_utf8);
            &window[..open_url_start(&window[..through]).unwrap_or(i)]
        }
        None => "",
    };
    let head = first(&without_secrets(window), EXCERPT_HEAD);
    let window = content
        .char_indices()
        .rev()
        .nth(2 * EXCERPT_TAIL - 1)
        .map_or(0, |(i, _)| i);
    let line = content[..window].rfind('\n').map_or(0, |i| i + 1);
    let from = if window - line <= EXCERPT_LINE_LOOKBACK {
        line
    } else {
        content[window..]
            .find('\n')
            .map_or(content.len(), |i| window + i + 1)
    };
    let tail = last(&without_secrets(&content[from..]), EXCERPT_TAIL);
    format!("{head}{EXCERPT_GAP}{}", tail.trim_start())
}

#[cfg(test)]
mod tests {
    use std::{
        sync::{Arc, Mutex},
        time::Duration,
    };

    use toolwarden_core::redact::without_secrets;

    use super::*;
    use crate::{
        metrics::{Metrics, UNPARSED_REQUESTS_TOTAL},
        recorder::{Observer, Recorder, RecorderOptions},
    };

    /// Collects the recorded results: (call id, failed, content bytes).
    #[derive(Default)]
    struct Results(Mutex<Vec<(String, bool, u64)>>);

    impl Observer for Results {
        fn on_tool_result(&self, rec: &ToolResultRecord, _tool: &str) {
            if let Ok(mut v) = self.0.lock() {
                v.push((rec.call_id.clone(), rec.failed, rec.content_bytes));
            }
        }
    }

    /// Sinks recording to no store (what is recorded reaches `observer`),
    /// and the facts of a request in `dialect` with a header session.
    fn setup(observer: Arc<dyn Observer>, dialect: Dialect) -> (Sinks, RequestFacts) {
        let recorder = Recorder::start(
            None,
            RecorderOptions {
                queue_capacity: 4096,
                batch_max: 512,
                flush_interval: Duration::from_millis(1),
                jsonl: None,
            },
            observer,
        );
        let sinks = Sinks::new(recorder, Arc::new(Metrics::new()), Default::default());
        let facts = RequestFacts {
            request_id: "r1".into(),
            at_ms: 0,
            provider: Provider::Anthropic,
            target: dialect.into(),
            path_model: None,
            header_session: Some(Session {
                id: "s".into(),
                source: "header",
            }),
            trace_parent: None,
            trace_state: None,
        };
        (sinks, facts)
    }

    #[tokio::test]
    async fn only_unseen_results_are_read_and_a_bad_content_marks_the_request() {
        let seen = Arc::new(Results::default());
        let (sinks, facts) = setup(seen.clone(), Dialect::Anthropic);
        // `bad`'s content is a number: the view reads, that result does not.
        let body = Bytes::from_static(
            br#"{"model":"m","messages":[
            {"role":"assistant","content":[{"type":"tool_use","id":"ok","name":"f","input":{}},
                {"type":"tool_use","id":"bad","name":"f","input":{}}]},
            {"role":"user","content":[
                {"type":"tool_result","tool_use_id":"ok","is_error":true,"content":"Error: \"x\""},
                {"type":"tool_result","tool_use_id":"bad","content":42}]}]}"#,
        );
        let read = ReadBody::view(Dialect::Anthropic, body);
        let info = analyze(&sinks, &facts, &read);
        let error = info.parse_error.expect("the bad content is reported");
        assert!(error.contains("tool result bad"), "{error}");
        // Resent: `ok` is seen (not read again), `bad` fails again.
        let again = analyze(&sinks, &facts, &read);
        assert!(again.parse_error.is_some());
        assert_eq!(
            sinks
                .metrics
                .counter(UNPARSED_REQUESTS_TOTAL, &["anthropic"]),
            2
        );
        sinks.recorder.shutdown().await;
        let recorded = seen.0.lock().map(|v| v.clone()).unwrap_or_default();
        // 10 bytes: the decoded text, not the 12 of its JSON.
        assert_eq!(recorded, [("ok".to_string(), true, 10)]);
    }

    /// A Chat result is judged with the call it answers: the output of a
    /// command that only prints a log (an earlier build's `make: ***`
    /// line) is the log's text; the same text from `make` is its failure.
    #[tokio::test]
    async fn a_file_readers_output_is_not_its_failure() {
        let seen = Arc::new(Results::default());
        let (sinks, facts) = setup(seen.clone(), Dialect::OpenAiChat);
        let call = |id: &str, command: &str| {
            serde_json::json!({"id": id, "type": "function", "function": {"name": "shell",
                "arguments": serde_json::json!({"command": command}).to_string()}})
        };
        let result = |id: &str| {
            serde_json::json!({"role": "tool", "tool_call_id": id,
                "content": "make: *** [Makefile:3: all] Error 1\n"})
        };
        let body = serde_json::json!({"model": "m", "messages": [
            {"role": "user", "content": "build"},
            {"role": "assistant", "content": null,
                "tool_calls": [call("read", "tail -1 build.log"), call("run", "make")]},
            result("read"), result("run"),
        ]});
        let read = ReadBody::view(
            Dialect::OpenAiChat,
            Bytes::from(serde_json::to_vec(&body).unwrap()),
        );
        analyze(&sinks, &facts, &read);
        sinks.recorder.shutdown().await;
        let recorded = seen.0.lock().map(|v| v.clone()).unwrap_or_default();
        let failed: Vec<(&str, bool)> = recorded
            .iter()
            .map(|(id, f, _)| (id.as_str(), *f))
            .collect();
        assert_eq!(failed, [("read", false), ("run", true)]);
    }

    /// Collects the recorded results' name lengths: (model, tool,
    /// previous response id).
    #[derive(Default)]
    struct Lengths(Mutex<Vec<(usize, usize, usize)>>);

    impl Observer for Lengths {
        fn on_tool_result(&self, rec: &ToolResultRecord, _tool: &str) {
            let len = |s: &Option<String>| s.as_ref().map_or(0, String::len);
            if let Ok(mut v) = self.0.lock() {
                v.push((
                    len(&rec.model),
                    len(&rec.tool),
                    len(&rec.previous_response_id),
                ));
            }
        }
    }

    /// What `analyze` records of `body`: the recorded lengths.
    async fn recorded_lengths(dialect: Dialect, body: String) -> Vec<(usize, usize, usize)> {
        let seen = Arc::new(Lengths::default());
        let (sinks, facts) = setup(seen.clone(), dialect);
        let read = ReadBody::view(dialect, Bytes::from(body));
        let info = analyze(&sinks, &facts, &read);
        assert!(info.parse_error.is_none(), "{:?}", info.parse_error);
        assert!(
            info.model
                .is_some_and(|m| m.len() <= crate::limits::MAX_NAME_LEN)
        );
        sinks.recorder.shutdown().await;
        seen.0.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// 1 MiB of "é" after one ASCII byte: the cut falls inside a char.
    fn long_name() -> String {
        format!("x{}", "é".repeat(512 * 1024))
    }

    #[tokio::test]
    async fn names_from_the_body_are_cut_in_every_record() {
        use crate::limits::MAX_NAME_LEN;
        // One 1 MiB model and one 1 MiB tool name, named by 1,000 results
        // (each in a message of its own, all answering the same call).
        let results = (0..1000)
            .map(|_| {
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"ok"}]}"#
            })
            .collect::<Vec<_>>()
            .join(",");
        let body = format!(
            r#"{{"model":"{m}","messages":[
            {{"role":"assistant","content":[{{"type":"tool_use","id":"c","name":"{m}","input":{{}}}}]}},
            {results}]}}"#,
            m = long_name(),
        );
        let recorded = recorded_lengths(Dialect::Anthropic, body).await;
        assert_eq!(recorded.len(), 1000);
        for (model, tool, _) in recorded {
            // Cut at the char boundary below the bound.
            assert_eq!(model, MAX_NAME_LEN - 1);
            assert_eq!(tool, MAX_NAME_LEN - 1);
        }

        // A Responses continuation naming a 1 MiB previous response.
        let results = (0..1000)
            .map(|i| format!(r#"{{"type":"function_call_output","call_id":"c{i}","output":"ok"}}"#))
            .collect::<Vec<_>>()
            .join(",");
        let body = format!(
            r#"{{"model":"{m}","previous_response_id":"{m}","input":[{results}]}}"#,
            m = long_name(),
        );
        let recorded = recorded_lengths(Dialect::OpenAiResponses, body).await;
        assert_eq!(recorded.len(), 1000);
        for (model, _, previous) in recorded {
            assert_eq!(model, MAX_NAME_LEN - 1);
            // An id keeps its hash after the cut (`limits::clip_id`).
            assert_eq!(previous, MAX_NAME_LEN);
        }
    }

    /// Call ids are bounded as response ids are (`limits::clip_id`): a
    /// result naming a 1 MiB id queues ≤ 256 bytes of it, and two such ids
    /// alike in all but their ends stay two.
    #[tokio::test]
    async fn long_call_ids_are_bounded_and_kept_apart() {
        let seen = Arc::new(Results::default());
        let (sinks, facts) = setup(seen.clone(), Dialect::Anthropic);
        let (a, b) = (format!("{}a", long_name()), format!("{}b", long_name()));
        let body = format!(
            r#"{{"model":"m","messages":[
            {{"role":"assistant","content":[{{"type":"tool_use","id":"{a}","name":"f","input":{{}}}},
                {{"type":"tool_use","id":"{b}","name":"f","input":{{}}}}]}},
            {{"role":"user","content":[
                {{"type":"tool_result","tool_use_id":"{a}","content":"ok"}},
                {{"type":"tool_result","tool_use_id":"{b}","content":"ok"}}]}}]}}"#
        );
        let read = ReadBody::view(Dialect::Anthropic, Bytes::from(body));
        let info = analyze(&sinks, &facts, &read);
        assert!(info.parse_error.is_none(), "{:?}", info.parse_error);
        sinks.recorder.shutdown().await;
        let recorded = seen.0.lock().map(|v| v.clone()).unwrap_or_default();
        assert_eq!(recorded.len(), 2);
        let ids: Vec<&String> = recorded.iter().map(|(id, _, _)| id).collect();
        assert!(ids.iter().all(|id| id.len() <= crate::limits::MAX_NAME_LEN));
        assert_ne!(ids[0], ids[1]);
    }

    /// Collects each recorded result's call id and position in the
    /// replayed turn.
    #[derive(Default)]
    struct Positions(Mutex<Vec<(String, Option<u32>)>>);

    impl Observer for Positions {
        fn on_tool_result(&self, rec: &ToolResultRecord, _tool: &str) {
            if let Ok(mut v) = self.0.lock() {
                v.push((rec.call_id.clone(), rec.answers.map(|a| a.call_index)));
            }
        }
    }

    /// A result's place in the replayed turn was found by searching the
    /// turn's calls (and the results before it) once per result: quadratic
    /// in what a client sends. 20,000 Gemini responses whose ids the client
    /// invented (found by name order, the slow path) are placed in a time
    /// linear in the body: here bounded by a few times reading it (in a
    /// debug build the search took over ten times as long as the rest).
    #[tokio::test]
    async fn results_are_placed_in_their_turn_without_a_search_each() {
        const N: usize = 20_000;
        let seen = Arc::new(Positions::default());
        let (sinks, facts) = setup(seen.clone(), Dialect::Gemini);
        let calls: Vec<String> = (0..N)
            .map(|i| format!(r#"{{"functionCall":{{"name":"f{}","args":{{}}}}}}"#, i % 2))
            .collect();
        let responses: Vec<String> = (0..N)
            .map(|i| {
                format!(
                    r#"{{"functionResponse":{{"name":"f{}","id":"x{i}","response":{{"r":"ok"}}}}}}"#,
                    i % 2
                )
            })
            .collect();
        let body = format!(
            r#"{{"contents":[{{"role":"user","parts":[{{"text":"hi"}}]}},{{"role":"model","parts":[{}]}},{{"role":"user","parts":[{}]}}]}}"#,
            calls.join(","),
            responses.join(",")
        );
        let start = std::time::Instant::now();
        let read = ReadBody::view(Dialect::Gemini, Bytes::from(body));
        let parse = start.elapsed();
        let start = std::time::Instant::now();
        let info = analyze(&sinks, &facts, &read);
        let took = start.elapsed();
        assert!(info.parse_error.is_none(), "{:?}", info.parse_error);
        eprintln!("analyze: {took:?}, reading the body: {parse:?}");
        assert!(
            took < parse * 40,
            "{N} results placed in {took:?}, the body read in {parse:?}"
        );
        sinks.recorder.shutdown().await;
        let mut placed = seen.0.lock().map(|v| v.clone()).unwrap_or_default();
        // Response `x{i}`, the (i / 2)-th named f{i % 2}, answers that
        // name's (i / 2)-th call: position i.
        placed.sort();
        placed.dedup();
        assert_eq!(placed.len(), N);
        let wrong: Vec<&(String, Option<u32>)> = placed
            .iter()
            .filter(|(id, at)| at.map(|at| format!("x{at}")).as_ref() != Some(id))
            .take(5)
            .collect();
        assert!(wrong.is_empty(), "misplaced: {wrong:?}");
    }

    #[test]
    fn excerpts_lose_their_credentials() {
        let text = format!(
            "{}Error: 401 for url https://api.x/v1?appid=SECRET1 with Authorization: Bearer SECRET2abcdef",
            "x".repeat(200)
        );
        let e = excerpt(&text);
        assert!(!e.contains("SECRET"), "{e}");
        assert!(e.contains("https://api.x/v1 with"), "{e}");
        // A key that starts within the excerpt and ends past it.
        let edge = format!("{} sk-{}", "y".repeat(EXCERPT_CHARS - 11), "k".repeat(40));
        let e = excerpt(&edge);
        assert!(!e.contains("sk-k") && e.ends_with(" [redacted]"), "{e}");
        // A key across the end of the head, and one whose start is before
        // the tail's window: neither shows a part of itself.
        let across = format!(
            "{} sk-{} {} AIza{} end",
            "a".repeat(190),
            "q".repeat(60),
            "b ".repeat(100),
            "z".repeat(150)
        );
        let e = excerpt(&across);
        assert!(!e.contains("qqq") && !e.contains("zzz"), "{e}");
        assert!(e.ends_with(" end"), "{e}");
    }

    /// A URL whose `user:password@` the head's window ends in (the
    /// window ends before its `@`), pulled into the head because a long
    /// token before it was cut short: its password does not show.
    #[test]
    fn a_url_the_heads_window_cuts_keeps_its_password() {
        let token = "eyJ".repeat(100);
        let text = format!(
            "$ curl -H 'Authorization: Bearer {token}' https://admin:SECRETPW@{} -d x\nexit 7",
            "db.example/".repeat(30)
        );
        assert!(!without_secrets(&text).contains("SECRETPW"));
        let e = excerpt(&text);
        assert!(!e.contains("SECRETPW") && !e.contains("admin"), "{e}");
        assert!(
            e.starts_with("$ curl -H 'Authorization: Bearer [redacted]'"),
            "{e}"
        );
        // A URL that ends within the window stays whole.
        let text = format!(
            "$ curl -H 'Authorization: Bearer {token}' https://db.example/x -d x {}\nexit 7",
            "y".repeat(200)
        );
        assert!(excerpt(&text).contains("https://db.example/x -d x"));
    }

    /// A secret that starts before the window of the excerpt's end and
    /// goes on into it: its start names it, and none of it shows.
    #[test]
    fn a_secret_begun_before_the_ends_window_is_cut_whole() {
        let filler = "log line\n".repeat(50);
        for (secret, piece) in [
            (
                format!(
                    "> Cookie: {}sid=SECRETVALUE1; theme=dark",
                    "a=b; ".repeat(40)
                ),
                "SECRETVALUE1",
            ),
            (
                format!(
                    "\"password\": \"{}SECRETVALUE2 and more\"",
                    "correct horse ".repeat(14)
                ),
                "SECRETVALUE2",
            ),
            (
                format!("$ curl -u admin:{}SECRETVALUE3 https://x", "p".repeat(150)),
                "SECRETVALUE3",
            ),
            (
                format!(
                    "GET https://admin:{}SECRETVALUE4@db.example/x failed",
                    "p".repeat(180)
                ),
                "SECRETVALUE4",
            ),
            (
                format!(
                    "GET https://api.x/w?q={}&appid=SECRETVALUE5 failed",
                    "paris,".repeat(30)
                ),
                "SECRETVALUE5",
            ),
        ] {
            let text = format!("{filler}{secret}\n");
            assert!(!without_secrets(&text).contains(piece), "{text}");
            let e = excerpt(&text);
            assert!(!e.contains(piece) && !e.contains("VALUE"), "{e}");
        }
    }

    /// A last line too long to read back to its start leaves the end out
    /// rather than read a secret from its middle; one read back is cut.
    #[test]
    fn an_ends_line_too_long_to_read_back_is_left_out() {
        let value = format!("{}SECRETVALUE", "p ".repeat(EXCERPT_LINE_LOOKBACK));
        let text = format!("start\n\"password\": \"{value}\" end");
        let e = excerpt(&text);
        assert!(e.starts_with("start"), "{e}");
        assert!(e.ends_with(EXCERPT_GAP), "{e}");
        // Then a next line: the end is read from it.
        let e = excerpt(&format!("{text}\n{}exit 1", "x ".repeat(40)));
        assert!(!e.contains("SECRET") && e.ends_with("exit 1"), "{e}");
        let short = format!(
            "start\n\"password\": \"{}SECRETVALUE\" end",
            "p ".repeat(500)
        );
        let e = excerpt(&short);
        assert!(!e.contains("SECRET") && e.ends_with("\" end"), "{e}");
    }

    proptest::proptest! {
        /// No part of a secret that the whole text's redaction cuts shows
        /// in the excerpt, wherever the excerpt's windows fall on it.
        #[test]
        fn an_excerpt_keeps_nothing_redaction_cuts(
            before in "[a-z0-9 \n.,:;=\"'/链é-]{200,700}",
            kind in 0usize..7,
            spaces in 0usize..40,
            after in "[a-z0-9 \n.,:;=\"'/-]{0,260}",
        ) {
            let v = "Q7J9".repeat(4);
            let pad = format!("{v} ").repeat(spaces);
            let secret = match kind {
                0 => format!("> Cookie: a=1; sid={pad}{v}; theme=dark"),
                1 => format!("\"password\": \"{pad}{v}\""),
                2 => format!("curl -u admin:{}{v} -X POST", v.repeat(spaces)),
                3 => format!("https://admin:{}{v}@db.example/p?x=1&appid={pad}", v.repeat(spaces)),
                4 => format!(
                    "Authorization: AWS4-HMAC-SHA256 Credential=AKIA{v}/20150830/us-east-1/iam/aws4_request, \
                     SignedHeaders=host;x-amz-date, {}Signature={v}{v}",
                    "x ".repeat(spaces)
                ),
                5 => format!("Authorization: Bearer {}{v}", v.repeat(spaces)),
                _ => format!("mysql --password {}{v} -h db", v.repeat(spaces)),
            };
            let text = format!("{before} {secret} {after}");
            if !without_secrets(&text).contains(['Q', 'J']) {
                let e = excerpt(&text);
                proptest::prop_assert!(!e.contains(['Q', 'J']), "{}\n=> {}", text, e);
            }
        }
    }

    /// A private key whose header falls in the middle of a long result, and
    /// whose body reaches its end: none of it in the excerpt.
    #[test]
    fn a_private_key_at_the_end_of_a_long_result_is_cut() {
        let text = format!(
            "deploy failed\n{}config: \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}",
            "log line\n".repeat(60),
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\\n".repeat(8)
        );
        let e = excerpt(&text);
        assert!(!e.contains("MIIE"), "{e}");
        assert!(e.starts_with("deploy failed"), "{e}");
    }

    /// A long result's excerpt keeps its start and its end, where the
    /// failure is usually stated.
    #[test]
    fn a_long_results_excerpt_keeps_its_start_and_end() {
        let trace = format!(
            "Traceback (most recent call last):\n{}ValueError: invalid literal for int() with base 10: 'x'",
            "  File \"app.py\", line 3, in <module>\n".repeat(40)
        );
        let e = excerpt(&trace);
        assert!(e.starts_with("Traceback (most recent call last):"), "{e}");
        assert!(
            e.ends_with("ValueError: invalid literal for int() with base 10: 'x'"),
            "{e}"
        );
        assert!(e.contains(EXCERPT_GAP));
        assert!(e.chars().count() <= EXCERPT_HEAD + EXCERPT_GAP.chars().count() + EXCERPT_TAIL);
        let short = "Error: boom";
        assert_eq!(excerpt(short), short);
    }

    /// A URL written right after a letter outside ASCII (no space before
    /// it, as Chinese text has it) where the head's window ends inside it:
    /// the window ends before its scheme. Before, the scheme's start was
    /// found inside that letter, and slicing there panicked.
    #[test]
    fn a_url_after_a_letter_outside_ascii_at_the_heads_end() {
        let text = format!(
            "{}链接https://admin:{}@h.example/x 失败{}",
            "错".repeat(380),
            "p".repeat(100),
            "误".repeat(200)
        );
        let e = excerpt(&text);
        assert!(!e.contains("admin") && !e.contains("ppp"), "{e}");
        assert!(e.starts_with("错错") && e.ends_with("误误"), "{e}");
    }

    #[test]
    fn excerpt_cuts_at_a_char_boundary() {
        let long = "é".repeat(400);
        assert_eq!(
            excerpt(&long),
            format!(
                "{}{EXCERPT_GAP}{}",
                "é".repeat(EXCERPT_HEAD),
                "é".repeat(EXCERPT_TAIL)
            )
        );
        assert_eq!(
            excerpt(&"é".repeat(EXCERPT_CHARS)),
            "é".repeat(EXCERPT_CHARS)
        );
        assert_eq!(excerpt("short"), "short");
    }
}
