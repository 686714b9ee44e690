//! Byte-exact repair of an Anthropic body's call/result pairing.
//!
//! Duplicate `tool_use` ids get a fresh id (and so does the result that
//! answered the duplicate); each client call gets its result at the start
//! of the next user message: moved there from wherever it was, or an
//! `is_error` result inserted (in a new user message when the next message
//! is not a user message); a second result for the same call is dropped; a
//! result that answers no call becomes a text block; an error result with
//! nothing in it (which the API refuses: "content cannot be empty if
//! `is_error` is true") is given a text saying so, in its `content` (a
//! string, or one text block where it was an array). A last assistant
//! message (a prefill) whose text ends in whitespace (which the API refuses:
//! "final assistant content cannot end with trailing whitespace") loses that
//! whitespace, where it stands; a text block left empty goes, and so does
//! the message when that was all it held, unless it is the first (see
//! `prefill`).
//! Only the messages that change are rewritten, and inside them only the
//! `content` array (or string): every other byte of the body is copied
//! verbatim.

use std::{
    borrow::Cow,
    collections::{HashMap, HashSet},
    ops::Range,
};

use ahash::AHashMap;

use super::{
    layout::{Layout, Shape, layout, outline},
    model::{BlockClass, FlatContent},
    prefill::{self, Cut, Text, Trim},
    validate::defects,
};
use crate::{
    Change, ChangeKind, DefectKind, Repaired, WireError,
    pairing::{
        CallSite, EMPTY_ERROR_TEXT, Fate, FreshIds, MISSING_RESULT_TEXT, Plan, ResultSite, assign,
    },
    splice::{Piece, Str, json_string, rebuild_array, replace, span_in, with_first_member},
};

/// The longest tool use id a renamed one is made (Bedrock's `toolUseId`
/// takes 64, as do OpenAI's Responses `call_id`s; Anthropic's API names a
/// pattern, `^[a-zA-Z0-9_-]+$`, which `_dup{n}` keeps).
const MAX_ID_LEN: usize = 64;

/// What replaces a user message whose every block moved away.
const EMPTIED_TEXT: &str = "(The tool results that were here were moved to follow their calls.)";

pub(crate) fn repair(body: &[u8]) -> Result<Repaired<'_>, WireError> {
    // The one-pass outline decides; only a body with defects is laid out.
    let o = outline(body)?;
    if defects(&o.msgs, o.held).is_empty() {
        return Ok(Repaired {
            body: Cow::Borrowed(body),
            changes: Vec::new(),
        });
    }
    let l = layout(body)?;
    let mut r = Repairer::new(&l, o.held);
    r.prefill = prefill::plan(&l)?;
    r.rename_duplicates();
    r.plan();
    let out = r.rebuild()?;
    Ok(Repaired {
        body: Cow::Owned(out.into_bytes()),
        changes: r.changes,
    })
}

struct Repairer<'l, 'a> {
    l: &'l Layout<'a>,
    /// New ids by (message, block).
    renames: HashMap<(usize, usize), String>,
    calls: Vec<CallSite>,
    /// Per message, the range of its calls in `calls` (calls are listed in
    /// message order): a message's calls without a search of them all.
    calls_of: Vec<Range<usize>>,
    /// Per message, how many blocks it starts with are results.
    leading_results: Vec<usize>,
    results: Vec<ResultSite>,
    /// Index into `results` by (message, block).
    result_at: HashMap<(usize, usize), usize>,
    plan: Plan,
    changes: Vec<Change>,
    /// What goes of a prefill ending in whitespace.
    prefill: Option<Trim<'a>>,
    /// The body continues a message thread: the results of its first
    /// message answer calls the API holds, and stay (see `validate`).
    held: bool,
}

impl<'l, 'a> Repairer<'l, 'a> {
    fn new(l: &'l Layout<'a>, held: bool) -> Self {
        Repairer {
            l,
            renames: HashMap::new(),
            calls: Vec::new(),
            calls_of: Vec::new(),
            leading_results: Vec::new(),
            results: Vec::new(),
            result_at: HashMap::new(),
            plan: Plan {
                answer: Vec::new(),
                fate: Vec::new(),
            },
            changes: Vec::new(),
            prefill: None,
            held,
        }
    }

    /// The prefill cut, when it is message `i`.
    fn cut(&self, i: usize) -> Option<&Cut<'a>> {
        self.prefill
            .as_ref()
            .and_then(|p| p.cut.as_ref())
            .filter(|c| c.msg == i)
    }

    /// The prefill's text that loses its trailing whitespace, when it is
    /// block `j` of message `i` (`None`: the string content).
    fn trimmed(&self, i: usize, j: Option<usize>) -> Option<&Text<'a>> {
        self.cut(i)
            .and_then(|c| c.text.as_ref())
            .filter(|t| t.block == j)
    }

    /// Whether block `j` of message `i` goes: a prefill's text of only
    /// whitespace.
    fn cuts(&self, i: usize, j: usize) -> bool {
        self.cut(i).is_some_and(|c| j >= c.keep_blocks)
    }

    /// Whether message `i` goes whole: a prefill of only whitespace.
    fn drops(&self, i: usize) -> bool {
        self.prefill.as_ref().is_some_and(|p| i >= p.keep_messages)
    }

    /// Record what the prefill's trim did, in message order.
    fn prefill_changes(&mut self) {
        let Some(p) = &self.prefill else {
            return;
        };
        let mut changes = Vec::new();
        if let Some(c) = &p.cut {
            let m = &self.l.msgs[c.msg];
            if m.is_array {
                for j in c.keep_blocks..m.blocks.len() {
                    changes.push((
                        ChangeKind::RemovedBlankText,
                        c.msg,
                        format!("text block {j} of the prefill, only whitespace, removed"),
                    ));
                }
            }
            if c.text.is_some() {
                changes.push((
                    ChangeKind::TrimmedPrefill,
                    c.msg,
                    "whitespace at the end of the prefill removed".to_string(),
                ));
            }
        }
        for i in p.keep_messages..self.l.msgs.len() {
            changes.push((
                ChangeKind::RemovedEmptyMessage,
                i,
                "assistant message (a prefill) of only whitespace removed".to_string(),
            ));
        }
        for (kind, message_index, description) in changes {
            self.changes.push(Change {
                kind,
                defect: DefectKind::TrailingWhitespace,
                message_index,
                call_id: None,
                description,
            });
        }
    }

    fn id(&self, msg: usize, blk: usize) -> &str {
        self.renames
            .get(&(msg, blk))
            .map_or(&*self.l.msgs[msg].blocks[blk].id, String::as_str)
    }

    fn change(&mut self, kind: ChangeKind, defect: DefectKind, msg: usize, id: &str, what: String) {
        self.changes.push(Change {
            kind,
            defect,
            message_index: msg,
            call_id: Some(id.to_string()),
            description: what,
        });
    }

    /// Give each repeated `tool_use` id a fresh one, and the result that
    /// answered that occurrence too: a client call's `tool_result` in the
    /// next message, a server tool's result (`web_search_tool_result`, …)
    /// in its own message — the API refuses a server tool use without it
    /// ("`web_search` tool use with id … was found without a corresponding
    /// `web_search_tool_result` block").
    ///
    /// Linear in the blocks (a client controls how many repeats a body
    /// holds): fresh names are found by [`FreshIds`], and the result of the
    /// k-th occurrence of an id through a per-message index, not searched.
    fn rename_duplicates(&mut self) {
        let l = self.l;
        let msgs = &l.msgs;
        let mut fresh = FreshIds::new(
            MAX_ID_LEN,
            msgs.iter().flat_map(|m| m.blocks.iter().map(|b| &*b.id)),
        );
        let mut seen: HashSet<&str> = HashSet::new();
        let mut renames = Vec::new();
        for (i, m) in msgs.iter().enumerate().filter(|(_, m)| m.is_assistant()) {
            // Client and server calls so far in this message, by id.
            let mut earlier: AHashMap<(bool, &str), usize> = AHashMap::new();
            // The next message's results by id, in block order (read once,
            // when this message has a repeat); this message's server
            // results likewise.
            let mut answers: Option<AHashMap<&str, Vec<usize>>> = None;
            let mut server_answers: Option<AHashMap<&str, Vec<usize>>> = None;
            for (j, b) in m.blocks.iter().enumerate() {
                if !matches!(b.class, BlockClass::Call | BlockClass::ServerCall) {
                    continue;
                }
                // k = earlier calls of this class with this id in this message.
                let client = b.class == BlockClass::Call;
                let count = earlier.entry((client, &b.id)).or_insert(0);
                let k = *count;
                *count += 1;
                if seen.insert(&b.id) {
                    continue;
                }
                let new = fresh.next(&b.id);
                renames.push(((i, j), new.clone(), b.id.to_string()));
                // The matching result: the k-th result with this id in the
                // next message (a server call's: in this one).
                let at = if client {
                    let Some(next) = msgs.get(i + 1).filter(|n| n.is_user()) else {
                        continue;
                    };
                    answers
                        .get_or_insert_with(|| results_by_id(next, BlockClass::Result))
                        .get(&*b.id)
                        .and_then(|at| at.get(k))
                        .map(|&rj| (i + 1, rj))
                } else {
                    server_answers
                        .get_or_insert_with(|| results_by_id(m, BlockClass::ServerResult))
                        .get(&*b.id)
                        .and_then(|at| at.get(k))
                        .map(|&rj| (i, rj))
                };
                if let Some(at) = at {
                    renames.push((at, new, b.id.to_string()));
                }
            }
        }
        for (at, new, old) in renames {
            let class = self.l.msgs[at.0].blocks[at.1].class;
            if !matches!(class, BlockClass::Result | BlockClass::ServerResult) {
                let what = format!("duplicate tool_use id {old} renamed to {new}");
                self.change(
                    ChangeKind::RenamedDuplicateId,
                    DefectKind::DuplicateCallId,
                    at.0,
                    &old,
                    what,
                );
            }
            self.renames.insert(at, new);
        }
    }

    fn plan(&mut self) {
        let msgs = &self.l.msgs;
        for (i, m) in msgs.iter().enumerate() {
            let first_call = self.calls.len();
            for (j, b) in m.blocks.iter().enumerate() {
                match b.class {
                    BlockClass::Call if m.is_assistant() => {
                        self.calls.push(CallSite {
                            msg: i,
                            id: self.id(i, j).to_string(),
                        });
                    }
                    BlockClass::Result => {
                        self.result_at.insert((i, j), self.results.len());
                        self.results.push(ResultSite {
                            msg: i,
                            pos: j,
                            id: self.id(i, j).to_string(),
                        });
                    }
                    _ => {}
                }
            }
            self.calls_of.push(first_call..self.calls.len());
            let leading = m
                .blocks
                .iter()
                .take_while(|b| b.class == BlockClass::Result);
            self.leading_results.push(leading.count());
        }
        // A call's slot: the message after it, if that is the user's.
        self.plan = assign(&self.calls, &self.results, |c| {
            let user = msgs.get(c.msg + 1).is_some_and(|m| m.is_user());
            c.msg + 1..c.msg + 1 + usize::from(user)
        });
    }

    /// The raw text of block `j` of message `i`, with its id renamed if
    /// needed (given, when the block had none: a call without `id`), and
    /// an error result with nothing in it given [`EMPTY_ERROR_TEXT`].
    fn block_text(&self, i: usize, j: usize) -> Piece<'a> {
        let raw = self.l.msgs[i].block_raws[j].get();
        let block = &self.l.msgs[i].blocks[j];
        // Values replaced where they are, by span; members added first.
        let mut spans: Vec<(Range<usize>, String)> = Vec::new();
        let mut added: Vec<(&str, String)> = Vec::new();
        if let Some(new) = self.renames.get(&(i, j)) {
            let new = json_string(new);
            match block.id_raw {
                Some(id_raw) => match span_in(raw, id_raw.get()) {
                    Some(span) => spans.push((span, new)),
                    None => return Piece::Raw(raw),
                },
                None => {
                    let key = match block.class {
                        BlockClass::Result | BlockClass::ServerResult => "tool_use_id",
                        _ => "id",
                    };
                    added.push((key, new));
                }
            }
        }
        if let Some(p) = self.trimmed(i, Some(j)) {
            match span_in(raw, p.raw) {
                Some(span) => spans.push((span, json_string(&p.kept))),
                None => return Piece::Raw(raw),
            }
        }
        if block.empty_error {
            let text = json_string(EMPTY_ERROR_TEXT);
            match block.content_raw {
                Some(c) => match span_in(raw, c.get()) {
                    // Its shape kept: an array gets one text block.
                    Some(span) if c.get().starts_with('[') => {
                        spans.push((span, format!(r#"[{{"type":"text","text":{text}}}]"#)))
                    }
                    Some(span) => spans.push((span, text)),
                    None => return Piece::Raw(raw),
                },
                None => added.push(("content", text)),
            }
        }
        if spans.is_empty() && added.is_empty() {
            return Piece::Raw(raw);
        }
        // Later spans first, so that earlier ones still hold.
        spans.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
        let mut out = raw.to_string();
        for (span, with) in spans {
            out = replace(&out, span, &with);
        }
        for (key, value) in added {
            match with_first_member(&out, key, &value) {
                Some(o) => out = o,
                None => return Piece::Raw(raw),
            }
        }
        Piece::New(out)
    }

    /// The results for the calls of assistant message `a`, in call order,
    /// to open message `into`.
    /// Also says whether they are exactly the leading results `into` already has.
    fn head(&mut self, a: usize, into: usize) -> (Vec<Piece<'a>>, bool) {
        let mut head = Vec::new();
        let mut exact = true;
        for ci in self.calls_of[a].clone() {
            let id = self.calls[ci].id.clone();
            match self.plan.answer[ci] {
                Some(ri) => {
                    let (rm, rp) = (self.results[ri].msg, self.results[ri].pos);
                    head.push(self.block_text(rm, rp));
                    let leading = rp < self.leading_results[rm];
                    // A result only filled is still in place (see `rebuild`).
                    exact &= rm == into && leading && !self.renames.contains_key(&(rm, rp));
                    if self.l.msgs[rm].blocks[rp].empty_error {
                        let what = format!("empty error result for {id} given a text");
                        self.change(
                            ChangeKind::FilledErrorResult,
                            DefectKind::EmptyErrorResult,
                            rm,
                            &id,
                            what,
                        );
                    }
                    if rm != into {
                        let what = format!(
                            "result for {id} moved from message {rm} to follow its call in message {a}"
                        );
                        self.change(
                            ChangeKind::MovedResult,
                            DefectKind::OrphanResult,
                            rm,
                            &id,
                            what,
                        );
                    } else if !leading {
                        let what = format!("result for {id} moved to the start of message {rm}");
                        self.change(
                            ChangeKind::MovedResult,
                            DefectKind::ResultsNotFirst,
                            rm,
                            &id,
                            what,
                        );
                    }
                }
                None => {
                    exact = false;
                    head.push(Piece::New(format!(
                        r#"{{"type":"tool_result","tool_use_id":{},"is_error":true,"content":{}}}"#,
                        json_string(&id),
                        json_string(MISSING_RESULT_TEXT)
                    )));
                    let what = format!("error result inserted for unanswered call {id}");
                    self.change(
                        ChangeKind::InsertedResult,
                        DefectKind::MissingResult,
                        a,
                        &id,
                        what,
                    );
                }
            }
        }
        (head, exact)
    }

    /// Message `i`'s blocks other than the results it keeps at its head;
    /// also says whether they are the message's own blocks unchanged.
    fn tail(&mut self, i: usize) -> (Vec<Piece<'a>>, bool) {
        let mut tail = Vec::new();
        let mut exact = true;
        let m = &self.l.msgs[i];
        if !m.is_array {
            // A string's text; `null` none; any other value (a number, an
            // object: the API refuses them as content) as its JSON text, so
            // that the block's `text` is a string.
            let t = m.content.get();
            match serde_json::from_str::<Str<'_>>(t) {
                Ok(s) if s.0.trim().is_empty() => {}
                Ok(_) => tail.push(Piece::New(format!(r#"{{"type":"text","text":{t}}}"#))),
                Err(_) if t.trim() == "null" => {}
                Err(_) => tail.push(Piece::New(format!(
                    r#"{{"type":"text","text":{}}}"#,
                    json_string(t.trim())
                ))),
            }
            return (tail, false);
        }
        // The last message that stays, an assistant one: a prefill.
        let ends_prefill = m.is_assistant()
            && i + 1
                == self
                    .prefill
                    .as_ref()
                    .map_or(self.l.msgs.len(), |p| p.keep_messages);
        // The last result turned into text, by its place in `tail`.
        let mut last_orphan: Option<(usize, String)> = None;
        // A thread's held reply's answers, by id: each stays, once.
        let answers_held = i == 0 && self.held && m.is_user();
        let mut held_answered: HashSet<String> = HashSet::new();
        for j in 0..m.blocks.len() {
            if self.cuts(i, j) {
                exact = false;
                continue;
            }
            if m.blocks[j].class != BlockClass::Result {
                exact &= !self.renames.contains_key(&(i, j));
                tail.push(self.block_text(i, j));
                continue;
            }
            let Some(&ri) = self.result_at.get(&(i, j)) else {
                continue;
            };
            let id = self.results[ri].id.clone();
            if let Fate::Answers(ci) = self.plan.fate[ri] {
                // Placed at its call's slot: still exact if that is here.
                exact &= self.calls[ci].msg + 1 == i && m.is_user();
                continue;
            }
            let mut fate = self.plan.fate[ri];
            if answers_held && fate == Fate::Orphan {
                if held_answered.insert(id.clone()) {
                    exact &= !self.renames.contains_key(&(i, j));
                    tail.push(self.block_text(i, j));
                    if m.blocks[j].empty_error {
                        let what = format!("empty error result for {id} given a text");
                        self.change(
                            ChangeKind::FilledErrorResult,
                            DefectKind::EmptyErrorResult,
                            i,
                            &id,
                            what,
                        );
                    }
                    continue;
                }
                fate = Fate::Duplicate;
            }
            exact = false;
            match fate {
                Fate::Answers(_) => {}
                Fate::Duplicate => {
                    let what = format!("second result for {id} removed");
                    self.change(
                        ChangeKind::RemovedDuplicate,
                        DefectKind::DuplicateCallId,
                        i,
                        &id,
                        what,
                    );
                }
                Fate::Orphan => {
                    let raw = m.block_raws[j].get();
                    let content = serde_json::from_str::<Orphan<'_>>(raw)
                        .map(|o| o.content.text.into_owned())
                        .unwrap_or_default();
                    let text = format!(
                        "[Result of tool call {id}, whose call is not in this conversation]\n{content}"
                    );
                    tail.push(Piece::New(format!(
                        r#"{{"type":"text","text":{}}}"#,
                        json_string(&text)
                    )));
                    last_orphan = Some((tail.len() - 1, text));
                    let what = format!("result for unknown call {id} turned into text");
                    self.change(
                        ChangeKind::ConvertedResultToText,
                        DefectKind::OrphanResult,
                        i,
                        &id,
                        what,
                    );
                }
            }
        }
        // Ending the prefill, such a text does not end in whitespace (the
        // API refuses it: "final assistant content cannot end with
        // trailing whitespace").
        if let Some((k, text)) = last_orphan.filter(|o| ends_prefill && o.0 + 1 == tail.len()) {
            let kept = crate::prefill::trim_end_js(&text);
            tail[k] = Piece::New(format!(r#"{{"type":"text","text":{}}}"#, json_string(kept)));
        }
        (tail, exact)
    }

    /// Message `i`, whose blocks all stay where they are: as it came, but
    /// for its error results with nothing in them, each filled where it
    /// stands (the array's own spacing kept).
    fn filled_in_place(&self, i: usize) -> Result<Piece<'a>, WireError> {
        let raw = self.l.raws[i].get();
        let m = &self.l.msgs[i];
        let mut out: Option<String> = None;
        if let Some(p) = self.trimmed(i, None) {
            let span = crate::splice::locate(raw, m.content)?;
            out = Some(replace(raw, span, &json_string(&p.kept)));
        }
        for j in (0..m.blocks.len())
            .rev()
            .filter(|&j| m.blocks[j].empty_error || self.trimmed(i, Some(j)).is_some())
        {
            let text = out.as_deref().unwrap_or(raw);
            let span = crate::splice::locate(raw, m.block_raws[j])?;
            let block = self.block_text(i, j);
            let with = match &block {
                Piece::Raw(s) => s,
                Piece::New(s) => s.as_str(),
            };
            out = Some(replace(text, span, with));
        }
        Ok(out.map_or(Piece::Raw(raw), Piece::New))
    }

    fn has_calls(&self, i: usize) -> bool {
        !self.calls_of[i].is_empty()
    }

    fn rebuild(&mut self) -> Result<String, WireError> {
        let l = self.l;
        let mut out: Vec<Piece<'a>> = Vec::with_capacity(l.msgs.len() + 4);
        for i in 0..l.msgs.len() {
            let m = &l.msgs[i];
            if self.drops(i) {
                continue;
            }
            let is_slot = m.is_user() && i > 0 && self.has_calls(i - 1);
            let (head, head_exact) = if is_slot {
                self.head(i - 1, i)
            } else {
                (Vec::new(), true)
            };
            let (tail, tail_exact) = self.tail(i);
            let unchanged = (head_exact && tail_exact) || (!m.is_array && !is_slot);
            if unchanged {
                out.push(self.filled_in_place(i)?);
            } else {
                let mut blocks = head;
                blocks.extend(tail);
                if blocks.is_empty() {
                    blocks.push(Piece::New(format!(
                        r#"{{"type":"text","text":{}}}"#,
                        json_string(EMPTIED_TEXT)
                    )));
                }
                let raw = l.raws[i].get();
                let content = if m.is_array {
                    rebuild_array(m.content.get(), &m.block_raws, &blocks)
                } else {
                    rebuild_array("[]", &[], &blocks)
                };
                let span = crate::splice::locate(raw, m.content)?;
                out.push(Piece::New(replace(raw, span, &content)));
            }
            let next_is_user = l.msgs.get(i + 1).is_some_and(|n| n.is_user());
            if m.is_assistant() && self.has_calls(i) && !next_is_user {
                let (head, _) = self.head(i, usize::MAX);
                let blocks = rebuild_array("[]", &[], &head);
                out.push(Piece::New(format!(
                    r#"{{"role":"user","content":{blocks}}}"#
                )));
            }
        }
        self.prefill_changes();
        let array = rebuild_array(l.array.get(), &l.raws, &out);
        let span = crate::splice::locate(l.text, l.array)?;
        Ok(replace(l.text, span, &array))
    }
}

/// A result block's content, for turning an orphan into text.
#[derive(serde::Deserialize)]
struct Orphan<'a> {
    #[serde(borrow, default)]
    content: FlatContent<'a>,
}

/// The block index of each result of `class` (client or server) of
/// message `m`, by id, in block order.
fn results_by_id<'m>(m: &'m Shape<'_>, class: BlockClass) -> AHashMap<&'m str, Vec<usize>> {
    let mut by_id: AHashMap<&str, Vec<usize>> = AHashMap::new();
    for (j, b) in m
        .blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.class == class)
    {
        by_id.entry(&*b.id).or_default().push(j);
    }
    by_id
}
