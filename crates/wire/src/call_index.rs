//! The call a result answers, found in the same request body: the client
//! resends the conversation, so the call (its arguments) is there unless
//! the history is kept by the provider (`previous_response_id`).

use std::collections::HashMap;

use crate::{CallView, RequestView, ResultView};

/// The calls of a [`RequestView`] by id, built once for all its results
/// (a body holds as many calls as its client sent: one pass, no search
/// per result).
#[derive(Debug)]
pub struct CallIndex<'v, 'a> {
    /// Per id, its calls in body order.
    by_id: HashMap<&'v str, Vec<&'v CallView<'a>>>,
}

// === impl CallIndex ===

impl<'v, 'a> CallIndex<'v, 'a> {
    /// Index the calls of `view`.
    pub fn new(view: &'v RequestView<'a>) -> Self {
        let mut by_id: HashMap<&'v str, Vec<&'v CallView<'a>>> = HashMap::new();
        for call in &view.calls {
            by_id.entry(&*call.id).or_default().push(call);
        }
        CallIndex { by_id }
    }

    /// The message of the last call of `id` in the body, if any (a result
    /// after it may answer it; one before it, an earlier call of a reused
    /// id).
    pub fn last_message_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id)?.last().map(|c| c.message_index)
    }

    /// The call `result` answers: the last call of its id in a message
    /// before the result's (an id a client reuses, `call_0`, names the
    /// latest such call); `None` when the body holds none.
    pub fn call_for(&self, result: &ResultView<'_>) -> Option<&'v CallView<'a>> {
        let calls = self.by_id.get(&*result.call_id)?;
        let before = calls.partition_point(|c| c.message_index < result.message_index);
        before.checked_sub(1).map(|i| calls[i])
    }
}

#[cfg(test)]
mod tests {
    use crate::{CallIndex, Detector, Dialect, request_view};

    /// A Chat body: one call per id, `call_0` reused by a later turn, each
    /// answered by a raw output (`make`'s closing line, as a log holds it).
    fn body(first: &str, second: &str) -> Vec<u8> {
        let call = |id: &str, command: &str| {
            serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": id, "type": "function",
                "function": {"name": "run", "arguments": serde_json::json!({"command": command}).to_string()}
            }]})
        };
        let result = |id: &str| {
            serde_json::json!({"role": "tool", "tool_call_id": id,
                "content": "make: *** [Makefile:3: all] Error 1\n"})
        };
        serde_json::to_vec(&serde_json::json!({"model": "m", "messages": [
            {"role": "user", "content": "go"},
            call("call_0", first), result("call_0"),
            call("call_0", second), result("call_0"),
        ]}))
        .unwrap()
    }

    #[test]
    fn a_result_is_judged_with_the_call_it_answers() {
        let body = body("tail -1 build.log", "make");
        let view = request_view(Dialect::OpenAiChat, &body).unwrap();
        let calls = CallIndex::new(&view);
        let d = Detector::default();
        let [first, second] = &view.results[..] else {
            panic!("two results: {:?}", view.results)
        };
        // The first `call_0` printed a log's last line: the file's text.
        assert_eq!(calls.call_for(first).unwrap().message_index, 1);
        assert!(
            !first
                .read_for_call(&d, calls.call_for(first))
                .unwrap()
                .verdict
                .failed
        );
        // Without the call, the text alone reads as make's failure.
        assert!(first.read(&d).unwrap().verdict.failed);
        // The reused id's second result answers the second call: `make`.
        assert_eq!(calls.call_for(second).unwrap().message_index, 3);
        assert!(
            second
                .read_for_call(&d, calls.call_for(second))
                .unwrap()
                .verdict
                .failed
        );
    }

    #[test]
    fn no_call_before_the_result_is_none() {
        let body = serde_json::to_vec(&serde_json::json!({"model": "m", "messages": [
            {"role": "user", "content": "go"},
            {"role": "tool", "tool_call_id": "x", "content": "ok"},
        ]}))
        .unwrap();
        let view = request_view(Dialect::OpenAiChat, &body).unwrap();
        assert!(CallIndex::new(&view).call_for(&view.results[0]).is_none());
    }
}
