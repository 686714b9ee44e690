//! The request view of a Responses body (and the parse validation and
//! repair share, `Parsed`).

use std::borrow::Cow;

use toolwarden_core::Verdict;

use super::{
    model::{Body, CallKind, Input, Item, Role, Text},
    pairing::{OutputFate, Plan, Slot},
};
use crate::{
    CallView, RequestView, ResultView, WireError, raw_result::RawResult, scan::Bail, splice::Raw,
    text::Fnv64,
};

/// A parsed body: its items and whether part of the history is on the
/// provider's side.
pub(super) struct Parsed<'a> {
    pub body: Body<'a>,
    pub server_side: bool,
}

impl<'a> Parsed<'a> {
    pub fn new(bytes: &'a [u8]) -> Result<Parsed<'a>, WireError> {
        crate::splice::expect_object(bytes)?;
        let text = crate::splice::utf8(bytes)?;
        // The fast path first; serde reads what it does not take.
        let body = match super::fast::body(text) {
            Ok(body) => body,
            Err(Bail) => serde_json::from_str(text)?,
        };
        Ok(Parsed::of(body))
    }

    fn of(body: Body<'a>) -> Parsed<'a> {
        // The history is (partly) on the provider's side: a response
        // continued, a stored conversation added to, an item referenced.
        let server_side = body.previous_response_id.is_some()
            || body.conversation.is_some()
            || body.items().iter().any(|i| i.role() == Role::Reference);
        Parsed { body, server_side }
    }

    pub fn slots(&self) -> Vec<Slot<'_>> {
        self.body.items().iter().map(Slot::of).collect()
    }
}

impl<'a> Body<'a> {
    /// The input items (none for a string input).
    pub fn items(&self) -> &[Item<'a>] {
        match &self.input {
            Some(Input::Items { items, .. }) => items,
            _ => &[],
        }
    }
}

/// See [`crate::request_view`]; verdicts are decided by [`read_result`].
pub(crate) fn request_view<'a>(bytes: &'a [u8]) -> Result<RequestView<'a>, WireError> {
    read(bytes, false).map(|(view, _)| view)
}

/// See [`crate::inspect`]: the view and the defects [`validate`](crate::validate()) finds,
/// from one parse and one pairing plan.
pub(crate) fn inspect(bytes: &[u8]) -> crate::Inspection<'_> {
    crate::Inspection::of(read(bytes, true), || super::validate(bytes))
}

/// The view; with `check`, also the pairing defects once the plan is made.
fn read<'a>(bytes: &'a [u8], check: bool) -> crate::Pass<'a> {
    view_of(Parsed::new(bytes)?, check)
}

/// See [`crate::fast_path_agrees`].
pub(crate) fn fast_path_agrees(bytes: &[u8]) -> Result<(), String> {
    fast_then_serde(bytes).unwrap_or(Ok(()))
}

/// `None` when the fast path does not take `bytes`; else whether serde
/// reads the same view and defects (see [`crate::same_pass`]).
pub(super) fn fast_then_serde(bytes: &[u8]) -> Option<Result<(), String>> {
    let text = crate::splice::utf8(bytes).ok()?;
    let fast = super::fast::body(text)
        .ok()
        .map(|body| view_of(Parsed::of(body), true));
    crate::same_pass(fast, || {
        let full = serde_json::from_str(text).map_err(WireError::from);
        format!(
            "{:?}",
            full.and_then(|body| view_of(Parsed::of(body), true))
        )
    })
}

/// The head of an `input` (see [`super::model::Item::opens_head`]), or the
/// whole `input` as a string.
enum First<'h, 'a> {
    Text(&'h str),
    Items(&'h [Raw<'a>]),
}

/// The conversation's first turn, as Chat Completions counts it: the
/// instructions (raw), then the input's head, the system and developer
/// messages a client sends as items (LangChain's `ChatOpenAI` sends its
/// system prompt so, and OpenAI's guides a developer message) and the first
/// other item. A message counts by its role and text alone, as the other
/// dialects count their first user message, so the forms one message takes
/// between a conversation's requests do not count: `input` as a string or
/// as a user message, a string or `input_text` parts, with or without
/// `type`, and the `id` and `status` a stored conversation gives its items
/// (the OpenAI Agents SDK's `OpenAIConversationsSession` sends its history
/// as the Conversations API lists it). Any other item counts by its raw
/// text.
fn first_turn_hash(system: &[u8], first: First<'_, '_>) -> u64 {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow, default, rename = "type")]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        role: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        content: Option<Raw<'a>>,
    }
    let mut hash = Fnv64::default();
    hash.field(system);
    let items = match first {
        First::Text(text) => {
            hash.field(b"user");
            hash.field(text.as_bytes());
            return hash.finish();
        }
        First::Items(items) => items,
    };
    for Raw(raw) in items {
        let message = serde_json::from_str::<Message<'_>>(raw)
            .ok()
            .filter(|m| m.kind.as_deref().is_none_or(|k| k == "message"))
            .and_then(|m| {
                let text = crate::opening::opening_text(m.content.map(|c| c.0)).ok()?;
                Some((m.role?, text))
            });
        match message {
            Some((role, text)) => {
                hash.field(role.as_bytes());
                hash.field(text.as_bytes());
            }
            None => hash.field(raw.as_bytes()),
        }
    }
    hash.finish()
}

/// The view of a parsed body.
fn view_of<'a>(parsed: Parsed<'a>, check: bool) -> crate::Pass<'a> {
    let slots = parsed.slots();
    let plan = Plan::new(&slots, parsed.server_side);
    let found = check.then(|| plan.defects(&slots));
    drop(slots);
    let Parsed { body, .. } = parsed;
    let (items, head, message_count) = match body.input {
        Some(Input::Items { items, head }) => {
            let n = items.len();
            (items, head, n)
        }
        Some(Input::Text(t)) => {
            let system = body.instructions.map(|r| r.0.as_bytes()).unwrap_or(b"");
            let mut view = base_view(body.model, body.stream, body.previous_response_id, 1);
            view.conversation = body.conversation;
            view.first_turn_hash = Some(first_turn_hash(system, First::Text(&t)));
            return Ok((view, found));
        }
        None => (Vec::new(), Vec::new(), 0),
    };
    let system = body.instructions.map(|r| r.0.as_bytes()).unwrap_or(b"");
    let first_turn_hash = (!head.is_empty()).then(|| first_turn_hash(system, First::Items(&head)));
    let mut view = base_view(
        body.model,
        body.stream,
        body.previous_response_id,
        message_count,
    );
    view.first_turn_hash = first_turn_hash;
    view.conversation = body.conversation;
    // Outputs after the model's last item other than a call are new: a
    // client may write each call's output right after it (`call, output,
    // call, output`, as the Codex CLI once did for a turn of several
    // calls), so a call does not end the new outputs. A resent output
    // among them is the same result again (the store counts it once). An
    // `item_reference` ends them as the item it names would: clients
    // reference the model's stored items (the AI SDK with `store: true`
    // its reasoning and text), never a user's, whose text they hold.
    let last_assistant = items
        .iter()
        .rposition(|i| matches!(i.role(), Role::Assistant | Role::Reference));
    // Names of the calls, by index, for the results.
    let mut call_name: Vec<Option<Cow<'a, str>>> = vec![None; items.len()];
    for (index, item) in items.into_iter().enumerate() {
        match item.role() {
            Role::Call(kind) => {
                let name = item.tool_name(kind);
                call_name[index] = Some(name.clone());
                let arguments = item.call_arguments();
                view.calls.push(CallView {
                    id: item.call_id.unwrap_or(Cow::Borrowed("")),
                    name,
                    arguments,
                    message_index: index,
                });
            }
            Role::Output(kind) => {
                let fate = plan.fate.get(&index);
                let tool = match fate {
                    Some(OutputFate::Answers(c)) => call_name[*c].clone(),
                    _ => None,
                };
                view.results.push(ResultView {
                    call_id: item.call_id().cloned().unwrap_or(Cow::Borrowed("")),
                    tool,
                    message_index: index,
                    // A second output for one call is no new result: the
                    // first is the call's (`fix` mode forwards only it).
                    new: last_assistant.is_none_or(|a| index > a)
                        && plan.is_first_output(fate, index),
                    raw: RawResult::Responses {
                        output: item.output.map(|r| r.0),
                        status_flag: status_flag(kind, item.status.as_deref()),
                    },
                });
            }
            _ => {}
        }
    }
    // Early outputs name a call that comes later: resolve now, by the
    // call's item index (not a search of the calls: a client controls how
    // many early outputs there are).
    for r in &mut view.results {
        if let Some(OutputFate::Early(c)) = plan.fate.get(&r.message_index) {
            r.tool = call_name.get(*c).cloned().flatten();
        }
    }
    Ok((view, found))
}

fn base_view<'a>(
    model: Option<Cow<'a, str>>,
    stream: Option<bool>,
    previous_response_id: Option<Cow<'a, str>>,
    message_count: usize,
) -> RequestView<'a> {
    RequestView {
        model,
        stream: stream.unwrap_or(false),
        message_count,
        previous_response_id,
        ..RequestView::default()
    }
}

/// What an output item's `status` says: failed when it did not complete;
/// succeeded when an `apply_patch` output says `completed` (its client
/// sets `completed` or `failed` for whether the patch applied); else
/// nothing (a function's output `completed` says only that the item is
/// whole).
fn status_flag(kind: CallKind, status: Option<&str>) -> Option<bool> {
    match status {
        Some("incomplete") | Some("failed") => Some(true),
        Some("completed") if kind == CallKind::ApplyPatch => Some(false),
        _ => None,
    }
}

/// Read an output (see [`crate::ResultView::read`]): its text and verdict.
///
/// - a string: the text; the detector decides;
/// - content parts: their texts joined by newlines; a built-in `shell`
///   call's parts (`stdout`, `stderr`, `outcome`) give their output, and
///   their outcomes the verdict: failed on a timeout or a non-zero exit
///   code, else not;
/// - a `computer_call_output`'s screenshot: no text;
/// - an item `status` of `incomplete` or `failed` (an `apply_patch` call
///   that did not apply) is a failure whatever the output, an
///   `apply_patch` output's `completed` a success (see `status_flag`).
pub(crate) fn read_result<'a>(
    output: Option<&'a str>,
    status_flag: Option<bool>,
    is_failure: crate::text::Judge<'_>,
) -> Result<(Cow<'a, str>, Verdict), WireError> {
    let (text, exit_failed) = match output {
        Some(raw) if raw.starts_with('"') => (crate::text::unescape(raw)?, None),
        Some(raw) if raw.starts_with('[') => {
            let parts: Parts<'a> = serde_json::from_str(raw)?;
            (parts.text.unwrap_or(Cow::Borrowed("")), parts.failed)
        }
        Some(raw) if is_screenshot(raw) => (Cow::Borrowed(""), None),
        Some(raw) => (serde_json::from_str::<Text<'a>>(raw)?.0, None),
        None => (Cow::Borrowed(""), None),
    };
    // A failed status first, then the shell's outcomes, then a status of
    // success.
    let verdict = match (status_flag, exit_failed) {
        (Some(true), _) => Verdict::explicit(true),
        (_, Some(failed)) | (Some(failed), None) => Verdict::explicit(failed),
        (None, None) => crate::text::flagless_verdict(&text, is_failure),
    };
    Ok((text, verdict))
}

/// An output's content parts: input parts' `text`, shell output's
/// `stdout` and `stderr`, joined by newlines; `failed` when some part has
/// a shell `outcome` (whether one timed out or exited non-zero).
struct Parts<'a> {
    text: Option<Cow<'a, str>>,
    failed: Option<bool>,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Parts<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Part<'a> {
            #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
            text: Option<Cow<'a, str>>,
            #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
            stdout: Option<Cow<'a, str>>,
            #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
            stderr: Option<Cow<'a, str>>,
            #[serde(borrow, default)]
            outcome: Option<Outcome<'a>>,
        }
        #[derive(serde::Deserialize)]
        struct Outcome<'a> {
            #[serde(
                borrow,
                rename = "type",
                deserialize_with = "crate::splice::opt_cow",
                default
            )]
            kind: Option<Cow<'a, str>>,
            #[serde(default)]
            exit_code: Option<serde_json::Number>,
        }
        let parts = Vec::<Part<'a>>::deserialize(d)?;
        let mut text = None;
        let mut failed = None;
        for part in parts {
            if let Some(t) = part.text {
                crate::text::push_part(&mut text, t);
            }
            for t in [part.stdout, part.stderr].into_iter().flatten() {
                if !t.is_empty() {
                    crate::text::push_part(&mut text, t);
                }
            }
            if let Some(o) = part.outcome {
                let this = match o.kind.as_deref() {
                    Some("exit") => o.exit_code.is_none_or(|c| c.as_i64() != Some(0)),
                    _ => true,
                };
                failed = Some(failed.unwrap_or(false) || this);
            }
        }
        Ok(Parts { text, failed })
    }
}

/// A `computer_call_output`'s `{"type": "computer_screenshot", …}`.
fn is_screenshot(raw: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Typed<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<&'a str>,
    }
    raw.starts_with('{')
        && serde_json::from_str::<Typed<'_>>(raw)
            .is_ok_and(|t| t.kind == Some("computer_screenshot"))
}
